"""A later sentence that says what a quote holds changed: in a long utterance the pack trims
(:mod:`.quote`), the first sentence after the one quoted, within :data:`TURN_REACH` characters,
that says it changed or ended ("Sushi is my favourite food. … That all changed after my
surgery.", 状況が変わっちゃって) and is about it, not about another person or matter ("My sister
quit her job, by the way", そういえば妹が仕事を辞めたんだって): :func:`turn_after`. Alone, the
quote would tell the old fact as the fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .lazy_re import lazy_compile
from .retrieve.change_words import CHANGE, change_sentences
from .retrieve.owners import JA_OTHERS
from .retrieve.topic_change import NEW_TOPIC as _NEW_TOPIC
from .retrieve.topic_change import SENTENCE_LEAD as _LEAD
from .text import CJK_CHARACTER, ENGLISH_STOPWORDS

__all__ = ["CLAUSE_CHARS", "TURN_REACH", "turn_after"]

TURN_REACH = 1000
"""How many characters past the best sentence a quote looks for one that says it changed: a
change is told soon after what it changes ("Sushi is my favourite food. … That all changed
after my surgery."), and a long paste's further lines are other matters (each read costs)."""


def turn_after(sentences: Sequence[str], best: int, about: Callable[[str], bool]) -> int | None:
    """The sentence after the ``best`` one, within :data:`TURN_REACH` characters of it, that
    says what was said changed or ended (:func:`_turns`) and is most about it: the first
    that is ``about`` it (the pack's test: it shares a word with the best or the query,
    :func:`.quote._shares`); else, of those not about another matter (:func:`_elsewhere`: not
    "My sister quit her job, by the way", そういえば妹が仕事を辞めたんだって), the first that
    points back (:func:`_points_back`: "That all changed after my surgery", "I quit it
    completely", 三月にやめたんだ), then the first whose change is the speaker's
    (:func:`_speaker`: "My wife made me quit last spring", "I switched gyms in February",
    二月にジムを変えたんだ), then the first ("The café switched to oat milk"); else None.
    Another matter's change, kept, would take the place of the change of what was said."""
    read = 0
    back: int | None = None  # (the first that points back: "I quit it completely")
    mine: int | None = None  # (the first of the speaker's: "I switched gyms in February")
    other: int | None = None  # (a change about no one said: "The café switched to oat milk")
    for i in range(best + 1, len(sentences)):
        if read > TURN_REACH:
            break
        read += len(sentences[i]) + 1
        if not _turns(sentences[i]):
            continue
        if about(sentences[i]):
            return i
        if _elsewhere(sentences[i]):
            continue
        if back is None and _points_back(sentences[i]):
            back = i
        elif mine is None and _speaker(sentences[i]):
            mine = i
        other = i if other is None else other
    return next((i for i in (back, mine, other) if i is not None), None)


_PERSON = (
    r"(?:mum|mom|mother|dad|father|parent|sister|brother|son|daughter|kid|child|children|wife"
    r"|husband|partner|boyfriend|girlfriend|friend|boss|grandma|grandmother|grandpa"
    r"|grandfather|aunt|uncle|cousin|colleague|coworker|flatmate|roommate|neighbou?r)s?"
)
"""An English word of a person other than the speaker ("sister", "flatmates")."""
_OTHERS = lazy_compile(
    _LEAD + rf"(?:[^,]{{1,40}},\s*)?(?:(?:my|our|his|her|their)\s+(?:\w+\s+)?{_PERSON}\b"
    rf"|{_PERSON}\b(?!['’])|(?:he|she|his|her)\b)",
    re.IGNORECASE,
)
"""A sentence whose subject is another person: a person word, "my"/"our" one, "he", "she"
("My sister quit her job", "Last week, my dad sold it", "She stopped going"); a name is
read apart (:data:`_NAMED`)."""
_NAMED = lazy_compile(
    _LEAD + r"(?P<name>[A-Z][a-z]+)\s+(?:(?:has|had|just|finally|also|recently|\w+ly)\s+)?"
)
"""A word written with a capital that begins a sentence, and the adverb or "has" after it:
a name, where a change word follows ("Ken quit his job", "Amira finally switched to…"; not
"We switched", "Everything changed": :data:`_NO_NAMES`)."""
_NO_NAMES = ENGLISH_STOPWORDS | {"everything", "things", "life"}
"""The words with a capital at a sentence's start that are no name."""
_MINE = lazy_compile(r"\b(?:i|me|my)\b", re.IGNORECASE)
"""The speaker in a sentence: one that holds them and begins with a word with a capital
before a change word tells of a thing, no name ("Work moved my shift", "Rent went up on my
flat")."""
_JA_WHO = lazy_compile(
    r"(?:(?P<me>私|僕|俺|あたし|自分)"
    rf"|(?<![\u4e00-\u9fff々\u30a1-\u30ff])お?(?:{JA_OTHERS})(?:さん|ちゃん|くん)?"
    r"|[\u4e00-\u9fff々\u30a1-\u30ffー]{1,6}(?<![者屋店院局所館社])(?:さん|ちゃん|くん|君))"
    "(?:が|は|も|って)"
)
"""The first person a Japanese sentence tells about: the speaker (私は, 僕も), or another
(妹が, お母さんは, 田中さんって; not パン屋さんが, a shop)."""
_BACK = lazy_compile(
    r"\b(?:that|it|this|everything|things|all|life|which)\b"
    "|(?:それ|これ|あれ|全部|すべて|全て|何もかも|生活|暮らし|毎日)(?:が|は|も|って|を|、)",
    re.IGNORECASE,
)
"""Words by which a sentence points back to what was just said ("That all changed",
"Everything", "my life", "I quit it", それが, 全部, 生活が), not to another thing it names."""
_MONTHS_DAYS = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Christmas|Easter)"
)
"""The words with a capital inside a sentence that are a time, no person ("in March I quit")."""
_WHO = lazy_compile(
    r"(?i:\b(?:(?P<me>i|i['’](?:m|ve|d|ll)|me|myself|we|we['’](?:re|ve|d)|us)"
    rf"|he|she|they|him|his|her|their|{_PERSON})\b)"
    rf"|(?<=\w )(?!{_MONTHS_DAYS}\b)[A-Z][a-z]+\b"
)
"""An English word of a person: the speaker ("I", "me", "we"), or another ("she", "my wife",
a name written with a capital after a sentence's first word: "I heard Ken quit"; not
"March")."""
_JA_REASON = lazy_compile(
    "(?:(?<=[るたいだすうくぐむぶつぬ])から|(?<=[るたいだなす])ので|けど|けれど|(?<=[いたるだ])し、)"
)
"""The end of a Japanese reason or concession clause (心配するから, 好きなので, 高いけど, 忙しいし、;
not 東京から, a place), whose person is not the one of the clause after it (妻が心配するから
三月にやめた: the speaker quit)."""
_JA_OBJECT = lazy_compile("[\u4e00-\u9fff々\u30a1-\u30ffー]を")
"""A Japanese noun as an object (ジムを): a change of another thing than what was said."""
_JA_SUBJECT = lazy_compile(
    r"(?<![\u4e00-\u9fff々\u30a1-\u30ffー])"
    r"(?P<noun>[\u4e00-\u9fff々\u30a1-\u30ffー]+)(?:が|は|、)"
)
"""A Japanese noun a sentence tells about (パン屋が, 値段は, 駅前のパン屋、)."""
_JA_TIME = lazy_compile(
    r"^(?:今|前|昔|以前|最近|当時|最初|結局|本当|実|実際|正直|特に)$|[月日年週時頃後]$"
)
"""The Japanese nouns before は or 、 that are a time or an adverb, no subject (前は, 三月、,
正直、)."""


def _ja_clause(sentence: str) -> str:
    """The clause of a Japanese ``sentence`` that holds its change: what follows the last
    reason or concession clause (:data:`_JA_REASON`) before its first change word (でも妻が心配
    するから三月にやめたんだ → 三月にやめたんだ); the whole, where none is before it."""
    change = CHANGE.search(sentence)
    end = change.start() if change is not None else len(sentence)
    cut = max((m.end() for m in _JA_REASON.finditer(sentence, 0, end)), default=0)
    return sentence[cut:]


def _no_subject(clause: str) -> bool:
    """Whether a Japanese ``clause`` names no subject but a time (三月にやめたんだ, 前はよく
    行ってた: the speaker's; not 駅前のパン屋、前は高かった, 妻が…)."""
    return all(_JA_TIME.search(m["noun"]) for m in _JA_SUBJECT.finditer(clause))


def _points_back(sentence: str) -> bool:
    """Whether a change ``sentence`` points back to what was just said (:data:`_BACK`: "That
    all changed", "I quit it completely", 生活が変わっちゃって, それもやめた), or is Japanese
    with no subject nor object in its clause (三月にやめたんだ; not 二月にジムを変えたんだ,
    another thing, nor 駅前のパン屋、前は高かった)."""
    if _BACK.search(sentence) is not None:
        return True
    if not CJK_CHARACTER.search(sentence):
        return False
    clause = _ja_clause(sentence)
    return _no_subject(clause) and _JA_OBJECT.search(clause) is None


def _speaker(sentence: str) -> bool:
    """Whether the change of ``sentence`` is the speaker's: in English the last person named
    before a change word is the speaker (:data:`_WHO`: "So I quit the gym", "My wife made me
    quit", "She made me quit in March"; not "My sister quit", "I heard Ken quit", "She told me
    she quit"); in Japanese, the subject of the change's clause (:func:`_ja_clause`) is the
    speaker or none (僕もやめた, 二月にジムを変えたんだ, 彼女が嫌がるから、きっぱりやめたんだ; not
    妹がやめた). Its first 2,000 characters are read, as for its change words."""
    sentence = sentence[:2000]
    if CJK_CHARACTER.search(sentence):
        clause = _ja_clause(sentence)
        who = _JA_WHO.search(clause)
        return who["me"] is not None if who is not None else _no_subject(clause)
    return any(who["me"] is not None for who in _changers(sentence))


def _changers(sentence: str) -> list[re.Match[str]]:
    """The last person named (:data:`_WHO`) before each change word of an English
    ``sentence``, in its first 2,000 characters: the one who changed ("…so I quit" → "I",
    "I heard Ken quit" → "Ken"; "The café switched" names none)."""
    sentence = sentence[:2000]
    people = list(_WHO.finditer(sentence))
    out = []
    for change in CHANGE.finditer(sentence):
        before = [who for who in people if who.end() <= change.start()]
        if before:
            out.append(before[-1])
    return out


def _elsewhere(sentence: str) -> bool:
    """Whether a change ``sentence`` is about another matter than what was said before it:
    it opens one (:data:`_NEW_TOPIC`: "…, by the way", そういえば, ところで) or its subject is
    another person ("My sister quit her job", "Ken quit", "I heard Ken quit", 妹が仕事を辞めた,
    田中さんは転職した),
    not the speaker (:func:`_speaker`: "My wife made me quit", "Rent went up, so I moved out",
    でも妻が心配するから三月にやめたんだ)."""
    if _NEW_TOPIC.search(sentence) is not None:
        return True
    if _speaker(sentence):
        return False
    if _OTHERS.match(sentence) is not None or _changers(sentence):
        return True  # (the speaker changes in none: "I heard Ken quit", "I think my sister quit")
    named = _NAMED.match(sentence)
    if (
        named is not None
        and named["name"].lower() not in _NO_NAMES
        and _MINE.search(sentence) is None
        and CHANGE.match(sentence, named.end()) is not None
    ):
        return True
    who = _JA_WHO.search(_ja_clause(sentence))
    return who is not None and not who["me"]


_CHANGED = lazy_compile(
    r"\b(?:that|it|this|everything|things|all|life|which|so much|a lot|much)"
    r"(?:\s+all)?(?:\s+(?:has|had|have)|['’]s)?(?:\s+all)?(?:\s+(?:\w+ly|just|really))?"
    r"\s+changed\b"
    r"(?=\s*(?:$|[^\w\s])|\s+(?:\w+ly|after|when|since|in|on|at|for|with|once|again|though"
    r"|because|overnight|forever|a lot|so much|a bit|as|by|around|last|this|then|now|too)\b)",
    re.IGNORECASE,
)
"""A bare "changed" said of what was said, with no object ("That all changed after my
surgery", "Everything changed", "things have changed a lot", "my life's changed"), which says a
change a quote must not leave out though it names no new state: a later change is read only
with one ("changed … to", "changed my mind": :data:`.retrieve.change_words.CHANGE`), as a
message that says "changed" alone is as often about something else than the older memory;
within one message it is about what was just said. Not "I changed into my gym clothes", "I
got changed", "Dad changed the oil", "That changed everything"."""
_UNCHANGED = lazy_compile(
    r"\b(?:not|never|nothing|hardly|barely|scarcely|little|no one|nobody|if|whether|unless)"
    r"\b|n['’]t",
    re.IGNORECASE,
)
"""A negating or minimising word, or an "if", which in the clause before the subject of
"changed" says no change ("Not much has changed", "Hardly any of that changed", "If that
changed I would tell you", "I don't think that has changed"; the clause: :func:`_clause_before`)."""
CLAUSE_CHARS = 200
"""How many characters before a bare "changed" are read for a word that says no change: a
clause that says it is short ("I don't think that has changed"); a longer run is read only
at its end, so a long paste costs no more than a short one."""


def _clause_before(sentence: str, at: int) -> str:
    """The clause of ``sentence`` before ``at``: what follows its last comma, semicolon, colon
    or full stop, at most :data:`CLAUSE_CHARS` of it ("Not much, but that has changed" → " but
    that has "). Read back from ``at`` once, as a word search from each "not" would re-read
    the rest of a long clause from each."""
    start = max(sentence.rfind(mark, 0, at) for mark in ",;:.")
    return sentence[max(start + 1, at - CLAUSE_CHARS) : at]


def _turns(sentence: str) -> bool:
    """Whether ``sentence`` says that what was said before it changed or ended: a change word
    of a later change (:func:`.retrieve.change_words.change_sentences`: "I quit last month", "I'm
    not vegan anymore", 状況が変わっちゃって, 今はもう食べられない; not "I might switch",
    変えようかな) or a bare "changed" of what was said (:data:`_CHANGED`: "That all changed
    after my surgery"; not "Then I changed into my gym clothes", "Hardly anything has
    changed", "Not much has changed", "Has it changed?"). A quote that cuts a long utterance
    keeps it: without it, the fact before it would be told as it was."""
    if change_sentences(sentence):
        return True
    if sentence.endswith(("?", "？")):
        return False
    said = _CHANGED.search(sentence)
    if said is None:
        return False
    return _UNCHANGED.search(_clause_before(sentence, said.start())) is None
