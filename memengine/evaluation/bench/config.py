"""What one ``memengine bench`` run measures (:class:`BenchConfig`) and returns
(:class:`BenchResult`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...embed.usem3 import USEM3Embedder
from ...errors import InvalidInput

SECTIONS = ("ingest", "latency", "vector", "bm25", "agents", "cold", "concurrency")

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``; ``total`` 0 means a phase without a count."""

EMBEDDER_ID = USEM3Embedder.id
BATCH = 2000
BIG_BATCH = 10_000
K = 10


@dataclass(frozen=True)
class BenchConfig:
    """Sizes and switches of one benchmark run (defaults finish in minutes on 2 cores)."""

    sizes: tuple[int, ...] = (10_000, 100_000)
    agents: int = 1000
    per_agent: int = 1000
    small_per_agent: int = 20
    queries: int = 50
    warmup: int = 5
    cache_searches: int = 5_000
    ingest_size: int = 20_000
    usem3_texts: int = 300
    usem3_single: int = 15
    commits: int = 200
    size_commits: int = 30
    greeting_share: float = 0.03
    bm25_size: int = 100_000
    cold_runs: int = 3
    concurrency_s: float = 5.0
    loop_budget_s: float = 30.0
    dimension: int = 512
    seed: int = 7
    sections: tuple[str, ...] = SECTIONS
    workdir: Path | None = None
    keep: bool = False
    huge: bool = False
    quick: bool = False

    @classmethod
    def make(
        cls,
        *,
        quick: bool = False,
        huge: bool = False,
        only: Sequence[str] | None = None,
        agents: int | None = None,
        per_agent: int | None = None,
        workdir: Path | None = None,
        keep: bool = False,
        seed: int = 7,
    ) -> BenchConfig:
        """The default (or ``quick``) configuration with the CLI's overrides applied."""
        cfg = cls(seed=seed, workdir=workdir, keep=keep, huge=huge, quick=quick)
        if quick:
            cfg = replace(
                cfg,
                sizes=(300, 600),
                agents=10,
                per_agent=100,
                small_per_agent=5,
                queries=8,
                warmup=1,
                cache_searches=60,
                ingest_size=1_000,
                usem3_texts=12,
                usem3_single=3,
                commits=20,
                size_commits=5,
                bm25_size=600,
                cold_runs=1,
                concurrency_s=0.5,
                loop_budget_s=1.0,
            )
        if huge:
            cfg = replace(cfg, sizes=(*cfg.sizes, 1_000_000))
        if agents is not None:
            cfg = replace(cfg, agents=agents)
        if per_agent is not None:
            cfg = replace(cfg, per_agent=per_agent)
        if workdir is not None and workdir.exists() and not workdir.is_dir():
            raise InvalidInput(f"--dir {workdir} is a file, not a folder")
        if only is not None and not only:
            raise InvalidInput(f"--only names no section; expected some of: {', '.join(SECTIONS)}")
        if seed < 0:
            raise InvalidInput(f"--seed is a whole number of at least 0, not {seed}")
        if only:
            unknown = sorted(set(only) - set(SECTIONS))
            if unknown:
                raise InvalidInput(
                    f"unknown section(s) {', '.join(unknown)}; expected: {', '.join(SECTIONS)}"
                )
            cfg = replace(cfg, sections=tuple(s for s in SECTIONS if s in only))
        if cfg.agents < 1 or cfg.per_agent < 1:
            raise InvalidInput("--agents and --per-agent must be at least 1")
        return cfg


@dataclass
class BenchResult:
    """Everything one run measured: the machine, the configuration and one dict per section."""

    machine: dict[str, Any]
    config: dict[str, Any]
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    truncated: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every number."""
        return {
            "machine": self.machine,
            "config": self.config,
            "sections": self.sections,
            "truncated": self.truncated,
            "wall_s": self.wall_s,
        }

    @staticmethod
    def is_result(data: Any) -> bool:
        """Whether ``data`` (read from a JSON file) is an earlier :meth:`to_json`."""
        return isinstance(data, dict) and "machine" in data and "sections" in data
