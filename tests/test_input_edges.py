"""Arguments of the wrong type or past their range get InvalidInput (or NotFound) and change
nothing; odd but valid text gets an answer. Real SQLite + sqlite-vec + FTS5."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from memengine import InvalidInput, Memory, NewEpisode, NotFound

from .helpers import T0, HashEmbedder

HUGE = 2**70  # past what SQLite can store as an integer


@pytest.fixture
def ids(mem: Memory) -> list[int]:
    return [mem.add_exchange(f"episode number {i} about the dentist", "ok") for i in range(15)]


def test_retrieve_arguments(mem: Memory, ids: list[int]) -> None:
    with pytest.raises(InvalidInput, match="unknown episode kind 'bogus'"):
        mem.retrieve("dentist?", kinds=["bogus"])
    with pytest.raises(InvalidInput, match="limit must be a whole number"):
        mem.retrieve("dentist?", limit=2.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="day_range must be"):
        mem.retrieve("dentist?", day_range=10**9)
    with pytest.raises(InvalidInput, match="extra_queries must be strings"):
        mem.retrieve("dentist?", extra_queries=[None])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="must be a string, not int"):
        mem.retrieve(12345)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="lone surrogate"):
        mem.retrieve("dentist?", agent="\ud800")
    assert mem.retrieve("dentist?", kinds="exchange").results  # one kind given bare


@pytest.mark.parametrize(
    "text",
    [
        "what did we do on 9999-12-31?",
        "what about December 31st, 9999?",
        "9999年12月31日に何した？",
    ],
)
def test_a_date_at_the_calendars_edge_is_no_window(mem: Memory, ids: list[int], text: str) -> None:
    r = mem.retrieve(text)
    assert r.time_window is None and r.results


def test_ids_of_the_wrong_type_or_range(mem: Memory, ids: list[int]) -> None:
    with pytest.raises(InvalidInput, match="not the text '12'"):
        mem.delete("12")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="whole numbers"):
        mem.delete([1, "2"])  # type: ignore[list-item]
    assert mem.store.count() == 15  # nothing deleted
    assert mem.delete([HUGE, -1]) == []
    assert mem.delete(ids[11]) == [ids[11]]
    with pytest.raises(NotFound):
        mem.get(HUGE)
    with pytest.raises(NotFound):
        mem.life_of(HUGE)
    with pytest.raises(InvalidInput):
        mem.get("1")  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        mem.feedback(HUGE, [])
    r = mem.retrieve("dentist?")
    with pytest.raises(InvalidInput, match="by id"):
        mem.feedback(r.turn_id, ["x"])  # type: ignore[list-item]


@pytest.mark.parametrize("tasks", [math.nan, math.inf, -5, True])
def test_sleep_needs_a_finite_count_of_tasks(mem: Memory, ids: list[int], tasks: float) -> None:
    with pytest.raises(InvalidInput, match="tasks must be"):
        mem.sleep(tasks=tasks)
    assert mem.store.count() == 15


def test_lone_surrogates_outside_the_text(mem: Memory) -> None:
    tagged = mem.add("x", tags=["\ud800"])
    assert mem.get(tagged).tags == ("?",)  # scrubbed like the text
    with pytest.raises(InvalidInput, match="metadata"):
        mem.add("x", metadata={"a": "\ud800"})
    with pytest.raises(InvalidInput, match="lone surrogate"):
        mem.add("x", agent="\ud800")
    with pytest.raises(InvalidInput, match="lone surrogate"):
        mem.create_agent("p", perspectives=["\ud800"])
    assert mem.store.count() == 1 and mem.check().ok


def test_a_pack_carries_the_principles_of_the_agent_searched(mem: Memory) -> None:
    mem.add("Never talk about the default agent's secret", kind="principle")
    r = mem.retrieve("歯医者っていつだっけ？", agent="carol")  # carol has no memories
    assert r.agent == "carol" and r.results == ()
    assert "secret" not in mem.pack(r).text
    mine = mem.retrieve("歯医者っていつだっけ？")
    assert mine.agent == "default" and "secret" in mem.pack(mine).text


def test_an_import_whose_ids_clash_writes_nothing(mem: Memory, tmp_path: Path) -> None:
    with Memory.open(tmp_path / "other.db", embedder=HashEmbedder(), clock=mem.clock) as other:
        other.add_many([other._new(content=f"line {i}", kind="fact") for i in range(600)])
        dump = tmp_path / "dump.jsonl"
        other.export(dump)
    clash = NewEpisode(id=500, kind="fact", content="mine", occurred_at=T0)
    mem.add_many([clash])
    with pytest.raises(InvalidInput, match=r"1 of the file's episode ids .*first: 500.*--new-ids"):
        mem.import_(dump)
    assert mem.store.count() == 1  # no batch went in before the clash
    assert len(mem.import_(dump, keep_ids=False)) == 600
    assert mem.store.count() == 601 and mem.check().ok


def test_a_bad_field_is_named_once(mem: Memory) -> None:
    with pytest.raises(InvalidInput) as caught:
        mem.add("x", sensitivity=9)
    message = str(caught.value)
    assert message.startswith("invalid episode: sensitivity: Input should be less than")
    assert "validation error" not in message and "\n" not in message
