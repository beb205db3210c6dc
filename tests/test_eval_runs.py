"""Whole evaluation runs on a small memsets file (no shared data needed)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from memengine.config import load_config
from memengine.errors import EvaluationError
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


@pytest.mark.parametrize(
    ("data", "held"),
    [
        ({"conversations": []}, "the file holds no conversations"),
        ({"conversations": [{**MEMSET, "questions": []}]}, "none with valid evidence"),
    ],
)
def test_a_set_without_questions_is_an_error(tmp_path: Path, data: object, held: str) -> None:
    """It printed empty tables and exited 0, as if it had measured something."""
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EvaluationError, match=f"no questions to evaluate \\({held}"):
        run_memset(path, config=load_config(None, environ={}), embedder=HashEmbedder())


def test_an_empty_locomo_file_is_an_error(tmp_path: Path, cli_env: None) -> None:
    from typer.testing import CliRunner

    from memengine.cli import app

    path = tmp_path / "locomo.json"
    path.write_text("[]")
    result = CliRunner().invoke(app, ["eval", "locomo", str(path), "-q"])
    assert result.exit_code == 1, result.output
    assert "no questions to evaluate (the file holds no conversations)" in result.output
