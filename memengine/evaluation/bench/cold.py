"""Section ``cold``: wall time of fresh ``memengine`` processes on an existing file."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .harness import (
    Bench,
)


def run(bench: Bench) -> dict[str, Any]:
    """Median wall time of fresh processes: import, ``stats`` and ``retrieve``."""
    cfg = bench.cfg
    built = bench.single(min(cfg.sizes))
    q = (bench.queries(built, 1, language="en") or bench.queries(built, 1))[0]
    root = Path(__file__).resolve().parents[3]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMENGINE_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    py = sys.executable
    db = str(built.path)
    agent = built.corpus.agent_prefix
    commands = {
        "import": [py, "-c", "import memengine.cli"],
        "stats": [py, "-m", "memengine", "stats", "--db", db, "--json"],
        "retrieve": [
            py,
            "-m",
            "memengine",
            "retrieve",
            q.text,
            "--db",
            db,
            "--agent",
            agent,
            "--json",
        ],
    }
    out: dict[str, Any] = {
        "episodes": built.corpus.size,
        "runs": cfg.cold_runs,
        "query": q.text,
    }
    for name, cmd in commands.items():
        walls: list[float] = []
        error = ""
        for i in range(cfg.cold_runs):
            bench.progress(f"cold start: {name}", i, cfg.cold_runs)
            t0 = time.perf_counter()
            proc = subprocess.run(
                cmd,
                env=env,
                cwd=bench.dir,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            walls.append(time.perf_counter() - t0)
            if proc.returncode != 0:
                lines = (proc.stderr or proc.stdout).strip().splitlines()
                error = lines[-1] if lines else f"exit code {proc.returncode}"
                break  # the time of a process that failed measures nothing
        out[name] = {
            "median_s": None if error else round(statistics.median(walls), 3),
            "runs_s": [] if error else [round(w, 3) for w in walls],
            "error": error,
        }
    return out


def failures(section: dict[str, Any]) -> list[str]:
    """The commands of a :func:`run` result whose process failed."""
    return [name for name, row in section.items() if isinstance(row, dict) and row.get("error")]
