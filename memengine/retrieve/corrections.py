"""A correction in the next turn: "My yoga class is on Monday at 6pm", and a minute later
"Actually it's Tuesday, not Monday" (いや、火曜だった). The correction names no subject of
its own, so a later "When is my yoga class?" finds the Monday turn and not the one that
corrects it; this module finds the turn that follows a result to be packed and, when the
same speaker corrects it there, brings the correction in before it, marked as the change
it is (``changes``; the pack says "corrects the memory of …")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..lazy_re import lazy_compile
from ..models import Episode, EpisodeKind
from ..text import ENGLISH_STOPWORDS, fold, sentences
from ..values import closed_values, holds, same_kind_change, states_any, without_values
from .change_words import change_sentences, replaced_values
from .changes import own_words, stem
from .fastpath import Candidate
from .owners import other_owner, owners
from .signals import asks_something

MAX_CHAIN = 3
"""How many corrections in a row are followed: a correction of a correction ("Scratch
that, it's Tuesday, not Monday", then "No wait, it's Wednesday, not Tuesday") is one."""

CORRECTION_CHARS = 160
"""The longest turn, or a longer turn's first sentence, read as a correction: a correction
right after a fact is short, and a long one that opens with "Actually," is about something
else as often as not (what follows a short first sentence may say why it changed)."""

_EN_OPENING = lazy_compile(
    r"^\W*(?:(?:oh|oops|whoops|ugh|ah|hmm|um|sorry|no|nope|wait|hold on|my mistake|my bad|nvm)"
    r"\W+)*(?:\*|i mean\b|i meant\b|nope\b|no\b|hold on\b|my mistake\b|my bad\b|oops\b"
    r"|whoops\b|sorry\b|actually\b|correction\b|wait\b|nvm\b|never ?mind\b)"
    r"|\bactually\b|\w\*(?!\w)|\b(?:my bad|sorry|oops|my mistake)\W*$",
    re.IGNORECASE,
)
"""How a short English correction may open beside :data:`.change_words.CORRECTION`'s
shapes ("*Tuesday", "I mean Tuesday", "Nope, Tuesday", "hold on, it's Tuesday", "ugh I
meant Tuesday", "nvm it's Thursday"), and what marks one wherever it stands ("it's
actually 7:30 not 7", "thursday* sorry") or ends it ("Tuesday not Monday my bad"): read
as one only with a value of the kind the memory states and no subject of its own
(:func:`corrects`)."""

_JA_OPENING = lazy_compile(
    r"^\W*(?:(?:あっ?|あー|えっ?|うわ)\W*)?"
    r"(?:やば|やべ|しまった|いや(?:いや)?|ごめん|ゴメン|すみません|すいません|すまん|失礼|訂正|やっぱ|違[うっ]|ちが[うっ]"
    r"|まちがい|間違い|勘違い|正しくは|あれ[、,，\s])"
    r"|^\W*(?:あっ?|あー|えっ?)[、,，!！\s]+(?=.*(?:だった|でした))"
)
"""How a Japanese correction may open: いや(、)…, ごめん, やっぱ, 違う, ちがった, 勘違い,
正しくは, after an あ、 or やば、 or not; an あ、 alone before a だった (あ、火曜だった)."""

_JA_ANYWHERE = lazy_compile(
    r"じゃなくて|じゃなく|ではなくて|ではなく|じゃない(?:[、,，\s]|$)|の間違い|勘違い|間違えた|まちがえた"
    r"|ミスった|ミスってた"
)
"""What says a Japanese turn takes something back wherever it stands: 月曜じゃなくて火曜,
月曜じゃない、火曜, 火曜の間違い, 勘違いしてた, ミスった."""


def _takes_back(said: str) -> bool:
    """Whether ``said`` is shaped as a correction: a correction's English shape, or a change
    (:func:`.change_words.change_sentences`: "it's Tuesday, not Monday", "No wait, it's
    Tuesday", "Sorry, I meant Tuesday", "Scratch that, the meeting is at 4"), a short
    turn's opening (:data:`_EN_OPENING`, :data:`_JA_OPENING`) or a Japanese taking back
    (:data:`_JA_ANYWHERE`)."""
    folded = fold(said).strip()
    if _EN_OPENING.search(folded) or _JA_OPENING.search(folded) or _JA_ANYWHERE.search(folded):
        return True
    return bool(change_sentences(said))  # (not a request: "Get tickets for Sunday, not Saturday")


_EN_WORD = lazy_compile(r"[a-z]+(?:'[a-z]+)?")

_EN_UNSUBJECT = frozenset(
    """actually sorry meant mean wait hold scratch mistake bad oops whoops typo wrong confused
    mixed mix mixing mixes correction correct corrected right said say saying told typed wrote
    misspoke misread misremembered earlier instead nope yes yep yup ugh ah oh sry nvm
    apologies got get thought checked check looked calendar double again always sure silly
    brain dumb lol haha lmao ww www autocorrect day us moved changed switched pushed rescheduled
    bumped move back never mind
    one already been morning afternoon evening night noon pm am clock o'clock half past quarter every
    st nd rd th""".split()
)
"""English words a correction may hold beside its value that name no subject of its own:
its shape ("Sorry, I meant …", "my bad", "sorry wrong day", "I got mixed up"), a change's
verb, and a part of a day ("Tuesday evening"). Any other word must be one the memory
holds: "this week", "tonight" or "tomorrow" tells a one-off change ("oh wait, this week
it's on Tuesday"), not that the memory was wrong."""

_JA_UNSUBJECT = lazy_compile(
    "ごめん(?:なさい)?|ゴメン|すみません|失礼|勘違い|間違(?:い|え|っ)|違(?:う|っ)|訂正|正し|正解|ミス|実は|本当|"
    "言っ|言い|書い|思っ|変更|変わ|変え|開始|私|俺|僕|自分|笑|"
    "毎週|毎日|毎月|午前|午後|夕方|[日時分半朝昼夜晩週月年]"
)
"""Japanese words a correction may hold beside its value that name no subject of its own:
its shape (ごめん, 勘違い, 間違えた, 正しくは, 言った), a change's verb and a part of a day
(午後, 火曜日's 日). Any other run of kanji or katakana must be one the memory holds: 来週,
明日 or 今日 tells a one-off change (ごめん、来週だけ火曜)."""

_JA_RUN = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々]+|[\u30a1-\u30fa\u30fc]{2,}")

_ADDED = lazy_compile(
    r"\b(?:also|too|other|another|as well|plus)\b|\sも(?!う)|(?:僕|私|俺|自分)の|だけ"
)
"""What tells another value beside the memory's, or someone else's: "there's a yoga class on
Tuesday too", "my other appointment is Friday", 火曜もヨガある, 来週だけ火曜, 僕の誕生日は…
(after a memory of 彼女の誕生日)."""

_CLAUSE_END = lazy_compile(r"[;、，；：]|(?<!\d):|:(?!\d)|,(?!\d{3})")
"""Where a clause ends: a comma that is no thousands' mark ($1,950), a colon that is no
clock's (7:30), a 、."""

_NOW = lazy_compile(
    r"\balready\b(?!\W+(?:been\W+)?(?:moved|changed|switched|pushed|rescheduled)\b)"
    r"|もう|今(?![日週月夜晩年度回朝])"
)
"""What tells the time it is, not the time something is at: "Wait, it's already 9pm",
あれ、もう22時だ (not "it was already moved to Tuesday")."""


_WHO_MOVED = lazy_compile(
    r"(?<!\bmy\s)(?<!\bour\s)(?:\b(?!(?:my|our)\b)[\w.']+\s+){1,3}?"
    r"(?=(?:has\s+|had\s+|just\s+)*"
    r"(?:had\s+to\s+)?(?:moved?|changed?|pushed|switched|rescheduled|bumped)\s+(?:it|that|this)\b)"
    r"|(?:[^\s、。,]{1,8}の)?(?:都合|せい|関係|急用|用事|出張|体調不良|体調|台風|雨|工事|祝日)で"
)
"""Who or what moved the memory's thing, the reason a correction may give inside its clause:
"oh wait Dr. Patel moved it to Friday", "the office just moved it", 先生の都合で火曜になった.
Not the speaker's own ("my dentist moved it": it may be the dentist's appointment), nor a
thing that is no "it" ("Sam moved his party to Tuesday")."""


def _up_to_values(said: str) -> str:
    """``said`` up to the end of the last clause that states a value: what follows may say
    why ("Actually pottery is on Thursday, the studio changed it", "wait no $79, they were
    on sale", やっぱ火曜だわ、スタジオのサイト見たら)."""
    end, start = 0, 0
    for m in _CLAUSE_END.finditer(said):
        if closed_values(said[start : m.start()]):
            end = m.start()
        start = m.end()
    return said if closed_values(said[start:]) else said[: end or len(said)]


def _anothers(said: str, told: str, shared: set[str]) -> bool:
    """Whether a word both hold is another's in one than in the other (:func:`.owners.owners`,
    as the later changes read it): "No, my birthday is July 3" after "My mom's birthday is
    on June 14" tells the speaker's own."""
    for word in shared:
        mine, theirs = owners(said, word, shared), owners(told, word, shared)
        if any(other_owner(a, b) for a in mine for b in theirs):
            return True
    return False


def _own_subject(said: str, told: str) -> bool:
    """Whether ``said`` names a subject ``told`` does not hold: a correction names none
    ("Actually it's Tuesday, not Monday", いや、火曜だった) or the memory's ("Scratch that,
    the meeting is at 4", いや、ヨガは火曜), while a turn that names its own tells something
    else ("Wait, I just remembered the party is on Saturday", ごめん、19時から会議だった,
    "Actually I'm free on Tuesday"), as does one that tells the time it is now."""
    clause = _up_to_values(said)
    rest = fold(unicodedata.normalize("NFKC", without_values(clause))).lower()
    rest = _WHO_MOVED.sub(" ", rest)
    if _NOW.search(rest) or _ADDED.search(rest):
        return True
    memory = fold(unicodedata.normalize("NFKC", told)).lower()
    held = {stem(w.removesuffix("'s")) for w in _EN_WORD.findall(memory)}
    shared: set[str] = set()
    for word in _EN_WORD.findall(rest):
        if word in ENGLISH_STOPWORDS or word in _EN_UNSUBJECT or len(word) < 2:
            continue
        if stem(word.removesuffix("'s")) not in held:
            return True
        shared.add(word.removesuffix("'s"))
    if _anothers(clause, told, shared):
        return True
    rest = _JA_UNSUBJECT.sub(" ", rest)
    return any(run not in memory for run in _JA_RUN.findall(rest))


_HOUR = r"(?:1[0-2]|[1-9])"
_TAIL = r"(?=\s*(?:$|[.!?;,)*]|[^\x00-\x7f]|(?:btw|lol|lmao|haha|sorry|oops|then|my bad|ugh)\b))"
"""What may follow a bare hour a correction states: the end, a mark, an emoji, a word that
says sorry or laughs ("8 not 7 lol", "8 not 7 😅"); not a noun ("8 not 7 people")."""
_BARE_HOURS = lazy_compile(
    rf"(?<![\w:./$¥£€-])(?<!\d,)(?P<new>{_HOUR})\*?\s*,?\s*not\s+(?:at\s+)?(?P<old>{_HOUR}){_TAIL}"
    rf"|(?<=\bmeant\s)(?P<meant>{_HOUR}){_TAIL}"
    rf"|(?<=\bat\s)(?P<at>{_HOUR}){_TAIL}"
    rf"|(?:(?<=\bit\sto\s)|(?<=\bit\sback\sto\s))(?P<to>{_HOUR}){_TAIL}",
    re.IGNORECASE,
)
"""Hours written bare where a correction sets one against another ("8 not 7", "it's 8, not
7", "sorry I meant 8", "at 8 instead btw", "Sam pushed it to 8"): read as clock times only
beside a memory that states a time (:func:`_bare_hours`)."""

_LEFT_OF_HOURS = lazy_compile(
    r"(?:^|[,;:!.]\s*)\W*(?:(?:oh|oops|whoops|sorry|sry|no|nope|wait|ugh|ah+|hmm|um|actually"
    r"|my bad|nvm|never ?mind)\W+)*(?:(?:it's|its|it is|it was|that's|make it|make that"
    r"|i meant|meant|i mean)\s+)?(?:at\s+)?$",
    re.IGNORECASE,
)
"""What may stand before "8 not 7" in its clause: words that open a correction and "it's",
"make it", "I meant", "at" ("sorry, 8 not 7", "wait it's 8 not 7"); not a count's ("we're
8 not 7", "down 8 not 7", "day 8 not 7", "just 5 not 6")."""


def _as_told(hour: int, times: set[tuple[str, str]], near: int | None = None) -> str:
    """A bare ``hour`` as a clock time in the half of the day ``times`` (a memory's) put the
    hour ``near`` it in ("8" set against "7" beside "7pm" is 20:00), or, with no ``near``,
    the half all of them are in; "8 o'clock" (either half) when they tell no one half, or
    when that half would move it past six hours ("11 not 1" beside 1pm)."""
    if near is not None:
        halves = {h for h in (0, 12) if holds(times, ("time", f"{near % 12 + h}:00"))}
    else:
        halves = {12 if int(t.split(":")[0]) >= 12 else 0 for _, v in times for t in v.split("|")}
    if len(halves) != 1 or (near is not None and abs(hour % 12 - near % 12) > 6):
        return f"{hour} o'clock"
    return f"{hour % 12 + halves.pop()}:00"


def _bare_hours(part: str, told: str) -> str:
    """``part`` with its bare hours written as the clock times they are beside ``told``, a
    memory that states a time: "sorry, 8 not 7" after "Dinner is at 7pm" reads as "20:00,
    not 19:00" ("we're 8 not 7", "8 not 7 people", a memory that states no time or not
    that hour keep them bare numbers)."""
    if not _BARE_HOURS.search(part):
        return part
    times = {v for v in closed_values(told) if v[0] == "time"}
    if not times:
        return part

    def clock(m: re.Match[str]) -> str:
        if m["to"] is None and not _LEFT_OF_HOURS.search(part[: m.start()]):
            return m[0]  # ("we're 8 not 7", "I'm at 3 lol": a count)
        if m["new"] is None:
            return _as_told(int(m["meant"] or m["at"] or m["to"]), times, None)
        old = int(m["old"])
        if not holds(times, ("time", f"{old % 12}:00|{old % 12 + 12}:00")):
            return m[0]
        return f"{_as_told(int(m['new']), times, old)}, not {_as_told(old, times)}"

    return _BARE_HOURS.sub(clock, part)


def _correcting_part(said: str) -> str:
    """What of ``said`` is read as a correction: its sentences up to the first that states a
    value of a closed kind, when they are at most :data:`CORRECTION_CHARS` ("No wait.
    Tuesday."); what follows may say why it changed ("Actually it's Tuesday, not Monday. I
    double-checked the confirmation email and they moved all the Monday slots …",
    いや、火曜だった。先生が月曜お休みになったらしくて…). "" when there is none."""
    part = ""
    for sentence in sentences(said[: 2 * CORRECTION_CHARS]):
        part = f"{part} {sentence}" if part else sentence
        if len(part) > CORRECTION_CHARS:
            return ""
        if closed_values(sentence):
            return part
    return ""


_NAME_SWAP = lazy_compile(
    r"(?<![\w'])(?P<new>[A-Z][a-z]{1,20})\*?\s*,?\s*not\s+(?P<old>[A-Z][a-z]{1,20})(?![\w'])"
    r"|(?P<jold>[\u30a1-\u30fa\u30fc]{2,12}|(?<![\u4e00-\u9fff])[\u4e00-\u9fff]{1,4})"
    r"(?:さん|ちゃん|くん|君)?(?:じゃなくて|じゃなく|ではなく)"
    r"(?P<jnew>[\u30a1-\u30fa\u30fc]{2,12}|[\u4e00-\u9fff]{1,4})"
)
"""A name set against another: "Mia, not Emma", "sorry Mia not Emma", エマじゃなくてミア,
田中さんじゃなくて鈴木さん, 東京じゃなくて大阪 (a kanji run whole: not the end of a longer one)."""

_NOT_NAMES = frozenset(
    """I Im It Its The This That Sorry Oops No Nope Wait Actually Oh Ah Ugh Yes Yeah Ok Okay
    Lol Haha Mom Dad Monday Tuesday Wednesday Thursday Friday Saturday Sunday January
    February March April May June July August September October November December""".split()
)
"""Capitalised words that are no names a correction swaps (a sentence's first word, a
weekday or a month: those are values, read as such)."""


def _corrects_a_name(told: str, said: str) -> bool:
    """Whether ``said``, a short turn shaped as a correction, sets a name ``told`` holds
    aside for one it does not hold, and says nothing else of its own: "Sorry, Mia not Emma"
    after "Emma's recital is on Friday", ごめん、エマじゃなくてミア (not "Mia, not Emma, is
    my favourite", nor a name the memory does not hold)."""
    m = _NAME_SWAP.search(said)
    if m is None:
        return False
    new, old = (m["new"], m["old"]) if m["new"] else (m["jnew"], m["jold"])
    if new in _NOT_NAMES or old in _NOT_NAMES or new == old:
        return False
    if m["new"] and not (re.search(rf"\b{old}\b", told) and not re.search(rf"\b{new}\b", told)):
        return False
    if m["jnew"] and not (old in told and new not in told):
        return False
    rest = f"{said[: m.start()]} {said[m.end() :]}"
    if m["jnew"] and not _JA_NAME_TAIL.match(said[m.end() :]):
        return False  # (コーラじゃなくてペプシがいいな, …にすればよかった, …にしようかな: a wish)
    if m["new"] and any(
        w not in _EN_UNSUBJECT and w not in _NAME_FRAME for w in _EN_WORD.findall(rest.lower())
    ):
        return False  # ("oh I like Pepsi not Coke", "No, I think Paris not London", "… for us")
    if m["new"]:
        return True
    return not _own_subject(f"{rest.replace('名前', ' ')} {old}", told)


_JA_NAME_TAIL = lazy_compile(
    r"(?:さん|ちゃん|くん|君)?(?:の(?:方|ほう)|の間違い)?(?:だった|でした|です|だ)?(?:わ|よ|ね|な(?=[^\w]|$))*"
    r"[\s、。,.!！…・〜ー]*(?:(?:ごめん(?:なさい)?|すみません|すいません|失礼|笑|w+)[\s、。,.!！…〜]*)?$"
)
"""What may follow the new name in a Japanese name correction: a copula, a particle that
ends it, an apology (ミアだった, ミアね、ごめん); not a wish or a plan (ペプシがいいな)."""

_NAME_FRAME = frozenset(
    """i it it's its is was a the my no her his their name name's named called spelled spelt
    meant mean""".split()
)
"""Words an English name correction may hold beside its openers: "It's Mia not Emma",
"sorry, her name's Mia not Emma", "it's spelled Sara not Sarah"."""


def corrects(before: Episode, after: Episode) -> bool:
    """Whether ``after``, the turn that follows ``before``, corrects a value it states: its
    first sentences up to a value, short (:func:`_correcting_part`), no question, shaped as
    a correction (:func:`_takes_back`), that states a value of a closed kind ``before``
    states too, and another one (:func:`.values.same_kind_change`: "Sorry, I meant Tuesday" after "My yoga
    class is on Monday at 6pm", いや、火曜だった); what it says was wrong, if it says, is
    what ``before`` states ("Oops, it's Sam's birthday on Friday, not Saturday" corrects no
    Monday class); and it names no subject ``before`` does not (:func:`_own_subject`:
    "Wait, I just remembered the party is on Saturday" tells another matter). "Actually it
    was really fun", 「いや、最高だった」 and 「今日はカレーじゃなくて
    シチューの気分」 state no such value: they correct nothing. A turn that states no value
    may set a name ``before`` holds against another (:func:`_corrects_a_name`: "Sorry, Mia
    not Emma")."""
    return _taken_back(before, after) is not None


def _taken_back(before: Episode, after: Episode) -> set[tuple[str, str]] | None:
    """What ``after`` says was wrong when it corrects ``before`` (:func:`corrects`): the
    values it sets aside ("not Monday"), none named ("Sorry, I meant Tuesday", a name
    swapped); None when it corrects nothing."""
    said = own_words(after).strip()
    told = before.text  # (both turns of an exchange: the reply may have said the value)
    part = _correcting_part(_bare_hours(said[: 2 * CORRECTION_CHARS], told))
    if not part:  # (read first: one pass, where most turns stop)
        short = said if len(said) <= CORRECTION_CHARS else ""  # (a name: no value read)
        named = (
            bool(short)
            and not asks_something(short)
            and _takes_back(short)
            and _corrects_a_name(told, short)
        )
        return set() if named else None
    if asks_something(part) or not _takes_back(part):
        return None
    replaced = replaced_values(part)
    if replaced and not states_any(told, replaced):
        return None
    if _own_subject(part, told) or not same_kind_change(told, part):
        return None
    return replaced


def corrects_later(before: Episode, between: Episode, after: Episode) -> bool:
    """Whether ``after``, two turns after ``before`` with ``between`` in the middle, corrects
    a value ``before`` states: it does (:func:`corrects`) and names the value it takes back,
    which ``before`` states ("oh wait, yoga's on Tuesday, not Monday" after "My yoga class is
    on Monday" and "I got a new mat too"), and ``between`` states no value of that kind (its
    "Tuesday" could be what is corrected). A bare "Actually, Tuesday" that far is no
    correction of it."""
    replaced = _taken_back(before, after)
    if not replaced:  # (none, or none named: what it takes back must be the memory's)
        return False
    kinds = {kind for kind, _ in replaced}
    return not any(kind in kinds for kind, _ in closed_values(own_words(between)))


def _same_speaker(before: Episode, after: Episode) -> bool:
    """Whether one speaker said both: two exchanges (the user's turns), or two turns whose
    ``speaker`` metadata (a chat log's "Caroline") is the same; a message without one may
    be the companion's own."""
    if before.kind is EpisodeKind.exchange and after.kind is EpisodeKind.exchange:
        return before.metadata.get("speaker") == after.metadata.get("speaker")
    speaker = before.metadata.get("speaker")
    return speaker is not None and speaker == after.metadata.get("speaker")


def bring_corrections(
    candidates: Sequence[Candidate],
    packed: Sequence[Candidate],
    following: Mapping[int, Episode],
    later: Mapping[int, Episode] | None = None,
) -> tuple[list[Candidate], list[Candidate]]:
    """``candidates`` with the turn that follows each ``packed`` result
    (``following[result id]``) put just before it when the same speaker corrects it there
    (:func:`corrects`), or with the turn after that (``later[next turn's id]``) when it
    corrects it naming what it takes back (:func:`corrects_later`): scored as the result,
    marked ``correction``, ``next_turn`` and as the later change of it (``later_change``,
    ``changes``); and the corrections, whose own next turns may correct them in turn
    ("Scratch that, it's Tuesday", then "No wait, Wednesday"). A correction already ranked
    higher keeps its place and is marked the same; one that was no candidate joins them."""
    out = list(candidates)
    brought: list[Candidate] = []
    for result in packed:
        nxt = following.get(result.episode.id)
        if nxt is None or not _same_speaker(result.episode, nxt):
            continue
        if not corrects(result.episode, nxt):
            after = (later or {}).get(nxt.id)
            if after is None or not _same_speaker(result.episode, after):
                continue
            if not corrects_later(result.episode, nxt, after):
                continue
            nxt = after
        marks = {
            "correction": 1.0,
            "next_turn": 1.0,
            "later_change": 1.0,
            "changes": float(result.episode.id),
        }
        at = next((i for i, c in enumerate(out) if c.episode.id == nxt.id), None)
        here = next(i for i, c in enumerate(out) if c.episode.id == result.episode.id)
        if at is not None and at < here:
            out[at] = replace(out[at], components={**out[at].components, **marks})
            brought.append(out[at])
            continue
        old = out.pop(at) if at is not None else None  # (after the result: ``here`` holds)
        comps = {**(old.components if old is not None else {}), **marks}
        out.insert(here, replace(result, episode=nxt, score=result.score, components=comps))
        brought.append(out[here])
    return out, brought
