"""The LLM phases (expansion, rerank) end to end: real HTTP, the real openai client, the scripted server.

Every scenario checks that the turn returns within its deadline (plus a
small margin), that the right fallback is recorded in ``degraded``, and
that the database is byte-for-byte the same afterwards (the phases never
write; turn recording is switched off here so the check is exact).
"""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memengine import FixedClock, Memory
from memengine.cli import app
from memengine.config import Config
from memengine.diagnostics import diagnose
from memengine.embed.usem3 import USEM3Embedder
from memengine.errors import ConfigError, LLMResponseError
from memengine.evaluation.llm_latency import run_llm_latency, scripted_handler
from memengine.importers import read_memsets
from memengine.models import Retrieval
from memengine.retrieve.temporal import parse_time_window

from .helpers import HashEmbedder, freed_without_a_collection, stale_certificate_file
from .openai_server import ScriptedOpenAI, ScriptedReply, completion_body

TURN_S = 1.0
PHASE_S = 0.4
MARGIN_S = 0.35
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)  # a Monday

RECENT = [
    {"role": "user", "text": "Juno chewed my slippers again"},
    {"role": "partner", "text": "Oh no, not the slippers! Is she bored?"},
]
TEXT = "Ugh. When is her thing at the vet?"

EPISODES = [
    (
        "dental",
        "Juno has a dental cleaning appointment at the vet on 2 June.",
        "I'll remind you.",
        "2026-05-10",
    ),
    (
        "ramen",
        "We tried the new ramen shop Menya Kaze downtown.",
        "Was the broth good?",
        "2026-05-26",
    ),
    ("tender", "The Fenwick tender went in today, fingers crossed.", "Well done!", "2026-04-15"),
    (
        "pottery",
        "I started pottery classes at a studio called Clay House.",
        "How fun!",
        "2026-05-27",
    ),
    ("wedding", "Chloe's wedding is on 20 June at Stoneleigh Barn.", "Lovely venue.", "2026-03-02"),
    ("slippers", "Juno chewed my slippers and the sofa cushion.", "Naughty girl.", "2026-05-29"),
]


def config(base_url: str, **llm: Any) -> Config:
    settings: dict[str, Any] = {
        "base_url": base_url,
        "expansion_model": "test-chat",
        "rerank_model": "test-chat",
        "turn_deadline_s": TURN_S,
        "expansion_deadline_s": PHASE_S,
        "rerank_deadline_s": PHASE_S,
        "request_timeout_s": 2.0,
        "max_retries": 2,
        "backoff_base_s": 0.02,
        "cache_expansions": False,
    }
    settings.update(llm)
    return Config.model_validate({"llm": settings, "lifecycle": {"record_turns": False}})


class Store:
    """A memory file with six episodes, and their ids by name."""

    def __init__(self, path: Path, cfg: Config) -> None:
        self.path = path
        self.mem = Memory.open(path, config=cfg, embedder=HashEmbedder(), clock=FixedClock(NOW))
        self.ids: dict[str, int] = {}
        for name, user, reply, day in EPISODES:
            when = datetime.fromisoformat(day + "T20:00:00+00:00")
            self.ids[name] = self.mem.add_exchange(user, reply, occurred_at=when)
        if self.mem.llm_configured:
            self.mem._llm()  # the client is ready: the timings below measure turns only

    def state(self) -> str:
        """A checksum of every row of every ordinary table of the file."""
        digest = hashlib.sha256()
        with self.mem.store.connections.read() as cur:
            tables = [
                r[0]
                for r in cur.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
                ).fetchall()
            ]
            for table in tables:
                for row in cur.execute(f'SELECT * FROM "{table}" ORDER BY 1').fetchall():
                    digest.update(repr((table, tuple(row))).encode())
        return digest.hexdigest()

    def ask(self, text: str = TEXT, **kwargs: Any) -> tuple[Retrieval, float]:
        before = self.state()
        t0 = time.monotonic()
        r = self.mem.retrieve(text, recent=kwargs.pop("recent", RECENT), **kwargs)
        elapsed = time.monotonic() - t0
        assert elapsed <= TURN_S + MARGIN_S, f"turn took {elapsed:.2f} s"
        assert self.state() == before, "the turn wrote to the database"
        return r, elapsed


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def store(tmp_path: Path, srv: ScriptedOpenAI) -> Iterator[Store]:
    s = Store(tmp_path / "m.db", config(srv.base_url))
    yield s
    s.mem.close()


def expansion(*queries: str, refs: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "expanded_queries": list(queries),
        "detected_references": refs
        if refs is not None
        else [{"type": "anaphora", "surface": "her", "resolved": "Juno"}],
    }


def rerank(*items: tuple[int, str, str], strategy: str = "quote_key_parts") -> dict[str, Any]:
    return {
        "relevant_episodes": [{"id": i, "relevance": rel, "reason": why} for i, rel, why in items],
        "injection_strategy": strategy,
    }


GOOD_EXPANSION = expansion("Juno dental cleaning appointment", "vet appointment date for Juno")


def push_good(srv: ScriptedOpenAI, store: Store, *, strategy: str = "quote_key_parts") -> None:
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(
        json_data=rerank(
            (store.ids["slippers"], "medium", "she chewed slippers"),
            (store.ids["dental"], "high", "the vet appointment is on 2 June"),
            strategy=strategy,
        )
    )


def user_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


# -- the happy paths ---------------------------------------------------------------------------


def test_correct_json_uses_both_phases(srv: ScriptedOpenAI, store: Store) -> None:
    push_good(srv, store, strategy="full")
    r, _ = store.ask()
    assert r.degraded == ()
    assert [x.episode.id for x in r.results] == [store.ids["dental"], store.ids["slippers"]]
    assert r.results[0].relevance == "high" and r.results[1].relevance == "medium"
    assert r.results[0].reason == "the vet appointment is on 2 June"
    assert r.injection_strategy == "full" and r.should_inject
    assert r.signals == {}  # the LLM decided: the fast path's signals were not read
    assert "Juno dental cleaning appointment" in r.queries
    assert {"expansion", "rerank", "turn", "reach"} <= set(r.timings_ms)
    # the first search's stages keep their names; the expanded search's are prefixed
    assert {"embed", "knn", "fusion", "expanded.embed", "expanded.total"} <= set(r.timings_ms)
    exp_req, rr_req = srv.chat_requests
    assert "Juno chewed my slippers again" in user_prompt(exp_req)  # the recent conversation
    assert "Today: 2026-06-01 (Mon)" in user_prompt(exp_req)
    assert f"[id {store.ids['dental']}] 2026-05-10" in user_prompt(rr_req)
    assert exp_req["max_tokens"] == 300
    pack = store.mem.pack(r, query=TEXT)
    assert "→ why: the vet appointment is on 2 June" in pack.text
    assert pack.episode_ids[0] == store.ids["dental"]


def test_a_question_typed_after_a_long_paste_reaches_both_prompts(
    srv: ScriptedOpenAI, store: Store
) -> None:
    push_good(srv, store)
    paste = " ".join(f"Step {i}: knead the dough and let it rest." for i in range(80))
    r, _ = store.ask(paste + "\nbtw when is Juno's dental cleaning again?")
    assert not any(d.startswith(("expansion", "rerank")) for d in r.degraded)
    exp_req, rr_req = srv.chat_requests
    for req in (exp_req, rr_req):
        prompt = user_prompt(req)
        assert "Step 0: knead the dough" in prompt  # its beginning
        assert "btw when is Juno's dental cleaning again?" in prompt  # and its end
        assert " … " in prompt and len(prompt) < len(paste)


def test_json_inside_prose_and_code_fences(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat("Sure! Here you go:\n```json\n" + json.dumps(GOOD_EXPANSION) + "\n```\nBye.")
    srv.push_chat(
        "<think>hmm</think>The relevant one: "
        + json.dumps(rerank((store.ids["dental"], "high", "appointment")))
        + " hope this helps"
    )
    r, _ = store.ask()
    assert r.degraded == ()
    assert [x.episode.id for x in r.results] == [store.ids["dental"]]


def test_japanese_conversation_gets_japanese_prompts(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data=expansion("ジュノ 歯医者 予約", refs=[]))
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "予約の日付")))
    r, _ = store.ask("あの子の病院っていつだっけ?", recent=["ジュノがまたスリッパをかじった"])
    assert r.language == "ja" and r.degraded == ()
    exp_req, rr_req = srv.chat_requests
    assert "新しい発言: あの子の病院っていつだっけ?" in user_prompt(exp_req)
    assert "検索クエリ" in exp_req["messages"][0]["content"]
    assert "候補:" in user_prompt(rr_req)


# -- broken answers ----------------------------------------------------------------------------


def test_truncated_json_in_expansion_falls_back(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat('{"expanded_queries": ["Juno den', finish_reason="length")
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "appointment")))
    r, _ = store.ask()
    assert len(r.degraded) == 1 and r.degraded[0].startswith("expansion: invalid JSON")
    assert r.degraded_parts == {"expansion"}
    assert "truncated" in r.degraded[0]
    assert [x.episode.id for x in r.results] == [store.ids["dental"]]  # rerank still ran
    assert len(r.queries) == 1  # the context query only


def test_truncated_json_in_rerank_uses_fast_path(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat('{"relevant_episodes": [{"id": 1, "relev')
    r, _ = store.ask()
    assert len(r.degraded) == 1 and r.degraded[0].startswith("rerank: invalid JSON")
    assert r.degraded[0].endswith("fast-path ranking used")
    assert r.results and all(x.reason is None for x in r.results)  # fast-path labels
    assert r.results[0].episode.id == store.ids["dental"]  # the expansion still helped


def test_invented_ids_are_dropped_and_counted(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(
        json_data=rerank(
            (99_999, "high", "made up"),
            (store.ids["dental"], "high", "appointment"),
            (88_888, "medium", "also made up"),
        )
    )
    r, _ = store.ask()
    assert r.degraded == ("rerank: 2 unknown ids dropped",) and r.degraded_parts == {"rerank"}
    assert [x.episode.id for x in r.results] == [store.ids["dental"]]
    assert store.mem.llm_counters["rerank.unknown_ids"] == 2


def test_an_invented_id_beside_a_low_one_counts_as_an_empty_pick(
    srv: ScriptedOpenAI, store: Store
) -> None:
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank((99_999, "high", "made up"), (store.ids["dental"], "low", "no")))
    r, _ = store.ask()
    assert r.degraded == ("rerank: 1 unknown id dropped",) and not r.should_inject
    assert store.mem.llm_counters["rerank.empty"] == 1
    assert store.mem.llm_counters.get("rerank.ok", 0) == 0


def test_only_invented_ids_fall_back_to_fast_path(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank((99_999, "high", "made up")))
    r, _ = store.ask()
    assert r.degraded == ("rerank: 1 unknown id dropped, none left; fast-path ranking used",)
    assert r.results and r.results[0].episode.id == store.ids["dental"]


def test_a_list_of_thousands_is_read_only_to_its_first_items(
    srv: ScriptedOpenAI, store: Store
) -> None:
    """Each candidate is listed once at most: past a few times as many items, the list is
    not read (reading thousands would cost the turn its deadline), and made-up ids alone
    still fall back to the fast path."""
    made_up = [(99_999, "high", "made up")] * 8_000  # (a chat reply is read up to 1 MiB)
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank(*made_up))
    r, _ = store.ask()
    assert len(r.degraded) == 1
    assert "more not read) dropped, none left; fast-path ranking used" in r.degraded[0]
    assert r.results and r.results[0].episode.id == store.ids["dental"]
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "appointment"), *made_up))
    r, _ = store.ask()
    assert [x.episode.id for x in r.results] == [store.ids["dental"]]
    assert "more not read" in r.degraded[0]


def test_a_parsed_list_of_thousands_costs_no_more_than_its_first_items() -> None:
    from memengine.retrieve.rerank import parse_rerank

    reply = {"relevant_episodes": [{"id": 5, "relevance": "high", "reason": "x"}] * 200_000}
    outcome = parse_rerank(reply, [1, 2, 3])
    assert outcome.listed + outcome.unread == 200_000
    assert outcome.listed < 50 and len(outcome.unknown_ids) == outcome.listed


def test_a_call_that_never_left_its_queue_says_so(srv: ScriptedOpenAI, store: Store) -> None:
    """When every LLM thread is held (a server that holds each call to its deadline, many
    turns at once), a phase's call may wait its whole budget in the queue: the note says
    the server was never asked, rather than blame it for a timeout."""
    turn = store.mem._llm()
    release = threading.Event()
    held = [turn._pool.submit(release.wait) for _ in range(16)]
    try:
        r, _ = store.ask()
    finally:
        release.set()
    assert all(f.result(timeout=5) for f in held)
    assert srv.chat_requests == []
    assert len(r.degraded) == 2 and all("not started" in note for note in r.degraded)
    assert r.results  # the fast path's answer


@contextmanager
def freed_late(pool: Any, release: threading.Event, after_s: float) -> Iterator[None]:
    """Set ``release`` (which holds every LLM thread) ``after_s`` seconds after the turn
    queues its first call on ``pool``: a phase's budget starts when it is queued, so a timer
    started before the turn would free the threads early by however long the turn took to
    get there (on a loaded machine, long enough to leave the call its 0.1 s and send it)."""
    queued = threading.Event()
    submit = pool.submit

    def queue(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        future = submit(fn, *args, **kwargs)
        queued.set()
        return future

    def free() -> None:
        queued.wait(60)
        time.sleep(after_s)
        release.set()

    pool.submit = queue  # (an attribute of this pool, deleted below)
    thread = threading.Thread(target=free, daemon=True)
    thread.start()
    try:
        yield
    finally:
        del pool.submit  # (no cycle through the pool is left)
        queued.set()
        release.set()
        thread.join()


def test_a_call_taken_up_too_late_is_not_sent(srv: ScriptedOpenAI, store: Store) -> None:
    """A phase's call that waited in the queue for nearly all of its budget is not sent when
    a thread takes it up (it would hold the thread and the server for a whole budget more,
    after its turn gave up on it): the note says it never started."""
    turn = store.mem._llm()
    release = threading.Event()
    held = [turn._pool.submit(release.wait) for _ in range(16)]
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "the vet date")))
    with freed_late(turn._pool, release, 0.33):  # the expansion's budget here is 0.4 s
        r, _ = store.ask()
    assert all(f.result(timeout=5) for f in held)
    assert all("Candidates:" in user_prompt(req) for req in srv.chat_requests)  # no expansion
    assert any(d.startswith("expansion") and "not started" in d for d in r.degraded)
    assert r.results


def test_a_call_taken_up_too_late_holds_no_closed_memory(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """The error that says so is kept by its future; it holds no frame of the turn, so a
    closed memory is freed without a full garbage collection."""

    def use(mem: Memory) -> None:
        mem.add_exchange("I like the ramen at Menya Kaze", "Nice")
        turn = mem._llm()
        release = threading.Event()
        held = [turn._pool.submit(release.wait) for _ in range(16)]
        srv.push_chat(json_data={"relevant_episodes": [], "injection_strategy": "summarize"})
        with freed_late(turn._pool, release, 0.33):
            r = mem.retrieve("where was that ramen place?")
        assert all(f.result(timeout=5) for f in held)
        assert any(d.startswith("expansion") and "not started" in d for d in r.degraded)

    def make() -> Memory:
        return Memory.open(tmp_path / "m.db", config=config(srv.base_url), embedder=HashEmbedder())

    assert freed_without_a_collection(make, use)


def test_empty_lists_mean_nothing_to_inject(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data={"expanded_queries": [], "detected_references": []})
    srv.push_chat(json_data={"relevant_episodes": [], "injection_strategy": "summarize"})
    r, _ = store.ask()
    assert r.degraded == ()
    assert r.results == () and not r.should_inject
    assert not store.mem.pack(r, query=TEXT).injected
    assert store.mem.llm_counters["rerank.empty"] == 1


def test_wrong_types_fall_back(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data={"expanded_queries": "Juno vet", "detected_references": 3})
    srv.push_chat(json_data={"relevant_episodes": [{"id": "abc", "relevance": "high"}]})
    r, _ = store.ask()
    assert len(r.degraded) == 2
    assert r.degraded[0].startswith("expansion: invalid reply: expanded_queries")
    assert r.degraded[1].startswith("rerank: invalid reply: relevant_episodes.0.id")
    assert r.results and all(x.reason is None for x in r.results)


def test_hostile_strings_and_nesting_from_the_llm(srv: ScriptedOpenAI, store: Store) -> None:
    """Lone surrogates, control characters and a date at the calendar's edge in otherwise
    valid replies are cleaned or ignored; a reply nested past the parser's depth is invalid
    JSON. The turn answers every time."""
    srv.push_chat(
        json_data=expansion(
            "\ud800 Juno vet",
            refs=[{"type": "temporal", "surface": "then", "resolved": "2020-01-01/9999-12-31"}],
        )
    )
    srv.push_chat(
        json_data=rerank((store.ids["dental"], "high", "\ud800 on \u202e2 June \u0000\u001b[31m"))
    )
    r, _ = store.ask()
    assert r.results[0].episode.id == store.ids["dental"]
    assert r.results[0].reason == "? on 2 June"  # no NUL, no escape sequence, no reordering
    assert "? Juno vet" in r.queries
    text = store.mem.pack(r, query=TEXT).text
    text.encode("utf-8")  # printable and sendable: no lone surrogate left
    assert "\x1b" not in text and "\x00" not in text
    srv.push_chat("[" * 100_000 + "]" * 100_000)
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "appointment")))
    r, _ = store.ask()
    assert r.degraded and r.degraded[0].startswith("expansion: invalid JSON")
    assert r.results[0].episode.id == store.ids["dental"]


def test_true_is_not_an_episode_id(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank((True, "high", "made up")))  # type: ignore[arg-type]
    r, _ = store.ask()
    assert r.degraded[0].startswith("rerank: invalid reply: relevant_episodes.0.id")
    assert r.results and r.results[0].episode.id == store.ids["dental"]  # the fast path's


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            {"message": {"role": "assistant", "content": None, "refusal": "I can't help"}},
            "refusal \"I can't help\"; finish_reason 'stop'",
        ),
        (
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "t",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            },
            "tool calls instead of text; finish_reason 'tool_calls'",
        ),
        (
            {"message": {"role": "assistant", "content": None}, "finish_reason": "content_filter"},
            "finish_reason 'content_filter'",
        ),
        (
            {"message": {"role": "assistant", "content": 42}},
            "content of another kind than text: int; finish_reason 'stop'",
        ),
        (
            {"message": {"role": "assistant", "content": [{"type": "image_url"}]}},
            "content of another kind than text: parts without text; finish_reason 'stop'",
        ),
    ],
)
def test_a_reply_without_text_says_what_it_held(
    srv: ScriptedOpenAI, body: dict[str, Any], said: str
) -> None:
    choice = {"index": 0, "finish_reason": "stop", **body}
    srv.push_chat(body=completion_body(None, choices=[choice]))
    from memengine.errors import LLMResponseError
    from memengine.llm.client import ChatClient

    with (
        ChatClient(base_url=srv.base_url, max_retries=0) as client,
        pytest.raises(LLMResponseError, match=re.escape(f"returned no message content ({said})")),
    ):
        client.complete_json(
            model="m", system="s", user="u", schema=None, max_tokens=5, deadline_s=2.0
        )


def test_a_turn_that_waits_for_the_chat_client_says_how_long(
    srv: ScriptedOpenAI, store: Store
) -> None:
    """The wait is within the turn's deadline, and counted apart: a first turn just after
    open would otherwise look faster than it was."""
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "appointment")))
    r, _ = store.ask()
    assert "llm_client" not in r.timings_ms  # the client was ready
    unbuilt(store.mem)
    threading.Timer(0.2, store.mem._llm_lock.release).start()
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "appointment")))
    r, _ = store.ask()  # (within TURN_S + MARGIN_S, the wait included)
    assert r.timings_ms["llm_client"] >= 150 and not r.degraded


def unbuilt(mem: Memory) -> None:
    """Make ``mem``'s LLM turn as if it were still being built (by the warm-up on open,
    importing openai): a new one is built when the lock taken here is released."""
    mem._llm_lock.acquire()
    assert mem._llm_turn is not None
    mem._llm_turn.close()
    mem._llm_turn = None


def test_a_turn_whose_client_is_not_ready_in_its_deadline_answers_from_the_fast_path(
    srv: ScriptedOpenAI, store: Store
) -> None:
    """The first turn after open waited for the chat client outside ``turn_deadline_s``
    (importing openai: 0.7–1.3 s more): a client not ready within it now skips the LLM
    phases, as a phase past the deadline does; the next turn has it."""
    unbuilt(store.mem)
    try:
        r, _ = store.ask()  # (within TURN_S + MARGIN_S)
    finally:
        store.mem._llm_lock.release()
    assert r.results[0].episode.id == store.ids["dental"] and srv.chat_requests == []
    note = (
        "the LLM client was not ready within the turn's deadline of 1s (turn_deadline_s; "
        "it is built once, importing openai)"
    )
    assert r.degraded[:2] == (f"expansion: skipped, {note}", f"rerank: skipped, {note}")
    assert {"expansion", "rerank"} <= r.degraded_parts
    srv.push_chat(json_data=GOOD_EXPANSION)
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "appointment")))
    r, _ = store.ask()
    assert len(srv.chat_requests) == 2 and not r.degraded


def test_a_reply_in_text_parts_is_read(srv: ScriptedOpenAI) -> None:
    """Some servers send the message's content as a list of parts: their text is read."""
    parts = [{"type": "text", "text": '{"ok": '}, {"type": "text", "text": "1}"}]
    choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant"}}
    choice["message"]["content"] = parts  # type: ignore[index]
    srv.push_chat(body=completion_body(None, choices=[choice]))
    from memengine.llm.client import ChatClient

    with ChatClient(base_url=srv.base_url, max_retries=0) as client:
        answer = client.complete_json(
            model="m", system="s", user="u", schema=None, max_tokens=5, deadline_s=2.0
        )
    assert answer.data == {"ok": 1}


def test_the_message_itself_is_not_an_expanded_query(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data=expansion(TEXT, "  ", "Juno vet", "juno  VET"))
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "x")))
    r, _ = store.ask()
    assert r.queries[1:] == ("Juno vet",)


# -- HTTP trouble ------------------------------------------------------------------------------


def test_429_then_success(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(status=429, error_message="slow down")
    push_good(srv, store)
    r, _ = store.ask()
    assert r.degraded == ()
    assert len(srv.chat_requests) == 3
    assert r.results[0].episode.id == store.ids["dental"]


def test_http_500_everywhere_keeps_the_fast_path(srv: ScriptedOpenAI, store: Store) -> None:
    srv.default_chat = ScriptedReply(status=500, error_message="boom")
    r, _ = store.ask()
    assert len(r.degraded) == 2
    assert r.degraded[0].startswith("expansion: ") and "HTTP 500" in r.degraded[0]
    assert r.degraded[1].startswith("rerank: ") and "HTTP 500" in r.degraded[1]
    assert r.results and len(r.queries) == 1
    assert len(srv.chat_requests) == 6  # 1 + 2 retries per phase


def test_a_servers_error_text_reaches_no_note_with_its_controls(
    srv: ScriptedOpenAI, store: Store
) -> None:
    """A 500 whose message held an escape sequence, a bell, U+202E and a NUL was copied into
    ``Retrieval.degraded`` byte for byte (a library's logs print them)."""
    srv.default_chat = ScriptedReply(
        status=500, error_message="\x1b[2J\x1b[1;31mFAKE\x07\u202eevil\x00"
    )
    r, _ = store.ask()
    assert r.degraded and all("FAKE" in d and "evil" in d for d in r.degraded)
    assert not any(c in d for d in r.degraded for c in "\x1b\x07\u202e\x00")


def test_slow_expansion_times_out_and_rerank_still_runs(srv: ScriptedOpenAI, store: Store) -> None:
    srv.push_chat(json_data=GOOD_EXPANSION, delay=PHASE_S + 0.6)
    srv.push_chat(json_data=rerank((store.ids["dental"], "high", "appointment")))
    r, elapsed = store.ask()
    assert r.degraded == (f"expansion: timeout after {PHASE_S:.2f} s",)
    assert [x.episode.id for x in r.results] == [store.ids["dental"]]
    assert elapsed < PHASE_S + 0.6


def test_both_phases_slow_stay_within_the_turn_deadline(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    # the rerank deadline (0.9 s) is cut to the time left in the turn (~0.55 s)
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_deadline_s=0.9))
    try:
        srv.default_chat = ScriptedReply(content=json.dumps(GOOD_EXPANSION), delay=3.0)
        r, elapsed = s.ask()
        assert r.degraded[0] == f"expansion: timeout after {PHASE_S:.2f} s"
        # cut from 0.9 s to what the turn had left (about 0.55 s; less on a busy host)
        cut = r.degraded[1].removeprefix("rerank: timeout after ").split(" s")[0]
        assert r.degraded[1].startswith("rerank: timeout after ") and 0.2 < float(cut) < 0.9
        assert r.results and elapsed >= TURN_S - 0.2
    finally:
        s.mem.close()


def test_connection_refused(tmp_path: Path, refused_port: int) -> None:
    s = Store(tmp_path / "m.db", config(f"http://127.0.0.1:{refused_port}/v1"))
    try:
        r, elapsed = s.ask("What did we eat last week?")
        assert len(r.degraded) == 2
        assert all("refused the connection" in d for d in r.degraded)
        assert elapsed < 0.8  # no retries, no waiting for a deadline
        # the offline parser still reads last week (Mon 25 – Sun 31 May), searched in it;
        # what the fast path finds outside it stays: a dead LLM answers no worse than none
        assert r.time_window is not None
        assert r.time_window[0] == datetime(2026, 5, 25, tzinfo=timezone.utc)
        fast, _ = s.ask("What did we eat last week?", llm=False)
        got = {x.episode.id for x in r.results}
        assert got == {x.episode.id for x in fast.results}
        assert got >= {s.ids["ramen"], s.ids["pottery"], s.ids["slippers"]}
    finally:
        s.mem.close()


# -- what the phases are for -------------------------------------------------------------------


def test_expanded_anaphora_finds_the_evidence(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_enabled=False))
    # no "when": asked for a time, the fast path itself lifts the turn that names a date
    text = "Ugh. What was her thing at the vet again?"
    try:
        fast, _ = s.ask(text, llm=False)
        assert fast.results[0].episode.id == s.ids["slippers"]  # the recent words win
        assert s.ask(llm=False)[0].results[0].episode.id == s.ids["dental"]  # TEXT asks "when"
        srv.push_chat(json_data=GOOD_EXPANSION)
        r, _ = s.ask(text)
        assert r.degraded == ()
        assert r.results[0].episode.id == s.ids["dental"]
        assert r.queries[1:] == tuple(GOOD_EXPANSION["expanded_queries"])
        assert len(srv.chat_requests) == 1  # rerank disabled
    finally:
        s.mem.close()


def test_temporal_reference_from_the_llm_is_searched(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_enabled=False))
    try:
        refs = [
            {"type": "temporal", "surface": "the other day", "resolved": "2026-05-25/2026-05-28"}
        ]
        srv.push_chat(json_data=expansion("restaurant we tried", refs=refs))
        r, _ = s.ask("Where was that place we went the other day?", recent=[])
        # 25–28 May, widened by the recording lag (half its length: 2 days)
        assert r.time_window == (
            datetime(2026, 5, 25, tzinfo=timezone.utc),
            datetime(2026, 5, 31, tzinfo=timezone.utc),
        )
        # the window's memories are all found, its best first (rerank disabled: the fast
        # path's ranking, the window's bonus with it)
        in_window = {s.ids["ramen"], s.ids["pottery"], s.ids["slippers"]}
        assert {x.episode.id for x in r.results} >= in_window
        assert r.results[0].episode.id == s.ids["ramen"]
        assert r.degraded == ()
    finally:
        s.mem.close()


def _temporal(surface: str, resolved: str) -> dict[str, Any]:
    return expansion(refs=[{"type": "temporal", "surface": surface, "resolved": resolved}])


def test_a_time_the_conversation_never_named_is_no_window(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """The LLM's "yesterday" for a message that names no time was searched, and shut out
    the memory asked about; a time it moved ("last week" to April) won over the message's."""
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_enabled=False))
    try:
        srv.push_chat(json_data=_temporal("yesterday", "0001-01-01/9999-12-31"))
        r, _ = s.ask("Where did we try the ramen?", recent=[])
        assert r.time_window is None and r.results[0].episode.id == s.ids["ramen"]
        assert r.degraded == ("expansion: time 'yesterday' not in the conversation; ignored",)
        # the message's own "last week" (25 May – 1 June) wins over the LLM's April
        srv.push_chat(json_data=_temporal("last week", "2026-04-01/2026-04-30"))
        r, _ = s.ask("What did I start last week?", recent=[])
        own = parse_time_window("last week", NOW)
        assert own is not None and r.time_window is not None and r.time_window[0] == own[0]
        assert r.results[0].episode.id == s.ids["pottery"]  # April's tender is not lifted
        assert r.degraded == (
            "expansion: time window 2026-04-01 00:00–2026-05-01 00:00 is outside the "
            "message's own 2026-05-25 00:00–2026-06-01 00:00; the message's used",
        )
    finally:
        s.mem.close()


def test_a_time_said_before_or_narrowed_is_the_llms(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    """Not a false alarm: words of an earlier turn, in another case or width, and a window
    within the message's own (先週 narrowed to four days) are the LLM's to resolve."""
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_enabled=False))
    try:
        srv.push_chat(json_data=_temporal("Last  Week", "2026-05-25/2026-05-28"))
        recent = [{"role": "user", "text": "We went somewhere new LAST WEEK"}]
        r, _ = s.ask("Where was that place?", recent=recent)
        assert r.degraded == () and r.time_window is not None
        assert r.time_window[0] == datetime(2026, 5, 25, tzinfo=timezone.utc)
        srv.push_chat(json_data=_temporal("先週", "2026-05-25/2026-05-28"))
        r, _ = s.ask("ＰＯＴＴＥＲＹは先週始めたっけ？", recent=[])
        assert r.degraded == () and r.time_window is not None
        assert r.time_window[1] == datetime(2026, 5, 31, tzinfo=timezone.utc)  # 28 May, widened
    finally:
        s.mem.close()


def test_a_time_inside_a_longer_word_is_not_said(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    """The LLM's words were looked for as letters anywhere: "May" in "Maybe", "now" in
    "know" and 昨日 in 一昨日 counted as said, and the model's guess was searched."""
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_enabled=False))
    try:
        for text, surface, recent in [
            ("Maybe we should go back to that ramen place?", "May", []),
            ("I know you like ramen, what was the shop?", "now", []),
            ("どこの店だっけ？", "昨日", [{"role": "user", "text": "一昨日ラーメン食べた"}]),
            ("あのせんしゅうまいよね、誰だっけ？", "せんしゅう", []),  # 選手うまい
            ("やきゅうせんしゅうになった子、誰だっけ？", "せんしゅう", []),  # 野球選手
            ("May I ask where we had ramen?", "May", []),  # the modal, not the month
        ]:
            srv.push_chat(json_data=_temporal(surface, "2026-05"))
            r, _ = s.ask(text, recent=recent)
            assert r.time_window is None, text
            assert r.degraded == (f"expansion: time '{surface}' not in the conversation; ignored",)
        # not a false alarm: the same words standing alone in an earlier turn
        srv.push_chat(json_data=_temporal("May", "2026-05"))
        r, _ = s.ask("What was it called?", recent=[{"role": "user", "text": "ramen in May!"}])
        assert r.degraded == () and r.time_window is not None
        assert r.time_window[0] == datetime(2026, 5, 1, tzinfo=timezone.utc)
        srv.push_chat(json_data=_temporal("May", "2026-05"))  # the month, after "in"
        r, _ = s.ask("What did we eat? In May I had ramen somewhere", recent=[])
        assert r.time_window is not None and r.time_window[0].month == 5
        srv.push_chat(json_data=_temporal("", "2026-05"))  # no words: said so, not "time ''"
        r, _ = s.ask("Where did we eat?", recent=[])
        assert r.time_window is None
        assert r.degraded == ("expansion: a time reference with no words; ignored",)
    finally:
        s.mem.close()


def test_the_llms_reading_of_the_messages_own_time_is_taken(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """The model's words for a time the message names (先週 for せんしゅう, "last Friday"
    for "last fri", a Sunday–Saturday week) were "not in the conversation": a false alarm,
    and "three days ago"'s exact day lost to the message's three. Each of the message's
    times is its own bound (a day's a day exactly): May is in neither "last week" nor April."""
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_enabled=False))
    try:
        for text, surface, resolved, start in [
            ("せんしゅう始めたのなんだっけ？", "先週", "2026-05-25/2026-05-28", 25),
            ("せんせんしゅう始めたのなんだっけ？", "先々週", "2026-05-18/2026-05-24", 18),
            ("たぶんせんしゅうだったよね、どこいった？", "せんしゅう", "2026-05-25/2026-05-28", 25),
            ("What happened last fri?", "last Friday", "2026-05-29", 29),
            ("What did I start last week?", "last week", "2026-05-24/2026-05-30", 24),
            ("What happened 3 days ago?", "three days ago", "2026-05-29", 29),
        ]:
            srv.push_chat(json_data=_temporal(surface, resolved))
            r, _ = s.ask(text, recent=[])
            assert r.degraded == (), text
            assert r.time_window is not None
            assert r.time_window[0] == datetime(2026, 5, start, tzinfo=timezone.utc), text
        srv.push_chat(json_data=_temporal("May", "2026-05"))
        r, _ = s.ask("What did we do last week and in April?", recent=[])
        assert r.degraded == (
            "expansion: time window 2026-05-01 00:00–2026-06-01 00:00 is outside the message's "
            "own 2026-05-25 00:00–2026-06-01 00:00 or 2026-04-01 00:00–2026-05-01 00:00; "
            "the message's used",
        )
        srv.push_chat(json_data=_temporal("昨日", "2026-05-31"))
        r, _ = s.ask("一昨日どこ行った？", recent=[])
        assert r.degraded[0] == (
            "expansion: time window 2026-05-31 00:00–2026-06-01 00:00 is outside the message's "
            "own 2026-05-30 00:00–2026-05-31 00:00; the message's used"
        )
    finally:
        s.mem.close()


def test_empty_time_window_falls_back_to_all_time(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    s = Store(tmp_path / "m.db", config(srv.base_url, rerank_enabled=False))
    try:
        refs = [{"type": "temporal", "surface": "in January", "resolved": "2026-01-01/2026-01-31"}]
        srv.push_chat(json_data=expansion("Juno vet", refs=refs))
        r, _ = s.ask("What did Juno do in January?", recent=[])
        assert r.time_window is None
        assert len(r.degraded) == 1
        assert re.match(
            r"time window 2026-01-01 00:00–2026-02-08 00:00: no candidates", r.degraded[0]
        )
        assert r.results
    finally:
        s.mem.close()


def test_expansion_cache_skips_identical_calls(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    s = Store(tmp_path / "m.db", config(srv.base_url, cache_expansions=True, rerank_enabled=False))
    try:
        srv.push_chat(json_data=GOOD_EXPANSION)
        first, _ = s.ask()
        second, _ = s.ask()
        assert len(srv.chat_requests) == 1
        assert first.queries == second.queries
        assert s.mem.llm_counters["expansion.cached"] == 1
        # a forgotten user's messages are not kept in the cache: the same message is asked
        s.mem.add_exchange("a note of bob's", "ok", agent="bob")
        s.mem.forget_agent("bob")
        srv.push_chat(json_data=GOOD_EXPANSION)
        s.ask()
        assert len(srv.chat_requests) == 2
    finally:
        s.mem.close()


def test_llm_switch(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    s = Store(tmp_path / "m.db", config(srv.base_url))
    try:
        r, _ = s.ask(llm=False)
        assert srv.chat_requests == [] and r.results
    finally:
        s.mem.close()
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(NOW)) as plain:
        assert not plain.llm_configured
        assert plain.retrieve("Juno").results  # no endpoint: the fast path, no error
        with pytest.raises(ConfigError, match=r"llm=True \(--llm\) needs an LLM endpoint"):
            plain.retrieve("Juno", llm=True)


@pytest.mark.parametrize("proxy", ["socks9://proxy.invalid:1080", "http://[bad", "http://"])
def test_a_proxy_the_client_cannot_use_leaves_the_fast_path_answering(
    tmp_path: Path, srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch, proxy: str
) -> None:
    """A proxy variable the HTTP client cannot use (an unknown scheme, SOCKS without its
    package, a broken URL) fails every client it builds: a turn answers from the fast path,
    each LLM phase saying why; asked for by name, the error names the variable."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(NOW)) as m:
        fact = m.add_exchange("Juno stays with Kenji when I travel", "Good to know.")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALL_PROXY", proxy)
    cfg = config(srv.base_url)
    cfg.lifecycle.record_turns = True  # (for the feedback below)
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=HashEmbedder()) as m:
        m.load_llm_client()  # (its import, past TURN_S in a new process, is not the turn's)
        r = m.retrieve("Who looks after Juno?")
        assert r.results[0].episode.id == fact and srv.chat_requests == []
        notes = [d for d in r.degraded if "the LLM client cannot be built" in d]
        assert len(notes) == 2 and "ALL_PROXY" in notes[0]
        assert {"expansion", "rerank"} <= r.degraded_parts
        with pytest.raises(ConfigError, match="cannot use the proxy that ALL_PROXY names"):
            m.retrieve("Who looks after Juno?", llm=True)
        assert r.turn_id is not None  # feedback on an answer: matched without the LLM
        report = m.feedback(r.turn_id, answer="Kenji looks after Juno when you travel.")
        assert fact in report.used and "ALL_PROXY" in report.degraded[0]
        with pytest.raises(ConfigError, match="ALL_PROXY"):
            m.feedback(r.turn_id, answer="Kenji does.", judge="llm")


def test_a_certificate_file_that_cannot_be_read_leaves_the_fast_path_answering(
    tmp_path: Path, srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SSL_CERT_FILE naming no file failed the HTTP client's TLS context with a bare
    FileNotFoundError: the turn lost its full-text answer and the CLI said only "[Errno 2]".
    Now a ConfigError that names the variable: the fast path answers, each phase says why
    (for an https endpoint: plain HTTP reads no TLS setting)."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(NOW)) as m:
        fact = m.add_exchange("Juno stays with Kenji when I travel", "Good to know.")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    https = srv.base_url.replace("http://", "https://", 1)
    with Memory.open(tmp_path / "m.db", config=config(https), embedder=HashEmbedder()) as m:
        m.load_llm_client()
        r = m.retrieve("Who looks after Juno?")
        assert r.results[0].episode.id == fact and srv.chat_requests == []
        notes = [d for d in r.degraded if "the LLM client cannot be built" in d]
        assert len(notes) == 2 and "SSL_CERT_FILE in the environment names" in notes[0]
        with pytest.raises(ConfigError, match=r"TLS settings failed .*SSL_CERT_FILE"):
            m.retrieve("Who looks after Juno?", llm=True)


@pytest.mark.parametrize("certificates", ["missing", "not PEM"])
def test_a_certificate_file_that_cannot_be_read_stops_no_plain_http_endpoint(
    tmp_path: Path, srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch, certificates: str
) -> None:
    """A stale SSL_CERT_FILE in the shell refused the client for a local server over plain
    HTTP (Ollama, llama.cpp), which reads no certificate: the LLM phases ran never. Now
    they run, and the same file still refuses an https endpoint."""
    stale_certificate_file(monkeypatch, tmp_path, certificates)
    with Memory.open(tmp_path / "m.db", config=config(srv.base_url), embedder=HashEmbedder()) as m:
        fact = m.add_exchange("Juno stays with Kenji when I travel", "Good to know.")
        srv.push_chat(json_data=GOOD_EXPANSION)
        r = m.retrieve("Who looks after Juno?", llm=True)
    assert r.results[0].episode.id == fact and len(srv.chat_requests) >= 1
    assert not [d for d in r.degraded if "cannot be built" in d]
    from memengine.llm.client import ChatClient

    with pytest.raises(ConfigError, match=r"TLS settings failed .*SSL_CERT_FILE in the env"):
        ChatClient(base_url=srv.base_url.replace("http://", "https://", 1))


def test_a_plain_http_client_without_tls_settings_verifies_any_redirect_to_https(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OpenAI library's client follows redirects: the plain-HTTP client built past an
    unreadable SSL_CERT_FILE still verifies every server and trusts none, so a redirect to
    https fails rather than going unverified or trusting certificates the file did not
    name. A client that would go through an https proxy needs TLS: still refused."""
    from memengine.http_deadline import http_client

    for name in ("SSL_CERT_DIR", "SSLKEYLOGFILE", "NO_PROXY", "no_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("all_proxy", "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")  # (only a redirect uses it)
    client = http_client("http://127.0.0.1:9/v1")
    assert client.follow_redirects
    transports = [client._transport, *(t for t in client._mounts.values() if t is not None)]
    assert len(transports) == 2
    for transport in transports:
        context = transport._inner._pool._ssl_context
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert context.cert_store_stats()["x509_ca"] == 0
    client.close()
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.corp:3128")  # TLS to the proxy
    with pytest.raises(ConfigError, match=r"TLS settings failed .*SSL_CERT_FILE"):
        http_client("http://127.0.0.1:9/v1")
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "no-such-folder"))
    with pytest.raises(ConfigError, match="SSL_CERT_DIR in the environment names no folder"):
        http_client("http://127.0.0.1:9/v1")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp:3128")
    http_client("http://127.0.0.1:9/v1").close()  # (plain HTTP to a plain-HTTP proxy)


def test_a_tls_error_names_the_variable_the_client_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SSL_CERT_FILE is read before SSL_CERT_DIR, and REQUESTS_CA_BUNDLE not at all: the
    message named every variable set (a stale REQUESTS_CA_BUNDLE among them). A certificate
    folder that does not exist was taken without a word by OpenSSL, so every HTTPS request
    failed to verify, naming nothing: it is refused for an HTTPS endpoint, not for HTTP."""
    from memengine.http_deadline import http_client

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE", "REQUESTS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    garbage = tmp_path / "bad.pem"
    garbage.write_text("not a certificate")
    monkeypatch.setenv("SSL_CERT_FILE", str(garbage))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "old-ca.pem"))
    with pytest.raises(ConfigError) as refused:
        http_client("https://127.0.0.1:9/v1")
    assert "SSL_CERT_FILE in the environment names" in str(refused.value)
    assert "REQUESTS_CA_BUNDLE" not in str(refused.value)
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "no-such-folder"))
    with pytest.raises(ConfigError, match="SSL_CERT_DIR in the environment names no folder"):
        http_client("https://127.0.0.1:9/v1")
    http_client("http://127.0.0.1:9/v1").close()  # (plain HTTP verifies no server)


def test_a_broken_proxy_for_other_urls_is_left_to_them(
    tmp_path: Path, srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stale proxy variable that the endpoint's requests do not go through (NO_PROXY, or
    another scheme) stops nothing."""
    for name in ("ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://[bad")
    monkeypatch.setenv("NO_PROXY", "localhost")
    with Memory.open(tmp_path / "m.db", config=config(srv.base_url), embedder=HashEmbedder()) as m:
        m.add_exchange("Juno stays with Kenji when I travel", "Good to know.")
        srv.push_chat(json_data=GOOD_EXPANSION)
        r = m.retrieve("Who looks after Juno?", llm=True)
    assert r.results and len(srv.chat_requests) >= 1
    monkeypatch.setenv("HTTP_PROXY", "http://")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Memory.open(tmp_path / "m.db", config=config(srv.base_url), embedder=HashEmbedder()) as m:
        assert m.retrieve("Who looks after Juno?", llm=True).results
    # one the HTTP library refuses outright (SOCKS without its package), NO_PROXY for this
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    with Memory.open(tmp_path / "m.db", config=config(srv.base_url), embedder=HashEmbedder()) as m:
        assert m.retrieve("Who looks after Juno?", llm=True).results


def test_a_proxy_error_shows_no_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """A password holding a raw "/" stops the URL parser inside it ("Invalid port:
    'Xk9pQ2rT'"): the error quotes none of the library's text about a URL."""
    from memengine.http_deadline import http_client

    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://admin:Xk9pQ2rT/vLm8@proxy.corp:3128")
    with pytest.raises(ConfigError) as err:
        http_client("https://api.example.com/v1")
    assert "Xk9pQ2rT" not in str(err.value) and "HTTPS_PROXY" in str(err.value)
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.setenv("ALL_PROXY", "ftp://user:s3cret@proxy.example:21")
    with pytest.raises(ConfigError) as err:
        http_client("http://127.0.0.1:8080/v1")
    assert "s3cret" not in str(err.value) and "ALL_PROXY" in str(err.value)


ONE_CA = """\
-----BEGIN CERTIFICATE-----
MIIBjDCCATOgAwIBAgIUHFxqhHXTDh7eyWMXE5Pjazfn4tUwCgYIKoZIzj0EAwIw
HDEaMBgGA1UEAwwRbWVtZW5naW5lIHRlc3QgQ0EwHhcNMjYxMjA1MjE0MzI3WhcN
MzYxMjAyMjE0MzI3WjAcMRowGAYDVQQDDBFtZW1lbmdpbmUgdGVzdCBDQTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABAgKwj+/UP4vrtQiRcM8vatZCCcs2lyFBJmK
2CnFz48oNdBGGxQkXtKK3lqD7RAm9C8z1earPQRpovIVejbbzNWjUzBRMB0GA1Ud
DgQWBBQMhY8JsQCctOBEd8IuJ+yR69RLATAfBgNVHSMEGDAWgBQMhY8JsQCctOBE
d8IuJ+yR69RLATAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCICrG
47MsSrBnKv9rUnbBR4B2qbL1oFmAndYiql7kic3GAiAO/myFXdzK36BOYSsQZxCg
FpBrr27N63MfTXT65+gSMw==
-----END CERTIFICATE-----
"""
"""A self-signed CA certificate (a test's SSL_CERT_FILE: its only one)."""


def test_a_refused_proxy_leaves_the_endpoints_own_and_its_other_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A desktop's proxy variables: https_proxy works, all_proxy is SOCKS without its
    package. An https endpoint goes through https_proxy; an exempt one through none, still
    reading the environment's other settings (SSL_CERT_FILE)."""
    from memengine.http_deadline import http_client

    for name in ("NO_PROXY", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("https_proxy", "http://proxy.corp:3128/")
    monkeypatch.setenv("all_proxy", "socks5://proxy.corp:1080/")
    monkeypatch.setenv("no_proxy", "localhost,127.0.0.1")
    through = http_client("https://api.openai.com/v1")
    assert [p.pattern for p in through._mounts] == ["all://"]  # the endpoint's own proxy
    direct = http_client("http://127.0.0.1:8080/v1")
    assert direct._mounts == {}
    # the environment's SSL_CERT_FILE is still read by both: a file of one CA certificate
    one = tmp_path / "one-ca.pem"
    one.write_text(ONE_CA)
    monkeypatch.setenv("SSL_CERT_FILE", str(one))
    for url in ("https://api.openai.com/v1", "http://127.0.0.1:8080/v1"):
        client = http_client(url)
        transport = next(iter(client._mounts.values()), client._transport)._inner
        assert transport._pool._ssl_context.cert_store_stats()["x509_ca"] == 1


def test_a_proxy_that_refuses_is_named_as_the_way_to_the_endpoint(
    tmp_path: Path, srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The endpoint is up, the proxy the environment names is not: the note names the proxy
    rather than blame the endpoint alone."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://user:secret@127.0.0.1:9")
    with Memory.open(tmp_path / "m.db", config=config(srv.base_url), embedder=HashEmbedder()) as m:
        m.add_exchange("Juno stays with Kenji when I travel", "Good to know.")
        r = m.retrieve("Who looks after Juno?")
    assert r.results and srv.chat_requests == []
    note = next(d for d in r.degraded if d.startswith("expansion"))
    assert "through the proxy http://***@127.0.0.1:9" in note and "secret" not in note


# -- the CLI, doctor and the latency benchmark ---------------------------------------------------


@pytest.fixture
def clean_env(cli_env: None, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    return monkeypatch


def test_llm_check_command(srv: ScriptedOpenAI, clean_env: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["llm-check"])
    assert missing.exit_code == 1 and "no LLM endpoint configured" in missing.output
    srv.chat_handler = scripted_handler(0.0)
    clean_env.setenv("MEMENGINE_LLM_BASE_URL", srv.base_url)
    clean_env.setenv("MEMENGINE_LLM__EXPANSION_MODEL", "test-chat")
    clean_env.setenv("MEMENGINE_LLM__RERANK_MODEL", "test-chat")
    result = runner.invoke(app, ["llm-check", "--json"])
    assert result.exit_code == 0, result.output
    checks = json.loads(result.output)["checks"]
    assert checks["ping test-chat"][0] and checks["expansion"][0] and checks["rerank"][0]
    assert "chose ['1 (high)'" in checks["rerank"][1]


def test_doctor_pings_the_endpoint(srv: ScriptedOpenAI, tmp_path: Path, refused_port: int) -> None:
    srv.default_chat = ScriptedReply(content="pong")
    db = tmp_path / "none.db"
    ok = diagnose(Config.model_validate({"db": str(db), "llm": {"base_url": srv.base_url}}))
    assert ok["checks"]["llm"][0] and srv.base_url in ok["checks"]["llm"][1]
    refused = f"http://127.0.0.1:{refused_port}/v1"
    bad = diagnose(Config.model_validate({"db": str(db), "llm": {"base_url": refused}}))
    assert not bad["checks"]["llm"][0] and "refused" in bad["checks"]["llm"][1]
    assert "llm" not in diagnose(Config.model_validate({"db": str(db)}))["checks"]


def test_cli_retrieve_llm_switch(srv: ScriptedOpenAI, clean_env: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    clean_env.setenv("MEMENGINE_LLM_BASE_URL", srv.base_url)
    srv.chat_handler = scripted_handler(0.0)
    db = "cli.db"
    added = runner.invoke(app, ["add", "Juno's dental cleaning is on 2 June", "--db", db])
    assert added.exit_code == 0, added.output
    plain = runner.invoke(app, ["retrieve", "When is it?", "--no-llm", "--db", db, "--json"])
    assert plain.exit_code == 0, plain.output
    assert srv.chat_requests == []
    out = runner.invoke(
        app, ["retrieve", "When is it?", "-r", "Juno's teeth", "--llm", "--db", db, "--json"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["degraded"] == [] and data["results"][0]["reason"] == "scripted choice"
    assert len(srv.chat_requests) == 2
    packed = runner.invoke(app, ["pack", "When is it?", "--llm", "--db", db])
    assert packed.exit_code == 0 and "→ why: scripted choice" in packed.output


def test_the_cli_loads_the_embedder_before_the_turns_clock(
    srv: ScriptedOpenAI, clean_env: pytest.MonkeyPatch
) -> None:
    """Each CLI call opens the memory anew, and the default embedder reads its weights at its
    first embed (1–2 s): the CLI loads it before the turn, so that with the default 2 s
    deadline and each phase answered in 0.5 s both phases make it, as for a warmed server."""
    runner = CliRunner()
    clean_env.setenv("MEMENGINE_LLM_BASE_URL", srv.base_url)
    srv.chat_handler = scripted_handler(0.5)
    added = runner.invoke(app, ["add", "Juno's dental cleaning is on 2 June", "--db", "cli.db"])
    assert added.exit_code == 0, added.output
    for command in ("retrieve", "pack"):
        out = runner.invoke(
            app, [command, "When is it?", "-r", "Juno's teeth", "--llm", "--db", "cli.db", "--json"]
        )
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        r = data.get("retrieval", data)  # (pack's JSON holds the retrieval beside the pack)
        assert r["degraded"] == [], r["degraded"]  # no "rerank: skipped", no full text alone
        assert r["results"][0]["reason"] == "scripted choice" and "rerank" in r["timings_ms"]
    assert len(srv.chat_requests) == 4


def test_latency_benchmark_smoke() -> None:
    rows = run_llm_latency([50], turns=3, embedder=HashEmbedder(), warmup=1)
    assert [r["delay_ms"] for r in rows] == [None, 50]
    fast, llm = rows
    assert fast["expansion_on_time"] is None and fast["llm_calls"] == 0
    assert llm["turns"] == 3 and llm["llm_calls"] == 6
    assert llm["expansion_on_time"] == 1.0 and llm["rerank_on_time"] == 1.0
    assert llm["within_deadline"] == 1.0 and 100 <= llm["p50_ms"] <= llm["p95_ms"] < 2000


def test_a_failed_rerank_decides_as_the_fast_path_does(srv: ScriptedOpenAI, store: Store) -> None:
    # small talk that repeats a memory's words: the fast path's rule leaves the pack empty
    # (no question, no recall cue, not a near restatement), and so must a turn whose rerank fell back
    text = "Juno was at the vet today, poor thing."
    fast = store.mem.retrieve(text, llm=False)
    assert fast.results and not fast.should_inject
    srv.push_chat(json_data={"expanded_queries": [], "detected_references": []})
    srv.push_chat('{"relevant_episodes": [{"id": 1, "relev')
    r, _ = store.ask(text, recent=[])
    assert r.degraded and r.degraded[-1].endswith("fast-path ranking used")
    assert r.results[0].episode.id == store.ids["dental"]
    assert not r.should_inject
    # a question on the same fallback injects, as the fast path does
    srv.push_chat(json_data={"expanded_queries": [], "detected_references": []})
    srv.push_chat('{"relevant_episodes": [{"id": 1, "relev')
    asked, _ = store.ask("When is Juno's dental cleaning at the vet?", recent=[])
    assert asked.degraded and asked.should_inject


def test_a_failed_rerank_applies_the_opt_in_coverage(srv: ScriptedOpenAI, tmp_path: Path) -> None:
    base = config(srv.base_url).model_dump()
    base["retrieval"].update(coverage_min=0.9, coverage_word_min=0.64)
    s = Store(tmp_path / "c.db", Config.model_validate(base))
    try:
        # "grooming" is in no memory: the coverage refuses what the evidence rule lets through
        text = "When is Juno's dental cleaning at the vet, and her grooming?"
        fast = s.mem.retrieve(text, recent=[], llm=False)
        assert "coverage" in fast.timings_ms and not fast.should_inject
        srv.push_chat(json_data={"expanded_queries": [], "detected_references": []})
        srv.push_chat('{"relevant_episodes": [{"id": 1, "relev')
        r, _ = s.ask(text, recent=[])
        assert r.degraded and r.degraded[-1].endswith("fast-path ranking used")
        assert "coverage" in r.timings_ms and not r.should_inject
        # every word of this one is in memory
        srv.push_chat(json_data={"expanded_queries": [], "detected_references": []})
        srv.push_chat('{"relevant_episodes": [{"id": 1, "relev')
        asked, _ = s.ask("When is Juno's dental cleaning at the vet?", recent=[])
        assert asked.degraded and "coverage" in asked.timings_ms and asked.should_inject
    finally:
        s.mem.close()


def test_a_turn_whose_llm_phases_give_nothing_ranks_as_the_fast_path(
    srv: ScriptedOpenAI, tmp_path: Path, usem3: USEM3Embedder
) -> None:
    # the expansion adds nothing and the rerank breaks: the turn must return the fast path's
    # ranking, re-weighted by the query's reach and dense spread as the fast path does
    sample = json.loads((files("memengine.sample") / "companion_en.json").read_text("utf-8"))
    (conv,) = sample["conversations"]
    asked = [q for q in conv["questions"] if parse_time_window(q["query"], NOW) is None]
    with Memory.open(
        tmp_path / "s.db", config=config(srv.base_url), embedder=usem3, clock=FixedClock(NOW)
    ) as mem:
        mem.add_many(read_memsets(conv))
        assert len(asked) >= 4
        for q in asked:
            recent = [m["text"] for m in q["recent"]]
            fast = mem.retrieve(q["query"], recent=recent, llm=False)
            srv.push_chat(json_data={"expanded_queries": [], "detected_references": []})
            srv.push_chat('{"relevant_episodes": [{"id": 1, "relev')
            r = mem.retrieve(q["query"], recent=recent)
            assert r.degraded and r.degraded[-1].endswith("fast-path ranking used")
            assert [x.episode.id for x in r.results] == [x.episode.id for x in fast.results]
            assert [x.relevance for x in r.results] == [x.relevance for x in fast.results]
            assert r.should_inject == fast.should_inject and r.signals == fast.signals


def test_a_malformed_rerank_item_drops_only_itself() -> None:
    """One bad item used to discard every pick, and forms a small model writes often
    ("[id 12]", "High", a null reason, an unknown strategy) each counted as bad."""
    from memengine.retrieve.rerank import parse_rerank

    data = {
        "relevant_episodes": [
            {"id": "[id 12]", "relevance": "High", "reason": None},
            {"id": 13, "relevance": "none", "reason": "?"},
            {"relevance": "medium", "reason": "no id"},
            {"id": "14", "relevance": " medium ", "reason": "background"},
        ],
        "injection_strategy": "quote",
    }
    out = parse_rerank(data, [12, 13, 14])
    assert [(r.id, r.relevance, r.reason) for r in out.chosen] == [
        (12, "high", ""),
        (14, "medium", "background"),
    ]
    assert out.malformed == 2 and out.injection_strategy == "quote_key_parts"
    with pytest.raises(LLMResponseError, match=r"relevant_episodes\.0\.relevance"):
        parse_rerank({"relevant_episodes": [{"id": 12, "relevance": "none"}]}, [12])


def test_the_first_item_of_a_repeated_id_is_its_answer() -> None:
    """A reply that rates an id low and then high (or high, then low) is read by its first
    item, as docs/llm.md says: a low first item drops the id rather than let a later one in."""
    from memengine.retrieve.rerank import parse_rerank

    items = [
        {"id": 1, "relevance": "low", "reason": "unrelated"},
        {"id": 1, "relevance": "high", "reason": "the appointment"},
        {"id": 2, "relevance": "medium", "reason": "background"},
        {"id": 2, "relevance": "low", "reason": "on second thought"},
        {"id": 3, "relevance": "high", "reason": "the date"},
    ]
    out = parse_rerank({"relevant_episodes": items}, [1, 2, 3])
    assert [(r.id, r.relevance, r.reason) for r in out.chosen] == [
        (3, "high", "the date"),
        (2, "medium", "background"),
    ]


@pytest.mark.parametrize(
    ("written", "rerank_id", "judge_number"),
    [
        ("12", 12, 12),
        ("[12]", 12, 12),
        ("［１２］", 12, 12),
        ("[id 12]", 12, None),  # (the rerank's prompt writes "[id 12]"; the judge's "[12]")
        ("id 12", 12, None),
        ("-1", -1, -1),
        ("[12", None, None),  # (both brackets or none)
        ("12]", None, None),
        ("²", None, None),
        ("١٢", None, None),  # (Arabic-Indic digits are no number written as the prompt does)
    ],
)
def test_an_id_or_a_number_written_as_text_is_read_alike_by_rerank_and_judge(
    written: str, rerank_id: int | None, judge_number: int | None
) -> None:
    """One reader (:func:`memengine.text.written_number`) for the two LLM answers that name
    what they were shown by number; the rerank took "[12" and any Unicode digits."""
    from memengine.retrieve.rerank import parse_rerank
    from memengine.text import written_number

    assert written_number(written, id_label=True) == rerank_id
    assert written_number(written) == judge_number
    items = [{"id": written, "relevance": "high"}, {"id": 13, "relevance": "medium"}]
    out = parse_rerank({"relevant_episodes": items}, [12, 13])
    assert [r.id for r in out.chosen] == ([12, 13] if rerank_id == 12 else [13])
    assert out.malformed == (0 if rerank_id is not None else 1)  # (a bad id drops its item)


def test_expanded_queries_lose_a_models_control_characters() -> None:
    from memengine.retrieve.expand import clean_queries

    got = clean_queries(["dentist\x00 friday", "\x1b[31mred\x1b[0m", "\u202eabc", "\x00"], [], 5)
    assert got == ["dentist friday", "red", "abc"]


def test_llm_check_fails_a_rerank_that_turns_would_drop(
    srv: ScriptedOpenAI, clean_env: pytest.MonkeyPatch
) -> None:
    inventing = scripted_handler(0.0)

    def handle(body: Any) -> ScriptedReply:
        reply = inventing(body)
        data = json.loads(reply.content or "{}")
        if "relevant_episodes" in data:  # ids it was not shown
            data["relevant_episodes"] = [{"id": 999, "relevance": "high", "reason": "x"}]
        return ScriptedReply(content=json.dumps(data))

    srv.chat_handler = handle
    clean_env.setenv("MEMENGINE_LLM_BASE_URL", srv.base_url)
    result = CliRunner().invoke(app, ["llm-check", "--json"])
    assert result.exit_code == 1, result.output
    ok, detail = json.loads(result.output)["checks"]["rerank"]
    assert not ok and "invented ids [999]" in detail and "nothing usable is left" in detail


def test_llm_check_times_a_failed_phase(srv: ScriptedOpenAI, clean_env: pytest.MonkeyPatch) -> None:
    """A phase that failed after its deadline said only how it failed: the time it took, and
    that it was too long, were lost."""
    srv.default_chat = ScriptedReply(content="{}", delay=0.3)
    clean_env.setenv("MEMENGINE_LLM_BASE_URL", srv.base_url)
    clean_env.setenv("MEMENGINE_LLM__EXPANSION_DEADLINE_S", "0.1")
    result = CliRunner().invoke(app, ["llm-check", "--json"])
    assert result.exit_code == 1, result.output
    checks = json.loads(result.output)["checks"]
    ok, detail = checks["expansion"]
    assert not ok and detail.startswith("invalid reply: expanded_queries")
    assert re.search(r"; after 0\.\d\d s — over the 0\.10 s deadline$", detail)
    ok, detail = checks["rerank"]  # failed within its deadline (0.9 s): no "over"
    assert not ok and re.search(r"; after 0\.\d\d s \(deadline 0\.90 s\)$", detail), detail


def test_a_search_past_the_turn_deadline_is_not_waited_for() -> None:
    """With the turn's time spent (a slow embedder held up its first search), the expanded
    search is not waited for a minimum phase beyond the deadline: the turn ends in time,
    with what it has."""
    from concurrent.futures import Future

    from memengine.retrieve.turn import FINISH_S, LLMTurn

    waited: list[float | None] = []

    class Never(Future[Any]):
        def result(self, timeout: float | None = None) -> Any:
            waited.append(timeout)  # (what it waits, not the wall clock a loaded box stretches)
            return super().result(timeout)

    t0 = time.monotonic()
    assert LLMTurn._wait(None, Never(), t0 + FINISH_S) is None  # type: ignore[arg-type]
    assert len(waited) == 1 and waited[0] is not None
    assert waited[0] < 0.001  # (it waited 0.1 s past the deadline before)
    done: Future[Any] = Future()
    done.set_result("found")
    assert LLMTurn._wait(None, done, t0) == "found"  # one that has ended is taken


def test_a_rerank_list_longer_than_is_read_says_so(srv: ScriptedOpenAI, store: Store) -> None:
    """Of a rerank reply's list, three times the candidates (plus 10) are read: the rest is
    reported, not silently left."""
    srv.push_chat(json_data=GOOD_EXPANSION)
    dental = (store.ids["dental"], "high", "appointment")
    srv.push_chat(json_data=rerank(*[dental] * 200))
    r, _ = store.ask()
    assert [x.episode.id for x in r.results] == [store.ids["dental"]]
    note = next(d for d in r.degraded if d.startswith("rerank:"))
    assert "past its first" in note and "not read" in note
    assert store.mem.llm_counters["rerank.unread"] > 0 and store.mem.llm_counters["rerank.ok"] == 1
