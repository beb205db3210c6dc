"""A companion chat's daily greeting in the latency section: stored copies of "Morning!"
with varied replies, and turns that have this morning's greeting in ``recent``, so that
the fast path's repeats check (:class:`.retrieve.recent.RepeatCheck`) has old copies to
leave out, and searches deeper when they fill a list.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from ...embed.base import normalize
from ...memory import Memory
from ...models import EpisodeKind, Message, NewEpisode
from ...retrieve.recent import conversation, repeat_check
from ...retrieve.retriever import context_query
from ...text import dense_query
from ..synth import EPOCH, random_unit_vectors
from .harness import Bench, Query, TableEmbedder, ms

GREETING = "Morning!"
REPLIES = (
    "Good morning! Hope you slept well.",
    "Morning! Ready for the day?",
    "Good morning to you too! Coffee first?",
    "Morning! How did you sleep?",
    "Hey, good morning! Any plans today?",
    "Good morning! It's nice to hear from you.",
    "Morning! What's on your mind today?",
)
"""The replies the stored greetings got (each copy one of these and a day number, so no
two stored texts are the same)."""

RECENT = (
    Message(role="user", text=GREETING),
    Message(role="partner", text="Good morning! Hope you slept well."),
)
"""This morning's greeting: the conversation before each timed question."""

COPY_NOISE = 0.6
"""How far each stored greeting's vector is from the greeting's (cosine about 0.86: the
offline embedder puts greetings and their varied replies .61–.85 apart)."""


def store_copies(bench: Bench, mem: Memory, emb: TableEmbedder, agent: str, n: int) -> list[int]:
    """Store ``n`` greetings in ``agent``, spread evenly over its history; return their ids
    (the table embedder learns each one's vector: the greeting's, with noise)."""
    if n < 1:
        return []
    rng = np.random.default_rng([bench.cfg.seed, 0x60D])
    greeting = greeting_vector(bench)
    vecs = normalize(greeting + COPY_NOISE * random_unit_vectors(rng, n, bench.cfg.dimension))
    span = timedelta(days=300)
    episodes = []
    for i in range(n):
        reply = f"{REPLIES[i % len(REPLIES)]} (day {i + 1})"
        emb.add(f"{GREETING}\n{reply}", vecs[i])
        episodes.append(
            NewEpisode(
                agent=agent,
                kind=EpisodeKind.exchange,
                user_text=GREETING,
                reply_text=reply,
                occurred_at=EPOCH - timedelta(hours=2) - span * (1 - i / n),
            )
        )
    return mem.add_many(episodes, batch_size=2000, optimize=False)


def greeting_vector(bench: Bench) -> npt.NDArray[np.float32]:
    """The vector of this morning's greeting exchange (a function of the run's seed)."""
    rng = np.random.default_rng([bench.cfg.seed, 0x6E7])
    out: npt.NDArray[np.float32] = random_unit_vectors(rng, 1, bench.cfg.dimension)[0]
    return out


def teach(bench: Bench, mem: Memory, emb: TableEmbedder, qs: Sequence[Query]) -> None:
    """Teach the table embedder what the turns with :data:`RECENT` embed: the recent
    exchange as the repeats check compares it (the greeting's vector), and each context
    query (the greeting and the question: halfway between their vectors)."""
    rc = mem.config.retrieval
    greeting = greeting_vector(bench)
    for q in qs:
        said = conversation(RECENT, q.text)
        check = repeat_check(said, q.text, rc.recent_conversation_turns, rc.max_query_chars)
        for s in check.said.values():
            emb.add(s.text, greeting)
        query = context_query(q.text, said, rc.recent_conversation_turns, rc.max_query_chars)
        vec = normalize(q.vector + greeting)[0]
        emb.add(query, vec)
        emb.add(dense_query(query), vec)


def retrievals(
    bench: Bench, mem: Memory, qs: Sequence[Query], label: str
) -> tuple[dict[str, list[float]], list[int]]:
    """``Memory.retrieve`` of each query with its extra queries and :data:`RECENT`: the
    measured queries' stage timings and wall time (as ``retrieve``), and how many old
    greetings each left out."""
    out: dict[str, list[float]] = {}
    left_out: list[int] = []
    for _, q, measured in bench.loop(qs, label):
        more = [t for t, _ in q.extras]
        t0 = time.perf_counter()
        r = mem.retrieve(q.text, agent=q.agent, extra_queries=more, recent=list(RECENT))
        wall = ms(t0)
        if measured:
            for key, v in r.timings_ms.items():
                out.setdefault(key, []).append(v)
            out.setdefault("retrieve", []).append(wall)
            out.setdefault("deeper", []).append(float("search_deeper" in r.timings_ms))
            left_out.append(len(r.repeats))
    return out, left_out
