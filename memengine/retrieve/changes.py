"""Later changes: of the results a turn packs, a newer one that says the subject of an
older one changed comes before it.

A fact is often told once and changed later ("my dentist appointment is on the 12th" …
weeks on, "the dentist moved my appointment to the 19th instead"). When both are packed,
the question's words ("when is my dentist appointment?") usually rank the first telling
first, and the reply model reads the old fact before the new one. A packed result is a
*later change* of another packed result when it occurred later, has the same speaker (the
user, for exchanges), says near a change word (:data:`CHANGE`: "switched", "moved … to", "pushed … to",
"no longer", "quit", "sold", 変えた, やめた, 引っ越した, 延期, 今は …; not negated, not a question,
not a plan or a maybe: "I won't quit", "should I switch", "I might switch", 変えようかな)
something it shares with the older one (:func:`~memengine.text.shared_phrases`: a name, a
thing, 「スペイン語」; not a speaker's name), and their stored vectors are at least
``later_change_cosine`` close. It comes before the closest such result (a chain of
changes stands newest first where its best-ranked member was), marked ``later_change``
(and ``changes``: that result's id), and the pack's reason line names the day of the
memory it follows. Nothing that would not be packed is brought in (a message
with a change word next to a shared name is as often no change at all: "I almost quit
Blue Bottle today", "My coworker Jen quit Blue Bottle"), so the results packed stay the
same, only their order; a message that names a time keeps the order as ranked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..errors import EmbeddingError
from ..models import Episode, EpisodeKind
from ..text import APOSTROPHES, sentences, shared_phrases
from .fastpath import Candidate

_DATE = (
    r"(?:\d+(?:st|nd|rd|th|am|pm)\b|\d{1,2}:\d\d|\d{1,2}/\d{1,2}|(?:next|later|tomorrow|tonight"
    r"|noon|midnight)\b|the (?:\d+(?:st|nd|rd|th)\b|weekend\b|end of (?:the )?(?:week|month|year)\b)"
    r"|(?:the |this |next )?(?:morning|afternoon|evening|fall|autumn|spring|summer|winter)\b"
    r"|after (?:christmas|new year|the holidays)\b"
    r"|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s|sday)?"
    r"|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\b)"
)
"""A time a date is moved to, as a whole word ("to April 20", "to the 19th", "to 5pm", "to
next week", "to the fall"; not "to 3 sets", "to 100 kg", nor the "dec" of "decide")."""
_LONG = r"(?:an?|one|two|three|four|five|six|a few|a couple of|\d+) (?:hour|day|week|month)s?\b"
"""How long a date is moved by ("a week", "two days", "an hour")."""
_PLANS = (
    r"(?:deadline|meeting|launch|wedding|date|appointment|surgery|operation|trip|flight"
    r"|release|exam|interview|party|move|start|event|class|game|match|session|shift|delivery"
    r"|visit|holiday|vacation|plans?|schedule|call|lesson|review|presentation|opening|show"
    r"|concert|due date|it|them)"
)
"""What a date belongs to, when "back" moves it ("pushed back the wedding", "pushed the
meeting back"; not "pushed back the chair", "pushed the stroller back")."""
_JA_PLANS = (
    "(?:締め?切り?|締切日|期限|納期|予定|日程|会議|打ち合わせ|ミーティング|発売日?|出発|手術|試験"
    "|テスト|結婚式|式|旅行|引っ越し|入院|退院|工事|配達|発表|公開|開始|出張|飲み会|デート|約束"
    "|面接|予約|授業|レッスン|ライブ|試合|イベント|誕生日会|パーティー?|検査|健診|診察)"
)
"""What a date belongs to in Japanese, when 延びた, 延ばした or ずれた moves it (寿命が延びた,
線路が延びた, 体内時計がずれてる, テーブルが右にずれた move none)."""

CHANGE = re.compile(
    r"\b(?:nowadays|these days|anymore|no longer|instead(?! of)|switch(?:ed|ing)?(?! up)"
    r"|chang(?:ed|ing) (?:\w+ ){0,3}?(?:to|from|my mind)|mov(?:ed|ing) (?:\w+ ){0,3}?"
    r"(?:to|into|out|house|away|back)|quit|stopped|gave up|giving up|sold|replaced|broke up"
    r"|divorced|resched\w*|postponed|cancell?ed|from now on"
    rf"|(?:push|bump)(?:ed|ing) (?:\w+ ){{0,4}}?(?:(?:back|up|forward|out) )?(?:to|until|till) {_DATE}"
    rf"|(?:push|bump)(?:ed|ing) (?:\w+ ){{0,4}}?(?:(?:back|up|forward|out) )?(?:by )?{_LONG}"
    rf"|(?:push|bump)(?:ed|ing) back (?:the |our |my |his |her |their |its )?(?:\w+ )?{_PLANS}"
    rf"|(?:push|bump)(?:ed|ing) (?:the |our |my |his |her |their |its )?(?:\w+ )?{_PLANS} back"
    r"(?! (?:to|into|in|out|down|up|home|against|on|at|from)\b)"
    r"|got (?:push|bump)ed(?: back)?(?! (?:into|against|out|off|over|around|up|aside|away)\b)"
    r"|delayed"
    r"|brought (?:\w+ ){0,3}?forward)\b"
    r"|今は|今では|最近は|これからは|変え|変わっ|変更|(?<!着)替え|買い換え|乗り換え(?!て)|引っ越"
    r"|辞め|やめ|代わりに|じゃなくて|ではなく|じゃなく|売っ|別れ|転職|転校|移っ|移し|延期"
    rf"|{_JA_PLANS}(?:が|は|も|を)?[^。！？!?\n]{{0,8}}?(?:延び|延ばし|ずれ)"
    r"|ずれ込|前倒し|繰り上げ|繰り下げ"
    r"|キャンセル|訂正",
    re.ASCII | re.IGNORECASE,
)
"""Words that say something changed, in English (as words) and Japanese: a date pushed
to a time, by a while or back ("pushed the chapter 2 deadline to April 20", "bumped … to
the 19th", "pushed the trip by a week", "the meeting got pushed back", "pushed back the
wedding"; not "pushed myself to run", "pushed to 3 sets", "pushed back against it",
"pushed the chair back", "bumped into Sarah on Friday"), delayed, brought forward, 延期,
and, of a plan (:data:`_JA_PLANS`), 延びた, 延ばした, ずれた (締め切りが3日延びた, 飲み会、
金曜にずれた; not 寿命が延びた, 眼鏡がずれてる, 体内時計が8時間ずれてる), ずれ込んだ,
前倒し."""

_NOT_BEFORE = re.compile(
    r"\b(?:not|never|no need to|won't|don't|didn't|doesn't|haven't|hasn't|can't|cannot"
    r"|wouldn't|shouldn't|might|(?:i|we|you|he|she|they) may|maybe|should|could|if|almost"
    r"|thinking (?:of|about)"
    r"|going to|gonna|want to|wanna|planning (?:to|on)|plan to|hope to|hoping to|considering"
    r"|would have|would've|how about|what if)"
    r"\W+(?:\w+\W+){0,2}$",
    re.ASCII | re.IGNORECASE,
)
"""What makes an English change word say no change, within three words before it: a
negation ("I'm not going to switch", "still haven't switched"), a maybe, a wish, a plan or
what did not happen ("I might switch", "I may switch", not "in may we moved"; "planning on
switching", "hope to switch", "thinking of moving", "I would have switched but…", "how
about I switch")."""

_WILL_BEFORE = re.compile(r"(?:\b(?:will|would)|'ll|'d)\W+(?:\w+\W+){0,2}$", re.I)
""""will" and "would" before a change word's plain form ("I'll switch next month", "I'd
switch if I could"); before a past form it is done ("I'd already switched by then")."""

_DONE = re.compile(r"(?:\w+ed|sold|gave|broke|brought)\b", re.I)
"""A change word in a past form ("moved … to", "switched", "sold"): done, not planned."""

_A_SWITCH = re.compile(r"\b(?:my|the|a|your|his|her|our|their|nintendo)\W+$", re.I)
"""What makes "switch" a thing, not a change ("on my Switch")."""

_NOT_AFTER = re.compile(
    r"^\w{0,3}?(?:ない|なかっ|ません|ず(?!っと)|よう|たい|つもり|かも)"
    r"|^[^\Wてで]{0,3}?(?:予定|考え|迷っ|悩ん)"
)
"""What makes a Japanese one say no change just after it: a negation (変えない, 辞めません),
an intention, a wish or a plan (変えようかな, 辞めようと思ったけど, 引っ越したい, 辞めるつもり,
引っ越す予定, 転職を考えてる, 辞めるか迷ってる; not after a て-form, which joins a clause:
辞めて予定通り…, 売って迷ってたバイクを買った), a maybe."""


NEAR_CHARS = 120
"""How far from its change word a shared phrase may be: the words read on each side."""

SHARED_MIN_COSINE = 0.3
"""The default ``later_change_cosine`` (on the default embedder's scale): of 24
corrections written for the purpose (12 per language), the changes' cosines to what they
change ran from .27 to .82; newer memories with change words about other things came to
at most .39, and share no phrase with it."""

MAX_CHANGES = 2
"""How many later changes one result can have put before it (the newest first)."""

Similar = Callable[[int, Sequence[int]], dict[int, float]]
"""The cosine of a stored episode's vector to each of some others' (missing: no vector)."""


def own_words(ep: Episode) -> str:
    """What an episode's own speaker said: an exchange's user turn, else its content."""
    if ep.kind is EpisodeKind.exchange:
        return ep.user_text or ""
    return ep.content or ""


def change_sentences(text: str) -> list[str]:
    """The words around each change word of ``text`` (its first 2,000 characters; at most
    :data:`NEAR_CHARS` on each side, within its sentence) that say something changed: a
    change word (:data:`CHANGE`) not negated nor a maybe or a plan, in a sentence that asks
    nothing ("Any more paintings coming up?", "I won't quit", "should I switch", 変えないで
    and 変えようかな say no change)."""
    out: list[str] = []
    for sentence in sentences(text[:2000].translate(APOSTROPHES)):
        if sentence.endswith(("?", "？")):
            continue
        for m in CHANGE.finditer(sentence):
            before, after = sentence[: m.start()], sentence[m.end() :]
            if m.group()[0].isascii():
                noun = m.group().lower() == "switch" and _A_SWITCH.search(before) is not None
                planned = _WILL_BEFORE.search(before) is not None and not _DONE.match(m.group())
                if noun or planned or _NOT_BEFORE.search(before) is not None or _asks(before):
                    continue
            elif _NOT_AFTER.match(after) is not None:
                continue
            out.append(sentence[max(0, m.start() - NEAR_CHARS) : m.end() + NEAR_CHARS])
    return out


_ASKS = re.compile(r"^\W*(?:should|shall|can|could|would|do|does|did|is|are|will|why)\b", re.I)


def _asks(before: str) -> bool:
    """Whether the sentence a change word is in opens as a question without its mark
    ("should I switch Mochi to a different kibble", "why did I ever switch to oat milk";
    not "When I moved to Osaka…", a clause)."""
    return _ASKS.match(before) is not None


def _speaker(ep: Episode) -> str | None:
    speaker = ep.metadata.get("speaker")
    return speaker if isinstance(speaker, str) else None


def _subjects(words: str, near: str, names: set[str]) -> list[str]:
    """The phrases of ``words`` that ``near`` (the words around a change word) shares, not a
    speaker's name nor a change word (今は in both says nothing about what changed)."""
    shared = shared_phrases(words[:600], near, limit=20)
    return [p for p in shared if p not in names and CHANGE.fullmatch(p) is None]


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
            and any(_subjects(own_words(a.episode), n, names) for n in near)
        ]
        if not anchors:
            continue
        try:  # (the change's vector read once, against each older result's)
            cosines = similar(change.episode.id, [a.episode.id for a in anchors])
        except EmbeddingError:  # (re-embedded by another process: the full text answered)
            return candidates
        close = [
            (cos, a)
            for a in anchors
            if (cos := cosines.get(a.episode.id, -1.0)) >= min_cosine
            and taken.get(id(a), 0) < MAX_CHANGES
        ]
        if close:
            anchor = max(close, key=lambda pair: pair[0])[1]
            links[id(change)] = anchor
            taken[id(anchor)] = taken.get(id(anchor), 0) + 1
    if not links:
        return candidates
    return _chains_first(candidates, links)


def _chains_first(candidates: list[Candidate], links: dict[int, Candidate]) -> list[Candidate]:
    """``candidates`` with each chain that ``links`` makes (a change → the result it
    changes; always an older one, so no cycle) where its best-ranked member was, the
    newest first, its changes marked and scored as the best of the chain."""
    parent: dict[int, int] = {}

    def find(key: int) -> int:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for change_key, anchor in links.items():
        parent[find(change_key)] = find(id(anchor))
    members = set(links) | {id(a) for a in links.values()}
    chains: dict[int, list[Candidate]] = {}
    for c in candidates:
        if id(c) in members:
            chains.setdefault(find(id(c)), []).append(c)
    out: list[Candidate] = []
    for c in candidates:
        if id(c) not in members:
            out.append(c)
            continue
        chain = chains.pop(find(id(c)), None)
        if chain is None:  # (placed with its chain)
            continue
        chain.sort(key=lambda m: m.episode.occurred_at, reverse=True)
        best = max(m.score for m in chain)
        for m in chain:
            older = links.get(id(m))
            if older is not None:
                m.score = max(m.score, best)
                m.components["later_change"] = 1.0
                m.components["changes"] = float(older.episode.id)
        out.extend(chain)
    return out
