"""Which SQLite module memengine uses: the stdlib ``sqlite3`` when it can load extensions
and is SQLite 3.45 or newer, else ``sqlean`` (a drop-in module with a newer SQLite).

``MEMENGINE_SQLITE_DRIVER`` (``sqlite3`` or ``sqlean``) forces one. It is read here,
not in :mod:`memengine.config`, because the module is one per process, chosen
before any file or configuration is opened, and cached.
"""

from __future__ import annotations

import functools
import os
import sqlite3 as _stdlib_sqlite3
from dataclasses import dataclass
from types import ModuleType

import sqlite_vec

from ..errors import ConfigError, ExtensionError

__all__ = [
    "MIN_STDLIB_VERSION",
    "DriverInfo",
    "driver_info",
    "no_extension_loading",
    "probe_extensions",
    "sqlite_module",
]

MIN_STDLIB_VERSION = (3, 45, 0)


@dataclass(frozen=True)
class DriverInfo:
    """Which SQLite module memengine uses, and why."""

    module: str
    sqlite_version: str
    reason: str


def _stdlib_usable() -> tuple[bool, str]:
    version = _stdlib_sqlite3.sqlite_version_info
    if not hasattr(_stdlib_sqlite3.Connection, "enable_load_extension"):
        return False, "stdlib sqlite3 was built without extension loading"
    if version < MIN_STDLIB_VERSION:
        return False, f"stdlib SQLite {_stdlib_sqlite3.sqlite_version} is older than 3.45"
    return True, f"stdlib SQLite {_stdlib_sqlite3.sqlite_version} can load extensions"


def _forced() -> str | None:
    """``MEMENGINE_SQLITE_DRIVER`` (a diagnostic override, documented in the README), less
    the final ``\\r`` of a ``.env`` saved with ``\\r\\n``, as every ``MEMENGINE_*`` value."""
    forced = os.environ.get("MEMENGINE_SQLITE_DRIVER")
    return forced.removesuffix("\r") if forced is not None else None


@functools.lru_cache(maxsize=1)
def sqlite_module() -> ModuleType:
    """The DB-API module to use: stdlib ``sqlite3`` when good enough, else ``sqlean``."""
    forced = _forced()
    if forced not in (None, "", "sqlite3", "sqlean"):
        raise ConfigError(f"MEMENGINE_SQLITE_DRIVER must be 'sqlite3' or 'sqlean', not {forced!r}")
    ok, _ = _stdlib_usable()
    if forced == "sqlite3" or (ok and forced != "sqlean"):
        return _stdlib_sqlite3
    try:
        import sqlean
    except ImportError as exc:  # pragma: no cover - sqlean is a dependency
        raise ExtensionError(
            "the stdlib sqlite3 cannot load sqlite-vec and sqlean-py is not installed: "
            "pip install sqlean-py"
        ) from exc
    module: ModuleType = sqlean
    return module


def no_extension_loading() -> str:
    """Why sqlite-vec cannot be loaded when the chosen module has no extension loading, and
    the fix ("unset MEMENGINE_SQLITE_DRIVER"): what opening a file and ``doctor`` say, rather
    than the missing attribute ("'sqlite3.Connection' object has no attribute …")."""
    if sqlite_module() is not _stdlib_sqlite3:  # pragma: no cover - sqlean's wheels load them
        return "sqlean was built without extension loading: reinstall sqlean-py"
    cause = "the stdlib sqlite3 was built without extension loading"
    if _forced():
        return (
            f"{cause} (MEMENGINE_SQLITE_DRIVER={_forced()} chose it): unset "
            "MEMENGINE_SQLITE_DRIVER or set it to sqlean"
        )
    return f"{cause}: set MEMENGINE_SQLITE_DRIVER=sqlean"


def driver_info() -> DriverInfo:
    """Describe the chosen driver (module name, SQLite version, reason)."""
    module = sqlite_module()
    _ok, why = _stdlib_usable()
    name = "sqlite3" if module is _stdlib_sqlite3 else "sqlean"
    reason = why if name == "sqlite3" else f"sqlean chosen: {why}"
    if _forced():
        reason = f"forced by MEMENGINE_SQLITE_DRIVER={name} ({why})"
    return DriverInfo(module=name, sqlite_version=module.sqlite_version, reason=reason)


def probe_extensions() -> dict[str, tuple[bool, str]]:
    """Whether the chosen driver loads sqlite-vec (its version) and has FTS5, checked on a
    throw-away in-memory database: ``{"sqlite-vec": (ok, detail), "fts5": (ok, detail)}``."""
    module = sqlite_module()
    checks: dict[str, tuple[bool, str]] = {}
    conn = module.connect(":memory:")
    try:
        try:
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            checks["sqlite-vec"] = (True, str(conn.execute("SELECT vec_version()").fetchone()[0]))
        except (AttributeError, module.Error) as exc:
            missing = not hasattr(conn, "enable_load_extension")
            checks["sqlite-vec"] = (False, no_extension_loading() if missing else str(exc))
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            checks["fts5"] = (True, "available")
        except module.Error as exc:
            checks["fts5"] = (False, str(exc))
    finally:
        conn.close()
    return checks
