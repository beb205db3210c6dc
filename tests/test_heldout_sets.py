"""The project's own held-out memory sets (``eval/``) are well formed: what ``make eval`` counts
is what their writers meant."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from memengine.evaluation.memsets import NONE, TYPES, load_memset

EVAL = Path(__file__).resolve().parents[1] / "eval"
SETS = sorted(EVAL.glob("heldout_*.json"))


def test_every_set_named_in_the_readme_is_there() -> None:
    readme = (EVAL / "README.md").read_text(encoding="utf-8")
    named = {p.name for p in SETS}
    assert len(named) == 14
    for name in named:
        assert f"`{name}`" in readme


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.stem)
def test_a_held_out_set_loads_whole(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["language"] in ("ja", "en")
    assert data["license"] == "CC0-1.0"
    ids: list[str] = []
    for raw in data["conversations"]:
        conv = load_memset(raw)
        # no evidence id names a missing exchange, and no answerable question is skipped
        assert conv.evidence["dropped"] == 0
        assert conv.evidence["skipped"] == 0
        assert len(conv.questions) == conv.evidence["questions"] == 14
        assert sum(q.type == NONE for q in conv.questions) == 4
        assert {q.type for q in conv.questions} <= {*TYPES, NONE}
        last = max(e.occurred_at for e in conv.episodes)
        for q in conv.questions:
            assert q.asked_at > last
            assert bool(q.evidence) == (q.type != NONE)
        times = [e.occurred_at for e in conv.episodes]
        assert times == sorted(times)
        ids += [conv.id, *(q.id for q in conv.questions)]
        ids += [str(e.metadata["exchange_id"]) for e in conv.episodes]
    assert len(ids) == len(set(ids))
    for c in data["conversations"]:
        for session in c["sessions"]:
            assert datetime.fromisoformat(session["started_at"]).tzinfo is not None
