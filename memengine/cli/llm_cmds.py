"""LLM commands: ``llm-check`` (is the endpoint usable, and fast enough?) and ``bench-llm``."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError, InvalidInput, LLMError
from ._app import ConfigOpt, JsonOpt, app, console, err_console, guarded, print_json, settings

__all__ = ["bench_llm", "llm_check"]

_SAMPLE_RECENT = (
    ("user", "Juno keeps pawing at her mouth this evening."),
    ("partner", "Poor girl. Is she still managing her food?"),
)
_SAMPLE_TEXT = "Yes, she's eating fine. Remind me when her appointment is?"
_SAMPLE_EPISODES = (
    ("Juno's dental cleaning is booked at Northside Vets on 2 June.", "Noted, 2 June."),
    ("We tried the new ramen place Menya Kaze downtown.", "Was the broth good?"),
    ("The Fenwick tender went in today, fingers crossed.", "Well done!"),
)


def _check_phase(call: Any, deadline_s: float) -> tuple[bool, str, Any]:
    """Run one phase call and describe the outcome (ok, detail, value)."""
    start = time.monotonic()
    try:
        value = call()
    except LLMError as exc:
        return False, str(exc), None
    except ValidationError as exc:
        from ..retrieve.expand import describe_validation_error

        return False, f"the reply has the wrong shape: {describe_validation_error(exc)}", None
    seconds = time.monotonic() - start
    late = seconds > deadline_s
    verdict = (
        f"{seconds:.2f} s — over the {deadline_s:.2f} s deadline: turns will fall back"
        if late
        else f"{seconds:.2f} s (deadline {deadline_s:.2f} s)"
    )
    return not late, verdict, value


@app.command("llm-check")
@guarded
def llm_check(config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Check the [llm] endpoint: ping each model, then run one expansion and one rerank."""
    from ..llm.client import ChatClient
    from ..models import Episode, EpisodeKind, Message
    from ..retrieve.expand import Expander
    from ..retrieve.fastpath import Candidate
    from ..retrieve.rerank import Reranker

    cfg = settings(config)
    llm = cfg.llm
    if not (llm.base_url or llm.api_key):
        raise ConfigError(
            "no LLM endpoint configured: set base_url in the llm section of memengine.toml "
            "(e.g. http://localhost:11434/v1 for Ollama) or MEMENGINE_LLM_BASE_URL; see docs/llm.md"
        )
    checks: dict[str, tuple[bool, str]] = {}
    now = datetime.now(timezone.utc)
    recent = [Message(role=r, text=t) for r, t in _SAMPLE_RECENT]
    with ChatClient(
        base_url=llm.base_url,
        api_key=llm.api_key,
        timeout_s=llm.request_timeout_s,
        max_retries=llm.max_retries,
        backoff_base_s=llm.backoff_base_s,
    ) as client:
        for model in dict.fromkeys([llm.expansion_model, llm.rerank_model]):
            try:
                seconds = client.ping(model)
                checks[f"ping {model}"] = (True, f"{client.base_url}: {seconds * 1000:.0f} ms")
            except LLMError as exc:
                checks[f"ping {model}"] = (False, str(exc))
        if all(ok for ok, _ in checks.values()):
            expander = Expander(client, llm, max_queries=cfg.retrieval.max_expanded_queries)
            ok, detail, expansion = _check_phase(
                lambda: expander.expand(
                    _SAMPLE_TEXT, recent, now, "en", deadline_s=llm.request_timeout_s
                ),
                llm.expansion_deadline_s,
            )
            if expansion is not None:
                detail += f"; queries {expansion.expanded_queries}"
            checks["expansion"] = (ok, detail)
            episodes = [
                Episode(
                    id=i + 1,
                    agent="check",
                    kind=EpisodeKind.exchange,
                    user_text=user,
                    reply_text=reply,
                    occurred_at=now - timedelta(days=10 * (i + 1)),
                    created_at=now,
                )
                for i, (user, reply) in enumerate(_SAMPLE_EPISODES)
            ]
            reranker = Reranker(client, llm)
            ok, detail, outcome = _check_phase(
                lambda: reranker.rerank(
                    _SAMPLE_TEXT,
                    recent,
                    [Candidate(ep, 1.0 / (i + 1)) for i, ep in enumerate(episodes)],
                    now,
                    "en",
                    deadline_s=llm.request_timeout_s,
                ),
                llm.rerank_deadline_s,
            )
            if outcome is not None:
                chosen = [f"{c.id} ({c.relevance})" for c in outcome.chosen]
                detail += f"; chose {chosen or 'nothing'} (expected 1 first)"
                if outcome.unknown_ids:
                    detail += f"; invented ids {outcome.unknown_ids}"
            checks["rerank"] = (ok, detail)
            # what the phases just used (known only once they ran)
            checks["response_format"] = (True, client.response_format_in_use)
    if as_json:
        print_json({"checks": checks})
    else:
        for name, (ok, detail) in checks.items():
            mark = "[green]ok[/green]" if ok else "[red]FAIL[/red]"
            console.print(
                f"{mark}  {name}: {escape(str(detail))}",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )
    if not all(ok for ok, _ in checks.values()):
        raise typer.Exit(1)


def _delays(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError as exc:
        raise InvalidInput(f"--delays takes milliseconds separated by commas: {text!r}") from exc
    if not values or any(v < 0 for v in values):
        raise InvalidInput(f"--delays takes non-negative milliseconds: {text!r}")
    return values


def print_latency_table(rows: list[dict[str, Any]]) -> None:
    """Render :func:`~memengine.evaluation.llm_latency.run_llm_latency` results as a rich table."""
    deadline = (rows[0]["turn_deadline_ms"] if rows else 2000) / 1000
    table = Table(
        title=f"Full-turn latency against a scripted LLM (turn deadline {deadline:.1f} s)"
    )
    headers = ("LLM delay", "turns", "p50 ms", "p95 ms", "max ms", f"≤ {deadline:.1f} s")
    for col in (*headers, "expansion ok", "rerank ok", "fallbacks e/r/w"):
        table.add_column(col, justify="right")
    for r in rows:
        fb = r["fallbacks"]
        fast = r["delay_ms"] is None
        table.add_row(
            "no LLM" if fast else f"{r['delay_ms']} ms",
            str(r["turns"]),
            f"{r['p50_ms']:.0f}",
            f"{r['p95_ms']:.0f}",
            f"{r['max_ms']:.0f}",
            f"{r['within_deadline']:.0%}",
            "—" if fast else f"{r['expansion_on_time']:.0%}",
            "—" if fast else f"{r['rerank_on_time']:.0%}",
            "—" if fast else f"{fb['expansion']}/{fb['rerank']}/{fb['window']}",
        )
    console.print(table)
    console.print(
        "[dim]fallbacks: turns where expansion / rerank missed its deadline (fast path used) "
        "and where a time window found nothing[/dim]",
        markup=True,
    )


@app.command("bench-llm")
@guarded
def bench_llm(
    delays: Annotated[
        str, typer.Option("--delays", help="Per-call LLM delays in ms, comma separated.")
    ] = "300,600,1200",
    turns: Annotated[int, typer.Option("--turns", min=1, help="Turns per delay.")] = 20,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the numbers to this JSON file.")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Measure full LLM turns against a scripted LLM answering after each delay (offline)."""
    from ..evaluation.llm_latency import run_llm_latency
    from ._app import progress_bar

    cfg = settings(config)
    values = _delays(delays)
    with progress_bar("LLM latency turns") as bar:
        rows = run_llm_latency(values, turns, bar, llm=cfg.llm)
    print_latency_table(rows)
    if json_path is not None:
        json_path.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        err_console.print(f"wrote {json_path}")
