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
pushes the asked fact out. Their user side says nothing the prompt does not
show, so an exchange whose user turn repeats a user message of ``recent``
(:func:`user_repeats`, compared by :func:`repeat_key`: case, spacing and
punctuation aside) is left out of the search as well. One that repeats the
new message itself stays a result: small talk does not count it as the
memory it restates (it is ``low``, :func:`.retriever.mark_own_copies`), and
a question keeps it as it is (its reply may hold the answer).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from ..models import Episode, EpisodeKind, Message
from ..text import is_blank, scrub

__all__ = [
    "LOOKBACK_SLACK",
    "MAX_COMPARED",
    "conversation",
    "held_in_recent",
    "lookback",
    "normalised",
    "repeat_key",
    "repeat_keys",
    "user_repeats",
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


def repeat_key(text: str | None) -> str:
    """``text`` as repeats are compared: scrubbed, NFKC, case-folded, letters and digits
    only ("Morning!!" and "morning" are one key; an emoji-only message has none)."""
    folded = unicodedata.normalize("NFKC", scrub(text or "")).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


def repeat_keys(said: Sequence[Message]) -> frozenset[str]:
    """The keys of what the user said in ``said`` (the conversation before the new text, as
    :func:`conversation` gives it: its last :data:`MAX_COMPARED` messages): older exchanges
    repeating them are left out."""
    keys = {repeat_key(m.text) for m in said[-MAX_COMPARED:] if m.role == "user"}
    keys.discard("")
    return frozenset(keys)


def user_repeats(user_turns: Mapping[int, str], keys: AbstractSet[str]) -> set[int]:
    """The ids of the exchanges whose user turn (``user_turns``: id → text, as
    :meth:`.Store.user_turns` reads them) has one of ``keys`` (:func:`repeat_key`)."""
    if not keys:
        return set()
    return {i for i, text in user_turns.items() if repeat_key(text) in keys}
