"""The words that open another matter, and the question a message asks after telling of one.

A companion's user often tells of their day and then asks, in the same message
("…散々な一日だったよ〜(´;ω;｀)ところでさ、wifiのパスワードなんだっけ", "Ugh, what a day, my boss
yelled at me. Anyway, what's the wifi password again?"). Searched as one query, the telling's
words drown the question's: its memory falls out of the top five and the day's memories are
labelled as if asked for. :func:`asked_after` finds the part after the last words that open
another matter (:data:`NEW_TOPIC`), when it does not lean on what was told before it, so the
turn searches it as it would the same question sent as a message of its own after the telling
(:func:`.retriever.turn_queries`).
"""

from __future__ import annotations

import re

from ..lazy_re import lazy_compile
from ..text import CJK_CHARACTER, is_blank, sentences
from .recent import carries_on
from .signals import asks_memory

__all__ = ["NEW_TOPIC", "SENTENCE_LEAD", "asked_after"]

SENTENCE_LEAD = r"^\W*(?:(?:but|and|so|then|well|oh|also|plus|now|sadly|apparently|actually)\W+)*"
"""The words a sentence may begin with before its subject ("But then my sister…")."""
NEW_TOPIC = lazy_compile(
    r"\bby the way\b|\bbtw\b|\bon (?:an)?other note\b|\bon a (?:different|side|separate) note\b|"
    + SENTENCE_LEAD
    + r"(?:anyways?|speaking of|unrelated|side note)\b"
    r"|そういえば|ところで|話(?:は|が)?変わ(?:る|り)|それはそうと|関係ない(?:けど|んだけど)",
    re.IGNORECASE,
)
"""Words that open another matter in a sentence ("…, by the way", "Anyway, …", そういえば,
ところで; an "anyway" further on is "all the same": "I quit it anyway")."""


def asked_after(text: str) -> str | None:
    """The part of ``text`` from the last words that open another matter (:data:`NEW_TOPIC`)
    when it asks (:func:`.signals.asks_memory`; not the looser :func:`.signals.may_ask`:
    そういえば…閉店するらしくて…空っぽなんだよね tells) and, those words aside, does not carry on
    from what comes before it (:func:`.recent.carries_on`: "Anyway, what did he say?" leans
    on it); else None. The part begins at the words (ところでさ、…: a Japanese telling may run
    on to them without a full stop), or, where that is no such question ("What's my wifi
    password, by the way?"), at the sentence that holds them. A last question after a
    telling without such words is no part of its own: as often it asks about the telling
    ("…what to put on my head for the big day. What did I go with in the end?")."""
    text = text.strip()
    last: tuple[int, re.Match[str]] | None = None
    at = 0
    for sentence in sentences(text):
        at = text.find(sentence, at)
        for found in NEW_TOPIC.finditer(sentence):
            last = (at, found)
        at += len(sentence)
    if last is None:
        return None
    opens, found = last
    words, after = opens + found.start(), opens + found.end()
    tried = [words]
    if opens < words and not CJK_CHARACTER.search(found.group()):
        tried.append(opens)
    for start in tried:
        head, part = text[:start], text[start:]
        if is_blank(head) or not asks_memory(part):
            continue
        rest = f"{text[start:words]} {text[after:]}"  # (the words say: another matter)
        if not carries_on(rest, [head]):
            return part.strip()
    return None
