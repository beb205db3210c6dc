"""The MemoryPack: the ``[EPISODE_EVIDENCE]`` prompt section built from a retrieval.

Format, one block per episode, best first, in the conversation's language, under a line
that says what day it is (the retrieval's ``now``) and that a block's date is when it was
said (where the budget left once the memories are chosen holds it)::

    [EPISODE_EVIDENCE]
    (today: 2026-03-10 (Tue); dates are when it was said)
    ## 2026-03-04 (Wed) — New project "Mimosa" starts
    User: … I started a new project today…
    Partner: Congratulations! …
    → why: shares "mimosa", "project"; high relevance

A heading names its topic (its tags, else its first sentence) only when the first line
quoted does not begin with it. Japanese conversations get ``User:``/``Partner:`` lines
too, with a ``→ 関連:`` line. The pack fits a token budget (an offline estimate that
counts each code point past ASCII as a token, a CJK character, an emoji's joiner, and four
Latin characters as one: :func:`.text.estimate_tokens`);
episodes that do not fit are dropped, long utterances are trimmed to the
sentences that share words with the query, around the one that shares the most
(``quote_key_parts``; then the sentence right after that one, where the budget left once
the memories packed are chosen holds it), to their first sentence (``summarize``), or kept whole up
to four times the length of the others (``full``); a trimmed quote keeps too the first later
sentence (within :data:`.quote_changes.TURN_REACH` characters) that says what it quotes
changed or ended ("That all changed after my surgery", 状況が変わっちゃって; not one about
another person or matter, "My sister quit her job, by the way", そういえば妹が…辞めた:
:mod:`.quote_changes`), where it fits whole, before any other (alone, the quote would tell
the old fact as the fact); a quote marks what it leaves
out with "…", and shows a memory's line breaks as " / " (a side is one line of the pack),
whatever its length; a line break counts as the one character it is in the memory for the
length a quote may reach, so what fitted as a run of spaces still fits (the token budget
counts the text as shown). Control characters and the marks that reorder text on screen are
left out of what a memory says; a quoted line that begins as the pack's own lines do
("Partner: ", "## ", "[PRINCIPLES]"; "Partner:" alone on its line, "**Partner:**", "> User: ")
has its label in ‹ › ("‹Partner›: "), and a chat template's token is written with ‹ › for
its brackets, once ("‹|im_start|›", "‹INST›": :func:`.text.untemplated`): what is quoted is
stored text, and untrusted. The marks are not counted in the characters a quote may reach
(the token budget counts them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence, Set
from datetime import datetime, tzinfo
from typing import Literal

from .clock import in_zone
from .models import Episode, EpisodeKind, Pack, Retrieval, Retrieved
from .quote_changes import turn_after
from .retrieve.answer_type import AnswerType, asked_types, carries_any
from .retrieve.change_words import CHANGE
from .text import (
    asked_with,
    cut_at,
    estimate_tokens,
    fold,
    query_terms,
    readable,
    reason_line,
    shared_phrases,
    thousands,
    untemplated,
)
from .values import closed_values

__all__ = ["build_pack", "render_episode"]

Strategy = Literal["quote_key_parts", "summarize", "full"]

_WEEKDAYS = {
    "ja": "月火水木金土日",
    "en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
}
_ABBREVIATIONS = ("Mt", "Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Prof", "vs", "e.g", "i.e")
_CLOSING = "」』）】〕〉》”’"
_SENTENCE = re.compile(
    r"(?<=[。！？])(?![。！？!?])\s*"
    + rf"|(?<=[!?])(?![。！？!?])(?:\s+|(?=[^\x00-\x7f{_CLOSING}]))|(?<=\.)"
    + "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS)
    + r"(?<!\b[A-Z]\.)\s+"
)
"""Where a sentence ends: after 。！？ (Japanese writes no space after them); after an
ASCII "!" or "?" only before white space or a character past ASCII (本当!すごい), and after
"." only before white space, so a URL's "api?orgId=1" and code's "!=" stay whole; not
after "Mt.", "Dr.", "e.g." nor an initial ("J. K.")."""
_LINE_BREAK = " / "
"""How a quote shows a line break of a memory (a pack's side is one line): "Ports: / - api:
8443 / - web: 443", whatever the memory's length."""
_BREAK = "\x1f"
"""A line break of a memory as a quote is measured: one character, as the space it was
before it was shown as :data:`_LINE_BREAK` (a 33-item shopping list of 189 characters is
quoted whole in 240; the token budget counts it as shown); a control character, so
no memory holds one (:func:`.text.readable`), shown as " / " by :func:`_shown`."""
_CAPITAL = r"(?![a-zß-öø-ÿ])[^\W\d_]"
"""A letter that may start a name: a capital or a letter of a script without case (ケ, 田);
not a lower-case Latin one."""
_NAME = rf"{_CAPITAL}[^\s:：/()（）]{{0,29}}(?: {_CAPITAL}[^\s:：/()（）]{{0,29}}){{0,2}}"
"""A speaker's name as a pasted chat writes it: one to three words, each from a capital
or a letter without case ("Ken", "Partner", "Message", ユーザー, 田中, "Mary Ann"; not the
"reason is simple" of wrapped prose's "The / reason is simple: taxes went up")."""
_OWN = "|".join(["User", "Partner", *(k.value.capitalize() for k in EpisodeKind)])
"""The speakers' labels the pack writes ("User", "Partner", "Message", "Note"…)."""
_AS = rf"(?: ?[(（][^()（）:：{_BREAK}]{{1,40}}[)）])?(?:\*\*|__)?"
_LABELLED = (
    rf"(?:> ?)*(?:\*\*|__)?(?:(?:{_NAME}|(?i:{_OWN})){_AS}(?=:(?:\*\*|__)? |：)"
    rf"|(?i:{_OWN}){_AS}(?=:(?:\*\*|__)?(?:{_BREAK}|$)))"
)
"""A speaker's label as a pasted chat starts a line with it: a name (:data:`_NAME`) or one
the pack writes, in any case ("Ken: ", "Message (Ken): ", ケン：, 田中：, "user: "; not
"this: we should move" of wrapped prose), in bold ("**Partner:**"), after a quote's ">"
("> User: "), or one the pack writes alone on its line or at the text's end ("Partner:"
above "I promise…", a pasted "…and / Partner:"; not a list's heading, "Shopping list:"
above "milk")."""
_POSED = re.compile(
    rf"(^|{_BREAK})(… )?(#+(?= )|\[[A-Z][A-Z_]{{2,}}\]|{_LABELLED}"
    rf"|→ ?(?:{_LABELLED}|[^\W\d_][^\s:：/()（）]{{0,29}}(?: [^\W\d_][^\s:：/()（）]{{0,29}}){{0,2}}"
    rf"(?=: |：)))"
)
"""A line of a quote that begins as the pack's own lines do: a speaker's label
(:data:`_LABELLED`), a heading ("## "), a section ("[PRINCIPLES]"), a reason in any case
("→ why: ", "→ 関連: ");
not a time ("19:30"), a URL ("https://…") nor a bullet ("- api: 8443")."""
_SPOKEN = re.compile(_LABELLED)
_HEADER = "[EPISODE_EVIDENCE]"
_HIRAGANA = re.compile(r"^[\u3040-\u309f]+$")
_PRINCIPLES = {"ja": "[PRINCIPLES]", "en": "[PRINCIPLES]"}


def _date_line(ep: Episode, lang: str, zone: tzinfo | None = None) -> str:
    return _day(in_zone(ep.occurred_at, zone), lang)


def _day(d: datetime, lang: str) -> str:
    """A day as the pack writes it: "2026-06-10 (Wed)", 「2026-06-10 (水)」."""
    return f"{d.date().isoformat()} ({_WEEKDAYS[lang][d.weekday()]})"


def _frame(now: datetime | None, lang: str) -> str:
    """The line under the evidence's header that says what day it is (the retrieval's
    ``now``, in its zone) and what a block's date is: when it was said ("" without a
    ``now``)."""
    if now is None:
        return ""
    if lang == "ja":
        return f"（今日: {_day(now, lang)}・日付は話した日）"
    return f"(today: {_day(now, lang)}; dates are when it was said)"


def _topic(ep: Episode, limit: int = 40) -> str:
    """An episode's heading: its first tags, else its first sentence, on one line and cut
    to about ``limit`` characters (a tag's line break would start a section of its own)."""
    return _tagged(ep, limit) or _first_sentence(ep, limit)


def _tagged(ep: Episode, limit: int = 40) -> str:
    """An episode's first tags as its heading names them ("" without one)."""
    if ep.tags:
        tags = [" ".join(readable(t).split()) for t in ep.tags if t.strip().lower() != "principle"]
        joined = ", ".join(t for t in tags[:3] if t)
        if joined:
            return joined if len(joined) <= limit else joined[: cut_at(joined, limit - 1)] + "…"
    return ""


def _first_sentence(ep: Episode, limit: int = 40) -> str:
    """An episode's first sentence (of its first side that says something), cut to about
    ``limit`` characters."""
    sides = (readable(t).strip() for t in (ep.user_text, ep.content, ep.reply_text) if t)
    first = next((t for t in sides if t), "").splitlines()  # (a side of controls alone: none)
    line = first[0] if first else ""
    sentence = _SENTENCE.split(line)[0] if line else ""
    return sentence if len(sentence) <= limit else sentence[: cut_at(sentence, limit - 1)] + "…"


_MONTHS = (
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
).split()
_DAYS = (
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mon Tue Wed Thu Fri Sat Sun".split()
)
_MONTH = "|".join([*_MONTHS, *(m.upper() for m in _MONTHS)])  # (not "may": the verb)
_WEEKDAY = "|".join([*_DAYS, *(d.upper() for d in _DAYS)])
_MONTH_DAY = (
    rf"(?:(?:{_WEEKDAY}),? )?(?:{_MONTH})\.? \d{{1,2}}(?:st|nd|rd|th)?"  # Monday, March 5th
)
_DATED = (
    _MONTH_DAY
    + r"(?:,? \d{4})?"  # , 2026
    + r"(?:,? (?:at )?\d{1,2}:\d{2}(?: ?[AaPp]\.?[Mm]\.?)?)?"  # , 10:32 AM
    + rf"(?:,? \(?(?:{_WEEKDAY})\.?\)?)?"  # (Thu)
)
_ITEM = re.compile(
    r"\s*(?:[-*•・‣▪>]|\d+[.)]\s|\(?\d+\)|\d{1,4}[-/:.]\d"
    + rf"|{_DATED}\s*(?::|\s[-–—])|{_MONTH_DAY} \((?:{_WEEKDAY})\.?\))"
)
"""The start of a list item or of a log line (a bullet, a number, a date or a time; a
month's name, capitalised or in capitals, and a day, with a year, a time or a weekday,
before a colon or a spaced dash: "March 5:", "MAR 5 -", "Monday, March 5:", "Mar 5, 2026
10:32 AM - Ken:"; or a day with its weekday in brackets, "Mar 9 (Thu)"; not "may 2", nor
a wrapped sentence's "November 6." or "May 3, which was…", nor "May 3-5")."""


_WRAPPED = re.compile(r"[A-Za-z0-9,;'\"()–-]$")
"""The end of a line of Latin prose wrapped at a width (the sentence goes on below)."""


WRAP_WIDTH = 40
"""The shortest line taken as prose wrapped at a width (a shorter one is a list's item)."""


def _pieces(text: str) -> list[str]:
    """``text`` in lines that stand alone. A line break ends a piece, except inside Latin
    prose wrapped at a width: a long line that ends mid-sentence, followed by one that
    goes on in Latin letters and is not a list item, a log line (a bullet, a number, a
    date) nor a pasted chat's line ("Partner: I promise…", :data:`_LABELLED`)."""
    pieces: list[str] = []
    above = ""
    for line in (raw.strip() for raw in text.splitlines()):
        wrapped = (
            len(above) >= WRAP_WIDTH
            and _WRAPPED.search(above)
            and line[:1].isascii()
            and line[:1].isalpha()
            and not _ITEM.match(line)
            and not _SPOKEN.match(line + _BREAK)  # (as a line of its own)
        )
        if wrapped:
            pieces[-1] = f"{pieces[-1]} {line}"
        else:
            pieces.append(line)
        above = line
    return pieces


def _fold(text: str) -> str:
    """``text`` as the full-text search compares it, and so the query's terms
    (:func:`.text.fold`): NFKC (ｺﾝﾋﾞﾆ is コンビニ), lower case, café as cafe, O’Brien as
    o'brien, 葛󠄀飾 as 葛飾."""
    return fold(text)


def _place(text: str, folded_at: int) -> int:
    """The place in ``text`` of the character at ``folded_at`` in its :func:`_fold` (NFKC
    may change lengths, ﾋﾞ is ビ, and a variation selector is dropped): the first prefix
    whose fold reaches past it."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi) // 2
        if len(_fold(text[: mid + 1])) > folded_at:
            hi = mid
        else:
            lo = mid + 1
    return lo


_KANJI = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_LATIN_TERM = re.compile(r"^[0-9a-z'\u00c0-\u024f]+$")
_LATIN = r"0-9a-z\u00c0-\u024f"
"""The letters of a Latin word's edge (not ``\\w``, which holds kana and kanji too: the
iPhone of 新しいiPhoneを and the 14 of 3月14日 are words)."""


@functools.lru_cache(maxsize=8)
def _patterns(terms: tuple[str, ...]) -> list[tuple[re.Pattern[str], int]]:
    """The query's terms (folded as the text, :func:`_fold`) as patterns over folded text,
    each with its weight (its length):
    a Latin word as a word (one of 3 letters or fewer whole or with a plural's s/es, "go"
    is not in "good" or "ago", "tax" is in "taxes"; a longer one at a word's start,
    "dentist" is in "dentists"; a number of four digits or more with or without its
    thousands separators, 41500 in "41,500"); a CJK term of two
    characters or more anywhere; a single kanji anywhere; a single kana (ー, ト) not at all,
    as it is in nearly every sentence. Compiled once for a pack's blocks (cached by the
    terms: a message of a thousand distinct kanji compiled its patterns per block)."""
    out: list[tuple[re.Pattern[str], int]] = []
    for t in dict.fromkeys(fold(term) for term in terms):
        if t.isascii() and t.isdigit() and len(t) >= 4:
            spaced = "[, ]?".join(thousands(t))
            out.append((re.compile(rf"(?<![{_LATIN}]){spaced}(?![{_LATIN}])"), len(t)))
        elif _LATIN_TERM.match(t):
            tail = rf"(?:e?s)?(?![{_LATIN}])" if len(t) <= 3 else ""
            out.append((re.compile(rf"(?<![{_LATIN}])" + re.escape(t) + tail), len(t)))
        elif len(t) >= 2 or _KANJI.match(t):
            out.append((re.compile(re.escape(t)), len(t)))
    return out


def forget_texts() -> None:
    """Drop the query patterns cached for packs (they hold a user's words: a forgotten
    agent's must not stay in the process), and ``re``'s own cache of them."""
    _patterns.cache_clear()
    re.purge()


def _weight(sentence: str, patterns: Sequence[tuple[re.Pattern[str], int]]) -> int:
    """How much of the query ``sentence`` holds: the weights of the patterns it matches."""
    folded = _fold(sentence)
    return sum(w for p, w in patterns if p.search(folded))


def _heaviest_at(sentence: str, patterns: Sequence[tuple[re.Pattern[str], int]]) -> int:
    """Where in ``sentence`` the heaviest pattern it matches first matches (a long sentence,
    casual Japanese without 。, has its answer where the query's longest word is)."""
    folded = _fold(sentence)
    hits = [(w, m.start()) for p, w in patterns if (m := p.search(folded)) is not None]
    heaviest = max(w for w, _ in hits)
    return _place(sentence, min(at for w, at in hits if w == heaviest))


def _heaviest_span(
    sentence: str, patterns: Sequence[tuple[re.Pattern[str], int]]
) -> tuple[int, int]:
    """Where in ``sentence`` the heaviest pattern it matches first matches, as its start
    (:func:`_heaviest_at`) and its end: "laptop repair" of "My laptop repair: …"."""
    start = _heaviest_at(sentence, patterns)
    folded = _fold(sentence)
    begun = len(_fold(sentence[:start]))
    ends = [m.end() for p, w in patterns if (m := p.match(folded, begun)) is not None]
    return start, (_place(sentence, max(ends) - 1) + 1 if ends else start + 1)


def _around(text: str, focus: int, max_chars: int, lead: int | None = None) -> str:
    """At most ``max_chars`` of ``text``, the part :func:`_window` chooses, with a "…" where
    it is cut."""
    start, end = _window(text, focus, max_chars, lead)
    piece = text[start:end]
    if end < len(text):
        piece = _cut_end(piece)
    return piece if start == 0 else "…" + piece


def _window(text: str, focus: int, max_chars: int, lead: int | None = None) -> tuple[int, int]:
    """Where an excerpt of at most ``max_chars`` of ``text`` (its "…" counted) starts and
    ends: from a little before ``focus`` (the sentence that matters; a long message's answer
    can lie far from its start), ``lead`` characters or a quarter of ``max_chars``; from the
    start when it is 0. Neither end cuts a Latin word or a number (:func:`_edge`): the
    start moves on (never past ``focus``) to a word's start where a space is near, else past
    a near 、 or to a near word's start in Japanese (:func:`_from`), "…家賃は128,000円に", not
    "…8,000円に"; the end stops before a word or a number that would not fit whole, "they
    quoted…", not "they quoted $1,9…" (:func:`_to`)."""
    if len(text) <= max_chars:
        return 0, len(text)
    start = 0
    if focus > 0:
        start = max(0, focus - (max_chars // 4 if lead is None else lead))
        start = min(start, len(text) - (max_chars - 2))  # a full excerpt to the end
        after_space = start == 0 or _SPACE.match(text, start - 1)
        space = None if after_space else _SPACE.search(text, start, focus)
        start = space.end() if space else start  # (from a word's start, where one is near)
        if not after_space and space is None:
            start = _from(text, start, focus)
        if text.startswith("… ", start):  # (not the separator of two sentences: "……")
            start += 2
        start = cut_at(text, start)  # (no excerpt starts inside an emoji or a flag)
    return start, _to(text, cut_at(text, start + max_chars - (1 if start == 0 else 2)), start)


_KINDS = {
    AnswerType.quantity: ("amount",),
    AnswerType.time: ("time", "date", "day", "weekday", "month"),
}
"""The kinds of :func:`.values.closed_values` that answer each kind of question: an amount
with its currency or unit for "How much…?"; a clock time, a date, a day, a weekday or a
month for "When…?"."""
_READ = 16
"""How far either side of a number :func:`_figures` reads for its lead word and its unit
("the 6th of September", "120,000 yen")."""


def _figures(
    sentence: str, asked: frozenset[AnswerType], within: tuple[int, int] | None = None
) -> list[tuple[int, int]]:
    """Where ``sentence`` holds a number written in figures (:data:`_NUMBER`) that states a
    value of an ``asked`` kind (:func:`.values.closed_values`, the reader the answer judge
    shares), whole with the words it is read with: "$1,950" and "120,000 yen" for a
    quantity, "June 12", "6月12日" and "at 3" for a time; not a phone number, a room's, an
    age, "5th Avenue" nor a year ("555-0199", "room 12", "I'm 35": nothing tells what they
    count). Numbers in words ("ninety percent", "next Monday") are not among them: prose
    says "one of", "a couple", "half the time". With ``within``, only the numbers that
    begin inside that span (what one quote can reach: a 50 KB paste of figures is not read
    whole). What a number takes part in is read from the nearest span around it that holds a
    value with it, so a value said twice ("$450, yes $450") is a figure both times."""
    kinds = {k for a in asked for k in _KINDS.get(a, ())}

    def values(lo: int, hi: int) -> set[tuple[str, str]]:
        """The values of the asked kinds ``sentence[lo:hi]`` states."""
        return {v for v in closed_values(sentence[lo:hi]) if v[0].split()[0] in kinds}

    found: list[tuple[int, int]] = []
    first, last = within if within is not None else (0, len(sentence))
    for m in _EDGED.finditer(sentence, first):
        s, e = m.span()
        if s > last:
            break
        if e - s > _LONGEST or not _FIGURE.fullmatch(m.group()):
            continue
        lo, hi = max(0, s - _READ), min(len(sentence), e + _READ)
        own: set[tuple[str, str]] = set()  # (what the number takes part in)
        for a, b in ((max(lo, s - k), min(hi, e + k)) for k in range(0, _READ + 1, 4)):
            own = values(a, b) - values(a, s) - values(e, b)  # (the nearest that holds it)
            if own:
                break
        if not own:
            continue
        end = next(b for b in range(e, hi + 1) if own <= values(lo, b))
        start = next(a for a in range(s, lo - 1, -1) if own <= values(a, end))
        if (start, end) not in found:
            found.append((start, end))
    return found


def _whole_word(
    text: str,
    span: tuple[int, int],
    patterns: Sequence[tuple[re.Pattern[str], int]],
    limit: int,
) -> tuple[int, int]:
    """``span`` of ``text`` (a match of the query's word) grown to the word it lies in, and
    on over the query's words that follow it after a space or a hyphen, to at most
    ``limit`` characters (what one quote can show: "laptop repair " 3,500 times is not
    read on to its end): "dentists" for the "dentist" matched, "laptop repairs" for
    "laptop"; in Japanese a run of one script, 歯医者 for 歯医 (kanji, or katakana; not
    hiragana, which runs on through particles and verbs)."""
    s, e = span
    kind = _script(text[s : s + 1])
    while kind and s > 0 and _script(text[s - 1]) == kind:
        s -= 1
    folded = _fold(text)
    read, at = 0, 0  # (the fold of text[:read] is folded[:at], folded once, piece by piece)
    while True:
        kind = _script(text[e - 1 : e])
        while kind and e < len(text) and e - s < limit and _script(text[e]) == kind:
            e += 1
        if text[e : e + 1] not in (" ", "-") or e - s >= limit:
            return s, e
        read, at = e + 1, at + len(_fold(text[read : e + 1]))
        if not any(p.match(folded, at) for p, _ in patterns):
            return s, e
        e += 2


def _script(char: str) -> str | None:
    """The script of ``char`` a word is written in: "latin" (a letter or a digit), "kanji",
    "katakana" (ー too); None for any other."""
    if _LATIN_CHAR.match(char):
        return "latin"
    if _KANJI.match(char):
        return "kanji"
    if "\u30a0" <= char <= "\u30ff" or "\uff66" <= char <= "\uff9f":
        return "katakana"
    return None


_LATIN_CHAR = re.compile(r"[0-9A-Za-z\u00c0-\u024f]")


def _toward(
    word: tuple[int, int],
    figures: Sequence[tuple[int, int]],
    shown: tuple[int, int],
    max_chars: int,
) -> tuple[int, int, int, int] | None:
    """Where a quote that would show ``shown`` of its text starts instead, as the focus and
    the lead :func:`_window` takes, to show the figure (``figures``, the asked kind's) nearest
    the query's ``word`` (whole: :func:`_whole_word`) whole and the word with it, and the
    span both take, which the quote must show: "…laptop repair: … they quoted $1,950…"
    for "How much is my laptop repair?", not "…the warranty desk they quoted…". None when
    ``shown`` holds one of them whole already, or none is near enough to show with the word
    in ``max_chars`` (a number far from it, in a long casual Japanese message of many
    matters, is as often another matter's; the quote stays where the word is)."""
    room = max_chars - 2  # (a "…" at either end)
    if any(shown[0] <= s and e <= shown[1] for s, e in figures):
        return None
    near = [f for f in figures if max(f[1], word[1]) - min(f[0], word[0]) <= room]
    if not near:
        return None
    s, e = min(near, key=lambda f: f[0] - word[1] if f[0] >= word[0] else word[0] - f[1])
    both = min(s, word[0]), max(e, word[1])
    if s >= word[0]:  # after the word: the window ends at the figure, or past it
        return word[0], min(max_chars // 4, word[0] - max(0, e - room)), *both
    return s, min(max_chars // 4, s - max(0, word[1] - room)), *both  # before: starts before it


_NUMBER = (
    r"[$€£¥￥₩#+-]?\d+(?:[.,:/\-，．：]\d+)*(?:[万千億兆]\d*)*"
    r"(?:円|ドル|[%％°]|[A-Za-z\u00c0-\u024f]+)?"
)
"""A number with its sign, currency, separators and unit, shown whole or not at all:
"$1,950.50", "128,000円", "10万円", "3.5kg", "19:30", "2026-06-12"."""
_WORD = rf"[{_LATIN}A-Z\u00c0-\u024f]+(?:['’\-][{_LATIN}A-Z]+)*"
"""A Latin word ("don't", "well-known", "iPhone15")."""
_EDGED = re.compile(f"{_NUMBER}|{_WORD}")
_FIGURE = re.compile(_NUMBER)
_LONGEST = 40
"""The longest word or number a cut moves off: a longer run (a URL, a hash) is cut where
the length falls, or the quote would lose all it holds."""
_NEAR = 8
"""How far on a Japanese quote's start looks for a clause's or a word's start."""
_CLAUSE = "、。！？，"
_KANA = re.compile(r"[\u3040-\u309f]")


def _edge(text: str, at: int) -> tuple[int, int] | None:
    """The Latin word or number (:data:`_NUMBER`) that ``at`` falls inside (a cut there
    would show a piece of it: "$1,9", "8,000円", "Acme Corp i"), as its start and its end;
    None when ``at`` is at an edge or the run is longer than
    :data:`_LONGEST`."""
    lo, hi = max(0, at - _LONGEST - 1), min(len(text), at + _LONGEST + 1)
    for m in _EDGED.finditer(text, lo, hi):
        if m.start() >= at:
            break
        if m.end() > at:  # (one that meets the window's edge may run on past it)
            long = (
                m.end() - m.start() > _LONGEST or 0 < lo == m.start() or m.end() == hi < len(text)
            )
            return None if long else (m.start(), m.end())
    return None


def _from(text: str, start: int, focus: int) -> int:
    """Where an excerpt with no space near its ``start`` (Japanese) begins: past a
    clause's end (、。) within :data:`_NEAR` characters, "…駐車場代も"; else at the start of
    the word or number ``start`` falls inside, "…128,000円に", not "…8,000円に"; else at
    the near start of a word written in kanji, katakana or Latin letters after kana, "…家賃
    は", not "…賃は"; never past ``focus``."""
    if text[start - 1 : start] in tuple(_CLAUSE):
        return start
    near = min(focus, start + _NEAR)
    for i in range(start, near):
        if text[i] in _CLAUSE:
            return i + 1
    inside = _edge(text, start)
    if inside is not None:
        return inside[0]
    for i in range(max(start, 1), near):
        kana = bool(_KANA.match(text[i - 1]))
        if kana and not _KANA.match(text[i]) and text[i] not in "ー・":
            return i
    return start


def _to(text: str, end: int, start: int) -> int:
    """Where an excerpt that would end at ``end`` ends: not inside a Latin word ("the ne",
    "Corp i") nor a number ("$1,9", "198,0"), but before it (a quote keeps to its length,
    and a piece of a number would tell another number); where asked when the word began
    at ``start`` (a quote of one long word)."""
    inside = _edge(text, end)
    if inside is None:
        return end
    return inside[0] if inside[0] > start else end


_SPACE = re.compile(f"[ {_BREAK}]")
"""What parts two words of a quote: a space or a line break (:data:`_BREAK`)."""


def _cut_end(piece: str) -> str:
    """``piece``, cut short, with its "…": not after a sentences' separator (" …"), which
    would read "……", nor after a line break (" / …")."""
    return piece.rstrip().removesuffix("…").rstrip() + "…"


def _tokens(text: str) -> int:
    """The token estimate of ``text`` as shown (:func:`_shown`)."""
    return estimate_tokens(_shown(text))


def _shown(text: str) -> str:
    """``text`` (a quote, a block, a pack) with its line breaks (:data:`_BREAK`) as a reader
    sees them, " / "."""
    return text.replace(_BREAK, _LINE_BREAK)


def _quote(
    text: str,
    strategy: Strategy,
    terms: Sequence[str],
    max_chars: int,
    asked: frozenset[AnswerType] = frozenset(),
    fill: bool = False,
) -> str:
    """``text`` as a block quotes it in ``max_chars`` (:data:`Strategy`), its line breaks as
    :data:`_BREAK` (one character each, as measured). With ``fill``,
    ``quote_key_parts`` adds to the sentences that share the query's ``terms`` the one right
    after the best, when the quote still shows it whole: it holds an ``asked`` kind of
    answer (a time, a quantity), or it fits (an answer follows what it answers; further
    sentences would be filler, and a date two sentences on is often another matter's). A
    trimmed quote, filled or not, keeps the first sentence after the best (the first, for
    ``summarize``) that says it changed or ended, about it (:func:`.quote_changes.turn_after`:
    "Sushi is my favourite food. … That all changed after my surgery."; not "My sister quit
    her job, by the way"), when the quote shows it whole: before
    the one right after the best, then before the others after the best, then before those
    before it; else the quote is as without it. A quote cut inside the best sentence shows
    the ``asked`` figure of it nearest the query's word whole, with the word, when both fit
    (:func:`_toward`): "How much is my laptop repair?" is quoted "…laptop repair: … they
    quoted $1,950…", not "…they quoted…"."""
    lines = _lines(text)
    sentences: list[str] = []
    starts: set[int] = set()  # the sentences that begin a line of their own
    for line in lines:
        starts.add(len(sentences))
        said = (" ".join(sentence.split()) for sentence in _SENTENCE.split(line))
        sentences += [sentence for sentence in said if sentence]
    text = _BREAK.join(lines)
    if strategy == "full" or len(text) <= max_chars:
        if len(text) <= max_chars * 4:
            return text
        return _cut_end(text[: _to(text, cut_at(text, max_chars * 4), 0)])
    patterns = _patterns(tuple(terms)) if strategy == "quote_key_parts" else []
    weights = [_weight(s, patterns) for s in sentences] if patterns else []
    matched = any(weights)
    best = weights.index(max(weights)) if matched else 0  # the first that shares the most
    kept = [i for i, w in enumerate(weights) if w > 0] if matched else [0][: len(sentences)]

    answered = matched and carries_any(sentences[best], asked)  # "…they quoted $1,950…"
    if answered:  # (the figures one quote around the heaviest word can reach)
        heaviest = _heaviest_at(sentences[best], patterns)
        reach = (max(0, heaviest - max_chars), heaviest + max_chars)
        figures = _figures(sentences[best], asked, reach)
    else:
        figures = []

    word = (
        _whole_word(sentences[best], _heaviest_span(sentences[best], patterns), patterns, max_chars)
        if matched
        else (0, 0)
    )

    def shown(chosen: Sequence[int]) -> str:
        """The quote of the ``chosen`` sentences around the best's heaviest word, moved to
        show the asked figure of the best nearest it (:func:`_toward`) unless that would
        lose the change the old one showed whole."""
        joined = _quoted(sentences, chosen, starts)
        if not matched:
            return _around(joined, 0, max_chars)
        base = joined.find(sentences[best])
        at = base + _heaviest_at(sentences[best], patterns)
        quote = _around(joined, at, max_chars)
        placed = _toward(
            (base + word[0], base + word[1]),
            [(base + s, base + e) for s, e in figures],
            _window(joined, at, max_chars),
            max_chars,
        )
        if placed is None:
            return quote
        focus, lead, lo, hi = placed
        start, end = _window(joined, focus, max_chars, lead)
        if not start <= lo < hi <= end:  # (the word and the figure whole, or no move)
            return quote
        moved = _around(joined, focus, max_chars, lead)
        if turn is not None and turn in chosen and whole(quote, turn) and not whole(moved, turn):
            return quote
        return moved

    def whole(quote: str, i: int) -> bool:
        """Whether ``quote`` shows sentence ``i`` whole, after the best's end."""
        tail = sentences[best][-24:]  # (the best's end: its start may be cut off)
        seen = quote.find(tail)
        return quote.find(sentences[i], seen + len(tail) if seen >= 0 else 0) >= 0

    turn = turn_after(sentences, best, lambda s: _shares(s, sentences[best], patterns))
    upto = tuple(i for i in kept if i <= best)
    after: int | None = best + 1 if fill and strategy == "quote_key_parts" else None
    if after is not None and (after >= len(sentences) or after in kept or after == turn):
        after = None  # (nothing to fill with, or the change fills it)
    answers = False
    tries: list[tuple[int, ...]] = []
    if after is not None:
        answers = bool(asked) and carries_any(sentences[after], asked)  # "Booked the plumber."
        tries.append(tuple(sorted({*kept, after})))
        if answers:  # then, for the answer, those after the best may go
            tries.append((*upto, after))
    if turn is not None:  # each with the change, then fewer others with it, then without
        turned = (tuple(sorted({*tried, turn})) for tried in (*tries, kept, upto, (best,)))
        tries = [*dict.fromkeys(turned), *tries]
    for tried in tries:
        quote = shown(tried)
        if turn is not None and turn in tried and not whole(quote, turn):
            continue
        if after not in tried:
            return quote
        if answers and whole(quote, after):
            return quote
        if not answers and len(_quoted(sentences, tried, starts)) <= max_chars:
            return quote
    return shown(kept)


def _shares(sentence: str, best: str, patterns: Sequence[tuple[re.Pattern[str], int]]) -> bool:
    """Whether ``sentence`` shares a word, not a change word, with the ``best`` sentence
    ("My sister quit coffee too" after "Coffee is my favourite drink") or with the query
    (``patterns``: 妹もコーヒーやめたんだって for コーヒー飲みに行かない？)."""
    shared = shared_phrases(best, sentence, limit=20)
    return any(CHANGE.fullmatch(p) is None for p in shared) or _weight(sentence, patterns) > 0


def _lines(text: str) -> list[str]:
    """``text`` as a quote shows it, in its lines that say something (:func:`_pieces`), each
    with its white space as single spaces; a quote joins them with :data:`_BREAK`."""
    lines = (" ".join(piece.split()) for piece in _pieces(readable(text)))
    return [line for line in lines if line]


def _quoted(sentences: Sequence[str], kept: Sequence[int], starts: Set[int] = frozenset()) -> str:
    """The ``kept`` sentences (by place, in order) as a quote that shows what it leaves
    out: " … " where sentences were left out between two kept ones, before the first and
    after the last; next ones joined as they were written (a space, none after 。), or
    a line break (:data:`_BREAK`, shown " / ") where the next begins a line of its own
    (``starts``: a list's, a log's), as a memory quoted whole shows it."""
    out = "… " if kept and kept[0] > 0 else ""
    for n, i in enumerate(kept):
        if n and i > kept[n - 1] + 1:
            out += " … "
        elif n and i in starts:
            out += _BREAK
        elif n:
            out += "" if sentences[kept[n - 1]][-1:] in "。！？" else " "
        out += sentences[i]
    return out + (" …" if kept and kept[-1] < len(sentences) - 1 else "")


MEANING_SHOWN = 0.1
"""The least cosine the reason line calls a similar meaning: below it (a memory found by
its time or its words alone) the line does not claim one."""


def _reason(
    item: Retrieved, lang: str, query: str, changed: str | None = None, shown: str = ""
) -> str:
    """The reason line: the LLM's, else what the memory ``shown`` (the lines quoted: the
    phrases a long memory shares lie beyond the start that is read) shares, and why; it
    says the memory holds a date or number only when what is shown holds one of the kinds
    the query asks (:func:`_holds_asked`). A later change says so first, beside the LLM's
    too ("newer than the memory of 2026-05-02 (Sat) on the same subject; the vet")."""
    if item.reason:
        said = reason_line(item.reason)  # (the model's is already; one given by hand too)
        if changed is None:
            return said
        if lang == "ja":
            return f"{changed} の記憶より新しい、同じ話題の話 / {said}"
        return f"newer than the memory of {changed} on the same subject; {said}"
    text = shown or item.episode.text
    shared = shared_phrases(query, text)
    cos = item.components.get("cosine")
    comps = item.components
    holds = "answer_type" in comps and _holds_asked(text, query)
    bits: list[str] = []
    if lang == "ja":
        if changed is not None:
            bits.append(f"{changed} の記憶より新しい、同じ話題の話")
        if comps.get("asked_time", 0.0) >= 1.0:
            bits.append("尋ねられた時期のこと")
        if shared:
            bits.append("「" + "」「".join(shared) + "」が一致")
        if cos is not None and cos >= MEANING_SHOWN:
            bits.append(f"意味の近さ {cos:.2f}")
        if "next_turn" in comps:
            bits.append("一致した発言の問いに答え" + ("、日時・数を含む" if holds else "る"))
        elif holds:
            bits.append("日時・数を含む")
        return " / ".join(bits or ["関連あり"]) + f"（{_label(item.relevance, lang)}）"
    if changed is not None:
        bits.append(f"newer than the memory of {changed} on the same subject")
    if comps.get("asked_time", 0.0) >= 1.0:
        bits.append("from the time asked about")
    if shared:
        bits.append("shares " + ", ".join(f'"{t}"' for t in shared))
    if cos is not None and cos >= MEANING_SHOWN:
        bits.append(f"similar meaning ({cos:.2f})")
    if "next_turn" in comps:
        bits.append(
            "answers a matching turn's question" + (" and holds a date or number" if holds else "")
        )
    elif holds:
        bits.append("holds a date or number")
    return "; ".join(bits or ["related"]) + f"; {_label(item.relevance, lang)}"


def _may_fill(ep: Episode, strategy: Strategy, max_chars: int) -> bool:
    """Whether filling can change the block of ``ep``: a ``quote_key_parts`` quote of a side
    longer than ``max_chars`` as measured (a line break one character, :data:`_BREAK`; a
    shorter one is quoted whole either way, :func:`_quote`)."""
    if strategy != "quote_key_parts":
        return False
    sides = (ep.user_text, ep.reply_text) if ep.kind is EpisodeKind.exchange else (ep.content,)
    return any(t and len(_BREAK.join(_lines(t))) > max_chars for t in sides)


def _holds_asked(shown: str, query: str) -> bool:
    """Whether ``shown`` holds a kind of answer ``query`` asks (a time, a quantity:
    :func:`.answer_type.carries_any`; either, when the query asks neither: the retrieval
    asked one)."""
    return carries_any(shown, asked_types(query) or frozenset(AnswerType))


def _label(relevance: str, lang: str) -> str:
    if lang == "ja":
        return {"high": "関連度: 高", "medium": "関連度: 中", "low": "関連度: 低"}[relevance]
    return f"{relevance} relevance"


def render_episode(
    item: Retrieved,
    lang: str,
    *,
    query: str = "",
    strategy: Strategy,
    max_chars: int,
    zone: tzinfo | None = None,
    changes: Episode | None = None,
    why: bool = True,
    fill: bool = True,
) -> str:
    """One episode as a block of the pack ("" when it shows nothing): date (in ``zone``,
    else as stored) and topic (left out when the first line quoted begins with it: it
    would be read twice),
    the utterances (a memory not an exchange says who spoke, when its metadata names a
    ``speaker``; a trimmed quote holds a later sentence that says it changed, and with
    ``fill`` the sentence after the one that matched most, where ``max_chars`` allows:
    :func:`_quote`), the reason line unless ``why`` is False (it
    names the day of the memory it ``changes``: a later change, :mod:`.retrieve.changes`)."""
    block = _block(
        item, lang, query=query, strategy=strategy, max_chars=max_chars, zone=zone,
        changes=changes, why=why, fill=fill,
    )  # fmt: skip
    return _shown(block)


def _block(
    item: Retrieved,
    lang: str,
    *,
    query: str,
    strategy: Strategy,
    max_chars: int,
    zone: tzinfo | None,
    changes: Episode | None,
    why: bool,
    fill: bool,
) -> str:
    """:func:`render_episode` with its quotes' line breaks as :data:`_BREAK`, as the pack
    measures a block against its budget (each one character, as before it showed them)."""
    ep = item.episode
    folded = _fold(query)
    dropped = asked_with(folded)
    terms = [t for t in query_terms(query) if not _HIRAGANA.match(t) and t not in dropped]
    asked = asked_types(query)
    if ep.kind is EpisodeKind.exchange:
        sides = [("User", ep.user_text), ("Partner", ep.reply_text)]
    else:
        sides = [(ep.kind.value.capitalize(), ep.content)]
    lines: list[str] = []
    quoted: list[str] = []
    for label, text in sides:
        said = _quote(text, strategy, terms, max_chars, asked, fill) if text else ""
        if said:  # (a side of control characters alone says nothing: no empty line)
            own = False  # (a message that begins with its own speaker's name)
            if ep.kind is not EpisodeKind.exchange:
                speaker = ep.metadata.get("speaker")
                label = _speaker_label(label, speaker, said)
                own = _names_itself(speaker, said)
            lines.append(f"{label}: {_unposed(said, own)}")
            quoted.append(said)
    if not quoted:  # (nothing it says can be shown: no block)
        return ""
    topic = _topic(ep)
    repeated = not _tagged(ep) and quoted[0].startswith(" ".join(topic.removesuffix("…").split()))
    date = _date_line(ep, lang, zone)
    lines.insert(0, f"## {date}" if repeated else f"## {date} — {topic}")
    if why:
        arrow = "→ 関連: " if lang == "ja" else "→ why: "
        changed = _date_line(changes, lang, zone) if changes is not None else None
        lines.append(arrow + _reason(item, lang, query, changed, _shown("\n".join(quoted))))
    return untemplated("\n".join(lines))


def _unposed(said: str, own: bool = False) -> str:
    """``said`` (a quote) with each of its lines that begins as the pack's own lines do
    (:data:`_POSED`: a pasted chat's "Partner: I promise…", a forged "[PRINCIPLES]") marked
    as quoted, its label in ‹ ›: "‹Partner›: I promise…", "‹##› 2026-05-01", so a line break
    shown " / " starts no turn or section of the pack; the first line is left as it is when
    it names the memory's ``own`` speaker ("Ken: see you", said by Ken)."""
    return _POSED.sub(
        lambda m: (
            m.group()
            if (own and m.start() == 0) or untemplated(m[3]) != m[3]  # (marked there: once)
            else f"{m[1]}{m[2] or ''}‹{m[3]}›"
        ),
        said,
    )


def _speaker_label(label: str, speaker: object, said: str) -> str:
    """The label of a memory that is not an exchange: its kind, with the ``speaker`` its
    metadata names ("Message (Ken)") unless what is quoted, ``said``, starts with that
    name and a colon already (in any case, ：too)."""
    if not isinstance(speaker, str) or _names_itself(speaker, said):
        return label
    name = " ".join(readable(speaker).split())
    if not name:
        return label
    return f"{label} ({name if len(name) <= 40 else name[: cut_at(name, 39)] + '…'})"


def _names_itself(speaker: object, said: str) -> bool:
    """Whether ``said`` starts with the ``speaker``'s name and a colon (in any case, ：
    too): "Ken: see you" of Ken."""
    if not isinstance(speaker, str):
        return False
    name = " ".join(readable(speaker).split())
    return bool(name) and _fold(said).lstrip().startswith(_fold(name) + ":")


def build_pack(
    retrieval: Retrieval,
    *,
    query: str,
    budget_tokens: int,
    strategy: Strategy | None = None,
    principles: Sequence[Episode] = (),
    principle_budget_tokens: int = 200,
    max_chars_per_utterance: int = 240,
) -> Pack:
    """Render a retrieval as a MemoryPack within ``budget_tokens``.

    Nothing is injected when the retrieval decided not to (``should_inject``
    false) and there are no principles: the pack text is then empty. Dates are
    days of the retrieval's time zone (that of its ``now``). An episode
    whose text repeats one already in the pack, within :data:`.COPY_WINDOW_S`, is
    left out (it is not offered: :func:`.offered_results`), as is a result shown
    among the ``principles`` (one cut by their budget stays in the evidence). A principle
    whose words repeat one already listed is listed once, whenever each was stored. The
    budget and the pack's ``tokens`` count the text as shown (a quote's line break as " / ";
    the length a quote may reach counts it as the one character it is: :data:`_BREAK`).
    """
    lang = retrieval.language
    zone = retrieval.now.tzinfo if retrieval.now is not None else None
    strat: Strategy = strategy or retrieval.injection_strategy
    blocks: list[str] = []
    used = 0
    truncated = False
    ids: list[int] = []
    copies: set[int] = set()  # principles stored more than once: said once
    if principles:
        plines = [_PRINCIPLES[lang]]
        pused = _tokens(plines[0])
        for p in principles:
            raw = p.content or p.text
            if len(raw) > 64 * max(principle_budget_tokens, 1):  # can never fit: not read
                truncated = True  # (a line of tokens at 4 characters each, and then some)
                continue
            line = "- " + untemplated(" ".join(readable(raw).split()))
            if line in plines:  # a rule stored again (at each start-up) is one rule
                copies.add(p.id)
                continue
            cost = _tokens(line)
            if pused + cost > principle_budget_tokens:  # a long rule: the shorter ones still go
                truncated = True
                continue
            plines.append(line)
            pused += cost
            ids.append(p.id)
        if len(plines) > 1:
            blocks.append("\n".join(plines))
    offered = retrieval.offered  # (what feedback judges an answer against)
    if offered:
        frame = _frame(retrieval.now, lang)
        used = _tokens(_HEADER)  # (the frame line goes in if it fits: below)
        evidence: list[str] = []
        drawn: list[tuple[Retrieved, Strategy, int, bool, Episode | None]] = []
        shown = {*ids, *copies}  # principles in their block are not repeated as evidence
        listed = {r.episode.id: r.episode for r in retrieval.results}
        outdated: set[int] = set()  # what a later change that did not fit says is changed
        for item in offered:  # (copies of one memory are offered once)
            if item.episode.id in shown:
                continue
            changes = listed.get(int(item.components.get("changes", 0)))
            # as it is; shorter (what matched, else the first sentence); then without its
            # reason line: the first that fits what is left of the budget. One that does
            # not fit leaves out what it says changed: alone, that would tell the old fact
            # as the fact (and so down a chain of changes)
            short: Strategy = "summarize" if strat == "summarize" else "quote_key_parts"
            block, fits = "", item.episode.id not in outdated
            for n, (how, chars, why) in enumerate(
                ((strat, max_chars_per_utterance, True), (short, 80, True), (short, 80, False))
                if fits
                else ()
            ):
                block = _block(
                    item, lang, query=query, strategy=how, max_chars=chars, zone=zone,
                    changes=changes, why=why, fill=False,
                )  # fmt: skip
                cost = _tokens(block) + 1
                if not block or used + cost <= budget_tokens:
                    truncated = truncated or n > 0
                    break
            else:
                fits = False
            if not fits:
                truncated = True
                if changes is not None:
                    outdated.add(changes.id)
                continue
            if not block:  # (it shows nothing: control characters alone)
                continue
            evidence.append(block)
            drawn.append((item, how, chars, why, changes))
            used += cost
            ids.append(item.episode.id)
        # then the frame line and each block, best first, with its quote filled (the
        # sentence after the one that matched) where what is left of the budget holds it:
        # which memories are packed, and how short, is decided without (neither takes a
        # memory's place)
        header = _HEADER
        framed = f"{_HEADER}\n{frame}"
        extra = _tokens(framed) - _tokens(_HEADER)
        if frame and used + extra <= budget_tokens:
            header, used = framed, used + extra
        for n, (item, how, chars, why, changes) in enumerate(drawn):
            if not _may_fill(item.episode, how, chars):  # (shown whole already: no new render)
                continue
            fuller = _block(
                item, lang, query=query, strategy=how, max_chars=chars, zone=zone,
                changes=changes, why=why, fill=True,
            )  # fmt: skip
            more = _tokens(fuller) - _tokens(evidence[n])
            if used + more <= budget_tokens:
                evidence[n] = fuller
                used += more
        if evidence:
            blocks.append(header + "\n" + "\n\n".join(evidence))
    text = "\n\n".join(blocks)  # (measured with its quotes' line breaks as one character)
    return Pack(
        text=_shown(text),
        episode_ids=tuple(ids),
        tokens=_tokens(text),
        injected=bool(text),
        language=lang,
        truncated=truncated,
    )
