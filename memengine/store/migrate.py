"""Creating and migrating the database file: numbered SQL files applied in order, on open.

Migrations live in ``schema/NNNN_name.sql`` (shipped inside the wheel as
``memengine.schema``). Each is applied in its own transaction and the file's
``PRAGMA user_version`` records the last one applied; ``PRAGMA
application_id`` marks the file as memengine's.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import DamagedDatabase, NotAMemEngineDatabase, SchemaTooNew, StoreError
from ..lazy_re import lazy_compile
from ..text import salvage_command
from .connect import file_of, sqlite_module, translate_error

__all__ = [
    "APPLICATION_ID",
    "SQLITE_HEADER",
    "check_header",
    "latest_version",
    "migrate",
    "schema_sql",
    "schema_version",
]

APPLICATION_ID = 0x4D454D45  # "MEME"
_MIGRATION = lazy_compile(r"^(\d{4})_[\w-]+\.sql$")


def _schema_dir() -> Any:
    """The schema's folder: ``schema/`` beside the package when it is memengine's checkout
    (another checkout on ``PYTHONPATH`` must not read the installed one's migrations), else
    the installed package's ``memengine.schema``. A checkout is known by its pyproject.toml
    mapping ``memengine.schema`` to ``schema``: a copy of the package put in another
    project's folder (``pip install --target .``, vendored) must not run that project's
    ``schema/0001_init.sql`` on a memory file."""
    root = Path(__file__).resolve().parents[2]  # (site-packages, in an installed wheel)
    if _is_checkout(root):
        return root / "schema"
    return resources.files("memengine.schema")


def _is_checkout(root: Path) -> bool:
    """Whether ``root`` is memengine's own source folder (its pyproject.toml maps the
    schema package to ``schema/``, which holds the first migration)."""
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return (
        '"memengine.schema" = "schema"' in project and (root / "schema" / "0001_init.sql").is_file()
    )


def schema_sql(name: str) -> str:
    """The text of one file of the schema folder."""
    text: str = (_schema_dir() / name).read_text(encoding="utf-8")
    return text


@lru_cache(maxsize=1)
def _migrations() -> tuple[tuple[int, str], ...]:
    found = []
    for entry in _schema_dir().iterdir():
        m = _MIGRATION.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.name))
    found.sort()
    if [v for v, _ in found] != list(range(1, len(found) + 1)):
        raise StoreError(f"schema migrations are not numbered 1..n: {found}")
    return tuple(found)


def latest_version() -> int:
    """The schema version this memengine writes."""
    return len(_migrations())


SQLITE_HEADER = b"SQLite format 3\x00"
"""The first bytes of an SQLite database (a memengine file is one)."""


def check_header(path: Path) -> None:
    """Refuse a file that exists, is not empty, and is not an SQLite database."""
    if not path.exists():
        return
    if path.is_dir():
        raise NotAMemEngineDatabase(f"{path} is a directory, not a database file")
    if not path.is_file():  # reading a pipe would wait for a writer forever
        raise NotAMemEngineDatabase(f"{path} is not a regular file (a pipe, device or socket)")
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_HEADER))
    if head and head != SQLITE_HEADER:
        raise NotAMemEngineDatabase(f"{path} is not an SQLite database")


def schema_version(cur: Any) -> int:
    """The schema version of the database behind ``cur``, after checking it is memengine's.

    Raises NotAMemEngineDatabase for a foreign SQLite file and SchemaTooNew
    for a file from a newer memengine; writes nothing.
    """
    own = not cur.connection.in_transaction  # the three reads see one state of the file
    if own:  # (another process's first migration may commit between them otherwise)
        cur.execute("BEGIN")
    try:
        app_id = cur.execute("PRAGMA application_id").fetchone()[0]
        version = cur.execute("PRAGMA user_version").fetchone()[0]
        tables = cur.execute(
            "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchone()[0]
    finally:
        if own:
            cur.execute("COMMIT")
    if app_id not in (0, APPLICATION_ID):
        raise NotAMemEngineDatabase(f"application_id {app_id:#x} is not memengine's")
    if app_id == 0 and tables:
        raise NotAMemEngineDatabase(
            "the file holds tables but is not a memengine database; use a new path for memengine"
        )
    latest = latest_version()
    if version > latest:
        raise SchemaTooNew(
            f"the database has schema version {version}, this memengine knows up to {latest}: "
            "upgrade memengine to open it"
        )
    return int(version)


def migrate(cur: Any) -> int:
    """Bring the database behind ``cur`` to the latest schema; return the version it was at.

    Raises NotAMemEngineDatabase for a foreign SQLite file, SchemaTooNew
    for a file from a newer memengine, and DamagedDatabase when a step fails
    on what the file holds (the step is rolled back: the file keeps the
    version before it).
    """
    version = schema_version(cur)
    if 1 <= version < 4 and not _has_column(cur, "episodes", "context_text"):
        raise StoreError(  # (refused before any step: a step done would strand the file)
            "this file was written by a development version of memengine from before its "
            "schema's neighbour words (schema 1 without context_text), which no migration "
            f"upgrades: save its episodes with `{salvage_command(file_of(cur))}` and import "
            "them into a new file"
        )
    for number, name in _migrations():
        if number <= version:
            continue
        sql = schema_sql(name)
        cur.execute("BEGIN IMMEDIATE")
        try:
            # another process opening the file at the same moment may have just done it
            if int(cur.execute("PRAGMA user_version").fetchone()[0]) < number:
                for statement in _statements(sql):
                    cur.execute(statement)
                cur.execute(f"PRAGMA user_version = {number}")
                cur.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        except BaseException as exc:
            cur.execute("ROLLBACK")
            failed = _step_failed(cur, number, exc)
            if failed is not None:
                raise failed from exc
            raise
        cur.execute("COMMIT")
    return int(version)


def _step_failed(cur: Any, number: int, exc: BaseException) -> DamagedDatabase | None:
    """The error for migration ``number`` stopped by SQLite on the file's data (a record
    memengine would not write: "malformed JSON"), naming the step, what SQLite said and the
    salvage export; None for the errors that keep their own kind (locked, read-only, a
    full or failing disk) and for those not SQLite's. (Reported as the file being no
    memengine database, it named no way out.)"""
    if not isinstance(exc, sqlite_module().DatabaseError):
        return None
    if type(translate_error(exc)) is not StoreError:  # locked, read-only, disk: as they are
        return None
    path = file_of(cur)
    return DamagedDatabase(
        f"{path or 'the memory file'}: the upgrade of the file to schema version {number} "
        f"failed on what it holds (SQLite said: {exc}); the file keeps version "
        f"{number - 1}: save what still reads with `{salvage_command(path)}` and import "
        "it into a new file"
    )


def _has_column(cur: Any, table: str, column: str) -> bool:
    """Whether ``table`` has ``column``."""
    return any(row[1] == column for row in cur.execute(f"PRAGMA table_info({table})"))


def _statements(sql: str) -> list[str]:
    """Split a schema file into statements (triggers keep their inner semicolons)."""
    module = sqlite_module()
    out: list[str] = []
    buf = ""
    for line in sql.splitlines(keepends=True):
        if not buf and line.strip().startswith("--"):
            continue
        buf += line
        if module.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise StoreError(f"incomplete SQL statement in schema: {buf[:80]!r}")
    return out
