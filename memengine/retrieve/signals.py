"""Query-side signals of the fast path, offline and cheap: content terms, idf, lexical reach, cues.

- :func:`content_terms`: the search terms that carry meaning (Latin words
  that are not stopwords; CJK grams without hiragana, i.e. kanji and
  katakana pieces, so particles and inflections do not count).
- :class:`TermStats` and :func:`lexical_reach`: the idf-weighted share of
  the query's content terms that occur in at least one stored episode. A
  query whose words the memory has never seen (a paraphrase, "burned out"
  for "fried") cannot be found by full-text search, so the fast path then
  trusts the vector search more (:mod:`.adapt`).
- :func:`asks_memory`: whether a message asks something or points back at
  something said before (a question, an interrogative, a recall cue, a
  request to be told: "walk me through…", 振り返りたい).
  Small talk ("Nice weather today") is not a request for memories.
- :func:`only_asks_to_recall`: whether a stored user turn did nothing but ask
  to be reminded ("What did I do last week?", 何だっけ？): it tells nothing
  that happened.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from ..lazy_re import lazy_compile
from ..text import (
    APOSTROPHES,
    CHAT_WORDS,
    ENGLISH_STOPWORDS,
    READ_CHARS,
    query_terms,
    sentences,
    within,
)
from .temporal import find_time_expressions

__all__ = [
    "TermStats",
    "asks_memory",
    "asks_something",
    "asks_the_partner",
    "code_words",
    "content_terms",
    "lexical_reach",
    "may_ask",
    "only_asks_to_recall",
]

_HIRAGANA = lazy_compile(r"[\u3040-\u309f]")
_CODE_WORD = lazy_compile(
    r"(?<![\w.-])(?=[\w.-]*[A-Za-z])(?:"
    r"(?=[\w.-]*\d)(?=[\w.-]{4})[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*"  # E1101, ORA-00942
    r"|(?P<caps>[A-Z]{5,})"  # ERESOLVE, ENOENT (in a message that is not shouted)
    r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"  # user_id
    r"|[A-Za-z][A-Za-z0-9]+(?:\.[A-Za-z0-9_]{2,}){2,}"  # com.example.app
    r")(?![\w-])",
    re.ASCII,
)
_WORDS = lazy_compile(r"[a-z]+(?:'[a-z]+)?")

_EN_QUESTION_WORDS = frozenset(
    "what when where who whom whose why which how did do does was were is are have has "
    "can could would should will".split()
)
"""Words that open an English question (the first word of a sentence, after any
:data:`_CHAT_OPENERS`; a contraction by its first part, "what's", "where'd", but not "can't";
typed without its apostrophe, "whats"; "had" only before a pronoun, "Had we been to Kyoto
before": it opens chat that leaves out its "I" far more often, "Had pizza for lunch")."""

_CHAT_OPENERS = CHAT_WORDS | frozenset(
    "wait and so ok okay oh also hey hi hm anyway anyways but well ah ahh aw quick question "
    "random sorry right".split()
)
"""Words that chat puts before a question without making it a statement ("wait when is
the dental cleaning", "btw what was the ramen place called", "lol ok what's her name"):
up to three are skipped, and then only an interrogative opens a question, and only one
that asks (:func:`_asks_after_chat`)."""

_WH_WORDS = frozenset("what when where who whom whose why which how".split())

_SUBJECTS = frozenset("i you u he she we they it i'm i've i'd".split())
"""Subject pronouns: after an interrogative, a clause ("so when i got home", "but what i
want is a nap"), not a question ("when did i…")."""

_EMOJI = lazy_compile(r"[\U0001f000-\U0001faff\u2600-\u27bf\u2300-\u23ff\u2b00-\u2bff]+\ufe0f?")
"""Emoji, which end a sentence in chat as a full stop does ("so tired 😩 when's the
dentist"; what follows one is read as after a chat word)."""


_PRONOUNS = frozenset("i you he she we they it".split())

_EN_RECALL = lazy_compile(
    r"\b(remember|remind|recall|forgot|forget|mentioned|told you|last time)\b"
    r"|\b(say|tell|repeat)\b.*\bagain\b|^again\b",
    re.ASCII,
)
"""English cues that point back at something said before ("again" only after a request
to say it, or opening the message: "Say the password again", "again, which hotel";
"Rainy day again" is small talk, and "What was it again?" asks by its question mark)."""

_JA_QUESTION = lazy_compile(
    r"(何|(?<![ぁ-ゖ])なに|(?<![ぁ-ゖ])なんで(?![すし])|(?<![ぁ-ゖ])なんの"
    r"|いつ|どこ|どちら|どっち|誰|だれ|どう|なぜ|どれ|どの|いくら|いくつ|幾ら|幾つ)"
    r"(?![かもぞ]|でも|であれ|でしょうね|となく|とか|だか|やら|回も|度も|しても|せ|にか|の間|より|しろ|までも"
    r"|にも|りで|になく|の気)"
)
"""Japanese interrogatives, in kanji or kana (not the indefinites and set phrases 何か,
何となく, 何回も, いつも, いつの間にか, どこでも, どうぞ, どうしても, どうせ, 何より, 何しろ,
いつまでも, どうにも, どうりで, いつになく, 何の気なしに, …; but いつでしょう and 何でしょう
ask, where 何でしょうね, この暑さは muses). Only でも and でしょうね after one are left out, not
any で: どこで and 何で ask where and how (焼肉どこで食べた, 何で行ったの, typed without a ？); what
follows one may still make it no question (:data:`_JA_NOT_ASKED`)."""

_JA_CLAUSE_CHARS = r"[^、,。.!?！？\s]"
"""A character of the clause an interrogative opens (no mark nor space ends it)."""
_JA_THEN = r"(?:どうか)?[はもが]?[、,\s]*(?:まだ|もう|全然|全く|よく|やっと)?"
"""What may stand between an embedded question's か and the verb after it (かはまだ, かどうか)."""
_JA_NOT_ASKED = lazy_compile(
    rf"{_JA_CLAUSE_CHARS}{{0,6}}?[てで]も(?!ら)"
    rf"|{_JA_CLAUSE_CHARS}{{0,12}}?か{_JA_THEN}"
    r"(?:分かった|わかった|分かりました|わかりました|決め|決ま)"
    rf"|{_JA_CLAUSE_CHARS}{{0,12}}?(?<![ただ])(?<![ただ]の)か{_JA_THEN}"
    r"(?:分から|わから|分かん|わかん|分かりません|わかりません|知らな|知らん)"
)
"""What after an interrogative makes it no question: a concession, the interrogative and
…ても a few characters on (どこで食べても美味しい, 何で行っても同じ, 何をしても; not …てもらった,
which asks: 誰に教えてもらったの), or an embedded question the speaker says they know, have
decided or do not (どこで降りればいいか分かった, どこで働くかまだ決めてない, 何で怒ってるのか
分からない). Not knowing a past of one's own asks to be reminded, as 覚えてない and 忘れた do
(鍵どこに置いたか分からない)."""

_JA_ENDINGS = (
    "か",
    "かしら",
    "っけ",
    "たかな",
    "だかな",
    "たのかな",
    "だのかな",
    "たかなあ",
    "だかなあ",
    "たのかなあ",
    "だのかなあ",
    "ですかあ",
)
"""Sentence-final particles that make a Japanese sentence a question or a check
(…だったかな, 飲んだかなあ, …してくれたのかな: wondering about the past; 元気ですかあ; not
行こうかな, an intention, nor 明日晴れるのかな, 疲れてるのかな: musing; a sigh, 月曜日かあ, is one
only as 雨かー is)."""

_JA_NOT_ENDINGS = (
    "とか",
    "いいか",
    "いっか",
    "仕方ないか",
    "しょうがないか",
    "なんだかな",
    "何だかな",
    "どうだかな",
    "まだかな",
    "なんだかなあ",
    "何だかなあ",
    "どうだかなあ",
    "まだかなあ",
    "そうですかあ",
)
"""Endings in か that are no question: a list (映画とか), letting go (まあいいか, 仕方ないか),
set phrases and musing (なんだかなあ, どうだかなあ, 荷物まだかな), a backchannel (そうですかあ)."""

_BACKCHANNEL = lazy_compile(
    r"^(?:[あぁえぇへうおっーんー〜、,\s]|なるほど|うーん|まあ)*"
    r"(?:(?:そっか|そうか|まじか|マジか)[、,\s]*)+$"
)
"""A sentence that is only a backchannel after an interjection or two (そっか, あーそっか,
なるほどそっか, そっかそっか, え、マジか), not 大丈夫そうか."""

_TRAILING = frozenset(" \t\n.!。！…~〜♪☆★♡♥❤ーぁぃぅぇぉw笑\ufe0f\u200d")
"""What may follow a sentence's last word, one character at a time (:func:`_untrailed`):
punctuation, a long vowel (かなー, かなぁ), a laugh (ｗ, 笑), emoji; a kaomoji in brackets
too."""

_BRACKETED = 12
"""The most characters a kaomoji in brackets at a sentence's end holds, "(´・ω・`)"."""


def _untrailed(sentence: str) -> str:
    """``sentence`` without what follows its last word (:data:`_TRAILING`, emoji, a kaomoji
    in brackets), read from its end once: a run of thousands of ｗ costs its length."""
    end = len(sentence)
    while end > 0:
        c = sentence[end - 1]
        if c in _TRAILING or 0x1F000 <= ord(c) <= 0x1FAFF or 0x2600 <= ord(c) <= 0x27BF:
            end -= 1
        elif c == ")" and (
            (start := sentence.rfind("(", max(0, end - _BRACKETED - 2), end - 1)) >= 0
            and ")" not in sentence[start + 1 : end - 1]
        ):
            end = start
        else:
            break
    return sentence[:end]


_JA_RECALL = lazy_compile(
    r"(覚えて|忘れ|っけ|(?<![うくすつぬふむゆるぐずづぷだの0-9駅分秒時間目手名午事])前に"
    r"|この前|この間(?!に|中|違い|隔|取り)|こないだ"
    r"|(?<![恒異条比事慣判凡用実前通特定類好悪文作範適])例の(?!ごと|如)"
    r"|以前|言ったよね|話したよね)"
)
"""Japanese cues that point back at something said before (前に, 少し前に, だいぶ前に, but not
寝る前に, 行く前に, 駅前に, 家の前に, 5分前に, 午前に, 事前に: a place, or a time before
something; この前, この間 and こないだ "the other day", but not この間に "meanwhile" nor
この間違い, この間隔, この間取り; 例の "that … you know" (先日例の店に), but not inside a
word, 恒例の, 異例の, 条例の, 前例の, nor 例のごとく "as usual")."""

_REQUEST = lazy_compile(
    r"\b(tell me|fill me in|recap|summari[sz]e|go over|walk me through)\b"
    r"|(?:教|おし)えて(?!あげ|やる|やろ|やっ|くれて|くれた|もらった)|まとめて|振り返|おさらい"
    r"|思い出させて",
    re.ASCII,
)
"""A request to be told or reminded, put without a question ("walk me through it",
振り返りたい, まとめてください; 教えて in kana too, as chat types it: おしえて〜; not an offer to
tell or thanks for being told: おしえてあげる, 教えてくれてありがとう, 教えてもらった)."""


def code_words(text: str, *, capitals: bool = True) -> list[str]:
    """The words of ``text`` (its first :data:`READ_CHARS`) that look like codes or names
    of code, in lower case: letters with digits, four characters or more (E1101,
    ORA-00942, 0x80070005, v2.0.0-rc1, psycopg2.connect; not gr8, PS5, b4), five capitals
    or more (ERESOLVE, ERESOLVEってなんだっけ; not with ``capitals`` false), parts joined by
    underscores or by two dots or more (user_id, com.example.app; not U.S.A.). Not
    capitals in a message that shouts (half its words or more in capitals: "I'm SO
    HAPPY", "I'M SO TIRED"; "what was ERESOLVE from NPM?" does not), a word of repeated
    letters ("SOOOO"), nor four capitals or fewer (LMAO, ASAP, NASA), chat's own (LMFAO),
    times, ordinals and amounts (4pm, 3rd, 5km, 1.5kg, 2pm-ish, 1000yen, 30kyen), ranges of
    them (7pm-8pm, 5k-10k), "e.g." or "thanks.see"."""
    head = within(text, READ_CHARS)
    words = _LATIN_WORD.findall(head)
    shouted = len(words) > 1 and 2 * sum(len(w) > 1 and w.isupper() for w in words) >= len(words)
    out: list[str] = []
    for m in _CODE_WORD.finditer(head):
        word = m.group().lower()
        if m.group("caps") and (
            not capitals
            or shouted
            or word in CHAT_WORDS
            or word in _CHAT_CAPITALS
            or _REPEATED.search(word)
        ):
            continue
        if _TIME_OR_ORDINAL.fullmatch(word) or word in out:
            continue
        out.append(word)
    return out


_LATIN_WORD = lazy_compile(r"[A-Za-z][A-Za-z']*", re.ASCII)
_REPEATED = lazy_compile(r"(\w)\1\1")
"""A letter three times over: a word drawn out for emphasis ("SOOOO", "NOOOOO")."""

_CHAT_CAPITALS = frozenset("lmao lmfao rofl asap tbh imho idk smh afaik ftw".split())
"""Chat's own capitals, which name no code."""

_UNITS = (
    "st|nd|rd|th|am|pm|h|s|k|m|min|mins|sec|secs|km|kg|g|cm|mm|ml|l|x|yo|yrs?|lbs?|hrs?|d|w"
    "|days?|wks?|weeks?|months?|yen|usd|eur|gbp|jpy|bucks|dollars?|euros?|kcal|cal|kb|mb|gb|tb"
    "|mbps|gbps|hz|khz|mhz|ghz|mph|kph|kmh"
)
_AMOUNT = rf"\d+(?:[.,]\d+)?k?(?:{_UNITS})?(?:-ish)?|\d{{1,2}}[.:]\d\d(?:am|pm)?|\d+(?:[.,]\d+)+"
_TIME_OR_ORDINAL = lazy_compile(rf"(?:{_AMOUNT})(?:-(?:{_AMOUNT}))?")
"""Words with digits that are no code: times, ordinals, amounts (4pm, 3rd, 5km, 1.5kg), a
number run into its unit, after a thousand or not (1000yen, 30kyen, 16gb), and a range of
them (7pm-8pm, 7-8pm, 5k-10k; not 1204b, ora-00942)."""


def content_terms(text: str) -> list[str]:
    """The query terms of ``text`` that carry meaning: Latin words and CJK grams without hiragana."""
    return [t for t in query_terms(text) if not _HIRAGANA.search(t)]


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of some terms in a store of ``n_docs`` episodes."""

    n_docs: int
    counts: Mapping[str, int]

    def idf(self, term: str) -> float:
        """BM25's (always positive) inverse document frequency of ``term``."""
        df = self.counts.get(term, 0)
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))


def lexical_reach(terms: Sequence[str], stats: TermStats) -> float:
    """The idf-weighted share of ``terms`` found in at least one episode (1.0 with no terms)."""
    total = found = 0.0
    for term in dict.fromkeys(terms):
        w = stats.idf(term)
        total += w
        if stats.counts.get(term, 0) > 0:
            found += w
    return found / total if total > 0 else 1.0


_INTERROGATIVE = lazy_compile(
    r"\b(?:what|what's|whats|when|where|who|whom|whose|why|which|how)\b"
    r"|何|なに|なん[でだ]|いつ(?!も)|どこ|誰|だれ|どれ|どの|どう|いくら|いくつ",
    re.ASCII,
)
"""An interrogative anywhere in a text, not only where a question opens."""


def may_ask(text: str) -> bool:
    """Whether ``text`` asks something (:func:`asks_memory`) or holds an interrogative
    anywhere ("btw what's my wifi password", typed without a question mark after a long
    paste): the looser test of a line that may be a question."""
    norm = unicodedata.normalize("NFKC", within(text, READ_CHARS)).lower()
    return asks_memory(text) or _INTERROGATIVE.search(norm) is not None


def _chat_sentences(norm: str) -> list[tuple[str, bool]]:
    """The sentences of a folded message, each with whether an emoji ended the one before."""
    out: list[tuple[str, bool]] = []
    for sentence in sentences(norm):
        pieces = [p for p in _EMOJI.split(sentence) if p.strip()]
        out.extend((p, i > 0) for i, p in enumerate(pieces))
    return out


def _exclaims(words: Sequence[str]) -> bool:
    """Whether a sentence opens as an exclamation: "What a day", "what an idea", "what a
    great time we had when ken visited" (its question, if any, comes after a comma and is
    read as a clause of its own: :func:`_asking_clause`)."""
    return words[:1] == ["what"] and words[1:2] in (["a"], ["an"])


_AUX = frozenset("did do does was were is are can could will would should have has".split())


def _asking_clause(sentence: str) -> bool:
    """Whether a clause after a comma asks: an interrogative (not "which") then an
    auxiliary, one word apart at most ("What a great trip, where did we stay", "what a day,
    what time is the dentist"; not "what a day, which is why…", "what a mess, how
    annoying")."""
    for clause in sentence.split(",")[1:]:
        words = _WORDS.findall(clause.translate(APOSTROPHES))
        wh = len(words) > 1 and _opening(words[0]) in _WH_WORDS - {"which"}
        if wh and (words[1] in _AUX or (len(words) > 2 and words[2] in _AUX)):
            return True
    return False


_LATIN_RUN = lazy_compile(r"[a-z](?:[a-z' -]*[a-z])?")
"""English words in a row, spaces between them (of a folded sentence: "will smith")."""
_JAPANESE_CHAR = lazy_compile(r"[\u3041-\u3096\u30a1-\u30fa\u30fc\u3005\u3400-\u9fff\uf900-\ufaff]")
"""A kana, a kanji, ー or 々."""


def _runs_into_japanese(sentence: str, start: int) -> bool:
    """Whether the English words from ``start`` on run straight into Japanese text, with no
    space between, as a name or a phrase a Japanese sentence uses as a noun: one word
    (「Willが遊びに来た」, 「Canのビール」, 「Whyって言われても」, 「Which家電がいいかな」), or
    words that open no English question (「Will Smithの新作」, 「Do it yourselfで棚作った」).
    Not an English question run into its Japanese words (:func:`_asks_into_japanese`: "what's
    明日の予定", "where did I put鍵"), nor one spaced from them ("Where is 渋谷")."""
    run = _LATIN_RUN.match(sentence, start)
    if run is None or _JAPANESE_CHAR.match(sentence, run.end()) is None:
        return False
    return not _asks_into_japanese(run.group().split())


def _asks_into_japanese(words: Sequence[str]) -> bool:
    """Whether English ``words`` run into Japanese read as a question about it: an
    interrogative's contraction with its apostrophe ("what's明日の予定", "when's健太の誕生日";
    「whatsアプリ」 is WhatsApp), an interrogative then an auxiliary ("where did I put鍵",
    "what was the name of that店"), an auxiliary then a person ("do you know翔太の誕生日", "did we…"), or words whose last one
    leads on to the Japanese (:data:`_LEADS_ON`: "when is健太の誕生日"). Not one word used
    as a noun (Willが, Whyって), nor "Will Smithの", "Do it yourselfで"."""
    first = words[0]
    head = _opening(first)
    if "'" in first and head in _WH_WORDS:
        return True
    if len(words) < 2:
        return False
    if head in _WH_WORDS and (words[1] in _AUX or _negative_aux(words[1])):
        return True
    if head in _AUX and words[1] in _PEOPLE:
        return True
    return words[-1] in _LEADS_ON


_PEOPLE = frozenset("i you u we they he she".split())
"""Subjects after an opening auxiliary that make it a question ("do you know", "did i";
not "it": "Do it yourself")."""


_LEADS_ON = _AUX | frozenset(
    "am a an the my your his her our their of to at in on with about for from by".split()
)
"""English words that lead on to what follows them (an auxiliary, an article, a possessive, a
preposition): the Japanese after one is still part of the English sentence."""


def _asks_after_chat(words: Sequence[str]) -> bool:
    """Whether the words after chat ones ("wait", "btw", "lol", an emoji) ask: an
    interrogative with at least two words after it, not a subject pronoun first ("wait when
    is the dental cleaning"; not "wait what", "lol how cute", "well who cares", "so when i
    got home", nor "ok will do", "lol was fun": chat leaves out its "I")."""
    if len(words) < 3 or _opening(words[0]) not in _WH_WORDS:
        return False
    return words[1] not in _SUBJECTS and not _exclaims(words)


def _subject_after(aux: str, word: str) -> bool:
    """Whether ``word`` after a negative auxiliary is its subject, so the two ask about what
    was said or done: "didn't i tell you", "haven't we been there", "didn't you say…", or,
    after do, does, did, have or has, "my"/"our" ("doesn't my sister live in osaka"); not
    "isn't it crazy how…", "don't you just hate mondays", "isn't she lovely" (said, not
    asked), nor "wasn't my best day" (chat without its "it")."""
    base = aux.replace("'", "")[:-2]
    if word in ("i", "we") or (word in ("you", "u") and base == "did"):
        return True
    return word in ("my", "our") and base in ("do", "does", "did", "have", "has")


def _negative_aux(word: str) -> bool:
    """Whether ``word`` is an auxiliary's negative contraction ("isn't", "didnt", "don't";
    typed with or without its apostrophe)."""
    base = word.replace("'", "")
    return base.endswith("nt") and base[:-2] in _NEGATABLE


_NEGATABLE = frozenset("is are was were do does did have has had could would should ca wo".split())
"""The auxiliaries whose negation may open a question ("can't" is "ca" + "n't", "won't"
"wo")."""


def _opening(word: str) -> str:
    """A sentence's first word as :data:`_EN_QUESTION_WORDS` holds it: an interrogative's
    contraction by its first part ("what's", "where'd", "who're"; typed without its
    apostrophe, "whats"), not an auxiliary's ("could've been worse", "should've brought an
    umbrella", "can't sleep" say, not ask)."""
    head, _, tail = word.partition("'")
    if tail:
        return head if head in _WH_WORDS else word
    return _WITHOUT_APOSTROPHE.get(word, word)


_WITHOUT_APOSTROPHE = {w + "s": w for w in ("what", "when", "where", "who", "how", "why")}
"""An interrogative's contraction typed without its apostrophe ("whats", "hows")."""


_PARTNER = frozenset("you your u ur yourself".split())

_FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine myself we we're we've our us".split())

_THIRD_PERSON = frozenset("he she him her his hers they them their theirs".split())

_PHATIC = frozenset(
    "up going new day life everything things today doing been week weekend morning "
    "evening night tonight good well fine alright".split()
)
"""Words of a question to the partner about how they are ("how was your day", "are you
doing well"), not about a thing of the user's."""

_GREETING_WORDS = frozenset("up going new everything life things happening goes".split())
"""The words after the interrogative of a greeting asked of no one ("what's up", "how's it
going", "what's new", "how's everything", "how's life"; "it" and "is" beside them, but
not alone: "what is it?" asks)."""

_CJK = lazy_compile(r"[\u3400-\u9fff\uf900-\ufaff]|[\u3041-\u3096\u30a1-\u30fa]{2}")
"""Japanese: a kanji, or two kana in a row (a kaomoji's single ノ, ツ or っ is none)."""


def asks_the_partner(text: str) -> bool:
    """Whether ``text`` only asks how the partner or things are, a greeting: a question to
    "you" of function, chat and :data:`_PHATIC` words ("hey how are you", "how was your
    weekend?"), or an interrogative and :data:`_GREETING_WORDS` alone ("what's up", "how's
    it going"); no "I", "my", "she" or "they", no recall cue, no Japanese ("is it today?",
    "what's happening this weekend?", "how's she doing?", "do you remember?", "how was my
    weekend?", "what do you know about her?" ask)."""
    return asks_memory(text) and _greets(text)


def _greets(text: str) -> bool:
    """:func:`asks_the_partner` for a ``text`` known to ask."""
    text = within(text, READ_CHARS)
    norm = unicodedata.normalize("NFKC", text).lower().translate(APOSTROPHES)
    words = [w for w in _WORDS.findall(norm) if w not in _CHAT_OPENERS]
    if not words or _CJK.search(norm):
        return False
    if _EN_RECALL.search(norm) or _REQUEST.search(norm):
        return False
    if _FIRST_PERSON.intersection(words) or _THIRD_PERSON.intersection(words):
        return False
    if _PARTNER.intersection(words):
        return all(w in ENGLISH_STOPWORDS or w in _PHATIC or w in _PARTNER for w in words)
    head, rest = _opening(words[0]), words[1:]
    return (
        head in ("what", "how", "sup")
        and all(w in _GREETING_WORDS or w in ("it", "is") for w in rest)
        and (head == "sup" or any(w in _GREETING_WORDS for w in rest))
    )


def asks_something(text: str) -> bool:
    """Whether ``text`` asks something a memory may answer: it asks (:func:`asks_memory`),
    and not only how the partner or things are (:func:`asks_the_partner`)."""
    return asks_memory(text) and not _greets(text)


def asks_memory(text: str) -> bool:
    """Whether ``text`` asks something or points back at the past (else it is small talk);
    a long text is read within :data:`READ_CHARS` (its beginning and its end). An English
    word that runs straight into Japanese opens no English question (「Willが遊びに来た」,
    「Whyって言われても」: :func:`_runs_into_japanese`)."""
    norm = unicodedata.normalize("NFKC", within(text, READ_CHARS)).lower().strip()
    if not norm:
        return False
    if "?" in norm or _EN_RECALL.search(norm) or _JA_RECALL.search(norm) or _REQUEST.search(norm):
        return True
    for sentence, after_emoji in _chat_sentences(norm):
        plain = sentence.translate(APOSTROPHES)
        found = list(_WORDS.finditer(plain))
        words = [m.group() for m in found]
        skipped = 0
        while skipped < 3 and len(words) > 1 and words[0] in _CHAT_OPENERS:
            words, skipped = words[1:], skipped + 1
        if words and _runs_into_japanese(plain, found[skipped].start()):
            words = []  # (a name or a phrase of a Japanese sentence: Willが, Whyって)
        if skipped or after_emoji:
            if _asks_after_chat(words) or (_exclaims(words) and _asking_clause(sentence)):
                return True
        elif (
            words
            and _opening(words[0]) in _EN_QUESTION_WORDS
            and (not _exclaims(words) or _asking_clause(sentence))
        ):
            return True
        if len(words) > 1 and words[0] == "had" and words[1] in _PRONOUNS:
            return True
        if len(words) > 2 and _negative_aux(words[0]) and _subject_after(words[0], words[1]):
            return True  # "didn't i tell you", "isn't it on friday"; not "didn't sleep well"
        body = _untrailed(sentence)
        ending = (
            body.endswith(_JA_ENDINGS)
            and not body.endswith(_JA_NOT_ENDINGS)
            and not _BACKCHANNEL.match(body)
        )
        if ending or any(
            not _JA_NOT_ASKED.match(body, m.end()) for m in _JA_QUESTION.finditer(body)
        ):
            return True
    return False


_CLAUSE = lazy_compile(r"[,、]")

RECALL_ONLY_CHARS = 200
"""The longest text :func:`only_asks_to_recall` reads as a bare question: a longer one
tells something on its way."""

_WH = r"(?:what|when|where|who|which|how)"

_EN_RECALL_FORM = lazy_compile(
    rf"\b{_WH}(?: \w+)?(?: (?:did|was|were|had) (?:i|we|my|our)|(?:'s| is| are) (?:my|our))\b"
    rf"|\bagain\s*\?|\b(?:remember|recall) (?:when (?!i\b|we\b)|(?!when){_WH}\b)"
    rf"|\bremind me (?:of )?{_WH}\b",
    re.ASCII,
)
"""English forms that ask to be reminded of the user's own past or facts: "what did I",
"what was my", "what's my", "when is my", "where did we", "… again?", "do you remember
what …", "remind me where …" (not "remember when I …" nor "do you remember I …", which
tell, nor "remind me to …", a request, nor "what should I", "who do you think", "how's
it going")."""

_JA_RECALL_FORM = lazy_compile(
    r"っけ|覚えて(?:る|い|ます)?[?？]?\s*(?:何|なに|いつ|どこ|誰|だれ)"
    r"|(?:何|なに)(?:して|し)た(?!ら|の?に|から|けど)|(?:何|なん)だった"
)
"""Japanese forms that ask to be reminded: …っけ, 覚えてる + 何/いつ/どこ/誰, 何してた, 何だった
(not 覚えてる？昨日…した, which tells)."""

_TELLS = lazy_compile(
    r"\b(?:after|because|since|cause|while)\b|.\bwhen (?:i|we)\b|\btold you (?:i|we|that)\b"
    r"|[たっだ](?:から|ので|けど|のに|あと|後)|(?:って|と)(?:言|話)(?:った|して|し)",
    re.ASCII,
)
"""A clause told beside a recall form: an English one of the user's own ("after running
10k", "because I", "when I moved"), a Japanese past event given as a reason or a time
(走ったから, 食べたあと), or a "did I tell you …" that tells (猫拾ったって言ったっけ)."""


_ANY_MOMENT = datetime(2999, 12, 31, 12, tzinfo=timezone.utc)
"""A moment to read time expressions against when only their words matter, not their window
(a year's last day, so that every month of it, "in March", 3月, is past)."""
_LEFT_OF_A_TIME = lazy_compile(
    r"[\s,、。.!?！？]*(?:(?:on|in|at|over|during)\s+)?(?:the\s+)?[\s,、]*"
    r"(?:(?:には|は|に|も)[\s,、]*)?"
)
"""What a clause that is only a time expression may hold beside it: "on", "in", "at" or
"over", a particle (は, に) and a mark (3月は、, "last week,", "on monday,", "over the
weekend,")."""
_A_TIME_WORD = lazy_compile(
    r"\b(?:earlier|later|early|this|yesterday|tomorrow)?\s*(?:today|tonight|morning|afternoon"
    r"|evening|night)\b|\b(?:earlier|recently|lately)\b|今日|最近|さっき"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b|[月火水木金土日]曜日?"
    r"|\b(?:[1-3]?\d(?:st|nd|rd|th))\b|[1-3]?\d日"
    r"|\b(?:this|last|next)?\s*weekend\b|\b[01]?\d(?::[0-5]\d)?\s?[ap]\.?m\b\.?|\bnoon\b"
    r"|\b(?:[01]?\d|2[0-3]):[0-5]\d\b|の?(?:午前|午後)?[0-2]?\d時(?:[0-5]?\d分|半)?(?!間)"
    r"|(?:今|先|来)?週末|土日|の?(?:夜中|夜|朝|昼|夕方|晩|午前|午後)"
)
"""A word of a time that :func:`.temporal.find_time_expressions` leaves for the question to
tell by its own words (today, "earlier", 最近, "monday", 月曜日, "the 19th", 19日, "this
weekend", 週末, 今週末, 土日, "3pm", "15:00", 15時, 午後3時), a part of the day or a clock time
after it too (月曜の夜, 昨日の夜, 日曜日の午後, 昨日の15時; not 3時間, a while)."""


def _only_a_time(clause: str) -> bool:
    """Whether ``clause`` (normalised) is nothing but a time (:func:`.temporal.
    find_time_expressions` or :data:`_A_TIME_WORD`) and "on" or a particle: "last week", "in
    march", "on monday", "earlier today", "on the 19th", 先週末, 3月は, 月曜日は; not "after the
    concert", "last week i went", "the party"."""
    found = find_time_expressions(clause, _ANY_MOMENT)
    rest = clause
    for expression in found:
        rest = rest.replace(expression.surface, " ", 1)
    rest, words = _A_TIME_WORD.subn(" ", rest)
    return bool(found or words) and _LEFT_OF_A_TIME.fullmatch(rest) is not None


def only_asks_to_recall(text: str) -> bool:
    """Whether ``text`` does nothing but ask to be reminded of the user's own past or
    facts: at most :data:`RECALL_ONLY_CHARS`, it holds a recall form
    (:data:`_EN_RECALL_FORM`, :data:`_JA_RECALL_FORM`: "What did I do last week?", "Where
    do I live again?", 私の好きな食べ物って何だっけ？, 3月は何してたっけ), every clause with a
    content word is one, and none tells an event beside it (:data:`_TELLS`). Not a question
    that tells ("Any idea why my knee hurts after running 10k?", "Remember when I ran my
    first marathon?", なんで昨日の面接で落ちたんだろう？), a plan or a request ("What should I
    cook on Saturday?", "Can you remind me to call mom?"), nor one beside a statement
    ("Baked bread today. What did I do last week?"); chat words tell nothing ("Hmm, what
    did I do?"), nor a time set off by a comma ("Last week, what did I do?", 先週末、何してた？:
    :func:`_only_a_time`)."""
    if len(text) > RECALL_ONLY_CHARS:
        return False
    norm = unicodedata.normalize("NFKC", text).lower().translate(APOSTROPHES).strip()
    clauses = [c for s in sentences(norm) for c in _CLAUSE.split(s)]
    recalls = [c for c in clauses if _EN_RECALL_FORM.search(c) or _JA_RECALL_FORM.search(c)]
    # ("hey!", "hmm," ねえ tell nothing, nor a time set off by a comma: "Last week, what …")
    told = [c for c in clauses if content_terms(c) and not _only_a_time(c)]
    if not recalls or any(c not in recalls for c in told):
        return False
    return not any(_TELLS.search(c) for c in clauses)
