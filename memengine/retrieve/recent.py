"""The stored turns the recent conversation already holds word for word.

A companion stores each exchange after its turn, so by the next message the
last few turns are both in the store and in the ``recent`` messages the
reply model sees. Found again by the search (the context query is made of
them), they would fill the MemoryPack with what the prompt already shows,
and make every message look answered by memory. :func:`held_in_recent`
names them so the retrieval can leave them out.

Only the agent's newest turns are compared (:func:`lookback`), and an
exchange counts as held only when its user turn and its reply are
consecutive messages of ``recent`` (or its reply is the first message,
whose user turn was cut off): an old "Yes" elsewhere in the memory is not
mistaken for the "Yes" just said.

Older turns can repeat the conversation too: a daily "Morning!" has many
stored copies, and a context query that holds this morning's greeting finds
them first (both searches agree on them, they are packed as ``high``) and
pushes the asked fact out. They say nothing the prompt does not show, so an
older exchange whose user turn repeats a user message the context query reads
(:func:`repeat_key`: case, spacing and the punctuation around it aside), whose
reply holds no word of the new message and which is close in meaning to that
recent exchange (:class:`RepeatCheck`) is left out of the search as well; an
"ok" whose reply held a fact is not. One that repeats the new message itself
stays a result: small talk does not count it as the memory it restates (it
is ``low``, :func:`.retriever.mark_own_copies`), and a question keeps it as
it is (its reply may hold the answer).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..lazy_re import lazy_compile
from ..models import Episode, EpisodeKind, Message
from ..text import ENGLISH_STOPWORDS, could_hold, is_blank, scrub, within
from .signals import asks_something, content_terms

__all__ = [
    "KEYED_CHARS",
    "LOOKBACK_SLACK",
    "MAX_COMPARED",
    "RECENT_MESSAGE_CHARS",
    "REPEAT_MIN_COSINE",
    "HeldTurns",
    "RepeatCheck",
    "Said",
    "carries_on",
    "conversation",
    "held_in_recent",
    "key_of",
    "lookback",
    "normalised",
    "read_parts",
    "repeat_check",
    "repeat_key",
]

LOOKBACK_SLACK = 10
"""How many more of the newest turns than ``recent`` has messages are compared (turns
of other kinds or stored by another thread in between)."""

MAX_COMPARED = 100
"""The most recent messages compared (a caller may pass a whole day's conversation; the
turns it holds further back are old enough to be memory again)."""


def lookback(recent: Sequence[Message]) -> int:
    """How many of the agent's newest turns to compare with ``recent``."""
    return min(len(recent), MAX_COMPARED) + LOOKBACK_SLACK


def normalised(text: str | None) -> str:
    """``text`` as compared: scrubbed as stored, its white space collapsed."""
    return " ".join(scrub(text or "").split())


class HeldTurns(NamedTuple):
    """The stored turns the recent messages repeat (:meth:`.Retriever.held`)."""

    ids: frozenset[int]
    """Left out of every search of the turn, whatever their sensitivity."""
    shown: tuple[int, ...]
    """Those the retrieval names (``Retrieval.in_recent``): none more sensitive than its
    ``max_sensitivity``, which leaves such an episode out of all it reports (the caller
    repeated the secret, but a retrieval's JSON may go where the secret must not)."""


def held_in_recent(episodes: Sequence[Episode], recent: Sequence[Message]) -> set[int]:
    """The ids of ``episodes`` whose every word the ``recent`` messages already hold.

    - an exchange with both sides: its user turn and its reply are consecutive
      messages of ``recent`` (user, then partner), or its reply is the first
      message (its user turn cut off before ``recent`` begins);
    - an exchange with one side: that side is a message of its role;
    - a ``message`` episode: its content is a message of ``recent``.

    Other kinds are never held: ``recent`` is a conversation. Only the last
    :data:`MAX_COMPARED` messages are compared; a system message between two
    turns does not part them.
    """
    shown = [(m.role, normalised(m.text)) for m in recent[-MAX_COMPARED:]]
    texts = {text for _, text in shown if text}
    said = [(role, text) for role, text in shown if text and role != "system"]
    if not texts:
        return set()
    pairs = {
        (said[i][1], said[i + 1][1])
        for i in range(len(said) - 1)
        if said[i][0] == "user" and said[i + 1][0] == "partner"
    }
    user_said = {text for role, text in said if role == "user"}
    partner_said = {text for role, text in said if role == "partner"}
    first = said[0] if said else None
    held: set[int] = set()
    for ep in episodes:
        if ep.kind is EpisodeKind.message:
            if normalised(ep.content) in texts:
                held.add(ep.id)
            continue
        if ep.kind is not EpisodeKind.exchange:
            continue
        user, reply = normalised(ep.user_text), normalised(ep.reply_text)
        if user and reply:
            if (user, reply) in pairs or first == ("partner", reply):
                held.add(ep.id)
        elif (user and user in user_said) or (reply and reply in partner_said):
            held.add(ep.id)
    return held


def conversation(recent: Sequence[Message], text: str) -> list[Message]:
    """What was said before ``text``: ``recent`` without its system messages (instructions,
    not conversation) and without a last user message that is ``text`` itself (a history
    that already holds the message being answered). The query, the language guess and
    the LLM prompts read this; the stored turns ``recent`` repeats are found in all of it."""
    said = [m for m in recent if m.role != "system" and not is_blank(m.text)]
    if said and said[-1].role == "user" and said[-1].text.strip() == text.strip():
        said.pop()
    return said


KEYED_CHARS = 2000
"""The longest user message of ``recent`` whose older copies are looked for (the context
query reads 300 characters of each: a pasted page two messages back is no greeting)."""

_EDGE = ("P", "S", "Z", "C")
"""The Unicode categories stripped from the ends of a key: punctuation, symbols (emoji),
separators and controls."""


_SIGNS = frozenset("+-−±$€£¥₩#.")
"""Marks kept before a number at the start of a key ("-1" is not "+1" nor "1", ".5" not
"5")."""
_UNITS = frozenset("%‰°$€£¥₩")
"""Marks kept after a number at the end of a key ("20%" is not "20", "5€" not "5")."""


_LONGEST_KEY = 250_000
"""A text longer than this has no repeat key (a stored text is at most 200,000
characters a field: nothing stored can repeat it)."""


def _at_an_edge(char: str) -> bool:
    """Whether ``char`` goes from a message's ends (:data:`_EDGE`), or draws an emoji there:
    a variation selector (☀️ is ☀ and U+FE0F, a mark) or a keycap's enclosing mark."""
    return (
        unicodedata.category(char)[0] in _EDGE or "\ufe00" <= char <= "\ufe0f" or char == "\u20e3"
    )


def repeat_key(text: str | None) -> str:
    """``text`` as repeats are compared: scrubbed, NFKC, case-folded, white space removed,
    and the punctuation, symbols (emoji) and separators at either end stripped, but a sign
    or currency before a number and a percent after one ("Morning!!", " morning" and
    "Morning :)" are one key; "It's -5" and "It's 5" two, "-1" and "1" two; an emoji-only
    message has none)."""
    if text is not None and len(text) > _LONGEST_KEY:  # longer than any stored text: no
        return ""  # copy of it can be stored, and folding megabytes would cost seconds
    folded = "".join(unicodedata.normalize("NFKC", scrub(text or "")).casefold().split())
    start, end = 0, len(folded)
    while start < end and _at_an_edge(folded[start]):
        if folded[start] in _SIGNS and start + 1 < end and folded[start + 1].isdigit():
            break
        start += 1
    while end > start and _at_an_edge(folded[end - 1]):
        if folded[end - 1] in _UNITS and end - 2 >= start and folded[end - 2].isdigit():
            break
        end -= 1
    return folded[start:end]


def key_of(text: str, longest: int) -> str | None:
    """:func:`repeat_key` of ``text``, or None when ``text`` is far longer than ``longest``
    (its key could not be that short: a 50 KB paste is not keyed to be compared with
    "Morning!")."""
    bound = 4 * longest + 64
    if len(text) > bound and len("".join(text.split())) > bound:
        return None
    return repeat_key(text)


REPEAT_MIN_COSINE = 0.5
"""How close in meaning (cosine of the stored exchange's vector to the recent exchange's)
an older exchange with a repeated user turn must be to be left out. Measured with the
offline embedder: greetings, small talk and their varied replies .61–.85; an "ok", "Yes"
or うん whose reply holds a fact ("Booked! Your plane to Osaka takes off May 3") .00–.17."""


RECENT_MESSAGE_CHARS = 300
"""How much of each recent message the context query reads (the companion-chat sets' longest
is 111 characters): enough to say what "it" is, not a pasted page."""


def read_parts(
    text: str, said: Sequence[Message], turns: int, max_chars: int
) -> list[tuple[Message, str]]:
    """The messages of ``said`` (its last ``turns`` exchanges, i.e. 2×turns messages) that a
    context query of ``text`` in ``max_chars`` reads, oldest first, each with the part read:
    the new text comes whole (longer, its beginning and end: :func:`~memengine.text.within`),
    the messages fill the room left, the newest first, each cut to its first
    :data:`RECENT_MESSAGE_CHARS`."""
    new = "" if is_blank(text) else within(text.strip(), max_chars)  # (a zero-width space: nothing)
    room = max_chars - len(new)
    out: list[tuple[Message, str]] = []
    for m in reversed(list(said[-2 * turns :]) if turns > 0 else []):
        if room < 2:
            break
        part = m.text.strip()[: min(room - 1, RECENT_MESSAGE_CHARS)]  # and its new line
        out.append((m, part))
        room -= len(part) + 1
    return out[::-1]


@dataclass(frozen=True)
class Said:
    """A user message the context query reads, as :class:`RepeatCheck` compares it: with the
    reply after it, as read (``text``), whether it asks something, and the content words of
    both."""

    text: str
    asks: bool
    terms: frozenset[str]


@dataclass(frozen=True)
class RepeatCheck:
    """What the context query repeats: ``said`` maps the key (:func:`repeat_key`) of each
    user message it reads, but the new message, to that message (:class:`Said`); ``terms``
    are the new message's content words. An older exchange repeats when its user turn has
    one of the keys, its reply holds none of ``terms`` (("ok", "Noted: your dentist
    appointment is on June 4") is kept for "When is my dentist appointment?"), for a
    question's key its reply says nothing the recent exchange does not (an answer the recent
    reply lacked is what a follow-up asks for), and its vector is close to the recent
    exchange's (:data:`REPEAT_MIN_COSINE`: the fast path's test; a reply that answers in
    other words, "plane" for "flight", is far)."""

    said: dict[str, Said] = field(default_factory=dict)
    terms: frozenset[str] = frozenset()

    def keyed(self, exchanges: Mapping[int, tuple[str, str]]) -> dict[int, str]:
        """The ids among ``exchanges`` (id → (user turn, reply), as
        :meth:`.Store.exchange_texts` reads them) that repeat by their words, with the key
        (the vector test is left to the caller)."""
        if not self.said:
            return {}
        longest = max(len(k) for k in self.said)
        out: dict[int, str] = {}
        keys: dict[str, str | None] = {}  # a daily greeting's copies share their user turn
        for i, (user, reply) in exchanges.items():
            key = keys[user] if user in keys else keys.setdefault(user, key_of(user, longest))
            said = self.said.get(key) if key is not None else None
            if said is None or key is None:
                continue
            read = reply[:KEYED_CHARS]
            if not said.asks and not could_hold(read, self.terms):  # (a greeting's reply)
                out[i] = key
                continue
            words = set(content_terms(read))
            if words & self.terms or (said.asks and not words <= said.terms):
                continue
            out[i] = key
        return out


def repeat_check(said: Sequence[Message], text: str, turns: int, max_chars: int) -> RepeatCheck:
    """The :class:`RepeatCheck` of what a context query of ``text`` in ``max_chars`` reads of
    the last ``turns`` exchanges of ``said`` (the conversation before it, as
    :func:`conversation` gives it; :func:`read_parts`): its user messages of at most
    :data:`KEYED_CHARS`, but the new message."""
    own = repeat_key(text)
    parts = read_parts(text, said, turns, max_chars)
    out: dict[str, Said] = {}
    for i, (m, part) in enumerate(parts):
        if m.role != "user" or len(m.text) > KEYED_CHARS:
            continue
        key = repeat_key(m.text)
        if not key or key == own:
            continue
        after = parts[i + 1] if i + 1 < len(parts) else None
        reply = after[1] if after is not None and after[0].role == "partner" else ""
        both = f"{part}\n{reply}" if reply else part
        out[key] = Said(both, asks_something(m.text), frozenset(content_terms(both)))
    terms = frozenset(content_terms(within(text, max_chars))) if out else frozenset()
    return RepeatCheck(out, terms)


_JA_OPENS = "(?:(?<![\u3041-\u3096])|(?<=[はがをにでもとへやよかてっんえあ]))"
"""Where a Japanese demonstrative may begin: not inside a word of hiragana (the この of
きなこの, どこの, ねこの is a word's end and the particle の; nor うその, おそれ, おこのみ), but
after a particle or a filler (じゃこのあとは, 僕もあれ見たい, うんそれ, えそれ何時から？)."""

_POINTS_BACK = lazy_compile(
    r"\b(?:it|its|he|him|his|she|her|hers|they|them|their|one|ones|that|this|these|those"
    r"|there|then|same|too|else)\b"
    r"|\bother\b(?! (?:day|night|week|weekend|morning|evening|afternoon)\b)"
    r"|^[^\w\u3040-\u30ff\u3400-\u9fff]*(?:and|but|so|or|plus|what about|how about)\b"
    rf"|{_JA_OPENS}(?:それ|これ|その|そこ|あそこ|あの(?![さねー〜~、,])"
    r"|あれ(?![?？!！れ、,]|っ(?!て))|この(?!前|間|あいだ|まえ))"
    r"|彼(?![氏女])|あいつ|そいつ|こいつ|さっき|例の|も[?？]?$"
    r"|^[^\w\u3040-\u30ff\u3400-\u9fff]*(?:で|じゃあ|じゃ|なら)[、,]?"
    r"|^\S{1,8}は[?？]+$",
    re.ASCII,
)
"""What leans on what was just said: a pronoun, "the same", "too", それ, あの; a follow-up's
opening ("And the date?", "What about the venue?", じゃあ場所は？) or a bare topic asked
(日付は？). Not "also", あと, ちなみに: in chat they bring up another thing ("omg also did i
tell u when jen's wedding is", あとお姉ちゃんの結婚式ってどこだったっけ); a follow-up that
opens with them shares a word with what was said, or has none of its own. Nor set phrases
that name no earlier thing: "the other day", この前, この間 (the other day), the fillers あのさ
and あれ？ (あれって leans), 彼氏 and 彼女 (a boyfriend, a girlfriend); an object pronoun in a
sentence after one of the message's own words is :func:`_leans_back`'s to judge."""

_SENTENCE_MARKS = lazy_compile(r"[.?!。？！\n]+")
_WORD = lazy_compile(r"[a-z][a-z']*", re.ASCII)
_PRONOUN = lazy_compile(r"it|its|him|her|them|one|ones")
"""The pronouns that can stand for a noun the message named in a sentence before ("What's
our vet called? I need to call them"); "he", "she", "they" and "that" lean back wherever
they stand ("fine I reckon. he'll ask about my time off", "Was that expensive?")."""


def _leans_back(text: str) -> bool:
    """Whether ``text`` (NFKC, lower case) leans on what was said (:data:`_POINTS_BACK`). An
    object pronoun (:data:`_PRONOUN`) does not when an earlier sentence of the message holds
    a word of meaning it can stand for ("What's our vet called? I need to call them"; "How
    much did I pay for it?" leans on the talk of a bike)."""
    marks = [m.end() for m in _SENTENCE_MARKS.finditer(text)]
    meant = next((w.start() for w in _WORD.finditer(text) if _means(w.group())), len(text))
    for m in _POINTS_BACK.finditer(text):
        if _PRONOUN.fullmatch(m.group()):
            opens = (
                marks[bisect_right(marks, m.start()) - 1] if marks and marks[0] <= m.start() else 0
            )
            if meant < opens:
                continue  # (it stands for a word of an earlier sentence)
        return True
    return False


def _means(word: str) -> bool:
    """Whether ``word`` may be a thing a pronoun stands for: no stopword, nor a word chat
    opens with (:data:`_OPENERS`: "Wait. When is it?", "Nice! When does it start?")."""
    return word not in ENGLISH_STOPWORDS and word not in _OPENERS


_OPENERS = frozenset(
    """wait well fine anyway right sorry thanks thank yes yeah yep nope sure cool great nice
    ah aw wow please pls typo haha hm hmm awesome perfect""".split()
)
"""Words a message opens with that name no thing a pronoun after them could stand for."""


def carries_on(text: str, read: Sequence[str]) -> bool:
    """Whether the new ``text`` (as a context query reads it) carries on from the parts of
    the messages the query reads before it (``read``: :func:`read_parts`, not whole
    pastes): it has no content word of its own ("And then?", いつだっけ), leans on them (a
    pronoun, それ), or shares a content word with them (not a number of one or two digits).
    A message that does none of these ("Who was the vet again?" after talk of a birthday
    dinner) starts another topic: the messages before it are no context for its search."""
    if not read:
        return True
    own = {t for t in content_terms(text) if t.isascii() or len(t) >= 2}
    if not own or _leans_back(unicodedata.normalize("NFKC", text).lower()):
        return True
    before = {t for part in read for t in content_terms(part)}
    return any(_topical(t) for t in own & before)


def _topical(term: str) -> bool:
    """Whether a content term two texts share says they are on one topic: not a number of one
    or two digits (週2 and 12月2日 share a "2", "2 bedrooms" and "dec 2" too)."""
    return not (term.isdigit() and len(term) <= 2)
