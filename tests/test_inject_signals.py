"""What the should-inject decision read (``Retrieval.signals``) and ``memengine eval signals``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memengine import FixedClock, Memory
from memengine.cli import app
from memengine.config import Config
from memengine.embed.usem3 import USEM3Embedder
from memengine.errors import EvaluationError
from memengine.evaluation.signals import signal_report

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)
TURNS = [
    ("My brother Tom called, his kid Lily starts kindergarten in April", "Lily, already!"),
    ("I planted cucumber and pepper seedlings in the garden", "Can't wait for summer!"),
    ("Tom is swamped at work, he can't visit much", "That sounds busy."),
]
runner = CliRunner()
pytestmark = pytest.mark.usefixtures("cli_env")


def _memory(path: Path, usem3: USEM3Embedder, **retrieval: float | bool) -> Memory:
    cfg = Config.model_validate({"retrieval": retrieval})
    mem = Memory.open(path, config=cfg, embedder=usem3, clock=FixedClock(T0 + timedelta(days=30)))
    for i, (user, reply) in enumerate(TURNS):
        mem.add_exchange(user, reply, occurred_at=T0 + timedelta(days=i))
    return mem


def test_a_retrieval_records_what_the_decision_read(tmp_path: Path, usem3: USEM3Embedder) -> None:
    with _memory(tmp_path / "m.db", usem3) as mem:
        asked = mem.retrieve("When does Lily start kindergarten?")
        s = asked.signals
        # no coverage: it is off
        assert set(s) == {"asks", "proposes", "evidence", "top_cosine", "reach"}
        assert asked.should_inject and s["asks"] == 1.0 and s["evidence"] == 1.0
        assert s["proposes"] == 0.0  # a question is not read as a proposal
        assert s["reach"] == 1.0  # every word of the question is stored
        best = max(r.components["cosine"] for r in asked.results)
        assert s["top_cosine"] == pytest.approx(best, abs=1e-4) and s["top_cosine"] > 0.5
        unknown = mem.retrieve("Did I ever tell you about my zeppelin license?")
        assert not unknown.should_inject
        assert unknown.signals["evidence"] == 0.0 and unknown.signals["reach"] == 0.0
        assert unknown.signals["top_cosine"] < s["top_cosine"]
        chat = mem.retrieve("Nice weather today.")
        assert chat.signals["asks"] == 0.0 and not chat.should_inject
        assert chat.signals["proposes"] == 0.0
        plan = mem.retrieve("Let's plant more cucumber seedlings this weekend!")
        assert plan.signals["asks"] == 0.0 and plan.signals["proposes"] == 1.0
    with _memory(tmp_path / "fixed.db", usem3, adaptive_weights=False) as mem:
        # no reach is computed without the adaptive list weights
        assert set(mem.retrieve("When does Lily start kindergarten?").signals) == {
            "asks",
            "proposes",
            "evidence",
            "top_cosine",
        }


def test_the_coverage_is_recorded_when_the_opt_in_rule_reads_it(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    with _memory(tmp_path / "m.db", usem3, coverage_min=0.29, coverage_word_min=0.64) as mem:
        known = mem.retrieve("When does Lily start kindergarten?")
        assert known.should_inject and known.signals["coverage"] == 1.0
        # the person is known, the wife and her birthday are not: evidence yes, coverage no
        wife = mem.retrieve("When is Tom's wife's birthday?")
        assert wife.signals["evidence"] == 1.0 and not wife.should_inject
        assert wife.signals["coverage"] < 0.29
        # no evidence: the question is refused before the coverage is read
        unknown = mem.retrieve("Did I ever tell you about my zeppelin license?")
        assert "coverage" not in unknown.signals and "coverage" not in unknown.timings_ms
        assert "coverage" not in mem.retrieve("Nice weather today.").signals


def _question(group: str, inject: bool, **signals: float) -> dict[str, Any]:
    return {"group": group, "mode": "fast", "should_inject": inject, "signals": signals}


def _write(path: Path, questions: list[dict[str, Any]], modes: tuple[str, ...] = ("fast",)) -> Path:
    path.write_text(json.dumps({"modes": list(modes), "questions": questions}), encoding="utf-8")
    return path


def test_each_signal_is_ranked_at_the_threshold_that_rejects_the_target(tmp_path: Path) -> None:
    nothing = [
        _question("none", i == 3, asks=1, top_cosine=c) for i, c in enumerate([0.2, 0.3, 0.4, 0.6])
    ]
    nothing.append(_question("names swapped", False, asks=1, top_cosine=0.1))
    others = [_question("direct", True, asks=1, top_cosine=c) for c in (0.35, 0.45, 0.5, 0.7)]
    chat = [_question("none", False, asks=0, top_cosine=0.9)]  # small talk: its own rule
    neither = [_question("adversarial", True, asks=1, top_cosine=0.9)]  # LoCoMo's category 5
    path = _write(tmp_path / "e.json", [*nothing, *others, *chat, *neither])
    report = signal_report([path], none_target=0.8)
    assert (report.n_nothing, report.n_others, report.small_talk) == (5, 4, 1)
    assert report.decided_nothing_rejected == pytest.approx(4 / 5)
    assert report.decided_others_kept == 1.0
    (row,) = report.rows
    # 4 of the 5 must fall below: the lowest such threshold is 0.45 (0.1, .2, .3, .4 < .45)
    assert row.name == "top_cosine" and row.threshold == pytest.approx(0.45)
    assert row.nothing_rejected == pytest.approx(4 / 5)
    assert row.others_kept == pytest.approx(3 / 4)  # .45, .5, .7
    assert row.mean_nothing == pytest.approx(0.32)
    strict = signal_report([path], none_target=1.0).rows[0]
    assert strict.threshold == pytest.approx(0.7)  # above the 0.6 of the one injected by mistake
    assert strict.nothing_rejected == 1.0 and strict.others_kept == pytest.approx(1 / 4)


def test_eval_signals_prints_the_table(tmp_path: Path) -> None:
    qs = [
        _question("none", False, asks=1, reach=0.2, top_cosine=0.3),
        _question("direct", True, asks=1, reach=0.8, top_cosine=0.5),
    ]
    result = runner.invoke(app, ["eval", "signals", str(_write(tmp_path / "e.json", qs))])
    assert result.exit_code == 0, result.output
    assert "the decision as made" in result.output and "reach" in result.output


def test_eval_signals_refuses_a_file_named_twice(tmp_path: Path) -> None:
    """The same path twice would pool every question twice (a copy under another name is
    already refused, as each of its questions is)."""
    qs = [
        _question("none", False, asks=1, reach=0.2, top_cosine=0.3),
        _question("direct", True, asks=1, reach=0.8, top_cosine=0.5),
    ]
    path = _write(tmp_path / "e.json", qs)
    with pytest.raises(EvaluationError, match="named twice"):
        signal_report([path, tmp_path / "." / "e.json"])


@pytest.mark.parametrize(
    ("questions", "modes", "message"),
    [
        ([_question("direct", True, asks=1, reach=0.5)], ("fast",), "both kinds"),
        ([{"group": "none", "mode": "fast", "should_inject": False}], ("fast",), "no signals"),
        ([_question("none", False, asks=1)], ("bm25",), "no mode 'fast'"),
    ],
    ids=["no-none", "old-file", "other-mode"],
)
def test_eval_signals_says_what_is_missing(
    tmp_path: Path, questions: list[dict[str, Any]], modes: tuple[str, ...], message: str
) -> None:
    path = _write(tmp_path / "e.json", questions, modes)
    with pytest.raises(EvaluationError, match=message):
        signal_report([path])
    result = runner.invoke(app, ["eval", "signals", str(path)])
    assert result.exit_code == 1 and message in result.output


def test_eval_signals_leaves_out_what_the_fast_path_did_not_decide(tmp_path: Path) -> None:
    qs = [
        _question("none", False, asks=1, top_cosine=0.3, reach=float("nan")),
        _question("none", False, asks=1, top_cosine=0.2, reach=0.1),
        _question("direct", True, asks=1, top_cosine=0.5, reach=0.9),
        {"group": "none", "mode": "full", "should_inject": False, "signals": {}},  # the LLM
        {"group": "direct", "mode": "full", "should_inject": True, "signals": {}},
    ]
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"modes": ["full"], "questions": qs}).replace('"fast"', '"full"'))
    report = signal_report([path], mode="full", none_target=1.0)
    assert (report.n_nothing, report.n_others, report.llm_decided) == (2, 1, 2)
    reach = next(r for r in report.rows if r.name == "reach")
    assert reach.n_nothing == 1 and reach.threshold == pytest.approx(0.9)  # NaN left out
    assert [r.name for r in report.rows if r.name == "evidence"] == []  # in the decision row
    no_modes = tmp_path / "old.json"
    no_modes.write_text(json.dumps({"questions": qs}))
    with pytest.raises(EvaluationError, match="no mode 'fast'"):
        signal_report([no_modes])


def test_eval_signals_refuses_to_count_a_question_twice(tmp_path: Path) -> None:
    qs = [
        {
            **_question("none", False, asks=1, top_cosine=0.2),
            "conversation": "c1",
            "question": "q1",
        },
        {
            **_question("direct", True, asks=1, top_cosine=0.5),
            "conversation": "c1",
            "question": "q2",
        },
    ]
    for name in ("default.json", "optin.json", "other.json"):
        data = {"path": "other.json" if name == "other.json" else "set.json", "modes": ["fast"]}
        (tmp_path / name).write_text(json.dumps({**data, "questions": qs}), encoding="utf-8")
    both = [tmp_path / "default.json", tmp_path / "optin.json"]
    with pytest.raises(EvaluationError, match=r"question c1/q1 of set\.json is also in"):
        signal_report(both)
    # the same ids from another set are other questions
    report = signal_report([tmp_path / "default.json", tmp_path / "other.json"], none_target=1.0)
    assert (report.n_nothing, report.n_others) == (2, 2)
