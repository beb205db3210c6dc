"""The facade: ``Memory.open(path)`` and everything a caller does with a memory file.

    with Memory.open("companion.db") as mem:
        mem.add_exchange("I adopted a cat named Kinako", "Congratulations!")
        retrieval = mem.retrieve("what was my cat's name?")
        print(mem.pack(retrieval).text)

The facade owns the store, the embedder, the thread pool and the clock; it
validates input, batches embedding and writing, and hands retrieval to the
:class:`~memengine.retrieve.retriever.Retriever`.
"""

from __future__ import annotations

import functools
import os
import sys
import threading  # llm phases
import time
import unicodedata
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, wait  # llm phases
from contextlib import contextmanager
from dataclasses import replace  # lifecycle
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, TypeVar

import numpy as np  # lifecycle

from . import arguments as args
from . import lifecycle as life  # lifecycle
from .call_gate import CallGate, gated, gated_job
from .clock import Clock, SystemClock
from .config import FIXED, Config, ends_as_a_folder, fixed_config, fspath, home_expanded
from .embed.base import Embedder, is_embedder
from .embed.factory import make_embedder
from .embed.probe import PROBE_TEXT, ProbedEmbedder, same_model
from .embed.recorded import RecordedOnly
from .errors import (
    ConfigError,
    EmbedderMismatch,
    EmbeddingError,
    InvalidInput,
    LLMTimeout,
    MemEngineError,
    MemoryClosed,
    NotFound,
    StoreError,
)
from .importers import ImportedFile, checked_path, names_a_folder, read_file
from .lazy_re import compile_all
from .models import (
    EPISODE_TIMES,
    Episode,
    EpisodeKind,
    NewEpisode,
    Pack,
    RecentMessage,
    Retrieval,
    Stats,
)
from .pack import build_pack
from .quote import forget_texts as forget_quote_texts
from .retrieve.changes import forget_texts as forget_change_texts
from .retrieve.coverage import check_analyser
from .retrieve.pool import Pool
from .retrieve.retriever import Retriever
from .store.connect import CLOSED, same_process
from .store.database import ConsistencyReport, Store
from .store.maintenance import BackupReport, ForgetReport, OptimizeReport
from .store.salvage import SalvageReport
from .text import (
    analyze,
    counted,
    has_surrogate,
    is_blank,
    name_fault,
    quoted_name,
    scrub,
    shell_word,
    within,
)
from .transfer import kept_ids, not_stored, save_salvaged, write_jsonl

if TYPE_CHECKING:  # llm phases
    from .llm.client import ChatClient
    from .retrieve.turn import LLMTurn

__all__ = ["AddInterrupted", "Memory", "make_embedder"]

Progress = Callable[[int, int], None]

MAX_EMBED_CHARS = 2_000
BULK_EPISODES = 10_000
"""An :meth:`Memory.add_many` of at least this many episodes ends with :meth:`Memory.optimize`."""


class Memory:
    """A memory file opened for reading and writing. Use :meth:`open`."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: Config,
        clock: Clock,
        *,
        llm_client: ChatClient | None = None,  # llm phases
        warm_llm: bool = True,
    ) -> None:
        # the calls under way, which close() lets finish; none in a forked process
        self._gate = CallGate(lambda: same_process(store.connections.opened_in, store.path))
        self.store = store
        self.embedder = embedder
        # what the file's searches and adds embed with: the embedder, checked now and then
        # against the file's probe vector (a model swapped behind the same id)
        self._probed = (
            None
            if isinstance(embedder, RecordedOnly)
            else ProbedEmbedder(
                embedder, store.embedder_probe, str(store.path), stamp=store.probe_stamp
            )
        )
        self._embedder: Embedder = self._probed or embedder
        if self._probed is not None:  # another process re-embedding the file is noticed
            # (weakly: the probed embedder reads the store's probe, and a cycle would keep
            # a closed memory's model until a full garbage collection)
            store.probe_changed = _weakly(self._probed.file_changed)
        # a copy that refuses changes: some settings are read only here and in open (the
        # embedder, the store's caches, the rng), others per call, so a change would take
        # effect in part (and the caller's own config stays theirs to change)
        config = self._config = fixed_config(config)
        self.clock = clock
        self._executor = Pool(max_workers=4, thread_name_prefix="memengine")
        self.retriever = Retriever(  # (a memory that embeds nothing searches nothing)
            store,
            self._embedder,
            config.retrieval,
            self._executor,
            analyser=not isinstance(embedder, RecordedOnly),
        )
        self._life_rng = np.random.default_rng(config.lifecycle.selection_seed)  # lifecycle
        # llm phases: the client is built on the first LLM turn unless one is given (docs/llm.md)
        self._llm_client = llm_client
        self._owns_llm_client = llm_client is None
        self._llm_turn: LLMTurn | None = None
        self._typed_names: dict[str, str] | None = None  # see _agent
        self._llm_lock = threading.Lock()
        self._client_lock = threading.Lock()
        self._llm_closed = False
        # build it in the background now, so the first turn does not pay for importing openai
        # (~1 s): not for a memory opened to embed nothing (show, stats, export…), which runs
        # no turn, and whose close would wait for it (a feedback's judge builds it on use)
        turns = warm_llm and not isinstance(embedder, RecordedOnly)
        self._llm_warm = self._executor.submit(self._llm) if turns and self._use_llm(None) else None

    # -- opening and closing -------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        config: Config | None = None,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        allow_embedder_change: bool = False,
        llm_client: ChatClient | None = None,  # llm phases
        read_only: bool | None = False,
        create: bool = True,
        embeds: bool = True,
        warm_llm: bool = True,
    ) -> Memory:
        """Open (creating or migrating) the memory file at ``path`` (None: the configured
        ``db``, ``memengine.db`` in the working folder; a leading ``~`` is the home folder).

        ``config`` defaults to :class:`Config` defaults (the CLI passes what
        :func:`~memengine.config.load_config` read); the memory keeps a copy that refuses
        changes (:attr:`config`), and the one given stays the caller's. ``embedder`` defaults to
        the configured one; ``clock`` to the system clock. ``llm_client``
        replaces the chat client built from ``[llm]`` for the LLM phases.
        ``read_only`` opens an existing file without writing to it: searches,
        packs and exports work, turns are not recorded, and every write raises
        :class:`ReadOnlyDatabase`; None opens read-only only when this process
        cannot write the file or its folder. ``create`` False opens only a file
        that exists (a mistyped path is a :class:`StoreError`, not a new memory).
        ``embeds`` False is for work that embeds nothing (inspecting, exporting,
        deleting): an existing file opens with the embedder recorded in it, and
        the configured one is not touched (a remote endpoint may be down); an
        add or a search then raises :class:`.EmbedderMismatch`. ``allow_embedder_change``
        opens a file embedded by another embedder than ``embedder`` for :meth:`reembed`
        (without it, :class:`.EmbedderMismatch`). ``warm_llm`` (with ``[llm]`` configured)
        begins building the chat client in the background, so that the first turn does not
        pay for importing openai (~1 s); False for a process that runs no turn (the CLI's
        ``add``, ``import``), whose close would wait for it (as it is for ``embeds`` False).
        """
        args.switches(
            allow_embedder_change=allow_embedder_change,
            read_only=read_only,
            create=create,
            embeds=embeds,
            warm_llm=warm_llm,
            maybe=("read_only",),
        )
        cfg = Config() if config is None else config
        if not isinstance(cfg, Config):
            raise ConfigError(
                f"config is a Config (load_config() reads a TOML file), not {type(cfg).__name__}"
            )
        cfg = fixed_config(cfg)  # (checked before the store reads write_wait_s and the caches)
        if embedder is not None and not is_embedder(embedder):
            raise ConfigError(
                f"embedder is an Embedder (make_embedder builds one), not {type(embedder).__name__}"
            )
        if llm_client is not None and not callable(getattr(llm_client, "complete_json", None)):
            raise ConfigError(  # (every turn would fail on it, past the fast path)
                "llm_client is a ChatClient (ChatClient(base_url=…, api_key=…)), not "
                f"{type(llm_client).__name__}"
            )
        if clock is not None and not callable(clock):
            raise InvalidInput(f"clock is a callable that returns the time, not {clock!r}")
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise InvalidInput(f"a memory file is a path, not {type(path).__name__}")
        if path is not None and not isinstance(fspath(path, InvalidInput, "a memory file"), str):
            raise InvalidInput(f"a memory file is a path of text, not of bytes: {path!r}")
        if isinstance(path, str) and not path.strip():
            raise InvalidInput("the database path is empty")  # Path("") is the folder "."
        if path is not None and ends_as_a_folder(os.fspath(path)) and not os.path.isdir(path):
            raise InvalidInput(  # (Path("m/") is the file "m": it would be made as one)
                f"{os.fspath(path)} ends in a separator (or a . or ..), as a folder's path "
                "does: give the memory file's name (m/memory.db)"
            )
        db = cfg.db
        if path is not None:  # (``~`` is the home folder, as in Config(db=…), MEMENGINE_DB, --db)
            try:
                db = home_expanded(Path(path))
            except ValueError as exc:  # (the message shows the name as typed)
                raise InvalidInput(f"cannot open the memory file: {exc}") from None
        Store.check_file(db)  # a folder, pipe or device is named as such, not as "no file"
        if not create and not Store.holds_data(db):
            what = "an empty file" if db.is_file() else "no memory file"
            raise StoreError(
                f"{what} at {db}: a new memory is made by `memengine init --db "
                f"{shell_word(os.fspath(db))}` (Memory.open(…, create=True), the default)"
            )
        reason = ""
        if read_only is None:
            reason = (Store.unwritable_because(db) or "") if db.exists() else ""
            read_only = bool(reason)
        recorded = not embeds and Store.holds_data(db)  # a new file needs the embedder
        # the configured embedder is neither built nor asked anything when it is not used
        if embedder is not None or recorded:
            emb = embedder
        else:  # a remote embedder may learn its dimension from the file, asking nothing
            known = (  # (a re-embed learns the model's own dimension)
                cfg.embedder.name == "openai"
                and cfg.embedder.dimensions is None
                and not allow_embedder_change
            )
            recorded_id = Store.recorded_embedder(db) if known else None
            if recorded_id is not None:
                ready = bool(cfg.embedder.base_url or cfg.embedder.api_key)
                _refuse_another_model(db, recorded_id, cfg.embedder.model, ready=ready)
            emb = make_embedder(cfg.embedder, recorded_id=recorded_id)
        if emb is not None and not recorded and cfg.retrieval.coverage_min > 0:
            check_analyser()  # (before the file is made: a refused setting leaves none)
        clk = clock or SystemClock
        _clock_time(clk)  # (and a clock the store would refuse, before it writes anything)
        if emb is not None and not recorded:
            _confirm_new_dimension(db, emb)
        store = Store(
            db,
            embedder_id=None if recorded or emb is None else emb.id,
            dimension=None if recorded or emb is None else emb.dimension,
            allow_embedder_change=allow_embedder_change or recorded,
            now=functools.partial(_clock_time, clk),
            neighbour_gap_s=cfg.retrieval.neighbour_gap_minutes * 60,
            vector_cache_mb=cfg.retrieval.vector_cache_mb,
            page_cache_mb=cfg.retrieval.page_cache_mb,
            write_wait_s=cfg.write_wait_s,
            read_only=read_only,
            read_only_reason=reason,
        )
        if recorded or emb is None:
            emb = RecordedOnly(store.embedder_id, store.dimension, store.path)
        try:
            return cls(store, emb, cfg, clk, llm_client=llm_client, warm_llm=warm_llm)
        except BaseException:
            store.close()  # a setting the facade refuses (ConfigError) leaves no file open
            raise

    @property
    def config(self) -> Config:
        """The settings this memory was opened with, fixed: changing one raises
        :class:`ConfigError` (open the file again with a changed copy)."""
        return self._config

    @config.setter
    def config(self, value: object) -> None:
        raise ConfigError(FIXED)

    @property
    def read_only(self) -> bool:
        """Whether the file was opened read-only (see :meth:`open`)."""
        return self.store.read_only

    @property
    def closed(self) -> bool:
        """Whether the memory is closed (while it closes, calls already get
        :class:`.MemoryClosed`)."""
        forked = os.getpid() != self.store.connections.opened_in  # (close() only refuses there)
        return self.store.closed or (forked and self._gate.closing)

    def __repr__(self) -> str:
        """``<Memory 'memory.db' open>``: the file and whether it is open, read-only, closing
        (it refuses calls; a close that could not finish leaves it so) or closed."""
        state = (
            "closed"
            if self.closed
            else "closing"
            if self._gate.closing
            else "read-only"
            if self.read_only
            else "open"
        )
        return f"<Memory {os.fspath(self.store.path)!r} {state}>"

    def close(self, *, wait_s: float = 60.0) -> None:
        """Finish the calls under way and background work, then close the file.

        A call that another thread has under way when this is called (a turn's
        retrieve, an ``add_exchange``, a ``feedback``, a ``sleep``…) finishes, for at most
        ``wait_s`` (past it a :class:`.StoreError`, and nothing is closed: close again to
        wait more); a new call gets a :class:`.MemoryClosed`. Long jobs (imports,
        ``add_many``, ``reembed``, ``optimize``, ``backup``, ``export``) stop at their next
        transaction, the one under way committed first (:mod:`memengine.call_gate`). In
        a process forked from the one that opened the memory, it only refuses further
        calls: the parent's connections and threads are not the child's to close.

        Called from inside a call of the same thread (a signal handler, a callback; on an
        asyncio loop's thread, while a task has a call under way) or of a :meth:`turn`
        (``await asyncio.to_thread(mem.close)`` in it), it refuses new calls and returns
        at once; the close itself runs when that call returns (when the call is a long
        job, it stops at its next transaction or batch first; on a loop's thread, on a
        thread of its own). If that close cannot finish (calls of other threads still
        under way past ``wait_s``), the interrupted call's outcome stands, the memory
        keeps refusing calls (:class:`.MemoryClosed` names why), and the next ``close()``
        tries again. ``wait_s`` may be ``math.inf``."""
        wait_s = args.wait_seconds(wait_s)
        if os.getpid() != self.store.connections.opened_in:
            self._gate.close(0.0, others=False)
            return
        if self._gate.close_later(lambda: self.close(wait_s=wait_s)):
            if self._gate.in_job:
                self.store.connections.stop_this_thread()
            return
        self._gate.close(wait_s)
        self._close_llm()  # llm phases
        self.retriever.close()
        self.store.close()
        self._executor.shutdown(wait=True)

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Hold a ``close()`` off for a whole conversation turn (retrieve, pack, the reply,
        ``add_exchange``, ``feedback``): the body counts as one call under way, so a close
        from another thread waits for it like for one call, and the body's calls are not
        refused meanwhile, nor are those it runs with ``asyncio.to_thread`` (they carry its
        context). A :class:`.MemoryClosed` at once when the memory is closing.

        ``with mem.turn(): …`` keeps a shutdown from storing half a turn (the retrieval
        made, the exchange refused). ``loop.run_in_executor`` does not carry the context,
        so its calls are outside the turn and a close refuses them: use
        ``asyncio.to_thread``, or ``loop.run_in_executor(None,
        contextvars.copy_context().run, fn, *args)``."""
        with self._gate.turn():
            yield

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------
    @gated
    def add_exchange(
        self,
        user: str | None,
        reply: str | None = None,
        *,
        agent: str | None = None,
        occurred_at: datetime | None = None,
        sensitivity: int = 0,
        importance: float = 0.5,
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
    ) -> int:
        """Store one exchange (the user's words and the partner's reply); return its id.

        ``occurred_at`` (default: the clock; without a zone, one of ``time_zone``) dates it;
        ``sensitivity`` 0–3 is what a retrieval's ``max_sensitivity`` leaves out above;
        ``importance`` 0–1 orders the memories of a time a message asks about ("What did I
        do yesterday?") that its searches did not find: the most important are fetched by
        their date first (``by_date``); no ranking or sleep reads it. ``tags`` and
        ``metadata`` are kept with it (tags are searched too)."""
        episode = self._new(
            kind=EpisodeKind.exchange,
            user_text=user,
            reply_text=reply,
            agent=agent,
            occurred_at=occurred_at,
            sensitivity=sensitivity,
            importance=importance,
            tags=tags,
            metadata=metadata,
        )
        return self._add_many([episode])[0]

    @gated
    def add(
        self,
        content: str,
        *,
        kind: EpisodeKind | str = EpisodeKind.observation,
        agent: str | None = None,
        occurred_at: datetime | None = None,
        sensitivity: int = 0,
        importance: float = 0.5,
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
    ) -> int:
        """Store one episode of another kind (observation, fact, principle, …); return its id.

        The other arguments are :meth:`add_exchange`'s."""
        if args.episode_kind(kind) is EpisodeKind.exchange:  # (its text is user and reply)
            raise InvalidInput(
                "add stores one text of another kind (a fact, an observation, …): an "
                "exchange, a user's words and the reply, is stored by add_exchange(user, reply)"
            )
        episode = self._new(
            kind=args.episode_kind(kind),
            content=content,
            agent=agent,
            occurred_at=occurred_at,
            sensitivity=sensitivity,
            importance=importance,
            tags=tags,
            metadata=metadata,
        )
        return self._add_many([episode])[0]

    def _new(self, **fields: Any) -> NewEpisode:
        fields["agent"] = self._new_agent(self._agent(fields.get("agent")))
        when = fields.get("occurred_at")
        if when is not None and not isinstance(when, datetime):  # (not a Unix timestamp)
            raise InvalidInput(f"occurred_at is a datetime, not {type(when).__name__}")
        # a naive time is one of the configured zone
        fields["occurred_at"] = self._now() if when is None else self.config.localize(when)
        return args.new_episode(**fields)

    def _validated(self, ep: NewEpisode | Episode, *, copied: bool = False) -> NewEpisode:
        """``ep`` as it is stored: checked (:func:`.arguments.checked_episode`; ``copied``,
        or an :class:`.Episode`, is an episode stored before and copied as it was, so a text
        field its kind is not searched by is kept, as older files hold), its agent as this
        file knows it (one that names none: the configured agent's, as :meth:`add`'s), its
        strength defaulted by kind."""
        if isinstance(ep, Episode):  # one read from another memory: copied as it was
            fields = NewEpisode.model_fields
            ep = NewEpisode.model_validate({k: getattr(ep, k, None) for k in fields})
            copied = True
        if not isinstance(ep, NewEpisode):
            raise InvalidInput(
                f"episodes to add are NewEpisode models, not {type(ep).__name__} "
                "(NewEpisode.model_validate(a_dict) makes one)"
            )
        # before the check puts the name in NFC; one left out is the configured agent's
        agent = self._agent(ep.agent if "agent" in ep.model_fields_set else None)
        if not copied:  # (an import keeps the names its file holds)
            self._new_agent(agent)
        naive = {  # a time without a zone is one of the configured time_zone, as in add
            k: self.config.localize(v)
            for k in EPISODE_TIMES
            if (v := getattr(ep, k)) is not None and v.tzinfo is None
        }
        ep = args.checked_episode(ep.model_copy(update=naive) if naive else ep, copied=copied)
        if ep.status == "archived" and life.strength.is_principle(ep.kind.value, ep.tags):
            if not copied:  # (it would be packed never again, and no sleep revives it)
                raise InvalidInput(
                    "a principle (kind principle, or a tag PRINCIPLE) is never archived: "
                    "store it with status active, or as another kind"
                )
            # an export of an older file, whose sleep archived a memory tagged "Principle"
            # (a principle in any case since): imported as what it is now, active
            ep = ep.model_copy(update={"status": "active"})
        strength = ep.strength
        if strength is None and ep.kind is EpisodeKind.education:
            strength = self.config.lifecycle.read_only_strength
        elif strength is None:
            strength = self.config.lifecycle.initial_strength
        return ep.model_copy(update={"agent": agent, "strength": strength})

    @gated_job
    def add_many(
        self,
        episodes: Iterable[NewEpisode | Episode],
        *,
        batch_size: int = 256,
        progress: Progress | None = None,
        total: int | None = None,
        optimize: bool | None = None,
    ) -> list[int]:
        """Store many episodes, one transaction per batch; return their ids in order.

        Identical texts are embedded once. An :class:`.Episode` read from a memory
        is added as it was (its id, times, strength and status). A failing batch
        leaves the file as it was before that batch (earlier batches stay
        written). ``optimize``
        runs :meth:`optimize` at the end; by default it does when at least
        :data:`BULK_EPISODES` episodes were added and they are a tenth of the
        file or more (the merge rewrites the whole full-text index).
        """
        return self._add_many(
            episodes, batch_size=batch_size, progress=progress, total=total, optimize=optimize
        )

    def _add_many(
        self,
        episodes: Iterable[NewEpisode | Episode],
        *,
        batch_size: int = 256,
        progress: Progress | None = None,
        total: int | None = None,
        optimize: bool | None = None,
        checked: bool = False,
        bulk: int = 0,
    ) -> list[int]:
        """:meth:`add_many`; ``checked``: the episodes are :meth:`_validated` already (an
        import checks every one before it writes any); ``bulk``: how many episodes the load
        holds in all (an import that finishes an interrupted one adds fewer: it merges the
        full-text index when the whole load is bulk-sized)."""
        args.switches(optimize=optimize, checked=checked, maybe=("optimize",))
        episodes = args.episode_source(episodes)  # every argument checked before a write
        batch_size = args.batch_size(batch_size)
        progress = args.progress_callback(progress)
        if total is not None:
            total = args.at_least(total, 0, "total")
        self._writable()
        if progress and total == 0:  # (nothing to write: a caller still learns the plan)
            progress(0, 0)
        ids: list[int] = []
        batch: list[NewEpisode] = []
        done = 0
        writing = [0]  # the episodes of a batch handed to the store and not yet counted
        given_all = False  # (the source is exhausted: none is left to add)
        call = object()  # (the errors this call counted: not another's, a callback's)
        try:
            for k, ep in enumerate(episodes):
                try:
                    batch.append(
                        ep if checked and isinstance(ep, NewEpisode) else self._validated(ep)
                    )
                except InvalidInput as exc:  # (checked one by one as the source gives them)
                    if not k:  # the first (or only: add, add_exchange): nothing to place
                        raise
                    raise _counted(
                        InvalidInput(
                            f"episode {k + 1:,} of those given: {exc}" + _stored_note(done, checked)
                        ),
                        done,
                        call,
                    ) from exc
                if len(batch) >= batch_size:
                    if not checked:
                        self._refuse_named_ids(batch, done, call)
                    ids.extend(self._write(batch, done, call, writing))
                    done += len(batch)
                    writing[0] = 0  # (no interrupt comes between these two: no call)
                    batch = []
                    if progress:
                        progress(done, total or done)
            given_all = True
            if batch:
                if not checked:
                    self._refuse_named_ids(batch, done, call)
                ids.extend(self._write(batch, done, call, writing))
                done += len(batch)
                writing[0] = 0
                if progress:
                    progress(done, total or done)
        except KeyboardInterrupt as exc:  # Ctrl-C (a notebook's "interrupt"): the batches
            if len(ids) > done:  # (the store gave the batch's ids back: it is in)
                done, writing[0] = len(ids), 0
            if not done and not writing[0]:  # written are kept, and a retry of the whole list
                raise  # would store them twice: say how many, and give their ids
            raise AddInterrupted(
                "interrupted" + _interrupted_note(done, writing[0], given_all, checked),
                stored=done,
                writing=writing[0],
                ids=ids,
            ) from exc
        except MemEngineError as exc:  # closed, locked, a full disk, an id taken: say what
            if exc.counted_by is call:  # is in (a retry of the whole list would store those
                raise  # twice); said already here: a line that does not check, an embedding
            if not done:  # (another call's count, a progress callback's, is not ours)
                _counted(exc, done)
                raise
            raise _counted(type(exc)(f"{exc}{_stored_note(done, checked)}"), done) from exc
        if optimize or (
            optimize is None
            and max(len(ids), bulk) >= BULK_EPISODES
            and max(len(ids), bulk) * 10 >= self.store.count()  # counted after a bulk load
        ):
            try:
                self.optimize()
            except KeyboardInterrupt as exc:  # every episode is in: only the merge is not
                if not done:
                    raise
                raise AddInterrupted(
                    f"interrupted after all {counted(done, 'episode')} given were stored, "
                    "in the full-text index merge that follows a bulk load: run optimize() "
                    "(memengine optimize) later",
                    stored=done,
                    writing=0,
                    ids=ids,
                ) from exc
            except StoreError as exc:  # every episode is in: only the merge is not
                if not done:
                    _counted(exc, done)
                    raise
                merged = type(exc)(
                    f"{exc} (all {counted(done, 'episode')} stored; only the full-text index "
                    "merge that follows a bulk load was not done: run optimize() "
                    "(memengine optimize) later)"
                )
                raise _counted(merged, done) from exc
        return ids

    @gated_job
    def optimize(
        self, *, vectors: bool = False, scrub: bool = False, progress: Progress | None = None
    ) -> OptimizeReport:
        """Merge the full-text index into one segment and truncate the WAL (after bulk loads).

        A file written in many batches keeps many full-text segments, and
        every term lookup reads each one. The merge takes about 15 s per
        million episodes on 2 cores, in short write transactions. With
        ``vectors``, a vector table of an older layout (another chunk size,
        see ``memengine stats``) is first rewritten in the current one, in
        one transaction, calling ``progress(done, total)`` as it goes. ``scrub``
        also links every turn's neighbour words again under the current rule and
        ``neighbour_gap_minutes``: a changed gap reaches the turns stored before only
        so, as the rule reaches a file written when a turn lent its words to turns
        less sensitive. It then compacts the file (``VACUUM``), so that nothing
        deleted stays in its free pages (see :meth:`delete`).
        """
        args.switches(vectors=vectors, scrub=scrub)
        progress = args.progress_callback(progress)
        self._writable()
        return self.store.optimize(vectors=vectors, scrub=scrub, progress=progress)

    def _refuse_named_ids(
        self, batch: list[NewEpisode], stored_before: int, call: object = None
    ) -> None:
        """InvalidInput for an id given in ``batch`` that a recorded turn or sleep names (a
        deleted episode's: kept, a feedback on that turn would read and reinforce the
        new one, maybe another agent's), as an import refuses it."""
        given = [e.id for e in batch if e.id is not None]
        if not given:
            return
        # a stored id is a clash, said when it is written
        named = self.store.named_by_records(sorted(set(given) - self.store.existing(given)))
        if named:
            kept = f" ({stored_before:,} stored before this batch)" if stored_before else ""
            refused = InvalidInput(
                f"episode id {named[0]} belonged to an episode deleted from this memory, and a "
                f"recorded turn or sleep names it: an id is never given out twice; this batch "
                f"was not written{kept}. Leave the id out (None) to get a new one"
            )
            raise _counted(refused, stored_before, call)

    def _write(
        self,
        batch: list[NewEpisode],
        stored_before: int = 0,
        call: object = None,
        writing: list[int] | None = None,
    ) -> list[int]:
        """Embed and store one batch; ``stored_before`` episodes of the call are in already.
        ``writing[0]`` is set to the batch's size once it is handed to the store (the caller
        sets it back when it has counted them): an interrupt in between may come after the
        commit."""
        texts = [_episode_text(ep) for ep in batch]
        try:
            vectors = self._embedder.embed([t[:MAX_EMBED_CHARS] for t in texts])
        except EmbeddingError as exc:  # said here, where it is known what was written
            kept = (
                f"the {stored_before} episodes before this batch were stored, the rest not"
                if stored_before
                else "nothing was stored"
                if exc.lasting  # (its message says what to change: again, it fails alike)
                else "nothing was stored; add it again later"
            )
            told = type(exc)(f"{exc} ({kept})")
            told.lasting = exc.lasting
            raise _counted(told, stored_before, call) from exc
        probe = self._probed.unrecorded() if self._probed is not None else None
        search_texts = [analyze(t) for t in texts]
        if writing is not None:
            writing[0] = len(batch)
        ids = self.store.add(batch, search_texts, vectors, probe=probe)
        if self._probed is not None and probe is not None:
            self._probed.recorded_now()
        return ids

    @gated_job
    def backup(self, dest: str | os.PathLike[str], *, overwrite: bool = False) -> BackupReport:
        """Copy the whole memory file to ``dest`` while it stays in use (see :meth:`Store.backup`).

        Unlike :meth:`export`, the copy keeps everything: vectors, usage
        counters, perspectives, turns and learned scorers. Open it like any
        memory file. To restore it, stop every process that has the original open, delete
        the original's ``-wal`` and ``-shm`` (SQLite would replay them onto the copy), and
        put the copy in its place.
        """
        args.switches(overwrite=overwrite)
        checked_path(dest, "a backup goes to a file's path (a str)")
        if not str(os.fspath(dest)).strip():
            raise InvalidInput("a backup needs a file's path, not an empty one")
        if names_a_folder(dest):
            raise InvalidInput(f"{dest} is a folder: give the backup's file name")
        return self.store.backup(dest, overwrite=overwrite)

    @gated
    def delete(
        self,
        ids: int | Sequence[int],
        *,
        agent: str | None = None,
        all_agents: bool = False,
        scrub: bool = False,
    ) -> list[int]:
        """Delete exactly these episodes of the agent :meth:`get` reads them of; return what
        was deleted (another agent's id is left, as an absent one). The learnings a
        feedback kept on them go from the other memories its turn used too.

        Their bytes stay in the file's free pages and old full-text segments until
        overwritten; ``scrub`` removes those too (a full-text rebuild, ``VACUUM`` and
        an empty log: seconds for a large file, while writers wait) and empties this
        process's caches of users' text, as :meth:`forget_agent` does. An agent the file
        does not know (``agent``, or the configured one) is NotFound ("no agent named
        'ghost'"), not nothing deleted: a typo must not read as ids that are not its.
        """
        args.switches(scrub=scrub, all_agents=all_agents)
        scope = self.config.agent_scope(agent, all_agents=all_agents)
        self._writable()
        if isinstance(ids, (str, bytes)):
            raise InvalidInput(f"episode ids must be whole numbers, not the text {ids!r}")
        one = args.whole(ids)
        if one is None and (not isinstance(ids, Iterable) or isinstance(ids, bool)):
            raise InvalidInput(f"episode ids are a whole number or a list of them, not {ids!r}")
        given: list[Any] = [one] if one is not None else list(ids)  # type: ignore[arg-type]
        numbers = [args.whole(i) for i in given]
        if any(i is None for i in numbers):
            raise InvalidInput(f"episode ids must be whole numbers: {given!r}")
        owner = (
            None if scope is None else self._known_agent(scope, self._scope_hint(agent, all_agents))
        )
        id_list = [i for i in numbers if i is not None and 0 < i <= args.MAX_ID]
        if not id_list:
            return []
        try:
            return self.store.delete(id_list, agent=owner, scrub=scrub)
        finally:
            if scrub:  # (deleted too when the compaction was kept from finishing)
                self._forget_texts()

    @gated
    def forget_agent(self, agent: str) -> ForgetReport:
        """Delete an agent and everything of it (a user who asks to be forgotten): its
        episodes, its turns, sleeps and learned scorer, and the agent
        itself, overwriting the freed pages (see :meth:`.Store.forget_agent`). NotFound for
        an agent the file does not know. Backups made before keep their copy. A Ctrl-C
        stays a KeyboardInterrupt, with a note saying whether the agent is forgotten."""
        self._writable()
        name = self._agent_name(agent)
        # every spelling of the name: one in NFC, and one an earlier version stored as typed
        names = [
            a.name
            for a in self.agents()
            if a.name == name or unicodedata.normalize("NFC", a.name) == name
        ]
        if not names:
            pending = self.store.scrub_pending()
            hint = (
                f" (the compaction after {pending} has not finished, or is under way in "
                "another thread: once it is not, `memengine optimize --scrub`, "
                "optimize(scrub=True), removes what may remain of its text)"
                if pending is not None
                else ""
            )
            raise NotFound(f"no agent {quoted_name(agent)} in {self.store.path}{hint}")
        reports: list[ForgetReport] = []

        def stored() -> set[str]:
            return {a.name for a in self.agents()}

        try:
            for n in names:
                reports.append(self.store.forget_agent(n))
        except StoreError as exc:  # a privacy request: say whether the agent is still there
            raise _not_forgotten(exc, agent, names, stored) from exc
        except (KeyboardInterrupt, SystemExit) as stop:  # Ctrl-C, SIGTERM: mostly compacting
            _add_note(stop, _stopped_forget(agent, names, stored))
            raise  # (a KeyboardInterrupt still: the program stops as it would have)
        finally:  # (a delete that committed before the stop leaves no words in them either)
            self._typed_names = None  # a name stored as typed may be gone
            self._forget_texts()
        return ForgetReport(
            name,
            sum(r.episodes for r in reports),
            sum(r.turns for r in reports),
            vacuumed=all(r.vacuumed for r in reports),
            wal_truncated=reports[-1].wal_truncated,
            not_compacted=next((r.not_compacted for r in reports if r.not_compacted), ""),
        )

    def _forget_texts(self) -> None:
        """Empty this process's caches that hold users' words, after a forgotten agent or a
        scrubbed delete: the retriever's word vectors, the store's word counts, the pack's patterns of a query's
        words and folded sentences, what the later-change check read of each text, the LLM
        phases' expansions and query vectors."""
        self.retriever.forget_texts()  # the coverage's words are the user's too
        self.store.term_stats.forget()  # (its counts are keyed by the words searched)
        forget_quote_texts()  # and the patterns of a query's words the pack's quotes compiled
        forget_change_texts()  # and what the later-change check read of each text
        with self._llm_lock:  # llm phases: cached expansions and vectors hold the messages
            if self._llm_turn is not None:
                self._llm_turn.forget_texts()

    # -- reading ---------------------------------------------------------------------------
    @gated
    def get(
        self, episode_id: int, *, agent: str | None = None, all_agents: bool = False
    ) -> Episode:
        """The episode with this id, or NotFound: only ``agent``'s when given, else only the
        agent the configuration names on purpose (:meth:`.Config.agent_scope`: a server that
        passes a client's id on shows no other user's); any agent's with ``all_agents`` or
        when none is named."""
        args.switches(all_agents=all_agents)
        owner = self._agent_or_all(self.config.agent_scope(agent, all_agents=all_agents))
        found = self.store.get([args.episode_id(episode_id)])
        if episode_id not in found or (owner is not None and found[episode_id].agent != owner):
            hint = self._scope_hint(agent, all_agents)
            raise NotFound(f"no episode with id {episode_id}{_of(owner)}{hint}")
        return found[episode_id]

    def _scope_hint(self, agent: str | None, all_agents: bool) -> str:
        """What to add to a call by id's NotFound when its agent came from the
        configuration (no ``agent``, no ``all_agents``): the caller may not know that a
        named agent scopes it, and the message says how to reach another's ("" otherwise)."""
        if agent is not None or all_agents or self.config.named_agent() is None:
            return ""
        return (
            " (the agent this memory's configuration names; pass agent=… for another "
            "agent's, or all_agents=True)"
        )

    @gated
    def retrieve(
        self,
        text: str,
        *,
        recent: Sequence[RecentMessage] = (),
        agent: str | None = None,
        extra_queries: Sequence[str] = (),
        kinds: Sequence[EpisodeKind | str] | None = None,
        max_sensitivity: int | None = None,
        day_range: int | bool | None = True,
        limit: int | None = None,
        deep: bool = False,
        perspective: str | None = None,  # lifecycle
        rank: life.Ranking | None = None,  # lifecycle
        llm: bool | None = None,  # llm phases
        record: bool | None = None,
        now: datetime | None = None,
    ) -> Retrieval:
        """Find the past episodes that matter for the user's new ``text``.

        ``recent`` is the current conversation (oldest first, without ``text``) as
        Messages, dicts (``{"role", "text"}``, or OpenAI's chat messages as they are:
        tool messages and tool calls are left out) or plain strings. ``agent`` None is
        the configured ``agent`` ("default"). ``extra_queries`` are searched beside ``text``
        (your own rewrites, as the LLM's expansion adds its). ``kinds`` keeps to those
        episode kinds (``"exchange"``, ``"fact"``…; None: all). ``limit`` is how many
        results come back at most (None: ``[retrieval] max_results``, 5), and never more
        than the candidates a turn ranks (``[retrieval] max_candidates``, 40: raise it for
        a longer list). ``day_range`` True uses
        the configured window (``[retrieval] occurred_day_range``), a number the last that
        many days, None or False all time. ``deep`` also searches
        archived memories (those it offers the reply become active again). ``rank="life"``
        uses the life-aware ranking (default: ``[lifecycle] life_ranking``);
        ``perspective`` names the task's perspective. The returned ``turn_id``
        is what :meth:`feedback` takes. ``llm`` None uses the LLM phases
        (expansion, rerank; see docs/llm.md) when ``[llm]`` is configured;
        True requires them, False keeps to the fast path. ``max_sensitivity``
        leaves out episodes stored with a higher ``sensitivity`` (None: ``[retrieval]
        max_sensitivity``, 3 unless set, so everything). ``record`` False
        leaves no trace (no turn, no ``candidate_count``, and ``deep`` returns
        archived memories without making them active again; for a search that
        is not a conversation turn); None follows ``[lifecycle] record_turns``. A
        read-only file records nothing, nor does a turn of an agent the file
        does not know yet (see :meth:`has_agent`): ``turn_id`` is then None.
        ``now`` (default: the clock) is the moment of the message, in the user's
        time zone: "yesterday" and 昨日 are days of that zone; with ``time_zone`` set, a
        ``now`` in UTC (``datetime.now(timezone.utc)``) or at that zone's offset is read
        in it, one in another zone (``ZoneInfo``) is kept.
        """
        return self._retrieve(
            text, recent=recent, agent=agent, extra_queries=extra_queries, kinds=kinds,
            max_sensitivity=max_sensitivity, day_range=day_range, limit=limit, deep=deep,
            perspective=perspective, rank=rank, llm=llm, record=record, now=now,
        )  # fmt: skip

    def search(
        self,
        text: str,
        *,
        agent: str | None = None,
        kinds: Sequence[EpisodeKind | str] | None = None,
        max_sensitivity: int | None = None,
        day_range: int | bool | None = True,
        limit: int | None = None,
        deep: bool = False,
        now: datetime | None = None,
    ) -> Retrieval:
        """Search for ``text`` as a search box does (``memengine search``): the fast path
        alone (no LLM), no turn recorded (``record=False``), and no repeat set aside, so a
        memory that says the words, a greeting among them, is found first. The other
        arguments are :meth:`retrieve`'s."""
        return self._retrieve(
            text, agent=agent, kinds=kinds, max_sensitivity=max_sensitivity,
            day_range=day_range, limit=limit, deep=deep, llm=False, record=False, now=now,
            repeats=False,
        )  # fmt: skip

    def _retrieve(
        self,
        text: str,
        *,
        recent: Sequence[RecentMessage] = (),
        agent: str | None = None,
        extra_queries: Sequence[str] = (),
        kinds: Sequence[EpisodeKind | str] | None = None,
        max_sensitivity: int | None = None,
        day_range: int | bool | None = True,
        limit: int | None = None,
        deep: bool = False,
        perspective: str | None = None,
        rank: life.Ranking | None = None,
        llm: bool | None = None,
        record: bool | None = None,
        now: datetime | None = None,
        repeats: bool = True,
    ) -> Retrieval:
        """:meth:`retrieve`; ``repeats`` False sets no repeat aside (:meth:`search`)."""
        args.switches(deep=deep, llm=llm, record=record, maybe=("llm", "record"))
        if self.store.closed:
            raise MemoryClosed(CLOSED)
        if not isinstance(text, str):
            raise InvalidInput(f"the text must be a string, not {type(text).__name__}")
        cleaned = scrub(text)
        messages = args.recent_messages(recent)
        if is_blank(cleaned) and all(is_blank(m.text) for m in messages):
            raise InvalidInput("nothing to search for: the text is empty")
        if max_sensitivity is None:
            max_sensitivity = self.config.retrieval.max_sensitivity
        max_sensitivity = args.sensitivity_level(max_sensitivity)
        limit = args.result_limit(limit)
        day_range = args.day_range(day_range)
        queries = args.extra_queries(extra_queries)
        agent_name = self._agent(agent)
        if isinstance(now, datetime):  # without a zone, or in UTC: one of the configured zone
            now = self.config.message_time(args.moment(self.config.localize(now), "now"))
        now = args.moment(now, "now") if now is not None else self._now()
        window = self.config.retrieval.occurred_day_range if day_range is True else day_range
        filters = self.retriever.filters(
            agent=agent_name,
            now=now,
            kinds=args.kinds(kinds),
            max_sensitivity=max_sensitivity,
            day_range=window if window is not False else None,
            deep=deep,
            day_range_asked=day_range is not True,
        )
        # lifecycle: life ranking re-ranks every candidate; the turn is recorded afterwards
        life_cfg = self.config.lifecycle
        ranking: life.Ranking = (
            rank if rank is not None else ("life" if life_cfg.life_ranking else "fast")
        )
        if ranking not in ("fast", "life"):
            raise InvalidInput(f"rank must be 'fast' or 'life', not {rank!r}")
        if perspective is not None:
            perspective = self._perspective(agent_name, perspective)
        # llm phases: the LLM turn when enabled, else the fast path
        started = time.monotonic()  # the turn's deadline covers the wait for the client
        run: Callable[..., Retrieval] = functools.partial(self.retriever.retrieve, repeats=repeats)
        unbuilt = ""  # why the LLM phases could not run (the client cannot be built)
        if self._use_llm(llm):
            deadline_s = self.config.llm.turn_deadline_s
            try:
                turn = self._llm_within(deadline_s)
            except ConfigError as exc:  # (a proxy in the environment it cannot use)
                if llm:  # asked for by name: the caller hears why not
                    raise
                unbuilt = f"the LLM client cannot be built: {exc}"
            else:
                if turn is None:  # as a phase past the deadline: the fast path answers
                    unbuilt = (
                        f"the LLM client was not ready within the turn's deadline of "
                        f"{deadline_s:.3g}s (turn_deadline_s; it is built once, importing openai)"
                    )
                else:
                    run = functools.partial(turn.run, started=started)
        waited = time.monotonic() - started  # for the chat client, built once in the background
        retrieval = run(
            cleaned,
            recent=messages,
            filters=filters,
            now=now,
            extra_queries=[scrub(q) for q in queries],
            limit=self.config.retrieval.max_candidates if ranking == "life" else limit,
        )
        update: dict[str, Any] = {
            "agent": agent_name,
            "max_sensitivity": max_sensitivity,
            "now": now,
        }
        if waited >= 0.001:  # within the turn's deadline: the first turn after open waits
            update["timings_ms"] = {**retrieval.timings_ms, "llm_client": round(waited * 1000, 3)}
        if unbuilt:  # the fast path answered: each phase says why it did not run
            skipped = [f"{phase}: skipped, {unbuilt}" for phase in ("expansion", "rerank")]
            update["degraded"] = (*skipped, *retrieval.degraded)
        retrieval = retrieval.model_copy(update=update)
        return life.after_retrieve(
            self.store,
            self.retriever.fast.deadlined,  # the turn's own wait for its vectors
            life_cfg,
            retrieval,
            agent=agent_name,
            now=now,
            perspective=perspective,
            ranking=ranking,
            k=limit or self.config.retrieval.max_results,
            deep=deep,
            record=life_cfg.record_turns if record is None else bool(record),
            recall=record is not False,
            rng=self._life_rng,
        )

    # -- llm phases ---------------------------------------------------------------------------
    @property
    def llm_configured(self) -> bool:
        """Whether an LLM endpoint is available (``[llm] base_url``/``api_key`` or ``llm_client``)."""
        return self._llm_client is not None or self.config.llm.configured

    @property
    def llm_counters(self) -> dict[str, int]:
        """Running totals of the LLM turns since open, by phase and status
        (``expansion.ok``, ``rerank.timeout``, ``rerank.unknown_ids``, ``window.llm``, …);
        empty before the first one."""
        turn = self._llm_turn
        return turn.counters if turn is not None else {}

    def _use_llm(self, llm: bool | None) -> bool:
        phases = self.config.llm.expansion_enabled or self.config.llm.rerank_enabled
        if llm is None:
            return self.llm_configured and phases
        if llm and not self.llm_configured:
            raise ConfigError(
                "llm=True (--llm) needs an LLM endpoint: set [llm] base_url (or api_key)"
            )
        return bool(llm) and phases

    def _llm(self) -> LLMTurn:
        """The LLM turn runner, built (with its chat client) on first use."""
        with self._llm_lock:
            if self._llm_turn is None:
                from .retrieve.turn import LLMTurn

                self._llm_turn = LLMTurn(
                    self.store,
                    self._embedder,
                    self.config.retrieval,
                    self.config.llm,
                    self._chat_client(),
                    self._executor,
                    reach=self.retriever.timed_reach,
                    refine=self.retriever.refine,
                    decide=self.retriever.decide,
                    held=self.retriever.held,
                    repeats=self.retriever.repeats,
                )
            return self._llm_turn

    def _chat_client(self) -> ChatClient:
        """The chat client: the one given to :meth:`open`, else one for ``[llm]`` built on
        first use (and closed with this memory)."""
        with self._client_lock:
            if self._llm_closed:
                raise MemoryClosed(CLOSED)
            if self._llm_client is None:
                from .llm.client import ChatClient

                self._llm_client = ChatClient.from_config(self.config.llm)
            return self._llm_client

    def _llm_within(self, wait_s: float) -> LLMTurn | None:
        """The LLM turn runner, or None when its chat client is not ready within ``wait_s``
        seconds (:func:`_built_within`)."""
        return _built_within(self._executor, self._llm, self._llm_turn, wait_s)

    def _chat_client_within(self, wait_s: float) -> ChatClient | None:
        """The chat client, or None when it is not ready within ``wait_s`` seconds
        (:func:`_built_within`)."""
        return _built_within(self._executor, self._chat_client, self._llm_client, wait_s)

    def _close_llm(self) -> None:
        if self._llm_warm is not None:
            wait([self._llm_warm])  # a failure there resurfaces on the next LLM turn, not here
        with self._llm_lock:
            if self._llm_turn is not None:
                self._llm_turn.close()
                self._llm_turn = None
        with self._client_lock:
            self._llm_closed = True
            if self._llm_client is not None and self._owns_llm_client:
                self._llm_client.close()
                self._llm_client = None

    @gated
    def pack(
        self,
        retrieval: Retrieval,
        *,
        query: str = "",
        budget_tokens: int | None = None,
        agent: str | None = None,  # lifecycle
        principles: bool = True,  # lifecycle
    ) -> Pack:
        """Render a retrieval as a MemoryPack (empty when nothing should be injected).

        The agent's principles (the retrieval's agent; ``agent``, when given, must be the
        same; a retrieval without one, read from JSON that lacks it, needs ``agent``) are
        always included, in their own token budget
        (``[lifecycle] principle_token_budget``), unless ``principles`` is False;
        like the results, only those within the retrieval's ``max_sensitivity``.
        ``budget_tokens`` (None: the default) is a whole number ≥ 1. ``query`` (the user's
        message) picks what a long memory is quoted by and the phrases a reason names, read
        as the searches read it (``[retrieval] max_query_chars``: a long one's beginning and
        end, :func:`.text.within`). A result deleted since the retrieval (``delete``,
        ``forget_agent``) is left out.
        """
        args.switches(principles=principles)
        if not isinstance(retrieval, Retrieval):
            raise InvalidInput(f"pack takes what retrieve returned, not {type(retrieval).__name__}")
        if not isinstance(query, str):
            raise InvalidInput(f"pack's query is the message's text, not {type(query).__name__}")
        if budget_tokens is not None:
            budget_tokens = args.at_least(budget_tokens, 1, "budget_tokens")
        if retrieval.results:  # a user's deleted words are not sent to the model after all
            alive = self.store.existing([r.episode.id for r in retrieval.results])
            if len(alive) < len(retrieval.results):
                kept = tuple(r for r in retrieval.results if r.episode.id in alive)
                retrieval = retrieval.model_copy(update={"results": kept})
        # lifecycle: the agent's principles, whatever the query
        rules: list[Episode] = []
        if agent is not None and retrieval.agent and self._agent(agent) != retrieval.agent:
            raise InvalidInput(  # (another agent's principles beside this one's memories)
                f"pack's agent {quoted_name(agent)} is not the retrieval's "
                f"({quoted_name(retrieval.agent)}): leave agent out, or retrieve for it"
            )
        if principles and agent is None and retrieval.agent is None:
            raise InvalidInput(  # (the configured agent's principles beside anyone's memories)
                "this retrieval does not say its agent: give pack the agent it was retrieved "
                "for (agent=…), or principles=False"
            )
        if principles:
            owner = self._agent(agent if agent is not None else retrieval.agent)
            rules = [
                p
                for p in life.principles(self.store, owner)
                if p.sensitivity <= retrieval.max_sensitivity
            ]
            # those the query found first: a budget too small for all keeps them
            found = {r.episode.id: r.rank for r in retrieval.results}
            rules.sort(key=lambda p: found.get(p.id, len(found) + 1))
        return build_pack(
            retrieval,
            query=within(
                query or (retrieval.queries[0] if retrieval.queries else ""),
                self.config.retrieval.max_query_chars,  # (a paste of megabytes: as searched)
            ),
            budget_tokens=budget_tokens or self.config.retrieval.pack_token_budget,
            principles=rules,  # lifecycle
            principle_budget_tokens=self.config.lifecycle.principle_token_budget,  # lifecycle
        )

    @gated
    def warm(self, agent: str | None = None) -> str:
        """Load the agent's vectors, the embedder's model and the LLM client now and compile
        the rules' patterns (a server can call this before the agent's first turn), and say how its searches run: ``"float32"``,
        ``"codes"`` (past the room for floats in ``vector_cache_mb``) or ``"vec0"`` (past
        it all). The embedder embeds one word, so a remote one that is down raises
        :class:`.EmbeddingError` here, as an add would (turns still answer from full text)."""
        mode = self.store.warm(self._agent(agent))
        if not isinstance(self.embedder, RecordedOnly):
            self._embedder.embed(["warm"])  # the default model loads on first use (~1 s)
        self.load_llm_client(turn=True)  # (the first turn's deadline would pay for it)
        self.load_llm_client()  # (and a feedback's judge's)
        compile_all()  # the rules' patterns, the LLM client's modules' too (imported now)
        return mode

    @gated
    def load_embedder(self) -> None:
        """Load the embedder's model now if it loads one on first use (one with a ``load()``
        method: the default one, about 0.5 s), asking a remote embedder nothing. A process that
        runs one turn (the CLI) calls it first, or its turn's deadline would pay for the
        load; :meth:`warm` would also load the agent's vectors, which cost one search more
        than the ``vec0`` scan it would save, and ask a remote embedder, down or not. A model
        that fails to load is left to the turn, which meets the same error and answers from
        the full text with a note (as it did without this call)."""
        load = getattr(self.embedder, "load", None)
        if callable(load):
            try:
                load()
            except EmbeddingError:  # the turn's own embedding fails the same way, degraded
                return

    @gated
    def load_llm_client(self, *, turn: bool = False) -> None:
        """Wait for the LLM chat client that opening the memory began to build (importing
        openai, ~0.7 s), or build it now: with ``turn``, what a retrieval turn uses (its
        runner and client, when a turn phase is on; nothing when none is); without, the
        client alone (a feedback's judge asks it). A deadline covers that wait, so a process
        that runs one turn or one feedback (the CLI) waits first; a failure is the turn's
        or the judge's to report, as ever."""
        if self._llm_warm is not None:
            wait([self._llm_warm])
        elif turn and self._use_llm(None):  # (opened with warm_llm=False: built now)
            wait([self._executor.submit(self._llm)])
        elif self.llm_configured and not turn:
            wait([self._executor.submit(self._chat_client)])

    @gated
    def stats(self, *, agent: str | None = None) -> Stats:
        """Counts per agent, kind and status, file size and embedder; with ``agent``, the
        per-agent counts of that agent only, and its own totals under ``agent`` (episodes,
        kinds, first, last, turns). The file's totals stay (``episodes``, ``agent_count``,
        ``kinds``, ``first``, ``last``: every agent's, keys kept), so a server shows a user
        ``agent`` and the ``agents`` row, not the rest: it tells other agents' counts and
        activity."""
        name = None if agent is None else self._agent(agent)
        data = self.store.stats(name)
        if name is not None:
            data["agents"] = {name: data["agents"].get(name, {"active": 0, "archived": 0})}
        return data

    @gated
    def check(self) -> ConsistencyReport:
        """Run the consistency check (every episode has its vector and full-text rows)."""
        return self.store.consistency()

    # -- export, import, re-embed -----------------------------------------------------------
    @gated_job
    def export(
        self,
        out: IO[str] | str | os.PathLike[str],
        *,
        agent: str | None = None,
        all_agents: bool = False,
        overwrite: bool = False,
    ) -> int:
        """Write every episode of an agent as JSONL to ``out`` (an open text file, or a
        path to create, not an empty one: an existing file only with ``overwrite``); return
        how many. The agent is ``agent``, else the configured one when the configuration
        names one (:meth:`.Config.agent_scope`: a per-user process's export holds no other
        user's memories); with none named, or with ``all_agents``, every agent's. Each line
        also says when its strength held (``decayed_at``), so that the file it is imported
        into decays it from then."""
        args.switches(overwrite=overwrite, all_agents=all_agents)
        name = self._agent_or_all(self.config.agent_scope(agent, all_agents=all_agents))
        return write_jsonl(
            out,
            lambda: self.store.iter_exported(name),
            self.store.path,
            overwrite=overwrite,
        )

    @gated_job
    def salvage(
        self,
        out: IO[str] | str | os.PathLike[str],
        *,
        agent: str | None = None,
        all_agents: bool = False,
        overwrite: bool = False,
    ) -> SalvageReport:
        """Like :meth:`export`, for a damaged file (:class:`.DamagedDatabase`): write every
        episode that still reads (of the agent :meth:`export` would write), skipping the
        rows on damaged pages, and report the ids that could not be read. On a sound file it
        writes what :meth:`export` writes, but for the moment each strength held
        (``decayed_at``): an import of a salvage decays its memories from the import."""
        args.switches(overwrite=overwrite, all_agents=all_agents)
        scope = self.config.agent_scope(agent, all_agents=all_agents)
        try:
            name = self._agent_or_all(scope)
        except StoreError:  # the agents table itself may be what is damaged
            name = None if scope is None else args.agent_name(scope)
        return save_salvaged(self.store.connections, out, name, overwrite=overwrite)

    def _agent_or_all(self, agent: str | None) -> str | None:
        return None if agent is None else self._agent(agent)

    @gated_job
    def import_(
        self,
        path: str | os.PathLike[str],
        *,
        agent: str | None = None,
        keep_ids: bool = True,
        skip_existing: bool = False,
        per_conversation: bool = False,
        all_agents: bool = False,
        progress: Progress | None = None,
    ) -> list[int]:
        """Import a file: a JSONL export (times, metadata and ids kept), or a LoCoMo or
        memsets JSON file (format detected); return the ids.

        The exported ids are kept unless ``keep_ids`` is False (needed to
        import into a file that already holds episodes with those ids);
        ``skip_existing`` leaves out the episodes whose ids the file already
        holds, and those without an id (a LoCoMo or memsets file, JSONL lines
        without one) that it holds as they are: same agent, kind, text and time
        (to finish an import that was interrupted). The
        whole file is read and checked, and the ids looked up, before anything
        is written; a failure while writing keeps the batches written before
        it. ``agent`` and ``per_conversation`` are as in
        :func:`.importers.read_file`. Without ``agent``, when the configuration names an
        agent on purpose (:meth:`.Config.named_agent`: one process per user), a JSONL line
        that names another agent is an :class:`.InvalidInput` and nothing is imported: a
        file's words do not reach another user's memories. ``all_agents`` imports it anyway,
        each line under the agent it names (as where no agent is configured: the import of
        an ``export(all_agents=True)``); ``agent`` puts one agent's file into that agent.
        ``agent`` with ``all_agents`` is an InvalidInput.
        """
        args.switches(
            keep_ids=keep_ids,
            skip_existing=skip_existing,
            per_conversation=per_conversation,
            all_agents=all_agents,
        )
        self.config.agent_scope(agent, all_agents=all_agents)  # (refuses both)
        progress = args.progress_callback(progress)
        self._writable()  # before a large file is read in vain
        read = read_file(
            path,
            agent=agent,
            default_agent=self.config.agent,
            per_conversation=per_conversation,
            keep_to=None if all_agents else self.config.named_agent(),
        )
        return self.add_imported(
            read,
            keep_ids=keep_ids,
            skip_existing=skip_existing,
            all_agents=all_agents,
            progress=progress,
        )

    @gated_job
    def add_imported(
        self,
        read: ImportedFile,
        *,
        keep_ids: bool = True,
        skip_existing: bool = False,
        all_agents: bool = False,
        progress: Progress | None = None,
    ) -> list[int]:
        """Store a file read by :func:`.importers.read_file` (as :meth:`import_` does), for a
        caller that reads it before opening the memory, so a bad file creates nothing. Under
        an agent the configuration names on purpose, an episode of another agent that the
        file named (not one the reader was told to put them in) is refused, as
        :meth:`import_` refuses its line, unless ``all_agents`` (each kept under the agent
        its line names)."""
        args.switches(keep_ids=keep_ids, skip_existing=skip_existing, all_agents=all_agents)
        read = self._owned(read)
        if not all_agents:
            self._refuse_other_agents(read)
        for name in read.assigned:  # (the names a file's lines hold are kept as written)
            self._new_agent(self._agent(name))
        if read.format == "jsonl":
            return self.import_episodes(
                read.episodes, keep_ids=keep_ids, skip_existing=skip_existing, progress=progress
            )
        eps = [self._validated(e) for e in read.episodes]  # as they will be stored
        bulk = len(eps)
        if skip_existing:  # compared as they would be stored (agent, time zone)
            eps = not_stored(self.store, eps)
        return self._add_many(eps, progress=progress, total=len(eps), checked=True, bulk=bulk)

    def _owned(self, read: ImportedFile) -> ImportedFile:
        """``read`` with the per-conversation agents it named "default/<id>" for want of an
        agent (``read_file(path, per_conversation=True)``) renamed "<configured agent>/<id>",
        as :meth:`import_` names them: a per-user process's conversations stay its user's.
        A name too long for an agent is an InvalidInput naming it, as the reader's is."""
        prefix = read.unowned_prefix
        owner = self._agent(None)
        if prefix is None or f"{owner}/" == prefix:
            return read
        renamed: dict[str, str] = {}
        for name in read.assigned:
            if name.startswith(prefix):
                renamed[name] = self._new_agent(self._agent(f"{owner}/{name[len(prefix) :]}"))
        episodes = [
            e.model_copy(update={"agent": renamed[e.agent]}) if e.agent in renamed else e
            for e in read.episodes
        ]
        assigned = frozenset(renamed.get(name, name) for name in read.assigned)
        return replace(read, episodes=episodes, assigned=assigned, unowned_prefix=None)

    def _refuse_other_agents(self, read: ImportedFile) -> None:
        """InvalidInput, before anything is written, for the agents other than the one the
        configuration names on purpose that ``read``'s own lines name (a file read without
        ``keep_to``); the agents its reader assigned were chosen by the caller."""
        named = self.config.named_agent()
        if named is None:
            return
        kept = self._agent(named)
        chosen = read.assigned  # (and an episode left unnamed is the configured agent's)
        given = {e.agent for e in read.episodes if "agent" in e.model_fields_set}
        others = sorted(given - chosen - {kept})
        if others:
            raise InvalidInput(
                f"the file names agent{'s' * (len(others) > 1)} "
                f"{', '.join(map(quoted_name, others[:5]))}{' …' * (len(others) > 5)}, and "
                f"this memory keeps to the agent its configuration names, {quoted_name(kept)}:"
                " nothing was imported (add_imported(read, all_agents=True) keeps the agent"
                " each line names; a file of one agent read with read_file(…, agent=NAME)"
                " goes into NAME)"
            )

    @gated_job
    def import_episodes(
        self,
        episodes: Iterable[NewEpisode | Episode],
        *,
        keep_ids: bool = True,
        skip_existing: bool = False,
        progress: Progress | None = None,
    ) -> list[int]:
        """Store episodes read from elsewhere (:mod:`memengine.importers`; NewEpisode, or an
        Episode as :meth:`get` returns it) as :meth:`import_` does: all checked, and their ids
        looked up, before any is written. Each is stored under the agent it names (one that
        names none: the configured agent's), as :meth:`add_many` stores: episodes the
        calling code holds reach any agent on purpose, and only a file read and stored by
        :meth:`import_` or :meth:`add_imported` is kept to an agent the configuration names."""
        args.switches(keep_ids=keep_ids, skip_existing=skip_existing)
        self._writable()
        eps = list(args.episode_source(episodes))
        stray = next((e for e in eps if not isinstance(e, (NewEpisode, Episode))), None)
        if stray is not None:
            raise InvalidInput(
                f"import_episodes takes NewEpisode (or Episode) objects, not {type(stray).__name__}"
            )
        if not keep_ids:
            eps = [e.model_copy(update={"id": None}) for e in eps]
        # every line checked before any is written; an export keeps what older files hold
        eps = [self._validated(ep, copied=True) for ep in eps]
        todo = kept_ids(self.store, eps, skip_existing=skip_existing)
        return self._add_many(todo, progress=progress, total=len(todo), checked=True, bulk=len(eps))

    @gated_job
    def reembed(
        self,
        *,
        missing: bool = False,
        progress: Progress | None = None,
        note: Callable[[str], None] | None = None,
    ) -> int:
        """Re-embed every episode with the current embedder; return how many.

        The vectors are made in batches beside the file's old ones, which stay in use
        (other writers go on), then swapped in by one transaction. Stopped part way,
        nothing the searches read has changed, and the next re-embed with the same
        embedder (and model) goes on from where this one stopped; ``note`` is told
        whether it did (:mod:`memengine.store.reembed`).

        ``missing`` embeds only the episodes that have no vector (what ``doctor`` calls
        missing vectors) with the file's own embedder, and deletes the vectors of no
        episode (``note`` is told how many), in one write transaction
        (:meth:`.Store.mend_vectors`): seconds where a whole re-embed takes minutes. It
        raises EmbedderMismatch when the configured embedder is not the file's, whose
        vectors the new ones must sit beside."""
        args.switches(missing=missing)
        progress = args.progress_callback(progress)
        if note is not None and not callable(note):
            raise InvalidInput(f"note is a callable of one message, not {note!r}")
        self._writable()
        if missing:
            return self._embed_missing(progress, note)
        count = self.store.replace_embedder(
            self.embedder.id,
            self.embedder.dimension,
            lambda eps: self.embedder.embed([_text(e)[:MAX_EMBED_CHARS] for e in eps]),
            probe=self.embedder.embed([PROBE_TEXT])[0],  # the model the vectors are made by
            same_model=same_model,
            probe_again=lambda: self.embedder.embed([PROBE_TEXT])[0],  # and still, at the end
            progress=progress,
            note=note,
        )
        if self._probed is not None:  # the swap kept the new model's probe
            self._probed.recorded_now()
        return count

    def _embed_missing(self, progress: Progress | None, note: Callable[[str], None] | None) -> int:
        """:meth:`reembed` of the episodes without a vector only (``missing``)."""
        if isinstance(self.embedder, RecordedOnly) or self.embedder.id != self.store.embedder_id:
            configured = (
                "no embedder is loaded (the memory was opened with embeds=False)"
                if isinstance(self.embedder, RecordedOnly)
                else f"{self.embedder.id} is configured"
            )
            raise EmbedderMismatch(
                f"{self.store.path} holds vectors of {self.store.embedder_id} but "
                f"{configured}: the missing vectors must be made by the file's embedder; "
                "configure it again (or re-embed every episode with the new one: "
                "reembed() without missing, `memengine reembed`). Nothing was written"
            )
        made, dropped = self.store.mend_vectors(
            lambda eps: self._embedder.embed([_text(e)[:MAX_EMBED_CHARS] for e in eps]),
            progress=progress,
        )
        if dropped and note is not None:
            note(f"deleted {counted(dropped, 'vector')} of no episode")
        return made

    # -- life cycle (lifecycle) ------------------------------------------------------------
    @gated
    def create_agent(self, name: str, *, perspectives: Sequence[str] = ()) -> life.AgentRow:
        """Create an agent, or add perspectives (e.g. コスト, 納期) to an existing one."""
        if isinstance(perspectives, str):
            perspectives = [perspectives]
        listed = args.listed(perspectives, "perspectives are a list of names")
        names = [args.agent_name(p, "perspective") for p in listed]  # an agent's rules
        self._writable()
        return life.create_agent(
            self.store, self._new_agent(self._agent(name)), names, _clock_time(self.clock)
        )

    @gated
    def agents(self) -> list[life.AgentRow]:
        """Every agent with its declared perspectives."""
        return life.list_agents(self.store)

    @gated
    def has_agent(self, name: str) -> bool:
        """Whether this file knows the agent ``name`` (it has added to it, or it was created)."""
        return life.has_agent(self.store, self._agent(name))

    @gated
    def feedback(
        self,
        turn_id: int,
        used: Sequence[int] | None = None,
        *,
        answer: str | None = None,
        helpful: bool = False,
        task_success: bool | None = None,
        prevented_error: bool = False,
        perspective: str | None = None,
        learning: str | None = None,
        judge: life.Judge = "auto",
        agent: str | None = None,
        all_agents: bool = False,
    ) -> life.FeedbackResult:
        """Say which memories of a turn were used (by id, or found in the final ``answer``).

        ``judge`` "auto" asks the configured LLM which memories influenced the
        answer when ``[llm]`` is set, and matches tags, key terms and
        similarity otherwise (or when the LLM fails); "match" and "llm" force one
        way ("llm" raises the LLM's error, recording nothing, so the turn can be
        given its feedback again). A feedback that says nothing (no ``used``, no
        ``answer``, no outcome) is an :class:`.InvalidInput`: a turn takes one. The turn must
        be of the agent :meth:`get` reads an id of (``agent``, else the one the configuration
        names on purpose; any with ``all_agents`` or none named): another agent's turn is
        :class:`.NotFound`. A used memory that a sleep archived after the
        turn becomes active again. An ``answer`` of any length is taken, and one longer than
        20,000 characters is judged by its beginning and its end
        (:func:`.lifecycle.feedback.read_answer`).
        """
        args.switches(all_agents=all_agents)
        scope = self.config.agent_scope(agent, all_agents=all_agents)
        self._writable()
        number = args.whole(turn_id)
        if number is None:
            raise InvalidInput(f"a turn id is a whole number, not {turn_id!r}")
        turn_id = number
        if not 0 < turn_id <= args.MAX_ID:
            raise NotFound(f"no turn with id {turn_id}")
        used = args.used_ids(used)
        for name, flag in (("helpful", helpful), ("prevented_error", prevented_error)):
            if not isinstance(flag, bool):
                raise InvalidInput(f"{name} is True or False, not {flag!r}")
        if task_success is not None and not isinstance(task_success, bool):
            raise InvalidInput(f"task_success is True, False or None, not {task_success!r}")
        for name, value in (("answer", answer), ("learning", learning)):
            if value is not None and not isinstance(value, str):
                raise InvalidInput(f"{name} is a string, not {type(value).__name__}")
        if perspective is not None:  # checked as retrieve checks it, not cleaned into another
            perspective = args.agent_name(perspective, "perspective")
        if answer is not None:  # (a reply that pasted megabytes: its beginning and end)
            answer = life.read_answer(answer)
        # as stored text is: a lone surrogate (half an emoji cut off) would fail to encode
        answer, learning = (None if v is None else scrub(v) for v in (answer, learning))
        if judge not in ("auto", "match", "llm"):
            raise InvalidInput(f"judge is 'auto', 'match' or 'llm', not {judge!r}")
        if learning is not None:  # (blank: no learning)
            learning = None if is_blank(learning) else learning.strip()
        if used is not None and not used and answer is not None and answer.strip():
            raise InvalidInput(
                "used=[] (--none-used) says that no memory was used, and an answer (--answer) "
                "would be judged for the ones it used: give one or the other"
            )
        said = (answer or "").strip() or (learning or "").strip()
        if used is None and not (said or helpful or prevented_error or task_success is not None):
            raise InvalidInput(
                f"feedback on turn {turn_id} says nothing, and a turn takes one feedback: "
                "say which memories were used (or that none was: used=[], --none-used), "
                "give the final answer, or say how the task went"
            )
        owner = self._agent_or_all(scope)
        if judge == "llm" and not self.llm_configured:
            raise ConfigError("judge='llm' needs an LLM: set [llm] base_url or api_key")
        client = None
        unjudged = ""
        started = time.monotonic()  # the deadline covers getting the client too
        deadline_s = self.config.lifecycle.feedback_deadline_s
        if answer and judge != "match" and self.llm_configured:
            try:
                client = self._chat_client_within(deadline_s)
            except ConfigError as exc:  # (a proxy it cannot use): "auto" matches without it
                if judge == "llm":
                    raise
                unjudged = f"the LLM client cannot be built: {exc}"
            else:
                if client is None:  # as a reply past the deadline: matched, or raised
                    unjudged = (
                        f"the LLM client was not ready within the deadline of {deadline_s:.3g}s "
                        "(feedback_deadline_s; it is built once, importing openai)"
                    )
                    if judge == "llm":
                        raise LLMTimeout(unjudged)
        return life.give_feedback(
            self.store,
            self._embedder,
            self.config.lifecycle,
            turn_id,
            now=_clock_time(self.clock),
            used=used,
            answer=answer,
            helpful=helpful,
            task_success=task_success,
            prevented_error=prevented_error,
            perspective=perspective,
            learning=learning,
            client=client,
            model=self.config.lifecycle.feedback_model or self.config.llm.rerank_model,
            agent=owner,
            scope_hint=self._scope_hint(agent, all_agents),
            judge_falls_back=judge == "auto",
            unjudged=unjudged,
            zone=None if self.config.time_zone is None else self._now().tzinfo,
            deadline_s=max(deadline_s - (time.monotonic() - started), 0.001),
        )

    @gated
    def sleep(
        self, agent: str | None = None, *, tasks: float | None = None, train: bool = True
    ) -> life.SleepReport:
        """Run the sleep phase for an agent (one transaction), then retrain its scorer if due.

        ``tasks`` decays every active memory by exactly that many tasks (default: the decay
        clock's, ``[lifecycle] decay_clock``: the turns since the last sleep, or the days
        times ``expected_tasks_per_day``). The sleep is committed before the training
        (``train``): a training that fails (another writer held the file) leaves a note in
        the report, not an error that would hide the sleep that happened. NotFound for an
        agent the file does not know; Ctrl-C before the commit raises
        :class:`.lifecycle.SleepInterrupted` (a KeyboardInterrupt: nothing changed)."""
        args.switches(train=train)
        self._writable()
        name = self._agent(agent)
        if tasks is not None:
            tasks = args.task_count(tasks)
        report = life.run_sleep(
            self.store, name, self.config.lifecycle, _clock_time(self.clock), tasks=tasks
        )
        return self.train_after_sleep(report) if train else report

    @gated
    def train_after_sleep(self, report: life.SleepReport) -> life.SleepReport:
        """Retrain the scorer of ``report``'s agent if it is due (:meth:`sleep` does, unless
        ``train=False``); ``report`` with the training's figures, or with a note on why the
        scorer was not retrained (another writer held the file)."""
        if not isinstance(report, life.SleepReport):
            raise InvalidInput(f"train_after_sleep takes what sleep returned, not {report!r}")
        try:
            info = self.train_scorer(report.agent, force=False)
        except (StoreError, NotFound) as exc:  # (NotFound: forgotten since the sleep)
            why = f"the sleep is kept; its scorer was not retrained: {exc}"
            return replace(report, notes=(*report.notes, why))
        if info is None:
            return report
        return replace(report, scorer={"samples": info.samples, "auc": info.auc})

    @gated
    def train_scorer(
        self, agent: str | None = None, *, force: bool = True
    ) -> life.ScorerInfo | None:
        """Train the agent's learned ranking scorer from its answered turns (None if too few,
        or their used ones of too few memories: :meth:`scorer_declined` says why; or,
        without ``force``, when no feedback came since it was last trained; NotFound for an
        agent the file does not know)."""
        args.switches(force=force)
        self._writable()
        return life.train_agent_scorer(
            self.store,
            self._agent(agent),
            self.config.lifecycle,
            _clock_time(self.clock),
            force=force,
        )

    @gated
    def scorer_declined(self, agent: str | None = None) -> str | None:
        """Why :meth:`train_scorer` would train no scorer for the agent now ("not enough
        labelled samples yet (40 of the 100 needed, …)", "its used samples are all of 1
        memory ([47]); …"), or None when it would (NotFound for an agent the file does not
        know)."""
        return life.scorer_declined(self.store, self._agent(agent), self.config.lifecycle)

    @gated
    def never_used(
        self, agent: str | None = None, *, min_candidates: int | None = None
    ) -> list[Episode]:
        """Memories retrieved often (candidate_count > 50) but never used (access_count 0)."""
        limit = self.config.lifecycle.never_used_min_candidates
        if min_candidates is not None:  # (more than SQLite's integers hold: none)
            limit = min(args.at_least(min_candidates, 0, "min_candidates"), args.MAX_ID)
        return life.never_used(self.store, self._agent(agent), limit)

    @gated
    def principles(self, agent: str | None = None) -> list[Episode]:
        """The agent's principles (always packed; one an earlier version archived too)."""
        return life.principles(self.store, self._agent(agent))

    @gated
    def life_of(
        self, episode_id: int, *, agent: str | None = None, all_agents: bool = False
    ) -> life.MemoryLife:
        """One memory's life-cycle fields with its strength and learnings per perspective,
        of the agent :meth:`get` reads an id of (NotFound for another's)."""
        args.switches(all_agents=all_agents)
        scope = self.config.agent_scope(agent, all_agents=all_agents)
        if scope is not None:
            try:
                self.get(episode_id, agent=scope)
            except NotFound as exc:  # (get saw the agent given: the hint is this call's)
                raise NotFound(f"{exc}{self._scope_hint(agent, all_agents)}") from None
        return life.memory_life(self.store, args.episode_id(episode_id))

    @gated
    def plot_strength(self, out: str | os.PathLike[str], *, agent: str | None = None) -> Path:
        """Plot the agent's strength over its sleeps and its level distribution (needs
        matplotlib); NotFound for an agent the file does not know."""
        return life.plot_strength(
            self.store,
            self._agent(agent),
            checked_path(out, "a plot goes to a file's path (a str)"),
            archive_threshold=self.config.lifecycle.archive_threshold,
        )

    def _now(self) -> datetime:
        """The clock's moment, in the configured ``time_zone`` (that of a message and of
        an episode stored without a time)."""
        return self.config.in_zone(_clock_time(self.clock))

    def _agent(self, agent: str | None) -> str:
        """The agent a call is about: the one named (checked, in NFC) or the configured one.
        A name an earlier memengine stored as typed (not in NFC) is found by either
        spelling, so no twin in NFC is made beside it."""
        given = self.config.agent if agent is None else agent
        name = self._agent_name(given)
        typed = self._typed_agents().get(name)
        if typed is None or life.has_agent(self.store, name):
            return name
        return typed if life.has_agent(self.store, typed) else name

    def _known_agent(self, agent: str, hint: str = "") -> str:
        """``agent`` (as :meth:`_agent` reads it) when the file knows it, for a call on
        that agent's memories by id (``delete(ids, agent=…)``): a typo must not look like
        ids that are not its. InvalidInput for a name no agent may take (" alice"), else
        NotFound ("no agent named 'ghost'", as a sleep says)."""
        name = self._agent(agent)
        if life.has_agent(self.store, name):
            return name
        fault = name_fault(name)
        if fault is not None:
            raise InvalidInput(fault)
        raise NotFound(f"no agent named {quoted_name(name)}{hint}")

    def _agent_name(self, given: object) -> str:
        """``given`` checked as a new agent name, or as it is when the file already holds
        exactly that name (an earlier memengine stored names now refused: a zero-width space)."""
        try:
            return args.agent_name(given)
        except InvalidInput:
            if not isinstance(given, str) or "\x00" in given or has_surrogate(given):
                raise  # no such name can be stored
            if life.has_agent(self.store, given):
                return given
            raise

    def _new_agent(self, name: str) -> str:
        """``name``, an agent a write stores under, refused (InvalidInput) when it is no
        name for a new agent (:func:`.text.name_fault`: longer than
        :data:`.text.MAX_NAME_CHARS`, white space at an end) and the file does not hold it
        already (an earlier memengine stored such names: they are still written to)."""
        fault = name_fault(name)
        if fault is not None and not life.has_agent(self.store, name):
            raise InvalidInput(fault)
        return name

    def _typed_agents(self) -> dict[str, str]:
        """The agent names an earlier memengine stored as typed, by their NFC form: read
        once (every name written since is in NFC, so the list only shrinks)."""
        if self._typed_names is None:
            self._typed_names = {
                unicodedata.normalize("NFC", a.name): a.name
                for a in self.agents()
                if not unicodedata.is_normalized("NFC", a.name)
            }
        return self._typed_names

    def _writable(self) -> None:
        """Raise ReadOnlyDatabase now, before any embedding, when the file is open read-only."""
        self.store.connections.refuse_writes()

    def _perspective(self, agent: str, perspective: str) -> str:
        """``perspective`` as the agent declared it; InvalidInput when it did not. An agent
        the file does not know yet (a companion's new user, asked with its fixed perspective
        on the first turn) declared nothing to check against: the perspective is taken as
        given, and the read finds nothing, as it would without one."""
        perspective = args.agent_name(perspective, "perspective")  # (no NUL, no surrogate)
        known = next((a for a in self.agents() if a.name == agent), None)
        if known is None:
            return perspective
        declared = known.perspectives
        spelled = args.spelled_as_declared(perspective, declared)
        if spelled is None:
            raise args.undeclared_perspective(agent, perspective, declared)
        return spelled


def _of(agent: str | None) -> str:
    """`` of agent 'bob'`` for a message about one agent's memories ("" for any agent's)."""
    return "" if agent is None else f" of agent {quoted_name(agent)}"


def _clock_time(clock: Clock) -> datetime:
    """``clock``'s moment, refused (InvalidInput) outside the times a memory keeps, as an
    explicit ``now`` is: a clock stepped to year 1 stores no such time."""
    return args.moment(clock(), "the clock's time")


def _weakly(method: Callable[[Any], None]) -> Callable[[Any], None]:
    """``method``, called through a weak reference to its object (nothing once it is gone)."""
    ref = weakref.WeakMethod(method)

    def call(value: Any) -> None:
        bound = ref()
        if bound is not None:
            bound(value)

    return call


def _confirm_new_dimension(db: Path, emb: Embedder) -> None:
    """Ask an endpoint embedder for one vector before ``db`` is made with its dimension,
    even a configured one (:meth:`.OpenAIEmbedder.confirm_dimension`): a server that
    ignores ``dimensions`` is refused with a ConfigError, and no file is left. A file that
    records its embedder already is opened asking nothing, nor is any other embedder."""
    endpoint = sys.modules.get("memengine.embed.openai")  # (not loaded: no such embedder)
    if endpoint is None or not isinstance(emb, endpoint.OpenAIEmbedder):
        return
    if Store.recorded_embedder(db) is not None:
        return
    try:
        emb.confirm_dimension()
    except ConfigError as exc:
        raise ConfigError(f"{exc} (no memory was made at {os.fspath(db)})") from None


def _refuse_another_model(db: Path, recorded_id: str, model: str, *, ready: bool) -> None:
    """Refuse a file embedded with another model than the configured remote one before the
    endpoint is asked its dimension (the mismatch is known without it; a down endpoint
    would hide it behind a connection error); ``ready``: the configuration names an
    endpoint (``base_url`` or ``api_key``), which a re-embed with it needs."""
    from .embed.openai import recorded_dimension  # (the client is loaded only for it)

    if recorded_dimension(recorded_id, model) is None:
        needs = "" if ready else ", once [embedder] base_url or api_key is set"
        raise EmbedderMismatch(
            f"{db} was embedded with {recorded_id} but the configured embedder is "
            f"openai:{model}. Configure {recorded_id} again, or re-embed the file with the "
            f"new one: memengine reembed --db {shell_word(os.fspath(db))} (with this "
            f"configuration{needs})"
        )


_B = TypeVar("_B")


def _built_within(
    executor: Executor, build: Callable[[], _B], built: _B | None, wait_s: float
) -> _B | None:
    """What ``build`` makes (``built`` when it is made already), or None when it is not ready
    within ``wait_s`` seconds: built once in the background on open (importing openai takes
    ~0.7 s), so a caller's deadline covers the wait; the build goes on, for the next call."""
    if built is not None:
        return built
    building = executor.submit(build)
    done, _ = wait([building], timeout=wait_s)
    return building.result() if done else None


E = TypeVar("E", bound=MemEngineError)


class AddInterrupted(KeyboardInterrupt):
    """Ctrl-C during :meth:`Memory.add_many` or an import once a batch was handed to the
    store: the batches written are kept (each is one transaction). ``stored`` says how many
    of the episodes given were stored, the first ones in order, and ``ids`` their ids;
    ``writing`` how many after them were being written when it came (0 mostly: the
    embedding takes most of a batch's time), which are stored too or not at all. A
    KeyboardInterrupt still (a program that stops on Ctrl-C stops); one that came before
    any batch was handed to the store is a plain one."""

    def __init__(self, message: str, *, stored: int, writing: int, ids: list[int]) -> None:
        super().__init__(message)
        self.stored = stored
        self.writing = writing
        self.ids = ids


def _counted(exc: E, stored: int, call: object = None) -> E:
    """``exc`` with how many of its call's episodes were stored (:attr:`.MemEngineError.stored`)
    and, when ``call`` is given, that this call counted them (its own error, said already)."""
    exc.stored, exc.counted_by = stored, call
    return exc


def _not_forgotten(
    exc: StoreError, agent: str, names: list[str], stored: Callable[[], set[str]]
) -> StoreError:
    """``exc``, which stopped the forget of ``agent`` (stored as ``names``), of its own
    kind, saying whether the agent was forgotten: a user who asked to be forgotten must
    not be told only of a disk error."""
    left = _left_of_forget(agent, names, stored)
    if left is None:
        return exc  # (forgotten: the error came after the deletion had committed)
    again = type(exc)(f"{exc}; {left} once the cause is fixed")
    again.__dict__.update(exc.__dict__)  # (what the error carries: DiskError's code, …)
    return again


def _stopped_forget(agent: str, names: list[str], stored: Callable[[], set[str]]) -> str:
    """The note of a Ctrl-C (or SIGTERM) that stopped the forget of ``agent`` (stored as
    ``names``): whether it is forgotten, which a caller cannot tell from the interrupt, and,
    when it is, that the compaction after it may not have finished."""
    left = _left_of_forget(agent, names, stored)
    if left is not None:
        return f"interrupted: {left}"
    return (
        f"interrupted after the delete was saved: agent {quoted_name(agent)} is forgotten, "
        "but the compaction that follows may not have finished, so copies of its text may "
        "remain in the file's free pages until `memengine optimize --scrub`, "
        "optimize(scrub=True) (doctor reports it meanwhile)"
    )


def _left_of_forget(agent: str, names: list[str], stored: Callable[[], set[str]]) -> str | None:
    """None when no name of ``agent`` (``names``) is ``stored`` now, else what is left of it,
    in words that end where what to do comes: each name's forget is one transaction, so
    one stopped left everything of it, unless it stopped after its commit (hence the
    names read again)."""
    try:
        held = stored()
        left = [n for n in names if n in held]
    except MemEngineError:  # the file cannot be read now either
        return (
            f"whether agent {quoted_name(agent)} was forgotten could not be read: run the "
            "forget again"
        )
    if not left:
        return None
    return (
        f"agent {quoted_name(agent)} was NOT forgotten"
        + (
            ": nothing of it was deleted"
            if len(left) == len(names)
            else " (a spelling of its name an earlier version stored is left)"
        )
        + "; forget it again"
    )


def _add_note(exc: BaseException, note: str) -> None:
    """Add ``note`` to ``exc``'s notes (:meth:`BaseException.add_note`, which Python 3.10
    lacks: there it is the ``__notes__`` a caller reads, which 3.10 does not print)."""
    if sys.version_info >= (3, 11):
        exc.add_note(note)
    else:
        exc.__notes__ = [*getattr(exc, "__notes__", ()), note]


def _interrupted_note(done: int, writing: int, given_all: bool, imported: bool) -> str:
    """What an add_many or an import stopped by Ctrl-C had stored (``done``, all that was
    ``given_all``), and the ``writing`` episodes of a batch handed to the store as it came:
    stored whole or not at all."""
    if given_all and not writing:
        return f" after all {counted(done, 'episode')} given were stored"
    note = _stored_note(done, imported)
    if writing:
        were, them = ("was", "it") if writing == 1 else ("were", "them")
        note += (
            f"{'; the' if done else ' while'} {counted(writing, 'episode')}"
            f"{' after them' if done else ''} {were} being written: stored whole or "
            f"not at all (look {them} up before you add {them} again)"
        )
    return note


def _stored_note(done: int, imported: bool) -> str:
    """What an add_many or an import stopped part way had stored (a retry of the whole
    list would store those twice): nothing to say when nothing was."""
    if not done:
        return ""
    how = (
        "import the file again with skip_existing=True (memengine import --skip-existing) to go on"
        if imported
        else "go on from there"
    )
    were = "was" if done == 1 else "were"
    return (
        f" (the first {counted(done, 'episode')} to store {were} stored, in the order given, "
        f"the rest not: {how})"
    )


def _episode_text(ep: NewEpisode) -> str:
    from .models import episode_text

    return episode_text(ep.kind, ep.user_text, ep.reply_text, ep.content)


def _text(ep: Episode) -> str:
    return ep.text
