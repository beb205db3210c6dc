"""Review 59 (the library in a notebook): a configuration or a new episode read back from
its own dump (a dict, JSON) behaves as the one dumped — an agent left out stays left out —
and the results' models can be put in a set."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memengine import Config, FixedClock, InvalidInput, Memory, NewEpisode

from .helpers import HashEmbedder

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _two_users(path: Path) -> None:
    with Memory.open(path, embedder=HashEmbedder(), clock=FixedClock(NOW)) as mem:
        mem.add_exchange("alice's cat is Miso", "Cute!", agent="alice")
        mem.add_exchange("bob's dog is Rex", "Nice!", agent="bob")


def test_a_configuration_read_back_from_its_dump_names_no_agent_it_did_not(
    tmp_path: Path,
) -> None:
    """A dumped "default" read back named it: the calls over the whole file kept to the
    agent "default", and an export of a two-user file wrote no episode, without a word."""
    db = tmp_path / "m.db"
    _two_users(db)
    dumped = Config(db=db)
    for read in (
        Config.model_validate(dumped.model_dump()),
        Config.model_validate_json(dumped.model_dump_json()),
        Config(**dumped.model_dump()),
    ):
        assert read == dumped and read.named_agent() is None
        with Memory.open(db, config=read, embedder=HashEmbedder()) as mem:
            assert mem.export(io.StringIO()) == 2
            assert mem.get(1).agent == "alice"


def test_an_agent_named_on_purpose_stays_named_through_a_dump() -> None:
    for name in ("u42", "default"):
        named = Config(agent=name)
        for read in (
            Config.model_validate(named.model_dump()),
            Config.model_validate_json(named.model_dump_json()),
        ):
            assert read.named_agent() == name
    assert "agent" not in Config().model_dump() and Config(agent="x").model_dump()["agent"] == "x"


def test_a_new_episode_read_back_from_its_dump_is_stored_for_the_configured_agent(
    tmp_path: Path,
) -> None:
    """An episode that went through a queue or a JSON file went to the shared "default"
    agent in a per-user process (its dump wrote "default" as its agent)."""
    left_out = NewEpisode(user_text="a note of u42's", occurred_at=NOW)
    named = NewEpisode(agent="bob", user_text="a note of bob's", occurred_at=NOW)
    episodes = [
        NewEpisode.model_validate(left_out.model_dump()),
        NewEpisode.model_validate_json(left_out.model_dump_json()),
        NewEpisode.model_validate_json(named.model_dump_json()),
    ]
    config = Config(db=tmp_path / "m.db", agent="u42")
    with Memory.open(config.db, config=config, embedder=HashEmbedder()) as mem:
        ids = mem.add_many(episodes)
        stored = [mem.get(i, all_agents=True).agent for i in ids]
    assert stored == ["u42", "u42", "bob"]


def test_results_go_in_a_set(tmp_path: Path) -> None:
    """Frozen models with a dict field (an episode's metadata, a result's components) raised
    pydantic's TypeError on hash(). Equal models hash equal (every field: an episode read
    again after a retrieval counted it is another by its counts)."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(NOW)) as mem:
        mem.add_exchange("My cat Miso likes tuna", "Cute!", metadata={"b": 1, "a": [1, 2]})
        mem.add_exchange("My dog Rex likes walks", "Nice!")
        first = mem.retrieve("cat and dog")
        copied = first.model_copy(deep=True)
        episodes = {r.episode for r in first.results} | {r.episode for r in copied.results}
        assert sorted(e.id for e in episodes) == [1, 2]
        assert len({first, copied}) == 1 and len({*first.results, *copied.results}) == 2
        again = mem.get(1)
    flipped = again.model_copy(update={"metadata": {"a": [1, 2], "b": 1}})
    assert flipped == again and hash(flipped) == hash(again)  # (a dict's order aside)
    new = NewEpisode(user_text="x", occurred_at=NOW, metadata={"k": {"n": [1]}})
    assert hash(new) == hash(NewEpisode(user_text="x", occurred_at=NOW, metadata={"k": {"n": [1]}}))


def test_a_dump_s_json_schema_has_the_model_s_fields() -> None:
    """The dump that leaves an unnamed agent out keeps the model's serialization schema (a
    web framework's response model): a serializer typed to return Any left it empty."""
    for model in (Config, NewEpisode):
        schema = model.model_json_schema(mode="serialization")
        assert "agent" in schema["properties"] and len(schema["properties"]) > 5


def test_a_nan_importance_is_called_nan(tmp_path: Path) -> None:
    """It was refused as "less than or equal to 1"."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        with pytest.raises(InvalidInput, match="a number, not NaN"):
            mem.add_exchange("a", "b", importance=float("nan"))
        assert mem.store.count() == 0


def test_a_fixed_clock_shows_its_time() -> None:
    assert repr(FixedClock(NOW)) == "FixedClock(2026-03-01T12:00:00+00:00)"
