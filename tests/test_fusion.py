"""Reciprocal Rank Fusion, worked by hand."""

from __future__ import annotations

import pytest

from memengine.retrieve.fusion import RankedList, rrf


def test_rrf_scores_by_hand() -> None:
    a = RankedList("knn0", [1, 2, 3], [0.9, 0.8, 0.7])
    b = RankedList("bm25", [3, 1], [5.0, 4.0])
    fused = rrf([a, b], k=10)
    by_id = {f.id: f for f in fused}
    # 1: 1/11 + 1/12 ; 3: 1/13 + 1/11 ; 2: 1/12
    assert by_id[1].score == pytest.approx(1 / 11 + 1 / 12)
    assert by_id[3].score == pytest.approx(1 / 13 + 1 / 11)
    assert by_id[2].score == pytest.approx(1 / 12)
    assert [f.id for f in fused] == [1, 3, 2]
    assert by_id[3].ranks == {"knn0": 3, "bm25": 1}
    assert by_id[3].raw == {"knn0": 0.7, "bm25": 5.0}


def test_weights_and_limit() -> None:
    a = RankedList("a", [1, 2], weight=1.0)
    b = RankedList("b", [2, 1], weight=3.0)
    fused = rrf([a, b], k=1, limit=1)
    assert [f.id for f in fused] == [2]
    assert fused[0].score == pytest.approx(1 / 3 + 3 / 2)
