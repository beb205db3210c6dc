"""The evaluation metrics and evidence normalisation on tiny cases worked out by hand."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine.errors import InvalidInput
from memengine.evaluation.locomo import (
    LocomoConversation,
    LocomoQuestion,
    normalise_evidence,
    swap_names,
)
from memengine.evaluation.metrics import (
    RANKING_METRICS,
    all_at_k,
    first_hit_rank,
    mean,
    mean_by_group,
    mrr,
    ndcg_at_k,
    precision,
    recall_at_k,
    score_ranking,
)
from memengine.evaluation.padding import PaddingInfo
from memengine.evaluation.runner import plan_modes

# Ranking used below: a, b, c, d, e, ... ; relevant = {b, e}.
RANKING = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
RELEVANT = {"b", "e"}


def test_recall_at_k_by_hand() -> None:
    # b is at rank 2, e at rank 5.
    assert recall_at_k(RANKING, RELEVANT, 1) == 0.0
    assert recall_at_k(RANKING, RELEVANT, 2) == 0.5
    assert recall_at_k(RANKING, RELEVANT, 4) == 0.5
    assert recall_at_k(RANKING, RELEVANT, 5) == 1.0
    assert recall_at_k(RANKING, RELEVANT, 10) == 1.0
    # Three evidence ids, one never retrieved: 2/3 at k=10.
    assert recall_at_k(RANKING, {"b", "e", "zz"}, 10) == pytest.approx(2 / 3)


def test_all_at_k_by_hand() -> None:
    assert all_at_k(RANKING, RELEVANT, 4) == 0.0  # e (rank 5) missing
    assert all_at_k(RANKING, RELEVANT, 5) == 1.0
    assert all_at_k(RANKING, {"b", "zz"}, 10) == 0.0


def test_ndcg_at_10_with_two_relevant_items_by_hand() -> None:
    # DCG  = 1/log2(2+1) + 1/log2(5+1) = 0.63093 + 0.38685 = 1.01778
    # IDCG = 1/log2(1+1) + 1/log2(2+1) = 1.0     + 0.63093 = 1.63093
    # NDCG = 1.01778 / 1.63093 = 0.62405
    assert ndcg_at_k(RANKING, RELEVANT, 10) == pytest.approx(0.62405, abs=1e-5)
    expected = (1 / math.log2(3) + 1 / math.log2(6)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(RANKING, RELEVANT, 10) == pytest.approx(expected)
    # Perfect ranking → 1; nothing relevant retrieved → 0.
    assert ndcg_at_k(["b", "e", "a"], RELEVANT, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], RELEVANT, 10) == 0.0
    # Cut at k=4: only b counts. DCG = 0.63093; IDCG (2 relevant, k=4) = 1.63093.
    assert ndcg_at_k(RANKING, RELEVANT, 4) == pytest.approx(0.63093 / 1.63093, abs=1e-5)


def test_ndcg_ideal_is_capped_at_k() -> None:
    # 3 relevant, k=2, both top slots relevant: DCG = IDCG = 1 + 1/log2(3) → 1.0.
    assert ndcg_at_k(["p", "q", "r"], {"p", "q", "r"}, 2) == pytest.approx(1.0)


def test_mrr_by_hand() -> None:
    assert mrr(RANKING, RELEVANT) == 0.5  # first relevant (b) at rank 2
    assert mrr(["e"], RELEVANT) == 1.0
    assert mrr(["x", "y", "z"], RELEVANT) == 0.0
    assert first_hit_rank(RANKING, {"e"}) == 5
    assert first_hit_rank(RANKING, {"zz"}) is None


def test_padding_and_duplicates_never_count() -> None:
    # None marks a padding episode: it is never evidence, even "matching" nothing.
    ranking: list[str | None] = [None, "b", None, "b", "e"]
    assert recall_at_k(ranking, RELEVANT, 2) == 0.5
    assert recall_at_k(ranking, RELEVANT, 4) == 0.5  # the second "b" adds nothing
    assert mrr(ranking, RELEVANT) == 0.5
    # DCG = 1/log2(3) (b at 2) + 1/log2(6) (e at 5); the duplicate b at 4 gains nothing.
    expected = (1 / math.log2(3) + 1 / math.log2(6)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(ranking, RELEVANT, 10) == pytest.approx(expected)


def test_empty_relevant_or_bad_k_is_an_error() -> None:
    with pytest.raises(InvalidInput):
        recall_at_k(RANKING, set(), 5)
    with pytest.raises(InvalidInput):
        ndcg_at_k(RANKING, RELEVANT, 0)


def test_precision() -> None:
    assert precision([], RELEVANT) is None
    assert precision(["b", "x", None, "e"], RELEVANT) == 0.5  # 2 of 4


def test_score_ranking_has_every_metric() -> None:
    scores = score_ranking(RANKING, RELEVANT)
    assert list(scores) == list(RANKING_METRICS)
    assert scores["R@1"] == 0.0 and scores["R@5"] == 1.0 and scores["All@5"] == 1.0
    assert scores["MRR"] == 0.5


def test_mean_by_group() -> None:
    rows = [
        ("temporal", {"R@5": 1.0}),
        ("single-hop", {"R@5": 0.0}),
        ("temporal", {"R@5": 0.5}),
    ]
    out = mean_by_group(rows)
    assert list(out) == ["temporal", "single-hop"]
    assert out["temporal"] == {"n": 2.0, "R@5": 0.75}
    assert out["single-hop"] == {"n": 1.0, "R@5": 0.0}
    assert mean([]) is None
    assert mean([1.0, 0.0]) == 0.5


def test_normalise_evidence_repairs_and_counts() -> None:
    valid = {"D8:6", "D9:17", "D11:26", "D30:5", "D1:3"}
    out = normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D1:3", "D99:1"], valid)
    assert out.ids == ("D8:6", "D9:17", "D11:26", "D30:5", "D1:3")
    assert out.raw == 6
    assert out.normalised == 3  # the split one, D:11:26 and D30:05
    assert out.dropped == 2  # "D" (unparseable) and D99:1 (no such turn)
    same = normalise_evidence(["D1:3", "D1:3"], valid)
    assert same.ids == ("D1:3",) and same.normalised == 0 and same.dropped == 0


def _conversation(cid: str, speakers: tuple[str, str], texts: list[str]) -> LocomoConversation:
    questions = [LocomoQuestion(f"{cid}#q{i}", t, 4, ("D1:1",)) for i, t in enumerate(texts)]
    now = datetime(2023, 6, 1, tzinfo=timezone.utc)
    return LocomoConversation(cid, [], questions, now, speakers=speakers)


def test_swap_names_renames_whole_words_by_role_at_even_steps() -> None:
    a = _conversation(
        "a",
        ("Jon", "Gina"),
        [
            "When did Jon open his studio?",  # names a speaker
            "What did Jonathan say?",  # only a longer word: not a name here
            "What did Gina and Jon cook?",
            "Where is the lake?",  # names no one
            "Why did Gina's shop close?",
        ],
    )
    b = _conversation("b", ("Tim", "John"), ["What does John teach?"])
    swap_names([a, b], per_source=2)

    assert [q.text for q in b.swapped] == [
        "When did Tim open his studio?",  # steps of 3/2 through the three naming ones
        "What did John and Tim cook?",
    ]
    assert all(q.evidence == () and q.id.startswith("b<a#") for q in b.swapped)
    assert [q.text for q in a.swapped] == ["What does Gina teach?"]  # second for second

    swap_names([a, b], per_source=10)  # every naming question, and no repeats of the last call
    assert [q.text for q in b.swapped] == [
        "When did Tim open his studio?",
        "What did John and Tim cook?",
        "Why did John's shop close?",
    ]
    swap_names([a, b], per_source=0)
    assert a.swapped == [] and b.swapped == []

    twin = _conversation("c", ("Tim", "John"), [])  # the same names: still a question to ask
    swap_names([b, twin], per_source=5)
    assert [q.text for q in twin.swapped] == ["What does John teach?"]

    mirror = _conversation("d", ("Gina", "Jon"), [])  # the same people, roles reversed
    swap_names([a, mirror], per_source=1)
    assert [q.text for q in mirror.swapped] == ["When did Gina open his studio?"]
    swap_names([a, mirror], per_source=2)
    assert mirror.swapped[1].text == "What did Jon and Gina cook?"  # all at once, not in turn


def test_swap_names_leaves_adversarial_questions_out() -> None:
    a = _conversation("a", ("Jon", "Gina"), [])
    a.questions = [LocomoQuestion("a#q1", "Did Jon adopt a dog?", 5, ("D1:1",))]
    b = _conversation("b", ("Tim", "John"), [])
    swap_names([a, b], per_source=5)
    assert b.swapped == []


def test_plan_modes_skips_full_without_llm() -> None:
    from memengine.config import Config, LLMConfig

    plans, skipped = plan_modes(["bm25", "vector", "fast", "full"], Config())
    assert [p.name for p in plans] == ["bm25", "vector", "fast"]
    assert [p.config.retrieval.search for p in plans] == ["bm25", "vector", "hybrid"]
    second_stage = ("session_weight", "speaker_weight", "answer_type_weight")
    for plan in plans:  # the single-list references go without the second stage's bonuses
        values = [getattr(plan.config.retrieval, name) for name in second_stage]
        assert (values == [0.0, 0.0, 0.0]) is (plan.name != "fast"), plan.name
    assert "full" in skipped and "base_url" in skipped["full"]
    with_llm = Config(llm=LLMConfig(base_url="http://localhost:1/v1"))
    plans, skipped = plan_modes(["fast", "full"], with_llm)
    assert [p.name for p in plans] == ["fast", "full"] and not skipped
    assert plans[0].config.llm.base_url is None  # only `full` may call the LLM
    assert plans[1].config.llm.base_url == "http://localhost:1/v1"
    with pytest.raises(Exception, match="unknown mode"):
        plan_modes(["bm52"], Config())


def test_padding_description() -> None:
    info = PaddingInfo(100, "x.json (LoCoMo turns)", used={"a": 100, "b": 100})
    assert info.describe() == "padding: 100 noise episodes per store from x.json (LoCoMo turns)"
    info.used["b"] = 40
    assert "40–100 of 100" in info.describe()


def test_noise_episodes_never_come_from_the_conversation_under_test(tmp_path: Path) -> None:
    from memengine.evaluation.padding import Haystack, NoiseItem, noise_episodes

    test_file = tmp_path / "memset.json"
    hay = Haystack(
        test_file.resolve(),
        "memsets",
        {
            "c1": [NoiseItem(user="the conversation under test", reply="same file, same id")],
            "copy": [NoiseItem(user="shared line", reply="another copy of c1")],
            "c2": [NoiseItem(user=f"noise {i}", reply="r") for i in range(10)],
        },
    )
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    end = start + timedelta(days=10)
    eps, excluded = noise_episodes(
        hay,
        4,
        test_path=test_file,
        test_id="c1",
        test_texts={"shared line"},
        start=start,
        end=end,
        agent="default",
    )
    assert excluded == ["c1", "copy"]
    assert len(eps) == 4 and all((e.user_text or "").startswith("noise") for e in eps)
    assert all("noise" in e.metadata and "exchange_id" not in e.metadata for e in eps)
    # Spread evenly: 4 episodes over 10 days sit at 1.25, 3.75, 6.25 and 8.75 days.
    assert [(e.occurred_at - start).total_seconds() / 86400 for e in eps] == [
        1.25,
        3.75,
        6.25,
        8.75,
    ]
    # Asking for more than the pool holds gives the whole pool (10), not repeats.
    many, _ = noise_episodes(
        hay,
        50,
        test_path=tmp_path / "other.json",
        test_id="c1",
        test_texts={"shared line"},
        start=start,
        end=end,
        agent="default",
    )
    assert len(many) == 11  # another file's c1 is a different conversation: allowed
