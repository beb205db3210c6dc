"""Values of a closed kind a text states, in English and Japanese: a weekday (Monday, "Tue",
火曜日), a month (March, 3月), a date ("June 6", 6月6日), a day of the month ("the 19th",
19日), a clock time (7pm, 19:00, noon, "half past seven", 午後7時半) and an amount, a number
with its currency or unit ($1,950, 3万円, "120,000 yen", 5 kg, "$2 million", "$15/day"); a
range has both ends (7-9pm, 1〜2万円). What one value sets aside is
another of the same kind: the answer judge (:mod:`.lifecycle.answer_match`) and the English
corrections of :mod:`.retrieve.change_words` ("it's Tuesday, not Monday") both read them
here. A bare number is none (an age "turning 7", 7歳, a year, 3時間, "3 hours", 5日前, 3日目,
"the 1st time", a phone number, "3/14", "A320"): nothing tells what it counts. A clock
time keeps its half of the day when it is written (7am is not 7pm); a bare 7時 may be
either (:func:`holds`). Every number is read from its start and a few characters at most
(:data:`_LONGEST`), so a long paste costs one pass.
"""

from __future__ import annotations

import re
import unicodedata

from .lazy_re import lazy_compile

__all__ = ["closed_values", "compared", "holds", "kanji_number", "same_kind_change", "states_any"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_NAMES = (
    "(?:January|February|March|April|May|June|July|August|September|October|November"
    "|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)"
)
"""A month's name or its short form, with its capital."""
_LOWER_MONTHS = (
    "(?:january|february|march|april|june|july|august|september|october|november|december)"
)
"""A month's whole name typed in lower case, read as one only before its day ("wait no,
march 14": chat is typed so); not "may" (a verb), nor a short form."""
_HOURS_WORDS = (
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
_KANJI = "〇一二三四五六七八九"
_LONGEST = 16
"""The most characters a number is read from: a longer run of digits or numerals is no value
(a paste of 一一一…, a serial number), and reading it would cost more than it tells."""
_NUMERALS = "〇一二三四五六七八九十百千"
_NUMBER = rf"(?:\d{{1,3}}(?:,\d{{3}}){{1,5}}|\d{{1,{_LONGEST}}})(?:\.\d{{1,4}})?"
"""A number as written, its thousands grouped by commas ("1,950", "120000", "2.5"; not the
"1,2,3" of a list: each is one number)."""
_JA_AMOUNT = (
    rf"(?<![0-9{_NUMERALS}万億])(?:{_NUMBER}(?![\d,.])|[{_NUMERALS}])"
    rf"(?:\d{{1,4}}(?![\d,.])|[{_NUMERALS}万億]){{0,{_LONGEST}}}"
)
"""A number with its 万, 億, 千 or 百 as written, in digits, kanji or both ("35,000",
3万5000, 1万2千, 三万五千, 1.5万, 2千, 千), from a run's start and a few pieces at most (each
run of digits whole, so that a failed reading is not tried again split)."""
_ALONE = r"(?<![A-Za-z0-9.,/:\-])"
"""Where a number starts: not inside a longer one, a code or a phone number ("A320",
"090-1234-5678", "3/14")."""
_DONE = r"(?![A-Za-z0-9\-]|/(?![A-Za-z])|[.,:]\d)"
"""Where a number ends: not inside a longer one ("1,2,3", "3/14", "12-34"); a unit it is paid
by may follow ("$15/day", "$1,950/mo")."""
_LARGE_WORD = r"\s?(?i:thousand|million|billion)\b(?:-(?i:dollars?)\b)?"
"""A word that multiplies an amount ("$2 million", "$1.2 billion", "3 thousand dollars", "a
$2 million-dollar house")."""
_TO = r"\s?[-\u2013~〜]\s?"
"""The dash of a range ("$300-400", 300〜400ドル): both of its ends are values."""

_CURRENCIES = {
    "$": "$",
    "usd": "$",
    "dollar": "$",
    "dollars": "$",
    "bucks": "$",
    "ドル": "$",
    "¥": "¥",
    "￥": "¥",
    "円": "¥",
    "yen": "¥",
    "jpy": "¥",
    "£": "£",
    "gbp": "£",
    "€": "€",
    "eur": "€",
    "euro": "€",
    "euros": "€",
    "ユーロ": "€",
    "kg": "kg",
    "kgs": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "キロ": "km",  # (a distance or a weight: read as one unit, compared with itself)
    "km": "km",
    "cm": "cm",
    "mile": "mi",
    "miles": "mi",
    "lb": "lb",
    "lbs": "lb",
    "pound": "lb",  # (a weight: £ is the currency's sign)
    "pounds": "lb",
}
"""The currencies and units an amount is read with, each as one sign: "$" for $, USD,
"dollars" and ドル; a memory's "1,800ドル" is the same amount as "$1,800"."""

_SPAN = (
    "(?:前|後|ぶり|振り|ほど|程|ぐらい|くらい|位|目|間|おき|置き|分|以内|以上|未満|連続|本|曜|中)"
)
"""What makes a number of days no day of the month: a duration, a while ago or after, or an
ordinal (5日前, 5日後, 5日ぶり, 10日ほど, 3日目, 3日間, 2日おき; 日本, 日曜, 日中)."""
_ORDINAL_OF = (
    r"(?:times?|place|one|ones|floor|grade|round|try|attempt|step|day|week|month|year"
    r"|person|row|century|birthday|anniversary|edition|chapter|level|season|episode|lap"
    r"|game|inning|book|child|kid|son|daughter|in line)"
)
"""What an ordinal counts when it is no day of the month ("the 1st time", "the 3rd floor",
"the 2nd one", "the 10th anniversary")."""
_TIME_ALONE = r"(?<![A-Za-z0-9.,/:])(?<!\d[-\u2013])"
"""Where a clock time starts: as a number does (:data:`_ALONE`), or after the dash of a
range of times ("9am-5pm"; not "090-1234")."""
_MERIDIEM = r"[apAP]\.?[mM]\b\.?"
"""A.m. or p.m. as written after a time ("7pm", "7 P.M.", "7:30 a.m.")."""
_VALUES = lazy_compile(
    # an amount: $1,950, ¥3,000, 1,950円, 3万円, 3万5000円, 1.5万円, 十二万円, "120,000 yen",
    # 5 kg, $2k, $1.2m, "2.5k dollars", $300-400 (both ends)
    rf"(?P<sign>[$¥￥£€])\s?(?P<sn>{_NUMBER})(?P<sk>[kKmM](?![A-Za-z])|万|{_LARGE_WORD})?"
    rf"(?:{_TO}[$¥￥£€]?(?P<sn2>{_NUMBER})(?P<sk2>[kKmM](?![A-Za-z])|万|{_LARGE_WORD})?)?{_DONE}"
    rf"|{_ALONE}(?P<un>{_JA_AMOUNT})(?:{_TO}(?P<un2>{_JA_AMOUNT}))?(?P<uk>[kK]|{_LARGE_WORD})?\s?"
    r"(?P<unit>円|ドル|ユーロ|キロ|(?i:usd|jpy|gbp|eur|dollars?|bucks|yen|euros?|kgs?|kilos?"
    r"|km|cm|miles?|lbs?|pounds?)\b)"
    # a range of clock times, both ends: 7-9pm, 9am-5pm, 10:00-11:30 (not "12-34", "3-4")
    rf"|{_TIME_ALONE}(?P<rh>\d{{1,2}})(?::(?P<rm>[0-5]\d))?(?:\s?(?P<ram>{_MERIDIEM}))?{_TO}"
    rf"(?P<rh2>\d{{1,2}})(?::(?P<rm2>[0-5]\d))?(?![\d:])(?:\s?(?P<ram2>{_MERIDIEM}))?"
    r"(?(ram2)|(?(rm)(?(rm2)|(?!))|(?!)))"
    # a clock time: 7pm, 7 P.M., 7:30 p.m., 7.30pm, 19:00, "at 3" ending its clause or line
    # or before what sets it against another ("at 8 not 7", "at 8 instead"), noon,
    # midnight, "half past seven", 午後7時半, 三時, 7時30分, 正午 (not 3時間, a duration)
    rf"|{_TIME_ALONE}(?P<h>\d{{1,2}})(?::(?P<m>[0-5]\d)(?![\d:])(?:\s?(?P<mam>{_MERIDIEM}))?"
    rf"|\.(?P<dm>[0-5]\d)\s?(?P<dam>{_MERIDIEM})|\s?(?P<am>{_MERIDIEM}))"
    r"|(?i:\bat\s(?P<at>1[0-2]|[1-9])(?=\s*(?:$|[\n.!?;,)]|o'?clock\b|(?:today|tonight|tomorrow"
    r"|sharp|on|in the|not|instead)\b)))"
    r"|(?i:\b(?P<oclock>\d{1,2}|" + "|".join(_HOURS_WORDS) + r")\so'?clock\b)"
    r"|(?i:\b(?P<past>half|quarter)\s+past\s+(?P<ph>\d{1,2}|" + "|".join(_HOURS_WORDS) + r")\b)"
    r"|(?i:\b(?P<noon>noon|midday|midnight)\b)|(?P<jnoon>正午|真夜中)"
    rf"|(?P<ampm>午前|午後)?(?<![0-9{_NUMERALS}])(?P<jh>\d{{1,2}}|[{_NUMERALS}]{{1,4}})時(?!間)"
    rf"(?:(?P<half>半)|(?P<jm>\d{{1,2}}|[{_NUMERALS}]{{1,4}})分)?"
    # a date: "June 6", "June 6th", "6 June", "the 6th of June", "The 4th of July", 6月6日
    rf"|\b(?P<md_month>{_MONTH_NAMES}\.?|{_LOWER_MONTHS})\s(?P<md_day>[1-3]?\d)(?:st|nd|rd|th)?\b(?![:\d])"
    rf"|\b(?:[Tt]he\s)?(?P<dm_day>[1-3]?\d)(?:st|nd|rd|th)?\s(?:of\s)?(?P<dm_month>{_MONTH_NAMES})\b"
    rf"|(?<![0-9{_NUMERALS}])(?P<jdm>\d{{1,2}}|[{_NUMERALS}]{{1,3}})月"
    rf"(?P<jdd>\d{{1,2}}|[{_NUMERALS}]{{1,4}})日(?!{_SPAN})"
    # a day of the month: "the 19th", "on the 3rd", 19日 (not 3日間, 5日前, 3日目, "the 1st
    # time": a duration or an ordinal)
    rf"|(?i:\bthe\s(?P<nth>[1-3]?\d)(?:st|nd|rd|th)\b(?!\s+{_ORDINAL_OF}\b))"
    rf"|(?<![\d月{_NUMERALS}])(?P<jd>[1-3]?\d|[一二三]?十[一二三四五六七八九]?"
    rf"|[一二三四五六七八九])日(?!{_SPAN})"
    # a weekday: Monday(s), "Tue", "Sat." (a capital, and a mark or a number after it: not
    # "sat down"), 月曜, 火曜日, (月)
    r"|(?i:\b(?P<day>" + "|".join(_WEEKDAYS) + r")s?\b)"
    r"|\b(?P<abbr>Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun)\b(?=\.?\s*(?:$|[,.!;)\d]))"
    r"|(?P<jday>[月火水木金土日])曜|[(（](?P<pday>[月火水木金土日])[)）]"
    # a month, written with its capital ("May" beside a number or after "in": not "May I")
    r"|\b(?P<month>(?!May\b)(?:January|February|March|April|June|July|August|September"
    r"|October|November|December)|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?(?=\s*\d)"
    r"|May(?=\s*\d)|(?<=\bin )May)\b"
    rf"|(?<![0-9{_NUMERALS}])(?P<jmonth>\d{{1,2}}|[{_NUMERALS}]{{1,3}})月(?![曜間])"
)
"""The values of a closed kind as written (:func:`closed_values` reads them)."""


def kanji_number(text: str) -> int | None:
    """The number written in digits or kanji numerals, 万 and 億 read as written: "12" 12,
    十二 12, 三十 30, 二〇 20, 百五十 150, 3万5000 35000, 三万五千 35000, 2千 2000; none for a
    run longer than :data:`_LONGEST` (一一一… pasted) or one that reads as no number."""
    value = _ja_number(text)
    return None if value is None or value != int(value) else int(value)


_PIECE = lazy_compile(r"\d[\d,]*(?:\.\d+)?|.", re.S)
"""A run of digits ("35,000", "1.5") or one character (万, 三) of a number as written."""
_DIGITS = lazy_compile(r"\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?")
"""Digits that are one number: their thousands grouped by commas or not ("35,000"; not "1,2")."""
_SMALL = {"十": 10, "百": 100, "千": 1000}
"""The multipliers within a group of four digits (三千, 5千)."""
_LARGE = {"万": 10_000, "億": 100_000_000}
"""The multipliers of a group of four digits (3万5000, 1億)."""


def _ja_number(text: str) -> float | None:
    """The number ``text`` writes in digits, kanji or both, its 十, 百, 千, 万 and 億 read as
    multipliers (1万2000 12000, 1.5万 15000, 三万五千 35000, 千 1000), or none (a run over
    :data:`_LONGEST` characters, "1,2,3")."""
    if not text or len(text) > _LONGEST:
        return None
    total = section = 0.0
    current: float | None = None
    kanji_digits = False  # (二〇 is 20: kanji digits in a row are one number's)
    for piece in _PIECE.findall(text):
        if piece[0].isascii() and piece[0].isdigit():
            if current is not None or _DIGITS.fullmatch(piece) is None:
                return None
            current, kanji_digits = float(piece.replace(",", "")), False
        elif piece in _KANJI:
            digit = _KANJI.index(piece)
            current = current * 10 + digit if current is not None and kanji_digits else digit
            kanji_digits = True
        elif piece in _SMALL:
            section += (1 if current is None else current) * _SMALL[piece]
            current, kanji_digits = None, False
        elif piece in _LARGE:
            total += (section + (current or 0)) * _LARGE[piece]
            section, current, kanji_digits = 0.0, None, False
        else:
            return None
    return total + section + (current or 0)


_SUFFIXES = {
    "k": 1_000,
    "m": 1_000_000,
    "万": 10_000,
    "thousand": 1_000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
}
"""What a letter, a word or a 万 after an amount multiplies it by ($2k, $1.2m, "$2 million",
¥3万)."""


def _amount(number: str, suffix: str | None = None) -> str | None:
    """``number`` as written ("1,950", "2.5", 十二, 3万5000) read as one value, times a
    thousand after a "k", a million after an "m" ($2k "2000", $1.2m "1200000"), or none."""
    value = _ja_number(number)
    if value is None:
        return None
    value *= _SUFFIXES.get((suffix or "").strip().lower().split("-")[0], 1)
    return f"{value:.2f}".rstrip("0").rstrip(".")


_LARGEST_UNIT = lazy_compile("[百千]*[億万]|[千百]")
"""The largest multiplier of a Japanese amount, whole: its first unit, with the 百 or 千
before a 万 or 億 that multiplies it (万 of 2万5千, 百万 of 3百万, 千万 of 2千万, 千 of 2千5百)."""


def _range_amounts(
    low: str, low_suffix: str | None, high: str | None, high_suffix: str | None
) -> list[str]:
    """The amounts of a range's two ends as read (:func:`_amount`), the high end's multiplier
    (its largest, whole: :data:`_LARGEST_UNIT`) applied to a bare low end when that makes an
    ordered range, however the range is written: 1〜2万円 "10000" and "20000", 1〜2万5千円
    "10000" and "25000", 2〜3百万円 "2000000" and "3000000", $5-10k and "5-10k dollars" "5000" and "10000" (not $500-1k nor "800-1.2k
    dollars": 500 thousand is more than 1k)."""
    ends = [_amount(low, low_suffix)]
    if high is not None:
        ends.append(_amount(high, high_suffix))
        top = ends[1]
        if low_suffix is None and top is not None:
            if high_suffix is not None:
                wider = _amount(low, high_suffix)  # ($5-10k)
            elif unit := _LARGEST_UNIT.search(high):
                # (1〜2万円, 1〜2万5千円, 2〜3百万円)
                wider = None if unit[0][-1] in low else _amount(low + unit[0])
            else:
                wider = None
            if wider is not None and float(wider) <= float(top):
                ends[0] = wider
    return [end for end in ends if end is not None]


def _range_times(start: tuple[int, int, str | None], end: tuple[int, int, str | None]) -> list[str]:
    """The clock times of a range's two ends (hour, minute and half of the day as written),
    the end's half applied to a bare start when that makes an ordered range: 7-9pm "19:00"
    and "21:00", 11-1pm a bare 11 and "13:00"; none for an hour no clock shows."""
    (hour, minute, half), (hour2, minute2, half2) = start, end
    if not all(1 <= h <= 12 if m else h <= 24 for h, m in ((hour, half), (hour2, half2))):
        return []
    if half is None and half2 is not None and hour <= 12:
        starts, ends = _clock(hour, minute, half2), _clock(hour2, minute2, half2)
        as_minutes = [int(t.split(":")[0]) * 60 + int(t.split(":")[1]) for t in (starts, ends)]
        if as_minutes[0] < as_minutes[1]:
            half = half2
    return [_clock(hour, minute, half), _clock(hour2, minute2, half2)]


def _clock(hour: int, minute: int, half: str | None = None) -> str:
    """A clock time on a 24-hour dial when its half of the day is written (7pm, 午後7時 and
    19:00 "19:00", 7am "7:00"; noon and 12pm "12:00", midnight and 12am "0:00"), else both
    its readings, as a bare 7時 or "at 7" may be either ("7:00|19:00")."""
    if half is not None:
        return f"{hour % 12 + (12 if half == 'p' else 0)}:{minute:02d}"
    if hour == 0 or hour >= 13:
        return f"{hour % 24}:{minute:02d}"
    return f"{hour % 12}:{minute:02d}|{hour % 12 + 12}:{minute:02d}"


def _month(word: str) -> int | None:
    """The month a capitalised word names, whole or its first three letters ("June", "Sept",
    "Dec."), if any."""
    word = word.rstrip(".").lower()
    for i, name in enumerate(_MONTHS, 1):
        if word == name or (len(word) >= 3 and name.startswith(word) and len(word) <= 4):
            return i
    return None


def closed_values(text: str) -> set[tuple[str, str]]:
    """The values of a closed kind ``text`` states, each with its kind: "Yoga moved to
    Tuesday at 7pm" states ("weekday", "1") and ("time", "19:00"), "at 7" ("time",
    "7:00|19:00"); "Rent is $1,950" ("amount $", "1950"), 家賃は3万5000円 ("amount ¥",
    "35000"), "June 6" ("date", "6/6"), "the 19th" ("day", "19"). Numbers with nothing to
    tell what they count are none ("turning 7", 7歳, "in 2025", 3時間, 5日前, "the 1st
    time", "090-1234-5678")."""
    values: set[tuple[str, str]] = set()
    for m in _VALUES.finditer(unicodedata.normalize("NFKC", text)):
        if m["sign"] or m["unit"]:
            sign = _CURRENCIES[(m["sign"] or m["unit"]).lower()]
            ends = (
                _range_amounts(m["sn"], m["sk"], m["sn2"], m["sk2"])
                if m["sign"]
                else _range_amounts(
                    m["un"], None if m["un2"] else m["uk"], m["un2"], m["uk"] if m["un2"] else None
                )
            )
            values.update((f"amount {sign}", value) for value in ends)
        elif m["rh"]:
            values.update(
                ("time", value)
                for value in _range_times(
                    (int(m["rh"]), int(m["rm"] or 0), m["ram"] and m["ram"][0].lower()),
                    (int(m["rh2"]), int(m["rm2"] or 0), m["ram2"] and m["ram2"][0].lower()),
                )
            )
        elif m["h"]:
            hour = int(m["h"])
            half = m["mam"] or m["dam"] or m["am"]
            minute = int(m["m"] or m["dm"] or 0)
            if hour <= 24 and (half is None or 1 <= hour <= 12):
                values.add(("time", _clock(hour, minute, half and half[0].lower())))
        elif m["at"]:
            values.add(("time", _clock(int(m["at"]), 0)))
        elif m["oclock"] or m["ph"]:
            word = (m["oclock"] or m["ph"]).lower()
            hour = int(word) if word.isdigit() else _HOURS_WORDS.index(word) + 1
            minute = {"half": 30, "quarter": 15}.get((m["past"] or "").lower(), 0)
            if 1 <= hour <= 12:
                values.add(("time", _clock(hour, minute)))
        elif m["noon"] or m["jnoon"]:
            noon = (m["noon"] or "").lower() in ("noon", "midday") or m["jnoon"] == "正午"
            values.add(("time", "12:00" if noon else "0:00"))
        elif m["jh"]:
            ja_hour = kanji_number(m["jh"])
            ja_minute = 30 if m["half"] else kanji_number(m["jm"]) if m["jm"] else 0
            half = {"午前": "a", "午後": "p"}.get(m["ampm"] or "")
            if ja_hour is None or ja_minute is None:
                continue
            if ja_hour <= 24 and ja_minute < 60 and (half is None or ja_hour <= 12):
                values.add(("time", _clock(ja_hour, ja_minute, half)))
        elif m["md_month"] or m["dm_month"]:
            month = _month(m["md_month"] or m["dm_month"])
            day = int(m["md_day"] or m["dm_day"])
            if month is not None and 1 <= day <= 31:
                values.add(("date", f"{month}/{day}"))
        elif m["jdm"]:
            month, day = kanji_number(m["jdm"]) or 0, kanji_number(m["jdd"]) or 0
            if 1 <= month <= 12 and 1 <= day <= 31:
                values.add(("date", f"{month}/{day}"))
        elif m["nth"] or m["jd"]:
            day = kanji_number(m["nth"] or m["jd"]) or 0
            if 1 <= day <= 31:
                values.add(("day", str(day)))
        elif m["day"]:
            values.add(("weekday", str(_WEEKDAYS.index(m["day"].lower()))))
        elif m["abbr"]:
            values.add(("weekday", str([d[:3] for d in _WEEKDAYS].index(m["abbr"][:3].lower()))))
        elif m["jday"] or m["pday"]:
            values.add(("weekday", str("月火水木金土日".index(m["jday"] or m["pday"]))))
        elif m["month"]:
            month = _month(m["month"])
            if month is not None:
                values.add(("month", str(month)))
        elif m["jmonth"]:
            month = kanji_number(m["jmonth"]) or 0
            if 1 <= month <= 12:
                values.add(("month", str(month)))
    return values


def without_values(text: str) -> str:
    """``text`` (NFKC-normalized) with each value of a closed kind it states blanked out:
    what it says beside its weekdays, times, dates and amounts."""
    return _VALUES.sub(" ", unicodedata.normalize("NFKC", text))


def compared(values: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """``values`` with the day of the month of each date beside it, so that "June 19" is
    compared with "the 12th" ("date" "6/19" is also "day" "19")."""
    return values | {("day", value.split("/")[1]) for kind, value in values if kind == "date"}


def holds(values: set[tuple[str, str]], value: tuple[str, str]) -> bool:
    """Whether ``values`` hold ``value`` or one it may be: a bare 7時 ("7:00|19:00") is 7am
    ("7:00") or 7pm ("19:00"), but 7am is not 7pm."""
    kind, readings = value[0], set(value[1].split("|"))
    return any(k == kind and not readings.isdisjoint(v.split("|")) for k, v in values)


def states_any(text: str, values: set[tuple[str, str]]) -> bool:
    """Whether ``text`` states one of ``values`` (:func:`closed_values`, compared as
    :func:`holds` compares them: a bare 7時 may be 7pm, "June 19" holds the 19th): what a
    correction says was wrong ("not Monday") is what the memory it corrects states."""
    stated = compared(closed_values(text))
    return any(holds(stated, value) for value in values)


def same_kind_change(said: str, meant: str) -> bool:
    """Whether ``meant`` states a value of a kind ``said`` states as well, and not the same
    one: "Tuesday" for "Monday", "7pm" for "6pm" or "7am", "$1,950" for "$1,800", "June 19"
    for "the 12th" (not "$1,950" for "1,800円", another currency, "Tuesday" for "a sprint",
    nor "at 7" for "7pm", which it may be)."""
    before, after = compared(closed_values(said)), compared(closed_values(meant))
    kinds = {kind for kind, _ in before} & {kind for kind, _ in after}
    return any(not holds(after, value) for value in before if value[0] in kinds) or any(
        not holds(before, value) for value in after if value[0] in kinds
    )
