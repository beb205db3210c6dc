"""The learned scorer: deterministic training, better than the linear formula on a learnable signal."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memengine import Config, FixedClock, Memory, Retrieval
from memengine.config import LifecycleConfig
from memengine.errors import InvalidInput
from memengine.lifecycle.features import FEATURES, LEARNED, learned_columns, linear_score
from memengine.lifecycle.ranking import life_scores, load_agent_scorer
from memengine.lifecycle.scorer import Scorer, auc, memory_weights, sample_weights, train
from memengine.lifecycle.strength import squash
from memengine.store import lifecycle as store_lc
from tests.helpers import HashEmbedder

CFG = LifecycleConfig()


def _synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidates whose use depends mostly on impact (which the linear formula ignores)."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, len(FEATURES)))
    x[:, 7] = (rng.random(n) < 0.05).astype(float)  # principle flag
    x[:, 8] = (rng.random(n) < 0.3).astype(float)  # perspective match
    logit = 10 * (x[:, 5] - 0.6) + 1.5 * (x[:, 0] - 0.5)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return x, y


def test_auc_helper() -> None:
    assert auc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert auc([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 0.0
    assert auc([0.5, 0.5, 0.5, 0.5], [1, 0, 1, 0]) == 0.5
    assert auc([0.3, 0.4], [1, 1]) == 0.5
    # two unused samples above the used one, weighing little, one below weighing 1
    assert auc([0.5, 0.9, 0.9, 0.1], [1, 0, 0, 0]) == pytest.approx(1 / 3)
    assert auc([0.5, 0.9, 0.9, 0.1], [1, 0, 0, 0], [1, 0.1, 0.1, 1]) == pytest.approx(1 / 1.2)
    assert auc([0.5, 0.5, 0.1], [1, 0, 0], [2, 1, 3]) == pytest.approx((0.5 + 3) / 4)
    assert auc([0.5, 0.9], [1, 0], [1, 0]) == 0.5  # the unused weigh nothing
    with pytest.raises(InvalidInput):
        auc([0.5, 0.9], [1, 0], [1.0])


def test_learned_scorer_beats_the_linear_formula_on_held_out_candidates() -> None:
    x_train, y_train = _synthetic(800, seed=1)
    x_test, y_test = _synthetic(600, seed=2)
    outcomes = ["failure" if i % 5 == 0 else "success" for i in range(len(y_train))]
    weights = sample_weights(outcomes, CFG.failure_weight)
    scorer = train(x_train, y_train, weights, seed=0, features=FEATURES)
    learned = auc(scorer.predict(x_test), y_test)
    linear = auc([linear_score(f, CFG.linear_weights) for f in x_test], y_test)
    print(f"\nheld-out AUC: learned scorer {learned:.3f}, linear formula {linear:.3f}")
    assert learned > 0.85
    assert learned > linear + 0.15


def test_training_is_deterministic_for_a_seed_and_round_trips_through_json() -> None:
    x, y = _synthetic(200, seed=3)
    a = train(x, y, seed=5, epochs=200, features=FEATURES)
    b = train(x, y, seed=5, epochs=200, features=FEATURES)
    c = train(x, y, seed=6, epochs=200, features=FEATURES)
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    assert json.dumps(a.to_json()) != json.dumps(c.to_json())
    again = Scorer.from_json(json.loads(json.dumps(a.to_json())))
    assert np.allclose(again.predict(x), a.predict(x))
    assert a.w1.shape == (9, 16) and a.w2.shape == (16,)
    assert np.all((a.predict(x) > 0) & (a.predict(x) < 1))


def test_failures_weigh_half() -> None:
    assert list(sample_weights(["success", "failure", ""], 0.5)) == [1.0, 0.5, 1.0]


def test_agent_scorer_is_trained_from_feedback_and_then_ranks(mem: Memory) -> None:
    """It learns what the linear formula ignores, from features no use changes: the notes
    tagged with a word of the question were the ones used, so one tagged so and never used
    yet ranks above the untagged notes (of the same strength and recency)."""
    valuable = [
        mem.add(f"project note {i} about the budget plan", kind="fact", tags=["budget"])
        for i in range(6)
    ]
    plain = [mem.add(f"project note {i} about the budget memo", kind="fact") for i in range(6, 18)]
    first = mem.retrieve("project budget note", limit=18)
    helped = [r.episode.id for r in first.results if r.episode.id in valuable]
    assert len(helped) == len(valuable)
    mem.feedback(first.turn_id, helped, helpful=True)
    assert mem.train_scorer() is None  # far fewer than 100 samples
    for turn in range(14):
        r = mem.retrieve(f"project budget note {turn}", limit=10)
        used = [x.episode.id for x in r.results if x.episode.id in valuable]
        mem.feedback(r.turn_id, used, task_success=turn % 4 != 0)
    info = mem.train_scorer()
    assert info is not None and info.samples >= 100 and info.positives > 0
    assert info.used_memories == len(valuable)
    print(f"\nscorer trained on {info.samples} samples, training AUC {info.auc:.3f}")
    assert info.auc > 0.9
    with mem.store.connections.read() as cur:
        weights, samples, _last, _ = store_lc.load_scorer(cur, "default") or ({}, 0, 0, None)
    assert samples == info.samples and weights["features"] == list(LEARNED)
    assert len(weights["w1"]) == len(LEARNED) and weights["used_memories"] == len(valuable)
    with mem.store.connections.read() as cur:
        x, y, _, last, _first, ids = store_lc.training_samples(cur, "default", 25)
    assert 25 <= len(x) < 35 and len(x) == len(y) and last == info.last_turn  # whole latest turns
    assert set(ids) <= set(valuable) | set(plain)
    new = mem.add("project note 99 about the budget plan", kind="fact", tags=["budget"])
    ranked = mem.retrieve("project budget note", rank="life", limit=8)
    assert all(r.components["learned"] == 1.0 for r in ranked.results)
    order = [r.episode.id for r in ranked.results]
    assert set(order[:4]) <= {*valuable, new}, (order, valuable)
    assert new in order and all(order.index(new) < order.index(p) for p in plain if p in order)
    # retraining on the same samples gives the same weights
    mem.train_scorer()
    with mem.store.connections.read() as cur:
        again = store_lc.load_scorer(cur, "default")
    assert again is not None and again[0] == weights
    assert mem.sleep().scorer is None  # nothing new to learn from since the last training


@pytest.mark.parametrize("n", [0, 1])
def test_train_rejects_empty_or_mismatched_input(n: int) -> None:
    with pytest.raises(InvalidInput):
        train(np.zeros((n, 9)), np.zeros(n + 1))


def test_a_reembed_retires_the_scorer_and_the_samples_of_the_old_embedder(mem: Memory) -> None:
    """The similarity feature is a cosine of the file's embedder: after a re-embed, the
    scorer and the turns recorded before it no longer hold for the new one."""
    valuable = [mem.add(f"project note {i} about the budget plan", kind="fact") for i in range(6)]
    for i in range(6, 18):
        mem.add(f"project note {i} about the budget memo", kind="fact")

    def answered_turns(n: int) -> None:
        for turn in range(n):
            r = mem.retrieve(f"project budget note {turn}", limit=10)
            used = [x.episode.id for x in r.results if x.episode.id in valuable]
            mem.feedback(r.turn_id, used, task_success=True)

    answered_turns(12)
    before = mem.train_scorer()
    assert before is not None and before.samples >= 100
    path, clock = mem.store.path, mem.clock
    mem.close()
    with Memory.open(
        path, embedder=HashEmbedder(32, name="new"), clock=clock, allow_embedder_change=True
    ) as new:
        new.reembed()
        with new.store.connections.read() as cur:
            assert store_lc.load_scorer(cur, "default") is None
            assert store_lc.training_samples(cur, "default", 5000)[0] == []
        assert new.train_scorer() is None  # no sample of the new embedder yet
        ranked = new.retrieve("project budget note", rank="life", limit=6)
        assert all(r.components["learned"] == 0.0 for r in ranked.results)  # the formula
        mem = new
        answered_turns(12)
        after = new.train_scorer()
        assert after is not None and after.last_turn > before.last_turn
        assert after.samples == before.samples  # the new turns alone, as many as before


def test_no_scorer_is_trained_when_only_failed_turns_weigh_nothing(
    db_path: Path, clock: FixedClock
) -> None:
    """With failure_weight 0 and every answered turn failed, the weights summed to 0 and the
    scorer was trained to NaN (life ranking then returned nothing, or NaN scores)."""
    cfg = Config(
        lifecycle=LifecycleConfig(
            failure_weight=0.0, learned_scorer_min_samples=20, selection="threshold"
        )
    )
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        for w in ("alpha", "beta", "gamma", "delta", "epsilon"):
            mem.add(f"steel price acme note {w}", kind="fact")
        for _ in range(10):
            r = mem.retrieve("steel price acme")
            assert r.turn_id is not None
            mem.feedback(r.turn_id, [r.results[0].episode.id], task_success=False)
        assert mem.train_scorer() is None
        ranked = mem.retrieve("steel price acme", rank="life")
        assert ranked.results and all(math.isfinite(x.score) for x in ranked.results)


FEW = {"learned_scorer_min_samples": 20, "learned_scorer_min_used_memories": 2}
"""A scorer of a few turns over five notes (two of them used)."""


def test_the_training_auc_weighs_the_samples_as_the_training_did(
    db_path: Path, clock: FixedClock
) -> None:
    """Failed tasks weigh nothing here (failure_weight 0) and two turns in three failed, each
    for using the note furthest from its question: the scorer learned from the successful
    turns and ranks them well, but counted unweighted the failed turns it was told to
    ignore made its training AUC 0.45, "worse than chance"."""
    lc = LifecycleConfig(**FEW, failure_weight=0.0)
    with Memory.open(
        db_path, embedder=HashEmbedder(), clock=clock, config=Config(lifecycle=lc)
    ) as mem:
        words = ("alpha", "beta", "gamma", "delta", "epsilon")
        notes = {w: mem.add(f"steel price acme note {w}", kind="fact") for w in words}
        for i in range(30):
            w, succeeded = words[i % 5], i % 3 == 0
            r = mem.retrieve(f"steel price acme {w}")
            assert r.turn_id is not None and len(r.results) == 5
            used = notes[w] if succeeded else min(r.results, key=lambda x: x.score).episode.id
            mem.feedback(r.turn_id, [used], task_success=succeeded)
        info = mem.train_scorer()
        assert info is not None and info.samples == 150
        with mem.store.connections.read() as cur:
            samples = store_lc.training_samples(cur, "default", lc.scorer_max_samples)
            stored = store_lc.load_scorer(cur, "default")
        scorer = load_agent_scorer(mem.store, "default", lc)
        assert scorer is not None and stored is not None
        scores = scorer.predict(learned_columns(samples.features))
        weights = sample_weights(samples.outcomes, 0.0) * memory_weights(
            samples.ids, samples.labels
        )
        assert auc(scores, samples.labels) < 0.5  # (what was reported)
        assert info.auc == pytest.approx(auc(scores, samples.labels, weights)) == stored[3]
        assert info.auc > 0.9


def _thirty_turns_over_five_notes(mem: Memory) -> list[Retrieval]:
    """Five notes on one topic, then 30 recorded turns that each return them all."""
    for w in ("alpha", "beta", "gamma", "delta", "epsilon"):
        mem.add(f"steel price acme note {w}", kind="fact")
    return [mem.retrieve(f"steel price acme {('alpha', 'beta')[i % 2]}") for i in range(30)]


def test_late_feedback_on_older_turns_retrains_at_the_next_sleep(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = Config(lifecycle=LifecycleConfig(**FEW))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        turns = _thirty_turns_over_five_notes(mem)
        for r in turns[15:]:
            assert r.turn_id is not None
            mem.feedback(r.turn_id, [r.results[0].episode.id])
        first = mem.sleep()
        assert first.scorer is not None and first.scorer["samples"] == 75
        for r in turns[:15]:  # feedback on turns older than the newest one learned from
            assert r.turn_id is not None
            mem.feedback(r.turn_id, [r.results[-1].episode.id])
        clock.advance(days=1)
        second = mem.sleep()
        assert second.scorer is not None and second.scorer["samples"] == 150
        clock.advance(days=1)
        assert mem.sleep().scorer is None  # nothing new since


def test_late_feedback_within_a_full_window_retrains(db_path: Path, clock: FixedClock) -> None:
    """At ``scorer_max_samples`` the count of samples stays the same: the feedback's time
    tells that a turn the window holds was answered after the training."""
    cfg = Config(lifecycle=LifecycleConfig(**FEW, scorer_max_samples=50))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        turns = _thirty_turns_over_five_notes(mem)
        late = turns[-3]  # inside the window of the newest ten turns (5 candidates each)
        for r in turns:
            assert r.turn_id is not None
            if r is not late:
                mem.feedback(r.turn_id, [r.results[0].episode.id])
        first = mem.sleep()
        assert first.scorer is not None and first.scorer["samples"] == 50
        clock.advance(hours=1)
        assert late.turn_id is not None
        mem.feedback(late.turn_id, [late.results[-1].episode.id])
        clock.advance(hours=1)
        again = mem.sleep()
        assert again.scorer is not None and again.scorer["samples"] == 50
        clock.advance(hours=1)
        assert mem.sleep().scorer is None  # nothing new since


def _asked_daily(
    mem: Memory, clock: FixedClock, topics: Sequence[str], days: int
) -> dict[str, int]:
    """A note per topic, each asked about once a day and named as used, a sleep each night:
    the notes' use ratio, strength and recency are their earlier turns' labels."""
    notes = {w: mem.add(f"{w} notes from the {w} club meeting", kind="fact") for w in topics}
    for _ in range(days):
        for w in topics:
            r = mem.retrieve(f"what about the {w} club", rank="life")
            assert r.turn_id is not None
            mem.feedback(r.turn_id, [notes[w]])
            clock.advance(hours=2)
        mem.sleep()
    return notes


def test_a_scorer_of_one_memorys_uses_is_declined_and_says_why(
    mem: Memory, clock: FixedClock
) -> None:
    """The same question every day, the same memory used: trained, the scorer fitted "used
    before" (AUC 1.0 on 30 positives of one memory) and then gave every memory never used
    0.000 whatever its similarity. Used ones of five memories are needed."""
    for w in ("garden", "piano", "train", "snow"):
        mem.add(f"a note about the {w} club", kind="fact")
    tea = _asked_daily(mem, clock, ["tea"], 30)["tea"]
    assert mem.train_scorer() is None
    why = mem.scorer_declined()
    assert why is not None and why.startswith(f"its used samples are all of 1 memory ([{tea}])")
    assert "learned_scorer_min_used_memories" in why
    ranked = mem.retrieve("what about the tea club", rank="life")
    assert all(r.components["learned"] == 0.0 for r in ranked.results)  # the formula
    assert mem.scorer_declined("default") == why


def test_what_a_memorys_use_made_of_it_is_not_learned(mem: Memory, clock: FixedClock) -> None:
    """Use ratio, strength, recency of use and impact are earlier labels: the scorer reads
    only what no use changes, so a memory never used scores as one used often would at the
    same similarity, but for the linear formula's strength and recency; a new memory close
    to the question ranks above a used one further from it."""
    topics = ["tea", "garden", "piano", "train", "snow", "guitar"]
    notes = _asked_daily(mem, clock, topics, 4)
    info = mem.train_scorer()
    assert info is not None and info.used_memories == len(topics)
    scorer = load_agent_scorer(mem.store, "default", mem.config.lifecycle)
    assert scorer is not None and scorer.features == LEARNED
    used = [0.5, squash(2.0), 0.0, 1.0, 1.0, squash(1.5, 2.0), 0.0, 0.0, 0.0]
    never = [0.5, squash(1.0), 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0]
    a, b = life_scores([used, never], scorer, CFG)
    assert a - b == pytest.approx(0.4 * (used[1] - never[1]) + 0.2 * (used[4] - never[4]))
    new = mem.add("the violin recital is on friday evening", kind="fact")
    ranked = mem.retrieve("violin recital friday tea club", rank="life")
    order = [r.episode.id for r in ranked.results]
    assert order[:2] == [new, notes["tea"]], order
    assert ranked.results[0].components["learned"] == 1.0
    assert ranked.results[0].components["life_score"] > 0.5


def test_one_memorys_samples_weigh_no_more_than_the_median_memorys() -> None:
    ids = [1] * 30 + [2, 2, 3, 3, 4, 4, 5] + [6] * 10 + [7] * 10 + [1] * 10
    labels = [1] * 37 + [0] * 30  # (memory 1 also unused in ten turns: a label of its own)
    factors = memory_weights(ids, labels)
    assert list(factors[:30]) == pytest.approx([2 / 30] * 30)  # (the median memory's two)
    assert factors[:30].sum() == pytest.approx(2.0)
    assert list(factors[30:]) == [1.0] * 37


def test_a_scorer_of_the_nine_features_is_not_used_and_the_next_sleep_replaces_it(
    mem: Memory, clock: FixedClock
) -> None:
    """One an earlier version trained (its use ratio, strength, recency...) ranks nothing:
    the linear formula does until the sleep, which retrains with no new feedback."""
    _asked_daily(mem, clock, ["tea", "garden", "piano", "train", "snow"], 4)
    x, y = _synthetic(200, seed=3)
    old = train(x, y, epochs=50, features=FEATURES).to_json()
    del old["used_memories"]
    with mem.store.connections.write() as cur:
        cur.execute("UPDATE scorers SET weights = ?", (json.dumps(old),))
    ranked = mem.retrieve("what about the tea club", rank="life", record=False)
    assert ranked.results and all(r.components["learned"] == 0.0 for r in ranked.results)
    assert mem.sleep().scorer is not None
    ranked = mem.retrieve("what about the tea club", rank="life", record=False)
    assert all(r.components["learned"] == 1.0 for r in ranked.results)
