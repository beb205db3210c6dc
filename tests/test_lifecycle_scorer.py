"""The learned scorer: deterministic training, better than the linear formula on a learnable signal."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from memengine import Config, FixedClock, Memory, Retrieval
from memengine.config import LifecycleConfig
from memengine.errors import InvalidInput
from memengine.lifecycle.features import FEATURES, linear_score
from memengine.lifecycle.scorer import Scorer, auc, sample_weights, train
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


def test_learned_scorer_beats_the_linear_formula_on_held_out_candidates() -> None:
    x_train, y_train = _synthetic(800, seed=1)
    x_test, y_test = _synthetic(600, seed=2)
    outcomes = ["failure" if i % 5 == 0 else "success" for i in range(len(y_train))]
    scorer = train(x_train, y_train, sample_weights(outcomes, CFG.failure_weight), seed=0)
    learned = auc(scorer.predict(x_test), y_test)
    linear = auc([linear_score(f, CFG.linear_weights) for f in x_test], y_test)
    print(f"\nheld-out AUC: learned scorer {learned:.3f}, linear formula {linear:.3f}")
    assert learned > 0.85
    assert learned > linear + 0.15


def test_training_is_deterministic_for_a_seed_and_round_trips_through_json() -> None:
    x, y = _synthetic(200, seed=3)
    a = train(x, y, seed=5, epochs=200)
    b = train(x, y, seed=5, epochs=200)
    c = train(x, y, seed=6, epochs=200)
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    assert json.dumps(a.to_json()) != json.dumps(c.to_json())
    again = Scorer.from_json(json.loads(json.dumps(a.to_json())))
    assert np.allclose(again.predict(x), a.predict(x))
    assert a.w1.shape == (9, 16) and a.w2.shape == (16,)
    assert np.all((a.predict(x) > 0) & (a.predict(x) < 1))


def test_failures_weigh_half() -> None:
    assert list(sample_weights(["success", "failure", ""], 0.5)) == [1.0, 0.5, 1.0]


def test_agent_scorer_is_trained_from_feedback_and_then_ranks(mem: Memory) -> None:
    valuable = [mem.add(f"project note {i} about the budget plan", kind="fact") for i in range(6)]
    plain = [mem.add(f"project note {i} about the budget memo", kind="fact") for i in range(6, 18)]
    # warm-up: the valuable notes were once helpful (impact), the others never used
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
    print(f"\nscorer trained on {info.samples} samples, training AUC {info.auc:.3f}")
    assert info.auc > 0.9
    with mem.store.connections.read() as cur:
        weights, samples, _last, _ = store_lc.load_scorer(cur, "default") or ({}, 0, 0, None)
    assert samples == info.samples and len(weights["w1"]) == 9
    with mem.store.connections.read() as cur:
        x, y, _, last, _first = store_lc.training_samples(cur, "default", 25)
    assert 25 <= len(x) < 35 and len(x) == len(y) and last == info.last_turn  # whole latest turns
    ranked = mem.retrieve("project budget note", rank="life", limit=6)
    assert all(r.components["learned"] == 1.0 for r in ranked.results)
    top = [r.episode.id for r in ranked.results[:4]]
    assert set(top) <= set(valuable), (top, valuable)
    # retraining on the same samples gives the same weights
    mem.train_scorer()
    with mem.store.connections.read() as cur:
        again = store_lc.load_scorer(cur, "default")
    assert again is not None and again[0] == weights
    assert plain  # the plain notes exist and were candidates
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


def _thirty_turns_over_five_notes(mem: Memory) -> list[Retrieval]:
    """Five notes on one topic, then 30 recorded turns that each return them all."""
    for w in ("alpha", "beta", "gamma", "delta", "epsilon"):
        mem.add(f"steel price acme note {w}", kind="fact")
    return [mem.retrieve(f"steel price acme {('alpha', 'beta')[i % 2]}") for i in range(30)]


def test_late_feedback_on_older_turns_retrains_at_the_next_sleep(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = Config(lifecycle=LifecycleConfig(learned_scorer_min_samples=20))
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
    cfg = Config(lifecycle=LifecycleConfig(learned_scorer_min_samples=20, scorer_max_samples=50))
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
