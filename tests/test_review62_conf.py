"""Session 62's configuration review: an eval mode's settings checked before any ingest, a
check over several keys credited to where each came from, ``stats`` keeping to the
configured agent, and ``simulate --tasks-per-day`` bounded as the setting is."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import ConfigError, Memory, load_config
from memengine.cli import app
from memengine.errors import EvaluationError
from memengine.evaluation import plan_modes, run_memset

from .helpers import HashEmbedder
from .test_eval_malformed import MEMSET

BM25_SHORT = '[retrieval]\nsearch = "bm25"\nknn_k_per_query = 5\n'
"""Valid: bm25 reads no vector list, so knn_k_per_query may sit below spread_k (10)."""

# -- 1. an eval mode that searches vectors under a bm25 configuration --------------------------


def test_a_mode_that_cannot_run_the_configuration_is_refused_before_any_ingest(
    tmp_path: Path,
) -> None:
    """The modes' copies were not checked: the default eval of a valid bm25 configuration
    ingested, then Memory.open refused mode vector's copy with an error that blamed the
    user's settings and named no mode."""
    conf = tmp_path / "bm.toml"
    conf.write_text(BM25_SHORT, encoding="utf-8")
    config = load_config(conf, environ={})
    data = tmp_path / "set.json"
    data.write_text(json.dumps({"conversations": [copy.deepcopy(MEMSET)]}))
    embedder = HashEmbedder()
    with pytest.raises(EvaluationError) as caught:
        run_memset(data, config=config, embedder=embedder, modes=["bm25", "vector"])
    assert embedder.calls == []  # nothing was ingested
    message = str(caught.value)
    assert message.startswith(
        "mode 'vector' searches vectors (the configuration's [retrieval] search is 'bm25'), "
        "and with it knn_k_per_query (5) is below spread_k (10)"
    )
    assert message.endswith(
        "lower spread_k to 5 or less, or set adaptive_weights = false under [retrieval]; "
        "or run --mode bm25 only"
    )
    with pytest.raises(EvaluationError, match=r"^modes 'vector', 'fast' search vectors"):
        plan_modes(["bm25", "vector", "fast", "full"], config)
    result = run_memset(data, config=config, embedder=embedder, modes=["bm25"])
    assert list(result.to_json()["modes"]) == ["bm25"]


def test_the_eval_command_names_the_mode_without_a_traceback(tmp_path: Path, cli_env: None) -> None:
    conf = tmp_path / "bm.toml"
    conf.write_text(BM25_SHORT, encoding="utf-8")
    data = tmp_path / "set.json"
    data.write_text(json.dumps({"conversations": [copy.deepcopy(MEMSET)]}))
    result = CliRunner().invoke(app, ["eval", "memset", str(data), "--config", str(conf), "-q"])
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert "error: mode 'fast' searches vectors" in said and "Traceback" not in said
    assert "invalid setting" not in said  # (the user's settings are valid)


# -- 2. a check over several keys, its keys from the file and the environment ---------------


def test_a_name_switched_by_the_environment_is_credited_to_its_variable(tmp_path: Path) -> None:
    """The error named the file alone ("invalid setting embedder (config file b.toml)"),
    whose name = "openai" was right: MEMENGINE_EMBEDDER__NAME had switched it."""
    conf = tmp_path / "b.toml"
    conf.write_text(
        '[embedder]\nname = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "test-embed"\ndimensions = 16\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(conf, environ={"MEMENGINE_EMBEDDER__NAME": "usem3"})
    assert str(caught.value).startswith(
        "invalid setting embedder (name from environment variable MEMENGINE_EMBEDDER__NAME; "
        f"model, base_url, dimensions from config file {conf}): model ('test-embed')"
    )


def test_a_search_switched_by_the_environment_is_credited_to_its_variable(
    tmp_path: Path,
) -> None:
    conf = tmp_path / "bm.toml"
    conf.write_text(BM25_SHORT, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(conf, environ={"MEMENGINE_RETRIEVAL__SEARCH": "hybrid"})
    assert str(caught.value).startswith(
        f"invalid setting retrieval (knn_k_per_query from config file {conf}; search from "
        "environment variable MEMENGINE_RETRIEVAL__SEARCH): knn_k_per_query (5) is below "
        "spread_k (10)"
    )


# -- 3. stats keeps to the configured agent ---------------------------------------------------


def test_stats_keeps_to_the_configured_agent(db_path: Path, cli_env: None) -> None:
    """MEMENGINE_AGENT=alice memengine stats listed bob's counts too: a per-user
    process's stats told of every user (show, export and delete kept to alice)."""
    with Memory.open(db_path, embedder=HashEmbedder()) as m:
        m.add("alice's note", agent="alice")
        m.add("bob's note", agent="bob")

    def agents(*args: str, env: dict[str, str] | None = None) -> list[str]:
        result = CliRunner().invoke(app, ["stats", "--db", str(db_path), "--json", *args], env=env)
        assert result.exit_code == 0, result.output
        return list(json.loads(result.stdout)["agents"])

    assert agents(env={"MEMENGINE_AGENT": "alice"}) == ["alice"]
    conf = db_path.parent / "user.toml"
    conf.write_text('agent = "bob"\n', encoding="utf-8")
    assert agents("--config", str(conf)) == ["bob"]
    assert agents("--config", str(conf), "-a", "alice") == ["alice"]  # the flag over the file
    assert agents("--all-agents", env={"MEMENGINE_AGENT": "alice"}) == ["alice", "bob"]
    assert agents() == ["alice", "bob"]  # no agent named: the whole file, as before
    both = CliRunner().invoke(app, ["stats", "--db", str(db_path), "-a", "bob", "--all-agents"])
    assert both.exit_code == 2 and "either --agent or --all-agents" in both.output


# -- 4. simulate --tasks-per-day as [lifecycle] expected_tasks_per_day --------------------------


def test_simulate_bounds_tasks_per_day_as_the_setting(cli_env: None) -> None:
    """The flag took 1e300, which the setting refuses (at most 1e6)."""
    refused = CliRunner().invoke(app, ["simulate", "-n", "5", "--tasks-per-day", "1e300"])
    assert refused.exit_code == 2
    assert "1e300 is not in the range 1 <= x <= 1e+06" in " ".join(refused.output.split())
    taken = CliRunner().invoke(app, ["simulate", "-n", "5", "--tasks-per-day", "1e6", "--json"])
    assert taken.exit_code == 0 and json.loads(taken.stdout)["tasks"] == 5
