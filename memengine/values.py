"""Values of a closed kind a text states, in English and Japanese: a weekday (Monday, "Tue",
火曜日), a month (March, 3月), a date ("June 6", 6月6日), a day of the month ("the 19th",
19日), a clock time (7pm, 19:00, noon, "half past seven", 午後7時半) and an amount, a number
with its currency or unit ($1,950, 3万円, "120,000 yen", 5 kg). What one value sets aside is
another of the same kind: the answer judge (:mod:`.lifecycle.answer_match`) and the English
corrections of :mod:`.retrieve.change_words` ("it's Tuesday, not Monday") both read them
here. A bare number is none (an age "turning 7", 7歳, a year, 3時間, "3 hours", a phone
number, "3/14", "A320"): nothing tells what it counts.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["closed_values", "kanji_number", "same_kind_change"]

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
_KANJI_NUMBER = "[〇一二三四五六七八九十百千]+"
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
"""A number as written, its thousands grouped by commas ("1,950", "120000", "2.5"; not the
"1,2,3" of a list: each is one number)."""
_ALONE = r"(?<![A-Za-z0-9.,/:\-])"
"""Where a number starts: not inside a longer one, a code or a phone number ("A320",
"090-1234-5678", "3/14")."""
_DONE = r"(?![A-Za-z0-9/\-]|[.,:]\d)"
"""Where a number ends: not inside a longer one ("1,2,3", "3/14", "12-34")."""

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
    "キロ": "km",  # (a distance or a weight: read as one unit, compared with itself)
    "km": "km",
    "cm": "cm",
    "mile": "mi",
    "miles": "mi",
    "lb": "lb",
    "lbs": "lb",
}
"""The currencies and units an amount is read with, each as one sign: "$" for $, USD,
"dollars" and ドル; a memory's "1,800ドル" is the same amount as "$1,800"."""

_VALUES = re.compile(
    # an amount: $1,950, ¥3,000, 1,950円, 3万円, 1.5万円, 十二万円, "120,000 yen", 5 kg
    rf"(?P<sign>[$¥￥£€])\s?(?P<sn>{_NUMBER}){_DONE}(?P<sman>万)?"
    rf"|{_ALONE}(?P<un>{_NUMBER}|{_KANJI_NUMBER})\s?(?P<man>万)?\s?"
    r"(?P<unit>円|ドル|ユーロ|キロ|(?i:usd|jpy|gbp|eur|dollars?|bucks|yen|euros?|kgs?|km|cm"
    r"|miles?|lbs?)\b)"
    # a clock time: 7pm, 7:30 p.m., 19:00, "at 3" ending its clause, noon, midnight, "half
    # past seven", 午後7時半, 三時, 7時30分, 正午 (not 3時間, a duration)
    rf"|{_ALONE}(?P<h>\d{{1,2}})(?::(?P<m>[0-5]\d)(?![\d:])(?:\s?(?P<mam>[ap])\.?m\b\.?)?"
    r"|\s?(?P<am>[ap])\.?m\b\.?)"
    r"|(?i:\bat\s(?P<at>1[0-2]|[1-9])(?=\s*(?:$|[.!;,)]|o'?clock\b|(?:today|tonight|tomorrow"
    r"|sharp|on|in the)\b)))"
    r"|(?i:\b(?P<oclock>\d{1,2}|" + "|".join(_HOURS_WORDS) + r")\so'?clock\b)"
    r"|(?i:\b(?P<past>half|quarter)\s+past\s+(?P<ph>\d{1,2}|" + "|".join(_HOURS_WORDS) + r")\b)"
    r"|(?i:\b(?P<noon>noon|midday|midnight)\b)|(?P<jnoon>正午|真夜中)"
    rf"|(?P<ampm>午前|午後)?(?P<jh>\d{{1,2}}|{_KANJI_NUMBER})時(?!間)"
    rf"(?:(?P<half>半)|(?P<jm>\d{{1,2}}|{_KANJI_NUMBER})分)?"
    # a date: "June 6", "June 6th", "6 June", "the 6th of June", 6月6日, 六月六日
    rf"|\b(?P<md_month>{_MONTH_NAMES}\.?)\s(?P<md_day>[1-3]?\d)(?:st|nd|rd|th)?\b(?![:\d])"
    rf"|\b(?:the\s)?(?P<dm_day>[1-3]?\d)(?:st|nd|rd|th)?\s(?:of\s)?(?P<dm_month>{_MONTH_NAMES})\b"
    rf"|(?P<jdm>\d{{1,2}}|{_KANJI_NUMBER})月(?P<jdd>\d{{1,2}}|{_KANJI_NUMBER})日(?!間)"
    # a day of the month: "the 19th", "on the 3rd", 19日 (not 3日間, a duration)
    r"|(?i:\bthe\s(?P<nth>[1-3]?\d)(?:st|nd|rd|th)\b)"
    rf"|(?<![\d月〇一二三四五六七八九十])(?P<jd>[1-3]?\d|[一二三]?十[一二三四五六七八九]?"
    r"|[一二三四五六七八九])日(?![間本曜中])"
    # a weekday: Monday(s), "Tue", "Sat." (a capital, and a mark or a number after it: not
    # "sat down"), 月曜, 火曜日, (月)
    r"|(?i:\b(?P<day>" + "|".join(_WEEKDAYS) + r")s?\b)"
    r"|\b(?P<abbr>Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun)\b(?=\.?\s*(?:$|[,.!;)\d]))"
    r"|(?P<jday>[月火水木金土日])曜|[(（](?P<pday>[月火水木金土日])[)）]"
    # a month, written with its capital ("May" beside a number or after "in": not "May I")
    r"|\b(?P<month>(?!May\b)(?:January|February|March|April|June|July|August|September"
    r"|October|November|December)|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?(?=\s*\d)"
    r"|May(?=\s*\d)|(?<=\bin )May)\b"
    rf"|(?P<jmonth>\d{{1,2}}|{_KANJI_NUMBER})月(?![曜間])"
)
"""The values of a closed kind as written (:func:`closed_values` reads them)."""


def kanji_number(text: str) -> int:
    """The number written in digits or kanji numerals: "12" 12, 十二 12, 三十 30, 二〇 20, 百五十
    150 (none above 9,999: 万 is read as a multiplier by :func:`closed_values`)."""
    if text.isascii():
        return int(text)
    if not any(c in "十百千" for c in text):
        return int("".join(str(_KANJI.index(c)) for c in text))
    total = digit = 0
    for c in text:
        if c in _KANJI:
            digit = _KANJI.index(c)
        else:
            total += (digit or 1) * {"十": 10, "百": 100, "千": 1000}[c]
            digit = 0
    return total + digit


def _amount(number: str, ten_thousands: bool) -> str:
    """``number`` as written ("1,950", "2.5", 十二) read as one value, times 10,000 after a 万
    (3万 "30000", 1.5万 "15000")."""
    value = float(number.replace(",", "")) if number.isascii() else float(kanji_number(number))
    value *= 10_000 if ten_thousands else 1
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _clock(hour: int, minute: int, half: str | None = None) -> str:
    """A clock time on a 12-hour dial, as one written without a.m. or p.m. may be either (7時
    may be 19:00): 7pm and 19:00 "7:00"; noon and 12pm "12:00", midnight and 12am "0:00"
    (``half`` "a" or "p" for a time written with one)."""
    if hour == 12:
        return f"{0 if half == 'a' else 12}:{minute:02d}"
    return f"{hour % 12}:{minute:02d}"


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
    Tuesday at 7pm" states ("weekday", "1") and ("time", "7:00"); "Rent is $1,950"
    ("amount $", "1950"), 家賃は3万円 ("amount ¥", "30000"), "June 6" ("date", "6/6"), "the
    19th" ("day", "19"). Numbers with nothing to tell what they count are none ("turning
    7", 7歳, "in 2025", 3時間, "090-1234-5678")."""
    values: set[tuple[str, str]] = set()
    for m in _VALUES.finditer(unicodedata.normalize("NFKC", text)):
        if m["sign"]:
            values.add((f"amount {_CURRENCIES[m['sign']]}", _amount(m["sn"], bool(m["sman"]))))
        elif m["unit"]:
            sign = _CURRENCIES[m["unit"].lower()]
            values.add((f"amount {sign}", _amount(m["un"], bool(m["man"]))))
        elif m["h"]:
            hour = int(m["h"])
            half = m["mam"] or m["am"]
            if hour <= 24 and (half is None or 1 <= hour <= 12):
                values.add(("time", _clock(hour, int(m["m"] or 0), half and half.lower())))
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
            hour = kanji_number(m["jh"])
            minute = 30 if m["half"] else kanji_number(m["jm"]) if m["jm"] else 0
            half = {"午前": "a", "午後": "p"}.get(m["ampm"] or "")
            if hour <= 24 and minute < 60:
                values.add(("time", _clock(hour, minute, half)))
        elif m["md_month"] or m["dm_month"]:
            month = _month(m["md_month"] or m["dm_month"])
            day = int(m["md_day"] or m["dm_day"])
            if month is not None and 1 <= day <= 31:
                values.add(("date", f"{month}/{day}"))
        elif m["jdm"]:
            month, day = kanji_number(m["jdm"]), kanji_number(m["jdd"])
            if 1 <= month <= 12 and 1 <= day <= 31:
                values.add(("date", f"{month}/{day}"))
        elif m["nth"] or m["jd"]:
            day = kanji_number(m["nth"] or m["jd"])
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
            month = kanji_number(m["jmonth"])
            if 1 <= month <= 12:
                values.add(("month", str(month)))
    return values


def same_kind_change(said: str, meant: str) -> bool:
    """Whether ``meant`` states a value of a kind ``said`` states as well, and not the same
    one: "Tuesday" for "Monday", "7pm" for "6pm", "$1,950" for "$1,800" (not "$1,950" for
    "1,800円", another currency, nor "Tuesday" for "a sprint")."""
    before, after = closed_values(said), closed_values(meant)
    kinds = {kind for kind, _ in before} & {kind for kind, _ in after}
    return any(
        {v for k, v in before if k == kind} != {v for k, v in after if k == kind} for kind in kinds
    )
