"""Test helpers: a deterministic bag-of-words embedder for store mechanics tests, and
episodes of random words for them.

It is a real embedder (text in, unit vectors out), only a simple one: tests
about storage, filters and consistency use it to run fast; tests about
retrieval quality use the real default embedder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from memengine import Memory, NewEpisode
from memengine.embed.base import Vectors, normalize
from memengine.quote import Strategy
from memengine.retrieve.answer_type import AnswerType
from memengine.store.episodes import ensure_agents
from memengine.text import query_terms

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
WORDS = "cat dog tea coffee rain snow piano guitar train bus deadline report garden".split()


def word_episodes(n: int, agent: str, seed: int = 0) -> list[NewEpisode]:
    """``n`` episodes of three random words each, an hour apart from :data:`T0`, with
    kinds (fact, message) and sensitivities (0–3) in turn."""
    rng = np.random.default_rng(seed)
    return [
        NewEpisode(
            kind="message" if i % 3 else "fact",
            content=f"{' '.join(rng.choice(WORDS, 3))} {i}",
            agent=agent,
            occurred_at=T0 + timedelta(hours=i),
            sensitivity=int(i % 4),
        )
        for i in range(n)
    ]


class HashEmbedder:
    """Hashes the query terms of a text into a fixed number of buckets."""

    def __init__(self, dimension: int = 64, name: str = "hash") -> None:
        self.dimension = dimension
        self.id = f"{name}:{dimension}"
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in query_terms(text) or [text]:
                h = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dimension] += 1.0
            out[row, 0] += 0.01
        return normalize(out)


def same_hits(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> None:
    """Assert two KNN answers agree: the same distances in order, the same ids except for
    the order of ties and ties at the cut."""
    assert len(a) == len(b)
    assert np.allclose([d for _, d in a], [d for _, d in b], atol=1e-5)
    if a:
        cut = a[-1][1] - 1e-5
        assert {i for i, d in a if d < cut} == {i for i, d in b if d < cut}


def freed_without_a_collection(make: Callable[[], Any], use: Callable[[Any], object]) -> bool:
    """Whether a memory that ``make`` opens and ``use`` uses is freed once closed and
    dropped by reference counting alone (no reference cycle holds it, nor its model,
    until Python's full garbage collection)."""
    import gc
    import weakref

    gc.disable()
    try:
        mem = make()
        use(mem)
        held = weakref.ref(mem)
        mem.close()
        del mem
        return held() is None
    finally:
        gc.enable()


def stored_by_an_earlier_version(mem: Memory, name: str, text: str) -> None:
    """Write an agent and one fact of it as an earlier memengine did, its name unchecked
    (not in NFC, or one now refused)."""
    with mem.store.connections.write() as cur:
        ensure_agents(cur, [name], T0)
    mem.store.add(
        [NewEpisode(agent=name, kind="fact", content=text, occurred_at=T0)],
        [text],
        mem.embedder.embed([text]),
    )


@contextlib.contextmanager
def another_process_reading(db: Path) -> Iterator[None]:
    """Another process holding a read transaction on the file at ``db`` for the body (its
    snapshot keeps the write-ahead log from being emptied)."""
    hold = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('BEGIN'); "
        "c.execute('SELECT count(*) FROM episodes').fetchone(); print('reading', flush=True); "
        "sys.stdin.read()"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", hold, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline() == b"reading\n"
        yield
    finally:
        reader.communicate(b"", timeout=30)


def until(condition: Callable[[], object], timeout: float = 60.0) -> None:
    """Wait until ``condition()`` holds, looking every few milliseconds (a loaded machine may
    take long to get there: a sleep of a set length is no promise); an AssertionError past
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:g} s in vain"
        time.sleep(0.005)


def deferred_closes_ended(timeout: float = 60.0) -> None:
    """Wait for the closes run on a thread of their own to end: a close asked on an asyncio
    loop's thread, inside a call, runs on a "memengine-close" thread once that call ends,
    which may still be closing when ``asyncio.run`` returns."""
    for thread in threading.enumerate():
        if thread.name == "memengine-close":
            thread.join(timeout)
            assert not thread.is_alive(), f"a deferred close still runs after {timeout:g} s"


def shown_quote(
    text: str,
    strategy: Strategy,
    terms: Sequence[str],
    max_chars: int,
    asked: frozenset[AnswerType] = frozenset(),
    *,
    fill: bool = False,
) -> str:
    """``text`` as a pack block shows its quote: :func:`memengine.quote.quote_text`, its line
    breaks as " / " (what a reader of the pack sees)."""
    from memengine.quote import as_shown, quote_text

    return as_shown(quote_text(text, strategy, terms, max_chars, asked, fill))


def in_forked_child(run: Callable[[], object]) -> object:
    """What ``run()`` returns (anything JSON holds) in a child forked from this process, or
    "TypeName: message" for what it raised; the child leaves at once (no atexit, no pytest)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            outcome: object = run()
        except BaseException as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        os.write(write, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        reported = fh.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and reported, f"the child died: {status}"
    return json.loads(reported)


def brace_scan_reads(monkeypatch: Any) -> list[int]:
    """Wrap the JSON parser's brace scan (``monkeypatch``: pytest's, for this test) so that
    each call records how many characters it read; return the list it fills."""
    from memengine.llm import jsonparse

    read: list[int] = []
    scan = jsonparse._balanced_end

    def counted(t: str, start: int, stop: int, *budget: Any) -> tuple[int | None, int]:
        end, upto = scan(t, start, stop, *budget)
        read.append(upto - start)
        return end, upto

    monkeypatch.setattr(jsonparse, "_balanced_end", counted)
    return read


def stale_certificate_file(monkeypatch: Any, folder: Path, kind: str) -> None:
    """``SSL_CERT_FILE`` naming a file that is ``kind`` ("missing", or "not PEM"), with no
    other TLS or proxy variable set: a stale setting left in a user's shell."""
    for name in ("SSL_CERT_DIR", "SSLKEYLOGFILE", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    bundle = folder / "ca.pem"
    if kind == "not PEM":
        bundle.write_text("not a certificate")
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))


def last_line_printed(
    script: str, *args: str, cwd: str | None = None, path: str | None = None
) -> str:
    """The last line the Python ``script`` printed, run with ``args`` in a new process with
    this checkout (or the folder ``path``) on its path and no other environment (in
    ``cwd``, else the checkout's folder); it must end well (else the assertion shows its
    stderr)."""
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=root if cwd is None else cwd,
        env={"PYTHONPATH": root if path is None else path},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]
