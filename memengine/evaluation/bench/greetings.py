"""Turns with a recent conversation in the latency section: a remark that nothing stored
repeats, and a companion chat's daily greeting, with stored copies of "Morning!" and
varied replies, so that the fast path's repeats check
(:class:`.retrieve.recent.RepeatCheck`) has old copies to leave out, and searches deeper
when they fill a list.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from ...embed.base import normalize
from ...memory import Memory
from ...models import EpisodeKind, Message, NewEpisode
from ...retrieve.recent import conversation, repeat_check
from ...retrieve.retriever import context_query
from ...text import dense_query
from ..synth import EPOCH, random_unit_vectors
from .harness import Bench, Built, Query, TableEmbedder, ms, summarize

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

REMARK = (
    Message(role="user", text="I fixed the bike chain today, finally"),
    Message(role="partner", text="Nice work! Was it hard?"),
)
"""A remark that no stored exchange repeats: the conversation before each timed question
in a chat without copies (the repeats check runs and finds nothing)."""

LEAD = "About that: "
"""What each timed question opens with, so that it carries on from the conversation before
it (:func:`.retrieve.recent.carries_on`): the context query holds the recent exchange, and
the repeats check has its copies to leave out (a question on another topic is searched
alone first, and joined to the conversation second, whose search meets the copies too)."""

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


def greeting_vector(bench: Bench, salt: int = 0x6E7) -> npt.NDArray[np.float32]:
    """The vector of this morning's greeting exchange (a function of the run's seed; another
    ``salt``, another exchange's)."""
    rng = np.random.default_rng([bench.cfg.seed, salt])
    out: npt.NDArray[np.float32] = random_unit_vectors(rng, 1, bench.cfg.dimension)[0]
    return out


def teach(bench: Bench, mem: Memory, emb: TableEmbedder, qs: Sequence[Query]) -> None:
    """Teach the table embedder what the turns with :data:`RECENT` and :data:`REMARK`
    embed: the recent exchange as the repeats check compares it (its own vector: the
    greeting's, or the remark's), and each context query (the recent exchange and the
    question: halfway between their vectors)."""
    rc = mem.config.retrieval
    for recent, vector in ((RECENT, greeting_vector(bench)), (REMARK, greeting_vector(bench, 1))):
        for q in qs:
            text = LEAD + q.text
            said = conversation(recent, text)
            check = repeat_check(said, text, rc.recent_conversation_turns, rc.max_query_chars)
            for s in check.said.values():
                emb.add(s.text, vector)
            query = context_query(text, said, rc.recent_conversation_turns, rc.max_query_chars)
            vec = normalize(q.vector + vector)[0]
            emb.add(query, vec)
            emb.add(dense_query(query), vec)


def retrievals(
    bench: Bench, mem: Memory, qs: Sequence[Query], label: str, recent: Sequence[Message]
) -> tuple[dict[str, list[float]], list[int]]:
    """``Memory.retrieve`` of each query (after :data:`LEAD`) with its extra queries and ``recent``: the
    measured queries' stage timings and wall time (as ``retrieve``), whether each searched
    deeper (``deeper``: 1 or 0) and to the deepest round (``deepest``), and how many old
    exchanges each left out."""
    out: dict[str, list[float]] = {}
    left_out: list[int] = []
    for _, q, measured in bench.loop(qs, label):
        more = [t for t, _ in q.extras]
        t0 = time.perf_counter()
        r = mem.retrieve(LEAD + q.text, agent=q.agent, extra_queries=more, recent=list(recent))
        wall = ms(t0)
        if measured:
            for key, v in r.timings_ms.items():
                out.setdefault(key, []).append(v)
            out.setdefault("retrieve", []).append(wall)
            out.setdefault("deeper", []).append(float("search_deeper" in r.timings_ms))
            out.setdefault("deepest", []).append(float("search_deepest" in r.timings_ms))
            left_out.append(len(r.repeats))
    return out, left_out


def run(
    bench: Bench,
    mem: Memory,
    emb: TableEmbedder,
    qs: Sequence[Query],
    built: Built,
) -> tuple[dict[str, Any], int]:
    """Time the turns with :data:`RECENT` (over its stored copies: ``greeting_share`` of
    the one-agent file ``built``) and with :data:`REMARK`, each with ``skip_repeats`` on
    and off (a second memory on the file); the copies are deleted again. Also returns how
    many texts the second memory's opening embedded (no query's: not a lookup miss)."""
    agent, size = built.corpus.agent_prefix, built.corpus.size
    row: dict[str, Any] = {}
    # a daily greeting: its stored copies, and this morning's in every turn's recent;
    # then a remark nothing repeats; then both again with skip_repeats off
    copies = store_copies(bench, mem, emb, agent, round(bench.cfg.greeting_share * size))
    teach(bench, mem, emb, qs)
    label = f"latency {size:,}: fast path, 4 queries"
    fpg, left_out = retrievals(bench, mem, qs, f"{label}, a greeting in recent", RECENT)
    fpr, _ = retrievals(bench, mem, qs, f"{label}, a remark in recent", REMARK)
    off = mem.config.model_copy(
        update={"retrieval": mem.config.retrieval.model_copy(update={"skip_repeats": False})}
    )
    before = emb.misses
    with Memory.open(built.path, embedder=emb, clock=bench.clock, config=off) as plain:
        plain.warm(agent)
        opening = emb.misses - before  # the open and the warm embed words no query asks
        fpgo, _ = retrievals(bench, plain, qs, f"{label}, the greeting, skip_repeats off", RECENT)
        fpro, _ = retrievals(bench, plain, qs, f"{label}, the remark, skip_repeats off", REMARK)
    deeper, deepest = fpg.pop("deeper", []), fpg.pop("deepest", [])
    for key, found in (
        ("greeting", fpg),
        ("greeting_off", fpgo),
        ("remark", fpr),
        ("remark_off", fpro),
    ):
        found.pop("deeper", None)
        found.pop("deepest", None)
        row[f"fast_path_{key}_ms"] = {k: summarize(v) for k, v in found.items()}
    row["greeting_copies"] = len(copies)
    row["greeting_left_out"] = summarize([float(n) for n in left_out])
    row["greeting_searched_deeper"] = [int(sum(deeper)), len(deeper)]
    row["greeting_searched_deepest"] = [int(sum(deepest)), len(deepest)]
    mem.delete(copies, all_agents=True)  # the file as it was (its own copies)
    return row, opening
