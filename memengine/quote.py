"""How one stored text is quoted within ``max_chars``: in its sentences and its lines that
stand alone (a wrapped line of prose is not one), around the sentence that shares the most
with the query's words, with the asked figure near them and a later change of what it says
(:mod:`.quote_changes`), cut at neither a word nor a number, marking what it leaves out
with "…": :func:`quote_text`. The pack (:mod:`.pack`) quotes each side of a memory so. A
long memory is read by its beginning and its end (:func:`quoted_part`), as a turn reads a
long message.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence, Set
from typing import Literal

from .lazy_re import lazy_compile
from .models import EpisodeKind
from .quote_changes import turn_after
from .retrieve.answer_type import AnswerType, carries_any
from .retrieve.change_words import CHANGE
from .text import (
    Language,
    cut_at,
    fold,
    near_cut,
    prompt_line,
    readable,
    shared_phrases,
    thousands,
    untemplated,
)
from .values import closed_values

__all__ = [
    "BREAK",
    "LABELLED",
    "READ_CHARS",
    "SENTENCE",
    "SPEAKERS",
    "WRAP_WIDTH",
    "Strategy",
    "as_shown",
    "asked_figures",
    "forget_texts",
    "query_patterns",
    "quote_lines",
    "quote_text",
    "quoted_part",
    "text_pieces",
    "unposed",
    "unposed_lines",
]

Strategy = Literal["quote_key_parts", "summarize", "full"]

_ABBREVIATIONS = ("Mt", "Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Prof", "vs", "e.g", "i.e")
_CLOSING = "」』）】〕〉》”’"
SENTENCE = lazy_compile(
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
BREAK = "\x1f"
"""A line break of a memory as a quote is measured: one character, as the space it was
before it was shown as :data:`_LINE_BREAK` (a 33-item shopping list of 189 characters is
quoted whole in 240; the token budget counts it as shown); a control character, so
no memory holds one (:func:`.text.readable`), shown as " / " by :func:`as_shown`."""
_CAPITAL = r"(?![a-zß-öø-ÿ])[^\W\d_]"
"""A letter that may start a name: a capital or a letter of a script without case (ケ, 田);
not a lower-case Latin one."""
_NAME = rf"{_CAPITAL}[^\s:：/()（）]{{0,29}}(?: {_CAPITAL}[^\s:：/()（）]{{0,29}}){{0,2}}"
"""A speaker's name as a pasted chat writes it: one to three words, each from a capital
or a letter without case ("Ken", "Partner", "Message", ユーザー, 田中, "Mary Ann"; not the
"reason is simple" of wrapped prose's "The / reason is simple: taxes went up")."""
SPEAKERS: dict[Language, tuple[str, str]] = {"en": ("User", "Partner"), "ja": ("ユーザー", "相手")}
"""The labels of the user's and the partner's words, by language: the pack writes the
English ones, the LLM phases' prompts those of their language (and so marks them)."""
_OWN = "|".join([*SPEAKERS["en"], *(k.value.capitalize() for k in EpisodeKind)])
"""The speakers' labels the pack writes ("User", "Partner", "Message", "Fact"…)."""
_KNOWN = "|".join(
    [_OWN, *SPEAKERS["ja"], "Assistant", "System", "Human", "AI", "アシスタント", "システム"]
)
"""The labels a reader takes for a turn wherever they stand: the pack's (:data:`_OWN`), the
rerank's Japanese ones (ユーザー, 相手) and a chat's roles ("Assistant", "System", "Human",
"AI", アシスタント, システム)."""
_AS = rf"(?: ?[(（][^()（）:：{BREAK}]{{1,40}}[)）])?(?:\*\*|__)?"
_KNOWN_LABEL = rf"(?i:{_KNOWN}){_AS}(?= ?:(?!//)| ?：)"
"""A label of :data:`_KNOWN` before a colon, in any case, with or without a space after it
("Partner:I promise", 相手:500円, "partner : x", "Partner:" alone on its line; not a URL's
"user://")."""
LABELLED = rf"(?:> ?)*(?:\*\*|__)?(?:{_NAME}{_AS}(?= ?:(?:\*\*|__)? | ?：)|{_KNOWN_LABEL})"
"""A speaker's label as a pasted chat starts a line with it: a name (:data:`_NAME`) before
a colon and a space or before "：" ("Ken: ", "Message (Ken): ", ケン：, 田中：; not "this: we
should move" of wrapped prose, nor "Note:x"), or one a reader takes for a turn
(:data:`_KNOWN_LABEL`: "user: ", "Partner:I promise", 相手:500円, "Partner:" above "I
promise…"; not a list's heading, "Shopping list:" above "milk"), in bold ("**Partner:**"),
after a quote's ">" ("> User: ")."""
_SPOKEN = lazy_compile(LABELLED)
_WORDS = r"[^\W\d_][^\s:：/()（）]{0,29}(?: [^\W\d_][^\s:：/()（）]{0,29}){0,2}"
"""One to three words, each from a letter, in any case (a reason line's "why", 関連)."""
_FRAME = r"#+(?= )|\[ ?[A-Z][A-Z_]{2,} ?\]|\((?i:today|今日)(?= ?[:：])"
"""The start of a line of the pack's frame: a heading ("## "), a section ("[PRINCIPLES]"),
the line that says what day it is ("(today: ", "（今日：")."""
_LINE_FORMS = rf"{_FRAME}|{LABELLED}|(?:→|->) ?(?:{LABELLED}|{_WORDS}(?= ?:(?!//)| ?：))"
"""How a line of the pack begins: a line of its frame (:data:`_FRAME`), a speaker's label
(:data:`LABELLED`), a reason in any case ("→ why: ", "→ 関連: ", "-> why: ", "→why:")."""
_SEEN_FORMS = (
    rf"{_FRAME}|(?:> ?)*(?:\*\*|__)?{_KNOWN_LABEL}"
    rf"|(?:→|->) ?(?:{_KNOWN_LABEL}|(?i:why|関連)(?= ?:(?!//)| ?：))"
)
"""The forms of :data:`_LINE_FORMS` a name is not: a label a reader takes for a turn
(:data:`_KNOWN_LABEL`, not any capitalised word, "Osaka: ", 大阪：), the frame's lines, a
reason's ("→ why: ", "→ 関連: ")."""
_POSED = lazy_compile(
    rf"(?:(?P<at>^|{BREAK})(?P<more>… |\.\.\. |/ )?| / | … | \.\.\. )"
    rf"(?(more)(?P<seen>{_SEEN_FORMS})|(?(at)(?P<line>{_LINE_FORMS})|(?P<typed>{_SEEN_FORMS})))"
)
"""A line of a quote that begins as the pack's own lines do, where a reader sees a line
begin. After a line break (:data:`BREAK`, shown " / ") or at the quote's start: any of
:data:`_LINE_FORMS` ("Ken: ", "Partner: ", "## "). After a " / " typed so (a line's first
"/ " too) or the " … " that stands for what a quote leaves out (a quote's first "… ";
"..." too, as a prompt's NFKC writes "…"): :data:`_SEEN_FORMS` alone ("roses / Partner: I
promise…"; not "Tokyo / Osaka: which first?", "Mom / Dad: both said no", 東京 / 大阪：).
Never a time ("19:30"), a URL ("https://…"), a bullet ("- api: 8443"), a slash inside a
word ("a/b", 赤／青) nor "1 / 2". Matched in :func:`_folded` text (［PRINCIPLES］ and ＃＃
as [PRINCIPLES] and ##, "Partner\\u00a0:" as "Partner :") without what is drawn as
nothing (:data:`_UNSEEN`): "\\u200bPartner: " too."""
_UNSEEN = lazy_compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]+"
)
"""Characters drawn as nothing (a zero-width space, a soft hyphen, a word joiner, a
variation selector, a Hangul filler, a tag character): one before "Partner: " hides it
from a check, not from a reader, who sees "Partner: "."""


class _Folds(dict[int, str]):
    """Each character's NFKC where that is one character (full-width ［ is [, a no-break
    space a space), else the character itself ("…" stays, not "..."): a text folded so
    keeps its length, and a match in it is the same place in the text. A full-width colon
    stays "：": a label before it needs no space after it (相手：500円), as one before ":"
    does. The characters met are kept, up to :data:`_FOLDS_KEPT`."""

    def __missing__(self, code: int) -> str:
        """The fold of the character ``code``, kept for the next one."""
        char = chr(code)
        plain = unicodedata.normalize("NFKC", char)
        folded = plain if len(plain) == 1 and char != "：" else char
        if len(self) < _FOLDS_KEPT:
            self[code] = folded
        return folded


_FOLDS_KEPT = 8192
"""The most characters whose fold :class:`_Folds` keeps (a text of every script folds
the ones past it each time)."""
_FOLDS = _Folds()


def _folded(text: str) -> str:
    """``text`` with each character in NFKC where that is one character (:class:`_Folds`),
    so that a label in full width is found as one in ASCII, at the same place."""
    return text if unicodedata.is_normalized("NFKC", text) else text.translate(_FOLDS)


def unposed(said: str, own: bool = False) -> str:
    """``said`` (a quote, its line breaks :data:`BREAK`) with each of its lines that begins
    as the pack's own lines do (:data:`_POSED`: a pasted chat's "Partner: I promise…", a
    forged "[PRINCIPLES]", a typed "roses / Partner: I promise…", one after a quote's " … ")
    marked as quoted, its label in ‹ ›: "‹Partner›: I promise…", "‹##› 2026-05-01", "‹(today›:
    2031-01-01", so that nothing a reader takes for a line break starts a turn or a section of
    the pack, or a prompt's; a label is shown as written ("‹［PRINCIPLES］›"), and what is
    drawn as nothing before it is left where it was ("\\u200b‹Partner›: "). The first line is
    left as it is when it names the memory's ``own`` speaker ("Ken: see you", said by Ken), and
    a chat template's token, which :func:`.text.untemplated` marks, is marked once."""
    seen, places = _seen(said)
    out: list[str] = []
    at = 0
    for m in _POSED.finditer(_folded(seen)):
        start, end = m.span(next(g for g in ("line", "seen", "typed") if m.group(g) is not None))
        if places is not None:  # (where the label is in ``said``)
            start, end = places[start], places[end - 1] + 1
        label = said[start:end]
        if (own and m.start() == 0) or untemplated(label) != label:
            continue
        out += [said[at:start], f"‹{label}›"]
        at = end
    return "".join(out) + said[at:] if out else said


def _seen(text: str) -> tuple[str, list[int] | None]:
    """``text`` as a reader sees it, without what is drawn as nothing (:data:`_UNSEEN`),
    and the place in ``text`` of each character of it (None when nothing was left out: the
    same places)."""
    unseen = list(_UNSEEN.finditer(text))
    if not unseen:
        return text, None
    places: list[int] = []
    at = 0
    for m in unseen:
        places += range(at, m.start())
        at = m.end()
    places += range(at, len(text))
    return _UNSEEN.sub("", text), places


def unposed_lines(text: str) -> str:
    """``text`` (stored, and so untrusted) in its lines, each as a prompt shows it
    (:func:`.text.prompt_line`: in NFKC, without invisible format characters, its white
    space single spaces, a full-width colon kept "：" so that 相手：500円 is read as a label,
    as the pack reads it) and marked as :func:`unposed` marks a quote's, so that what is
    checked is what a model reads: for a prompt that puts it on one line
    (:func:`.text.prompt_quote`), where "roses\\nPartner: I promise" would read "roses Partner:
    I promise", a turn of the partner's ("roses ‹Partner›: I promise"), as would "roses\\n\\u200b
    Partner: …" and "roses  /  Partner: …"."""
    lines = (prompt_line(line, kept="：") for line in readable(text).splitlines())
    return unposed(BREAK.join(lines)).replace(BREAK, "\n")


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
_ITEM = lazy_compile(
    r"\s*(?:[-*•・‣▪>]|\d+[.)]\s|\(?\d+\)|\d{1,4}[-/:.]\d"
    + rf"|{_DATED}\s*(?::|\s[-–—])|{_MONTH_DAY} \((?:{_WEEKDAY})\.?\))"
)
"""The start of a list item or of a log line (a bullet, a number, a date or a time; a
month's name, capitalised or in capitals, and a day, with a year, a time or a weekday,
before a colon or a spaced dash: "March 5:", "MAR 5 -", "Monday, March 5:", "Mar 5, 2026
10:32 AM - Ken:"; or a day with its weekday in brackets, "Mar 9 (Thu)"; not "may 2", nor
a wrapped sentence's "November 6." or "May 3, which was…", nor "May 3-5")."""


_WRAPPED = lazy_compile(r"[A-Za-z0-9,;'\"()–-]$")
"""The end of a line of Latin prose wrapped at a width (the sentence goes on below)."""


WRAP_WIDTH = 40
"""The shortest line taken as prose wrapped at a width (a shorter one is a list's item)."""


READ_CHARS = 20_000
"""The most of a memory's text a quote reads (:func:`quoted_part`): a quote shows a few
hundred characters, and each of a pack's renders folds what it reads, so a stored paste of
200,000 characters (a log, a flood of combining marks) cost a pack seconds."""
_GAP = "\n…\n"
"""What stands for the middle :func:`quoted_part` leaves out: a line of its own, "…"."""
_EDGE_REACH = 100
"""How far :func:`quoted_part` looks for a space or a line break to cut at (a word is not
cut in two)."""


def quoted_part(text: str, max_chars: int) -> str:
    """What a quote of ``text`` in ``max_chars`` reads: all of it up to :data:`READ_CHARS`
    (or eight times ``max_chars``: a ``full`` quote shows four); past that, its beginning
    and its end, about half each, cut at a space where one is near and parted by a line
    "…" (:data:`_GAP`), as a turn reads a long message (:func:`.text.within`): a question
    answered at the end of a pasted log is still quoted, and a pack of such memories costs
    milliseconds."""
    limit = max(READ_CHARS, 8 * max_chars)
    if len(text) <= limit:
        return text
    half = (limit - len(_GAP)) // 2
    end = near_cut(text, half)
    space = max(text.rfind(c, end - _EDGE_REACH, end) for c in " \n")
    end = space if space > 0 else end
    start = near_cut(text, len(text) - half)
    spaces = [i for i in (text.find(c, start, start + _EDGE_REACH) for c in " \n") if i >= 0]
    start = min(spaces) + 1 if spaces else start
    return text[:end] + _GAP + text[start:]


def text_pieces(text: str) -> list[str]:
    """``text`` in lines that stand alone. A line break ends a piece, except inside Latin
    prose wrapped at a width: a long line that ends mid-sentence, followed by one that
    goes on in Latin letters and is not a list item, a log line (a bullet, a number, a
    date) nor a pasted chat's line ("Partner: I promise…", :data:`LABELLED`)."""
    pieces: list[str] = []
    above = ""
    for line in (raw.strip() for raw in text.splitlines()):
        wrapped = (
            len(above) >= WRAP_WIDTH
            and _WRAPPED.search(above)
            and line[:1].isascii()
            and line[:1].isalpha()
            and not _ITEM.match(line)
            and not _SPOKEN.match(line + BREAK)  # (as a line of its own)
        )
        if wrapped:
            pieces[-1] = f"{pieces[-1]} {line}"
        else:
            pieces.append(line)
        above = line
    return pieces


@functools.lru_cache(maxsize=32)
def _fold(text: str) -> str:
    """``text`` as the full-text search compares it, and so the query's terms
    (:func:`.text.fold`): NFKC (ｺﾝﾋﾞﾆ is コンビニ), lower case, café as cafe, O’Brien as
    o'brien, 葛󠄀飾 as 葛飾. Cached: a quote weighs, places and grows its best sentence,
    and a pack renders a block up to four times, so a sentence of thousands of characters
    was folded a dozen times (a flood of combining marks folds slowly)."""
    return fold(text)


def _place(text: str, folded_at: int) -> int:
    """The place in ``text`` of the character at ``folded_at`` in its :func:`_fold` (NFKC
    may change lengths, ﾋﾞ is ビ, and a variation selector is dropped): the first prefix
    whose fold reaches past it, looked for from the start with prefixes twice as long each
    time, then halved (the query's word near the start of a long sentence folds a short
    prefix, not the sentence over and over)."""
    lo, hi = 0, len(text)
    probe = folded_at
    while probe < hi:
        if len(fold(text[: probe + 1])) > folded_at:  # (prefixes: not cached)
            hi = probe
            break
        lo, probe = probe + 1, 2 * probe + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if len(fold(text[: mid + 1])) > folded_at:
            hi = mid
        else:
            lo = mid + 1
    return lo


_KANJI = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_LATIN_TERM = lazy_compile(r"^[0-9a-z'\u00c0-\u024f]+$")
_LATIN = r"0-9a-z\u00c0-\u024f"
"""The letters of a Latin word's edge (not ``\\w``, which holds kana and kanji too: the
iPhone of 新しいiPhoneを and the 14 of 3月14日 are words)."""


@functools.lru_cache(maxsize=8)
def query_patterns(terms: tuple[str, ...]) -> list[tuple[re.Pattern[str], int]]:
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
    """Drop the query patterns and the folded sentences cached for packs (they hold a
    user's words: a forgotten agent's must not stay in the process), and ``re``'s own cache
    of them."""
    query_patterns.cache_clear()
    _fold.cache_clear()
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
    begun = len(fold(sentence[:start]))
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
    AnswerType.how_many: ("amount",),
    AnswerType.time: ("time", "date", "day", "weekday", "month"),
}
"""The kinds of :func:`.values.closed_values` that answer each kind of question: an amount
with its currency or unit for "How much…?"; a clock time, a date, a day, a weekday or a
month for "When…?"."""
_READ = 16
"""How far either side of a number :func:`asked_figures` reads for its lead word and its unit
("the 6th of September", "120,000 yen")."""


def asked_figures(
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
        read, at = e + 1, at + len(fold(text[read : e + 1]))
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


_LATIN_CHAR = lazy_compile(r"[0-9A-Za-z\u00c0-\u024f]")


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
_EDGED = lazy_compile(f"{_NUMBER}|{_WORD}")
_FIGURE = lazy_compile(_NUMBER)
_LONGEST = 40
"""The longest word or number a cut moves off: a longer run (a URL, a hash) is cut where
the length falls, or the quote would lose all it holds."""
_NEAR = 8
"""How far on a Japanese quote's start looks for a clause's or a word's start."""
_CLAUSE = "、。！？，"
_KANA = lazy_compile(r"[\u3040-\u309f]")


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


_SPACE = lazy_compile(f"[ {BREAK}]")
"""What parts two words of a quote: a space or a line break (:data:`BREAK`)."""


def _cut_end(piece: str) -> str:
    """``piece``, cut short, with its "…": not after a sentences' separator (" …"), which
    would read "……", nor after a line break (" / …")."""
    return piece.rstrip().removesuffix("…").rstrip() + "…"


def as_shown(text: str) -> str:
    """``text`` (a quote, a block, a pack) with its line breaks (:data:`BREAK`) as a reader
    sees them, " / "."""
    return text.replace(BREAK, _LINE_BREAK)


def quote_text(
    text: str,
    strategy: Strategy,
    terms: Sequence[str],
    max_chars: int,
    asked: frozenset[AnswerType] = frozenset(),
    fill: bool = False,
) -> str:
    """``text`` as a block quotes it in ``max_chars`` (:data:`Strategy`), its line breaks as
    :data:`BREAK` (one character each, as measured; a long one read by its beginning and
    its end, :func:`quoted_part`). With ``fill``,
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
    lines = quote_lines(quoted_part(text, max_chars))
    sentences: list[str] = []
    starts: set[int] = set()  # the sentences that begin a line of their own
    for line in lines:
        starts.add(len(sentences))
        said = (" ".join(sentence.split()) for sentence in SENTENCE.split(line))
        sentences += [sentence for sentence in said if sentence]
    text = BREAK.join(lines)
    if strategy == "full" or len(text) <= max_chars:
        if len(text) <= max_chars * 4:
            return text
        return _cut_end(text[: _to(text, cut_at(text, max_chars * 4), 0)])
    patterns = query_patterns(tuple(terms)) if strategy == "quote_key_parts" else []
    weights = [_weight(s, patterns) for s in sentences] if patterns else []
    matched = any(weights)
    best = weights.index(max(weights)) if matched else 0  # the first that shares the most
    kept = [i for i, w in enumerate(weights) if w > 0] if matched else [0][: len(sentences)]

    answered = matched and carries_any(sentences[best], asked)  # "…they quoted $1,950…"
    if answered:  # (the figures one quote around the heaviest word can reach)
        heaviest = _heaviest_at(sentences[best], patterns)
        reach = (max(0, heaviest - max_chars), heaviest + max_chars)
        figures = asked_figures(sentences[best], asked, reach)
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


def quote_lines(text: str) -> list[str]:
    """``text`` as a quote shows it, in its lines that say something (:func:`text_pieces`), each
    with its white space as single spaces; a quote joins them with :data:`BREAK`."""
    lines = (" ".join(piece.split()) for piece in text_pieces(readable(text)))
    return [line for line in lines if line]


def _quoted(sentences: Sequence[str], kept: Sequence[int], starts: Set[int] = frozenset()) -> str:
    """The ``kept`` sentences (by place, in order) as a quote that shows what it leaves
    out: " … " where sentences were left out between two kept ones, before the first and
    after the last; next ones joined as they were written (a space, none after 。), or
    a line break (:data:`BREAK`, shown " / ") where the next begins a line of its own
    (``starts``: a list's, a log's), as a memory quoted whole shows it."""
    out = "… " if kept and kept[0] > 0 else ""
    for n, i in enumerate(kept):
        if n and i > kept[n - 1] + 1:
            out += " … "
        elif n and i in starts:
            out += BREAK
        elif n:
            out += "" if sentences[kept[n - 1]][-1:] in "。！？" else " "
        out += sentences[i]
    return out + (" …" if kept and kept[-1] < len(sentences) - 1 else "")
