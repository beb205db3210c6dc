"""Later changes through the LLM rerank: a kept memory's later change comes right before it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from memengine import Config, FixedClock, Memory
from memengine.embed.usem3 import USEM3Embedder
from memengine.models import Episode, EpisodeKind
from memengine.retrieve.fastpath import Candidate
from memengine.retrieve.rerank import RelevantEpisode, with_later_changes

from .openai_server import ScriptedOpenAI
from .test_changes import FILLER, FILLER_JA, T0, _small_talk, _told

VET_OLD = "My vet is Dr. Tanaka at Green Clinic"
VET_NEW = "I switched vets: my vet is now Dr. Sato, Green Clinic closed"


@pytest.fixture
def llm_mem(
    db_path: Path, clock: FixedClock, usem3: USEM3Embedder
) -> Iterator[tuple[Memory, ScriptedOpenAI]]:
    """A memory whose turns ask the scripted server (expansion, then rerank)."""
    with ScriptedOpenAI() as srv:
        llm = {"base_url": srv.base_url, "turn_deadline_s": 5.0, "cache_expansions": False}
        with Memory.open(
            db_path, config=Config.model_validate({"llm": llm}), embedder=usem3, clock=clock
        ) as mem:
            yield mem, srv


def _picks(srv: ScriptedOpenAI, question: str, *picks: tuple[int, str, str]) -> None:
    """Script one turn: no new queries, then the rerank's ``(id, relevance, reason)`` picks."""
    srv.push_chat(json_data={"expanded_queries": [question], "detected_references": []})
    chosen = [{"id": i, "relevance": rel, "reason": why} for i, rel, why in picks]
    srv.push_chat(json_data={"relevant_episodes": chosen})


def test_a_change_the_rerank_left_out_is_brought_back_before_the_old_fact(
    llm_mem: tuple[Memory, ScriptedOpenAI], clock: FixedClock
) -> None:
    """The model keeps only "Dr. Tanaka": the newer "now Dr. Sato" it was shown comes back
    before it, with the fast path's "newer than" reason, as relevant as the one it changes."""
    mem, srv = llm_mem
    question = "Who is my vet?"
    old, new = _told(mem, clock, VET_OLD, VET_NEW, FILLER)
    fast = mem.retrieve(question, llm=False)
    assert [x.episode.id for x in fast.results[:2]] == [new, old]  # the fast path's link
    _picks(srv, question, (old, "high", "the vet"))
    r = mem.retrieve(question)
    assert not r.degraded
    assert [x.episode.id for x in r.results] == [new, old]
    back = r.results[0]
    assert back.components["brought_back"] == 1.0 and back.components["changes"] == old
    assert back.relevance == "high" and back.reason is None
    assert "brought_back" not in r.results[1].components and r.results[1].reason == "the vet"
    text = mem.pack(r).text
    assert text.index("Dr. Sato") < text.index("Dr. Tanaka")
    assert "newer than the memory of 2026-04-12 (Sun) on the same subject" in text
    # a limit of one keeps the newest of the chain, not the old fact
    _picks(srv, question, (old, "high", "the vet"))
    assert [x.episode.id for x in mem.retrieve(question, limit=1).results] == [new]


def test_a_change_the_rerank_kept_comes_first_with_its_marker(
    llm_mem: tuple[Memory, ScriptedOpenAI], clock: FixedClock
) -> None:
    """Both kept, the old one first: the change moves right before it, its line says it is
    newer beside the model's reason, and it is no less relevant than the old one."""
    mem, srv = llm_mem
    question = "今どの車に乗ってるんだっけ"
    old, new = _told(
        mem,
        clock,
        "車は古いフィットに乗ってる",
        "フィット売って、今はプリウスに乗ってる",
        FILLER_JA,
    )
    _picks(srv, question, (old, "high", "車の話"), (new, "medium", "乗り換えた車"))
    r = mem.retrieve(question)
    assert [(x.episode.id, x.relevance) for x in r.results] == [(new, "high"), (old, "high")]
    assert all("brought_back" not in x.components for x in r.results)
    text = mem.pack(r).text
    assert "→ 関連: 2026-04-12 (日) の記憶より新しい、同じ話題の話 / 乗り換えた車" in text
    assert text.index("プリウス") < text.index("古いフィット")


def test_a_change_picked_past_the_limit_is_the_models_and_one_picked_first_stays(
    llm_mem: tuple[Memory, ScriptedOpenAI], clock: FixedClock
) -> None:
    """With ``limit=2`` a change the model picked third came back as if left out (marked
    ``brought_back``, its reason lost): the order is made from every pick, then cut. A change
    the model put first stays there, another pick between it and the old fact."""
    mem, srv = llm_mem
    question = "Who is my vet?"
    old, new = _told(mem, clock, VET_OLD, VET_NEW, FILLER)
    visit = mem.add_exchange(
        "Took the cat to the vet for her shots", "OK", occurred_at=clock.now - timedelta(days=2)
    )
    picks = [(old, "high", "old vet"), (visit, "high", "vet visit"), (new, "high", "new vet")]
    _picks(srv, question, *picks)
    r = mem.retrieve(question, limit=2)
    assert [(x.episode.id, x.reason) for x in r.results] == [(new, "new vet"), (old, "old vet")]
    assert all("brought_back" not in x.components for x in r.results)
    _picks(srv, question, (new, "high", "new vet"), (visit, "high", "vet visit"))
    r = mem.retrieve(question)  # not a false recall: a pick never changed stays as ranked
    assert [x.episode.id for x in r.results] == [new, visit]
    _picks(srv, question, (new, "high", "new vet"), (visit, "high", ""), (old, "medium", ""))
    r = mem.retrieve(question)
    assert [(x.episode.id, x.relevance) for x in r.results] == [
        (new, "high"),
        (visit, "high"),
        (old, "medium"),
    ]


def test_without_a_link_the_rerank_order_stands(
    llm_mem: tuple[Memory, ScriptedOpenAI], clock: FixedClock
) -> None:
    """A newer memory with a change word about something else is neither brought back nor
    moved: the model's picks stay as it ordered them."""
    mem, srv = llm_mem
    question = "what does my cat eat?"
    old, other = _told(
        mem,
        clock,
        "My cat Mochi eats the salmon kibble from Purina",
        "I switched my phone plan to a cheaper one",
        FILLER,
    )
    _picks(srv, question, (old, "high", "the cat's food"))
    r = mem.retrieve(question)
    assert [x.episode.id for x in r.results] == [old]
    assert "newer than" not in mem.pack(r).text
    _picks(srv, question, (old, "high", "the cat's food"), (other, "high", "a switch"))
    r = mem.retrieve(question)
    assert [x.episode.id for x in r.results] == [old, other]
    assert [x.reason for x in r.results] == ["the cat's food", "a switch"]


def test_only_the_agents_own_change_is_brought_back(
    llm_mem: tuple[Memory, ScriptedOpenAI], clock: FixedClock
) -> None:
    """Bob told the same switch; Alice's turn brings back her own change, never his, and
    Carol, who told none, keeps the model's pick alone."""
    mem, srv = llm_mem
    question = "Who is my vet?"
    for name in ("alice", "bob", "carol"):
        mem.create_agent(name)
    old, new = _told(mem, clock, VET_OLD, VET_NEW, FILLER, agent="alice")
    bobs = _told(mem, clock, VET_OLD, VET_NEW, FILLER, agent="bob")
    carols, _ = _told(mem, clock, VET_OLD, "Nice weather today", FILLER, agent="carol")
    _picks(srv, question, (old, "high", "the vet"))
    r = mem.retrieve(question, agent="alice")
    assert [x.episode.id for x in r.results] == [new, old]
    assert not set(bobs) & set(mem.pack(r).episode_ids)
    _picks(srv, question, (carols, "high", "the vet"))
    r = mem.retrieve(question, agent="carol")
    assert [x.episode.id for x in r.results] == [carols]
    assert not set(bobs) & set(mem.pack(r).episode_ids)


def _candidate(i: int, days: int, agent: str, changes: int = 0) -> Candidate:
    """A candidate told ``days`` before T0 by ``agent``, marked as changing ``changes``."""
    ep = Episode(
        id=i,
        agent=agent,
        kind=EpisodeKind.exchange,
        user_text=f"memory {i}",
        occurred_at=T0 - timedelta(days=days),
        created_at=T0,
    )
    comps = {"later_change": 1.0, "changes": float(changes)} if changes else {}
    return Candidate(episode=ep, score=1.0, components=comps)


def test_a_chain_comes_newest_first_and_another_agents_link_is_ignored() -> None:
    """A kept oldest memory brings its whole chain (the change of its change too), newest
    first; a candidate of another agent marked as a change of it is not brought."""
    a, b, c = _candidate(1, 30, "u"), _candidate(2, 20, "u", 1), _candidate(3, 10, "u", 2)
    stranger = _candidate(4, 5, "v", 1)
    other = _candidate(5, 1, "u")
    chosen = [RelevantEpisode(id=5, relevance="high"), RelevantEpisode(id=1, relevance="medium")]
    out = with_later_changes(chosen, [a, b, c, stranger, other])
    assert [(x.id, x.relevance) for x in out] == [
        (5, "high"),
        (3, "medium"),
        (2, "medium"),
        (1, "medium"),
    ]
    assert with_later_changes(chosen, [a, stranger, other]) == chosen


def test_my_vet_is_now_is_brought_back_before_my_vet_was(
    llm_mem: tuple[Memory, ScriptedOpenAI], clock: FixedClock
) -> None:
    """The documented example as said: "My vet is now Dr. Sato." after "My vet is Dr.
    Tanaka." (no other change word) is linked by the fast path and brought back before the
    old fact the model kept, with the "newer than" line."""
    mem, srv = llm_mem
    question = "Who is my vet?"
    old, new = _told(mem, clock, "My vet is Dr. Tanaka.", "My vet is now Dr. Sato.", FILLER)
    fast = mem.retrieve(question, llm=False)
    assert [x.episode.id for x in fast.results[:2]] == [new, old]
    assert fast.results[0].components["changes"] == old
    _picks(srv, question, (old, "high", "the vet"))
    r = mem.retrieve(question)
    assert [x.episode.id for x in r.results] == [new, old]
    assert r.results[0].components["brought_back"] == 1.0
    text = mem.pack(r).text
    assert text.index("Dr. Sato") < text.index("Dr. Tanaka")
    assert "newer than the memory of 2026-04-12 (Sun) on the same subject" in text


def test_a_limit_keeps_a_brought_back_correction_with_the_memory_it_corrects(
    llm_mem: tuple[Memory, ScriptedOpenAI], clock: FixedClock
) -> None:
    """The model keeps pilates and yoga, not the yoga class's correction a minute later:
    brought back before the yoga memory, ``limit=2`` cut that memory (pilates, correction).
    The pair stays, the other pick goes."""
    mem, srv = llm_mem
    question = "When are my pilates and yoga classes?"
    _small_talk(mem, clock, FILLER, days_ago=20)
    at = clock.now - timedelta(days=3)
    pilates = mem.add_exchange(
        "My pilates class is on Friday at 7am", "OK!", occurred_at=at - timedelta(hours=2)
    )
    yoga = mem.add_exchange("My yoga class is on Monday at 6pm", "OK!", occurred_at=at)
    fixed = mem.add_exchange(
        "Actually it's Tuesday, not Monday",
        "Got it, Tuesday.",
        occurred_at=at + timedelta(minutes=1),
    )
    _picks(srv, question, (pilates, "high", "pilates"), (yoga, "high", "yoga"))
    r = mem.retrieve(question, limit=2)
    assert not r.degraded
    assert [x.episode.id for x in r.results] == [fixed, yoga]
    assert r.results[0].components["brought_back"] == 1.0
    assert "corrects the memory of 12:00 the same day" in mem.pack(r).text
