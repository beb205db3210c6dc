"""Time expressions → a search window, offline and pure (Japanese and English).

:func:`parse_time_window` turns the past-pointing time expressions of a
message (先週, 先月, 昨日, 去年の夏, 3日前, and in kana as typed casually: せんしゅう,
せんせんしゅう, せんげつ, きのう, おととい, きょねん, きょねんのなつ, せんしゅうの金曜, as words
of their own, not the せんしゅう of あのせんしゅうまいね; "last week", "yesterday",
"last summer", "two months ago", "in March", 3/22に, …) into one window
``(start, end)`` computed against ``now`` (the engine's clock, in its time
zone). ``start`` is inclusive, ``end`` exclusive, both aware datetimes;
``end`` never lies after ``now``. Several expressions give the smallest
window covering them all. Expressions about the present or the future
(今日 and "today" said of the present, 明日, "next week", 今週の土曜 when Saturday is
still to come) give no window: a memory search looks at the past. Parts of today told
as past ("this afternoon", 今夜, "earlier today", "3 hours ago", さっき, "today" in a
question about the past) and "last night" (the night, not yesterday's date) are read as
:mod:`.day_parts` counts a day, which runs until its morning cutoff.

:func:`parse_iso_range` reads the ISO date ranges an LLM resolves temporal
references to (``2026-05-11/2026-05-17``, ``2026-05``, a single date, …).

For a search filter use :func:`window_filters`, which also widens the end
by a recording lag (:func:`widen`): "last weekend" is often told on Monday.

Conventions: weeks start on Monday; "last week" is the calendar week
before this one; seasons are meteorological (spring Mar–May, summer
Jun–Aug, autumn Sep–Nov, winter Dec–Feb); "last summer" is the latest
summer that is over; "N days/weeks/months/years ago" get a tolerance
(±1 day, ±3 days, ±15 days, ±6 months) because people round, and a range
("1-2 weeks ago", 2、3日前) covers both counts; "in/over the last year" is
the rolling past year, as "the past year", while "the last week of June" is
read as June (not last week); "in April last year" is that April; a holiday
marked as to come (今度の, 来月の, 今年末, "this", "coming") is this year's only
once begun; forward phrases (今週末 before Saturday, 今月末, "later this
week") and 前後/前期 after a count (1週間前後かかります; not 2年前期待してた)
give no window; lower-case "may" is a month after "last" or before a year,
punctuation or the end, and a month word before 's is a name (not after
"last": "last March's trip"); "the last 3 days", ここ数日, 過去2ヶ月 run until now; a month
or day named without a year and still to come is last year's when that one ended less
than :data:`JUST_PAST_DAYS` ago when the message tells of the past and the sentence does
not look ahead (:func:`_told_as_past`), and so, told as past, a weekday, a weekend or a
day of the month named alone is the latest one; words that count from a time move it
("the week before 16 November", クリスマスの前の週: :func:`_offsets`), and a time with its
year written beside others keeps only those near it (:func:`_anchored_years`); a time named
in code ("git log --since=yesterday", "yesterday.log", a span in backticks, the regex for "3
days ago") names none (:func:`_named_in_code`), one quoted in prose or before a sentence
written without its space ("yesterday.he said hi") still does; a year before a model's or
an edition's word is a thing's year (2019年モデル, 2019年式, 2019年版, as "the 2019 model":
:data:`_PRODUCT_YEAR`), no window.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from ..clock import parse_iso
from ..lazy_re import lazy_compile
from ..store.filters import Filters
from ..text import query_terms, within
from .dates import (
    Window,
    days_window,
    en_number,
    ja_number,
    midnight_of,
    month_window,
    union,
    window_around,
)
from .time_rules import (
    CASED,
    JA_NUM,
    RULES,
    SENTENCES,
    WEEKDAYS_EN,
    Sentences,
    sentences_of,
    since_around,
    weekday_index,
)

__all__ = [
    "TimeExpression",
    "Window",
    "find_time_expressions",
    "parse_iso_range",
    "parse_time_window",
    "time_is_asked",
    "union",
    "widen",
    "window_filters",
]

MIN_LAG = timedelta(days=1)
MAX_LAG = timedelta(days=7)


@dataclass(frozen=True)
class TimeExpression:
    """One time expression found in a text, with the window it stands for."""

    surface: str
    start: datetime
    end: datetime


MAX_TIME_TEXT = 2000
"""How much of a text is read for time expressions by default (a turn reads as much as its
search does, ``[retrieval] max_query_chars``)."""


_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925}
_ERA_YEAR = lazy_compile(r"(令和|平成|昭和)(元|\d{1,2}|[一二三四五六七八九十]{1,3})年")


def _western_year(m: re.Match[str]) -> str:
    """令和7年 (令和七年) → 2025年 (元年 is the first)."""
    n = 1 if m.group(2) == "元" else ja_number(m.group(2))
    return f"{_ERAS[m.group(1)] + n}年" if n else m.group(0)


def _normalise(text: str) -> str:
    """NFKC (㋿ is 令和, ２ is 2), lower case, Japanese era years as western ones."""
    return _ERA_YEAR.sub(_western_year, unicodedata.normalize("NFKC", text).lower())


def find_time_expressions(
    text: str, now: datetime, *, max_chars: int = MAX_TIME_TEXT
) -> list[TimeExpression]:
    """Every past-pointing time expression in what a turn reads of ``text`` in ``max_chars``
    (:func:`~memengine.text.within`: a longer text's beginning and end), in order of
    appearance, with its window."""
    if not text or now.tzinfo is None:
        return []
    read = within(text, max_chars)
    norm = _normalise(read)
    cased = _ERA_YEAR.sub(_western_year, _as_written(unicodedata.normalize("NFKC", read)))
    token = CASED.set(cased if len(cased) == len(norm) else "")  # (as written: "May 3")
    sentences_token = SENTENCES.set(Sentences(norm))  # (each sentence found and read once)
    try:
        return _found(norm, now)
    finally:
        SENTENCES.reset(sentences_token)
        CASED.reset(token)


def _as_written(nfkc: str) -> str:
    """The NFKC text ``nfkc`` as written, in its case, each character as long as its lower
    case (İ lower-cased is i and a combining dot: two), so that its offsets are those of the
    normalised text ("İstanbul was great yesterday.It rained": the capital after the dot is
    found)."""
    if len(nfkc.lower()) == len(nfkc):
        return nfkc
    return "".join(c + c.lower()[1:] for c in nfkc)


_Found = tuple[int, int, Window, str]
"""An expression found: its span in the normalised text, its window and its surface."""


def _found(norm: str, now: datetime) -> list[TimeExpression]:
    """:func:`find_time_expressions` of the normalised text ``norm``."""
    taken = [False] * len(norm)
    found: list[_Found] = []
    code = [m.span() for m in _CODE.finditer(norm)]
    for pattern, rule in RULES:
        for m in pattern.finditer(norm):
            if any(taken[m.start() : m.end()]) or _inside_a_word(norm, m):
                continue
            for i in range(m.start(), m.end()):
                taken[i] = True  # (one named in code too: no shorter rule reads a part of it)
            if _named_in_code(norm, m, code):
                continue
            try:
                window = rule(m, now)
            except (ValueError, OverflowError):  # a date at the calendar's edge (9999-12-31)
                window = None
            if window is not None:
                found.append((m.start(), m.end(), window, m.group(0)))
    found = _anchored_years(norm, _offsets(norm, found, now))
    kept: list[tuple[int, TimeExpression]] = []
    for first, last, (start, end), surface in found:
        if since_around(norm, first, last):
            end = now
        end = min(end, now)
        if start < end:
            kept.append((first, TimeExpression(surface, start, end)))
    kept.sort(key=lambda pair: pair[0])
    return [expr for _, expr in kept]


_OFFSET_EN = lazy_compile(
    r"\b(?:(?P<n>the|a|an|one|two|three|four|five|six|last|\d{1,2}) "
    r"(?P<u>day|week|weekend|month)s?|the (?P<wd>"
    + "|".join(WEEKDAYS_EN)
    + r")) (?P<dir>before|after|prior to|following) (?:(?:the|on|of) )?$",
    re.ASCII,
)
"""Words before a time that count from it ("the week before 16 November", "two weeks after
Christmas", "the Sunday before October 25", "last weekend before April 10")."""
_OFFSET_JA = lazy_compile(
    rf"の?(?:(?P<n>{JA_NUM})(?P<u>日|週間)(?P<dir>前|後)|(?P<w>前日|前の日|翌日|次の日|"
    r"前の週末?|翌週末?|次の週末?))"
)
"""Words after a time that count from it (クリスマスの前の週, 3月5日の2日前, GWの翌週)."""


def _offsets(norm: str, found: list[_Found], now: datetime) -> list[_Found]:
    """``found`` with each time that words count from (:data:`_OFFSET_EN`,
    :data:`_OFFSET_JA`) moved to the time they name, and the expressions those words held
    ("last weekend" of "last weekend before April 10", 2日前 of "の2日前") left out."""
    moved: list[tuple[_Found, bool]] = []
    spent: list[tuple[int, int]] = []
    for first, last, window, surface in found:
        en = _OFFSET_EN.search(norm, max(0, first - 40), first)
        ja = _OFFSET_JA.match(norm, last)
        shifted = None
        if en is not None:
            n = en.group("n")
            count = 1 if n in (None, "the", "a", "an", "one", "last") else en_number(n)
            unit = en.group("u") or "weekday"
            after = en.group("dir") in ("after", "following")
            target = weekday_index(en.group("wd")) if en.group("wd") else None
            span = (en.start(), last)
            shifted = _shift(window, unit, count or 0, after, target, now)
        elif ja is not None:
            word = ja.group("w") or ""
            count = ja_number(ja.group("n")) if ja.group("n") else 1
            unit = "day" if "日" in (ja.group("u") or word) else "week"
            unit = "weekend" if word.endswith("週末") else unit
            after = (ja.group("dir") or word[:1]) in ("後", "翌", "次")
            span = (first, ja.end())
            shifted = _shift(window, unit, count or 0, after, None, now)
        if shifted is None:
            moved.append(((first, last, window, surface), False))
        else:
            spent.append(span)
            moved.append(((span[0], span[1], shifted, norm[span[0] : span[1]]), True))
    return [f for f, own in moved if own or not any(a < f[1] and f[0] < b for a, b in spent)]


def _shift(
    window: Window, unit: str, n: int, after: bool, weekday: int | None, now: datetime
) -> Window | None:
    """The time ``n`` units (``unit``) before ``window`` (``after``: after it): a day, the
    seven days next to it or about ``n`` weeks off, the weekend or ``weekday`` next to it,
    the month (31 days) next to it."""
    if not 1 <= n <= 52:
        return None
    edge = window[1] if after else window[0]
    day = edge.date() if after else edge.date() - timedelta(days=1)  # the first day outside
    sign = 1 if after else -1
    if unit == "day":
        d = day + timedelta(days=sign * (n - 1))
        return days_window(d, d, now)
    if unit == "week" and n == 1:
        start = edge if after else edge - timedelta(weeks=1)
        return start, start + timedelta(weeks=1)
    if unit == "week":
        return window_around(edge + sign * timedelta(weeks=n), timedelta(days=4))
    if unit == "month":
        return (
            (edge, edge + timedelta(days=31 * n))
            if after
            else (edge - timedelta(days=31 * n), edge)
        )
    target = 5 if unit == "weekend" else weekday if weekday is not None else 0
    while day.weekday() != target:
        day += timedelta(days=sign)
    last = day + timedelta(days=1) if unit == "weekend" else day
    return days_window(day, last, now)


_YEAR_WRITTEN = lazy_compile(r"(?<![0-9])(?:1[89]|20)[0-9]{2}(?![0-9])")


def _anchored_years(norm: str, found: list[_Found]) -> list[_Found]:
    """``found`` without the expressions that name no year and lie more than a month from
    every day written with its year in the same sentence: "last Friday on 23 January, 2022"
    is that Friday, not every day from it until last week ("I moved here in 2019 and last
    week I met my neighbour" keeps both: a year alone anchors nothing)."""
    dated = [
        f for f in found if _YEAR_WRITTEN.search(f[3]) and f[2][1] - f[2][0] <= timedelta(days=7)
    ]
    month = timedelta(days=31)

    def kept(f: _Found) -> bool:
        anchors = [g for g in dated if _one_sentence(norm, f, g)]
        return (
            _YEAR_WRITTEN.search(f[3]) is not None
            or not anchors
            or any(f[2][0] < g[2][1] + month and g[2][0] - month < f[2][1] for g in anchors)
        )

    return [f for f in found if kept(f)] if dated else found


def _one_sentence(norm: str, a: _Found, b: _Found) -> bool:
    """Whether no sentence ends between the expressions ``a`` and ``b``: the later one's
    sentence (:meth:`.Sentences.start_at`, as the text up to it reads) begins before the
    earlier one ends. Found once per text, not searched between each pair: every time of
    a sentence is weighed against every date in it with its year, and a list of dates
    ("on 3 May 2022, …") of 2,000 characters took seconds."""
    first, last = min(a[1], b[1]), max(a[0], b[0])
    return sentences_of(norm).start_at(last) <= first


_LATIN_LETTER = lazy_compile(r"[a-z\u00c0-\u024f]")


def _inside_a_word(norm: str, m: re.Match[str]) -> bool:
    """Whether the English expression ``m`` is part of a longer Latin word ("march" of
    "marché"): the English rules' word edges are ASCII, so that "yesterdayって" ends where
    the Japanese begins."""
    first, last = m.group(0)[:1], m.group(0)[-1:]
    before = norm[m.start() - 1 : m.start()]
    after = norm[m.end() : m.end() + 1]
    return bool(
        (first.isascii() and first.isalpha() and before and _LATIN_LETTER.match(before))
        or (last.isascii() and last.isalpha() and after and _LATIN_LETTER.match(after))
    )


_CODE = lazy_compile(r"```[\s\S]*?(?:```|$)|(?<![a-z])`[^`\n]+`(?![a-z])")
"""Code as a chat writes it: a block fenced with three backticks (to the end when it is not
closed) or a span in backticks on one line (not from a backtick typed for an apostrophe,
"it`s", to the next)."""
_OPTION_BEFORE = lazy_compile(r"(?<![\w-])(?:--[a-z][a-z0-9-]*(?:=| +)|-[a-z] +)[\"']?$", re.ASCII)
"""A command's option just before its value: "--since=", "--since ", "-d ", '-d "'."""
_EXTENSIONS = (
    "log|txt|md|json|yaml|yml|csv|py|js|ts|sh|sql|xml|html|ini|toml|conf|cfg|out|err|bak|gz|zip"
    "|tar|png|jpg|pdf|doc|docx|xls|xlsx"
)
_FILE_AFTER = lazy_compile(rf"\.(?:{_EXTENSIONS})(?![a-z0-9])", re.ASCII)
"""A file name's known extension just after a word: "yesterday.log", "3 days ago.csv"; not
a sentence written without its space ("I saw him yesterday.he said hi", "3 days ago.ok"),
nor one whose capital begins it ("yesterday.Out of time")."""
_PATH_BEFORE = lazy_compile(r"(?:^|[\s\w.~-])/$", re.ASCII)
"""A path's slash just before a word: "logs/yesterday", "/yesterday" (not 先週/先々週)."""
_PATH_WORD = lazy_compile(r"[\w.-]*$", re.ASCII)
"""The name of a path's part before a slash: the "logs" of "logs/yesterday"."""
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」", "『": "』"}
_QUOTED_AS_TEXT = lazy_compile(
    r"(?:\b(?:regexp?|regexes|pattern|string|grep|search(?:ed|es|ing)? for|match(?:es|ed|ing)?)"
    r"(?: (?:for|like|of))?|正規表現|パターン|文字列)[:：]? ?(?:の|で|は)?$"
)
"""What before a time quoted alone names it as text to match, not a time: the regex for "3
days ago", grep 'last week', the string "yesterday", 正規表現の「3日前」 (not 'you said "last
monday" we went hiking', "was it 'last week' or earlier?")."""


def _named_in_code(norm: str, m: re.Match[str], code: Sequence[tuple[int, int]]) -> bool:
    """Whether the expression ``m`` is named as code names it, not said of a time: in
    backticks (``code``: "`journalctl --since yesterday`"), an option's value
    ("--since=yesterday", "-d 'last monday'"), part of a file's name or path ("yesterday.log",
    "logs/yesterday": :func:`_in_a_path`), or quoted alone as text to match (the regex for
    "3 days ago"; not 'you said "last monday"') or as a title (the song "Yesterday")."""
    start, end = m.start(), m.end()
    if any(first < end and start < last for first, last in code):
        return True
    if _OPTION_BEFORE.search(norm, max(0, start - 40), start):  # (an option's name is shorter)
        return True
    cased = CASED.get()
    if _FILE_AFTER.match(norm, end) and not (cased and cased[end + 1].isupper()):
        return True
    if _in_a_path(norm, start, end):
        return True
    quote = norm[start - 1 : start] if start else ""
    if not quote or _QUOTES.get(quote) != norm[end : end + 1]:
        return False
    titled = bool(cased) and cased[start].isupper()  # ("Yesterday", a song: a title)
    return titled or _QUOTED_AS_TEXT.search(norm, max(0, start - 40), start - 1) is not None


def _in_a_path(norm: str, start: int, end: int) -> bool:
    """Whether the expression at ``start``..``end`` follows a path's slash ("logs/yesterday",
    "/yesterday"): not a slash between two times ("this morning/yesterday", "last week/this
    week"), unless the path goes on beside them ("~/notes/today/yesterday",
    "backups/today/yesterday/")."""
    if not _PATH_BEFORE.search(norm, max(0, start - 2), start):
        return False
    slash = start - 1
    if not _ends_a_time(norm, slash):
        return True
    word = _PATH_WORD.search(norm, max(0, slash - 40), slash)
    at = word.start() if word else slash
    return norm[at - 1 : at] in ("/", "~") or norm[end : end + 1] == "/"


def _ends_a_time(norm: str, at: int) -> bool:
    """Whether a time expression (of any rule, read alone) ends at ``at``: the "this
    morning" of "this morning/yesterday"."""
    since = max(0, at - 40)
    return any(m.end() == at for pattern, _ in RULES for m in pattern.finditer(norm, since, at))


def parse_time_window(text: str, now: datetime, *, max_chars: int = MAX_TIME_TEXT) -> Window | None:
    """The window covering every past time expression in what a turn reads (``max_chars``) of
    ``text`` (None if there is none; the search reads ``[retrieval] max_query_chars``).

    ``now`` must be timezone-aware; days and weeks are counted in its time zone.
    """
    return union((e.start, e.end) for e in find_time_expressions(text, now, max_chars=max_chars))


_PERIOD_WORDS_EN = frozenset(
    """do did done doing happen happened happens happening go went going get got talk
    talked talking say said tell told up anything something everything new remind recap
    summarize summarise summary events way since today tonight morning afternoon evening
    night what'd discuss discussed discussing chat chatted chatting lol haha btw wait ok okay
    hey um hmm oh sorry remember mention mentioned earlier""".split()
)
"""Words any question about a period uses ("What did I do…", "Remind me what happened…",
"Recap…", "wait what did I mention earlier?"), and times of day that name no window of
their own ("yesterday evening")."""
_PERIOD_PHRASES_EN = ("walk me through", "fill me in", "catch me up")
"""Requests to be told about a period whose words alone could name a topic ("walk")."""
_PERIOD_PHRASES_JA = ("内容", "全部", "出来事")
"""Japanese words of a request about a period that name no topic (今日話した内容まとめて,
昨日話したこと全部教えて), whose kanji are not all :data:`_PERIOD_CHARS_JA`'s."""
_PERIOD_CHARS_JA = frozenset("何話言事出来起教覚今日朝夜晩件後続行過俺私僕")
"""The same in Japanese (何したっけ, 何話した, 何が起きた, 出来事を教えて, 今日の夜, 昨日の件,
その後どう, 昨日の続き, どこ行った, どう過ごした): their kanji; and the speaker's 俺, 私, 僕
(先週の金曜って俺なにしてた), as "I" and "me" are English stopwords."""

_LAUGH_EN = lazy_compile(r"w+|(?:ha|he|hi){2,}h?|lo+l(?:ol)*|lmf?ao+|rofl|xd+")
"""Laughter typed in Latin letters, which names no topic, as "lol" and "haha" do not: the ｗ,
ｗｗ and www of Japanese chat (ｗ is w after NFKC), hehe, lolol, xD."""

_LAUGH_JA = lazy_compile(r"(?:爆)?笑+(?![ぁ-ゖァ-ヺ\u4e00-\u9fff])")
"""笑 as a laugh mark, (笑), 笑笑, 爆笑, not followed by more of a word: not 笑った, 笑える,
笑顔, which tell or ask what was laughed at."""


def _names_a_topic(term: str) -> bool:
    """Whether a query term names something beside the period: a word not of
    :data:`_PERIOD_WORDS_EN` nor a laugh (:data:`_LAUGH_EN`), or a kanji or a katakana letter
    not of :data:`_PERIOD_CHARS_JA` (kana endings, した, っけ, name nothing; nor do ー and the
    ・ of a kaomoji's eyes, (´・ω・｀), which are no letters)."""
    if term.isascii():
        return term not in _PERIOD_WORDS_EN and not _LAUGH_EN.fullmatch(term)
    return any(
        ("\u4e00" <= ch <= "\u9fff" or "\u30a1" <= ch <= "\u30fa") and ch not in _PERIOD_CHARS_JA
        for ch in term
    )


def time_is_asked(
    text: str, found: Sequence[TimeExpression], *, max_chars: int = MAX_TIME_TEXT
) -> bool:
    """Whether the time ``text`` names (``found``: its :func:`find_time_expressions`, read
    with the same ``max_chars``) is what it asks about: outside those expressions it says
    only what any question about a period says ("What did I do yesterday?", "What happened
    last week?", 昨日何したっけ), so what occurred then is the answer whatever its words;
    "What's the capital of France? I forgot it last week" asks about France."""
    if not found:
        return False
    rest = _LAUGH_JA.sub(" ", _normalise(within(text, max_chars)))
    for expr in found:
        rest = rest.replace(expr.surface, " ")
    for phrase in _PERIOD_PHRASES_EN:
        rest = rest.replace(phrase, " ")
    for phrase in _PERIOD_PHRASES_JA:
        rest = rest.replace(phrase, " ")
    return not any(_names_a_topic(term) for term in query_terms(rest))


_ISO_PART = r"\d{4}-\d{2}(?:-\d{2})?(?:[t ][0-9:.]+(?:z|[+-]\d{2}:?\d{2})?)?"
_ISO_RANGE = lazy_compile(
    rf"^\s*(?P<a>{_ISO_PART})\s*(?:/|\.\.|–|—|~|〜|～|\bto\b|\s-\s)\s*(?P<b>{_ISO_PART})\s*$"
)
_ISO_SINGLE = lazy_compile(rf"^\s*(?P<a>{_ISO_PART})\s*$")
_ISO_SEP = r"(?:/|\.\.|–|—|~|〜|～)"
_ISO_BROKEN = lazy_compile(
    rf"^\s*(?:{_ISO_SEP}\s*)?{_ISO_PART}(?:\s*{_ISO_SEP}\s*{_ISO_PART})*\s*{_ISO_SEP}?\s*$"
)
"""ISO dates and range marks alone, however many ("2026-05-25/", "/2026-05-31", three dates):
a range an LLM wrote broken, whose one date is not the time it meant ("since 25 May")."""


def _iso_bound(value: str, now: datetime, *, end: bool) -> datetime | None:
    value = value.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}", value):
            y, m = map(int, value.split("-"))
            start, stop = month_window(y, m, now)
            return stop if end else start
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            d = date.fromisoformat(value)
            return midnight_of(d + timedelta(days=1), now) if end else midnight_of(d, now)
        moment = parse_iso(value.upper())
    except (ValueError, OverflowError):  # not a date, or past the calendar's edge
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=now.tzinfo)


def parse_iso_range(value: str, now: datetime) -> Window | None:
    """Read an ISO date or date range (``2026-05-11/2026-05-17``, ``2026-05``, ``2026-05-18``).

    End dates are inclusive in the text and exclusive in the result; the
    window is clipped to ``now``; a range in the future or reversed is None.
    """
    if not isinstance(value, str) or now.tzinfo is None:
        return None
    text = _normalise(value)
    m = _ISO_RANGE.match(text) or _ISO_SINGLE.match(text)
    if m is None:
        return None
    start = _iso_bound(m.group("a"), now, end=False)
    b = m.groupdict().get("b") or m.group("a")
    end = _iso_bound(b, now, end=True)
    if start is None or end is None:
        return None
    end = min(end, now)
    if start >= end or start.year < 1900:  # 0001-01-01/…: all time, not a window
        return None
    return start, end


def is_iso_range(value: str) -> bool:
    """Whether ``value`` is written as an ISO range (``2026-05-31/2026-05-01``), a broken one
    too (``2026-05-25/``, three dates), whether or not :func:`parse_iso_range` gives it a
    window: a reversed one, one in the future or a broken one is no time expression to read
    word by word either (the date of ``2026-05-25/`` is not "since 25 May")."""
    if not isinstance(value, str):
        return False
    text = _normalise(value)
    if _ISO_RANGE.match(text) is not None:
        return True
    return _ISO_BROKEN.match(text) is not None and _ISO_SINGLE.match(text) is None


def widen(window: Window, now: datetime | None = None) -> Window:
    """``window`` with its end pushed later by the recording lag (half its length, 1–7 days).

    What happened "last weekend" is often told on Monday: a memory of an
    event is written during or after it, so a search by ``occurred_at``
    must look a little past the window. The end is clipped to ``now``.
    """
    start, end = window
    lag = min(max((end - start) / 2, MIN_LAG), MAX_LAG)
    stop = end + lag
    return start, stop if now is None else min(stop, now)


def window_filters(filters: Filters, window: Window, *, lag: bool = True) -> Filters:
    """``filters`` narrowed to ``window``: its start replaces ``since_ts``, its end caps ``until_ts``.

    With ``lag`` the end is first widened (:func:`widen`). The start replaces
    the configured day range, so "three years ago" is searched even when
    ``occurred_day_range`` is one year; a day range the caller gave
    (``since_is_asked``) still holds.
    """
    if lag:
        window = widen(window)
    since = math.floor(window[0].timestamp())
    if filters.since_is_asked and filters.since_ts is not None:
        since = max(since, filters.since_ts)
    until = math.ceil(window[1].timestamp()) - 1
    if filters.until_ts is not None:
        until = min(until, filters.until_ts)
    return replace(filters, since_ts=since, until_ts=until)
