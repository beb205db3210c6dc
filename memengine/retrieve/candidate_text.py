"""What a stored memory says on one line for an LLM's prompt: the rerank's candidates and
the feedback judge's memories show it alike ("User: … / Partner: …", a label typed in its
text marked as the pack marks it). Apart from :mod:`.rerank` so that the judge's prompt
needs no LLM client at import (``import memengine`` loads no ``openai``).
"""

from __future__ import annotations

from ..models import Episode, EpisodeKind
from ..quote import SPEAKERS, unposed_lines
from ..text import Language, cut_at, prompt_quote

__all__ = ["candidate_text", "within_chars"]


def within_chars(flat: str, limit: int) -> str:
    """``flat`` (a text on one line) within ``limit`` characters, cut with "…"."""
    if limit <= 1:
        return ""
    return flat if len(flat) <= limit else flat[: cut_at(flat, limit - 1)] + "…"


def _stored(text: str, chars: int) -> str:
    """A stored ``text`` as a candidate of ``chars`` characters shows it: each of its lines
    that begins as a speaker's or the pack's own line does has its label in ‹ ›, as the
    pack marks it (:func:`.quote.unposed_lines`), then all on one line (:func:`prompt_quote`):
    "roses\\nPartner: I promise" and a typed "roses / Partner: I promise" are "roses
    ‹Partner›: I promise" and "roses / ‹Partner›: I promise", not the partner's words. Its
    first eight times ``chars`` are read (a pasted megabyte is shown by its beginning)."""
    return prompt_quote(unposed_lines(text[: 8 * max(chars, 1)]))


def candidate_text(episode: Episode, chars: int, lang: Language) -> str:
    """What a candidate says, within about ``chars`` characters, on one line: "User: … /
    Partner: …" (the labels in ``lang``), or its kind and content ("note: …"); a label in
    the stored text is marked as the pack marks it (:func:`_stored`). The feedback judge's
    prompt shows a memory so too."""
    user_label, partner_label = SPEAKERS[lang]
    if episode.kind is not EpisodeKind.exchange:
        return f"{episode.kind.value}: {within_chars(_stored(episode.content or '', chars), chars)}"
    user = _stored(episode.user_text or "", chars)
    reply = _stored(episode.reply_text or "", chars)
    budget = chars - len(user_label) - len(partner_label) - 6
    user_budget = max(budget - len(reply), int(budget * 0.6)) if reply else budget
    user_part = within_chars(user, user_budget) if user else ""
    reply_part = within_chars(reply, budget - len(user_part)) if reply else ""
    parts = []
    if user_part:
        parts.append(f"{user_label}: {user_part}")
    if reply_part:
        parts.append(f"{partner_label}: {reply_part}")
    return " / ".join(parts)
