"""Later changes: of the results a turn packs, a newer one that says the subject of an
older one changed comes before it.

A fact is often told once and changed later ("my dentist appointment is on the 12th" …
weeks on, "the dentist moved my appointment to the 19th instead"). When both are packed,
the question's words ("when is my dentist appointment?") usually rank the first telling
first, and the reply model reads the old fact before the new one. A packed result is a
*later change* of another packed result when it occurred later, has the same speaker (the
user, for exchanges), says near a change word (:mod:`.change_words`: "switched", "moved …
to", "no longer", "I used to", 変えた, 今は, 前は…だった …; not negated, not a question, not a
plan or a maybe: "I won't quit", "should I switch", 変えようかな) something it shares with the
older one (:func:`~memengine.text.shared_phrases`: a name, a thing, 「スペイン語」, also in the
sentence before when a pronoun, its object, stands for it; not a speaker's name, nor a
number, a counter, a time or a rate alone, "$1,200", 3万円, "a month", "this morning",
"tomorrow", 毎月, 毎朝, 代が月 of 電気代が月 and ガス代が月, unless both tell how often one same
thing is done, "once a week" and "twice a week" of calling mom, or the newer one swaps what
is done in the older one's habit slot, "I switched to yoga every morning" after "I run every
morning", 毎晩ハイボールに変えた after 毎晩ビール飲んでる, nor a thing each names
another owner of (:mod:`.owners`: "my son's dentist appointment" changes no "my dentist
appointment", 父の誕生日会 no 母の誕生日会, "My wife used to love jazz" no "I love jazz"),
nor one two other people the sentences tell about share:
"My coworker Jen quit Google" changes no "Ken works at Google", 佐藤さんがトヨタ辞めた no
田中さんはトヨタで働いてる; a person alone is none: "My wife quit her job" changes no "My
wife loves spicy food", but an age told again of the same person is: "My son turned 7
today" changes "My son is 6", "Jen turned 30" no "I'm 29", and so is the end of a person
or a pet or of a bond with them: "Biscuit passed away" changes "My dog Biscuit loves
chasing squirrels", "Jake and I broke up" "My boyfriend Jake is taking me to Paris"), and
their stored vectors are at least ``later_change_cosine`` close (or the newer one, told
soon after, names a value of the older one as wrong: "it's Tuesday, not Monday").
It comes before the closest such result (a chain of changes stands newest first where its
best-ranked member was), marked ``later_change`` (and ``changes``: that result's id), and
the pack's reason line names the day of the memory it follows. Nothing that would not be
packed is brought in (a message with a change word next to a shared name is as often no
change at all: "I almost quit Blue Bottle today", "My coworker Jen quit Blue Bottle"), so
the results packed stay the same, only their order; a message that names a time keeps the
order as ranked.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from ..errors import EmbeddingError
from ..lazy_re import lazy_compile
from ..models import Episode, EpisodeKind
from ..text import APOSTROPHES, ENGLISH_STOPWORDS, fold, forget_words, sentences, shared_phrases
from ..values import states_any
from .change_words import (
    AGE,
    CHANGE,
    DEATH,
    ENDING,
    JA_VALUE_VERB,
    change_sentences,
    corrections,
    forget_changes_read,
    habit_of,
    ja_ended_one,
    ja_held,
    replaced_values,
    told,
)
from .fastpath import Candidate
from .owners import (
    PERSON_WORDS,
    a_name,
    a_person,
    doer,
    last_ja_person,
    leads,
    mentioned,
    other_owner,
    owners,
    people_named,
    possessor,
    same_name_two_beings,
    same_person,
)

SHARED_MIN_COSINE = 0.3
"""The default ``later_change_cosine`` (on the default embedder's scale): of 24
corrections written for the purpose (12 per language), the changes' cosines to what they
change ran from .27 to .82; newer memories with change words about other things came to
at most .39, and share no phrase with it. No floor serves for a person alone: of 46 pairs
that shared only the person (English and Japanese), 18 real changes ("My wife works at
the bank", then "My wife quit her job") came to .50-.78 and 28 other news of the same one
("Yuki quit her diet" after "Yuki lives near the station") to .39-.68, so a person alone
links none (:func:`_about_the_same`), unless the newer one tells the end of them or of a
bond with them (:func:`_ended`). Of the corrections, those under it (.26-.27: "it's Tuesday,
not Monday" and "My yoga class is on Monday at 6pm", the reply stored with them deciding)
link when they name the older one's value as wrong soon after it (:data:`CORRECTION_WINDOW`)."""

CORRECTION_WINDOW = timedelta(hours=1)
"""How soon after a memory a correction that names its value as wrong ("it's Tuesday, not
Monday", 月曜じゃなくて火曜) changes it whatever their cosine: such a correction is of what
was just said, and its few words are far from the memory's in meaning (of "it's Tuesday,
not Monday" and "My yoga class is on Monday at 6pm", .26-.27, under
:data:`SHARED_MIN_COSINE`); a day later the same words are as often about another thing."""

MAX_CHANGES = 2
"""How many later changes one result can have put before it (the newest first)."""

T = TypeVar("T")

Similar = Callable[[int, Sequence[int]], dict[int, float]]
"""The cosine of a stored episode's vector to each of some others' (missing: no vector)."""


def own_words(ep: Episode) -> str:
    """What an episode's own speaker said: an exchange's user turn, else its content."""
    if ep.kind is EpisodeKind.exchange:
        return ep.user_text or ""
    return ep.content or ""


def _speaker(ep: Episode) -> str | None:
    """Who said an episode, by its ``speaker`` metadata (a chat log's "Caroline"), if any."""
    speaker = ep.metadata.get("speaker")
    return speaker if isinstance(speaker, str) else None


def _subjects(words: str, near: str, names: set[str]) -> list[str]:
    """The phrases of ``words`` that ``near`` (the words around a change word) shares, not a
    speaker's name, a title (:data:`_TITLES`: "Dr"), a change word (今は in both says nothing
    about what changed), a value's verb with at most a particle, a unit or one character
    before it (:func:`_a_value_verb`: 上がった, 代が上がった, 円になった), nor a number or a counter alone (:data:`_A_COUNT`:
    "$1,200" on a laptop and on a bike), nor a time or a rate (:func:`_a_time`: "month" of
    "$50 a month" and "$30 a month", "morning" of "every morning" and "this morning", 代が月
    of 電気代が月 and ガス代が月; "week" of "once a week" and "twice a week", how often one
    same thing is done, and "morning" of "I run every morning" and "I switched to yoga every
    morning", a habit's slot swapped, are subjects)."""
    shared = shared_phrases(words[:600], near, limit=20)
    return [
        p
        for p in shared
        if p not in names
        and CHANGE.fullmatch(p) is None
        and not _a_value_verb(p)
        and _A_COUNT.fullmatch(p) is None
        and p not in _TITLES
        and not _a_time(p, words[:600], near)
    ]


_TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof"})
"""A title alone, which is part of a name and names no thing ("Dr" of "My vet is Dr. Tanaka"
and "I switched dentists to Dr. Sato")."""


_A_COUNT = lazy_compile(
    r"\d[\d,.]*(?:st|nd|rd|th|s|k|am|pm)?"
    "|[〇一二三四五六七八九十百千万億兆]+(?:円|ドル|ユーロ|歳|才|年|か?月|ヶ月|日|時間?|分|秒|週間?|回|度"
    "|個|人|本|枚|台|杯|冊|匹|階|番|位|件|点|倍|割|キロ|グラム|メートル|センチ|リットル|ページ)?"
    "|ドル|ユーロ|キロ|グラム|メートル|センチ|リットル|パーセント|ページ"
    "|dollars?|bucks?|cents?|euros?|yen|pounds?|kms?|miles?|kilos?|kgs?|lbs?|grams?"
    "|g|mg|mcg|ml|l|oz|cm|mm|gb|mb|tb|kb|kcal|cal|calories|degrees?|°[cf]?|%|percent|cups?"
)
"""A number or a counter alone, which names no thing ("1,200" of "$1,200", "106" of "NH
106" and "the 106 bus", 万円 of 3万円, "dollars" of "50 dollars a month" and "30 dollars a
month", "km" of "5 km a day" and "20 km a day", "mg" of "7.5 mg of melatonin" and "2.5 mg
of ibuprofen", "degrees", "GB", "cups"; 号室 names a room)."""

_EN_NUMBER = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
"""A number spelled out, as a count is ("two cups a day", "four in a row")."""
_EN_RATE = lazy_compile(
    rf"hourly|daily|nightly|weekly|monthly|yearly|annual(?:ly)?|per|every|last|next|{_EN_NUMBER}"
    r"|once|twice|thrice|today|tonight|tomorrow|yesterday|noon|midnight|overnight"
)
"""A rate's word, what makes a time a rate or a time, a number spelled out, or a time of
its own, which names no thing ("our weekly meeting" and "my weekly yoga class", "every day"
and "every week", "last year", "a cheaper one" and "an old one", "once", "tomorrow" of "My
dentist appointment is tomorrow" and "The team dinner tomorrow was cancelled")."""
_EN_UNITS = "second|minute|hour|day|night|week|weekend|weekday|month|year|morning|afternoon|evening"
"""The units of time, and the parts of a day, a time is told in."""
_EN_TIME_UNIT = lazy_compile(rf"(?:{_EN_UNITS}|time)s?")
"""A unit of time, a part of a day (or "times"), a thing only where it is named as one ("my
day off", "my evenings")."""
_COUNTED = lazy_compile(
    rf"(?:^|[^\w'])(?:an?|per|every|each|{_EN_NUMBER}|few|several|many|couple of|last|next"
    r"|this|that|these|those|\d[\d,.]*)\s+(?:[\w-]+\s+)?$"
    r"|(?:^|[^\w'])(?:at|in|on|to|during|by|since|until|till|all|good|today|tonight|tomorrow"
    r"|yesterday)\s+(?:the\s+)?$"
    r"|/\s*$"
)
"""What a time unit is a rate, a count or a time after, with at most one word between, or a
"the" after a preposition ("a month", "per week", "every other year", "$30/month", "two
more days", "last night", "this morning", "at night", "in the evening", "tomorrow
morning")."""
_DAYS_OFF = lazy_compile(r"\boff\s+(?:[\w-]+\s+)?$")
"""An "off" before a counted time, which names days off ("I'm off two days a week")."""
_JA_TIME = lazy_compile(
    "(?:[代費料賃税][、がはもをにへの]*)?"
    "(?:[毎今先来翌隔半数昨明前後再]|[0-9０-９〇一二三四五六七八九十百]+)?"
    "(?:月|週|年|日|晩|朝|夜|昼|夕方|週末|平日|月末|年末|午前|午後|深夜|夜中|明日|あした|あす"
    "|昨日|きのう|今日|きょう|明後日|あさって|一昨日|おととい"
    "|時間|[かヶケカ箇]月|週間|日間|年間)"
    "(?:額|々|間|中|あたり|当たり|ごと?|おき|置き|以内|ぶり|前|後)?[、がはもをにへので]*"
)
"""A Japanese time or rate with at most a cost's last character and particles, which
names no thing: 毎月, 今週, 月額, 年間, 毎朝, 今夜, 明日, 週末, 毎週末, 午後, 2週間, 3ヶ月,
ヶ月ご of 3ヶ月ごと, 代が月 of 電気代が月 and ガス代が月, 費を月 (not 家賃は月, 月曜, 休日,
勤務時間, 朝ごはん, 夜勤)."""
_FREQUENCY = lazy_compile(
    rf"\b(?:once|twice|thrice|(?:\d[\d,.]{{0,12}}|{_EN_NUMBER}|a few|a couple of|several)\s+(?:more\s+)?"
    rf"(?P<counted>[a-z][\w-]*))\s+(?:a|an|per|every|each)\s+(?:other\s+)?(?:{_EN_UNITS})s?\b"
    rf"|\bevery\s+(?:other\s+|\d+\s+|(?:{_EN_NUMBER})\s+)?(?:{_EN_UNITS})s?\b",
    re.IGNORECASE,
)
"""How often something is done: a count, of times or of what is done, a unit of time it is
done in ("once a week", "three days a week", "2 hours a day", "one nap a day", "every
morning", "every two weeks"; with money it is a price: "50 dollars a month")."""
_MONEY = frozenset("dollar dollars buck bucks cent cents yen euro euros pound pounds k".split())
"""What a count with a unit of time after it is a price in ("50 bucks a month")."""
_NOT_A_DOING = frozenset(
    """times km kms mile miles kilometre kilometres kilometer kilometers metre metres meter
    meters kg kilo kilos lb lbs gram grams litre litres liter liters go goes going went gone
    get gets getting got take takes taking took make makes making made now usually always
    still even""".split()
)
"""What a frequency's count is in and the light verbs before it, which tell no doing ("3
times a week", "5 km a day", "I go … twice a week")."""


def _a_time(phrase: str, words: str, near: str) -> bool:
    """Whether ``phrase``, shared by ``words`` and ``near``, names a time or a rate and no
    thing: a rate's word, a number spelled out or a time of its own (:data:`_EN_RATE`:
    "weekly", "every", "two", "tonight"), a Japanese time with at most a cost's last
    character and particles (:data:`_JA_TIME`: 代が月, 毎月, 毎朝, 明日), or a time unit that
    a side tells only as a rate, a count or a time (:data:`_COUNTED`: "$50 a month" and "$30
    per month", "every day", "this morning", "at night"; not "my day off" and "switched my
    day off", nor "I'm off two days a week"); unless both tell it as how often one same
    thing is done (:func:`_how_often_again`: "once a week" and "twice a week" of calling
    mom, not "3 times a week" of running and "2 times a week" of swimming), or ``near``
    swaps what is done in the time slot ``words`` keeps (:func:`_slot_swapped`: "I switched
    to yoga every morning" after "I run every morning")."""
    if _EN_RATE.fullmatch(phrase) is None and _JA_TIME.fullmatch(phrase) is None:
        if _EN_TIME_UNIT.fullmatch(phrase) is None:
            return False
        if all(_a_thing(phrase, fold(side)) for side in (words, near)):
            return False
    return not _how_often_again(phrase, words, near) and not _slot_swapped(phrase, words, near)


def _a_thing(unit: str, text: str) -> bool:
    """Whether ``text`` (folded) names the time unit ``unit`` once as a thing, not after
    what makes it a rate, a count or a time (:data:`_COUNTED`): "my day off is Tuesday",
    "I'm off two days a week" (:data:`_DAYS_OFF`), not "I walk 5 km a day" nor "every
    day"."""
    for m in re.finditer(rf"(?<![\w'-]){re.escape(unit)}(?![\w'-])", text):
        before = text[max(0, m.start() - 40) : m.start()]
        if _COUNTED.search(before) is None or _DAYS_OFF.search(before) is not None:
            return True
        if re.match(r"\s+off\b", text[m.end() :]) is not None:  # ("two days off a week")
            return True
    return False


def _how_often_again(phrase: str, words: str, near: str) -> bool:
    """Whether both ``words`` and ``near`` tell ``phrase`` as part of how often something is
    done (:data:`_FREQUENCY`, not a price), of one same doing (:func:`_doings`): "I call my
    mom once a week" and "I switched to calling my mom twice a week" ("week"), "My son naps
    2 hours a day" and "My son switched to one nap a day" ("day"); not "I run 3 times a
    week" and "I switched to swimming, 2 times a week", nor "I walk 5 km a day" and "I
    switched to decaf, two cups a day"."""
    if not phrase.isascii():
        return False
    old, new = _doings(phrase, words), _doings(phrase, near)
    if not {stem for _, stem in old} & {stem for _, stem in new}:
        return False  # (no doing shared: whom the texts name is not asked)
    named = _people(words) | _people(near)
    return bool(
        {stem for word, stem in old if word not in named}
        & {stem for word, stem in new if word not in named}
    )


@functools.lru_cache(maxsize=256)
def _people(text: str) -> frozenset[str]:
    """Whom ``text`` names (:func:`.owners.people_named`), read once per text: a long message
    is weighed against each older result, each change window and each time word shared."""
    return frozenset(people_named(text))


@functools.lru_cache(maxsize=256)
def _doings(phrase: str, text: str) -> frozenset[tuple[str, str]]:
    """Each word (folded) with its stem (:func:`stem`) of what ``text`` tells how often of,
    where its frequency holds ``phrase``: what is counted and the four words before the
    count, none a function word, a person word or a name (a word with a capital past its
    sentence's first), a change word, a time, a unit or a light verb (:data:`_NOT_A_DOING`):
    "call" of "I call my mom once a week", "nap" of "My son naps 2 hours a day" and of "one
    nap a day". Read once per text and phrase (a long message is weighed against each older
    result); whom the other side names is left out by :func:`_how_often_again`."""
    found: set[tuple[str, str]] = set()
    for m in _FREQUENCY.finditer(text):
        counted = (m["counted"] or "").lower()
        if counted in _MONEY or (m.start() > 0 and text[m.start() - 1] in "$¥£€"):
            continue  # (a price: "50 dollars a month", "$50 a month")
        if re.search(rf"(?<![\w'-]){re.escape(phrase)}(?![\w'-])", fold(m.group())) is None:
            continue
        clause = re.split(r"[.!?;]", text[max(0, m.start() - 80) : m.start()])[-1]
        said = re.findall(r"[^\W\d_][\w'-]*", clause)
        before = [w for at, w in enumerate(said) if at == 0 or not w[0].isupper()][-4:]
        for word in [*map(fold, before), counted]:
            if (
                word
                and word not in ENGLISH_STOPWORDS
                and word not in _NOT_A_DOING
                and word not in PERSON_WORDS
                and CHANGE.fullmatch(word) is None
                and _EN_RATE.fullmatch(word) is None
                and _EN_TIME_UNIT.fullmatch(word) is None
            ):
                found.add((word, stem(word)))
    return frozenset(found)


def stem(word: str) -> str:
    """``word`` without an "-ing", "-ed" or "-s", a last "e" and a doubled last letter, so
    the forms of a verb or a noun meet: "call" and "calling", "run" and "running", "nap"
    and "naps", "make" and "making"."""
    for end in ("ing", "ed", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            word = word[: -len(end)]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]
    return word


_EN_SLOT = lazy_compile(r"(?:morning|afternoon|evening|night|weekend|weekday)s?|tonight")
"""A part of a day or of a week something is done in, and tonight, its plan ("every
morning", "on weekends", "Tonight I'm making curry")."""
_EN_EVERY = lazy_compile(r"\b(?:every|each)\s+(?:other\s+)?(?:[\w-]+\s+)?$")
"""What makes a part of a day a habit's slot, with at most one word between ("every
morning", "each other weekend", "every Sunday morning")."""
_EN_ONE_TIME = lazy_compile(
    rf"(?:^|[^\w'])(?:an?|this|that|last|next|these|those|few|several|many|couple of|all|good"
    rf"|\d[\d,.]*|{_EN_NUMBER})\s+(?:[\w-]+\s+)?$"
)
"""What makes a part of a day told in the plural one time or a count, not a habit ("these
mornings", "two weekends", "a few nights"; "on weekends", "in the mornings" are habits)."""
_EN_SWAP = lazy_compile(r"\b(?:switch(?:ed)?|chang(?:e|ed)|swap(?:ped)?|replaced|traded)\b")
"""A change word that puts one thing in another's place ("switched to yoga", "swapped
golf for tennis")."""
_EN_TO = lazy_compile(r"\b(?:to|for|with|until|till)\s+(?:(?:every|each|the)\s+)?(?:other\s+)?$")
"""What makes a slot the new time something is moved to, not where it is swapped ("moved
the dog walk to every morning")."""
_TO = lazy_compile(r"\bto\b")
"""A "to", which ends what a change word swaps ("switched dinner tonight to pizza")."""
_JA_SLOT = lazy_compile("毎(?:朝|晩|夜|夕方|週末)|週末|平日|朝|晩|夜|夕方|今夜|今晩")
"""A Japanese part of a day or of a week something is done in (毎朝, 毎晩, 週末は), and
今夜, 今晩, its plan."""
_JA_SWAP = lazy_compile("に(?:変え|かえ|替え|換え|切り替え|切りかえ|変更し)(?:た|まし|て)")
"""A Japanese change word that puts one thing in another's place (ヨガに変えた,
テニスに切り替えました)."""
_CLAUSE = lazy_compile(r"[^,;:、。，；：]+")
"""A clause: what no comma, semicolon, colon or 。 splits ("I switched jobs this morning"
of "I switched jobs this morning, every morning was awful")."""


def _slot_swapped(phrase: str, words: str, near: str) -> bool:
    """Whether ``phrase``, a part of a day or of a week, is the slot of a habit or a plan in
    ``words`` (:func:`_slots`) and the slot of what ``near`` swaps to another thing in the
    same clause (:data:`_EN_SWAP`, :data:`_JA_SWAP`): "I run every morning" and "I switched
    to yoga every morning", "I run in the mornings" and "I switched my mornings to yoga",
    週末はいつもゴルフ and 週末はテニスに変えた, 毎晩ビール飲んでる and 毎晩ハイボールに変えた; not
    when ``near`` only says when something happened ("I quit coffee this morning",
    明日の飲み会中止), a slot is another thing's (毎朝のランニングやめた) or the new time
    ("I moved the dog walk to every morning"), nor when the swap is in another clause ("I
    switched jobs this morning, every morning was awful") or of an object (週末はアラームを9時に
    変更した)."""
    return _slots(phrase, words, False) and _slots(phrase, near, True)


@functools.lru_cache(maxsize=256)
def _slots(phrase: str, text: str, swapped: bool) -> bool:
    """Whether ``text`` tells ``phrase`` as the slot of a habit or a plan: after "every" or
    "each" ("every morning", "every Sunday morning"), in the plural not counted ("on
    weekends", "in the mornings", "my mornings"), tonight; 毎朝, 毎晩, 週末は, 朝は, 今夜 (not
    今朝は), not before の (毎朝のランニング) nor に (週末に変えた: the new time); with ``swapped``, in a
    clause that swaps what is done in it to another thing: a change word then "to" ("I
    switched to yoga every morning", "I switched my mornings to yoga"; not "switched desks
    with me") and not as the time moved to ("to every morning"), tonight only as what is
    swapped ("switched dinner tonight to pizza"); the slot then Xに変えた with no を between
    (毎朝ヨガに変えた, not 週末はアラームを9時に変更した). Read once per text and phrase."""
    core = fold(phrase).rstrip("、がはもをにへので")
    if _EN_SLOT.fullmatch(core) is not None:
        return any(_en_slot(core, sentence, swapped) for sentence in sentences(fold(text)))
    if _JA_SLOT.fullmatch(core) is None:
        return False
    for sentence in sentences(fold(text)):
        swaps = [m.start() for m in _JA_SWAP.finditer(sentence)]
        for m in re.finditer(re.escape(core), sentence):
            if swapped and not any(_ja_swaps_in(sentence[m.end() : at]) for at in swaps):
                continue
            after, prior = (
                sentence[m.end() : m.end() + 1],
                sentence[max(0, m.start() - 1) : m.start()],
            )
            habit = (
                core[0] in "毎今"
                or prior == "毎"
                or (after == "は" and prior not in ("今", "昨", "明", "先", "来"))
            )
            if habit and after not in ("の", "に"):
                return True
    return False


def _ja_swaps_in(between: str) -> bool:
    """Whether ``between``, what a slot and a swap after it (:data:`_JA_SWAP`) have between
    them, is the new thing alone: not empty, with no を object and in one clause (テニス of
    週末はテニスに変えた, ヨガ of 毎朝ヨガに変えた; not アラームを9時 of 週末はアラームを9時に変更した)."""
    thing = between.removeprefix("は")
    return bool(thing) and "を" not in thing and _CLAUSE.fullmatch(thing) is not None


def _en_slot(unit: str, sentence: str, swapped: bool) -> bool:
    """Whether the folded ``sentence`` tells ``unit`` as a slot (:func:`_slots`): with
    ``swapped``, in a clause that swaps (:data:`_CLAUSE`)."""
    if not swapped:
        return _en_slot_in(unit, sentence, None, None)
    for clause in _CLAUSE.finditer(sentence):
        swap = _EN_SWAP.search(clause.group())
        to = _TO.search(clause.group(), swap.end()) if swap is not None else None
        if swap is not None and to is not None and _en_slot_in(unit, clause.group(), swap, to):
            return True
    return False


def _en_slot_in(unit: str, text: str, swap: re.Match[str] | None, to: re.Match[str] | None) -> bool:
    """Whether ``text`` tells ``unit`` as a slot (:func:`_slots`), where ``swap`` then ``to``
    swap one thing to another ("switched … to"), or None in the older text."""
    for m in re.finditer(rf"(?<![\w'-]){re.escape(unit)}(?![\w'-])", text):
        before = text[max(0, m.start() - 40) : m.start()]
        if swap is not None and _EN_TO.search(before) is not None:
            continue  # (the time it is moved to)
        if unit == "tonight":
            if swap is None or (swap.end() <= m.start() and (to is None or to.start() > m.start())):
                return True
        elif _EN_EVERY.search(before) is not None or (
            unit.endswith("s") and _EN_ONE_TIME.search(before) is None
        ):
            return True
    return False


_VALUE_TAIL = lazy_compile(
    f"(?:また|さらに|ちょっと|まで|[がはもにへを、，,]){{0,4}}(?:{JA_VALUE_VERB.pattern})"
)
"""A Japanese value verb ending a phrase (:data:`.change_words.JA_VALUE_VERB`), with the
particles and the "again" before it (が上がった, がまた上がった, に上がった, になった, を下げた): four at
most, and at most 16 kana of ending, so a search tries a bounded match at each character and
takes a time linear in the phrase on any input (a run of が or また)."""


def _a_value_verb(phrase: str) -> bool:
    """Whether ``phrase`` says only that a value went up, went down or became one: a value
    verb (:data:`_VALUE_TAIL`) with no subject left before it, that is, nothing, one
    character or a unit (:data:`_A_COUNT`): 上がった of テンション上がった and 家賃上がった, 代が
    上がった of 電気代 and ガス代, 費が増えた of 食費 and 会費, 円になった, 万円に上がった, 円に上げた
    (not 家賃が上がった, 家賃を上げた, which name the rent)."""
    tail = _VALUE_TAIL.search(phrase)
    if tail is None:
        return False
    rest = phrase[: tail.start()]
    return len(rest) < 2 or _A_COUNT.fullmatch(rest) is not None


_AGE_NOW = lazy_compile(
    rf"\bturned {AGE}|[0-9０-９〇一二三四五六七八九十]+(?:歳|才)にな(?:っ|りまし)", re.IGNORECASE
)
"""An age one turned ("My son turned 7 today", 娘が6歳になった)."""
_AN_AGE = lazy_compile(
    r"\b(?:is|am|i'm|he's|she's|was|aged?|turned|turns) \d{1,3}"
    r"(?=\s*(?:$|[^\w\s$]|(?:years?|yo|and|but|now|today)\b))"
    r"|\b\d{1,3}[ -]years?[ -]old\b|[0-9０-９〇一二三四五六七八九十]+(?:歳|才)",
    re.IGNORECASE,
)
"""An age told ("My son is 6, he's…", "I'm 29", "a 6-year-old", 娘は5歳; not "is $1,800",
"is 1204")."""


def _age_again(words: str, near: str) -> bool:
    """Whether ``near`` tells an age turned of the one ``words`` told an age of, the same
    person by :func:`_whose_age` on both sides: "My son turned 7 today" after "My son is 6",
    "Turned 30 today!" after "I'm 29", 娘が6歳になった after 娘は5歳 (not after 息子は5歳, nor
    "Jen turned 30 yesterday" after "I'm 29", 結衣ちゃん、6歳になった after 私は29歳)."""
    said = told(near)
    turned = _AGE_NOW.search(said)
    who = _whose_age(said, turned.start()) if turned is not None else None
    if who is None:
        return False
    for sentence in sentences(words.translate(APOSTROPHES)):
        age = _AN_AGE.search(sentence)
        was = _whose_age(sentence, age.start()) if age is not None else None
        if was is not None and same_person(was, who):
            return True
    return False


_OWN_LEAD = lazy_compile(
    r"^\W*(?:(?:just|finally|officially|so|and|well|ugh|yay|oh|wow|yes|also|today|yesterday"
    r"|lol|haha|omg)\W+)*$",
    re.IGNORECASE,
)
"""The words an English sentence of the speaker's own age may open with, naming no one
("Turned 30 today!", "Finally turned 30"; not "The big one turned 30")."""


_NAMED_AGE = lazy_compile(r"\b([A-Z][^\W\d_]+)\W*$")
"""A name just before an age ("Jen is 29", "Max, 5")."""


def _whose_age(sentence: str, at: int) -> str | None:
    """Whom the age told at ``at`` of ``sentence`` is of, as :func:`.owners.doer` writes
    them: in Japanese the person named last before it (娘は5歳: 娘; 結衣ちゃん、6歳になった: 結衣;
    私は29歳: "i"), else the speaker where no が names another (30歳になった; not
    姪っ子が6歳になった); in English whom the sentence opens with ("Jen turned 30": "jen"; "I'm
    29": "i"), else the speaker where nothing but an interjection or a time comes before
    ("Turned 30 today!"), or a name just before ("Jen is 29"); none for anyone else ("The
    big one turned 30")."""
    before = sentence[:at]
    if not sentence[at:].isascii() or not before.isascii():
        who = last_ja_person(before)
        return who if who is not None else (None if "が" in before else "i")
    who = doer(sentence)
    if who is not None:
        return who
    if _OWN_LEAD.match(before) is not None:
        return "i"
    name = _NAMED_AGE.search(before)
    return name[1].lower() if name is not None and a_name(name[1].lower()) else None


def _another_doer(words: str, near: str, subject: str) -> bool:
    """Whether ``near`` tells of someone surely other than the one the sentences of
    ``words`` (an older result's) holding ``subject`` tell about (:func:`.owners.leads`), and
    neither names the other: "My coworker Jen quit Google" changes nothing of "Ken works at
    Google", nor "My dad sold the Honda Fit" "My mom drives a Honda Fit", 佐藤さんがトヨタ辞めた
    田中さんはトヨタで働いてる, 弟が大阪に引っ越した 兄は大阪に住んでる. An older fact about the
    speaker may be changed by anyone ("My wife moved the dentist appointment"), and "I
    switched Mochi to the salmon kibble" still changes "Mochi eats the chicken kibble".
    Another's person word is surely another ("Ken's wife quit Google" changes nothing of
    "Ken works at Google": :func:`.owners.possessor`), and so is a person named as a pet
    is ("My coworker Max switched to the salmon kibble" and "My dog Max eats the chicken
    kibble": :func:`.owners.same_name_two_beings`)."""
    if same_name_two_beings(words, told(near)):  # ("My dog Max…", "My coworker Max…")
        return True
    theirs = leads(words, fold(subject)) - {"i"}
    who = doer(told(near))
    if possessor(told(near)) in theirs:  # ("Ken's wife quit Google": not Ken)
        return True
    if not theirs or who is None or who in mentioned(words) or theirs & mentioned(near):
        return False
    return all(other_owner(one, who) for one in theirs)


def _about_the_same(words: str, near: str, names: set[str]) -> bool:
    """Whether ``near`` (the words around a change word) shares a subject with ``words`` (an
    older result's) that is the same thing: none of the shared phrases is an owner's on both
    sides and the owners differ ("My son's dentist appointment got moved" does not change
    "My dentist appointment is on March 12th", 父の誕生日会 not 母の誕生日会). A side with no
    owner may mean either ("The dentist appointment got moved"); a plain modifier is no owner
    (the changed value often sits there: "switched Mochi to salmon kibble"). A habit left is
    its subject's, and the older one is about whom its sentence opens with ("My wife used to
    love jazz" changes "My wife loves jazz", not "I love jazz"; 妻は前は… not 私は…), unless
    that subject is a shared phrase itself ("Jazz used to be my thing": what both are
    about); with no owner on either side, two others the two tell about are two people
    (:func:`_another_doer`: "My coworker Jen quit Google" not "Ken works at Google"; anyone
    may change one's thing: "Mom moved the retirement party" after "Dad's retirement party
    is on June 3rd"). A person alone is no subject ("My wife quit her job" changes nothing
    of "My wife loves spicy food"): one shared phrase must be a thing, or ``near`` an age
    turned of whom ``words`` told an age (:func:`_age_again`)."""
    subjects = _subjects(words, near, names)
    shared = {s for s in subjects if s.isascii()}
    habit = habit_of(near) if subjects else None  # (read only where a subject is shared)
    if habit is not None and habit in {fold(s) for s in subjects}:
        habit = None
    for subject in subjects:
        old, new = owners(words[:600], subject, shared), owners(near, subject, shared)
        if habit is not None:
            old, new = old or leads(words[:600], fold(subject)), new or {habit}
        if old and new and all(other_owner(a, b) for a in old for b in new):
            return False
        if not old and not new and _another_doer(words[:600], near, subject):
            return False
    named = people_named(words[:600]) | people_named(near) if subjects else set()
    people = _ended_ones(words[:600], told(near), [s for s in subjects if a_person(s, named)])
    if _only_a_japanese_end(told(near)):
        return _ended(near, people)
    if any(not a_person(s, named) for s in subjects) or _age_again(words[:600], near):
        return True
    return _ended(near, people)


def _only_a_japanese_end(said: str) -> bool:
    """Whether every change word of ``said`` (a sentence) is a Japanese end of someone or of
    a bond (:data:`.change_words.ENDING`): what it changes is the one it ends alone, not a
    thing it names (弟とゲームしてた… shares ゲーム, no death of it). An English one may share a
    pet's name as a thing ("Biscuit"), its death told only after a being
    (:func:`.change_words.change_sentences`)."""
    ends = [m.start() for m in ENDING.finditer(said) if not m.group().isascii()]
    return (
        bool(ends)
        and not corrections(said)
        and all(m.start() in ends for m in CHANGE.finditer(said))
    )


def _ended_ones(words: str, said: str, people: list[str]) -> list[str]:
    """Whom the end ``said`` tells may be of, of those ``words`` (an older memory's) tell of:
    in English the shared ``people``; in Japanese the being it tells the end of as its
    subject (:func:`.change_words.ja_ended_one`: not 翔太と別れたあと, a parting), where
    ``words`` hold it as theirs
    (:func:`.change_words.ja_held`: きなこが亡くなった and うちの猫のきなこはチュール大好き,
    夫と離婚しました and 夫は辛いものが好き; not 夫の母が亡くなった and 母は料理上手)."""
    end = ENDING.search(said)
    if end is None or end.group().isascii():
        return people
    one = ja_ended_one(said)
    return [one] if one is not None and ja_held(words, one) else []


def _as_doer(person: str) -> str:
    """A shared person (folded) as :func:`.owners.doer` writes the one a sentence tells
    about ("grandma" is "grandmother", お母さん is 母), else as it is ("jake", 翔太)."""
    who = doer(person if person.isascii() else f"{person}が")
    return person if who in (None, "i") else who


_THEIR_ONE = r"(?:\s+[A-Z][\w-]*)?(?:'s\b|の)"
"""What makes a person the owner of the one a sentence tells about, after them or the name
beside them ("My wife's grandmother", "My friend Ken's dog", 友達のお母さん)."""


_SPEAKER_BEFORE = lazy_compile(
    r"\b(?:i|we)(?:'ve|'re|\s+(?:have|had|just|finally|officially|got|were))*\s*$", re.IGNORECASE
)
"""The speaker as the one who broke up, just before it ("Jake and I broke up", "We just split
up"; not "I heard Jake and Mia broke up")."""


def _ended(near: str, people: list[str]) -> bool:
    """Whether ``near`` tells the end of one of ``people`` (shared persons) or of a bond with
    them (:data:`.change_words.ENDING`), which changes every fact told of them, as other news
    of a person does not: a death of that person or pet itself, told just after them
    ("Biscuit passed away", "We had to put Biscuit down", お母さんが亡くなった), or a break-up
    between the speaker and them ("Jake and I broke up", "I broke up with Jake", 翔太と別れた)
    or between two of them ("My sister broke up with Tom"); not the end of someone of theirs
    ("My wife's grandmother passed away" changes no "My wife loves spicy food"), nor their
    break-up with another ("Jake broke up with Mia" no "My friend Jake loves hiking")."""
    said = told(near)
    if not people or ENDING.search(said) is None:
        return False
    who = doer(said)
    death = DEATH.search(said)
    named: list[str] = []
    for person in people:
        one = fold(person)
        ascii_word = one.isascii()  # (a Japanese name has kana around it: モカが)
        before, after = (r"(?<!\w)", r"(?!\w)") if ascii_word else ("", "")
        if re.search(before + re.escape(one) + _THEIR_ONE, said, re.IGNORECASE):
            continue  # (someone of theirs: "My friend Ken's dog died", 友達のお母さん)
        if death is not None and _died(said, death, one, before, who):
            return True
        if re.search(before + re.escape(one) + after, fold(said)) is not None:
            named.append(one)
    rest = said[: death.start()] + said[death.end() :] if death else said
    broke = ENDING.search(rest)
    if not named or broke is None:
        return False
    if not broke.group().isascii():  # (翔太と別れた: the speaker's, unless another is told of)
        return who in (None, "i", "we") or len(named) > 1
    speaker = _SPEAKER_BEFORE.search(rest[: broke.start()]) is not None
    return speaker or re.search(r"\b(?:me|we)\b", broke.group(), re.I) is not None or len(named) > 1


_JUST_BEFORE = (
    r"\W*(?:(?:just|finally|suddenly|peacefully|sadly|recently|has|have|had|unexpectedly)"
    r"\W+)*$"
)
"""What may come between a being and its death, an adverb or an auxiliary ("Biscuit sadly
passed away"; not "I told my grandpa that Biscuit died")."""


def _died(said: str, death: re.Match[str], one: str, before: str, who: str | None) -> bool:
    """Whether the death ``death`` of ``said`` is of the person ``one`` (folded; ``before``
    what starts them as a word): the one it tells about, or named just before it or within
    it ("Biscuit passed away", "My grandpa sadly died", "We had to put Biscuit down")."""
    if who not in (None, "i", "we"):  # (whom the sentence tells about, or another's end)
        return same_person(who, _as_doer(one))
    if re.search(re.escape(one), fold(death.group())) is not None:
        return True
    just_before = _JUST_BEFORE if one.isascii() else ".{0,4}$"
    return re.search(before + re.escape(one) + just_before, fold(said[: death.start()])) is not None


def later_changes(
    candidates: list[Candidate],
    packed: Sequence[Candidate],
    similar: Similar,
    min_cosine: float = SHARED_MIN_COSINE,
) -> list[Candidate]:
    """``candidates`` with each ``packed`` result that is a later change of another packed
    result put before it (of several older ones, the closest by ``similar``, the cosine of
    the stored vectors; up to :data:`MAX_CHANGES` for one result): each chain of changes
    (A, then B changing it, then C changing B) stands where its first member ranked, the
    newest first; the changes are scored as the best of their chain and marked
    ``later_change`` and ``changes``. ``similar`` is asked only about pairs that pass the
    rest; when the vectors cannot be read (another process re-embedded the file) nothing
    is changed."""
    said = {id(c): change_sentences(own_words(c.episode)) for c in packed}
    if not any(said.values()) or len(packed) < 2:
        return candidates
    names = {n.lower() for c in candidates if (n := _speaker(c.episode))}
    links: dict[int, Candidate] = {}  # id(change) → the result it changes
    taken: dict[int, int] = {}  # id(result) → changes linked to it
    for change in sorted(packed, key=lambda c: c.episode.occurred_at, reverse=True):
        near = said[id(change)]  # (the newest first: they take a result's last places)
        if not near:
            continue
        anchors = [
            a
            for a in packed
            if a is not change
            and a.episode.occurred_at < change.episode.occurred_at
            and _speaker(a.episode) == _speaker(change.episode)
            and any(_about_the_same(own_words(a.episode), n, names) for n in near)
        ]
        if not anchors:
            continue
        try:  # (the change's vector read once, against each older result's)
            cosines = similar(change.episode.id, [a.episode.id for a in anchors])
        except EmbeddingError:  # (re-embedded by another process: the full text answered)
            return candidates
        wrong = replaced_values(own_words(change.episode))
        close = [
            (cos, a)
            for a in anchors
            if (
                (cos := cosines.get(a.episode.id, -1.0)) >= min_cosine
                or _corrected(a, change, wrong)
                or _ends_their_one(own_words(a.episode), near)
            )
            and taken.get(id(a), 0) < MAX_CHANGES
        ]
        if close:
            anchor = max(close, key=lambda pair: pair[0])[1]
            links[id(change)] = anchor
            taken[id(anchor)] = taken.get(id(anchor), 0) + 1
    if not links:
        return candidates
    return _chains_first(candidates, links)


def _ends_their_one(words: str, near: list[str]) -> bool:
    """Whether one of ``near`` (a newer result's change windows) tells only the end of the
    being ``words`` (an older result's) hold as theirs, told as its subject
    (:func:`.change_words.ja_ended_one`, :func:`.change_words.ja_held`): モカが虹の橋を渡ったよ
    after うちの犬のモカは散歩が大好き, whose few words are far in meaning (.26)."""
    for n in near:
        said = told(n)
        one = ja_ended_one(said) if _only_a_japanese_end(said) else None
        if one is not None and ja_held(words[:600], one):
            return True
    return False


def _corrected(old: Candidate, change: Candidate, wrong: set[tuple[str, str]]) -> bool:
    """Whether ``change``, told within :data:`CORRECTION_WINDOW` after ``old``, says a value
    ``old`` states was wrong (``wrong``: :func:`.change_words.replaced_values`): "it's
    Tuesday, not Monday" minutes after "My yoga class is on Monday at 6pm"."""
    gap = change.episode.occurred_at - old.episode.occurred_at
    return bool(wrong) and gap <= CORRECTION_WINDOW and states_any(own_words(old.episode), wrong)


def _chains_first(candidates: list[Candidate], links: dict[int, Candidate]) -> list[Candidate]:
    """``candidates`` with each chain that ``links`` makes (a change → the result it
    changes; always an older one, so no cycle) where its best-ranked member was, the
    newest first (:func:`chains_newest_first`), its changes marked and scored as the best
    of the chain."""
    older = {change: id(anchor) for change, anchor in links.items()}
    out: list[Candidate] = []
    for chain in chains_newest_first(candidates, id, older, lambda c: c.episode.occurred_at):
        best = max(m.score for m in chain)
        for m in chain:
            anchor = links.get(id(m))
            if anchor is not None:
                m.score = max(m.score, best)
                m.components["later_change"] = 1.0
                m.components["changes"] = float(anchor.episode.id)
        out.extend(chain)
    return out


def chains_newest_first(
    items: Sequence[T],
    key: Callable[[T], int],
    changes: Mapping[int, int],
    when: Callable[[T], datetime],
) -> list[list[T]]:
    """``items`` (best first) in groups, in their order: each chain that ``changes`` makes
    among them (a change's key → the key of the older item it changes; a link to or from
    no item is none) one group where its best-ranked member stood, the newest first by
    ``when``, every other item a group of its own: ``[old, other, new]``, "new" changing
    "old", is ``[[new, old], [other]]``. The fast path's later changes and the life ranking
    order their results so."""
    parent: dict[int, int] = {}

    def find(k: int) -> int:
        while parent.get(k, k) != k:
            k = parent[k]
        return k

    present = {key(x) for x in items}
    for change, older in changes.items():
        if change in present and older in present and find(change) != find(older):
            parent[find(change)] = find(older)
    groups: dict[int, list[T]] = {}  # (a chain's root → its members, where the first stood)
    for x in items:
        groups.setdefault(find(key(x)), []).append(x)
    return [sorted(g, key=when, reverse=True) if len(g) > 1 else g for g in groups.values()]


def forget_texts() -> None:
    """Drop what was read of texts and cached per text (:func:`_people`, :func:`_doings`,
    :func:`_slots`, the change words read and the text module's words): users' words, which
    a forgotten agent's or a scrubbed delete's must not leave in the process."""
    _people.cache_clear()
    _doings.cache_clear()
    _slots.cache_clear()
    forget_changes_read()
    forget_words()
