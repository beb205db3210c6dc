"""Agent names an earlier memengine stored that are now refused as new names, and how
agent names are shown and listed."""

from __future__ import annotations

import pytest

from memengine import InvalidInput, Memory, NewEpisode
from memengine.store.episodes import ensure_agents

from .helpers import T0

FILLER = "\u3164"  # Hangul filler: blank, refused as a new name
ZERO_WIDTH = "\u200b"


def _stored_by_an_earlier_version(mem: Memory, name: str, text: str) -> None:
    """Write an agent and one episode of it as an earlier memengine did, unchecked."""
    with mem.store.connections.write() as cur:
        ensure_agents(cur, [name], T0)
    mem.store.add(
        [NewEpisode(agent=name, kind="fact", content=text, occurred_at=T0)],
        [text],
        mem.embedder.embed([text]),
    )


@pytest.mark.parametrize("odd", [FILLER, ZERO_WIDTH])
def test_a_stored_name_now_refused_blocks_no_other_agent(mem: Memory, odd: str) -> None:
    _stored_by_an_earlier_version(mem, odd, "an old note")
    mem.add("a note of alice", agent="alice")
    report = mem.forget_agent("alice")
    assert (report.agent, report.episodes) == ("alice", 1)
    assert [a.name for a in mem.agents()] == [odd]


@pytest.mark.parametrize("odd", [FILLER, ZERO_WIDTH])
def test_a_stored_name_now_refused_is_reached_as_stored(mem: Memory, odd: str) -> None:
    _stored_by_an_earlier_version(mem, odd, "an old note")
    mem.add("a note of alice", agent="alice")
    assert mem.has_agent(odd)
    for a in mem.agents():  # the README's nightly loop
        mem.sleep(a.name)
    report = mem.forget_agent(odd)
    assert (report.agent, report.episodes) == (odd, 1)
    assert [a.name for a in mem.agents()] == ["alice"]


def test_a_blank_name_not_stored_is_still_refused(mem: Memory) -> None:
    _stored_by_an_earlier_version(mem, FILLER, "an old note")
    for new in (ZERO_WIDTH, " ", FILLER + FILLER):
        with pytest.raises(InvalidInput, match="non-empty"):
            mem.add("a note", agent=new)
        with pytest.raises(InvalidInput, match="non-empty"):
            mem.forget_agent(new)
    assert [a.name for a in mem.agents()] == [FILLER]
