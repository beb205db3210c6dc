"""The command stopped by real signals: a second Ctrl-C as an interrupted import closes the
file, and ``SIGTERM`` (a service manager's stop) told as Ctrl-C is, by each command that
says what it kept.

Each command runs in a process of its own, which sends the signal to itself at the moment
under test (inside a connection's close, a sleep's transaction, a compaction): the signal
and its handlers are real, the moment is not left to a timer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memengine import Memory

from .helpers import HashEmbedder
from .test_cli_shell import _env
from .test_review52_cli import SOURCE, _interruptible

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from memengine.cli import main
    from memengine.memory import Memory

    point, argv = sys.argv[1], sys.argv[2:]

    def stop(signum):  # (its handler raises at the next instruction: here)
        os.kill(os.getpid(), signum)

    if point == "close":  # Ctrl-C once a batch is in, again inside a connection's close
        from sqlalchemy.engine.default import DefaultDialect

        closing, add, close, do_close = [], Memory.add_imported, Memory.close, DefaultDialect.do_close

        def add_imported(self, read, *, progress, **kwargs):
            def interrupted(done, total):
                progress(done, total)
                if done:
                    stop(signal.SIGINT)
            return add(self, read, progress=interrupted, **kwargs)

        def closed(self, **kwargs):
            closing.append(self)
            return close(self, **kwargs)

        def again(self, connection):
            if len(closing) == 1:
                closing.append(None)
                stop(signal.SIGINT)
            return do_close(self, connection)

        Memory.add_imported, Memory.close, DefaultDialect.do_close = add_imported, closed, again
    elif point == "sleep":  # SIGTERM in the sleep's transaction, its rows written
        from memengine.store import lifecycle as store_lc

        insert = store_lc.insert_sleep

        def insert_sleep(cur, row):
            stop(signal.SIGTERM)
            return insert(cur, row)

        store_lc.insert_sleep = insert_sleep
    elif point == "slept":  # SIGTERM after the sleep's commit, before its report is back
        from memengine.lifecycle import sleep as sleeping

        class Log:
            def info(self, *args):
                stop(signal.SIGTERM)

        sleeping.log = Log()
    elif point == "train":  # SIGTERM in the scorer's training, the sleep committed
        def train_after_sleep(self, report):
            stop(signal.SIGTERM)

        Memory.train_after_sleep = train_after_sleep
    elif point == "stats":  # SIGTERM in a command with nothing of its own to tell
        def stats(self, *args, **kwargs):
            stop(signal.SIGTERM)

        Memory.stats = stats
    elif point == "compact":  # SIGTERM in the compaction, the delete saved
        from memengine.store import maintenance

        def compact(connections):
            stop(signal.SIGTERM)

        maintenance.compact = compact
    sys.argv = ["memengine", *argv]
    main()
    """
)


def _stopped(tmp_path: Path, point: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``memengine ARGS`` run in a process of its own that signals itself at ``point``."""
    return subprocess.run(
        [sys.executable, "-c", CHILD, point, *args],
        env=_env(PYTHONPATH=SOURCE),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_interruptible,
    )


def test_a_second_ctrl_c_as_an_interrupted_import_closes_the_file_quietly(
    tmp_path: Path,
) -> None:
    """A second Ctrl-C inside the close that ends an interrupted import printed SQLAlchemy's
    "Exception closing connection" with its traceback, then a stray "interrupted" after
    the import's own line. The close is finished, and the import's line is all it says."""
    src, db = tmp_path / "notes.jsonl", tmp_path / "t.db"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(1, 601):
            fact = {"id": i, "kind": "fact", "content": f"note {i} on the garden", "agent": "a"}
            fh.write(json.dumps({**fact, "occurred_at": "2025-01-01T00:00:00Z"}) + "\n")
    done = _stopped(tmp_path, "close", "import", str(src), "--db", str(db))
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "Exception closing" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), done.stderr
    assert "(of the file's 600) and are kept" in lines[0]
    assert not db.with_name("t.db-wal").exists()  # closed: the log checkpointed and removed
    with Memory.open(db, embedder=HashEmbedder(), allow_embedder_change=True) as mem:
        assert mem.check().ok
        assert f"{mem.store.count():,} episodes were imported" in lines[0]


def test_a_ctrl_c_as_a_finished_command_closes_the_file_is_dropped(tmp_path: Path) -> None:
    """Held off while the file closes, a Ctrl-C that came then is dropped: the command's work
    is done, and it prints its result (a sleep's, a delete's), not a bare "interrupted"; the
    episode added kept, the log checkpointed."""
    db = tmp_path / "t.db"
    done = _stopped(tmp_path, "close", "add", "a fact", "--kind", "fact", "--db", str(db))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.strip() == "added episode 1"
    assert not db.with_name("t.db-wal").exists()
    with Memory.open(db, embedder=HashEmbedder(), allow_embedder_change=True) as mem:
        assert mem.store.count() == 1 and mem.check().ok


def test_sigterm_after_a_sleep_committed_says_no_roll_back(tmp_path: Path) -> None:
    """SIGTERM after the sleep's commit (its report being made) said "the sleep was rolled
    back, nothing changed" of a sleep that was kept: only one in the transaction says so."""
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("a fact to decay", kind="fact")
    done = _stopped(tmp_path, "slept", "sleep", "--tasks", "3", "--db", str(db))
    assert done.returncode == 143 and done.stderr == "terminated\n", done.stderr
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        assert mem.get(1).strength < 1.0  # the sleep is kept


@pytest.mark.parametrize(
    ("point", "said", "kept"),
    [
        ("sleep", "interrupted: the sleep was rolled back, nothing changed", False),
        ("train", "interrupted while retraining the scorer: the sleep above is kept", True),
    ],
)
def test_sigterm_during_a_sleep_says_what_ctrl_c_says(
    tmp_path: Path, point: str, said: str, kept: bool
) -> None:
    """SIGTERM during a sleep exited 143 with nothing on stderr, where Ctrl-C says whether
    the sleep was rolled back or kept; the transaction it cut is rolled back as Ctrl-C's is."""
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("a fact to decay", kind="fact")
    done = _stopped(tmp_path, point, "sleep", "--tasks", "3", "--db", str(db))
    assert done.returncode == 143, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    assert ("sleep default: 3 tasks (explicit)" in done.stdout) is kept
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        assert (mem.get(1).strength < 1.0) is kept  # decayed only by the committed sleep


@pytest.mark.parametrize("command", ["forget", "delete"])
def test_sigterm_while_compacting_says_the_delete_is_saved(tmp_path: Path, command: str) -> None:
    """SIGTERM in the compaction after a forget or a scrubbing delete exited 143 silently,
    where Ctrl-C says the delete was saved and `optimize --scrub` finishes the scrub."""
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("alice's garden", kind="fact", agent="alice")
        bobs = [mem.add(f"bob's code {i}", kind="fact", agent="bob") for i in range(3)]
    args = (
        ["agent", "forget", "bob", "--yes"]
        if command == "forget"
        else ["delete", *map(str, bobs), "--scrub"]
    )
    done = _stopped(tmp_path, "compact", *args, "--db", str(db))
    assert done.returncode == 143, done.stderr
    assert "interrupted after the delete was saved" in done.stderr
    assert "memengine optimize --scrub" in done.stderr and "terminated" not in done.stderr
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        assert (not mem.has_agent("bob")) if command == "forget" else not mem.store.existing(bobs)
        assert mem.has_agent("alice")


def test_sigterm_elsewhere_is_said_as_ctrl_c_is(tmp_path: Path) -> None:
    """A command with nothing of its own to tell printed "interrupted" on Ctrl-C and nothing
    on SIGTERM: it says "terminated", so a service's log shows why it ended."""
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("a fact", kind="fact")
    done = _stopped(tmp_path, "stats", "stats", "--db", str(db))
    assert done.returncode == 143 and done.stderr == "terminated\n"
