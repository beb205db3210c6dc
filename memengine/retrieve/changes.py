"""Later changes: of the results a turn packs, a newer one that says the subject of an
older one changed comes before it.

A fact is often told once and changed later ("my dentist appointment is on the 12th" …
weeks on, "the dentist moved my appointment to the 19th instead"). When both are packed,
the question's words ("when is my dentist appointment?") usually rank the first telling
first, and the reply model reads the old fact before the new one. A packed result is a
*later change* of another packed result when it occurred later, has the same speaker (the
user, for exchanges), says near a change word (:data:`CHANGE`: "switched", "moved … to",
"pushed … to", "no longer", "not … anymore", "I used to", "quit", "sold", 変えた, やめた,
引っ越した, 延期, 中止, 今は …; not negated, not a question, not a plan or a maybe: "I won't
quit", "should I switch", "I might switch", 変えようかな) something it shares with the
older one (:func:`~memengine.text.shared_phrases`: a name, a thing, 「スペイン語」; not a
speaker's name, nor a thing each names another owner of: "my son's dentist appointment"
changes no "my dentist appointment", 父の誕生日会 no 母の誕生日会), and their stored vectors
are at least ``later_change_cosine`` close. It comes before the closest such result (a
chain of changes stands newest first where its best-ranked member was), marked
``later_change`` (and ``changes``: that result's id), and the pack's reason line names the
day of the memory it follows. Nothing that would not be packed is brought in (a message
with a change word next to a shared name is as often no change at all: "I almost quit
Blue Bottle today", "My coworker Jen quit Blue Bottle"), so the results packed stay the
same, only their order; a message that names a time keeps the order as ranked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..errors import EmbeddingError
from ..models import Episode, EpisodeKind
from ..text import APOSTROPHES, fold, sentences, shared_phrases
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
"""What a date belongs to in Japanese, when 延びた, 延ばした, ずれた or ずらした moves it or
なくなった calls it off (寿命が延びた, 線路が延びた, 体内時計がずれてる, テーブルが右にずれた,
お金がなくなった move nothing)."""

_WORD = r"(?:\w+(?:'s)?,? )"
"""A word between a change verb and its "to" ("moved my appointment to", "moved Mochi's
checkup to"), a comma after it ("moved my appointment again, to March 26th")."""
_JA_DAY = "(?:[週日月曜時年朝夜末方後]|明日|あした)(?:に|へ|まで)"
"""A time a Japanese plan is shifted to (来週に, 19日に, 金曜に, 午後に, 週末まで), before ずらした."""

CHANGE = re.compile(
    r"\b(?:nowadays|these days|anymore|any more(?=\s*(?:[^\w\s]|$))|no longer|instead(?! of)"
    r"|switch(?:ed|ing)?(?! up)"
    rf"|chang(?:ed|ing),? {_WORD}{{0,3}}?(?:to|from|my mind)"
    rf"|mov(?:ed|ing),? {_WORD}{{0,3}}?(?:to|into|out|house|away|back)"
    r"|quit|stopped|gave up|giving up|sold|replaced|broke up"
    r"|divorced|resched\w*|postponed|cancell?ed|from now on"
    r"|(?:(?<=\bi )|(?<=\bwe )|(?<=\bhe )|(?<=\bshe )|(?<=\bthey )|(?<=\byou ))used to"
    rf"|(?:push|bump)(?:ed|ing),? {_WORD}{{0,4}}?(?:(?:back|up|forward|out),? )?"
    rf"(?:to|until|till) {_DATE}"
    rf"|(?:push|bump)(?:ed|ing),? {_WORD}{{0,4}}?(?:(?:back|up|forward|out),? )?"
    rf"(?:by )?{_LONG}"
    rf"|(?:push|bump)(?:ed|ing) back (?:the |our |my |his |her |their |its )?(?:\w+ )?{_PLANS}"
    rf"|(?:push|bump)(?:ed|ing) (?:the |our |my |his |her |their |its )?(?:\w+ )?{_PLANS} back"
    r"(?! (?:to|into|in|out|down|up|home|against|on|at|from)\b)"
    r"|got (?:push|bump)ed(?: back)?(?! (?:into|against|out|off|over|around|up|aside|away)\b)"
    r"|delayed"
    rf"|brought,? {_WORD}{{0,3}}?forward)\b"
    r"|今は|今では|最近は|これからは|変え|変わっ|変更|(?<!着)替え|買い換え|乗り換え(?!て)|引っ越"
    r"|辞め|やめ|代わりに|じゃなくて|ではなく|じゃなく|売っ|別れ|転職|転校|移っ|移し|延期"
    r"|中止|リスケ|退職|転勤"
    rf"|{_JA_PLANS}(?:が|は|も|を)?[^。！？!?\n]{{0,8}}?(?:延び|延ばし|ずれ|ずらし)"
    rf"|{_JA_DAY}ずらし|{_JA_PLANS}(?:が|は|も)?[^。！？!?\n]{{0,4}}?(?:なくなっ|無くなっ)"
    r"|もう[^。！？!?\n、，,]{0,8}?[てで]い?(?:ない|なかっ|ません)"
    r"|ずれ込|前倒し|繰り上げ|繰り下げ"
    r"|キャンセル|訂正",
    re.ASCII | re.IGNORECASE,
)
"""Words that say something changed, in English (as words) and Japanese: a date pushed
to a time, by a while or back ("pushed the chapter 2 deadline to April 20", "bumped … to
the 19th", "pushed the trip by a week", "the meeting got pushed back", "pushed back the
wedding"; not "pushed myself to run", "pushed to 3 sets", "pushed back against it",
"pushed the chair back", "bumped into Sarah on Friday"), delayed, brought forward, a comma
or an "again," between the words ("moved my appointment again, to March 26th", "moved
Mochi's checkup to May 9th"); 延期, 中止, リスケ, and, of a plan (:data:`_JA_PLANS`), 延びた, 延ばした, ずれた, ずらした, なくなった
(締め切りが3日延びた, 飲み会、金曜にずれた, 予約ずらした, 飲み会なくなった; not 寿命が延びた,
眼鏡がずれてる, 体内時計が8時間ずれてる, 視線をずらした, 時間がなくなった), ずらした to a time
(来週にずらしてもらった), ずれ込んだ, 前倒し; 退職した, 転勤になった; "no longer" as もう with a
negated ている form (もう大阪には住んでない, もう飲んでない); "I used to …" after its subject ("I
used to hate coffee"; not "got used to", "I'm used to", "it used to"), and "anymore" (or a
clause's last "any more"), which says a change only after a negation (:data:`_NEGATION`)."""

_MAYBES = (
    r"no need to|might|(?:i|we|you|he|she|they) may|maybe|should|could|if|almost"
    r"|thinking (?:of|about)"
    r"|going to|gonna|want to|wanna|planning (?:to|on)|plan to|hope to|hoping to|considering"
    r"|would have|would've|how about|what if"
)
"""A maybe, a wish, a plan or what did not happen, before an English change word."""

_NOT_BEFORE = re.compile(
    r"\b(?:not|never|won't|don't|didn't|doesn't|haven't|hasn't|can't|cannot"
    rf"|wouldn't|shouldn't|{_MAYBES})"
    r"\W+(?:\w+\W+){0,2}$",
    re.ASCII | re.IGNORECASE,
)
"""What makes an English change word say no change, within three words before it: a
negation ("I'm not going to switch", "still haven't switched"), a maybe, a wish, a plan or
what did not happen ("I might switch", "I may switch", not "in may we moved"; "planning on
switching", "hope to switch", "thinking of moving", "I would have switched but…", "how
about I switch"). "anymore" is read the other way (:data:`_NEGATION`)."""

_MAYBE_BEFORE = re.compile(rf"\b(?:{_MAYBES})\W+(?:\w+\W+){{0,2}}$", re.ASCII | re.IGNORECASE)
"""A maybe, a wish or a plan within three words before a negation ("I might not go anymore",
"if I don't go to the gym anymore")."""

_NEGATION = re.compile(
    r"\b(?:not|no|never|nothing|nobody|nowhere|neither|nor|hardly|barely|rarely|seldom|cannot"
    r"|(?!(?:should|might|must)n't)\w+n't)\W+(?:\w+\W+){0,6}$",
    re.ASCII | re.IGNORECASE,
)
"""The negation that makes "anymore" a change, within seven words before it ("I'm not vegan
anymore", "I don't go to the gym anymore", "I never drink coffee anymore", "Not anymore",
"We aren't together anymore"); alone it says nothing ("Any more paintings coming up?"), and
advice is no change ("you shouldn't drink anymore")."""

_ANYMORE = re.compile(r"any ?more", re.I)
"""The change words that need a negation before them (:data:`_NEGATION`)."""

_WILL_BEFORE = re.compile(r"(?:\b(?:will|would)|'ll|'d)\W+(?:\w+\W+){0,2}$", re.I)
""""will" and "would" before a change word's plain form ("I'll switch next month", "I'd
switch if I could"); before a past form it is done ("I'd already switched by then")."""

_DONE = re.compile(r"(?:\w+ed|sold|gave|broke|brought)\b", re.I)
"""A change word in a past form ("moved … to", "switched", "sold"): done, not planned."""

_A_SWITCH = re.compile(r"\b(?:my|the|a|your|his|her|our|their|nintendo)\W+$", re.I)
"""What makes "switch" a thing, not a change ("on my Switch")."""

_A_TOOL = re.compile(
    r"\b(?:the|a|an|this|that|these|those|my|your|his|her|our|their|its|some) \w+ \w+ $",
    re.I,
)
"""What makes "I used to" a thing used, not a habit left ("the knife I used to cut it", "the
app we used to pay"): a thing named just before its subject ("When I was a kid, I used to"
is a habit)."""

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
    change word (:data:`CHANGE`) not negated nor a maybe or a plan ("anymore" negated, not
    as a maybe: "I'm not vegan anymore"), in a sentence that asks nothing ("Any more
    paintings coming up?", "I won't quit", "should I switch", "I might not go anymore",
    変えないで and 変えようかな say no change)."""
    out: list[str] = []
    for sentence in sentences(text[:2000].translate(APOSTROPHES)):
        if sentence.endswith(("?", "？")):
            continue
        for m in CHANGE.finditer(sentence):
            before, after = sentence[: m.start()], sentence[m.end() :]
            if _ANYMORE.fullmatch(m.group()):
                if not _negated(before) or _asks(before):
                    continue
            elif m.group()[0].isascii():
                word = m.group().lower()
                noun = word == "switch" and _A_SWITCH.search(before) is not None
                tool = word == "used to" and _A_TOOL.search(before) is not None
                planned = _WILL_BEFORE.search(before) is not None and not _DONE.match(m.group())
                if noun or tool or planned or _NOT_BEFORE.search(before) or _asks(before):
                    continue
            elif _NOT_AFTER.match(after) is not None:
                continue
            out.append(sentence[max(0, m.start() - NEAR_CHARS) : m.end() + NEAR_CHARS])
    return out


_ASKS = re.compile(r"^\W*(?:should|shall|can|could|would|do|does|did|is|are|will|why)\b", re.I)


def _negated(before: str) -> bool:
    """Whether the words before an "anymore" negate it, and not as a maybe or a plan ("I
    don't live there anymore"; not "I might not go anymore", "if I don't go anymore")."""
    negation = _NEGATION.search(before)
    return negation is not None and _MAYBE_BEFORE.search(before[: negation.start()]) is None


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


_EN_OWNERS = {"my": "i", "our": "i", "your": "you", "his": "he", "her": "she", "their": "they"}
"""The owner a possessive word names: "my" and "our" the speaker, "your" the one spoken to,
"his", "her" and "their" someone a name may be."""
_NOT_OWNERS = frozenset("it that what there here let he she who".split())
"""What "X's" is when it is "X is" or "let us" ("it's", "that's", "let's"), not an owner."""
_PRONOUNS = frozenset({"he", "she", "they"})
"""The owners a possessive pronoun names: maybe a name's ("his" may be "Dad's")."""
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
"""A word of a folded text, with its "'s" ("son's")."""
_JA_OWNER = re.compile(
    r"(?:(?P<me>私|僕|俺|うち)"
    r"|(?<![\u4e00-\u9fff々])お?(?P<kin>息子|娘|祖母|祖父|母|父|夫|妻|彼氏|彼女|友達|兄|姉|弟|妹"
    r"|上司|同僚)(?:さん|ちゃん)?"
    r"|(?P<name>(?<![\u4e00-\u9fff々])[\u4e00-\u9fff々]{1,4}|(?<![\u30a1-\u30ff])[\u30a1-\u30ff]{1,8}"
    r"|(?<![a-z])[a-z]{1,12})(?:さん|ちゃん|くん|君|様))の$"
)
"""Whose a Japanese piece is, by the 「Xの」 just before it: the speaker's (私の, 僕の, うちの),
a person's (息子の, お母さんの and 母の alike, 上司の) or a name's (田中さんの, ミキちゃんの)."""


def _owners(text: str, subject: str, shared: set[str]) -> set[str]:
    """Who ``text`` says ``subject`` (a shared phrase) belongs to, at each place it holds it
    with an owner just before it or before the run of shared words it begins ("my dentist
    appointment": the speaker's; "my son's dentist appointment": "son"; 息子の歯医者の予約:
    息子; the nearest one, 私の妹の誕生日会: 妹), as "i" for the speaker; empty when no place
    names an owner ("the dentist")."""
    folded = fold(text)
    found: set[str] = set()
    if not subject.isascii():  # (the nearest 「Xの」; 田中さんの… shares 「さんの送別会」)
        heads = [0] + [i + 1 for i, char in enumerate(subject) if char == "の"]
        at = folded.find(subject)
        while at >= 0:
            owners = (_JA_OWNER.search(folded, 0, at + head) for head in reversed(heads))
            owner = next((o for o in owners if o is not None), None)
            if owner is not None:
                found.add("i" if owner["me"] else owner["kin"] or owner["name"])
            at = folded.find(subject, at + 1)
        return found
    tokens = list(_TOKEN.finditer(folded))
    for k, token in enumerate(tokens):
        if token.group().removesuffix("'s") != subject:
            continue
        while k > 0 and _joined(folded, tokens[k - 1], tokens[k]):
            prev = tokens[k - 1].group()
            if prev.endswith("'s") or prev not in shared:  # (the run ends at an owner)
                break
            k -= 1
        if k == 0 or not _joined(folded, tokens[k - 1], tokens[k]):
            continue
        word = tokens[k - 1].group()
        if word in _EN_OWNERS:
            found.add(_EN_OWNERS[word])
        elif word.endswith("'s") and word[:-2] not in _NOT_OWNERS:
            found.add(word[:-2])
    return found


def _joined(text: str, first: re.Match[str], second: re.Match[str]) -> bool:
    """Whether two words of ``text`` stand next to each other, only spaces between."""
    return text[first.end() : second.start()].isspace()


def _other_owner(one: str, other: str) -> bool:
    """Whether two owners are surely two people: the speaker, "you" and each name differ
    from any other owner, "he" from "she"; a pronoun may be a name's ("his party" may be
    "Dad's party")."""
    if one == other:
        return False
    if one in _PRONOUNS and other in _PRONOUNS:
        return {one, other} == {"he", "she"}
    return not (one in _PRONOUNS and other not in ("i", "you")) and not (
        other in _PRONOUNS and one not in ("i", "you")
    )


def _about_the_same(words: str, near: str, names: set[str]) -> bool:
    """Whether ``near`` (the words around a change word) shares a subject with ``words`` (an
    older result's) that is the same thing: none of the shared phrases is an owner's on both
    sides and the owners differ ("My son's dentist appointment got moved" does not change
    "My dentist appointment is on March 12th", 父の誕生日会 not 母の誕生日会). A side with no
    owner may mean either ("The dentist appointment got moved"); a plain modifier is no owner
    (the changed value often sits there: "switched Mochi to salmon kibble")."""
    subjects = _subjects(words, near, names)
    shared = {s for s in subjects if s.isascii()}
    for subject in subjects:
        old, new = _owners(words[:600], subject, shared), _owners(near, subject, shared)
        if old and new and all(_other_owner(a, b) for a in old for b in new):
            return False
    return bool(subjects)


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
