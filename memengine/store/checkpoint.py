"""WAL checkpoints on a background thread, off the write path.

In WAL mode SQLite appends every committed page to the ``-wal`` file and,
by default, the connection whose commit takes the log past 1,000 pages
copies the log back into the database file inside that commit (an
*automatic checkpoint*). For a memory engine that means an unlucky
``add_exchange`` waits for a few megabytes of copying, and a bulk import
spends a fifth of its time there (measured by ``memengine bench``).

memengine's connections turn automatic checkpoints off and cap the log
file left behind after a reset at ``THRESHOLD_BYTES``
(``journal_size_limit``), so a log file larger than that holds that much
that was not yet copied back. After such a commit a :class:`Checkpointer`
runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own thread and connection. A
passive checkpoint never blocks readers or the writer; it copies what no
reader still needs, and the next one finishes the job. Should the log still grow past ``inline_bytes`` (a reader holding
an old snapshot for a long time, or a checkpoint that cannot keep up), the
committing thread checkpoints itself, as SQLite would have done, so the log
stays bounded. Closing the store checkpoints what is left.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["THRESHOLD_BYTES", "Checkpointer"]

THRESHOLD_BYTES = 4 * 2**20
"""Log size that wakes the checkpointer (SQLite's own default is 1,000 pages, ~4 MB)."""


class Checkpointer:
    """Copies the WAL back into the database on a background thread when it grows."""

    def __init__(
        self,
        path: Path,
        connect: Callable[[], Any],
        errors: type[Exception],
        *,
        threshold_bytes: int = THRESHOLD_BYTES,
        inline_bytes: int = 64 * 2**20,
    ) -> None:
        self.wal = Path(f"{path}-wal")
        self.threshold_bytes = threshold_bytes
        self.inline_bytes = inline_bytes
        self._connect = connect
        self._errors = errors
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.runs = 0
        """Checkpoints run so far (background and inline), for tests and diagnostics."""

    def after_commit(self, cur: Any) -> None:
        """Called by the writer after each commit: wake the thread, or checkpoint here if far behind."""
        size = self._wal_size()
        if size <= self.threshold_bytes:
            return
        if size >= self.inline_bytes:
            self._checkpoint(cur)
            return
        with self._lock:
            if self._stop:
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="memengine-checkpoint", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def close(self) -> None:
        """Stop the thread (the last connection to close checkpoints what is left)."""
        with self._lock:
            self._stop = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()

    def _wal_size(self) -> int:
        try:
            return os.stat(self.wal).st_size
        except FileNotFoundError:
            return 0

    def _checkpoint(self, cur: Any) -> None:
        try:
            cur.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except self._errors:  # busy (another checkpoint is running): the next commit retries
            return
        self.runs += 1

    def _run(self) -> None:
        cur = self._connect().cursor()
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stop:
                return
            self._checkpoint(cur)
