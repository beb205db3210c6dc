"""Shared fixtures: real SQLite files in tmp_path, a fixed clock, the real default embedder."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from memengine import FixedClock, Memory
from memengine.embed.usem3 import USEM3Embedder

from .helpers import HashEmbedder

SHARED_EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


@pytest.fixture(scope="session")
def usem3() -> USEM3Embedder:
    """The real offline default embedder, loaded once per test session."""
    return USEM3Embedder()


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from an empty directory (no stray memengine.toml) without MEMENGINE_* variables."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("MEMENGINE_"):
            monkeypatch.delenv(name)


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses connections: bound, never listening, and held for
    the test (a port found free and let go could be another test worker's server's by the
    time it is connected to)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def mem(db_path: Path, clock: FixedClock) -> Iterator[Memory]:
    """A memory file with the fast bag-of-words embedder (store mechanics)."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        yield m


@pytest.fixture
def real_mem(db_path: Path, clock: FixedClock, usem3: USEM3Embedder) -> Iterator[Memory]:
    """A memory file with the real default embedder (retrieval behaviour)."""
    with Memory.open(db_path, embedder=usem3, clock=clock) as m:
        yield m
