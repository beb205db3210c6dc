"""The store: one SQLite file with episodes, their vectors and their full-text index.

:class:`Store` is the only object that opens the file. It migrates on open,
records (and then enforces) the embedder that wrote the vectors, writes an
episode with its vector and full-text rows in one transaction, and answers
the two searches the retrieval layer needs.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import numpy.typing as npt

from ..clock import ensure_aware, iso_text, parse_iso
from ..errors import (
    DamagedDatabase,
    DatabaseLocked,
    DiskError,
    EmbedderChanged,
    EmbedderMismatch,
    InvalidInput,
    NotAMemEngineDatabase,
    ReadOnlyDatabase,
    SchemaTooNew,
    StoreError,
)
from ..models import AgentStats, Episode, NewEpisode, Stats
from ..text import salvage_command, shell_word
from . import episodes as ep_rows
from . import fulltext, maintenance, meta, vector_repair, vectors
from . import lifecycle as store_lc
from . import reembed as staging
from .connect import (
    PAGE_CACHE_MB,
    WRITE_WAIT_S,
    Connections,
    log_files,
    mounted_read_only,
    read_only_access,
    sqlite_module,
    translate_error,
)
from .consistency import FTS_NOT_CHECKED, ConsistencyReport, check_consistency
from .filters import Filters
from .ids import reserve_ids
from .maintenance import BackupReport, ForgetReport, OptimizeReport
from .migrate import check_header, latest_version, migrate, schema_version
from .process_lock import lock_path, remove_unused
from .term_stats import TermStats, fts_row_count
from .vector_index import VectorIndex, log_reset, prune_log
from .vectors import CHUNK_SIZE, chunk_size, relayout_vector_table

__all__ = ["FTS_NOT_CHECKED", "ConsistencyReport", "Store"]


CATCH_UP_PASSES = 3
"""Passes a re-embed makes over the episodes added while it ran, before its swap."""

_IN_LOG = "in the log"
"""The mark of a :data:`SCRUB_PENDING` note whose file was compacted, and whose
write-ahead log alone may keep copies (other processes were reading it)."""

SCRUB_PENDING = "scrub_pending"
"""The meta key a forget or a scrubbing delete sets in its transaction and clears once the
file is compacted: a process stopped between the two leaves it (:meth:`Store.scrub_pending`)."""


class Store:
    """One memengine database file. Thread-safe: each thread uses its own connection.

    ``embedder_id`` and ``dimension`` name the vectors this process adds and
    searches; None for both opens the file with the embedder recorded in it
    (for work that embeds nothing; a file that records none is refused).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        embedder_id: str | None,
        dimension: int | None,
        allow_embedder_change: bool = False,
        now: Callable[[], datetime],
        neighbour_gap_s: int = 3600,
        vector_cache_mb: int = 1024,
        page_cache_mb: int = PAGE_CACHE_MB,
        write_wait_s: float = WRITE_WAIT_S,
        read_only: bool = False,
        read_only_reason: str = "",
    ) -> None:
        if str(path) == ":memory:" or str(path).startswith("file:"):
            raise InvalidInput(
                f"memengine keeps its memory in a file, not {str(path)!r} (each thread's "
                "connection would see another in-memory database): give a path, e.g. in a "
                "tempfile.mkdtemp() folder for tests"
            )
        self.path = Path(os.path.abspath(path))  # a later chdir changes nothing
        self.neighbour_gap_s = neighbour_gap_s
        self._vector_cache_bytes = max(0, vector_cache_mb) * 2**20
        self._now = now
        self._latest = datetime.min.replace(tzinfo=timezone.utc)  # the store's clock's last time
        self._latest_lock = threading.Lock()
        self.probe_changed: Callable[[npt.NDArray[np.float32] | None], None] | None = None
        """Called (with the file's probe vector for the embedder in use, or None) when a
        search or an add finds the file's probe changed since this store last saw it:
        another process re-embedded the file under the same embedder id. It raises to
        refuse the call (the vectors in hand may be another model's)."""
        self._probe_seen: str | None = None  # the file's probe as this store last saw it
        self.upgraded_from: int | None = None
        """The schema version this open upgraded the file from (None when it was current or
        new): an older memengine can no longer open it, which a command says."""
        check_header(self.path)
        if read_only:
            self.connections = _read_only_connections(self.path, read_only_reason, page_cache_mb)
            self._open_or_close(embedder_id, dimension, allow_embedder_change)
            return
        _check_writable(self.path)
        new = not self.path.exists()
        new_lock = new and not lock_path(self.path).exists()
        try:
            self.connections = Connections(
                self.path, cache_mb=page_cache_mb, write_wait_s=write_wait_s
            )
            self._open_or_close(embedder_id, dimension, allow_embedder_change)
        except BaseException:
            if new:  # (a driver that cannot load the extension, a full disk: nothing left)
                _remove_if_empty(self.path, lock=new_lock)
            raise
        if not new:
            self._drop_note_of_an_emptied_log()

    def _drop_note_of_an_emptied_log(self) -> None:
        """Drop a :data:`SCRUB_PENDING` note whose file was compacted and whose log alone
        kept copies, when that log is empty since (every process that read it closed).
        The note is read before the log is looked at, and dropped only while it is the
        note read: one that another process writes meanwhile stays."""
        with self.connections.read() as cur:
            note = meta.get(cur, SCRUB_PENDING)
        if note is not None and self._log_emptied_since(note):
            with self.connections.write() as cur:
                meta.drop(cur, SCRUB_PENDING, value=note)

    def _log_emptied_since(self, note: str) -> bool:
        """Whether ``note`` says the log alone kept copies, and the log is empty now."""
        return note.endswith(f"\t{_IN_LOG}") and maintenance.log_is_empty(self.path)

    def _open_or_close(
        self, embedder_id: str | None, dimension: int | None, allow_embedder_change: bool
    ) -> None:
        """:meth:`_open`, closing the connections when it fails."""
        try:
            self._open(embedder_id, dimension, allow_embedder_change)
        except BaseException:
            self.connections.close()
            raise

    @staticmethod
    def holds_data(path: str | os.PathLike[str]) -> bool:
        """Whether anything SQLite would read as a database is at ``path``: a missing
        file does not, nor does an empty one (0 bytes, and no write-ahead log with pages)."""
        target = Path(path)
        try:
            if target.stat().st_size > 0:
                return True
            return Path(f"{target}-wal").stat().st_size > 0
        except OSError:
            return False

    @staticmethod
    def check_file(path: str | os.PathLike[str]) -> None:
        """Refuse what exists at ``path`` but cannot be a memory file (a folder, a pipe,
        a device, a foreign file) with a :class:`NotAMemEngineDatabase`; a missing or
        empty file passes."""
        check_header(Path(path))

    @staticmethod
    def recorded_embedder(path: str | os.PathLike[str]) -> str | None:
        """The embedder id recorded in the memory file at ``path``; None when there is no
        file, no embedder recorded yet, or nothing readable as a memory file (opening it
        says why). Reads without writing or making anything beside the file."""
        target = Path(path)
        if not Store.holds_data(target):
            return None
        module = sqlite_module()
        uri = f"file:{quote(os.fsencode(target.resolve()))}?mode=ro"  # (bytes: any name)
        if read_only_access(target) == "immutable":
            uri += "&immutable=1"
        try:
            conn = module.connect(uri, uri=True)
            try:
                return meta.get(conn, "embedder_id")
            finally:
                conn.close()
        except module.Error:
            return None

    @staticmethod
    def unwritable_because(path: str | os.PathLike[str]) -> str | None:
        """Why this process cannot write the file at ``path`` (or create it) and its folder
        as a writable store needs, or None when it can (a file that is not yet there can
        be written when its folder can)."""
        try:
            _check_writable(Path(path), advice=False)
        except StoreError as exc:
            return str(exc)
        return None

    @property
    def read_only(self) -> bool:
        """Whether the file was opened read-only: searches work, writes raise
        :class:`.ReadOnlyDatabase`."""
        return self.connections.read_only

    def now(self) -> datetime:
        """The store's clock: what dates a new episode's ``created_at`` and a turn's count.
        It never runs backwards (a clock stepped back reads as the latest time it gave),
        so a turn after a memory counts for it in the sleep's tasks clock."""
        moment = ensure_aware(self._now())
        with self._latest_lock:
            if moment < self._latest:
                return self._latest
            self._latest = moment
            return moment

    @property
    def closed(self) -> bool:
        """Whether the store has been closed."""
        return self.connections.closed

    def _open(self, embedder_id: str | None, dimension: int | None, allow_change: bool) -> None:
        module = self.connections.module
        conn = self.connections.get()
        cur = conn.cursor()
        try:
            try:  # before anything is written: a foreign or newer file is left as it was
                version = schema_version(cur)
            except (NotAMemEngineDatabase, SchemaTooNew) as exc:
                raise type(exc)(f"{self.path}: {exc}") from exc
            if self.read_only:
                _check_current(self.path, version)
            elif (
                str(cur.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal"
                or version < latest_version()
            ):  # set-up, one process at a time: the switch of a new file to WAL is
                # refused while another process reads it (an open file needs none of it)
                with self.connections.writers_turn():
                    cur.execute("PRAGMA journal_mode = WAL").fetchone()
                    before = migrate(cur)
                    if 0 < before < latest_version():
                        self.upgraded_from = before
        except module.DatabaseError as exc:
            msg = str(exc)
            if "not a database" in msg or "malformed" in msg:
                raise NotAMemEngineDatabase(f"{self.path}: {msg}") from exc
            # read-only, or a migration that waited for another writer: DatabaseLocked
            raise translate_error(exc, self.path, path=self.path) from exc
        recorded = self.meta()
        if embedder_id is None or dimension is None:
            if "embedder_id" not in recorded:
                raise StoreError(
                    f"{self.path} records no embedder yet: open it once with one that embeds"
                )
            embedder_id, dimension = recorded["embedder_id"], int(recorded["dimension"])
        if "embedder_id" not in recorded:  # (a read-only open refuses the write with its reason)
            with self.connections.write() as w:
                # another process opening the new file at the same moment may have done it
                if meta.get(w, "embedder_id") is None:
                    vectors.create_vector_table(w, dimension)
                    meta.put(
                        w,
                        embedder_id=embedder_id,
                        dimension=str(dimension),
                        metric="cosine",
                        created_at=self._now().isoformat(),
                    )
            recorded = self.meta()
        self._index_partitions()
        self.embedder_id = recorded["embedder_id"]
        self.dimension = int(recorded["dimension"])
        self._in_use = (embedder_id, dimension)  # the vectors this process adds and searches
        self._probe_seen = recorded.get("embedder_probe")
        if (self.embedder_id, self.dimension) != (embedder_id, dimension) and not allow_change:
            raise EmbedderMismatch(
                f"{self.path} was embedded with {self.embedder_id} ({self.dimension} dimensions) "
                f"but the configured embedder is {embedder_id} ({dimension} dimensions). "
                f"Configure {self.embedder_id} again, or re-embed the file with the new one: "
                f"memengine reembed --db {shell_word(os.fspath(self.path))} (with this "
                "configuration)"
            )
        self.vector_index = self._new_vector_index(self.dimension)
        self.term_stats = TermStats()

    def _new_vector_index(self, dimension: int) -> VectorIndex:
        """An empty in-process vector index whose background loader reads through this
        store's connections."""
        return VectorIndex(dimension, self._vector_cache_bytes, reader=self.connections.read)

    def _index_partitions(self) -> None:
        """Give a file made before :data:`.vectors.PARTITION_INDEX` existed its index.

        A read-only file goes without it: the same results, slower scoped KNN.
        """
        with self.connections.read() as cur:
            if vectors.has_partition_index(cur):
                return
        try:
            with self.connections.write() as w:
                vectors.ensure_partition_index(w)
        except ReadOnlyDatabase:
            return

    # -- meta --------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """Everything in the meta table."""
        with self.connections.read() as cur:
            return meta.everything(cur)

    def embedder_probe(self) -> npt.NDArray[np.float32] | None:
        """The file's vector of the probe text, made by the embedder in use (None when the
        file has none for it)."""
        with self.connections.read() as cur:
            return self._probe(cur)

    def probe_stamp(self) -> str | None:
        """The file's probe as stored (cheap to compare: it changes when the file is
        re-embedded, or first gets one)."""
        with self.connections.read() as cur:
            return meta.get(cur, "embedder_probe")

    def _probe(self, cur: Any) -> npt.NDArray[np.float32] | None:
        return self._parse_probe(meta.get(cur, "embedder_probe"))

    def _parse_probe(self, raw: str | None) -> npt.NDArray[np.float32] | None:
        target, _, data = (raw or "").rpartition(" ")
        if target != f"{self._in_use[0]}:{self._in_use[1]}":
            return None
        vec = meta.text_vector(data)  # None, too, for a damaged value
        return vec if vec is not None and len(vec) == self._in_use[1] else None

    def _set_probe(
        self, cur: Any, probe: npt.NDArray[np.float32], embedder: tuple[str, int] | None = None
    ) -> None:
        """Keep ``probe`` as the vector of the probe text made by ``embedder`` (id and
        dimension; the one in use by default)."""
        name, dimension = embedder or self._in_use
        raw = f"{name}:{dimension} {meta.vector_text(probe)}"
        meta.put(cur, embedder_probe=raw)
        self._probe_seen = raw

    def _check_embedder(self, cur: Any) -> None:
        """Refuse to add or search vectors of another embedder than the file's: it was
        opened so (for commands that embed nothing), or another process re-embedded it
        since it was opened."""
        now = meta.embedder(cur)
        if now == self._in_use:
            if self.probe_changed is not None:  # the same id, re-embedded by another model?
                raw = meta.get(cur, "embedder_probe")
                if raw != self._probe_seen:
                    self.probe_changed(self._parse_probe(raw))
                    self._probe_seen = raw
            return
        ours = f"{self._in_use[0]} ({self._in_use[1]} dimensions)"
        if now != (self.embedder_id, self.dimension):
            raise EmbedderMismatch(
                f"{self.path} was re-embedded with {now[0]} ({now[1]} dimensions) by another "
                f"process since this one opened it with {ours}: open it again with that embedder"
            )
        raise EmbedderMismatch(
            f"{self.path} holds vectors of {now[0]} ({now[1]} dimensions): vectors of {ours} "
            f"cannot be added to it or searched in it (re-embed it first: memengine reembed)"
        )

    def schema_version(self) -> int:
        """The schema version of the file."""
        with self.connections.read() as cur:
            return int(cur.execute("PRAGMA user_version").fetchone()[0])

    # -- writes ------------------------------------------------------------------------
    def add(
        self,
        episodes: Sequence[NewEpisode],
        search_texts: Sequence[str],
        embeddings: npt.NDArray[np.float32],
        *,
        probe: npt.NDArray[np.float32] | None = None,
    ) -> list[int]:
        """Write episodes, their vectors and full-text rows in one transaction; return ids.
        ``probe`` is the embedder's vector of its probe text, kept for a file that has none
        (:mod:`memengine.embed.probe`)."""
        if len(episodes) != len(search_texts) or len(episodes) != len(embeddings):
            raise InvalidInput("episodes, texts and vectors must have the same length")
        if np.ndim(embeddings) == 2 and np.shape(embeddings)[1] != self.dimension:
            with self.connections.read() as cur:  # another embedder's: say so, not "shape"
                self._check_embedder(cur)
        vectors.check_vectors(embeddings, self.dimension, texts=search_texts)
        now = self.now()
        with self.connections.write() as cur:
            self._check_embedder(cur)
            if probe is not None and self._probe(cur) is None:
                self._set_probe(cur, probe)
            ep_rows.ensure_agents(cur, (e.agent for e in episodes), now)
            try:
                with maintenance.deferred_merges(cur, len(episodes)):
                    ids = ep_rows.insert_episodes(
                        cur, episodes, search_texts, now, gap_s=self.neighbour_gap_s
                    )
            except self.connections.module.IntegrityError as exc:
                hint = (
                    " (an episode with that id exists, stored meanwhile by another import of "
                    "the same file, or there before: an import goes on when run again with "
                    "skip_existing=True (--skip-existing), or adds copies under new ids with "
                    "keep_ids=False (--new-ids); add_many keeps an episode's id: give none "
                    "for a new one)"
                    if "episodes.id" in str(exc)
                    else ""
                )
                raise InvalidInput(f"cannot store episode: {exc}{hint}") from exc
            vectors.insert_vectors(
                cur,
                ids,
                [vectors.filter_columns(e) for e in episodes],
                embeddings,
            )
            prune_log(cur)
        return ids

    def delete(self, ids: Sequence[int], *, agent: str | None, scrub: bool = False) -> list[int]:
        """Delete exactly these ids (only ``agent``'s when given); return the ids deleted.

        Their learnings go from the other episodes a recorded turn used with them
        (:func:`.lifecycle.drop_learnings_of`). The neighbouring turns of what was deleted are re-linked in the same
        transaction (the turn just before and after each, however far: one linked
        under a larger ``neighbour_gap_minutes`` holds its words too), so no episode
        keeps a deleted neighbour's words. Their bytes stay in free pages and old
        full-text segments until overwritten;
        ``scrub`` removes those too, as :meth:`forget_agent` does (``secure_delete``
        and a full-text rebuild in the transaction, then ``VACUUM`` and an empty
        log), and raises :class:`.DatabaseLocked` when another connection kept
        the last two from finishing, a :class:`.DiskError` when the disk did (the
        episodes are deleted all the same).
        """
        with self.connections.write() as cur:
            if not scrub:
                store_lc.drop_learnings_of(cur, ids, agent)  # (notes of the same feedbacks)
                return ep_rows.delete_and_relink(cur, ids, agent, self.neighbour_gap_s)
            with maintenance.secure_deletes(cur):
                store_lc.drop_learnings_of(cur, ids, agent)
                deleted = ep_rows.delete_and_relink(cur, ids, agent, self.neighbour_gap_s)
                cur.execute("INSERT INTO episodes_fts (episodes_fts) VALUES ('optimize')")
                store_lc.clear_turn_texts(cur)  # older versions' turns quoted the messages
                note = self._scrub_note(cur, "a scrubbing delete")
        kept, wal_truncated = self._compact_scrubbed(note)
        if kept is not None or not wal_truncated:
            left = (
                f"the file was not compacted ({maintenance.not_compacted(kept)})"
                if kept is not None
                else "its write-ahead log was not emptied (another connection, of another "
                "process or of another thread of this one, an export or a search, was writing "
                "or reading an older snapshot)"
            )
            disk = isinstance(kept, DiskError)
            error: type[StoreError] = type(kept) if isinstance(kept, DiskError) else DatabaseLocked
            raise error(
                f"deleted {len(deleted)} episode(s), but {left}, so the file and its log may "
                "still hold copies of their bytes: run `memengine optimize --scrub` "
                + (
                    "once the disk has room"
                    if disk
                    else "(mem.optimize(scrub=True)) once nothing else reads or writes the file"
                )
            )
        return deleted

    def forget_agent(self, agent: str) -> ForgetReport:
        """Delete ``agent`` and everything of it: its episodes (their vectors and full-text
        rows), turns, sleeps, learned scorer and its row.

        The full-text index is rebuilt in the same transaction (``optimize``,
        so no old segment keeps the agent's words), with SQLite's
        ``secure_delete`` on; then the file is compacted (``VACUUM``: no freed
        page or leftover fragment of a page keeps them either) and the
        write-ahead log emptied. Both read the whole file: seconds for a large
        one, while other writers wait.
        """
        with self.connections.write() as cur, maintenance.secure_deletes(cur):
            ids = store_lc.agent_episode_ids(cur, agent)
            deleted = ep_rows.delete_episodes(cur, ids, agent)
            turns = store_lc.drop_agent(cur, agent)
            cur.execute("INSERT INTO episodes_fts (episodes_fts) VALUES ('optimize')")
            # (delete_episodes told every process to count its words again)
            # the vector log names the agent: its entries go, and a reset tells every
            # process's vector index to drop what it holds
            top = cur.execute("SELECT coalesce(max(seq), 0) FROM vector_log").fetchone()[0]
            cur.execute("DELETE FROM vector_log WHERE agent = ?", (agent,))
            log_reset(cur, above=int(top))  # numbered past every entry an index has seen
            prune_log(cur)
            note = self._scrub_note(cur, "a forgotten agent")  # (not its name)
        self.vector_index.forget(agent)  # (other processes drop it at their next search)
        kept, wal_truncated = self._compact_scrubbed(note)
        why = maintenance.not_compacted(kept)
        return ForgetReport(agent, len(deleted), turns, kept is None, wal_truncated, why)

    @staticmethod
    def _scrub_note(cur: Any, what: str) -> str:
        """Note :data:`SCRUB_PENDING` (``what`` was deleted, and a mark of this delete's
        own) in the delete's transaction; return the note."""
        note = f"{what}\t{uuid.uuid4().hex}"
        meta.put(cur, **{SCRUB_PENDING: note})
        return note

    def _compact_scrubbed(self, note: str) -> tuple[StoreError | None, bool]:
        """:func:`.maintenance.compact` after a delete meant to leave no copy, which left
        ``note`` (:meth:`_scrub_note`): it goes once the file is compacted and its log
        emptied, unless another delete's note replaced it meanwhile (a process stopped
        before keeps it, for :meth:`scrub_pending`). A Ctrl-C or SIGTERM comes once SQLite
        finished the statement under way, so one raised as the compaction returns, or
        after, finds the file compacted: the note then says only the log may keep copies,
        as doctor would otherwise fail a file whose free pages are gone."""
        cookie = maintenance.schema_cookie(self.connections)
        try:
            kept, wal_truncated = maintenance.compact(self.connections)
            if kept is None:
                wal_truncated = self._compacted(note, wal_truncated)
            return kept, wal_truncated
        except BaseException:
            with contextlib.suppress(StoreError):  # (else the note stays: optimize --scrub)
                if maintenance.schema_cookie(self.connections) != cookie:  # (a VACUUM ran)
                    self._compacted(note, wal_truncated=False)  # (emptied or not: not known)
            raise

    def _compacted(self, note: str, wal_truncated: bool) -> bool:
        """After the compaction that followed ``note``'s delete: drop the note when the log
        was emptied too, else mark it kept by the log alone (:data:`_IN_LOG`; unless another
        delete's note replaced it, or it went already); whether the log was emptied."""
        try:  # (the delete is in, and compacted: a writer that keeps the file past
            # write_wait_s now leaves the note, which optimize --scrub clears, not an error)
            if wal_truncated:
                return self._scrubbed(note)
            with self.connections.write() as cur:  # only the log, which others read, keeps copies
                if meta.get(cur, SCRUB_PENDING) == note:
                    meta.put(cur, **{SCRUB_PENDING: f"{note}\t{_IN_LOG}"})
        except DatabaseLocked:
            pass  # (the log was emptied or not, as compact said)
        return wal_truncated

    def _scrubbed(self, note: str | None) -> bool:
        """After a compaction and an emptied log: drop the :data:`SCRUB_PENDING` note
        (``note``, this delete's own; any, when None) and empty the log again; whether it
        was emptied."""
        with self.connections.write() as cur:
            meta.drop(cur, SCRUB_PENDING, value=note)
        return maintenance.truncate_wal(self.connections)

    def scrub_pending(self) -> str | None:
        """What deleted text a compaction did not follow (a forgotten agent, a scrubbing
        delete: the process stopped, or others kept the file busy), so copies of its bytes
        may remain in free pages until ``memengine optimize --scrub``; None when none."""
        with self.connections.read() as cur:
            note = meta.get(cur, SCRUB_PENDING)
        if note is None or self._log_emptied_since(note):
            return None  # (compacted, and the log that kept copies is gone since)
        return note.split("\t", 1)[0]

    def set_status(self, ids: Sequence[int], status: str) -> int:
        """Archive or re-activate episodes; triggers keep the vector filters in step."""
        with self.connections.write() as cur:
            marks = ",".join("?" * len(ids))
            cur.execute(f"UPDATE episodes SET status = ? WHERE id IN ({marks})", [status, *ids])
            return int(cur.rowcount)

    def reserve_ids(self, ids: Sequence[int]) -> list[int]:
        """Keep ``ids`` for episodes written later (an import's batches): in one write
        transaction, return those already stored (reserving nothing then), else number
        every other writer's new episodes above them (:func:`.ids.reserve_ids`)."""
        with self.connections.write() as cur:
            taken = sorted(ep_rows.existing_ids(cur, ids))
            if not taken and ids:
                reserve_ids(cur, max(ids))
            return taken

    # -- reads -------------------------------------------------------------------------
    def get(self, ids: Sequence[int]) -> dict[int, Episode]:
        """The episodes with these ids (absent ids are left out)."""
        with self.connections.read() as cur:
            return ep_rows.fetch_episodes(cur, ids)

    def exchange_texts(self, ids: Sequence[int], max_chars: int) -> dict[int, tuple[str, str]]:
        """The first ``max_chars`` of the user turn and reply of each exchange among these ids
        that has a user turn (a light read: no episode is built; other kinds and absent ids
        are left out)."""
        with self.connections.read() as cur:
            return ep_rows.exchange_texts(cur, ids, max_chars)

    def named_by_records(self, ids: Sequence[int]) -> list[int]:
        """Which of ``ids`` a recorded turn or a sleep's strength history names (ascending).
        An id above every one the file gave out was never named: only the others are
        looked for (the records are read whole, every turn's candidates)."""
        high = self.highest_id() if ids else 0
        given = [i for i in ids if i <= high]
        if not given:
            return []
        with self.connections.read() as cur:
            return store_lc.named_by_records(cur, given)

    def ids_at(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], list[int]]:
        """The ids of the episodes stored for each ``(agent, unix second)`` key (the keys
        that have none are left out)."""
        out: dict[tuple[str, int], list[int]] = {}
        with self.connections.read() as cur:
            for agent, ts in set(keys):
                rows = cur.execute(
                    "SELECT id FROM episodes WHERE agent = ? AND occurred_ts = ?", (agent, ts)
                ).fetchall()
                if rows:
                    out[(agent, ts)] = [int(r[0]) for r in rows]
        return out

    def existing(self, ids: Sequence[int]) -> set[int]:
        """Which of these ids are stored episodes (without reading the episodes)."""
        with self.connections.read() as cur:
            return ep_rows.existing_ids(cur, ids)

    def knn(
        self, vector: npt.NDArray[np.float32], k: int, filters: Filters
    ) -> list[tuple[int, float]]:
        """Nearest episodes by cosine distance (one query of :meth:`knn_many`)."""
        return self.knn_many(np.asarray(vector, dtype=np.float32)[None, :], k, filters)[0]

    def knn_many(
        self, queries: npt.NDArray[np.float32], k: int, filters: Filters
    ) -> list[list[tuple[int, float]]]:
        """Nearest episodes for each row of ``queries``: one scan of the agent's vectors.

        The in-process :class:`VectorIndex` answers when the agent's vectors,
        or at least their codes, fit its budget (``vector_cache_mb``): exactly
        up to 20,000 rows, prefiltered above that or when only the codes are
        held (recall measured by ``memengine bench``). Otherwise each query is
        an exact ``vec0`` KNN.
        """
        with self.connections.read() as cur:
            self._check_embedder(cur)
            found = self.vector_index.knn(cur, queries, k, filters)
            if found is not None:
                return found
            return [vectors.knn(cur, q, k, filters) for q in queries]

    def warm(self, agent: str) -> str:
        """Load ``agent``'s vectors into the in-process index now, in this thread, and say
        how its searches run: ``"float32"``, ``"codes"`` or ``"vec0"`` (past the budget).

        Without it, an agent is loaded at its second search in the process (one of
        at least 5,000 rows by a background thread, its searches meanwhile in ``vec0``).
        """
        for _ in range(5):  # another thread's newer snapshot synced the index first: again
            with self.connections.read() as cur:
                self._check_embedder(cur)
                mode = self.vector_index.warm(cur, agent)
            if mode is not None:
                return mode
        return self.vector_index.mode(agent)

    def similarities(
        self, vector: npt.NDArray[np.float32], ids: Sequence[int], *, agent: str | None = None
    ) -> dict[int, float]:
        """Exact cosine similarity of ``vector`` to each of these episodes (of ``agent``)."""
        with self.connections.read() as cur:
            self._check_embedder(cur)
            return self._similarities(cur, vector, ids, agent)

    def similar_to(
        self, anchor: int, ids: Sequence[int], *, agent: str | None = None
    ) -> dict[int, float]:
        """Exact cosine similarity of episode ``anchor``'s stored vector to each of these
        episodes' (of ``agent``); empty when ``anchor`` has no vector."""
        with self.connections.read() as cur:
            self._check_embedder(cur)
            row = cur.execute(
                "SELECT embedding FROM episode_vectors WHERE episode_id = ?", (anchor,)
            ).fetchone()
            if row is None or row[0] is None:
                return {}
            return self._similarities(cur, np.frombuffer(row[0], dtype=np.float32), ids, agent)

    def _similarities(
        self, cur: Any, vector: npt.NDArray[np.float32], ids: Sequence[int], agent: str | None
    ) -> dict[int, float]:
        """:meth:`similarities` within a read already checked: the agent's vectors held in
        memory when all of ``ids`` are, else ``vec0``'s."""
        if agent is not None:
            found = self.vector_index.similarities(cur, vector, agent, ids)
            if found is not None and len(found) == len(set(ids)):
                return found
        return vectors.similarities(cur, vector, ids)

    def bm25(
        self, expression: str, k: int, filters: Filters, *, context_weight: float = 0.4
    ) -> list[tuple[int, float]]:
        """Best full-text matches of an already-escaped FTS5 expression."""
        with self.connections.read() as cur:
            return fulltext.bm25(cur, expression, k, filters, context_weight=context_weight)

    def text_search(
        self,
        terms: Sequence[str],
        k: int,
        filters: Filters,
        *,
        context_weight: float = 0.4,
        max_df: float = 0.5,
        posting_budget: int | None = None,
    ) -> tuple[list[tuple[int, float]], list[str]]:
        """BM25 over the query ``terms`` (user text is quoted here); return hits and dropped terms.

        Terms found in more than ``max_df`` of the episodes are left out: their
        idf is 0, so they cannot change the ranking, only slow it down. With a
        ``posting_budget``, the most frequent terms are also left out while
        the terms' row counts add up to more than it (see
        :meth:`TermStats.frequent`).
        """
        with self.connections.read() as cur:
            rows = fts_row_count(cur)  # read once for both caches
            expression, dropped = self._kept_terms(cur, terms, max_df, posting_budget, rows)
            if expression is None:
                return [], sorted(dropped)
            scope = self.term_stats.agent_share(cur, filters.agent, rows) < 0.5
            hits = fulltext.bm25(
                cur, expression, k, filters, context_weight=context_weight, scope=scope
            )
            return hits, sorted(dropped)

    def own_text_matches(
        self,
        terms: Sequence[str],
        ids: Sequence[int],
        *,
        max_df: float = 0.5,
        posting_budget: int | None = None,
    ) -> set[int]:
        """The ids among ``ids`` whose own text holds one of the ``terms`` that
        :meth:`text_search` searches with the same ``max_df`` and ``posting_budget`` (a
        full-text hit that matched only its neighbours' words is not among them)."""
        if not ids:
            return set()
        with self.connections.read() as cur:
            rows = fts_row_count(cur)
            expression, _ = self._kept_terms(cur, terms, max_df, posting_budget, rows)
            return set() if expression is None else fulltext.own_matches(cur, expression, ids)

    def _kept_terms(
        self,
        cur: Any,
        terms: Sequence[str],
        max_df: float,
        posting_budget: int | None,
        rows: int,
    ) -> tuple[str | None, set[str]]:
        """The MATCH expression of the ``terms`` a search keeps (None when none is) and the
        ones it leaves out (:meth:`TermStats.frequent`)."""
        dropped = self.term_stats.frequent(cur, terms, max_df, posting_budget, rows)
        return fulltext.match_expression([t for t in terms if t not in dropped]), dropped

    def next_turns(self, ids: Sequence[int], filters: Filters) -> dict[int, Episode]:
        """The conversation turn that follows each of ``ids`` within the neighbour gap, when
        ``filters`` let it through, as ``{id: next episode}``. A turn the filters hide is
        not skipped over: its predecessor then has none."""
        if not ids:
            return {}
        with self.connections.read() as cur:
            following = ep_rows.next_turns(cur, ids, self.neighbour_gap_s)
            if not following:
                return {}
            visible = ep_rows.visible_ids(cur, list(following.values()), filters)
            episodes = ep_rows.fetch_episodes(cur, sorted(visible))
        return {a: episodes[b] for a, b in following.items() if b in episodes}

    def window_ids(
        self, filters: Filters, skip: AbstractSet[int] = frozenset()
    ) -> list[tuple[int, str, str]]:
        """The ids of the episodes within ``filters`` (their time range), principles and the
        ids in ``skip`` aside, among the range's 1,000 newest: the most important first, then
        the strongest, then the newest; each with the start of what it said (an exchange's
        user turn) and of its reply."""
        with self.connections.read() as cur:
            return ep_rows.window_ids(cur, filters, skip)

    def newest_turns(self, agent: str, until_ts: int, limit: int) -> list[Episode]:
        """The agent's ``limit`` newest exchanges and messages at or before ``until_ts``,
        newest first (whatever their status)."""
        with self.connections.read() as cur:
            return ep_rows.newest_turns(cur, agent, until_ts, limit)

    def document_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """The number of episodes and the document frequency of each term (cached; all agents)."""
        with self.connections.read() as cur:
            return self.term_stats.counts(cur, terms)

    def iter_episodes(self, agent: str | None = None, batch: int = 500) -> Iterator[list[Episode]]:
        """Yield every episode (of one agent, or all), in id order, a batch at a time, all
        from one read snapshot (writers go on meanwhile; none of their changes is seen).
        The read lasts until the last batch: this thread cannot write before then."""
        with self.connections.read() as cur:
            for ids in list(ep_rows.iter_episode_ids(cur, agent, batch)):
                found = ep_rows.fetch_episodes(cur, ids)
                yield [found[i] for i in ids if i in found]

    def iter_exported(
        self, agent: str | None = None, batch: int = 500
    ) -> Iterator[list[tuple[Episode, datetime | None]]]:
        """:meth:`iter_episodes` with the moment each one's strength holds for
        (:func:`.lifecycle.decay_baselines`), read in the same snapshot: what an export writes."""
        with self.connections.read() as cur:
            for ids in list(ep_rows.iter_episode_ids(cur, agent, batch)):
                self.connections.refuse_if_stopped()  # a close from inside stops it here
                found = ep_rows.fetch_episodes(cur, ids)
                held = store_lc.decay_baselines(cur, ids)
                yield [(found[i], held.get(i)) for i in ids if i in found]

    def highest_id(self) -> int:
        """The highest episode id the file records (0 for none), from whichever record of
        it still reads: the episodes, the id kept past deletions, the vectors' rowids."""
        highest, failed = 0, []
        for sql in (
            "SELECT max(id) FROM episodes",
            "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'episode_id_high'",
            "SELECT seq FROM sqlite_sequence WHERE name = 'episode_vectors_rowids'",
        ):
            try:
                with self.connections.read() as cur:
                    row = cur.execute(sql).fetchone()
            except StoreError as exc:
                failed.append(exc)
                continue
            if row is not None and row[0] is not None:
                highest = max(highest, int(row[0]))
        if len(failed) == 3:
            raise DamagedDatabase(f"no record of the episode ids reads: {failed[0]}")
        return highest

    def count(self, agent: str | None = None) -> int:
        """How many episodes there are (of one agent, or all)."""
        with self.connections.read() as cur:
            if agent is None:
                return int(cur.execute("SELECT count(*) FROM episodes").fetchone()[0])
            return int(
                cur.execute("SELECT count(*) FROM episodes WHERE agent = ?", (agent,)).fetchone()[0]
            )

    def stats(self, agent: str | None = None) -> Stats:
        """Counts per agent (every agent of the file, those without episodes too), kind and
        status, the file's size, its full-text segments and the rows per vector chunk; with
        ``agent``, that agent's own totals too, read in the same transaction as the file's."""
        with self.connections.read() as cur:
            own = None if agent is None else _agent_totals(cur, agent)
            per_agent = cur.execute(
                "SELECT agent, status, count(*) FROM episodes GROUP BY agent, status ORDER BY agent"
            ).fetchall()
            created = [name for (name,) in cur.execute("SELECT name FROM agents").fetchall()]
            per_kind = dict(
                cur.execute("SELECT kind, count(*) FROM episodes GROUP BY kind").fetchall()
            )
            span: list[str | None] = []  # by the moment (the texts keep their callers'
            for order in ("ASC", "DESC"):  # offsets; within a second, by the text's fraction)
                row = cur.execute(
                    "SELECT occurred_at FROM episodes "
                    f"ORDER BY occurred_ts {order}, occurred_at {order} LIMIT 1"
                ).fetchone()
                span.append(row[0] if row else None)
            segments = maintenance.fts_segments(cur)
            chunk = chunk_size(cur)
            # another process may have re-embedded the file since it was opened
            embedder_now, dimension_now = meta.embedder(cur)
            free = int(cur.execute("PRAGMA freelist_count").fetchone()[0])
            page = int(cur.execute("PRAGMA page_size").fetchone()[0])
        agents: dict[str, dict[str, int]] = {}
        for who, status, n in per_agent:  # (both statuses, 0 too: `jq .active` reads 0)
            agents.setdefault(who, {"active": 0, "archived": 0})[status] = n
        for name in created:  # an agent created and not yet written to, or emptied
            agents.setdefault(name, {"active": 0, "archived": 0})
        agents = dict(sorted(agents.items()))  # (UTF-8's order is the code points')
        size = maintenance.file_bytes(self.path)
        return Stats(
            episodes=sum(sum(v.values()) for v in agents.values()),
            agents=agents,
            agent_count=len(agents),
            agent=own,
            kinds={str(k): int(n) for k, n in per_kind.items()},
            first=iso_text(parse_iso(span[0])) if span[0] else None,
            last=iso_text(parse_iso(span[1])) if span[1] else None,
            bytes=size,
            free_bytes=free * page,
            embedder=embedder_now or self.embedder_id,
            dimension=dimension_now or self.dimension,
            fulltext_segments=segments,
            vector_chunk_size=chunk,
        )

    def consistency(self) -> ConsistencyReport:
        """Check that every episode has its vector with current filter columns and FTS rows,
        and that `vec0`'s chunk table agrees with its agent index (SQLite's integrity check)."""
        return check_consistency(self.connections, self.vector_index, read_only=self.read_only)

    def mend_vectors(
        self,
        embed: Callable[[list[Episode]], npt.NDArray[np.float32]],
        *,
        batch: int = 256,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[int, int]:
        """Embed the episodes that have no vector and delete the vectors of no episode;
        return (vectors made, vectors deleted).

        ``embed`` must make the file's embedder's vectors (checked here against the id
        and dimension the file records, as an add is). They are made in batches from a
        read snapshot, outside the write lock; then one write transaction lists the
        episodes without a vector again, stores the vectors made (embedding there the few
        that lost theirs meanwhile), deletes the orphans and logs every id, so each
        process's in-memory index takes them in at its next search. Stopped part way,
        the file is as it was.
        """
        with self.connections.read() as cur:
            self._check_embedder(cur)
            todo = vector_repair.missing_vector_ids(cur)
        made: dict[int, tuple[str, npt.NDArray[np.float32]]] = {}
        if progress:
            progress(0, len(todo))
        for start in range(0, len(todo), batch):
            with self.connections.read() as cur:
                found = ep_rows.fetch_episodes(cur, todo[start : start + batch])
            eps = list(found.values())
            if eps:
                vecs = self._embed_checked(embed, eps, self.dimension)
                made.update((e.id, (e.text, vecs[row])) for row, e in enumerate(eps))
            if progress:
                progress(min(start + batch, len(todo)), len(todo))
        with self.connections.write() as cur:
            self._check_embedder(cur)  # (another process may have re-embedded it since)
            lacking = vector_repair.missing_vector_ids(cur)
            found = ep_rows.fetch_episodes(cur, lacking)
            eps = [found[i] for i in lacking if i in found]
            vecs = np.empty((len(eps), self.dimension), dtype=np.float32)
            late = [r for r, e in enumerate(eps) if made.get(e.id, ("",))[0] != e.text]
            for row in set(range(len(eps))) - set(late):
                vecs[row] = made[eps[row].id][1]
            if late:  # lost their vector (or were added without one) since the snapshot
                vecs[late] = self._embed_checked(embed, [eps[r] for r in late], self.dimension)
            vector_repair.insert_missing(cur, eps, vecs)
            dropped = vector_repair.drop_orphans(cur, vector_repair.orphan_vector_ids(cur))
            prune_log(cur)
        return len(eps), dropped

    # -- re-embedding ------------------------------------------------------------------
    def replace_embedder(
        self,
        embedder_id: str,
        dimension: int,
        embed: Callable[[list[Episode]], npt.NDArray[np.float32]],
        *,
        probe: npt.NDArray[np.float32],
        same_model: staging.SameModel,
        progress: Callable[[int, int], None] | None = None,
        note: Callable[[str], None] | None = None,
        batch: int = 256,
        probe_again: Callable[[], npt.NDArray[np.float32]] | None = None,
    ) -> int:
        """Re-embed every episode with a new embedder; return the count.

        The vectors are made in batches outside the write transaction and kept
        in a staging table (:mod:`.reembed`); then one transaction replaces the
        vector table with them. Until it commits, readers see the old vectors
        and other writers go on (they wait only for the swap); a failure or an
        interruption leaves the file as it was, with the vectors made so far
        kept for the next re-embed to the same embedder (made by the same
        model: ``probe`` is its vector of the probe text,
        :mod:`memengine.embed.probe`, and ``same_model`` tells two such vectors
        of one model), which goes on from there. The episodes added meanwhile
        are staged in passes of their own (:data:`CATCH_UP_PASSES`), and the
        swap lists the episodes again, so the few added since are embedded
        there (inside its write lock) and none is left without a vector; it
        keeps ``probe`` as the file's and retires the learned scorers. Before the
        swap, ``probe_again()`` (the probe text embedded anew) must still be
        ``same_model`` as ``probe``: a model swapped behind the id meanwhile would
        leave the file's vectors of two models (:class:`.EmbedderChanged`).
        ``progress(done, total)`` counts the episodes embedded (staged ones
        included); ``note`` is told whether the vectors of a stopped re-embed
        were taken or dropped.
        """
        target = f"{embedder_id}:{dimension}"
        probe = np.asarray(probe, dtype=np.float32).reshape(-1)
        if probe.shape != (dimension,) or not np.isfinite(probe).all():
            raise InvalidInput(
                f"the probe vector (shape {probe.shape}) is not {dimension} finite numbers"
            )
        with self.connections.write() as cur:
            before = staging.staged_count(cur)
            resumed = staging.prepare(cur, target, probe, same_model)
        if note is not None and before is not None and before[1]:
            made = f"{before[1]:,} vectors a stopped re-embed"
            if resumed:
                note(f"going on from the {made} made")
            elif before[0] == target:
                note(
                    f"the {made} made were dropped: the model behind "
                    f"{staging.shown(target)} has changed since"
                )
            else:
                note(f"the {made} to {staging.shown(before[0])} made were dropped")
        with self.connections.read() as cur:
            id_batches = list(ep_rows.iter_episode_ids(cur, None, batch))
        total = sum(len(ids) for ids in id_batches)
        done = 0
        if progress:
            progress(0, total)
        for ids in id_batches:
            self._stage(target, ids, embed, dimension)
            done += len(ids)
            if progress:
                progress(done, total)
        # the episodes added meanwhile, in passes of their own, so that the swap (which
        # holds the write lock) embeds few; a writer faster than the embedder still
        # leaves some after the last pass
        for _ in range(CATCH_UP_PASSES):
            with self.connections.read() as cur:
                added = staging.unstaged(cur, 10 * batch)
            if not added:  # (any: embedded here, not inside the swap's write lock)
                break
            for start in range(0, len(added), batch):
                self._stage(target, added[start : start + batch], embed, dimension)
        if probe_again is not None and not same_model(probe, probe_again()):
            raise EmbedderChanged(  # (the staged vectors are dropped by the next run)
                f"the model behind {staging.shown(target)} changed while the re-embed ran "
                "(its vector of the probe text moved): nothing was swapped, the file keeps "
                "its vectors; re-embed again once the endpoint serves one model"
            )
        with self.connections.write() as cur:
            count = self._swap_vectors(cur, embedder_id, dimension, embed, batch)
            self._set_probe(cur, probe, (embedder_id, dimension))
            store_lc.retire_scorers(cur)  # they learned the old embedder's cosines
        self.embedder_id, self.dimension = embedder_id, dimension
        self._in_use = (embedder_id, dimension)
        self.vector_index.close()
        self.vector_index = self._new_vector_index(dimension)
        if progress and count > total:  # episodes added meanwhile
            progress(count, count)
        return count

    def _stage(
        self,
        target: str,
        ids: list[int],
        embed: Callable[[list[Episode]], npt.NDArray[np.float32]],
        dimension: int,
    ) -> None:
        """Embed the episodes of ``ids`` that have no staged vector of their text (outside
        any transaction) and stage them (a short write of their own)."""
        with self.connections.read() as cur:
            staging.claim(cur, target)  # another re-embed may have started anew
            kept = staging.staged(cur, ids)
            found = ep_rows.fetch_episodes(cur, ids)
        todo = [
            found[i]
            for i in ids
            if i in found and kept.get(i, (b"",))[0] != staging.digest(found[i].text)
        ]
        if todo:
            vecs = self._embed_checked(embed, todo, dimension)
            with self.connections.write() as cur:
                staging.claim(cur, target)
                # an episode deleted (an agent forgotten) while the batch was embedded
                # leaves no vector of itself behind
                alive = ep_rows.existing_ids(cur, [e.id for e in todo])
                rows = [r for r, e in enumerate(todo) if e.id in alive]
                staging.stage(
                    cur,
                    [todo[r].id for r in rows],
                    [staging.digest(todo[r].text) for r in rows],
                    vecs[rows],
                )

    def stopped_reembed(self) -> tuple[str, int] | None:
        """The target (``"<embedder id>:<dimension>"``) of a re-embed that stopped part way
        and how many vectors it has made, or None."""
        with self.connections.read() as cur:
            return staging.staged_count(cur)

    @staticmethod
    def _embed_checked(
        embed: Callable[[list[Episode]], npt.NDArray[np.float32]],
        eps: list[Episode],
        dimension: int,
    ) -> npt.NDArray[np.float32]:
        vecs = embed(eps)
        if vecs.shape != (len(eps), dimension):
            raise InvalidInput(f"embedder returned shape {vecs.shape}")
        vectors.check_vectors(vecs, dimension, [e.id for e in eps])
        return vecs

    def _swap_vectors(
        self,
        cur: Any,
        embedder_id: str,
        dimension: int,
        embed: Callable[[list[Episode]], npt.NDArray[np.float32]],
        batch: int,
    ) -> int:
        """Replace the vector table with the staged vectors, embedding the episodes that
        have none (added since, or staged for other text); inside the write transaction."""
        staging.claim(cur, f"{embedder_id}:{dimension}")  # the staging is still this one's
        vectors.drop_vector_table(cur)
        vectors.create_vector_table(cur, dimension)
        count = 0
        for ids in ep_rows.iter_episode_ids(cur, None, batch):
            found = ep_rows.fetch_episodes(cur, ids)
            eps = [found[i] for i in ids]
            kept = staging.staged(cur, ids)
            vecs = np.empty((len(eps), dimension), dtype=np.float32)
            missing: list[int] = []
            for row, ep in enumerate(eps):
                dig, blob = kept.get(ep.id, (b"", b""))
                if dig == staging.digest(ep.text) and len(blob) == 4 * dimension:
                    vecs[row] = np.frombuffer(blob, dtype=np.float32)
                else:
                    missing.append(row)
            if missing:
                vecs[missing] = self._embed_checked(embed, [eps[r] for r in missing], dimension)
            vectors.insert_vectors(cur, ids, [vectors.filter_columns(e) for e in eps], vecs)
            count += len(eps)
        meta.put(cur, embedder_id=embedder_id, dimension=str(dimension))
        staging.clear(cur)
        log_reset(cur)
        return count

    def optimize(
        self,
        *,
        pages: int = maintenance.MERGE_PAGES,
        vectors: bool = False,
        scrub: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> OptimizeReport:
        """Merge the full-text index into one segment, then checkpoint and truncate the WAL.

        Worth running after a bulk load (see :mod:`.maintenance`). The merge
        goes in steps of ``pages`` pages, each a short write transaction:
        searches keep running and other writers wait for one step at most.
        With ``vectors``, a vector table made with another chunk size than
        :data:`.vectors.CHUNK_SIZE` is first rewritten with it, in one write
        transaction (``progress(done, total)`` after each batch; a failure
        leaves the file as it was), and the file is then compacted
        (``VACUUM``) when it was rewritten or a quarter or more of its pages
        are free, so the old chunks' room goes back to the disk. ``scrub`` first
        links every turn's neighbour words again under the current rule (a file
        written before a turn lent its words only to turns at least as sensitive
        keeps them until then), one agent a transaction, rebuilds the full-text index
        from the episodes (a drifted one, too), and always compacts the file: no free page
        keeps the bytes of what was deleted.
        """
        t0 = time.perf_counter()
        rewritten = relinked = 0
        bytes_before = maintenance.file_bytes(self.path)  # (a scrub's rebuild adds to both)
        with self.connections.read() as cur:
            segments_before = maintenance.fts_segments(cur)
        if scrub:
            with self.connections.write() as cur:
                staging.drop_deleted(cur)  # a stopped re-embed's vectors of deleted episodes
                store_lc.clear_turn_texts(cur)  # older versions' turns quoted the messages
            with self.connections.read() as cur:
                spans = cur.execute(
                    "SELECT agent, min(occurred_ts), max(occurred_ts) FROM episodes "
                    "WHERE kind IN ('exchange', 'message') GROUP BY agent"
                ).fetchall()
            for agent, lo, hi in spans:
                with self.connections.write() as cur:
                    relinked += ep_rows.link_neighbours(cur, agent, lo, hi, self.neighbour_gap_s)
            with self.connections.write() as cur:  # from the episodes, in one new segment
                cur.execute("INSERT INTO episodes_fts (episodes_fts) VALUES ('rebuild')")
        with self.connections.read() as cur:
            size = chunk_size(cur)
        if vectors and size != CHUNK_SIZE:
            with self.connections.write() as cur:
                rewritten = relayout_vector_table(
                    cur, self.dimension, CHUNK_SIZE, progress=progress
                )
                log_reset(cur)  # the in-memory copies reload from the new chunks
            size = CHUNK_SIZE
        with self.connections.read() as cur:
            before = maintenance.fts_segments(cur)
            # another writer's segments join the merge as it goes, so it may never find
            # nothing left: it also stops at one segment, or past a few times the work
            # of merging the index as it was
            budget = maintenance.merge_budget(cur, pages)
        steps = 0
        done = before <= 1
        while not done and steps < budget:
            with self.connections.write() as cur:
                done = maintenance.merge_step(cur, pages)
                steps += 1
                if not done and steps % 8 == 0:
                    done = maintenance.fts_segments(cur) <= 1
        with self.connections.read() as cur:
            after = maintenance.fts_segments(cur)
        # the old chunks' pages are free but still in the file: give them back to the disk
        tried = scrub or rewritten or (vectors and maintenance.free_share(self.connections) >= 0.25)
        kept = maintenance.vacuum(self.connections) if tried else None
        truncated = maintenance.truncate_wal(self.connections)
        if scrub and kept is None and truncated and not self.read_only:
            truncated = self._scrubbed(None)  # what a stopped forget left is gone now
        return OptimizeReport(
            segments_before,
            after,
            steps,
            round(time.perf_counter() - t0, 3),
            wal_truncated=truncated,
            vector_chunk_size=size,
            vectors_rewritten=rewritten,
            vacuumed=bool(tried) and kept is None,
            not_compacted=maintenance.not_compacted(kept),
            bytes_before=bytes_before,
            bytes_after=maintenance.file_bytes(self.path),
            contexts_relinked=relinked,
        )

    def backup(self, dest: str | os.PathLike[str], *, overwrite: bool = False) -> BackupReport:
        """Copy the whole database to ``dest``, consistent while others keep writing
        (:func:`.maintenance.backup`)."""
        return maintenance.backup(self.connections, self.path, Path(dest), overwrite=overwrite)

    def close(self) -> None:
        """Stop the vector index's background loader, then close every connection
        (checkpointing the WAL)."""
        index = getattr(self, "vector_index", None)  # absent when opening failed
        if index is not None:
            index.close()
        self.connections.close()


def _agent_totals(cur: Any, agent: str) -> AgentStats:
    """One agent's episodes (by kind and in all), their time span and its turns: what
    ``stats --agent`` shows as the agent's, beside the file's totals (each an indexed read
    of that agent's rows only)."""
    kinds = {
        str(k): int(n)
        for k, n in cur.execute(
            "SELECT kind, count(*) FROM episodes WHERE agent = ? GROUP BY kind ORDER BY kind",
            (agent,),
        ).fetchall()
    }
    span: list[str | None] = []
    for order in ("ASC", "DESC"):  # (as the file's span: by the moment, then the text)
        row = cur.execute(
            "SELECT occurred_at FROM episodes WHERE agent = ? "
            f"ORDER BY occurred_ts {order}, occurred_at {order} LIMIT 1",
            (agent,),
        ).fetchone()
        span.append(iso_text(parse_iso(row[0])) if row else None)
    turns = int(cur.execute("SELECT count(*) FROM turns WHERE agent = ?", (agent,)).fetchone()[0])
    return AgentStats(
        name=agent,
        episodes=sum(kinds.values()),
        kinds=kinds,
        first=span[0],
        last=span[1],
        turns=turns,
    )


def _read_only_connections(path: Path, why: str, cache_mb: int = PAGE_CACHE_MB) -> Connections:
    """Connections that cannot write to the file at ``path`` and make nothing beside it
    (:func:`.read_only_access`); ``why`` says why it is opened so."""
    if not path.is_file():
        raise StoreError(f"no memory file at {path}")
    connections = Connections(path, access=read_only_access(path), why=why, cache_mb=cache_mb)
    try:
        connections.probe()
    except StoreError:
        connections.close()
        raise
    return connections


def _check_current(path: Path, version: int) -> None:
    """Refuse a read-only open of a file whose schema this memengine would have to migrate,
    saying what to do: open it writable once, or, when this process cannot write it or its
    folder ("this process cannot write its folder"), copy it or save what it holds."""
    latest = latest_version()
    if version == 0:
        raise ReadOnlyDatabase(f"{path} has never been written by memengine and is open read-only")
    if version >= latest:
        return
    needs = f"{path} has schema version {version} and this memengine needs {latest}"
    why = Store.unwritable_because(path)
    if why is None:  # opened read-only by choice: a writable open migrates it
        raise ReadOnlyDatabase(
            f"{needs}: the migration writes, so open the file writable once (any command "
            "that writes, e.g. `memengine init --db …`)"
        )
    wal = f"{path}-wal"
    names = [str(path)] + ([wal] if os.path.isfile(wal) and os.path.getsize(wal) else [])
    raise ReadOnlyDatabase(
        f"{needs}: the migration writes, and {why}. Copy it to a folder this process can "
        f"write (`cp {' '.join(shell_word(n) for n in names)} FOLDER/`) and open the copy, "
        f"or save its memories without writing it: `{salvage_command(path)}`"
    )


def _check_writable(path: Path, *, advice: bool = True) -> None:
    """Raise a :class:`.StoreError` (:class:`.ReadOnlyDatabase` for permissions) when this
    process cannot write the file at ``path`` as a writable store needs; ``advice`` adds
    how to open it read-only."""
    folder = Path(os.path.realpath(path)).parent  # (the -wal and -shm go beside that file)
    hint = (
        " (to search or export it, open it read-only: Memory.open(..., read_only=True); "
        "the CLI does so by itself)"
        if advice
        else ""
    )
    if path.is_symlink() and not path.exists():  # a link to where a new file will be made
        try:
            target = path.resolve(strict=False)
        except (OSError, RuntimeError) as exc:  # (a loop: RuntimeError before Python 3.13)
            raise StoreError(f"{path} is a symbolic link that leads back to itself") from exc
        if target == path or not target.parent.is_dir():
            raise StoreError(
                f"{path} is a symbolic link to {os.readlink(path)}, whose folder does not "
                "exist (or that leads back to itself)"
            )
    mounted = _mounted_read_only(folder)
    if path.exists() and not os.access(path, os.W_OK):
        said = f"{path} is read-only" if advice else "this process cannot write the file"
        if mounted:
            said = f"{path} is on a file system mounted read-only" if advice else mounted
        raise ReadOnlyDatabase(f"{said}{hint}")
    for name in log_files(path):  # (another user's reader can leave them)
        if os.path.exists(name) and not os.access(name, os.W_OK):
            raise ReadOnlyDatabase(
                f"{name} is not writable by this process{_log_file_fix(name)}{hint}"
            )
    if not folder.exists():
        raise StoreError(f"folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        said = (
            f"folder {folder} is not writable" if advice else "this process cannot write its folder"
        )
        if mounted:
            said = f"folder {folder} is on a file system mounted read-only" if advice else mounted
        raise ReadOnlyDatabase(
            f"{said}: SQLite needs it for the -wal and -shm files" + (hint if path.exists() else "")
        )


def _mounted_read_only(folder: Path) -> str:
    """What to say when ``folder`` is on a file system mounted read-only (a read-only bind
    mount, a CD), else "": no permission or owner would let this process write there,
    so "this process cannot write" would send the user to the wrong fix."""
    return "the file system that holds it is mounted read-only" if mounted_read_only(folder) else ""


def _log_file_fix(name: str) -> str:
    """What to do about SQLite's ``-wal`` or ``-shm`` file ``name`` that this process
    cannot write: its owner's, with its permission, or another user's."""
    if not hasattr(os, "geteuid"):  # Windows: no owners by number; a read-only attribute
        return ": SQLite writes it beside the file; clear its read-only attribute (attrib -r)"
    owner = os.stat(name).st_uid
    fix = (
        "give it write permission (chmod u+w)"
        if owner == os.geteuid()
        else "once no process has the file open, remove it, or write as its owner"
    )
    return f" (owner uid {owner}): SQLite writes it beside the file; {fix}"


def _remove_if_empty(path: Path, *, lock: bool = False) -> None:
    """Remove the file at ``path`` (and its journal files) when it holds nothing: one this
    open made before it failed. A file with any data is left as it is. ``lock``: the lock
    file beside it is new too, and goes with it unless a process holds it."""
    if Store.holds_data(path):
        return
    for name in (f"{path}-wal", f"{path}-shm", f"{path}-journal", str(path)):
        with contextlib.suppress(OSError):
            os.remove(name)
    if lock and not os.path.lexists(path):
        remove_unused(path)
