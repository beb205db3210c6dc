"""Whole evaluation runs on a small memsets file (no shared data needed)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from memengine.config import load_config
from memengine.evaluation import run_memset

from .helpers import HashEmbedder
from .test_eval_malformed import MEMSET


def test_degraded_retrievals_are_counted_and_noted(tmp_path: Path) -> None:
    """Mode full with its LLM unreachable fell back to the fast path on every question and
    was scored as if it had run, with nothing said."""
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"conversations": [copy.deepcopy(MEMSET)]}))
    config = load_config(None, environ={"MEMENGINE_LLM__BASE_URL": "http://127.0.0.1:9/v1"})
    result = run_memset(path, config=config, embedder=HashEmbedder(), modes=["fast", "full"])
    assert result.degraded == {"fast": 0, "full": 1}
    assert result.to_json()["degraded"] == {"fast": 0, "full": 1}
    (note,) = [n for n in result.notes if n.startswith("degraded:")]
    assert "1 of 1 retrievals in mode full" in note and "expansion 1" in note
