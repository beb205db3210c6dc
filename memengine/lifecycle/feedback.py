"""Feedback: which memories of a turn were actually used, and how much they mattered.

A retrieval only counts its results as candidates; ``feedback(turn_id, …)``
says which were *used*, either explicitly by id (any candidate) or from the final
answer, which is judged against the candidates the turn offered to the reply (the
relevant ones of a turn that injects: what its pack shows):

- ``match``: a memory is used when one of its tags occurs in the answer,
  when enough of its key terms do (``answer_keyword_fraction``; an English word in
  another form too: "peanut" of "peanuts"), when at least two of the answer's words
  with an uncommon term (:func:`uncommon`; トヨタ is one word) come from it and make that
  share of the answer, unless another memory offered holds them and more of the answer's,
  when the answer lists several memories and carries its
  own content (a name, a title or a number of it, or two words the user said in it,
  that no other memory offered holds; in Japanese a name is one an honorific marks,
  翔太くん or はるとくん, not a word for someone, 店員さん or 息子さん, and a plain word,
  京都 or 天気, is one of two, as in English), when the answer lists days by their date
  and one is the day it was said ("Mar 3, 8 and 13"), or when the answer's embedding
  is close to the memory's (cosine ≥ ``answer_match_threshold``) and no memory found by
  its content holds the answer's terms this one does and is clearly closer (辛いの無理,
  not 辛いのは大丈夫, for 「辛いの無理って言ってたよね」);
- ``llm``: an LLM is shown the numbered memories and the answer and asked
  which influenced it (falls back to ``match`` if the call fails).

Each used memory: ``access_count += 1``, ``last_access = now``,
``strength += use_strength_gain + impact × impact_factor``,
``impact_score += impact`` and, when the task has a perspective, its
strength under that perspective ``+= perspective_strength_gain`` (a
learning, if given, is kept under that perspective).
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, Literal

from ..arguments import spelled_as_declared
from ..clock import in_zone
from ..config import LifecycleConfig
from ..embed.base import Embedder
from ..errors import EmbeddingError, FeedbackExists, InvalidInput, LLMError, NotFound
from ..models import Episode
from ..retrieve.owners import JA_KIN_WORDS
from ..retrieve.temporal import find_time_expressions
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..store.episodes import existing_ids
from ..text import (
    CJK_CHARACTER,
    as_a_word,
    counted,
    fold,
    prompt_line,
    query_terms,
    sentences,
    shell_word,
)
from .strength import impact_of

__all__ = [
    "FeedbackResult",
    "Judge",
    "give_feedback",
    "llm_used",
    "match_answer",
    "named_days",
    "uncommon",
]

Judge = Literal["auto", "match", "llm"]

LLM_SYSTEM = (
    "You audit an assistant. Given its final answer and numbered memories that were shown "
    "to it, list the numbers of the memories whose content influenced the answer. "
    'Reply with one JSON object: {"used": [numbers]} (an empty list if none).'
)
LLM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"used": {"type": "array", "items": {"type": "integer"}}},
    "required": ["used"],
}
_LLM_CHARS = 300
_ANSWER_CHARS = 4000
"""How much of the answer the LLM judge reads (the embedding reads its first 2,000)."""


@dataclass(frozen=True)
class FeedbackResult:
    """What a feedback did: the used memories (and why), the impact and the outcome."""

    turn_id: int
    agent: str
    used: tuple[int, ...]
    method: str
    reasons: dict[int, str]
    impact: float
    outcome: str | None
    perspective: str | None
    degraded: tuple[str, ...] = ()


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _tag_in(tag: str, text: str) -> bool:
    """Whether the (normalised) ``tag`` is in ``text``: as a word where it begins or ends
    with a letter of a spaced script, else anywhere (:func:`~memengine.text.as_a_word`)."""
    return bool(tag) and re.search(as_a_word(tag), text) is not None


_HIRAGANA = re.compile(r"[\u3040-\u309f]")


def uncommon(answer_terms: Sequence[str], rows: int, counts: Mapping[str, int]) -> set[str]:
    """The answer's terms found in few of the file's ``rows`` episodes (at most 3, or 5 %:
    "patellar", not "day"), by their document ``counts``."""
    most = max(3, rows // 20)
    return {t for t in answer_terms if counts.get(t, 0) <= most}


def match_answer(
    answer: str,
    episodes: Sequence[Episode],
    similarities: Mapping[int, float],
    cfg: LifecycleConfig,
    rare: set[str] | frozenset[str] = frozenset(),
    asked_at: datetime | None = None,
) -> dict[int, str]:
    """The memories the answer shows signs of, each with the reason (tag, keywords, similarity).

    Keywords are read both ways: enough of a memory's key terms in the answer, or
    (for a short answer drawn from a long memory: "Patellar tendinopathy.") at least two
    of the answer's words with a ``rare`` term (:func:`uncommon`) from what the user said in
    the memory (not its reply: a stock reply is the assistant's own), or the one word of an
    answer of one (高尾山！) that no other memory offered says, and that much of the
    answer's words (:func:`_answer_words`: トヨタ is one word, not five terms; without
    hiragana: お疲れ様でした holds no でし to match), unless another memory offered says
    those words and more of the answer's (「田中さんはトヨタで働いてるよ」 is not drawn from
    佐藤さんもトヨタで働いてる); one word is the answer's when a particle or an ending is all it
    writes beside it (高尾山だよ, not 「そっか、雨なんだね。むりしないでね」: :data:`_ONE_WORD_ROOM`).
    An English word counts in another form of it (the answer's "peanut" of "peanuts",
    "allergy" of "allergic"; not a name's, "Simone" of "Simon": :func:`_stems`), a Japanese
    word by the two kanji it begins with (結婚式 of 結婚する: :func:`_held`). An answer that lists
    several memories ("Your kids are Emma, Liam and Noah.", お子さんは翔太くんと結衣ちゃんだね,
    not 店員さんに息子さんと間違えられたんだね: :func:`_a_name`) credits each whose own
    content it carries (:func:`_own_content`), when it carries that of two or more: one
    memory named alone is judged by the rules above ("Sorry, I don't remember anything
    about Barcelona." is no use of the trip). An answer that names
    two days or more by their date credits the memories said on them (:func:`_by_day`,
    read at ``asked_at``, the turn's time in the zone the pack dates its blocks in). Last,
    an answer close to a memory's embedding credits it, unless it is only the other side of
    a topic that a memory found by its content holds (:func:`_outshone`)."""
    text = _norm(answer)
    answer_terms = set(query_terms(answer))
    own = [t for t in answer_terms if not _HIRAGANA.search(t)]  # (not でし, くだ, さい)
    # a term that more than one memory offered holds is the question's subject ("gym" of
    # every gym session), or a common word: it is no memory's own content
    terms_of = {ep.id: set(query_terms(ep.text)) for ep in episodes}
    holders = Counter(t for terms in terms_of.values() for t in terms)
    once = {t for t in answer_terms if t in rare and holders[t] <= 1}
    own_rare = {t for t in own if t in once}
    # a list is read in what the answer states: not in a question ("How was Barcelona?"),
    # nor in an answer that says it does not know ("I don't remember Liam or Emma")
    stated = "" if _DISOWNS.search(answer) else _statements(answer)
    stated_terms = set(query_terms(stated))
    names = _names(stated) if own_rare and stated else set()
    folded = fold(stated)
    words = _japanese_words(folded) if once else []
    found: dict[int, str] = {}
    carried: dict[int, str] = {}  # each memory whose own content the answer carries
    # the user's side only (a stock reply is the assistant's), content words only
    told_of = {ep.id: set(query_terms(_said(ep))) for ep in episodes}
    # the answer's words (トヨタ once, not as ト, ヨ, タ, トヨ and ヨタ) each memory says
    whole = fold(answer)
    answer_words = _answer_words(own, whole)
    starts = _word_starts(own, whole)
    capitals = _capitals(answer)  # (a name is in no other form: Simone is not Simon)
    held = {
        ep.id: _held(answer_words, starts, capitals, told_of[ep.id], _said(ep)) for ep in episodes
    }
    answer_forms = _forms(answer_terms, capitals)  # (peanut of peanuts)
    # (an answer of one word is that word, a particle or an ending aside: 高尾山だよ, not
    # 「そっか、雨なんだね。むりしないでね」)
    one_word = len(answer_words) == 1 and _written_beside(answer_words[0], whole) <= _ONE_WORD_ROOM
    for ep in episodes:
        told = told_of[ep.id]
        fresh = once & terms_of[ep.id] & stated_terms  # (hiragana pairs: はるとくん)
        why = _own_content(ep, stated_terms, names, fresh, told, folded, words) if stated else ""
        if why:
            carried[ep.id] = why
        tag = next(
            (
                t
                for t in ep.tags
                # (one character is in too many words: 車 in 電車, ト in チケット)
                if t.strip().lower() != "principle"
                and len(t.strip()) >= 2
                and _tag_in(_norm(t).strip(), text)
            ),
            None,
        )
        if tag is not None:
            found[ep.id] = f"tag {tag!r} in the answer"
            continue
        terms = query_terms(ep.text)
        written = _capitals(ep.text)
        shared = [
            t
            for t in terms
            if t in answer_terms or not _stems(t, t in written).isdisjoint(answer_forms)
        ]
        if (
            terms
            and len(shared) >= min(2, len(terms))
            and len(shared) / len(terms) >= cfg.answer_keyword_fraction
        ):
            found[ep.id] = f"{len(shared)}/{len(terms)} key terms in the answer"
            continue
        drawn = [w for w in held[ep.id] if w & rare]
        # (or an answer's one word, 高尾山！, that no other memory offered says)
        alone = one_word and len(drawn) == 1
        if (
            (len(drawn) >= 2 or (alone and sum(drawn[0] in h for h in held.values()) == 1))
            and len(drawn) / len(answer_words) >= cfg.answer_keyword_fraction
            # (not when another memory offered says these words and more of the answer's:
            # 「田中さんはトヨタで働いてるよ」 is not drawn from 佐藤さんもトヨタで働いてる)
            and not any(held[ep.id] < more for more in held.values())
        ):
            found[ep.id] = f"{len(drawn)}/{len(answer_words)} of the answer's words from it"
    if len(carried) >= 2:  # a list answer: each memory it draws on
        for i, why in carried.items():
            found.setdefault(i, why)
    if asked_at is not None and stated:
        found.update(_by_day(stated, episodes, found, asked_at))
    by_content = set(found)
    for ep in episodes:
        sim = similarities.get(ep.id)
        if ep.id in found or sim is None or sim < cfg.answer_match_threshold:
            continue
        if _outshone(ep.id, sim, by_content, similarities, terms_of, own):
            continue
        found[ep.id] = f"similar to the answer ({sim:.2f})"
    return found


_ONE_WORD_ROOM = 5
"""How much an answer of one word writes beside it (:func:`_written_beside`): a particle,
an ending or a word of no content (高尾山だよ, トヨタかあ、いいね, "About $2,400"), not a
sentence's other words."""
_LATIN_RUN = re.compile("[0-9a-z]+")


def _written_beside(word: frozenset[str], text: str) -> int:
    """How much ``text`` (folded) writes outside every place of ``word`` (its terms,
    :func:`_answer_words`), a Latin word or number counting one and a kana or kanji one
    each: 2 for 高尾山 in 高尾山だよ！ and for "Deepika" in "It's Deepika!", 14 for 雨 in
    「そっか、雨なんだね。むりしないでね」."""
    covered = [False] * len(text)
    for term in word:
        pattern = re.escape(term) if CJK_CHARACTER.search(term) else as_a_word(term)
        for m in re.finditer(pattern, text):
            covered[m.start() : m.end()] = [True] * (m.end() - m.start())
    rest = "".join(" " if inside else ch for ch, inside in zip(text, covered, strict=True))
    return len(_LATIN_RUN.findall(rest)) + sum(
        1 for ch in rest if ch.isalnum() and not ch.isascii()
    )


_CLEARLY_CLOSER = 0.1
"""How much closer to the answer a memory it draws on must be than one that is only
similar to it, for the similar one to be taken as the same topic's other side."""


def _outshone(
    i: int,
    sim: float,
    by_content: set[int],
    similarities: Mapping[int, float],
    terms_of: Mapping[int, set[str]],
    own: Sequence[str],
) -> bool:
    """Whether memory ``i``, similar to the answer (``sim``) but not found in its content,
    is only another side of the topic of one that is (``by_content``): that one holds each
    of the answer's ``own`` terms (no hiragana pairs) that ``i`` holds, one at least, and is
    clearly closer to the answer (:data:`_CLEARLY_CLOSER`). 「辛いの無理って言ってたよね」
    draws on 辛いの無理; 辛いのは大丈夫, close to it by the topic they share, is not what it
    used. A memory that holds a word of the answer the other does not is judged by its
    similarity alone (the marathon of "With the marathon coming, rest that knee": "I'm
    training for the Tokyo marathon", beside "My knee hurts after long runs")."""
    shared = {t for t in own if t in terms_of[i]}
    return bool(shared) and any(
        other != i
        and shared <= terms_of[other]
        and similarities.get(other, -1.0) - sim >= _CLEARLY_CLOSER
        for other in by_content
    )


_DISOWNS = re.compile(
    r"\b(?:(?:don't|do not|can't|cannot|couldn't|didn't) (?:remember|recall|know|say)"
    r"|not sure|no idea|haven't (?:told|mentioned)|never (?:told|mentioned))\b"
    r"|覚えてない|覚えていない|思い出せない|わからない|分からない|知らない|聞いてない|聞いていない",
    re.IGNORECASE,
)
"""What an answer says when it does not know what it names ("I don't remember Liam or
Emma, sorry.", 3日と10日は何してたか覚えてないな): no list of memories it drew on."""


def _statements(answer: str) -> str:
    """The sentences of ``answer`` that state, not ask ("Say hi to Liam." of "Say hi to
    Liam. How was Barcelona?")."""
    return " ".join(s for s in sentences(answer) if not s.rstrip().endswith(("?", "？")))


def _by_day(
    answer: str, episodes: Sequence[Episode], found: Mapping[int, str], asked_at: datetime
) -> dict[int, str]:
    """The memories not yet ``found`` that an answer listing days by their date ("Mar 3, 8
    and 13") names by the day they were said (in ``asked_at``'s zone, as the pack dates
    them), each with the reason: none when it names one day ("You had knee surgery on
    May 3." tells when, it lists no memories), nor by a day that more than one memory
    offered was said on, or that a memory ``found`` by its content was said on or names
    (the knee surgery's "May 3" is not the pasta's of that day)."""
    days = named_days(answer, asked_at)
    if len(days) < 2:
        return {}
    zone = asked_at.tzinfo
    said = {ep.id: in_zone(ep.occurred_at, zone) for ep in episodes}
    per_day = Counter(moment.date() for moment in said.values())
    taken: set[date] = set()
    for ep in episodes:
        if ep.id in found:
            taken |= {said[ep.id].date()} | named_days(ep.text, said[ep.id])
    return {
        ep.id: f"its day ({day.isoformat()}) named in the answer"
        for ep in episodes
        if ep.id not in found and (day := said[ep.id].date()) in days - taken and per_day[day] == 1
    }


_QUOTED = re.compile(
    r"『([^』\n]{1,80})』|「([^」\n]{1,80})」|【([^】\n]{1,80})】|《([^》\n]{1,80})》"
    r"|“([^”\n]{1,80})”|‘([^’\n]{1,80}?)’(?!\w)|\"([^\"\n]{1,80})\""
    r"|(?<![\w'])'([^'\n]{1,80}?)'(?!\w)"
)
"""A quoted title or name: 'Educated', “Dune”, 『コンビニ人間』, 「三体」 (not the apostrophe of
"She's" nor "don't", which stand between two letters)."""
_CAPITALISED = re.compile(r"(?<![\w'’])[^\W\d_][^\W_]*(?:['’][^\W_]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？…\n])[\s\"'“‘(\[]*$")
_TITLE = re.compile(r"(?<![\w.])(?:mr|mrs|ms|mx|dr|prof|st|mt)\.\s*$", re.IGNORECASE)
"""A title's abbreviation, whose period ends no sentence: "Dr. Lee", "Mt. Fuji"."""


def _titles(text: str) -> list[tuple[str, set[str]]]:
    """The quoted titles and names of ``text``, each as written and with its content terms
    (hiragana pairs aside): 'The Remains of the Day' holds "remains" and "day"."""
    out = []
    for m in _QUOTED.finditer(text):
        span = next(g for g in m.groups() if g is not None).strip()
        terms = {t for t in query_terms(span) if not _HIRAGANA.search(t)}
        if terms:
            out.append((span, terms))
    return out


def _names(text: str) -> set[str]:
    """The terms of ``text``'s words written with a capital inside a sentence ("Liam",
    "Westover", the "Lee" of "Dr. Lee"; not the "Sounds" that begins one): a name, as a
    Latin script writes it. A Latin word with a capital next to kana or kanji is one
    wherever it stands (EmmaとLiamとNoahだよ): Japanese writes no other capitals."""
    found: set[str] = set()
    latin = CJK_CHARACTER.sub(" ", text)  # (as long as ``text``: EmmaとLiam is two words)
    for m in _CAPITALISED.finditer(latin):
        word, start, end = m.group(), m.start(), m.end()
        if not word[0].isupper():
            continue
        beside_cjk = any(CJK_CHARACTER.match(text, i) for i in (start - 1, end) if i >= 0)
        begins = _SENTENCE_START.search(latin, max(0, start - 20), start)
        if begins is None or beside_cjk or _TITLE.search(latin, max(0, start - 8), start):
            found.update(query_terms(word))
    return found


def _a_number(term: str) -> bool:
    """Whether ``term`` is a number of three characters or more ("1995", "12800", "3pm"):
    one or two digits are a date's, an age's, a count's in too many texts."""
    return len(term) >= 3 and any(ch.isdigit() for ch in term)


_JA_WORD = re.compile(
    "[\u30a1-\u30fa\u30fc-\u30ff\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0003134f]+"
)
"""A run of kanji or katakana (々, ー): a Japanese word, the particles and kana endings
around it left off (「息子の翔太は」 holds 息子 and 翔太)."""
_KATAKANA_LETTER = re.compile("[\u30a1-\u30fa\u30fc-\u30ff]")
_KANA_HONORIFIC = re.compile("くん|ちゃん|さん|さま")
_KANJI_HONORIFIC = re.compile("(?:先輩|先生|様|君)$")
"""The honorifics that mark a name after it (翔太くん, 結衣ちゃん, 田中さん) or ending its run
(翔太君, 山田先輩); 先生 alone is a word."""
_POLITE_PREFIX = "おご"
"""The prefixes of a polite word, not a name (お母さん, ご苦労様, お客様)."""

_TIME_WORDS = (
    "今日 明日 昨日 今朝 今夜 今晩 昨夜 昨晩 毎日 毎朝 毎晩 毎週 今週 先週 来週 今月 先月 来月 "
    "今年 去年 来年 先日 週末 最近 今度 今回 午前 午後 明後日 一昨日".split()
)
_TIME_WORD = re.compile("|".join(sorted(_TIME_WORDS, key=len, reverse=True)))
"""A time word that Japanese writes joined to the name after it (今日翔太くんが来た,
昨日翔太と公園に行った): the run is two words when two characters or more follow it (not
明日香, 今日子: names)."""
_EVERYDAY_JA = frozenset(
    [
        *_TIME_WORDS,
        *"時間 自分 友達 家族 仕事 会社 学校 用事 予定 本当 大丈夫 元気 大変 一緒 全部 普通 結構 "
        "多分 絶対 気分 問題 場合 感じ 連絡 相談 準備 確認".split(),
    ]
)
"""Kanji words of everyday talk: never a name, though an honorific follows one (友達さん)."""
_PEOPLE_JA = frozenset(JA_KIN_WORDS) | frozenset(
    "孫 婿 家内 奥 彼 彼女 両親 親 爺 婆 甥 姪 赤 坊 嬢 皆 神 仏 王 姫 殿 客 隣 相手 友人 親友 "
    "先生 先輩 後輩 部下 店員 大家 選手 歌手 助手 運転手 監督 警察 看護師 医者 "
    "本屋 花屋 魚屋 肉屋 八百屋 床屋 酒屋 パン屋 ママ友 コーチ シェフ スタッフ "
    "ばあ じい かあ とう にい ねえ あか みな".split()
)
"""Kin, role and trade words that an honorific follows as it follows a name (息子さん,
店員さん, 皆さん, 神様, the ばあ of ばあちゃん): a word for someone, not a name of them (the
kin words of :data:`.retrieve.owners.JA_KIN_WORDS` and more)."""
_PEOPLE_ENDING = frozenset("員師者官医家長")
"""The last characters of a word for someone's role or trade (店員, 看護師, 歯医者,
警察官, 獣医, 大家, 部長): a word of two characters or more that ends in one is no name (a
surname or a given name seldom does)."""


def _a_name(word: str) -> bool:
    """Whether ``word``, which an honorific marks, can be a name: not a word for someone
    (:data:`_PEOPLE_JA`, :data:`_PEOPLE_ENDING`: 店員さん, 部長さん) nor of everyday talk
    (:data:`_EVERYDAY_JA`)."""
    return not (
        word in _PEOPLE_JA or word in _EVERYDAY_JA or (len(word) > 1 and word[-1] in _PEOPLE_ENDING)
    )


def _japanese_words(text: str) -> list[tuple[str, bool]]:
    """The Japanese words of ``text``, folded (:data:`_JA_WORD`), each with whether it is
    written as a name: an honorific after it or ending its run makes it one (翔太くん, 翔太君:
    翔太, named), unless a polite prefix stands before it (お母さん, ご苦労様), it is a word
    for someone (店員さん, 皆さん: :func:`_a_name`) or one kanji before a kanji honorific
    (大先輩, 神様), nor where the honorific is none (薬ちゃんと飲んで, 朝さんぽ:
    :func:`_ends_a_name`). A time word that begins a run is a word of its own (今日翔太くん:
    今日 and 翔太, :data:`_TIME_WORD`); a name in hiragana is one too (:func:`_kana_names`)."""
    out = []
    for m in _JA_WORD.finditer(text):
        word, start = m.group(), m.start()
        lead = _TIME_WORD.match(word)
        if lead is not None and len(word) - lead.end() >= 2:
            out.append((lead.group(), False))
            word, start = word[lead.end() :], start + lead.end()
        polite = start > 0 and text[start - 1] in _POLITE_PREFIX
        title = _KANJI_HONORIFIC.search(word)
        if title is not None and title.start() > 0:
            stem = word[: title.start()]
            out.append((stem, not polite and len(stem) > 1 and _a_name(stem)))
        else:
            mark = _KANA_HONORIFIC.match(text, m.end())
            honoured = mark is not None and _ends_a_name(text, mark.end(), adverb=True)
            out.append((word, not polite and honoured and _a_name(word)))
    return out + [(name, True) for name in _kana_names(text)]


_HIRAGANA_LETTER = re.compile("[\u3041-\u3096\u309d\u309e]")
_CHILD_HONORIFIC = re.compile("くん|ちゃん")
_NAME_JOINS = "のとや"
"""The particles a hiragana name follows a word by (息子のはるとくん, はるとくんとさくらちゃん)."""
_AFTER_NAME = "とのはがにもやへをねよだでっ"
"""The hiragana that may follow a name's honorific (さくらちゃんと, はるとくんは, ゆいちゃんだよ,
翔太くんって); another makes it no honorific (ちゃんこ, くんせい, さんぽ, さまざま)."""
_JA_LETTERS = _JA_WORD.pattern[:-1]
_NAME_AHEAD = re.compile(
    f"{_JA_LETTERS}+(?:くん|ちゃん|さん|さま)|{_JA_LETTERS}*(?:先輩|先生|様|君)(?!{_JA_LETTERS})"
    "|[\u3041-\u3096]{2,4}(?:くん|ちゃん)"
)
"""A name an honorific marks, where one begins (結衣ちゃん, 山田先輩, さくらちゃん)."""


def _ends_a_name(text: str, end: int, adverb: bool) -> bool:
    """Whether the kana honorific that ends at ``end`` of ``text`` (folded) ends a name: no
    kana go on from it (ちゃんこ, くんせい, さんぽ, さまざま), a particle or an ending may
    (:data:`_AFTER_NAME`); and where the word before it may be an adverb's (``adverb``), its
    ちゃんと is the adverb (薬ちゃんと飲んでね, 宿題ちゃんとやった) unless a name follows
    (結衣ちゃんと蓮くん, ゆいちゃんとさくらちゃん)."""
    after = text[end : end + 1]
    if adverb and after == "と" and text.endswith("ちゃん", 0, end):
        return _NAME_AHEAD.match(text, end + 1) is not None
    return not (after and _HIRAGANA_LETTER.match(after) and after not in _AFTER_NAME)


def _kana_names(text: str) -> list[str]:
    """The names ``text`` (folded) writes in hiragana: two to four before くん or ちゃん
    (はるとくん, さくらちゃん), at the start of a sentence or after の, と or や that follow a
    word or another name (息子のはるとくん, はるとくんとさくらちゃん). Not a polite word or one
    for someone (おばあちゃん, あかちゃん), nor an adverb's ちゃんと (もっとちゃんと), nor
    where the kana go on (ちゃんこ: :func:`_ends_a_name`): a name and its end both written,
    not guessed."""
    names = []
    stop = 0
    for m in _CHILD_HONORIFIC.finditer(text):
        i = m.start()
        while i > stop and _HIRAGANA_LETTER.match(text[i - 1]):
            i -= 1
        stretch = text[i : m.start()]
        joined = i > 0 and (i == stop or _JA_WORD.match(text[i - 1]) is not None)
        stop = m.end()
        if joined:  # (after a word or a name: a particle joins them)
            if not stretch.startswith(tuple(_NAME_JOINS)):
                continue
            stretch = stretch[1:]
        if not _ends_a_name(text, m.end(), adverb=not joined):  # (もっとちゃんと: an adverb)
            continue
        if 2 <= len(stretch) <= 4 and stretch[0] not in _POLITE_PREFIX and _a_name(stretch):
            names.append(stretch)
    return names


def _japanese_content(
    ep: Episode, answer_words: Sequence[tuple[str, bool]], fresh: set[str]
) -> list[str]:
    """The names of ``ep`` a Japanese list answer (its ``answer_words``,
    :func:`_japanese_words`) carries, each beginning a word on both sides (田中 of 田中さん,
    not of 山田中学; a katakana word whole: not the ハル of ハルトくん; a hiragana name whole)
    and holding one of the ``fresh`` terms (what no other memory offered holds, uncommon
    in the file).

    A name is written so on either side (翔太くん; the partner's 「結衣ちゃん、おめでとう！」),
    and may be one kanji when both write it alone (蓮くん). A word no honorific marks (京都,
    ピアノ) is no name: it counts with the memory's other words (:func:`_own_content`)."""
    if not answer_words:
        return []
    mine = _distinct(_japanese_words(fold(ep.text)))
    by_start: dict[str, list[str]] = {}  # (a word is met by one it shares two letters with)
    for word in mine:
        by_start.setdefault(word[:2], []).append(word)
    names: dict[str, None] = {}
    for a, a_named in _distinct(answer_words).items():
        met = by_start.get(a[:2], []) if len(a) > 1 else [a] if a in mine else []
        for m in met:
            if not (a_named or mine[m]):
                continue
            n = 0
            while n < min(len(a), len(m)) and a[n] == m[n]:
                n += 1
            piece = a[:n]
            if _KATAKANA_LETTER.match(piece[-1]) and any(
                _KATAKANA_LETTER.match(w, n) for w in (a, m)
            ):
                continue  # (a katakana word goes on: ハル of ハルト and ハルカ)
            if (n < 2 or _HIRAGANA_LETTER.match(a)) and a != m:
                continue  # (one kanji, or a hiragana name, is written whole on both sides)
            grams = {piece} if n == 1 else {piece[i : i + 2] for i in range(n - 1)}
            if grams & fresh:
                names.setdefault(piece)
    return list(names)


def _distinct(words: Sequence[tuple[str, bool]]) -> dict[str, bool]:
    """Each of the Japanese ``words`` (:func:`_japanese_words`) once, in their order, named
    when it is named anywhere: a long paste that writes one name a thousand times is
    compared once."""
    out: dict[str, bool] = {}
    for word, named in words:
        out[word] = out.get(word, False) or named
    return out


_ENDINGS = ("s", "es", "ed", "ing")
"""The endings of an English word's inflections (peanut, peanuts; arrive, arrives,
arriving; parties, party: :func:`_stems`)."""
_TO_Y = ("ies", "ied", "ic")
"""The endings that stand for a "y" (parties: party; studied: study; allergic: allergy)."""
_NOT_Y = re.compile("[fs]ic$")
"""An "-ic" that is no "-y" word's (terrific is not terrify, specific not specify, classic
not classy)."""
_PLURAL = re.compile("[^aeiousy]s$")
"""A name's plain plural ("the Smiths"; not the end of Louis, Frances or Marcus)."""


def _stems(term: str, name: bool = False) -> set[str]:
    """What ``term``, an English word, shares with another form of it: itself, its letters
    before an inflection's ending (:data:`_ENDINGS`; five letters or more, with the "e" an
    "-ing" or "-ed" drops: "peanuts" and "peanut" hold "peanut", "arriving" and "arrive"
    "arrive", not the "hat" of "hated" and "hates"), and its "y" form (:data:`_TO_Y`:
    "allergic", "allergy"; not "terrific", :data:`_NOT_Y`). A ``name`` (written with a
    capital) has no other form than its plain plural: "Simone" is not "Simon", "Louise" not
    "Louis", "Frances" not "France". Nothing for another script's word or a number: they
    are matched as written."""
    if not (term.isascii() and term.isalpha()):
        return set()
    found = {term}
    if name:
        if _PLURAL.search(term) and len(term) > 5:
            found.add(term[:-1])
        return found
    for ending in _ENDINGS:
        if term.endswith(ending) and len(term) - len(ending) >= 5:
            found.add(term[: -len(ending)])
            if ending in ("ed", "ing"):  # (arriving, arrived: arrive)
                found.add(term[: -len(ending)] + "e")
    for ending in _TO_Y:
        if term.endswith(ending) and len(term) - len(ending) >= 4 and not _NOT_Y.search(term):
            found.add(term[: -len(ending)] + "y")
    return found


def _capitals(text: str) -> set[str]:
    """The terms of the English words ``text`` writes as names (:func:`_names`: "Simone" of
    "Say hi to Simone", not the "Terrific" that begins "Terrific!") and nowhere in lower
    case: matched in no other form than a plural (:func:`_stems`)."""
    lower = {
        t
        for m in _CAPITALISED.finditer(text)
        if m.group().isascii() and m.group()[0].islower()
        for t in query_terms(m.group())
    }
    return {t for t in _names(text) if t.isascii()} - lower


def _forms(terms: Iterable[str], names: set[str]) -> set[str]:
    """The forms of the English ``terms`` (:func:`_stems`), those of ``names`` as a name's."""
    return {stem for t in terms for stem in _stems(t, t in names)}


_KANJI_PAIR = re.compile("[\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]{2}")
"""Two kanji (結婚 of 結婚式): a word's start that a longer word of the same begins with."""


def _held(
    words: Sequence[frozenset[str]],
    starts: Mapping[frozenset[str], str],
    names: set[str],
    terms: set[str],
    said: str,
) -> set[frozenset[str]]:
    """The answer's ``words`` (:func:`_answer_words`, each begun by its bigram in
    ``starts``; ``names`` its words written with a capital) that a memory's ``terms``, of
    what the user ``said`` in it, hold: whole, or in another form when an English word
    (:func:`_stems`: the answer's "allergy" is held by "I'm allergic to peanuts"), or by
    the two kanji it begins with, as a shorter word is held by a longer one (結婚式 of
    来月結婚する, 東京都 of 東京, as 結婚 of 結婚式); one kanji when the memory writes it alone
    too (雨 of 雨で, not the 子 of お子さん in 息子)."""
    forms = _forms(terms, _capitals(said))
    mine = _answer_words([t for t in terms if not _HIRAGANA.search(t)], fold(said))
    alone = {next(iter(w)) for w in mine if len(w) == 1}
    held = set()
    for w in words:
        term = next(iter(w))
        if len(w) == 1 and CJK_CHARACTER.fullmatch(term):
            whole = term in alone
        else:
            whole = w <= terms or (
                len(w) == 1 and not _stems(term, term in names).isdisjoint(forms)
            )
        start = starts.get(w, "")
        if whole or (_KANJI_PAIR.fullmatch(start) is not None and start in terms):
            held.add(w)
    return held


def _said(ep: Episode) -> str:
    """What the user said in ``ep``: its user side, or its content (a note is the user's)."""
    return ep.user_text if ep.user_text is not None else ep.content or ""


def _own_content(
    ep: Episode,
    answer_terms: set[str],
    answer_names: set[str],
    fresh: set[str],
    told: set[str],
    answer: str,
    answer_words: Sequence[tuple[str, bool]],
) -> str:
    """Why ``ep`` is one of the memories a list answer draws on (its ``answer_terms``, and
    the ``answer_names`` it writes as names; the ``answer`` :func:`~memengine.text.fold`
    made, and its Japanese ``answer_words``, :func:`_japanese_words`): the answer carries
    the memory's own content, or "".

    ``fresh`` are the answer's uncommon terms that ``ep`` holds and no other memory offered
    with it does (what those share is the question's subject: the "gym" of every gym
    session). One of them is enough when ``ep`` or the answer writes it as a name, a title
    or a number (:func:`_names`, :func:`_titles`, :func:`_a_number`), on either side of
    the exchange (the partner's "I suggested 'Educated' by Tara Westover."); otherwise two
    words (:func:`_words`: 仕事 is one; hiragana pairs aside) from what the user said (a
    stock reply's words are the assistant's own, and a young file's common words are all
    uncommon). Japanese writes no capitals: a name is one an honorific marks (翔太くん,
    はるとくん: :func:`_japanese_content`), and a plain word (京都, 天気, ピアノ) is one of
    the two words, as "weather" or "piano" is."""
    if not fresh:
        return ""
    plain = {t for t in fresh if not _HIRAGANA.search(t)}
    pieces = [span for span, terms in _titles(ep.text) if terms <= answer_terms and terms & plain]
    named = _names(ep.text) | answer_names
    for term in sorted(plain):
        if (term in named or _a_number(term)) and not any(term in _norm(p) for p in pieces):
            pieces.append(term)
    ja_names = _japanese_content(ep, answer_words, fresh)
    pieces += [n for n in ja_names if not any(n in _norm(p) for p in pieces)]
    if pieces:
        shown = ", ".join(repr(p) for p in pieces[:3]) + (", …" if len(pieces) > 3 else "")
        return f"its own {shown} in the answer"
    mine = _words(plain & told, answer)
    if len(mine) >= 2:
        return f"{len(mine)} of its own words in the answer ({', '.join(mine[:3])})"
    return ""


def _words(terms: set[str], text: str) -> list[str]:
    """The distinct words ``terms`` (of :func:`~memengine.text.query_terms`) make in
    ``text`` (folded), each as one of its terms: a Latin term is a word; of a CJK run's, a
    single character is none (it is inside a bigram: 仕事 gives 仕, 事 and 仕事, one word)
    and bigrams written overlapping in ``text`` are one (東京駅 gives 東京 and 京駅)."""
    words = sorted(t for t in terms if not CJK_CHARACTER.search(t))
    grams = {t for t in terms if CJK_CHARACTER.search(t) and len(t) > 1}
    return words + sorted(group[0] for group in _gram_groups(grams, text))


def _gram_groups(grams: set[str], text: str) -> list[list[str]]:
    """The CJK bigrams ``grams`` grouped by the words they make in ``text`` (folded): those
    written overlapping are one word (東京駅: 東京 and 京駅), each group its bigrams in the
    order ``text`` first writes them. One pass over ``text``: a long paste of kanji costs
    its length, not its square."""
    parent = {g: g for g in grams}

    def root(gram: str) -> str:
        while parent[gram] != gram:
            parent[gram] = parent[parent[gram]]
            gram = parent[gram]
        return gram

    first: dict[str, int] = {}
    for i in range(len(text) - 1):
        here = text[i : i + 2]
        if here not in grams:
            continue
        first.setdefault(here, i)
        after = text[i + 1 : i + 3]
        if after in grams:
            parent[root(here)] = root(after)
    groups: dict[str, list[str]] = {}
    for gram in grams:
        groups.setdefault(root(gram), []).append(gram)
    return [sorted(g, key=lambda t: (first.get(t, len(text)), t)) for g in groups.values()]


def _answer_words(terms: Sequence[str], text: str) -> list[frozenset[str]]:
    """The words of an answer's ``terms`` (no hiragana pairs) as its ``text`` (folded)
    writes them, each as the terms that make it: a Latin term is a word, a CJK run's bigrams
    written overlapping are one (トヨタ: トヨ and ヨタ, not five terms with ト, ヨ and タ), and
    a character inside none of them is a word alone (the 働 of 働いてる)."""
    grams = {t for t in terms if CJK_CHARACTER.search(t) and len(t) > 1}
    inside = {ch for gram in grams for ch in gram}
    words = [
        frozenset({t})
        for t in terms
        if not CJK_CHARACTER.search(t) or (t not in grams and t not in inside)
    ]
    return words + [frozenset(group) for group in _gram_groups(grams, text)]


def _word_starts(terms: Sequence[str], text: str) -> dict[frozenset[str], str]:
    """The bigram that begins each word of bigrams ``terms`` make in ``text`` (folded), as
    :func:`_answer_words` groups them: 結婚 of 結婚式, トヨ of トヨタ."""
    grams = {t for t in terms if CJK_CHARACTER.search(t) and len(t) > 1}
    return {frozenset(group): group[0] for group in _gram_groups(grams, text)}


_MORE_DAYS = re.compile(
    r"\s*(?:,|、|，|&|\band\b|と|や)\s*(?:the\s+)?(\d{1,2})(?:st|nd|rd|th|日)?(?![\d/:]|\.\d)"
)
"""One more day of a list after a date ("Mar 3, 8 and 13", 「3月3日、9日」): the same month's."""
_DAY_RUN = re.compile(r"(?<![\d月/])\d{1,2}日(?:\s*[、,，とや]\s*\d{1,2}日)+(?![間前後目])")
"""A list of days of the month (「3日、9日、14日」) that no month is written before."""
_DAY = re.compile(r"(\d{1,2})日")


def named_days(answer: str, asked_at: datetime) -> set[date]:
    """The days ``answer`` names by their date, read at ``asked_at`` (in its zone): "Mar 3",
    3月3日, 2026-03-03 and the days of a list after one ("Mar 3, 8, 13 and Apr 5"), and a
    list of days of the month alone (「3日、9日、14日」: the latest of each, as
    "on the 15th" is read). A day told by a word ("today", "last Friday") names no memory's
    date: the answer's "Rest up today!" is not a use of today's memories."""
    norm = unicodedata.normalize("NFKC", answer).lower()
    days: set[date] = set()
    cursor = 0
    listed: list[tuple[int, int]] = []  # (a list after a date is of its month: not alone)
    for expr in find_time_expressions(answer, asked_at):
        first = in_zone(expr.start, asked_at.tzinfo).date()
        if not any(ch.isdigit() for ch in expr.surface) or expr.end - expr.start > _A_DAY:
            continue
        days.add(first)
        at = norm.find(expr.surface, cursor)
        if at < 0:
            continue
        cursor = at + len(expr.surface)
        start = cursor
        while (more := _MORE_DAYS.match(norm, cursor)) is not None:
            cursor = more.end()
            if 1 <= int(more.group(1)) <= calendar.monthrange(first.year, first.month)[1]:
                days.add(first.replace(day=int(more.group(1))))
        listed.append((start, cursor))
    today = in_zone(asked_at, asked_at.tzinfo).date()
    for run in _DAY_RUN.finditer(norm):
        if any(a <= run.start() < b for a, b in listed):
            continue
        for item in _DAY.finditer(run.group()):
            n = int(item.group(1))
            year, month = (today.year, today.month)
            if n > today.day:
                year, month = (year - 1, 12) if month == 1 else (year, month - 1)
            if 1 <= n <= calendar.monthrange(year, month)[1]:
                days.add(date(year, month, n))
    return days


_A_DAY = timedelta(hours=25)
"""The longest window read as one day (one of 25 hours, when a clock is set back)."""


def _found_by(methods: Sequence[str]) -> str:
    """How a feedback looked for used memories, for a message that says it found none."""
    named = "explicit" in methods
    judged = "llm" in methods or "match" in methods
    if named and judged:
        return "none was named, and none was found in the answer"
    return "none was found in the answer" if judged else "none was named"


def _no_learning(turn_id: int, why: str, *, nameable: bool = True) -> InvalidInput:
    """The refusal of a learning a turn has no used memory to keep with (``why``; not
    ``nameable``: the turn returned none to name)."""
    advice = (
        "name them (used=[…], --used ID), or give the feedback without the learning"
        if nameable
        else "give the feedback without the learning"
    )
    return InvalidInput(
        f"a learning is kept with the memories a turn used, and turn {turn_id} used none "
        f"({why}): {advice}"
    )


_NUMBER_TAG = re.compile(r"\[(\s*\d+\s*)\]")


def _one_line(text: str) -> str:
    """``text`` for the judge's prompt: on one line, and a ``[2]`` in it (in any width)
    written ``(2)``, so that neither the answer nor a memory can pose as a numbered
    memory or start a list of its own."""
    return _NUMBER_TAG.sub(r"(\1)", prompt_line(text))


def _numeral(text: str) -> bool:
    """Whether an LLM's string reads as a memory's number: digits, no more than 18 of them
    (Python refuses to read an integer of more than 4,300)."""
    digits = text.strip()
    return digits.isdecimal() and len(digits) <= 18


def llm_used(
    client: Any,
    *,
    model: str,
    answer: str,
    episodes: Sequence[Episode],
    deadline_s: float,
    max_tokens: int = 200,
) -> tuple[dict[int, str], list[int]]:
    """Ask the LLM (a :class:`~memengine.llm.client.ChatClient`) which numbered memories it
    used: the used episodes' reasons by id, and the numbers it named that were not shown."""
    from ..errors import LLMResponseError

    lines = []
    for n, ep in enumerate(episodes, start=1):
        lines.append(f"[{n}] {_one_line(ep.text)[:_LLM_CHARS]}")
    said = _one_line(answer[: _ANSWER_CHARS * 2])[:_ANSWER_CHARS]
    user = "Answer:\n" + said + "\n\nMemories:\n" + "\n".join(lines)
    reply = client.complete_json(
        model=model,
        system=LLM_SYSTEM,
        user=user,
        schema=LLM_SCHEMA,
        max_tokens=max_tokens,
        deadline_s=deadline_s,
        schema_name="used_memories",
    )
    numbers = reply.data.get("used")
    if isinstance(numbers, list):  # "2" as the prompt's [2] is read: a number (not 5,000 nines)
        numbers = [int(n) if isinstance(n, str) and _numeral(n) else n for n in numbers]
    if not isinstance(numbers, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) for n in numbers
    ):
        what = (
            "without 'used'"
            if "used" not in reply.data
            else "whose 'used' is a list of other things"
            if isinstance(numbers, list)
            else f"whose 'used' is a {type(numbers).__name__}"
        )
        raise LLMResponseError(  # (its shape, not its text: a server may echo the key)
            f"expected {{'used': [numbers]}}, got an object of {counted(len(reply.data), 'key')} "
            f"{what}"
        )
    shown = range(1, len(episodes) + 1)
    used = {episodes[n - 1].id: "the LLM judged it used" for n in numbers if n in shown}
    return used, sorted({n for n in numbers if n not in shown})


def give_feedback(
    store: Store,
    embedder: Embedder,
    cfg: LifecycleConfig,
    turn_id: int,
    *,
    now: datetime,
    used: Sequence[int] | None = None,
    answer: str | None = None,
    helpful: bool = False,
    task_success: bool | None = None,
    prevented_error: bool = False,
    perspective: str | None = None,
    learning: str | None = None,
    client: Any = None,
    model: str = "",
    agent: str | None = None,
    judge_falls_back: bool = True,
    unjudged: str = "",
    zone: tzinfo | None = None,
) -> FeedbackResult:
    """Record which memories of ``turn_id`` were used and reinforce them (one transaction).

    ``client`` (a ChatClient) makes the answer be judged by the LLM; without
    it the answer is matched, as it is when the LLM fails, unless not
    ``judge_falls_back``: the :class:`.LLMError` is then raised and nothing
    recorded. ``unjudged`` says why a configured LLM could not be asked (its note goes
    to ``degraded``). Explicit ``used`` ids and those found in the
    answer are combined. ``zone`` is the time zone the memory dates its packs in (its
    ``time_zone``; None: the turn's own offset): the days an answer names are read there,
    so a change of summer time moves none. ``agent`` (when given) must be the turn's. A
    used memory that a sleep archived after the turn becomes active again, as deep recall
    makes it.
    """
    with store.connections.read() as cur:
        turn = store_lc.get_turn(cur, turn_id)
        agent_row = store_lc.get_agent(cur, turn.agent) if turn else None
    if turn is None or (agent is not None and turn.agent != agent):
        owner = "" if agent is None else f" of agent {agent!r}"
        raise NotFound(f"no turn with id {turn_id}{owner}")
    if turn.used is not None:
        raise FeedbackExists(f"turn {turn_id} already has feedback (a turn is reinforced once)")
    persp = perspective or turn.perspective
    declared = agent_row.perspectives if agent_row else ()
    if persp is not None and (spelled := spelled_as_declared(persp, declared)) is not None:
        persp = spelled
    elif persp is not None:
        raise InvalidInput(
            f"agent {turn.agent!r} has no perspective {persp!r} (declared: {list(declared)}); "
            f"add it with: memengine agent create {shell_word(turn.agent)} --perspective "
            f"{shell_word(persp)}"
        )
    if learning and persp is None:
        raise InvalidInput("a learning is kept per perspective: give the task's perspective")
    candidate_ids = [i for i, _ in turn.candidates]
    if learning and learning.strip():  # what can be refused before an LLM is asked
        if not candidate_ids:
            raise _no_learning(turn_id, "it returned none", nameable=False)
        if not used and not (answer and answer.strip()):
            raise _no_learning(turn_id, "none was named")
    reasons: dict[int, str] = {}
    methods: list[str] = []
    degraded: list[str] = []
    if used is not None:
        stray = sorted(set(used) - set(candidate_ids))
        if stray:
            named = ", ".join(map(str, stray[:10])) + (", …" if len(stray) > 10 else "")
            raise InvalidInput(
                f"turn {turn_id} did not return {len(stray):,} of the memories given ([{named}])"
            )
        reasons.update({i: "given explicitly" for i in used})
        methods.append("explicit")
    if answer is not None and answer.strip() and candidate_ids:
        found = store.get(candidate_ids)  # (an id of the turn's that now holds another
        # agent's episode is not this turn's memory: that agent's words are not judged)
        # (and only those offered to the reply: one it was not shown cannot be in its answer,
        # and a stock reply, "I see!", is like the stored exchanges that hold it)
        shown = [i for i in candidate_ids if turn.offered is None or i in turn.offered]
        episodes = [found[i] for i in shown if i in found and found[i].agent == turn.agent]
        missing = [i for i in shown if i not in found]
        if missing:  # (deleted or pruned since the turn: the answer cannot be matched to them)
            named = ", ".join(map(str, missing[:10])) + (", …" if len(missing) > 10 else "")
            what = "memory [{}] was" if len(missing) == 1 else "memories [{}] were"
            degraded.append(
                f"{what.format(named)} deleted after the turn; the answer was judged without "
                f"{'it' if len(missing) == 1 else 'them'}"
            )
        judged: dict[int, str] | None = None
        if client is None and unjudged and episodes:  # an LLM configured, not reachable
            degraded.append(f"LLM judge failed, matched instead: {unjudged}")
        if client is not None and episodes:  # (none left of the turn's: nothing to ask)
            try:
                judged, unshown = llm_used(
                    client,
                    model=model,
                    answer=answer,
                    episodes=episodes,
                    deadline_s=cfg.feedback_deadline_s,
                )
                methods.append("llm")
                if unshown:  # an invented memory is not a used one; say that it was named
                    named = ", ".join(map(str, unshown[:10])) + (", …" if len(unshown) > 10 else "")
                    degraded.append(
                        f"the LLM judge named memories it was not shown ([{named}]; it was "
                        f"shown {'[1]' if len(episodes) == 1 else f'[1]–[{len(episodes)}]'}); "
                        "ignored"
                    )
            except LLMError as exc:
                if not judge_falls_back:  # the LLM was asked for: the turn waits for it
                    raise
                why = " ".join(str(exc).split())
                why = why if len(why) <= 300 else why[:299] + "…"
                degraded.append(f"LLM judge failed, matched instead: {why}")
        if judged is None:
            try:
                vector = embedder.embed([answer[:2000]])[0]
            except EmbeddingError as exc:  # tags and key terms still match
                degraded.append(f"answer similarity not read, the embedder failed: {exc}")
                sims: dict[int, float] = {}
            else:
                sims = store.similarities(vector, [e.id for e in episodes])  # checks the embedder
            terms = query_terms(answer)
            rows, counts = store.document_counts(terms)
            asked_at = in_zone(turn.created_at, zone)  # (the turn keeps an offset, not a zone)
            judged = match_answer(
                answer, episodes, sims, cfg, uncommon(terms, rows, counts), asked_at
            )
            methods.append("match")
        for i, why in judged.items():
            reasons.setdefault(i, why)
    impact = impact_of(
        cfg, helpful=helpful, task_success=task_success, prevented_error=prevented_error
    )
    outcome = None if task_success is None else ("success" if task_success else "failure")
    used_ids = sorted(reasons)
    method = "+".join(methods) or "none"
    with store.connections.write() as cur:
        again = store_lc.get_turn(cur, turn_id)
        if again is None:  # forgotten with its agent (or trimmed) while this was judged
            raise NotFound(f"no turn with id {turn_id}: it was deleted while its feedback ran")
        if again.used is not None:
            raise FeedbackExists(f"turn {turn_id} already has feedback (a turn is reinforced once)")
        gone = sorted(set(used_ids) - existing_ids(cur, used_ids, turn.agent))
        if gone:  # deleted since the turn: nothing left to reinforce
            degraded.append(f"memories {gone} were deleted after the turn; not reinforced")
            used_ids = [i for i in used_ids if i not in gone]
            reasons = {i: why for i, why in reasons.items() if i not in gone}
        if learning and learning.strip() and not used_ids:  # (raised here: nothing is written)
            why = _found_by(methods)
            if not used and turn.offered is not None and not turn.offered:
                why = "it offered the reply no memory to judge the answer against"
            raise _no_learning(turn_id, "those it used were deleted since" if gone else why)
        if used_ids:
            recalled = store_lc.recall_archived(
                cur, used_ids, strength=cfg.recall_strength, level_drop=cfg.recall_level_drop
            )
            for i in recalled:  # archived (by a sleep after the turn): it was used, so it is back
                reasons[i] += "; it was archived: active again"
            store_lc.reinforce(
                cur,
                used_ids,
                now=now,
                strength_gain=cfg.use_strength_gain + impact * cfg.impact_factor,
                impact=impact,
            )
            if persp is not None:
                store_lc.reinforce_perspective(
                    cur, used_ids, persp, cfg.perspective_strength_gain, learning
                )
        store_lc.close_turn(  # (a memory used but deleted since stays used in the record:
            # the scorer learns from the turn's candidates as they were, and it was used)
            cur,
            turn_id,
            used=sorted([*used_ids, *gone]),
            outcome=outcome,
            impact=impact,
            method=method,
            now=now,
        )
    return FeedbackResult(
        turn_id=turn_id,
        agent=turn.agent,
        used=tuple(used_ids),
        method=method,
        reasons=reasons,
        impact=impact,
        outcome=outcome,
        perspective=persp,
        degraded=tuple(degraded),
    )
