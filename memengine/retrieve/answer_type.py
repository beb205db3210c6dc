"""What kind of answer a question asks for, and whether a text could hold one.

"When is Maja's wedding?" is answered by a turn that names a date
("November 21st, at a winery…"); "How much am I paying her per walk?" by
one that holds a number ("$10 a walk"). Such answer turns often do not
repeat the words of the question, so neither list ranks them first. The
fast path gives the candidates that carry the asked kind a bonus
(``answer_type_weight``, :func:`.evidence.answer_type_bonus`).

Three kinds, in English and Japanese:

- ``time``: "when did/is …", "what date/day/year …", 「いつ」「何日」「何曜日」;
  carried by dates, month and weekday names, clock times ("6:30pm", 「18時30分」; one
  with a colon unless its words make it something else: "dinner is 19:00", 「会議は14:00」;
  not a score, a verse, a pace or a place in a video: "won 21:15", "John 3:16", "pace is
  5:30", "1:20 in the video") and relative
  expressions ("yesterday", "next week", 「先月」「3月」「来週」; a lone 一日 only after a month,
  「12月一日」, not 「一日つぶれた」 "lost a day"), as words of prose, not of
  code ("sep=';'", "dec(3)", the 12/3 of "/users/12/3", the "2048" of "port 2048"); a
  capital after a dot starts a sentence ("Monday.It was fun", "ok.Tomorrow works").
- ``quantity``: "how much/many/far/long/old …", "what number/price …", "what's my
  room number btw?" (not "the number one thing"), "what did the plumber cost in the end?"
  (not "pay attention to"), 「いくら」「どのくらい」「何回」「何泊」
  「何グラム」「何便」「何割」「何万円」「部屋番号なんだっけ」; carried by any numeral (digits,
  number words, kanji numerals that count something: 八回, 二泊, 三千) but a lone one (not
  a price's or a measure's: 一円, 一キロ, "one dollar", "one euro", "one kilo" are one).
- ``how_many``: a quantity question of a count or a length, "how many/long/far/old …",
  "how much time/longer …", "how much of the day", 「何人」「何日間」「何回」「どのくらい」,
  not of a price (「いくら」「何万円」, "how much"), nor a date's 「何日に」「何日から」: carried
  also by a lone one, which is as often no number ("one of the hardest days", 「一日つぶれた」
  "lost a day", 「一日中」「一人で」 "all day", "alone") as the answer ("just one", 「一人で行った」
  to 何人で行った？).

"When" only asks when an auxiliary follows it ("when was…", "when's…", "when am I…"),
so "back when I was…" asks nothing; 「いつも」「いつでも」 and the 「いつ」 of 「あいつ」 are not
「いつ」.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from enum import Enum

from ..lazy_re import LazyPattern, lazy_compile

__all__ = ["AnswerType", "asked_types", "carries", "carries_any"]


class AnswerType(str, Enum):
    """A kind of answer a question can ask for."""

    time = "time"
    quantity = "quantity"
    how_many = "how_many"


_AUX = r"is|was|were|are|am|did|do|does|will|would|should|can|could|has|have|had"
_EN_TIME_Q = lazy_compile(
    rf"\bwhen (?:{_AUX})\b|\bwhen['’](?:s|re|ll|d)\b|\bwhen\s*\?"
    r"|\bwhat (?:date|day|time|month|year|week)\b"
    r"|\bwhich (?:date|day|month|year|week|weekend)\b|\bhow long ago\b",
    re.ASCII,
)
_AMOUNTS = (
    "number|price|percentage|score|amount|size|temperature|distance|cost|fee|fare|total|age"
    "|weight|height|rate"
)
_CHAT_TAIL = (
    r"(?:btw|lol|haha|again|now|then|back|these days|nowadays|anyway|though|tho|in the end"
    r"|in total|altogether|overall|upfront|exactly|roughly|approximately|each|monthly|weekly"
    r"|yearly|annually|today|tonight|yesterday|last|this)\b|(?:in|on)\s+[a-z]"
)
"""The chat words that may follow an amount or a verb of paying in a question: a word of talk
("…room number btw?", "…lol"), when ("now", "these days", "back then", "back in May", "last
year", "on Friday", "in the end"), how often ("monthly")."""
_AMOUNT_ENDS = (
    r"(?=\s*(?:[?.!,;:]|$)|\s+for\s+[^\s?.!]"
    r"|\s+(?:of|at|to|from|between|per|after|before|during|when|like|since|there|here|that"
    r"|i|you|we|he|she|they|it|is|was|will|did|do|does)\b"
    rf"|\s+(?:{_CHAT_TAIL}))"
)
"""What ends the noun phrase of an amount asked by name: the question's end, a preposition, an
adverb, a clause ("what's my room number?", "the price of…", "the score last night", "the
number you gave me", "my room number btw?", "my weight back in May?"; not "the number one
thing", "my weight loss plan", "the rate limit", "what's the fee for?")."""
_PAID_ENDS = (
    r"(?:\s+(?:me|you|him|her|us|them|the\s+[a-z]+))?"
    rf"(?=\s*(?:[?.!,]|$)|\s+(?:for\s+[^\s?.!]|to\s+[a-z]|per\b|{_CHAT_TAIL}))"
)
"""What follows a verb of paying when it asks an amount: nothing, whom ("what did the plumber
charge?", "what did it cost you?", "what did we pay the plumber?"), what for ("…pay for the
tickets?"), to do what ("what would it cost to fix?"), a word of chat ("…cost in the end?",
"…charge monthly?", "what did we pay in rent last year?", "…pay the babysitter on Friday?");
not another object or a question of what ("pay attention to", "charge me with", "charge your
phone", "cost you emotionally", "what did she pay for?")."""
_EN_QUANTITY_Q = lazy_compile(
    r"\bhow (?:much|many|far|long|old|often|big|tall|heavy|fast|expensive)\b"
    rf"|\bwhat (?:{_AMOUNTS})\b"
    rf"|\bwhat(?:['’]?s| is| was| are| were)\s+(?:the|my|your|his|her|our|their|its)"
    rf"(?:\s+[a-z]+)?\s+(?:{_AMOUNTS}){_AMOUNT_ENDS}"
    rf"|\bwhat (?:{_AUX})\s+(?:[a-z'’]+\s+){{1,3}}(?:cost|charged?|pay|paid){_PAID_ENDS}",
    re.ASCII,
)
"""An English question of a quantity: "how much/many…", "what price…", a number or an amount
asked by name ("what's my flight number?", "what was the price of…"), what something cost
("what did the plumber cost?", "what did you pay for it?", "what was I charged?")."""
_EN_COUNT_Q = lazy_compile(
    r"\bhow (?:many|far|long|old|often|big|tall|heavy|fast)\b"
    r"|\bhow much (?:more |extra )?(?:time|longer|further|farther)\b"
    r"|\bhow much of (?:the|a|an|my|your|his|her|our|their) (?:day|week|month|year|weekend"
    r"|morning|afternoon|evening|night|summer|holiday|vacation|trip)\b",
    re.ASCII,
)
"""An English question of a count or a length, which a lone "one" may answer ("how many kids…?"
"just one"; "how long did it take?", "how much time did it take?", "how much longer?", "how
much of the day?" "one week"); not "how much…" of a price, nor a number asked by name."""
# いつ, but not いつも/いつでも/いつの間に, nor いつか "someday" (いつかしら/いつかな ask, as
# いつから "since when" does), nor the いつ of あいつ/こいつ/そいつ/どいつ ("that guy")
_JA_TIME_Q = lazy_compile(
    r"(?<![あこそど])いつ(?!も|の間|でも|か[^しなら])|何日|何月|何時|何曜|何年|日付|日程"
)
_JA_COUNTERS = (
    "円|人|回|歳|才|泊|個|本|枚|度|分|杯|冊|匹|点|番|件|台|階|位|週|秒|倍|年|日|時間"
    "|ヶ月|か月|カ月|キロ|グラム|メートル|センチ|ミリ|リットル|ページ|パーセント|%"
    "|着|軒|社|足|頭|羽|駅|周|錠|粒|便|号|割|ドル|ユーロ|kg|km|cm|mm|ml"
)
_JA_QUANTITY_Q = lazy_compile(
    rf"いくら|どれ(?:くらい|ぐらい)|どの(?:くらい|ぐらい)|何(?:{_JA_COUNTERS}|[万千百億])"
    r"|番号(?:って|は|を)?(?:何|なに|なん(?![てか])|どれ|いくつ|\?"
    # 番号覚えてる？, 番号教えてくれる？: a question mark within a clause's reach (not scanned
    # to the end from each 番号教え of a long text)
    r"|(?:教え|覚え)[^。!?\n]{0,30}?(?:\?|っけ|かな)"
    r"|教えて(?:ください|下さい|ほしい|欲しい|くれ|ちょうだい)?[ねよな]?(?=$|[。!、,\s]))"
)
"""A Japanese question of a quantity: いくら, どのくらい, 何 before a counter or a place of
a number (何回, 何便, 何号室, 何割, 何ドル, 何万円), a number asked by name or asked for
(部屋番号なんだっけ, フライト番号は？, 番号覚えてる？, 番号教えて, 電話番号教えてほしいな; not
電話番号変えた, nor a number told: 番号教えるね, 番号覚えた, 番号を教えてもらった, 番号なんて忘れた)."""
_JA_COUNT_Q = lazy_compile(
    r"(?:どれ|どの)(?:くらい|ぐらい)|何(?!円|ドル|ユーロ|日(?:に|から|まで|は|頃|ごろ))"
    r"(?:" + _JA_COUNTERS + ")"
)
"""A Japanese question of a count or a length, which a lone 一 may answer (何人 → 一人で,
何日間/何日かかった/何日くらい → 一日, どのくらいかかった → 一日); not いくら, 何円, 何万円 nor
何ドル, a price, nor 何日に/何日から/何日まで/何日は/何日頃, a date (旅行は何日に出発？ is not
answered by 一日つぶれた "lost a day")."""


def _by_first_letter(words: Iterable[str]) -> LazyPattern:
    """A pattern of any of the lower-case ``words``, grouped by their first letter
    ("j(?:an|un)|f(?:eb|riday)…"): a search tries one branch where a word may start."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(re.escape(word[1:]))
    return lazy_compile(
        "|".join(f"{first}(?:{'|'.join(rests)})" for first, rests in groups.items())
    )


_MONTHS = (
    "january|february|march|april|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
)
_WORD_START = r"(?<!\w)(?:(?<!\.)|(?-i:(?=[A-Z])))(?<![\s-]-)(?<!^-)\b"
_WORD_END = r"\b(?![=(_]|\.(?-i:[a-z_]))"
"""The edges of a time's word in prose, not in code: not an attribute, a keyword argument
or a call ("df.sep", "sep=';'", "dec(3)", "oct.x"), nor an option ("--sep", "-dec"); "mid-Sep"
and "Sept. 12" are words, and so is one beside a dot and a capital, which starts a sentence
written without its space ("Monday.It was fun", "ok.Tomorrow works"; read as written:
:func:`carries_any`)."""
_NOT_YEAR_LABELS = (
    "port", "pid", "errno", "error", "exit code", "exit status", "status code", "error code",
    "return code",
)  # fmt: skip
_NOT_YEAR = (  # (read after the number: looked at only where one is)
    "".join(
        rf"(?<!\b{label}{gap}\d{{4}})" for label in _NOT_YEAR_LABELS for gap in (" ", ": ", "=")
    )
    + r"(?<![:#]\d{4})"
)
"""What a number of four digits is not a year after: a label of a number in code or a log
("port 2048", "error: 1903", "pid=1999", "exit code 2019"; not a word that is prose too, "the
dress code 2024", "My status 2020: single", "the exit 2019 results"), a colon ("localhost:2020")
or "#" ("#1999")."""
_LINE_NUMBER = r"(?!(?<=\bline \d{4})(?:[,:]|\s+in\b|\s+of\s+\S+\.[a-z]))"
"""What a number of four digits after "line" is a line's number before, not a year: a comma
or a colon, "in", "of" a file ('File "app.py", line 2012, in main', "line 2012 of main.py";
not "line 2012 of the report")."""
_WEEK_WORDS = (
    "monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|yesterday|tomorrow"
    "|tonight|tues?|thu|thurs?"
)
_EN_TIME_NUMBER = lazy_compile(
    r"[0-9](?<!\w[0-9])(?:"  # a number's first digit (found by a scan for digits), then
    r"[0-9]?(?:st|nd|rd|th)\b"  # a day: 3rd, 21st
    r"|(?<!/[0-9])[0-9]?/\d{1,2}(?:/(?:\d{4}|\d{2}))?\b(?!/\w)"  # not of a path: /users/12/3
    rf"|(?:(?<=1)9|(?<=2)0)\d{{2}}\b{_NOT_YEAR}{_LINE_NUMBER}"  # a year
    r"|[0-9]?(?::\d{2})?\s?(?:am|pm)\b)",  # 6pm, 6:30 am
    re.ASCII | re.IGNORECASE,
)
"""A time's number in English: a day ("3rd"), a date ("12/3", "12/3/2024"), a year (not a
port's, a line's…: :data:`_NOT_YEAR`), a clock time with am or pm ("6pm", "6:30 am")."""
_EN_TIME_WORD = lazy_compile(
    rf"{_WORD_START}(?:{_MONTHS}|{_WEEK_WORDS}){_WORD_END}", re.ASCII | re.IGNORECASE
)
"""A month or a day as a word of prose: "June", "Sept.", "Monday", "Tues", "tomorrow",
"weekend" (short as "Tue" or "Thurs", words of nothing else; "Mon", "Wed", "Sat" and "Sun" are
words too, "I sat down", "we wed in June", the sun: :data:`_EN_ON_SHORT_DAY`)."""
_EN_TIME_WORD_FIRST = _by_first_letter((
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "monday",
    "tue", "wednesday", "thu", "friday", "saturday", "sunday", "weekend", "yesterday",
    "tomorrow", "tonight",
))  # fmt: skip
"""What each word of :data:`_EN_TIME_WORD` starts with, lower-cased ("jan" of "January",
"tue" of "Tues"): a word added to :data:`_MONTHS` or :data:`_WEEK_WORDS` needs its own."""
_EN_MAY = lazy_compile(r"\bmay\s+\d", re.ASCII | re.IGNORECASE)
"""May before a day ("May 5"; not "may" the verb)."""
_EN_ON_SHORT_DAY = lazy_compile(
    r"\b(?:on|next|last|this|by|until|till)\s+(?-i:(?:Mon|Wed|Sat|Sun)\b(?!\s+[A-Z]))",
    re.ASCII | re.IGNORECASE,
)
"""A weekday written "Mon", "Wed", "Sat" or "Sun": only capitalised after "on", "next",
"by"…, as "on Sat", and not before another capitalised word, "on Sun Valley's slopes"."""
_PERIODS = "week|month|year|spring|summer|fall|autumn|winter"
_EN_PERIOD = lazy_compile(
    rf"\b(?:next|last|this|coming)\s+(?:{_PERIODS})\b", re.ASCII | re.IGNORECASE
)
"""A relative period: "next week", "last summer", "this coming year"."""
_EN_PERIOD_KEYS = lazy_compile(_PERIODS)  # (looked for in the text lower-cased)
_EN_AGO = lazy_compile(
    r"\bo'clock\b|\b(?:days?|weeks?|months?|years?) ago\b", re.ASCII | re.IGNORECASE
)
"""A clock time in words, "… ago"."""
_HH_MM = r"(?:[01]?\d|2\d):[0-5]\d"
_CLOCK = lazy_compile(
    rf"(?<![\w.:/#=]){_HH_MM}(?![\w:/=(]|\.(?-i:[a-z0-9_]))", re.ASCII | re.IGNORECASE
)
"""Hours and minutes with a colon (18:30, 10:40, a late night's 25:00) in prose: not with
seconds (a race's "1:23:45"), nor in code, an address or a path ("localhost:8080", "/12:30",
"t=10:30", "x.12:30"); a sentence may follow without its space ("at 9:00.It was late").
Scores, verses, paces and a video's seconds are written so too: :func:`_clock_time` reads
one as a time unless its words say it is one of those."""
_CLOCK_BEFORE = lazy_compile(
    r"(?:\b(?:at|by|from|until|till|til|around|before|after|since|between|morning|afternoon"
    r"|evening|night|tonight|today|tomorrow|noon)|@|朝|昼|夜|夕方|晩|午前|午後|今日|明日|あした"
    r")\s{0,2}$",
    re.ASCII | re.IGNORECASE,
)
"""The word just before a colon time that makes it a time whatever came before it: a
preposition of time ("the marathon starts at 9:00", "my run at 6:30", "@ 19:00"), a part of
the day ("tomorrow morning 7:30", 朝7:30, 明日10:00)."""
_NOT_CLOCK_WORDS = (
    "scores?|scored|beats?|won|wins?|lost|lose|loses|drew|draw|tied|ties?|vs|v|versus|final"
    "|half-?time|ratio|verses?|chapters?|sections?|articles?|psalms?|paces?|ran|runs?|running"
    "|km|kms|miles?|5k|10k|marathon|min|mins|videos?|clips?|songs?|timestamps?"
)
_NOT_CLOCK_BEFORE = lazy_compile(
    rf"(?:\b(?:{_NOT_CLOCK_WORDS})\b(?!['’])[.:]?"
    r"(?:\s+(?!(?:and|then|but|so|or)\b)[^\s.,;!?。、]+){0,2}"  # (not past a clause's start)
    r"|キロ|ペース|スコア|動画|ビデオ)(?:は|が|も|で|の|って)?\s*$",
    re.ASCII | re.IGNORECASE,
)
"""A word at most two words before a colon time that makes it a score, a reference, a pace
or a place in a video: "the final score was 21:15", "we beat them 10:20", "we lost 10:20",
"Section 12:30", "pace is 5:30", "ran a 25:30 5k", キロ5:30, ペースは5:30 (not "won't",
nor one before "and" or "then": "I ran 5k then dinner 19:00" is a time)."""
_NOT_CLOCK_AFTER = lazy_compile(
    r"\s*(?:pace|min|mins|km|kms|miles?|5k|10k|marathon|splits?|laps?|win|loss|victory"
    r"|per (?:km|k|kilometer|kilometre|mile|lap))\b"
    r"|\s+(?:in|into|of|on)\s+(?:the|this|that|my|your|his|her|our|their|a)\s+"
    r"(?:video|vid|clip|song|film|movie|recording|podcast|episode|stream)\b"
    r"|(?:の|で)?(?:ペース|勝|負)",
    re.ASCII | re.IGNORECASE,
)
"""The words just after a colon time that make it a pace, a race's time, a score or a place
in a video: "5:30 pace", "25:30 5k", "21:15 win", "1:20 in the video", 5:30ペース,
21:15で勝った."""
_TIME_NAMES = (
    f"may|{_MONTHS}|(?:monday|tuesday|wednesday|thursday"
    "|friday|saturday|sunday|mon|tues?|wed|thu|thurs|fri|sat|sun|weekday|weekend|morning"
    "|afternoon|evening|night)s?|today|tonight|tomorrow|noon|midnight|breakfast|brunch|lunch"
    "|dinner|supper"
)
_OPENERS = (
    "is|was|are|were|be|do|does|did|will|would|can|could|should|maybe|say|or|and|but|so|then"
    "|now|probably|like|about|approx|ok|okay|yes|yeah|no|sure|also|even|only|just|still"
    "|thanks|its|how|what"
)
_NAME_BEFORE = lazy_compile(
    rf"(?<![\w'’.-])(?!(?i:(?:{_TIME_NAMES}|{_OPENERS})\b))[A-Z][a-z]+\.?\s$", re.ASCII
)
"""A capitalised word just before a colon time, not the name of a month, a day or a part of
it ("Monday 9:00", "Dinner 19:00") nor a word that opens a sentence ("Is 7:30 ok?",
"Maybe 8:15?"): a book before a chapter of one digit ("John 3:16", "Gen 1:27", "Luke 2:10")
or a plural name before its score or chapter ("Lakers 21:15", "Romans 12:10"), not a time."""
_NUMBER_WORDS = (
    "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
    "|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|dozen|half|couple"
)
_UNITS = (
    "dollars?|bucks?|euros?|pounds?|quid|yen|cents?|pennies|penny|kilos?|kilograms?|kg|grams?"
    "|kilometers?|kilometres?|km|miles?|meters?|metres?|feet|foot|inch|inches|liters?|litres?"
    "|gallons?|ounces?|oz|lbs?|percent"
)
_EN_QUANTITY_A = lazy_compile(
    rf"\b(?:{_NUMBER_WORDS})\b|\bone[\s-]+(?:{_UNITS})\b", re.ASCII | re.IGNORECASE
)  # digits: _DIGIT
"""A number word, or one before a unit of money or measure ("one dollar an hour", "one euro",
"one kilo"), a price or an amount as 一円 and 一キロ are; a lone "one" before a unit of time
("one week", as often "one day I'll…") answers a length, asked as ``how_many``."""
_EN_QUANTITY_FIRST = _by_first_letter([*_NUMBER_WORDS.split("|"), "one"])
"""What each match of :data:`_EN_QUANTITY_A` starts with, lower-cased."""
_EN_ONE = lazy_compile(r"\bone\b", re.ASCII | re.IGNORECASE)
"""A lone "one", as often a word of no number ("one of the hardest days", "the red one", "no
one") as a count: the answer only to a question of a count or a length (``how_many``)."""
_JA_NUMERAL = r"[0-9一二三四五六七八九十百千万両数]"
_JA_TIME_NUMBER = lazy_compile(
    # from a run's first numeral (found by a scan for numerals; linear in a run of 50,000
    # digits), not 一日 but after a month (12月一日; 一日つぶれた "lost a day"), nor 一時的
    rf"{_JA_NUMERAL}(?<!{_JA_NUMERAL}{_JA_NUMERAL})(?!(?<!月一)(?<=一)日|(?<=一)時[的期])"
    rf"{_JA_NUMERAL}*\s*(?:月|日|時|年|曜)"
)
"""A number of months, days, hours or years in Japanese (3月, 十日, 19時)."""
_JA_TIME_WORDS = lazy_compile(
    "曜日|昨日|明日|明後日|一昨日|来週|先週|今週|来月|先月|今月|来年|去年|昨年|週末"
)
"""A relative day, week, month or year in Japanese, or a weekday (土曜日)."""
_JA_SHORT_WEEKDAY = lazy_compile(
    r"[月火水木金土日]曜(?=に|は|の|から|まで|じゃ|で|も|が|って|と|[、,。.!?\s)]|$)"
)
"""A weekday as chat shortens it, 土曜 before a particle, a comma or the end: 飲み会は土曜,
土曜にずれた; not 日曜大工 nor 火曜サスペンス, words of their own."""
_JA_COUNTED = rf"(?:{_JA_COUNTERS}|月|日|時|ヶ所|つ|名)"
# digits, or kanji numerals that count something (八回, 二泊三日, 数人): the 一 of 一緒 or 一応
# is not a number, nor 十分な/十分に "enough" (十分で "in ten minutes" is), nor a lone 一
# but a price's or a measure's (一円, 一キロ, as "one dollar", "one kilo"; the others:
# _JA_ONE); read from a run's first numeral, as _JA_TIME_NUMBER
_JA_KANJI_NUMERAL = "[一二三四五六七八九十百千万両数]"
_JA_QUANTITY_A = lazy_compile(
    # a numeral first (found by a scan for numerals), then what comes before and after it
    rf"{_JA_KANJI_NUMERAL}(?:(?<!{_JA_KANJI_NUMERAL}{_JA_KANJI_NUMERAL})"
    rf"(?!(?<=一)(?!{_JA_KANJI_NUMERAL}|円|ドル|ユーロ"
    r"|キロ|グラム|メートル|センチ|ミリ|リットル|パーセント|%|kg|km|cm|mm|ml)|(?<=十)分[なにだ])"
    rf"{_JA_KANJI_NUMERAL}*{_JA_COUNTED}|(?<=[一二三四五六七八九])[十百千万])",
    re.IGNORECASE,
)
_JA_ONE = lazy_compile(
    rf"一(?<!{_JA_KANJI_NUMERAL}一)(?!番|時[的期]){_JA_COUNTED}", re.IGNORECASE
)  # (一 first: found by a scan for it)
"""A lone 一 before a counter, as often "a", "all", "alone" or "once" as a count (一日つぶれた
"lost a day", 一日中 "all day", 一人で "alone", 一度 "once"): the answer only to a question of a
count or a length (``how_many``: 何人 → 一人で); never 一番 "most" nor 一時的/一時期 "for a while"."""

_ASKED = {
    AnswerType.time: (_EN_TIME_Q, _JA_TIME_Q),
    AnswerType.quantity: (_EN_QUANTITY_Q, _JA_QUANTITY_Q),
    AnswerType.how_many: (_EN_COUNT_Q, _JA_COUNT_Q),
}
_DIGIT = lazy_compile(r"\d")


def _clock_time(text: str) -> bool:
    """Whether ``text`` holds a colon time, read as a time unless its words make it a score, a
    reference, a pace or a place in a video ("dinner is 19:00", "meeting moved to 14:00",
    「会議は14:00」「7:45の新幹線」; not "the final score was 21:15", "John 3:16", "pace is
    5:30", "see 1:20 in the video", キロ5:30). Each look is a few words wide, so a long text
    is read in linear time."""
    if ":" not in text:
        return False
    for m in _CLOCK.finditer(text):
        start, end = m.span()
        if _NOT_CLOCK_AFTER.match(text, end, end + 40):
            continue
        if _CLOCK_BEFORE.search(text, max(0, start - 16), start):
            return True
        if _NOT_CLOCK_BEFORE.search(text, max(0, start - 40), start):
            continue
        name = _NAME_BEFORE.search(text, max(0, start - 24), start)
        if name and (end - start == 4 or name.group().rstrip(". ").endswith("s")):
            continue
        return True
    return False


_ASCII_ALNUM = lazy_compile("[0-9A-Za-z]")


def _match_where_keyed(pattern: LazyPattern, keys: LazyPattern, text: str, low: str) -> bool:
    """Whether ``pattern`` matches in ``text``, each of whose matches starts with a match of
    ``keys`` in ``low`` (``text`` lower-cased): tried only where one does, not at every
    character (a case-blind pattern's search has no quick scan)."""
    if len(low) != len(text):  # (İ is two characters lower-cased: no place is the same)
        return pattern.search(text) is not None
    key = keys.search(low)
    while key is not None:
        start = key.start()
        if pattern.match(text, start):
            return True
        key = keys.search(low, start + 1)
    return False


def _en_time(text: str) -> bool:
    """Whether ``text`` holds a time's words in English: a month, a date, a year, a weekday, a
    relative day or period, a clock time with am or pm, "… ago" (each part looked for only
    where its word is: a search of them all at every character took ~50 µs a candidate)."""
    if _ASCII_ALNUM.search(text) is None:  # (Japanese: no English word, nor a digit)
        return False
    if _EN_TIME_NUMBER.search(text):
        return True
    low = text.lower()
    return (
        _match_where_keyed(_EN_TIME_WORD, _EN_TIME_WORD_FIRST, text, low)
        or ("may" in low and _EN_MAY.search(text) is not None)
        or (
            ("Mon" in text or "Wed" in text or "Sat" in text or "Sun" in text)  # (as written)
            and _EN_ON_SHORT_DAY.search(text) is not None
        )
        or (_EN_PERIOD_KEYS.search(low) is not None and _EN_PERIOD.search(text) is not None)
        or (("o'clock" in low or " ago" in low) and _EN_AGO.search(text) is not None)
    )


def _ja_time(text: str) -> bool:
    """Whether ``text`` holds a time's words in Japanese: a number of months, days, hours or
    years (3月, 十日, 19時), a weekday (土曜日, 土曜に), a relative day, week, month or year."""
    return not text.isascii() and (
        _JA_TIME_WORDS.search(text) is not None
        or _JA_SHORT_WEEKDAY.search(text) is not None
        or _JA_TIME_NUMBER.search(text) is not None
    )


def _digit(text: str) -> bool:
    return _DIGIT.search(text) is not None


def _en_quantity(text: str) -> bool:
    return _ASCII_ALNUM.search(text) is not None and _match_where_keyed(
        _EN_QUANTITY_A, _EN_QUANTITY_FIRST, text, text.lower()
    )


def _ja_quantity(text: str) -> bool:
    return not text.isascii() and _JA_QUANTITY_A.search(text) is not None


def _en_one(text: str) -> bool:
    return _EN_ONE.search(text) is not None


def _ja_one(text: str) -> bool:
    return not text.isascii() and _JA_ONE.search(text) is not None


_CARRIED: dict[AnswerType, tuple[Callable[[str], bool], ...]] = {
    # the cheapest first: each Japanese reading skips a text of ASCII at once, a colon time
    # one without a colon, and a digit is found fastest
    AnswerType.time: (_ja_time, _clock_time, _en_time),
    AnswerType.quantity: (_digit, _ja_quantity, _en_quantity),
    AnswerType.how_many: (_en_one, _ja_one),  # (asked with quantity: its numbers)
}
"""What a text holds that could answer each kind (each reading looks its patterns' ``search``
up at each call: taken at import, before the first use compiles them, it would stay the
uncompiled pattern's wrapper)."""


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def asked_types(text: str) -> frozenset[AnswerType]:
    """The kinds of answer the message ``text`` asks for (empty when it asks for neither)."""
    norm = _norm(text)
    return frozenset(
        kind for kind, patterns in _ASKED.items() if any(p.search(norm) for p in patterns)
    )


def carries(text: str, kind: AnswerType) -> bool:
    """Whether ``text`` holds something that could answer a ``kind`` question."""
    return carries_any(text, frozenset({kind}))


def carries_any(text: str, kinds: frozenset[AnswerType]) -> bool:
    """Whether ``text`` holds something that could answer one of the ``kinds`` (normalised once,
    NFKC; read as written, in either case: a capital after a dot starts a sentence)."""
    if not kinds:
        return False
    written = unicodedata.normalize("NFKC", text)
    return any(found(written) for kind in kinds for found in _CARRIED[kind])
