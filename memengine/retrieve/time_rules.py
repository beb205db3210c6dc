"""The rules that read time expressions: each a pattern and the window its match names.

:data:`RULES` holds them in order, longest and most specific patterns first (the English
ones read lower-cased text with ASCII word edges), and a rule gives None for a span that
names no past window (a plan, a thing's year). How a sentence is told (:func:`_told_as_past`)
and what "since" runs from are read here too; :mod:`.temporal` finds expressions with them.
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_right
from collections.abc import Callable
from contextvars import ContextVar
from datetime import date, datetime, timedelta

from ..lazy_re import LazyPattern, lazy_compile
from .dates import (
    Window,
    add_months,
    days_window,
    en_number,
    holiday_days,
    holiday_in,
    ja_number,
    just_past,
    last_season,
    latest_before_today,
    local_today,
    midnight_of,
    month_window,
    months_ago,
    one_day,
    recent_season,
    season_window,
    this_season,
    union,
    week_start,
    window_around,
    year_window,
)
from .day_parts import (
    DAY_END_HOUR,
    EVENING_HOUR,
    NOON_HOUR,
    back_from_now,
    hours_of_day,
    night,
    users_day,
)

__all__ = [
    "CASED",
    "JA_NUM",
    "RULES",
    "SENTENCES",
    "SENTENCE_END",
    "WEEKDAYS_EN",
    "Sentences",
    "kana_word_at",
    "sentences_of",
    "since_around",
    "weekday_index",
]

_BREAK_START = {"spring": (3, 20), "summer": (7, 20), "winter": (12, 20)}
"""When a school break (春休み, 夏休み, 冬休み) begins, about: before that day this year's
has not begun."""


def _school_break(m: re.Match[str], now: datetime) -> Window | None:
    """夏休み (春休み, 冬休み) named alone: the season of the latest break that has begun
    (on 3 June, last year's summer; on 5 January, the winter begun in December); none in a
    sentence that looks ahead (夏休みに沖縄行く予定, 夏休みどこ行く？: :func:`_looks_ahead`)."""
    if _looks_ahead(m):
        return None
    name = _SEASONS_JA[m.group("s")]
    month, day = _BREAK_START[name]
    year = now.year if midnight_of(date(now.year, month, day), now) <= now else now.year - 1
    return season_window(name, year, now)


_AHEAD = lazy_compile(
    r"\b(?:this year|next (?:year|month|week|time)|gonna|plan(?:s|ning)? to|looking forward|"
    r"(?<!did )(?<!didn't )(?<!didn’t )(?:will|won['’]t|shall)|"
    r"(?:am|is|are|i['’]m|we['’]re|you['’]re|he['’]s|she['’]s|they['’]re|are (?:you|we|they)|"
    r"is (?:he|she|it)) (?:going to|gonna)|should (?:i|we)|"
    r"(?<!did )(?<!didn['’]t )(?:i|we|you) (?:need|have|want) to|"
    r"(?:i|we|you|he|she|they|it)['’]ll|tomorrow|upcoming|coming up|due (?:in|on|by|at)|"
    r"(?:sign(?:ed|ing)?|signs) up|registered for|scheduled|booked|decided to|tickets? (?:for|to)|"
    r"(?:ends|starts|begins|opens|closes) (?:in|on)|(?:is|are|['’]s|['’]re) (?:in|on)|"
    r"(?:i['’]m|i am|we['’]re|we are|you['’]re|he['’]s|she['’]s|they['’]re|it['’]s) [a-z]{2,}ing|"
    r"(?:i|we|you|he|she|they)['’]d(?! (?:been|had|already|never|just|gone|done|seen))|would)\b"
    r"|今年|今度|次の|来月|来年|来週|明日|予定|予約|つもり|までに|になったら|しよう|どうする|どうしよう|楽しみ"
    r"|ことに(?:な|決ま|し)(?:った|りました|ました)|[るくうぐすつぬむぶ](?:って|と)(?:言|話|聞|決)"
    r"|(?:曜日?|[0-9一二三四五六七八九十]日)に(?:変更|延期|ずら|決ま)|(?:変更|延期)にな"
    r"|曜日?になった(?=[。！？!?、,.\s]|$|よ|ね|んだ|って|から|けど)"
    r"|(?:[こそとのもろごぼ]う|[べみけせてねれえ]よう)(?=[よかぜね！!。?？、\s]|$)"
    r"|(?:[いきぎしじちにびみりえけげせぜてでねべめれ]|[見寝出居得来])たい"
    r"(?=[。！？!?、,.\s]|$|な|ん|の|けど|と思|です|よ|ね|わ|って)"
)
"""Words of a sentence that looks ahead: a month or a day named in it that is still to
come is that one ("I'm going to Paris in December", "my mom will visit", "should we go",
"she's due in December", "I signed up for a race on December 14", "the lease ends in
December", "the party is on Saturday", "I'm meeting Sarah on Friday", "she said she'd
come on Friday", 12月に引っ越す予定, 12月に行きたいです, 12月に引っ越すことになった,
金曜に来るって言ってた, 週末映画行こうよ; a plan moved to a day or set on it:
木曜に変更になった, 金曜に延期, 会議が金曜に決まった, 木曜になった。; not a past deed on
the day: 金曜にパスワードを変更した, 金曜日になって晴れた, 宿題は金曜日にしたよ), not
last year's. Past forms do not ("I planned to", "what did Will say", ぜったい, 冷たい雨,
もったいない, ありがたい)."""


_BACK = lazy_compile(
    r"\b(?:did|didn['’]t|was|were|wasn['’]t|had|went|got|said|told|saw|came|bought|met|took|"
    r"made|ate|spent|paid|gave|left|felt|thought|happened|"
    r"(?<!['’]m )(?<!am )(?<!is )(?<!are )(?<!['’]s )(?<!['’]re )(?<!so )(?<!very )(?<!really )"
    r"(?<!too )(?<!be )(?<!been )(?<!feel )(?<!get )(?<!getting )(?<!kinda )(?<!pretty )"
    r"(?!hundred\b|kindred\b|sacred\b|naked\b|wicked\b|beloved\b)[a-z]{3,}(?<!e)ed)\b"
    r"|(?:た|(?<=[^るくうぐすつぬむぶなのい]ん)だ|(?<=い)だ|だ(?=っけ))"
    r"(?:っけ|よね|よな|よ|ね|な|の|か|んだ|けど)?(?:[？?！!。、,.\s]|$)|ました|でした"
    r"|(?:った|(?<![るくうぐすつぬむぶなのい])んだ|いた|した|えた|てた|でた|きた)(?![いくらめ])"
)
"""Words that look back: a verb in the past (did, was, went, …ed but not "so excited", "I'm
stressed", "hundred"; した, だった, 読んだ, 何だっけ, 何してたっけ, 行きました; not the
explanatory あるんだ, 好きなんだ, nor the copula 雨だ)."""


SENTENCE_END = lazy_compile(
    r"[。！？!?\n]|(?<!\bmr)(?<!\bmrs)(?<!\bms)(?<!\bdr)(?<!\bst)(?<!\bvs)(?<!\bjr)(?<!\bsr)"
    r"\.(?=\s|$)"
)


class Sentences:
    """Where the sentences of one text begin and end, found once, and what each was found
    to hold: every time expression of a sentence reads that sentence, and a message that
    is one long sentence ("on Monday at 1pm, Tuesday at 2pm, …") was scanned from its
    start and searched whole again for each of its expressions, a cost that grew with the
    square of its length. :func:`~.temporal.find_time_expressions` sets one for the text
    it reads (:data:`SENTENCES`); it holds that text no longer than the call."""

    __slots__ = ("_ends", "_found", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._ends: list[int] | None = None
        self._found: dict[tuple[LazyPattern, int, int], bool] = {}

    def start_at(self, at: int) -> int:
        """Where the sentence that holds the character at ``at`` begins, as the text read
        up to ``at`` ends its sentences: after the last :data:`SENTENCE_END` before it, or at
        ``at`` itself after a full stop, which ends a sentence there as the text's end
        does ("it rained.yesterday")."""
        if self._ends is None:
            self._ends = [e.end() for e in SENTENCE_END.finditer(self.text)]
        if at and SENTENCE_END.match(self.text, at - 1, at):
            return at
        before = bisect_right(self._ends, at)
        return self._ends[before - 1] if before else 0

    def bounds(self, start: int, end: int) -> tuple[int, int]:
        """The sentence that holds the span ``start``–``end``: from :meth:`start_at` its
        start to the end of the first :data:`SENTENCE_END` after it (or the text's end)."""
        first = self.start_at(start)
        ends = self._ends or []
        after = bisect_right(ends, end)
        return first, ends[after] if after < len(ends) else len(self.text)

    def holds(self, pattern: LazyPattern, m: re.Match[str]) -> bool:
        """Whether ``pattern`` is found in the sentence that holds ``m`` (searched in the
        sentence alone, as its own string: its edges are those of the text)."""
        first, last = self.bounds(m.start(), m.end())
        key = (pattern, first, last)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = pattern.search(self.text[first:last]) is not None
        return found


SENTENCES: ContextVar[Sentences | None] = ContextVar("SENTENCES", default=None)
"""The sentences of the text being read (:class:`Sentences`), when one is."""


def sentences_of(text: str) -> Sentences:
    """The sentences of ``text``: :data:`SENTENCES` when it holds them, else found now."""
    sentences = SENTENCES.get()
    return sentences if sentences is not None and sentences.text is text else Sentences(text)


def _in_sentence(pattern: LazyPattern, m: re.Match[str]) -> bool:
    """Whether ``pattern`` is found in the sentence of the message that holds ``m``
    (sentences end at 。！？!?, a line break or a full stop before a space, not that of
    "Dr." or "Mrs.")."""
    return sentences_of(m.string).holds(pattern, m)


def _looks_ahead(m: re.Match[str]) -> bool:
    """Whether the sentence holding ``m`` looks ahead (:data:`_AHEAD`): "What did I do in
    December? I'll tell Mum" asks about the past all the same."""
    return _in_sentence(_AHEAD, m)


def _told_as_past(m: re.Match[str]) -> bool:
    """Whether a time named by ``m`` without "last" or a year is told as past: no から or 以降
    runs from it (12月3日から出張 is a plan as often), and its sentence looks back
    (:data:`_BACK`: "what about December?" may be either) and not ahead
    (:func:`_looks_ahead`; "Worked late. Seeing Mike on Friday." is a plan). A month or day
    still to come is then last year's when that one ended less than :data:`JUST_PAST_DAYS`
    ago; a weekday or "the weekend" the latest one."""
    return not _since_at(m) and _in_sentence(_BACK, m) and not _looks_ahead(m)


def _this_year_date(
    month: int, day: int, now: datetime, m: re.Match[str], *, since: bool = False
) -> Window | None:
    """That day of this year, or None when it is still to come (a plan, not a memory:
    "the wedding is on June 20" must not search last June) unless last year's ended
    less than :data:`JUST_PAST_DAYS` ago and ``m`` is told as past (:func:`_told_as_past`);
    after "since" (or before 以来), which only points back, a day still to come is last
    year's ("since 3 December" said in January)."""
    try:
        d = date(now.year, month, day)
        if midnight_of(d, now) > now:
            last = date(now.year - 1, month, day)
            ended = midnight_of(last + timedelta(days=1), now)
            if not since and not (just_past(ended, now) and _told_as_past(m)):
                return None
            d = last
    except ValueError:
        return None
    return days_window(d, d, now)


# -- the rules ----------------------------------------------------------------------------------

RuleFn = Callable[[re.Match[str], datetime], "Window | None"]
Rule = tuple[LazyPattern, RuleFn]

_WEEKDAYS_JA = "月火水木金土日"
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS_EN = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_MONTH_RE = "|".join(sorted(_MONTHS_EN, key=len, reverse=True))
_SEASONS_JA = {
    "春": "spring",
    "夏": "summer",
    "秋": "autumn",
    "冬": "winter",
    "なつ": "summer",
    "ふゆ": "winter",
}
_SEASONS_EN = {"spring": "spring", "summer": "summer", "autumn": "autumn", "fall": "autumn"}
_SEASONS_EN["winter"] = "winter"
_KANJI = "一二三四五六七八九十"
JA_NUM = rf"(?<![0-9])[0-9]{{1,4}}|(?<![{_KANJI}数])[{_KANJI}]{{1,4}}"
"""A number as it starts (a run of digits is not read again from each of its digits; 数十 is
no ten)."""
_JA_MONTH = rf"(?P<m>\d{{1,2}}|(?<![{_KANJI}])[{_KANJI}]{{1,3}})"
"""A month's number before 月, in digits or kanji (12月, 十二月; not a kanji run's tail)."""
_JA_DAY = rf"(?P<d>\d{{1,2}}|[{_KANJI}]{{1,3}})"
"""A day's number after a month, in digits or kanji (19日, 十九日)."""
_MONTHS_COUNTED = (
    r"前|後|ほど|程|くらい|ぐらい|位|間|以内|以上|半|ぶり|振り|遅れ|分|足らず|余り|経|目|連続"
    r"|近く|越し|ごと|毎|ばかり|にわた|雨|蝿"
)
"""What follows a month's number in kanji when it counts months, not names one (一月ぶり,
三月分の家賃, 一月以上; 五月雨, 五月蝿い are words): no month is read there."""
_EN_NUM = r"[0-9]+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple(?: of)?"
_EN_COUNT = r"[0-9]+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple(?: of)?"
"""A count that says it is one without an article before "last" ("last 10 days"; not the
"a" of "at last a day off")."""


def _day_offset(offset: int) -> Callable[[re.Match[str], datetime], Window | None]:
    """昨日, "yesterday" (``offset`` -1), 一昨日 (-2): that calendar day, and before
    :data:`.day_parts.MORNING_CUTOFF_HOUR` the day before it too (at 00:30 the night is
    still the day's, so "yesterday" may be either; the window is a soft bonus)."""

    def rule(_: re.Match[str], now: datetime) -> Window | None:
        d = local_today(now) + timedelta(days=offset)
        return days_window(users_day(now) + timedelta(days=offset), d, now)

    return rule


def _week_offset(offset: int) -> Callable[[re.Match[str], datetime], Window | None]:
    def rule(_: re.Match[str], now: datetime) -> Window | None:
        start = week_start(local_today(now)) + timedelta(weeks=offset)
        return days_window(start, start + timedelta(days=6), now)

    return rule


def _month_offset(offset: int) -> Callable[[re.Match[str], datetime], Window | None]:
    def rule(_: re.Match[str], now: datetime) -> Window | None:
        y, m = add_months(now.year, now.month, offset)
        return month_window(y, m, now)

    return rule


def _year_offset(offset: int) -> Callable[[re.Match[str], datetime], Window | None]:
    def rule(_: re.Match[str], now: datetime) -> Window | None:
        return year_window(now.year + offset, now)

    return rule


def _last_weekend(_: re.Match[str], now: datetime) -> Window | None:
    monday = week_start(local_today(now))
    return days_window(monday - timedelta(days=2), monday - timedelta(days=1), now)


_AGO_MAX = {"day": 73_000, "week": 10_400, "month": 2_400, "year": 200}
"""The most of each unit "N … ago" is read for: about 200 years."""


def _ago(unit: str, n: int, now: datetime) -> Window | None:
    if n <= 0 or n > _AGO_MAX[unit]:
        return None
    if unit == "day":
        d = local_today(now) - timedelta(days=n)
        return days_window(d - timedelta(days=1), d + timedelta(days=1), now)
    if unit == "week":
        return window_around(now - timedelta(weeks=n), timedelta(days=3))
    if unit == "month":
        return window_around(months_ago(n, now), timedelta(days=15))
    return window_around(months_ago(12 * n, now), timedelta(days=183))


def _span_ago(
    oldest: timedelta, newest: timedelta
) -> Callable[[re.Match[str], datetime], Window | None]:
    """From ``oldest`` ago to ``newest`` ago."""

    def rule(_: re.Match[str], now: datetime) -> Window | None:
        return now - oldest, now - newest

    return rule


def _few_days(_: re.Match[str], now: datetime) -> Window | None:
    today = local_today(now)
    return days_window(today - timedelta(days=6), today - timedelta(days=2), now)


def _ja_ago(m: re.Match[str], now: datetime) -> Window | None:
    n = ja_number(m.group("n"))
    unit = {"日": "day", "週間": "week", "週": "week", "年": "year"}.get(m.group("u"), "month")
    return _ago(unit, n, now) if n is not None else None


_UNITS = {"日": "day", "週": "week", "年": "year"}
"""A Japanese unit's first character as the unit it names (any other is a month)."""


def _within_last(m: re.Match[str], now: datetime) -> Window | None:
    """ "the last 3 days", "over the past two weeks", ここ3日, 過去2ヶ月: from that long ago
    until now (数 and "a few": about four)."""
    bare = m.groupdict().get("n2")  # "last two weeks I was sick": a stretch only told of in
    mine = bare and re.search(r"\b(?:my|our|your|his|her|their) $", m.string[: m.start()])
    told = mine or _BACK.search(m.string) is not None  # the past ("summarize my last 7 days";
    if bare and (not told or _looks_ahead(m)):  # not "batteries last
        return None  # two weeks", "my last 10 days in London I'll…")
    token = m.group("n") or bare or ""
    n = 4 if token in ("数", "few") else (ja_number(token) or en_number(token))
    unit = m.group("u").rstrip("s")
    unit = _UNITS.get(unit[0], "month") if not unit.isascii() else unit
    if n is None or n <= 0 or n > _AGO_MAX[unit]:
        return None
    if unit in ("day", "week"):
        return now - timedelta(days=n * (7 if unit == "week" else 1)), now
    return months_ago(n * (12 if unit == "year" else 1), now), now


def _en_ago(m: re.Match[str], now: datetime) -> Window | None:
    n = en_number(m.group("n"))
    return _ago(m.group("u"), n, now) if n is not None else None


def _this_weekend(_: re.Match[str], now: datetime) -> Window | None:
    """今週末: this week's Saturday and Sunday (clipped to now: none before Saturday)."""
    saturday = week_start(local_today(now)) + timedelta(days=5)
    return days_window(saturday, saturday + timedelta(days=1), now)


def _range_ago(m: re.Match[str], now: datetime) -> Window | None:
    """ "1-2 weeks ago", 2、3日前, 1〜2週間前: from the larger count ago to the smaller."""
    unit = m.group("u")
    unit = {"日": "day", "週間": "week", "週": "week", "年": "year"}.get(unit, unit)
    unit = unit if unit in _AGO_MAX else "month"
    counts = [ja_number(m.group(g)) or en_number(m.group(g)) for g in ("a", "n")]
    windows = [_ago(unit, n, now) for n in counts if n is not None]
    return union(windows) if len(windows) == 2 and all(windows) else None


def _weekday_weeks_ago(weeks: int) -> Callable[[re.Match[str], datetime], Window | None]:
    """先週の金曜 (``weeks`` 1), 先々週の土曜 (2): that weekday of the week so many weeks
    before this one, one day, not the whole week."""

    def rule(m: re.Match[str], now: datetime) -> Window | None:
        d = week_start(local_today(now)) - timedelta(weeks=weeks)
        d += timedelta(days=weekday_index(m.group("wd")))
        return days_window(d, d, now)

    return rule


def _en_weekday_weeks_ago(m: re.Match[str], now: datetime) -> Window | None:
    """ "Saturday two weeks ago": that weekday of the week so many weeks back, as
    :func:`_weekday_weeks_ago` (the weeks counted, not days: "two weeks ago" alone is about
    fourteen days, give or take three)."""
    n = en_number(m.group("n"))
    return _weekday_weeks_ago(n)(m, now) if n is not None and 1 <= n <= 52 else None


def _en_weekday_before_last(m: re.Match[str], now: datetime) -> Window | None:
    """ "the Saturday before last": the one before the latest such day (said on a Wednesday,
    not last week's Saturday but the one before it)."""
    d = latest_before_today(weekday_index(m.group("wd")), now) - timedelta(weeks=1)
    return days_window(d, d, now)


_MONTH_BACK = {"今月": 0, "先月": 1, "せんげつ": 1, "先々月": 2, "先先月": 2, "せんせんげつ": 2}
_MONTH_BACK |= {"this month": 0, "last month": 1, "the month before last": 2}
"""How many months back each month named before a day is (今月の1日, 先月の15日)."""


def _day_of_named_month(m: re.Match[str], now: datetime) -> Window | None:
    """今月の1日, 先月の15日, "the 3rd of last month": that day of the month named, not the
    whole month (None for one still to come this month, a plan, or no such day: 先月の31日
    said in December names no day, as 2月30日 does not); 先月の1日〜10日 and 先月の1日から
    10日まで are those days (:func:`_through_day`)."""
    said = m.groupdict()
    day = ja_number(said["d"]) if said.get("d") else int(said["d2"])
    year, month = add_months(now.year, now.month, -_MONTH_BACK[said["p"]])
    if day is None or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    d = date(year, month, day)
    return _through_day(m, days_window(d, d, now), now) if d <= local_today(now) else None


_TO_DAY = (
    r"(?:\s*(?:〜|～|~|-|–|から)\s*"
    rf"(?P<e>\d{{1,2}}|(?<![{_KANJI}])[{_KANJI}]{{1,3}})日(?![間目分中前後])(?:まで)?)?"
)
"""The end of a range of days after a day (1日〜10日, 1日から10日まで; not 1日から10日間, a
length): the day named last, in the first one's month."""


def _through_day(m: re.Match[str], window: Window | None, now: datetime) -> Window | None:
    """``window``, one day, run on to the day of :data:`_TO_DAY` that ``m`` ends with, in the
    same month (its last day at most: 先月の1日〜31日 in a month of 30), or in the next when it
    is an earlier day (25日〜5日); ``window`` alone when ``m`` names no such day."""
    last = m.groupdict().get("e")
    n = ja_number(last) if last else None
    if window is None or not n:
        return window
    first = window[0].date()
    year, month = add_months(first.year, first.month, 1 if n < first.day else 0)
    last_day = min(n, calendar.monthrange(year, month)[1])
    return days_window(first, date(year, month, last_day), now)


_DAY_BACK = {"先週": "week", "せんしゅう": "week", "先々週": "2week", "先先週": "2week"}
_DAY_BACK |= {"せんせんしゅう": "2week", "先月": "month", "せんげつ": "month"}
_DAY_BACK |= {"去年": "year", "昨年": "year", "きょねん": "year"}
"""The period each word before の今日 steps back by (先週の今日: a week; 去年の今日: a year)."""


def _same_day_back(m: re.Match[str], now: datetime) -> Window | None:
    """先週の今日, 先月の今日, 去年の今日, "this day last week", "a year ago today": the day
    that is today a week, two weeks, a month or a year back (the month's last day when that
    month is shorter: 先月の今日 said on 31 March is 28 February)."""
    said = m.groupdict()
    back = _DAY_BACK.get(said.get("p") or "", said.get("u") or said.get("u2") or "")
    today = local_today(now)
    if back in ("week", "2week"):
        d = today - timedelta(weeks=2 if back == "2week" else 1)
        return days_window(d, d, now)
    year, month = add_months(today.year, today.month, -12 if back == "year" else -1)
    d = date(year, month, min(today.day, calendar.monthrange(year, month)[1]))
    return days_window(d, d, now)


def _ja_weekday_this_week(m: re.Match[str], now: datetime) -> Window | None:
    offset = _WEEKDAYS_JA.index(m.group("wd"))
    d = week_start(local_today(now)) + timedelta(days=offset)
    return days_window(d, d, now) if d < local_today(now) else None


def weekday_index(name: str) -> int:
    """Monday 0 … Sunday 6 of a weekday written in Japanese (金) or English (friday, fri)."""
    if name in _WEEKDAYS_JA:
        return _WEEKDAYS_JA.index(name)
    return [day[:3] for day in WEEKDAYS_EN].index(name[:3])


def _latest_weekday(m: re.Match[str], now: datetime) -> Window | None:
    """The latest such weekday before today (この前の日曜: within the last seven days)."""
    d = latest_before_today(weekday_index(m.group("wd")), now)
    return days_window(d, d, now)


def _past_weekday(m: re.Match[str], now: datetime) -> Window | None:
    """火曜に歯医者行った, "Pickle ate my sock on Tuesday": a weekday named alone, told as
    past (:func:`_told_as_past`), is the latest one before today (:func:`_latest_weekday`);
    else none (a plan as often: "I'm seeing her on Friday")."""
    return _latest_weekday(m, now) if _told_as_past(m) else None


def _past_weekend(m: re.Match[str], now: datetime) -> Window | None:
    """週末, 土日, "over the weekend" told as past (:func:`_told_as_past`): the latest weekend
    (:func:`_last_weekend`), and on a Saturday or Sunday the one under way with it."""
    if not _told_as_past(m):
        return None
    last = _last_weekend(m, now)
    return (last[0], now) if last is not None and local_today(now).weekday() >= 5 else last


def _weekends_ago(m: re.Match[str], now: datetime) -> Window | None:
    """ "two weekends ago": the weekend that many weekends back (one: the last weekend)."""
    n = en_number(m.group("n"))
    if n is None or not 1 <= n <= _AGO_MAX["week"]:
        return None
    saturday = week_start(local_today(now)) - timedelta(days=2, weeks=n - 1)
    return days_window(saturday, saturday + timedelta(days=1), now)


def _day_of_month(m: re.Match[str], now: datetime) -> Window | None:
    """15日に先輩と会った, "on the 15th" told as past (:func:`_told_as_past`): that day of this
    month, or of last month while this month's is still to come."""
    day = int(m.group("d"))
    if not _told_as_past(m) or not 1 <= day <= 31:
        return None
    year, month = now.year, now.month
    if day > now.day:
        year, month = add_months(year, month, -1)
    if day > calendar.monthrange(year, month)[1]:  # "the 30th" said in March: January's
        year, month = add_months(year, month, -1)
    d = date(year, month, day)
    return days_window(d, d, now)


def _season_of_year(m: re.Match[str], now: datetime) -> Window | None:
    """ "summer 2021", "the summer of 2021": that season of that year."""
    year = int(m.group("y"))
    if not 1900 <= year <= now.year:
        return None
    return season_window(_SEASONS_EN[m.group("s")], year, now)


def _en_last_weekday(m: re.Match[str], now: datetime) -> Window | None:
    today = local_today(now)
    latest = latest_before_today(weekday_index(m.group("wd")), now)
    if latest >= week_start(today):  # "last Tuesday" said on Thursday: either Tuesday
        return days_window(latest - timedelta(weeks=1), latest, now)
    return days_window(latest, latest, now)


def _ja_season(m: re.Match[str], now: datetime) -> Window | None:
    name = _SEASONS_JA[m.group("s")]
    prefix = m.group("p") or ""
    if prefix[:-1].isdigit():  # 2025年の夏 (令和7年の夏)
        return season_window(name, int(prefix[:-1]), now)
    # in January and February this winter began last year: 去年の冬 is the one before it
    current = 1 if name == "winter" and now.month <= 2 else 0
    if _JA_YEARS.get(prefix, 0) < 0:  # 去年の夏, きょねんのなつ, おととしの冬
        return season_window(name, now.year + _JA_YEARS[prefix] - current, now)
    if prefix == "今年":
        return this_season(name, now)
    if prefix == "この前の":
        return last_season(name, now)
    return recent_season(name, now)


def _en_season(m: re.Match[str], now: datetime) -> Window | None:
    name = _SEASONS_EN[m.group("s")]
    if m.group("p") == "this":
        return this_season(name, now)
    return last_season(name, now)


def _ja_year_month(m: re.Match[str], now: datetime) -> Window | None:
    month = ja_number(m.group("m")) or 0  # (12月, 十二月)
    if not 1 <= month <= 12:
        return None
    prefix = m.groupdict().get("p")
    if prefix is None:
        if month <= now.month:
            return month_window(now.year, month, now)
        last = month_window(now.year - 1, month, now)  # 12月以来, 12月に何してた in January
        return last if _back_from(m) or (just_past(last[1], now) and _told_as_past(m)) else None
    if prefix.endswith("年") and prefix[:-1].isdigit():
        year = int(prefix[:-1])
    else:
        year = now.year + _JA_YEARS[prefix]
    return month_window(year, month, now)


_JA_YEARS = {
    "去年": -1,
    "昨年": -1,
    "きょねん": -1,
    "さくねん": -1,
    "一昨年": -2,
    "おととし": -2,
    "いっさくねん": -2,
    "今年": 0,
}
_EN_YEARS = {"last year": -1, "the year before last": -2, "this year": 0}


def _ja_date(m: re.Match[str], now: datetime) -> Window | None:
    """3月19日, 去年の3月19日, 2025年3月19日: that day (this year's by :func:`_this_year_date`
    when no year is named), or the days of a range from it (3月1日〜3日: :func:`_through_day`)."""
    return _through_day(m, _ja_day(m, now), now)


def _ja_day(m: re.Match[str], now: datetime) -> Window | None:
    month, day = ja_number(m.group("m")) or 0, ja_number(m.group("d")) or 0  # (十二月十九日)
    named = m.groupdict().get("p")
    if m.groupdict().get("y") or named:
        year = int(m.group("y")) if m.groupdict().get("y") else now.year + _JA_YEARS[named or ""]
        if year < 1900:  # 1234年5月6日: a number, not a date to search
            return None
        try:
            d = date(year, month, day)
        except ValueError:
            return None
        return days_window(d, d, now)
    if not 1 <= month <= 12:
        return None
    return _this_year_date(month, day, now, m, since=_back_from(m))


def _ja_year(m: re.Match[str], now: datetime) -> Window | None:
    year = int(m.group("y"))
    return year_window(year, now) if 1900 <= year <= now.year else None


_MAY_YEAR = lazy_compile(r",? (?:of )?(?:this|last) year\b")
"""A year after a lower-case "may" (in may this year, in may of last year): the month."""


def _month_word(m: re.Match[str]) -> bool:
    """Whether the month word of ``m`` (after in, since, late…) is the month: never before
    's ("in june's house", "a friend of Jan's"), and "may" written lower-case only before a
    year, punctuation or the end ("in may." but not "logging in may take a while")."""
    after = m.string[m.end("mon") : m.end("mon") + 2]
    last = (m.group("p") or "").strip() == "last"  # "last may", "last March's trip"
    if after in ("'s", "’s") and not last:
        return False
    cased = CASED.get()
    if m.group("mon") != "may" or m.group("y") or last:
        return True
    if cased and cased[m.start("mon")].isupper():
        return True
    return after[:1] in ("", *".,;:!?)") or _MAY_YEAR.match(m.string, m.end("mon")) is not None


def _en_month(m: re.Match[str], now: datetime) -> Window | None:
    if not _month_word(m):
        return None
    month = _MONTHS_EN[m.group("mon")]
    prefix = (m.group("p") or "").strip()
    year_text = m.group("y")
    if year_text:
        return month_window(int(year_text), month, now)
    if prefix == "last":
        year = now.year if month < now.month else now.year - 1
        return month_window(year, month, now)
    since = prefix == "since" or _back_from(m)
    if (  # "in June" said in May: a plan; "what did I do in December?" in January: the last
        month > now.month
        and not since
        and not (just_past(month_window(now.year - 1, month, now)[1], now) and _told_as_past(m))
    ):
        return None
    start, end = month_window(now.year if month <= now.month else now.year - 1, month, now)
    return (start, now) if since or _since_at(m) else (start, end)


_MONTH_BEFORE = lazy_compile(r"\b(?:in|during|since|early|mid|late|of)\s+$")
"""What before a lower-case "may" makes it the month ("in may last year", not "it may last
year-round")."""

_MONTH_BEFORE_CHARS = 64
"""How far before a lower-case "may" :data:`_MONTH_BEFORE` is looked for: its longest word
and the space after it (a scan from the text's start for each "may" took 0.8 s over 20,000
characters of "it may last year, ")."""


def _month_of_named_year(m: re.Match[str], now: datetime) -> Window | None:
    """ "in April last year", "last year in March", "March 3rd last year", "the 3rd of March
    of last year": that month (or day) of the year named, not the year and the month apart.
    A lower-case "may" is the verb ("it may last year-round")."""
    cased = CASED.get()
    written = cased and cased[m.start("mon")].isupper()
    before = max(0, m.start() - _MONTH_BEFORE_CHARS)  # (not the whole text for each "may")
    if (
        m.group("mon") == "may"
        and not written
        and not _MONTH_BEFORE.search(m.string, before, m.start())
    ):
        return None
    year = now.year + _EN_YEARS[m.group("p")]
    month = _MONTHS_EN[m.group("mon")]
    day = m.groupdict().get("d") or m.groupdict().get("d2")
    if day is None:
        return month_window(year, month, now)
    try:
        d = date(year, month, int(day))
    except ValueError:
        return None
    return days_window(d, d, now)


def _en_month_day(m: re.Match[str], now: datetime) -> Window | None:
    month = _MONTHS_EN[m.group("mon")]
    day = int(m.group("d"))
    year_text = m.group("y")
    if year_text:
        return one_day(int(year_text), month, day, now)
    return _this_year_date(month, day, now, m, since=_back_from(m))


_DATE_BEFORE = lazy_compile(r"\b(?:on|by|until|till|since|before|after)\s+$")
_DOTTED_BEFORE = lazy_compile(
    r"(?:^|[^\w\s.]|[\u3040-\u30ff\u3400-\u9fff]|\b(?:on|by|since|until|till|before|after|from"
    r"|between|and))\s*$"
)
"""What may come before a date written with dots (2026.5.3): the start, punctuation,
Japanese, or a date's preposition; not a product's name ("Home Assistant 2025.10.1") nor
"updated to"."""

CASED: ContextVar[str] = ContextVar("CASED", default="")
"""The text being read as written (not lower-cased), when its offsets are the same."""


def _written_as_a_date(m: re.Match[str]) -> bool:
    """Whether "may" beside a bare number is the month: written May, or with an ordinal,
    "of", a year, punctuation or the end after it, or "on", "by", "since"… before it ("these
    2 may be related" and "may 3 people join" are no dates). A day before a month's
    abbreviation ("10 mar the view") is held to the same."""
    mon = m.group("mon")
    groups = m.groupdict()
    if groups.get("ord") or groups.get("of") or m.group("y"):
        return True
    day_first = m.start("d") < m.start("mon")
    if mon != "may" and (not day_first or len(mon) > 4 or mon in ("june", "july")):
        return True
    cased = CASED.get()
    if cased and cased[m.start("mon")].isupper():  # May, Mar: a month's name
        return True
    after = m.string[m.end() : m.end() + 1]
    before = _DATE_BEFORE.search(m.string, max(0, m.start() - 8), m.start())
    return after in ("", *".,;:!?)") or before is not None


def _en_day_month(m: re.Match[str], now: datetime) -> Window | None:
    """ "5 May", "10th of March", "May 3", when :func:`_written_as_a_date`."""
    return _en_month_day(m, now) if _written_as_a_date(m) else None


def _iso_date(m: re.Match[str], now: datetime) -> Window | None:
    if m.groupdict().get("sep") == "." and not _DOTTED_BEFORE.search(
        m.string, max(0, m.start() - 12), m.start()
    ):
        return None  # 2025.10.1 after a product's name is its version
    try:
        d = date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
    except ValueError:
        return None
    return days_window(d, d, now) if d.year >= 1900 else None  # "order 1234-5-6": a number


_SLASHED_BEFORE = lazy_compile(
    r"\b(?:on|since|until|till|before|after)\s*$|\d/\d{1,2}\s*(?:[〜～~]|と)\s*$"
)
_SLASHED_AFTER = lazy_compile(
    r"\s*(?:に|の|は|って|から|まで|頃|ごろ|以降|以来|前後|朝|昼|夜|何|[〜～~]\s*\d"
    r"|と\s*\d{1,2}/\d|\([月火水木金土日]\))"
)
"""What makes a bare 3/22 a date: a date's particle or a range after it (3/22に, 3/22って,
3/22何してた, 3/22以降, 3/1〜3/15, 3/22と3/23, 3/22(日)), a date's preposition or the start
of such a range before it ("on 3/22", 3/1〜3/15's end); else it may be a score, a share or
a platform (8/10だった, 3/4くらい, "by 1/4", 3/4番線)."""


def _slashed_date(m: re.Match[str], now: datetime) -> Window | None:
    """3/22 (and 22/3 when the first number cannot be a month; 3/22/2026 with a year):
    that day, as 3月22日 is read; without a year only where :func:`_slashed_context` reads
    it as a date (3/22に, "on 3/22"), and never 24/7."""
    first, second = int(m.group("a")), int(m.group("b"))
    month, day = (second, first) if first > 12 >= second else (first, second)
    year_text = m.group("y")  # 3/22/2026: a date anywhere; "3/4, 2000 people" is not
    if m.group("y2") and _slashed_context(m):
        year_text = m.group("y2")
    if year_text:
        return one_day(int(year_text), month, day, now)
    if (first, second) == (24, 7) or not _slashed_context(m) or _fraction(m):
        return None
    return _this_year_date(month, day, now, m, since=_back_from(m))


_FRACTION_AFTER = lazy_compile(r"\s*(?:の|は|まで)")
"""What a share takes after it as often as a day does: 1/3の確率, 1/2は, 1/4まで減らした."""


def _fraction(m: re.Match[str]) -> bool:
    """Whether a bare M/D is more likely a share than a day: a proper fraction of a small
    denominator (1/2 … 9/10) before の, は or まで, and no date's preposition before it
    ("on 1/3"). 3/11の and 12/25の stay days."""
    first, second = int(m.group("a")), int(m.group("b"))
    return (
        first < second <= 10
        and _FRACTION_AFTER.match(m.string, m.end("b")) is not None
        and _SLASHED_BEFORE.search(m.string, max(0, m.start() - 10), m.start()) is None
    )


def _slashed_context(m: re.Match[str]) -> bool:
    """Whether a bare M/D (``m``, its year after a comma aside) is written as a date
    (:data:`_SLASHED_AFTER`, :data:`_SLASHED_BEFORE`)."""
    return (
        _SLASHED_AFTER.match(m.string, m.end("b")) is not None
        or _SLASHED_BEFORE.search(m.string, max(0, m.start() - 10), m.start()) is not None
    )


def _en_year(m: re.Match[str], now: datetime) -> Window | None:
    year = int(m.group("y"))
    if not 1900 <= year <= now.year:
        return None
    start, end = year_window(year, now)
    return (start, now) if m.group(0).startswith("since") else (start, end)


_HOLIDAY_NAMES = {
    "お盆": "obon",
    "クリスマス": "christmas",
    "christmas": "christmas",
    "xmas": "christmas",
    "ゴールデンウィーク": "golden_week",
    "gw": "golden_week",
    "お正月": "new_year",
    "正月": "new_year",
    "年始": "new_year",
    "大晦日": "new_years_eve",
    "おおみそか": "new_years_eve",
    "バレンタイン": "valentine",
    "ハロウィン": "halloween",
}
_HOLIDAY_JA = "お盆|クリスマス|ゴールデンウィーク|gw|お正月|正月|年始|大晦日|おおみそか|バレンタイン|ハロウィン"


def _last_holiday(kind: str) -> Callable[[re.Match[str], datetime], Window | None]:
    """ "last Christmas": the latest occurrence that is over (on 24 December, a year ago)."""

    def rule(_: re.Match[str], now: datetime) -> Window | None:
        this_year = holiday_in(kind, now.year, now)
        if this_year is not None and this_year[1] <= now:
            return this_year
        return holiday_in(kind, now.year - 1, now)

    return rule


HOLIDAY_AHEAD_DAYS = 31
"""How near a coming holiday makes its bare name ambiguous: Christmas asked on 22 December
("what am I getting Mum for Christmas?") is this one as often as last year's."""


def _latest_holiday(
    kind: str, *, ahead: bool = True
) -> Callable[[re.Match[str], datetime], Window | None]:
    """A yearly holiday, its latest occurrence that has begun; with ``ahead``, none while
    the next one is less than :data:`HOLIDAY_AHEAD_DAYS` away (named alone, it may be that
    one)."""

    def rule(_: re.Match[str], now: datetime) -> Window | None:
        begun = holiday_in(kind, now.year, now)
        coming = holiday_days(kind, now.year + (begun is not None))[0]  # the next to begin
        if ahead and midnight_of(coming, now) - now < timedelta(days=HOLIDAY_AHEAD_DAYS):
            return None
        return begun or holiday_in(kind, now.year - 1, now)

    return rule


def _named_year(prefix: str, now: datetime) -> int:
    """The year a prefix names: 2025年 (令和7年), 去年, 今年, "last year", "2025"…"""
    prefix = prefix.strip().removesuffix("'s").removesuffix("の").strip()
    digits = prefix.removesuffix("年")
    if digits.isdigit():
        return int(digits)
    return now.year + _JA_YEARS.get(prefix, _EN_YEARS.get(prefix, 0))


def _holiday_of_year(m: re.Match[str], now: datetime) -> Window | None:
    """去年のお盆, 2024年のクリスマス, "Christmas last year": the holiday of that year."""
    year = _named_year(m.group("p"), now)
    if not 1900 <= year <= now.year:
        return None
    return holiday_in(_HOLIDAY_NAMES[m.group("h")], year, now)


_UPCOMING_KINDS = {
    "年末": "year_end",
    "new year's eve": "new_years_eve",
    "new years eve": "new_years_eve",
}


def _upcoming_holiday(m: re.Match[str], now: datetime) -> Window | None:
    """今年末, "this Christmas": the holiday of this year if it has begun, else none (still
    to come: a plan). After a forward marker (今度の, 次の, 来月の, "coming") only while it
    lasts: 今度のGW said in September is next year's."""
    name = m.groupdict().get("h") or "年末"
    kind = _HOLIDAY_NAMES.get(name) or _UPCOMING_KINDS.get(name.replace("\u2019", "'"), "new_year")
    window = holiday_in(kind, now.year, now)
    if window is not None and m.groupdict().get("f") and window[1] <= now:
        return None
    return window


def _month_years_ago(m: re.Match[str], now: datetime) -> Window | None:
    """2年前の3月, "two years ago in March": that month of that year."""
    n = ja_number(m.group("n"))
    n = n if n is not None else en_number(m.group("n"))
    mon = m.group("m")
    month = ja_number(mon) or _MONTHS_EN.get(mon, 0)  # (3, 三, "march")
    if n is None or not 1 <= n <= 200 or not 1 <= month <= 12:
        return None
    return month_window(now.year - n, month, now)


def _nothing(_: re.Match[str], __: datetime) -> Window | None:
    """A span that is no past window (a plan: 来年の3月, "next March"; a movable feast)."""
    return None


def _year_end(m: re.Match[str], now: datetime) -> Window | None:
    """年末 (20–31 December): of the year named (去年の年末, 昨年末), else the latest begun."""
    named = m.groupdict().get("p") or m.groupdict().get("q")
    if named:
        return holiday_in("year_end", _named_year(named, now), now)
    return _latest_holiday("year_end")(m, now)


def _this_morning(_: re.Match[str], now: datetime) -> Window | None:
    """今朝, 今日の朝, "this morning": midnight to noon of today, or of yesterday before
    :data:`.day_parts.MORNING_CUTOFF_HOUR`."""
    return hours_of_day(0, NOON_HOUR, now)


_PLANNED = lazy_compile(
    r"\b(?:plan(?:s|ned)?|schedule[ds]?|agenda|to-?do|supposed to|expected|going to|gonna"
    r"|(?:said|say|told you|tell you) [Ii](?: was| would|'d)"
    r"|(?:(?<!talk )(?<!talked )(?<!chat )(?<!chatted )about|for)"
    r" (?:tonight|this evening|this afternoon|today))\b|予定|やること"
    r"|(?:今夜|今晩|今日の?夜|今日の?午後|今日)の(?:こと|件|話)"
    r"|[るくうぐすつぬむぶ]ん(?:だ|です)っけ|(?:の|何の?)日(?:だ|です)っけ|(?:何時|いつ)から\S*だっけ"
)
"""Words of a plan, past in form but asking what is to come ("what's planned for
tonight?", "what did I have scheduled this afternoon?", "what was I going to do tonight?",
"what did I say I was doing tonight?", "what did I tell you about tonight?" (not "what did
we talk about tonight?"), 今夜のこと何て言ったっけ, 今日何するんだっけ, 今夜って誰と会うん
だっけ, 今日って何の日だっけ, 何時から仕事だっけ: a verb's plain form before んだっけ)."""

_ASKED = lazy_compile(
    r"[?？]|っけ|^\s*(?:(?:wait|ok|okay|so|hey|um+|hmm+|and|but|sorry|oh)\b[\s,.…-]*)*"
    r"(?:what|where|who|when|how|which|did|do you remember|remember(?! to\b)|remind me|tell me)\b"
    r"|(?:覚えて(?:る|ます|いる)?|おぼえてる|教えて|おしえて|まとめて)(?:くれる|ください|ほしい|な|ね|よ)*"
    r"[\s。!！…〜ー]*$"
    r"|(?:何|なに)(?![かもだ]|とか|となく|でも|気|故|[回度]も)[^。！？!?\n]{0,20}?"
    r"(?:た|だ)(?:の|ん|か|かな)?[\s。!！…〜ー]*$"
    r"|(?:どこ|誰|だれ|いつ)(?![かも]|でも)[^。！？!?\n]{0,20}?(?:た|だ)(?:の|ん|か|かな)?[\s。!！…〜ー]*$"
)
"""A question, by its mark or its first words after a filler (chat drops the mark: "what
did I say earlier", "wait what did i say earlier", "so what did we talk about today",
"remember what i told you earlier"), or a Japanese request to recall (今日話したこと覚えてる,
今日何話したか教えて, 今日話した内容まとめて) or a past form ending it after 何, どこ, 誰, いつ
(今日何話した, 今日何食べた, 今日どこ行った; not 今日何もしなかった, 今日は何だか疲れた, nor
今日どうだった, which asks how it went as often as it tells)."""


def _told_of_today(m: re.Match[str]) -> bool:
    """Whether a part of today (``m``: "this afternoon", 今夜, 午前中) is told as past
    (:func:`_told_as_past`) and not as a plan (:data:`_PLANNED`): "What did I tell you this
    afternoon?", not "what's my plan this afternoon?" nor "remind me tonight"."""
    return _told_as_past(m) and not _in_sentence(_PLANNED, m)


def _day_part(
    first: int, last: int, *, told: bool = True
) -> Callable[[re.Match[str], datetime], Window | None]:
    """A part of today, ``first`` to ``last`` o'clock (:func:`.day_parts.hours_of_day`),
    when told of as past (:func:`_told_of_today`); with ``told`` False always ("earlier
    this evening" is past whatever the sentence)."""

    def rule(m: re.Match[str], now: datetime) -> Window | None:
        return hours_of_day(first, last, now) if not told or _told_of_today(m) else None

    return rule


def _today_asked(m: re.Match[str], now: datetime) -> Window | None:
    """今日, "today", "earlier" alone: today so far (:func:`.day_parts.users_day`) in a
    question about the past ("what did I eat for lunch today?", 今日何話したっけ？, "what did I
    say earlier?"); said of the present or the future, or told rather than asked ("How are
    you today?", 今日の予定は？, 今日は疲れた), none."""
    if not (_told_of_today(m) and _in_sentence(_ASKED, m)):
        return None
    return hours_of_day(0, DAY_END_HOUR, now)


_EARLIER_SAID_BEFORE = lazy_compile(
    r"\b(?:said|told|mentioned|talked about|discussed|sent|brought (?:it |this |that )?up)"
    r"(?:\s+(?:you|u|ya|me|him|her|them|us|it|this|that|so|something|stuff|already|all"
    r"|about (?:it|this|that)))*\s+$"
)
"""A past verb of telling just before "earlier" ("I told you earlier", "like i said earlier",
"you said something earlier", "the recipe I sent earlier", "what we discussed earlier")."""
_EARLIER_SAID_AFTER = lazy_compile(
    r"(?:\s+on)?\s*,?\s*(?:i|you|u|we)\s+(?:(?:already|just)\s+)?"
    r"(?:said|told|mentioned|talked about|discussed|sent|brought)\b"
)
"""The same just after it ("earlier you said you liked jazz", "earlier I told you")."""
_EARLIER_ASKED_AFTER = lazy_compile(
    r"(?:\s+on)?(?:\s*(?:[?!.,;)…]|$)|\s+(?:about|abt|when|that(?!\s+(?:day|week|month|year"
    r"|morning|afternoon|evening|night|time)\b))\b)"
)
"""What may follow "earlier" asked of alone: the question's end, or what was said then
("what did i tell u earlier abt my mom", "what did you say earlier when …"); not "earlier
than", "earlier that day" (another day), "earlier next time"."""
_EARLIER_ELSEWHEN = lazy_compile(
    r"\s+(?:than|this|last|next|today|tonight|yesterday|tomorrow|before|on the|that\s+(?:day"
    r"|week|month|year|morning|afternoon|evening|night|time)|in(?! (?:the day|(?:the|our|this)"
    r" (?:chat|conversation)))|(?:the )?(?:same )?(?:day|week|month|year)"
    r"|(?:on )?(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b"
)
"""What after "earlier" names another time or makes it mean sooner: "earlier in the week",
"earlier that day", "earlier than planned", "earlier on Monday" (not "earlier in the day")."""
_SOONER = lazy_compile(
    r"\b(?:should|could|would|must|might)(?:n['’]t)?\s*(?:have|['’]ve|of)\b"
    r"|\b(?:shoulda|coulda|woulda|wish|if only)\b|\bif (?:i|you|we|he|she|they) had\b"
)
"""Words that make "earlier" mean sooner ("I should have told you earlier", "I wish I'd said
it earlier")."""
_EARLIER_REACH = 60
"""How far before "earlier" a verb of telling is looked for."""


def _earlier(m: re.Match[str], now: datetime) -> Window | None:
    """ "earlier" alone: today so far (:func:`.day_parts.users_day`) beside a past verb of
    telling in any sentence ("I told you earlier that my boss was mad", "like i said earlier",
    "earlier you said you liked jazz", "remember the recipe I sent earlier?"; not "I should
    have told you earlier"), or ending a question about the past, or before what was said then
    ("what did I say earlier?", "what did i tell u earlier abt my mom"; not "earlier than
    usual", "I'll tell you earlier next time")."""
    text = m.string
    if _EARLIER_ELSEWHEN.match(text, m.end()):
        return None
    said = _EARLIER_SAID_BEFORE.search(text, max(0, m.start() - _EARLIER_REACH), m.start())
    if (said or _EARLIER_SAID_AFTER.match(text, m.end())) and not _in_sentence(_SOONER, m):
        return hours_of_day(0, DAY_END_HOUR, now)
    if _EARLIER_ASKED_AFTER.match(text, m.end()) is None:
        return None
    return _today_asked(m, now)


def _last_night(back: int) -> Callable[[re.Match[str], datetime], Window | None]:
    """ "last night", 昨夜, ゆうべ, 昨日の夜 (``back`` 1), "the night before last" (2): that
    night, evening to early morning (:func:`.day_parts.night`)."""

    def rule(_: re.Match[str], now: datetime) -> Window | None:
        return night(back, now)

    return rule


_FEW_HOURS = 4
"""What "a few hours" and 数時間 count, as "a few days" does (about four)."""


def _hours_ago(m: re.Match[str], now: datetime) -> Window | None:
    """ "3 hours ago", "an hour ago", "a few hours ago", 3時間前, 数時間前 (Japanese told as
    past: 1時間前には着くように is a plan): about then, give or take half the count and at
    least an hour, until now at the latest."""
    if not m.group(0).isascii() and not _told_as_past(m):
        return None
    token = m.group("n")
    n = _FEW_HOURS if token in ("数", "a few", "few", "several") else None
    n = n or ja_number(token) or en_number(token)
    if n is None or not 1 <= n <= 48:
        return None
    tolerance = max(1.0, n / 2)
    return back_from_now(timedelta(hours=n + tolerance), timedelta(hours=n - tolerance), now)


def _minutes_ago(m: re.Match[str], now: datetime) -> Window | None:
    """ "20 minutes ago", "half an hour ago", 30分前 (told as past): from twice as long ago,
    and at least an hour, until now."""
    if not m.group(0).isascii() and not _told_as_past(m):
        return None
    token = m.groupdict().get("n")
    n = 30 if token is None else ja_number(token) or en_number(token)
    if n is None or not 1 <= n <= 180:
        return None
    return back_from_now(timedelta(minutes=max(60, 2 * n)), timedelta(0), now)


_JUST_NOW = timedelta(hours=3)
"""How far back さっき, 先ほど, ちょっと前, "just now", "a little while ago" reach."""


def _just_now(m: re.Match[str], now: datetime) -> Window | None:
    """さっき, 先ほど, "a little while ago", "what did I just say", and "just now" or ちょっと前
    (少し前) before a verb of telling told as past ("What did I tell you just now?",
    ちょっと前に言ったやつ; not "I'm busy just now"): the last :data:`_JUST_NOW`."""
    told = m.group(0) == "just now" or m.group(0).startswith(("ちょっと", "少し", "すこし"))
    if told and not _told_as_past(m):
        return None
    return back_from_now(_JUST_NOW, timedelta(0), now)


_PRODUCT_YEAR = (
    "モデル(?![ァ-ヶー])"  # not モデルチェンジ, モデルルーム
    "|(?:型落ち|型|版|製造|製|産米|産|式(?![をはがも]?(?:挙|あげ|行|おこな)))"  # not 式を挙げた
    "(?![㐀-鿿々]|(?!って|[のはがをもでにとだじやよね])[ぁ-ゖ])"  # a whole word: not 産後, 産まれ
)
"""What after 2019年 makes it a thing's year, not a time to search: a model, an edition, when
or where it was made, as a whole word before a particle, a name or the end (2019年モデルのMacBook,
2019年式の車, 2019年型プリウス, 2019年型って何？, 2019年型落ちのiPhone, 2019年版の地図, 2019年製,
2019年製造の車, 2019年産のワイン, 2019年産米; not 2019年に, 2019年の夏, nor a word that only
starts so: 2019年産まれ, 2019年産後, 2019年産休, 2019年製薬会社, 2019年製造業, 2019年式典,
2019年版画展, 2019年モデルチェンジ, nor 2019年式を挙げた, a wedding)."""

_WD_JA = f"(?P<wd>[{_WEEKDAYS_JA}])曜日?"

_WD_JA_PARTICLE = (
    r"(?<![週毎の])"
    + _WD_JA
    + r"(?=の(?!カンパネラ)|(?:に|は|、|,)(?!\s*(?:いつも|毎回|たいてい|大抵|だいたい|大体|基本|必ず"
    r"|普段|ふだん)))"
)
"""A weekday named alone with a particle (火曜に, 金曜日は, 金曜日の): not 毎週金曜 (nor the 金曜
of 次の金曜, read by the rules that name its week), nor a habit (金曜日はいつも, 金曜日に大抵,
but not よく, たまに or 時々, which as often say "a lot" or modify a clause of that day:
金曜日はよく飲んだ, 土曜日はたまに会う友達と飲んだ; 金曜日のいつもの店 is that Friday's), nor
水曜日のカンパネラ (a band)."""
_WD_JA_DID = (
    r"(?<![週毎の])"
    + _WD_JA
    + r"(?=(?:って)?\s*(?:(?:何|なに)を?(?:し|やっ|食べ|買っ|作っ|話し)(?:た|てた)"
    r"|どこ[にへ]?(?:行っ|いっ)(?:た|てた)"
    r"|(?:誰|だれ)と(?:会っ|あっ|行っ|いっ|遊ん|飲ん|過ごし|出かけ|い)(?:た|てた|だ|でた)"
    r"|どうだった)(?=っけ|の|ん|よ|ね|か(?!っ)|[?？。!！、,\s]|$))"
)
"""A weekday without a particle, as chat drops it, only right before a question of what was
done on it (土曜日何してた？, 金曜日何した？, 金曜日って何してた？, 火曜日どこ行った？, 金曜日誰と会った？,
金曜日どうだった？, a space between them or not): the weekday alone is as often a plan's day
recalled (土曜日って何時に集合だったっけ？, 土曜日空いてたっけ？, 日曜日どこ行くか決めた？,
金曜日行けなくなった), a day written or told (金曜日って書いてあった, 金曜日って伝えた) or a habit, so
the asking word and its past (not 何時, 何日, 何したい, 何したらいい) must say that it is the day."""

_KANA_LONGER: dict[str, tuple[tuple[str, str], ...]] = {
    "せんしゅう": (
        ("", "う"),  # 選手うまい: あのせんしゅううまいね
        ("", "まい(?!にち)"),  # 選手(う)まい: あのせんしゅうまいね (not せんしゅうまいにち)
        ("", "だいがく"),  # 専修大学
        ("", "けん"),  # 選手権
        ("", "らく"),  # 千秋楽
        ("よ", "りょう"),  # 予選終了: よせんしゅうりょう
        ("ま", ""),  # ません習慣: ませんしゅうかん
        ("きゅう", ""),  # 野球選手: やきゅうせんしゅうに
    ),
    "せんしゅうまつ": (("せん", ""),),  # せんせんしゅうまつ: 先々週末, the week before last
    "せんせんしゅう": (("ま", ""),),
    "せんげつ": (("ま", ""), ("", "よう")),  # ません月曜: いきませんげつようび
    "せんせんげつ": (("ま", ""),),
    "きょねん": (("き", ""), ("", "ど(?![こうれ])")),  # ききょねん; 去年度, a fiscal year
    "さくねん": (("っ", ""), ("", "ど(?![こうれ])")),  # 傑作/八朔: けっさくねん; 昨年度
    "いっさくねん": (("", "ど(?![こうれ])"),),
    "なつ": (("", "かし"), ("", "く(?!ら)"), ("", "め")),  # 懐かしい, 懐く, 棗
    "ふゆ": (("", "かい"), ("", "う")),  # 不愉快, 富裕, 浮遊
}
"""The longer words a time word written in hiragana sits inside, as the kana before it
and a pattern of those after it (both must be there; "" is anything): hiragana has no
edges to tell words by, so a kana time word counts everywhere else, after a particle or
not (たぶんせんしゅうだった, せんしゅうどこいった？, きょねんいった, もうきょねんのことじゃん),
but not in あのせんしゅうまいね (選手うまい), せんしゅうだいがく, よせんしゅうりょう,
せんしゅうらく, ませんしゅうかん, ききょねん, けっさくねんだ, さくねんど (昨年度, April to
March), nor the summer of きょねんのなつかしい. A known miss: あのせんしゅうがすき (that
athlete) reads as last week, the kana alone cannot tell them apart."""


def _not_inside(word: str) -> str:
    """A lookahead, put before ``word``, that refuses the longer words of
    :data:`_KANA_LONGER` it sits inside: (?!(?<=よ)せんしゅうりょう) for 予選終了."""
    longer = [
        (f"(?<={re.escape(before)})" if before else "") + re.escape(word) + after
        for before, after in _KANA_LONGER.get(word, ())
    ]
    return f"(?!{'|'.join(longer)})" if longer else ""


def _kana(words: str) -> str:
    """A pattern for time words written in hiragana (``words``: せんしゅう|せんげつ) that are
    not part of a longer word (:data:`_KANA_LONGER`: "あのせんしゅううまいね" names no week,
    "せんしゅうなにした？" does)."""
    return "|".join(_not_inside(word) + word for word in words.split("|"))


def kana_word_at(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, words written in hiragana, stand there as words of their
    own, as the rules read them (:func:`_kana`): せんしゅう in せんしゅう行った and in
    たぶんせんしゅうだった, not in あのせんしゅうまいね; a kana time word it holds is checked
    where it stands (the なつ of きょねんのなつかしい is no summer)."""
    said = text[start:end]
    for word in _KANA_LONGER:
        at = said.find(word)
        while at >= 0:
            if not re.compile(_kana(word)).match(text, start + at):
                return False
            at = said.find(word, at + 1)
    return True


_YEAR_JA = "去年|昨年|一昨年|おととし|今年|" + _kana("いっさくねん|きょねん|さくねん")
"""A year named before の: 去年, 一昨年, 今年, and in hiragana きょねん, さくねん, いっさくねん."""
_SEASON_JA = "[春夏秋冬]|" + _kana("なつ|ふゆ")
"""A season after a year: 夏 or, in hiragana, なつ and ふゆ (not はる or あき, names as often)."""
_WD_EN = "(?P<wd>" + "|".join(WEEKDAYS_EN) + ")"
# Longest, most specific patterns first: a span matched once is not matched again.
RULES: list[Rule] = [
    # ---- Japanese
    (lazy_compile(r"年末調整|(?:昨日|きのう)のことのよう"), _nothing),  # a tax form; an idiom
    (  # next year's dates and holidays are plans (their month or day alone would be past)
        lazy_compile(
            r"(?:再来年|来年|明年)の?(?:\d{1,2}月(?:\d{1,2}日)?|[春夏秋冬](?:休み)?|"
            + _HOLIDAY_JA
            + "|年末)?"
        ),
        _nothing,
    ),
    (lazy_compile(r"旧正月|春節"), _nothing),  # a lunar date: no fixed days
    (lazy_compile(r"(?P<y>\d{4})年(?P<m>\d{1,2})月(?P<d>\d{1,2})日" + _TO_DAY), _ja_date),
    (
        lazy_compile(rf"(?P<p>{_YEAR_JA})の?{_JA_MONTH}月{_JA_DAY}日{_TO_DAY}"),
        _ja_date,
    ),
    (
        lazy_compile(rf"(?P<p>{_YEAR_JA})の?(?:年末|暮れ)|(?P<q>一昨年|昨年|去年)末"),
        _year_end,
    ),
    (
        lazy_compile(rf"(?P<p>\d{{4}}年|{_YEAR_JA})の?(?P<h>" + _HOLIDAY_JA + ")"),
        _holiday_of_year,
    ),
    (  # marked as still to come: this year's if begun, else a plan
        lazy_compile(r"(?P<f>今度|次|来週|来月)の(?P<h>" + _HOLIDAY_JA + "|年末)|今年末"),
        _upcoming_holiday,
    ),
    (lazy_compile(rf"(?P<n>{JA_NUM})年前の{_JA_MONTH}月(?![0-9日曜期])"), _month_years_ago),
    (lazy_compile(rf"(?<![0-9年]){_JA_MONTH}月{_JA_DAY}日{_TO_DAY}"), _ja_date),
    (  # 15日に会った (not 2日に1回, 1日に10キロ, 2日にわたって, 2泊3日, 最初の3日は, 数日)
        lazy_compile(
            r"(?<![0-9月/年数毎何泊の])(?P<d>\d{1,2})日"
            r"(?=に(?![0-9一二三四五六七八九十数]|何[回度杯個本時]|わた)|は(?!かか)|の(?!間|うち))"
        ),
        _day_of_month,
    ),
    (  # 今月の1日, 先月15日に (not 今月の3日間, 今月の2日目, 先月2日休んだ: days counted)
        lazy_compile(
            r"(?P<p>先々月|先先月|先月|今月|"
            + _kana("せんせんげつ|せんげつ")
            + rf")(?P<of>の)?(?P<d>\d{{1,2}}|(?<![{_KANJI}])[{_KANJI}]{{1,3}})日"
            r"(?![間目分中前後]|連続|ぶり|振り|以内|以上|以下|ほど|程|くらい|ぐらい|だけ|しか"
            r"|おき|置き|ごと|毎)"
            + _TO_DAY
            + r"(?(of)|(?=に|は|の|から|まで|って|頃|ごろ|付|[、,。.!?\s]|$|何|なに|どこ|誰))"
        ),
        _day_of_named_month,
    ),
    (
        lazy_compile(rf"(?P<p>\d{{4}}年|{_YEAR_JA})の?{_JA_MONTH}月(?![曜期])"),
        _ja_year_month,
    ),
    (
        lazy_compile(rf"(?P<p>\d{{4}}年|{_YEAR_JA}|この前の)の?(?P<s>{_SEASON_JA})"),
        _ja_season,
    ),
    (lazy_compile(r"(?P<s>[春夏冬])休み"), _school_break),
    (  # 先週の今日, 先々週の今日, 先月の今日, 去年の今日: one day, not the whole period
        lazy_compile(
            r"(?P<p>先々週|先先週|先週|先月|去年|昨年|"
            + _kana("せんせんしゅう|せんしゅう|せんげつ|きょねん")
            + ")の今日"
        ),
        _same_day_back,
    ),
    (  # 先々週の土曜, 先々週土曜日 (holds 先週の土曜 when written 先先週)
        lazy_compile(r"(?:先々週|先先週|" + _kana("せんせんしゅう") + ")の?" + _WD_JA),
        _weekday_weeks_ago(2),
    ),
    (  # 先週の金曜, 先週金曜日, せんしゅうの金曜
        lazy_compile(r"(?:先週|" + _kana("せんしゅう") + ")の?" + _WD_JA),
        _weekday_weeks_ago(1),
    ),
    (lazy_compile(r"今週の?" + _WD_JA), _ja_weekday_this_week),
    (lazy_compile(r"(?:この前|こないだ|この間)の" + _WD_JA), _latest_weekday),
    (lazy_compile(_WD_JA_PARTICLE), _past_weekday),  # 火曜に
    (lazy_compile(_WD_JA_DID), _past_weekday),  # 金曜日何した？
    (lazy_compile(r"(?<![今先来毎])(?:週末|土日)"), _past_weekend),
    (lazy_compile(r"先週末|" + _kana("せんしゅうまつ")), _last_weekend),
    (lazy_compile(r"今週末"), _this_weekend),
    (lazy_compile(r"今月末"), _nothing),  # the month's end: still to come, or too near to tell
    (lazy_compile(r"先々週|先先週|" + _kana("せんせんしゅう")), _week_offset(-2)),  # (holds 先週)
    (lazy_compile(r"先週|" + _kana("せんしゅう")), _week_offset(-1)),
    (lazy_compile(r"今週"), _week_offset(0)),
    (lazy_compile(r"先々月|先先月|" + _kana("せんせんげつ")), _month_offset(-2)),
    (lazy_compile(r"先月|" + _kana("せんげつ")), _month_offset(-1)),
    (lazy_compile(r"今月"), _month_offset(0)),
    (lazy_compile(r"一昨年|おととし|" + _kana("いっさくねん")), _year_offset(-2)),
    (lazy_compile(r"去年|昨年|" + _kana("きょねん|さくねん")), _year_offset(-1)),
    (
        lazy_compile(r"一昨昨日|さきおととい|さきおとつい"),
        _day_offset(-3),
    ),  # (holds 昨日, おととい)
    (lazy_compile(r"(?:一昨日|おととい|おとつい)の?(?:夜|晩)"), _last_night(2)),
    (lazy_compile(r"一昨日|おととい|おとつい"), _day_offset(-2)),
    (lazy_compile(r"(?:昨日|きのう)の?(?:夜|晩)|昨夜|昨晩|ゆうべ"), _last_night(1)),
    (lazy_compile(r"昨日|きのう"), _day_offset(-1)),
    (lazy_compile(r"数日前(?!後(?!前)|期(?![待限間日]))"), _few_days),
    (lazy_compile(r"先日"), _span_ago(timedelta(days=14), timedelta(days=1))),
    (
        lazy_compile(r"数年前(?!後(?!前)|期(?![待限間日]))"),
        _span_ago(timedelta(days=2190), timedelta(days=548)),
    ),
    (lazy_compile(r"今朝|今日の?朝"), _this_morning),
    (  # 今日の午前中, 午前中 (not 明日の午前中, 昨日午前中, 午前10時: a day or an hour of it)
        lazy_compile(rf"今日の?午前中?(?![0-9{_KANJI}時])|(?<![の日曜週])午前中"),
        _day_part(0, NOON_HOUR),
    ),
    (lazy_compile(r"今日の?お?昼"), _day_part(10, EVENING_HOUR)),
    (lazy_compile(rf"今日の?午後(?![0-9{_KANJI}時])"), _day_part(NOON_HOUR, EVENING_HOUR)),
    (
        lazy_compile(r"今日の?(?:夜|晩)|今夜|今晩"),
        _day_part(EVENING_HOUR, DAY_END_HOUR),
    ),
    (  # 3時間前, 数時間前 (not 試合の1時間前, 3時間前後)
        lazy_compile(
            rf"(?<!の)(?P<n>数|{JA_NUM})時間(?:くらい|ぐらい|ほど)?前(?!後(?!前)|期(?![待限間日]))"
        ),
        _hours_ago,
    ),
    (
        lazy_compile(
            rf"(?<!の)(?P<n>{JA_NUM})分(?:くらい|ぐらい|ほど)?前(?!後(?!前)|期(?![待限間日]))"
        ),
        _minutes_ago,
    ),
    (lazy_compile(r"さっき|先ほど|さきほど|今しがた"), _just_now),
    (  # ちょっと前に言った, 少し前に話したこと (not 試合の少し前に, 少し前から)
        lazy_compile(r"(?<![の前])(?:ちょっと|少し|すこし)前に?(?=[言話聞伝送教])"),
        _just_now,
    ),
    (  # 今日 asked of in the past (今日何話したっけ？), not 今日の予定, 今日中に, 今日って何日
        lazy_compile(r"今日(?!の|中|じゅう|まで|(?:って|は)?(?:何日|何曜|なんにち|なんようび))"),
        _today_asked,
    ),
    (lazy_compile(r"半年前(?!後(?!前)|期(?![待限間日]))"), lambda _, now: _ago("month", 6, now)),
    (
        lazy_compile(r"(?:ひと月|ひとつき)前(?!後(?!前)|期(?![待限間日]))"),
        lambda _, now: _ago("month", 1, now),
    ),
    (
        lazy_compile(r"数週間前(?!後(?!前)|期(?![待限間日]))"),
        _span_ago(timedelta(weeks=5), timedelta(weeks=2)),
    ),
    (
        lazy_compile(r"数(?:ヶ|か|カ|ケ|ヵ)月前(?!後(?!前)|期(?![待限間日]))"),
        _span_ago(timedelta(days=185), timedelta(days=55)),
    ),
    (  # ここ3日, 過去2ヶ月, ここ数日: until now (この1週間 looks ahead as often: この1年でやりたい)
        lazy_compile(
            rf"(?:ここ|過去)\s*(?P<n>数|{JA_NUM})\s*"
            r"(?P<u>日|週間|週|ヶ月|か月|カ月|ケ月|箇月|ヵ月|年)(?!前|後|目|間前|間後|生|度)"
        ),
        _within_last,
    ),
    (
        lazy_compile(
            rf"(?P<a>{JA_NUM})\s*(?:〜|~|-|–|、|,|から)\s*(?P<n>{JA_NUM})"
            r"(?P<u>日|週間|週|ヶ月|か月|カ月|ケ月|箇月|ヵ月|年)(?:くらい|ぐらい|ほど)?前(?!後(?!前)|期(?![待限間日]))"
        ),
        _range_ago,
    ),
    (
        lazy_compile(
            rf"(?P<n>{JA_NUM})(?P<u>日|週間|週|ヶ月|か月|カ月|ケ月|箇月|ヵ月|年)(?:くらい|ぐらい|ほど)?前(?!後(?!前)|期(?![待限間日]))"
        ),
        _ja_ago,
    ),
    (lazy_compile(rf"(?<![0-9])(?P<y>\d{{4}})年(?![0-9]|前|{_PRODUCT_YEAR})"), _ja_year),
    (  # 12月, 十二月 (not 一月前 "a month ago", 三月ほど, 五月雨, 五月蝿い)
        lazy_compile(
            rf"(?<![0-9年ヶか第]){_JA_MONTH}月"
            rf"(?![0-9{_KANJI}日曜期]|(?<=[{_KANJI}]月)(?:{_MONTHS_COUNTED}))"
        ),
        _ja_year_month,
    ),
    (lazy_compile(r"ゴールデンウィーク|(?<![a-z])gw(?![a-z])"), _latest_holiday("golden_week")),
    (lazy_compile(r"お盆"), _latest_holiday("obon")),
    (lazy_compile(r"クリスマス"), _latest_holiday("christmas")),
    (lazy_compile(r"お正月|正月|年始"), _latest_holiday("new_year")),
    (lazy_compile(r"大晦日|おおみそか"), _latest_holiday("new_years_eve")),
    (lazy_compile(r"年末"), _year_end),
    (lazy_compile(r"バレンタイン"), _latest_holiday("valentine")),
    (lazy_compile(r"ハロウィン"), _latest_holiday("halloween")),
]

_EN_RULES: list[Rule] = [  # matched on lower-cased text; \b is an ASCII word's edge (below)
    (  # next year's months and holidays are plans ("in March next year", "next Christmas")
        lazy_compile(
            rf"\bnext (?:year'?s? )?(?:{_MONTH_RE}|christmas|xmas|new year'?s?(?: eve| day)?|"
            rf"spring|summer|autumn|fall|winter)\b|"
            rf"\b(?:(?:in|on|during|around|of) )?(?:{_MONTH_RE}|christmas|xmas)"
            rf"(?: \d{{1,2}}(?:st|nd|rd|th)?)? next year\b"
        ),
        _nothing,
    ),
    (lazy_compile(r"\b(?:lunar|chinese) new year(?:'s)?\b"), _nothing),  # no fixed days
    (
        lazy_compile(
            r"\b(?P<p>last year'?s|the year before last'?s|\d{4}'?s?) (?P<h>christmas|xmas)\b"
        ),
        _holiday_of_year,
    ),
    (
        lazy_compile(
            r"\b(?P<h>christmas|xmas) (?:of |in )?(?P<p>last year|the year before last|\d{4})\b"
        ),
        _holiday_of_year,
    ),
    (
        lazy_compile(
            r"\b(?:this|(?:the |this )?(?P<f>coming|upcoming)) (?P<h>christmas|xmas|"
            r"new year'?s eve|new year'?s?(?: day)?)(?![\w'])"
        ),
        _upcoming_holiday,
    ),
    (lazy_compile(r"\blast (?:christmas|xmas)\b"), _last_holiday("christmas")),
    (
        lazy_compile(r"\b(?:the )?(?:fourth|4th) of july\b|\bindependence day\b"),
        _latest_holiday("independence_day"),
    ),
    (lazy_compile(r"\blast new year'?s eve\b"), _last_holiday("new_years_eve")),
    (  # (the latest begun: on 3 January, this one)
        lazy_compile(r"\blast new year(?:'?s)?(?: day)?\b"),
        _latest_holiday("new_year", ahead=False),
    ),
    (
        lazy_compile(rf"\b(?P<n>{_EN_NUM}) years? ago,? in (?P<m>{_MONTH_RE})\b"),
        _month_years_ago,
    ),
    (
        lazy_compile(rf"\bin (?P<m>{_MONTH_RE}),? (?P<n>{_EN_NUM}) years? ago\b"),
        _month_years_ago,
    ),
    (  # 2026-03-05, 2026/3/5, 2026.3.5, also inside Japanese text (2026-03-05の…)
        lazy_compile(
            r"(?<![0-9./-])(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?![0-9])"
            r"(?!(?P=sep)\d)"
        ),
        _iso_date,
    ),
    (  # 3/22, 3/22に, on 3/22, 3/22/2026 (22/3 when 22 cannot be the month)
        lazy_compile(
            r"(?<![0-9./-])(?<![0-9] )(?P<a>\d{1,2})/(?P<b>\d{1,2})"
            r"(?:/(?P<y>\d{4})|, ?(?P<y2>(?:19|20)\d{2})(?![0-9]))?(?![0-9%]|/\d)"
        ),
        _slashed_date,
    ),
    (  # "in April last year", "March 3rd of last year", "the 3rd of March last year"
        lazy_compile(
            rf"\b(?:(?:the )?(?P<d>\d{{1,2}})(?:st|nd|rd|th)? of )?(?P<mon>{_MONTH_RE})"
            rf"(?:\.? (?P<d2>\d{{1,2}})(?:st|nd|rd|th)?)?,? (?:of )?"
            r"(?P<p>last year|the year before last)\b"
        ),
        _month_of_named_year,
    ),
    (  # "last year in March", "last year, in April"
        lazy_compile(rf"\b(?P<p>last year|the year before last),? in (?P<mon>{_MONTH_RE})\b"),
        _month_of_named_year,
    ),
    (  # "the last week of June", "the last Friday of August": the final one, not the previous
        lazy_compile(
            r"\b(?:the|my|our|your|his|her|their) last (?:(?:few|couple of|two|three) )?"
            r"(?:day|night|week|weekend|month|year|spring|summer|autumn|fall|winter|"
            + "|".join(WEEKDAYS_EN)
            + r")s?(?= of\b)|\blast (?:day|week|weekend|"
            + "|".join(WEEKDAYS_EN)
            + rf")(?= of (?:the (?:year|month)|{_MONTH_RE})\b)"
        ),
        _nothing,
    ),
    (  # an idiom, not a day
        lazy_compile(
            r"\b(?:(?:feels?|felt|seems?|seemed) like|like it was) (?:it was )?"
            r"(?:only |just )?yesterday\b"
        ),
        _nothing,
    ),
    (lazy_compile(r"\bthe day before yesterday\b"), _day_offset(-2)),
    (lazy_compile(r"\bthe night before last\b"), _last_night(2)),
    (lazy_compile(r"\b(?:last|yesterday) (?:night|evening)\b"), _last_night(1)),
    (lazy_compile(r"\byesterday\b"), _day_offset(-1)),
    (lazy_compile(r"\bthis morning\b"), _this_morning),
    (  # past whatever the sentence: "earlier today", "earlier this evening"
        lazy_compile(r"\bearlier today\b"),
        _day_part(0, DAY_END_HOUR, told=False),
    ),
    (
        lazy_compile(r"\bearlier this afternoon\b"),
        _day_part(NOON_HOUR, EVENING_HOUR, told=False),
    ),
    (
        lazy_compile(r"\bearlier (?:this evening|tonight)\b"),
        _day_part(EVENING_HOUR, DAY_END_HOUR, told=False),
    ),
    (lazy_compile(r"\bthis afternoon\b"), _day_part(NOON_HOUR, EVENING_HOUR)),
    (
        lazy_compile(r"\b(?:this evening|tonight)\b"),
        _day_part(EVENING_HOUR, DAY_END_HOUR),
    ),
    (
        lazy_compile(rf"\b(?P<n>{_EN_NUM}|a few|few|several) (?:hours?|hrs?) (?:ago|back)\b"),
        _hours_ago,
    ),
    (
        lazy_compile(rf"\b(?:half an hour|(?P<n>{_EN_NUM}) (?:minutes?|mins?)) (?:ago|back)\b"),
        _minutes_ago,
    ),
    (
        lazy_compile(
            r"\bjust now\b|\ba (?:little|short) while ago\b|\ba moment ago\b"
            r"|\bwhat(?: did|['’]d| was| were)? (?:i|you|u|we) just (?:say(?:ing)?|said|tell(?:ing)?"
            r"|told|mention(?:ed|ing)?|ask(?:ed|ing)?|talk(?:ed|ing)? about)\b"
        ),
        _just_now,
    ),
    (lazy_compile(r"\b(?:a few|few|several) days (?:ago|back)\b"), _few_days),
    (
        lazy_compile(r"\bthe other (?:day|night)\b"),
        _span_ago(timedelta(days=14), timedelta(days=1)),
    ),
    (lazy_compile(r"\b(?:a|one) fortnight (?:ago|back)\b"), lambda _, now: _ago("week", 2, now)),
    (
        lazy_compile(r"\b(?:the )?(?:last|past) fortnight\b"),
        _span_ago(timedelta(days=14), timedelta(0)),
    ),
    (
        lazy_compile(r"\b(?:a few|few|several) weeks (?:ago|back)\b"),
        _span_ago(timedelta(weeks=5), timedelta(weeks=2)),
    ),
    (
        lazy_compile(r"\b(?:a few|few|several) months (?:ago|back)\b"),
        _span_ago(timedelta(days=185), timedelta(days=55)),
    ),
    (
        lazy_compile(r"\b(?:a few|few|several) years (?:ago|back)\b"),
        _span_ago(timedelta(days=2190), timedelta(days=548)),
    ),
    (
        lazy_compile(r"\b(?:the )?(?:last|past) (?:few|couple of) days\b"),
        _span_ago(timedelta(days=4), timedelta(0)),
    ),
    (  # "the last 3 days", "these past two weeks", "in past 2 weeks", "last 10 days"; not
        # "the last two weeks of June" / "in May", "… before the exam", "at last a day off"
        lazy_compile(
            rf"\b(?:(?:the|these|in|over|within|during|for) (?:last|past) (?P<n>{_EN_NUM}|few)"
            rf"|(?:^|(?<=[,.;:!?] )|(?<=\bmy )|(?<=\bour )|(?<=\byour )|(?<=\bhis )|(?<=\bher )"
            rf"|(?<=\btheir ))(?:last|past)"
            rf" (?P<n2>{_EN_COUNT}|few)) (?P<u>day|week|month|year)s?\b"
            rf"(?! (?:of|before|to)\b| in (?:{_MONTH_RE}|\d{{4}})\b| (?:until|till) (?!now\b))"
        ),
        _within_last,
    ),
    (lazy_compile(r"\bthis past weekend\b"), _last_weekend),  # (a finished one, on Sunday too)
    (lazy_compile(r"\b(?:the )?past week\b"), _span_ago(timedelta(days=7), timedelta(0))),
    (lazy_compile(r"\b(?:the )?past month\b"), _span_ago(timedelta(days=31), timedelta(0))),
    (lazy_compile(r"\b(?:the )?past year\b"), _span_ago(timedelta(days=366), timedelta(0))),
    # "in the last year" is the past year, up to now ("last year" alone is the calendar one)
    (
        lazy_compile(r"\b(?:in|over|within|during|throughout) the last week\b"),
        _span_ago(timedelta(days=7), timedelta(0)),
    ),
    (
        lazy_compile(r"\b(?:in|over|within|during|throughout) the last month\b"),
        _span_ago(timedelta(days=31), timedelta(0)),
    ),
    (
        lazy_compile(r"\b(?:in|over|within|during|throughout) the last year\b"),
        _span_ago(timedelta(days=366), timedelta(0)),
    ),
    (
        lazy_compile(
            rf"\b(?P<a>{_EN_NUM}) ?(?:-|–|to|or) ?(?P<n>{_EN_NUM}) (?P<u>day|week|month|year)s? "
            r"(?:ago|back)\b"
        ),
        _range_ago,
    ),
    (  # "this day last week", "a year ago today": one day, not the whole period
        lazy_compile(
            r"\b(?:this day|today) last (?P<u>week|month|year)\b"
            r"|\b(?:a|one) (?P<u2>week|month|year) ago today\b"
        ),
        _same_day_back,
    ),
    (  # "the 1st of this month", "the 3rd of last month"
        lazy_compile(
            r"\bthe (?P<d2>\d{1,2})(?:st|nd|rd|th) of "
            r"(?P<p>this month|last month|the month before last)\b"
        ),
        _day_of_named_month,
    ),
    (  # "Saturday two weeks ago", "on Friday a week ago"
        lazy_compile(rf"\b{_WD_EN} (?P<n>{_EN_NUM}) weeks? (?:ago|back)\b"),
        _en_weekday_weeks_ago,
    ),
    (  # "the Saturday before last" (not "… before last week": counted from last week)
        lazy_compile(
            rf"\bthe {_WD_EN} before last\b"
            rf"(?! (?:week|weekend|month|year|night|{'|'.join(WEEKDAYS_EN)})\b)"
        ),
        _en_weekday_before_last,
    ),
    (lazy_compile(rf"\b(?P<n>{_EN_NUM}) (?P<u>day|week|month|year)s? (?:ago|back)\b"), _en_ago),
    (  # forward-pointing: still to come, no "so far"
        lazy_compile(
            r"\b(?:later|(?:the )?end of|(?:the )?rest of|(?:the )?remainder of) this "
            r"(?:week|weekend|month|year)\b"
        ),
        _nothing,
    ),
    (lazy_compile(r"\bthe week before last\b"), _week_offset(-2)),
    (lazy_compile(r"\blast weekend\b"), _last_weekend),
    (lazy_compile(rf"\b(?P<n>{_EN_NUM}) weekends? ago\b"), _weekends_ago),
    (lazy_compile(r"\b(?:over|on|at|during) the weekend\b"), _past_weekend),
    (lazy_compile(r"\b(?:last|previous) week\b"), _week_offset(-1)),
    (lazy_compile(r"\b(?:earlier )?this week\b"), _week_offset(0)),
    (lazy_compile(r"\bthe month before last\b"), _month_offset(-2)),
    (lazy_compile(r"\b(?:last|previous) month\b"), _month_offset(-1)),
    (lazy_compile(r"\b(?:earlier )?this month\b"), _month_offset(0)),
    (lazy_compile(r"\bthe year before last\b"), _year_offset(-2)),
    (lazy_compile(r"\blast year\b"), _year_offset(-1)),
    (lazy_compile(r"\blast " + _WD_EN + r"\b"), _en_last_weekday),
    (
        lazy_compile(r"\blast (?P<wd>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\b"),
        _en_last_weekday,
    ),
    (lazy_compile(r"\bon " + _WD_EN + r"\b"), _past_weekday),  # (not "on Tuesdays")
    (
        lazy_compile(
            r"\b(?:the )?(?P<s>spring|summer|autumn|fall|winter)(?: of)?,? (?P<y>\d{4})\b"
        ),
        _season_of_year,
    ),
    (
        lazy_compile(r"\b(?P<p>last|this|past) (?P<s>spring|summer|autumn|fall|winter)\b"),
        _en_season,
    ),
    (
        lazy_compile(
            rf"\b(?P<mon>{_MONTH_RE})\.? (?P<d>\d{{1,2}})(?P<ord>st|nd|rd|th)?\b"
            rf"(?:,? (?P<y>\d{{4}}))?"
        ),
        _en_day_month,
    ),
    (
        lazy_compile(
            rf"\b(?P<d>\d{{1,2}})(?P<ord>st|nd|rd|th)? (?P<of>of )?(?P<mon>{_MONTH_RE})\b"
            rf"(?:,? (?P<y>\d{{4}}))?"
        ),
        _en_day_month,
    ),
    (
        lazy_compile(
            rf"\b(?P<p>in|last|during|since|early|mid|late|back in|around|of|in early|in late)"
            rf"[ -](?P<mon>{_MONTH_RE})\b(?:,? (?:of )?(?P<y>\d{{4}}))?"
        ),
        _en_month,
    ),
    (  # (not "on the 15th floor": a noun after it)
        lazy_compile(
            r"\bon the (?P<d>\d{1,2})(?:st|nd|rd|th)\b(?=\s*(?:[,.;:!?)]|$|(?:and|but|so|at|in|"
            r"after|before|when|because|i|we|he|she|they|my|our|for|with|to|too|again|"
            r"already|then|this|last)\b))"
        ),
        _day_of_month,
    ),
    (lazy_compile(r"\b(?:in|during|since|back in|of) (?P<y>\d{4})\b"), _en_year),
    (  # "what did I eat today?" (not "How are you today?", "today's meeting")
        lazy_compile(r"\btoday\b(?!['’]s)"),
        _today_asked,
    ),
    (  # "what did I say earlier?", "like i said earlier" (not "earlier than", "last week or
        # earlier?", "an earlier draft")
        lazy_compile(
            r"\b(?<!\bor )(?<!\band )(?<!\beven )(?<!\bmuch )(?<!\bbit )(?<!\bway )"
            r"(?<!\blittle )(?<!\blot )(?<!\bany )(?<!\bno )(?<!\bthe )(?<!\ban )(?<!\bmy )"
            r"(?<!\byour )(?<!\bhis )(?<!\bher )(?<!\bour )(?<!\btheir )earlier\b"
        ),
        _earlier,
    ),
    (lazy_compile(r"\b(?:christmas|xmas)\b"), _latest_holiday("christmas")),
    (lazy_compile(r"\bnew year'?s eve\b"), _latest_holiday("new_years_eve")),
    (lazy_compile(r"\bnew year(?:'s)?\b"), _latest_holiday("new_year")),
    (lazy_compile(r"\blast halloween\b"), _last_holiday("halloween")),
    (lazy_compile(r"\blast easter\b"), _last_holiday("easter")),
    (lazy_compile(r"\blast valentine'?s(?: day)?\b"), _last_holiday("valentine")),
    (lazy_compile(r"\bhalloween\b"), _latest_holiday("halloween")),
    (lazy_compile(r"\beaster\b"), _latest_holiday("easter")),
    (lazy_compile(r"\bvalentine'?s(?: day)?\b"), _latest_holiday("valentine")),
]


def _ascii_edges(pattern: LazyPattern) -> LazyPattern:
    r"""``pattern`` with ``\b`` and ``\w`` read as ASCII: an English expression written against
    Japanese (yesterdayって, last weekの) ends there, as where a space follows."""
    return lazy_compile(pattern.pattern, (pattern.flags & ~re.UNICODE) | re.ASCII)


RULES += [(_ascii_edges(pattern), rule) for pattern, rule in _EN_RULES]

_SINCE_EN = lazy_compile(r"\bsince\s+$", re.ASCII)
_SINCE_JA = lazy_compile(r"\s*(?:から|以来|以降)")
_SINCE_REACH = 40
"""How far before an expression "since" is looked for (the words between are spaces)."""


def _since_at(m: re.Match[str], after: LazyPattern = _SINCE_JA) -> bool:
    """Whether the expression ``m`` is one "since" (before it) or から/以来/以降 (``after``
    it) runs from: a past window then runs until now."""
    return since_around(m.string, m.start(), m.end(), after)


def since_around(text: str, start: int, end: int, after: LazyPattern = _SINCE_JA) -> bool:
    """:func:`_since_at` of the span ``start``–``end`` of ``text``."""
    before = _SINCE_EN.search(text, max(0, start - _SINCE_REACH), start)
    return before is not None or after.match(text, end) is not None


_ONLY_BACK_JA = lazy_compile(
    r"\s*(?:以来|から(?:ずっと)?[、,]?(?:今日まで|現在まで"
    r"|(?:今まで|いままで|これまで)(?!以上|通り|より)))"
)
"""以来, and から before 今まで (これまで, 現在まで…): pointing back only (からずっと alone
looks forward as often: 4月からずっと大阪勤務になる; and これまで以上, これまで通り begin another
phrase: 4月からこれまで以上に頑張ります is a plan)."""


def _back_from(m: re.Match[str]) -> bool:
    """Whether the expression ``m`` is one "since" or 以来 runs from, which point back only:
    a month or day still to come this year is then last year's ("since December" said in
    January). から and 以降 point forward as often (4月から大学生になります: a plan)."""
    return _since_at(m, _ONLY_BACK_JA)
