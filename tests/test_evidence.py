"""Second-stage evidence: sessions of candidates, named speakers, and the vector query text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memengine import EpisodeKind, FixedClock, Memory, NewEpisode
from memengine.models import Episode
from memengine.retrieve.evidence import (
    in_window,
    names_speaker,
    rescore,
    session_ids,
    session_scores,
    window_bonus,
)
from memengine.retrieve.fastpath import Candidate
from memengine.text import dense_query

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc)
HOUR = 3600


def _at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _candidate(i: int, score: float, minutes: float, bm25: float, speaker: str | None) -> Candidate:
    ep = Episode(
        id=i,
        agent="default",
        kind=EpisodeKind.message,
        content=f"turn {i}",
        occurred_at=_at(minutes),
        created_at=T0,
        metadata={"speaker": speaker} if speaker else {},
    )
    return Candidate(ep, score, {"bm25": bm25} if bm25 else {})


def test_session_ids_split_on_gaps_in_input_order() -> None:
    times = [_at(0), _at(3 * 24 * 60), _at(1), _at(3 * 24 * 60 + 5), _at(30)]
    assert session_ids(times, HOUR) == [0, 1, 0, 1, 0]
    assert session_ids([], HOUR) == []


def test_session_scores_are_one_value_per_session() -> None:
    times = [_at(0), _at(1), _at(2), _at(5000), _at(5001)]
    scores = [4.0, 2.0, 0.0, 3.0, -1.0]
    # sessions: {0, 1, 2} → 4 + 2 + 0 = 6; {3, 4} → 3 (negative scores count as 0)
    assert session_scores(times, scores, HOUR, top_n=3) == pytest.approx([1, 1, 1, 0.5, 0.5])
    # top 1: 4 against 3
    assert session_scores(times, scores, HOUR, top_n=1) == pytest.approx([1, 1, 1, 0.75, 0.75])
    assert session_scores(times, [0.0] * 5, HOUR, top_n=3) == [0.0] * 5


def test_the_session_bonus_keeps_the_order_inside_a_session() -> None:
    cands = [  # one session: the best turn, two weaker neighbours; another session alone
        _candidate(1, 1.0, 0, 9.0, None),
        _candidate(2, 0.6, 1, 1.0, None),
        _candidate(3, 0.5, 2, 1.0, None),
        _candidate(4, 0.9, 5000, 2.0, None),
    ]
    out = rescore(cands, "q", gap_s=HOUR, session_weight=0.5, session_top_n=3, speaker_weight=0)
    assert [c.episode.id for c in out] == [1, 2, 3, 4]  # the strong session lifts all its turns
    assert {c.components["session"] for c in out[:3]} == {1.0}


def test_names_speaker_by_whole_word() -> None:
    assert names_speaker("What did Melanie paint?", "Melanie")
    assert names_speaker("what is melanie's favourite book", "Melanie")
    assert names_speaker("When did Anna move?", "Anna Schmidt")
    assert not names_speaker("What did Melanies paint?", "Melanie")
    assert not names_speaker("What did Jonathan say?", "Jon")
    assert names_speaker("田中さんは何を買った？", "田中")
    assert not names_speaker("anything", "")


def test_rescore_adds_session_and_speaker_bonuses() -> None:
    cands = [
        _candidate(1, 1.0, 0, 5.0, "Bob"),
        _candidate(2, 0.9, 5000, 4.0, "Ann"),
        _candidate(3, 0.8, 5001, 4.0, "Ann"),
    ]
    out = rescore(
        cands,
        "What did Ann say?",
        gap_s=HOUR,
        session_weight=0.1,
        session_top_n=3,
        speaker_weight=0.5,
    )
    # sessions: {1} → 5, {2, 3} → 8: supports 5/8 and 1.0
    assert [c.episode.id for c in out] == [2, 3, 1]
    assert out[0].score == pytest.approx(0.9 + 0.1 * 1.0 + 0.5 * 1.0)
    assert out[0].components["speaker"] == 1.0 and "speaker" not in out[2].components
    assert out[2].components["session"] == pytest.approx(5 / 8)


def test_rescore_with_zero_weights_changes_nothing() -> None:
    cands = [_candidate(1, 0.2, 0, 1.0, "Ann"), _candidate(2, 0.5, 1, 0.0, None)]
    out = rescore(cands, "Ann", gap_s=HOUR, session_weight=0, session_top_n=3, speaker_weight=0)
    assert [(c.episode.id, c.score) for c in out] == [(1, 0.2), (2, 0.5)]


def test_dense_query_keeps_content_words_and_particles() -> None:
    assert dense_query("When did Melanie paint a sunrise?") == "melanie paint sunrise"
    assert dense_query("Was I burned out back then?") == "burned out back"
    assert dense_query("What did you do?") == "What did you do?"
    assert dense_query("こむぎの給餌器、どう設定した？") == "こむぎの給餌器、どう設定した？"


def test_speaker_named_in_the_question_ranks_first(mem: Memory, clock: FixedClock) -> None:
    texts = {
        "Caroline": "Caroline: Melanie, you paint so well! I wish I could paint like that.",
        "Melanie": "Melanie: I painted a lake at sunrise last week.",
    }
    eps = [
        NewEpisode(
            kind=EpisodeKind.message,
            content=texts[who],
            occurred_at=clock() - timedelta(days=d),
            metadata={"speaker": who},
        )
        for who, d in (("Caroline", 3), ("Melanie", 9))
    ]
    ids = mem.add_many(eps)
    r = mem.retrieve("What did Melanie paint?", day_range=None)
    assert r.results[0].episode.id == ids[1]
    assert r.results[0].components.get("speaker") == 1.0


def test_in_window_compares_instants_start_inclusive() -> None:
    jst = timezone(timedelta(hours=9))
    window = (T0, T0 + timedelta(days=1))
    assert in_window(T0, window)
    assert in_window(T0.astimezone(jst), window)
    assert not in_window(T0 + timedelta(days=1), window)
    assert not in_window(T0 - timedelta(seconds=1), window)


def test_window_bonus_lifts_what_happened_in_the_window() -> None:
    cands = [_candidate(1, 1.0, 0, 0.0, None), _candidate(2, 0.8, 3000, 0.0, None)]
    window = (_at(2000), _at(4000))
    out = window_bonus(cands, window, 0.3)
    assert [c.episode.id for c in out] == [2, 1]
    assert out[0].score == pytest.approx(0.8 + 0.3 * 1.0)
    assert out[0].components["window"] == 1.0 and "window" not in out[1].components
    same = window_bonus([_candidate(1, 1.0, 0, 0.0, None)], None, 0.3)
    assert same[0].score == 1.0
    assert [c.score for c in cands] == [1.0, 0.8]  # the input is left as it was
    assert [c.episode.id for c in window_bonus(cands, window, 0.0)] == [1, 2]


def test_the_recording_lag_after_the_window_gets_half_the_bonus() -> None:
    """ "Last week" asked on Thursday: last week's Tuesday above this week's, which lies
    in the lag (told late) and still above what is outside both."""
    cands = [
        _candidate(1, 1.0, 0, 0.0, None),  # outside
        _candidate(2, 0.9, 5000, 0.0, None),  # in the lag after the window
        _candidate(3, 0.8, 3000, 0.0, None),  # in the window
    ]
    window = (_at(2000), _at(4000))
    out = window_bonus(cands, window, 0.3, margin_end=_at(6000))
    assert [c.episode.id for c in out] == [3, 2, 1]
    assert [c.components.get("window") for c in out] == [1.0, 0.5, None]
    assert out[1].score == pytest.approx(0.9 + 0.5 * 0.3 * 1.0)


def test_a_time_expression_prefers_memories_from_then(mem: Memory, clock: FixedClock) -> None:
    now = clock()
    eps = [
        NewEpisode(
            kind=EpisodeKind.exchange,
            user_text=text,
            reply_text="Noted.",
            occurred_at=now - timedelta(days=days),
        )
        for text, days in (
            ("The dentist said my teeth look fine.", 3),
            ("The dentist said I need a filling.", 60),
        )
    ]
    ids = mem.add_many(eps)
    r = mem.retrieve("What did the dentist say two months back?", day_range=None)
    assert r.results[0].episode.id == ids[1]
    assert r.results[0].components.get("window") == 1.0
    assert "window" not in r.results[1].components


def test_names_speaker_folds_diacritics_and_apostrophes() -> None:
    """The full-text search finds Zoë for Zoe and O’Brien for O'Brien; the speaker bonus
    compared NFKC and lower case alone."""
    assert names_speaker("what did Zoe say", "Zoë")
    assert names_speaker("what did zoe\u0308 say", "ZOË")
    assert names_speaker("what did O'Brien say", "O’Brien")
    assert names_speaker("what did O’Brien say", "O'Brien")
    assert not names_speaker("what did Zoey say", "Zoë")
