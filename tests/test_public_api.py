"""The public API: everything in ``__all__`` exists, and the error tree has one root."""

from __future__ import annotations

import inspect
import sys
import typing
from pathlib import Path

import pytest

import memengine
from memengine import errors
from tests.helpers import last_line_printed


def test_all_names_exist_and_are_documented() -> None:
    """Every name of ``__all__``, and the two left out of it so that a ``*`` import loads
    no ``openai`` (importable by name all the same)."""
    assert sorted(memengine.__all__) == memengine.__all__
    for name in [*memengine.__all__, "ChatClient", "OpenAIEmbedder"]:
        obj = getattr(memengine, name)
        if typing.get_origin(obj) is not None:
            continue  # an alias of a generic (Clock), a class to Python 3.10's inspect
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"{name} has no docstring"


def test_every_error_derives_from_the_root() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.MemEngineError)
        assert getattr(memengine, name) is cls


def test_every_package_is_in_the_wheel() -> None:
    """pyproject.toml lists the packages by name: a new sub-package left out of the list
    would be missing from a built wheel (only an editable install would find it)."""
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # (the project's own dependency there, as memengine.config reads it)
        import tomli as tomllib

    root = Path(memengine.__file__).resolve().parent
    pyproject = root.parent / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("installed from a wheel: no pyproject.toml beside the package")
    listed = set(tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(("memengine", *init.parent.relative_to(root).parts))
        for init in root.rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_every_result_writes_as_json(mem: memengine.Memory) -> None:
    """What a server sends over HTTP: the models by themselves, the reports through a
    TypeAdapter, as the README shows."""
    import json

    from pydantic import TypeAdapter

    first = mem.add_exchange("The dentist is on Friday at 3pm", "Noted.")
    r = mem.retrieve("when is the dentist?")
    assert json.loads(r.model_dump_json())["results"][0]["episode"]["id"] == first
    assert r.turn_id is not None
    feedback = json.loads(
        TypeAdapter(memengine.FeedbackResult).dump_json(mem.feedback(r.turn_id, [first]))
    )
    assert feedback["used"] == [first]
    sleep = json.loads(TypeAdapter(memengine.SleepReport).dump_json(mem.sleep()))
    assert sleep["agent"] == "default" and isinstance(sleep["slept_at"], str)
    life = json.loads(TypeAdapter(memengine.MemoryLife).dump_json(mem.life_of(first)))
    assert life["episode"]["id"] == first and life["episode"]["access_count"] == 1
    agents = json.loads(TypeAdapter(list[memengine.AgentRow]).dump_json(mem.agents()))
    assert [a["name"] for a in agents] == ["default"]


def test_every_degraded_note_begins_as_documented() -> None:
    """Each note the code writes into ``degraded`` begins with one of DEGRADED_PARTS's
    beginnings (read from the source: a note written as a literal, or an f-string's
    literal start, or a phase's name that _await puts first)."""
    import ast
    from pathlib import Path

    from memengine.models import degraded_part

    root = Path(memengine.__file__).resolve().parent
    starts: list[str] = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "degraded"
                and node.args
            ):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
                starts.append(str(arg.values[0].value))
            elif isinstance(arg, ast.Constant):
                starts.append(str(arg.value))
    assert len(starts) >= 10
    starts += ["expansion: timeout after 0.90 s", "rerank: invalid JSON: …"]  # via _await
    unknown = [s for s in starts if degraded_part(s) == "other"]
    assert unknown == [] or all(
        "feedback" in s or "LLM judge" in s or "memories" in s or "answer similarity" in s
        for s in unknown
    ), unknown


def test_stats_holds_what_its_type_says(mem: memengine.Memory) -> None:
    """``Stats`` is a TypedDict: the keys and value types a caller's type checker is told."""
    import types
    import typing

    import typing_extensions

    mem.add_exchange("The dentist is on Friday at 3pm", "Noted.")
    stats: dict[str, object] = dict(mem.stats())
    hints = typing.get_type_hints(memengine.Stats)
    assert set(stats) == set(hints)
    for key, hint in hints.items():
        origin = typing.get_origin(hint) or hint
        if origin in (typing.Union, types.UnionType):  # (a TypedDict is a dict at run time)
            origin = tuple(
                dict if typing_extensions.is_typeddict(a) else typing.get_origin(a) or a
                for a in typing.get_args(hint)
            )
        assert isinstance(stats[key], origin), f"{key}: {stats[key]!r} is not {hint}"
    assert stats["episodes"] == 1 and stats["agents"] == {"default": {"active": 1, "archived": 0}}
    assert stats["first"] is not None and stats["first"] == stats["last"]
    assert stats["agent"] is None and stats["agent_count"] == 1
    own = mem.stats(agent="default")["agent"]
    assert own is not None and set(own) == set(typing.get_type_hints(memengine.AgentStats))


def test_message_takes_every_role_name() -> None:
    """The names other chat APIs give the partner are accepted (and typed: ``RoleName``)."""
    import typing

    kept = {typing.cast(str, a) for a in typing.get_args(memengine.Role)}
    for name in typing.get_args(memengine.RoleName):
        assert memengine.Message(role=name, text="hi").role in kept
    assert memengine.Message(role="assistant", text="hi").role == "partner"
    assert memengine.Message(role="companion", text="hi").role == "partner"


def test_the_openai_embedder_is_one_class_exported_beside_the_chat_client() -> None:
    """The README names ``OpenAIEmbedder`` as ``ChatClient``'s peer, but it was importable
    only from ``memengine.embed.openai``: now from ``memengine`` and ``memengine.embed``
    too, the very class ``make_embedder`` builds, listed by ``dir()`` of both."""
    import memengine.embed
    from memengine.embed.openai import OpenAIEmbedder
    from memengine.embed.usem3 import USEM3Embedder

    assert memengine.OpenAIEmbedder is memengine.embed.OpenAIEmbedder is OpenAIEmbedder
    assert memengine.embed.USEM3Embedder is USEM3Embedder
    assert memengine.embed.Embedder is memengine.Embedder
    cfg = memengine.EmbedderConfig(name="openai", base_url="http://127.0.0.1:9", model="m")
    assert type(memengine.make_embedder(cfg)) is memengine.OpenAIEmbedder
    assert {"ChatClient", "OpenAIEmbedder"} <= set(dir(memengine))
    assert set(memengine.embed.__all__) <= set(dir(memengine.embed))
    with pytest.raises(AttributeError, match="NotAnEmbedder"):
        memengine.embed.NotAnEmbedder  # noqa: B018  (nothing made up)


def test_importing_memengine_still_loads_no_openai_client() -> None:
    """The two are imported when named: ``import memengine`` (which loads
    ``memengine.embed``) leaves the ``openai`` package unloaded, as an offline program
    needs; naming one loads it."""
    probe = (
        "import sys, memengine, memengine.embed; before = 'openai' in sys.modules; "
        "memengine.OpenAIEmbedder; print(before, 'openai' in sys.modules)"
    )
    assert last_line_printed(probe).split() == ["False", "True"]


def test_a_memory_opened_to_embed_nothing_does_not_build_the_llm_client(tmp_path: Path) -> None:
    """With ``[llm]`` configured, a memory opened for turns builds its chat client in the
    background (importing openai, ~1 s); one opened to embed nothing (``stats``, ``show``,
    ``export``…) runs no turn, so it builds none, and its close waits for nothing (such a
    command took 1.5 s longer with an endpoint configured)."""
    db = str(tmp_path / "m.db")
    opened = (
        "import sys\n"
        "from memengine import Config, LLMConfig, Memory\n"
        "from tests.helpers import HashEmbedder, word_episodes\n"
        "cfg = Config(llm=LLMConfig(base_url='http://127.0.0.1:9/v1', rerank_model='judge'))\n"
        "with Memory.open(sys.argv[1], config=cfg, {how}) as mem:\n"
        "    {then}\n"
        "print('openai' in sys.modules, 'memengine.retrieve.turn' in sys.modules)\n"
    )
    seen = []
    for how, then in [
        ("embedder=HashEmbedder()", "mem.add_many(word_episodes(3, 'a'))"),  # turns: built
        ("embeds=False", "mem.stats()"),  # inspecting a file that holds data: none
        ("embedder=HashEmbedder(), warm_llm=False", "mem.add_many(word_episodes(3, 'b'))"),
        # asked before a turn (as the CLI's retrieve does), it is built then: not in the turn
        ("embedder=HashEmbedder(), warm_llm=False", "mem.load_llm_client(turn=True)"),
    ]:
        seen.append(last_line_printed(opened.format(how=how, then=then), db))
    assert seen == ["True True", "False False", "False False", "True True"]
    with pytest.raises(memengine.InvalidInput, match="warm_llm is True or False, not 'no'"):
        memengine.Memory.open(db, warm_llm="no")  # type: ignore[arg-type]


def test_only_the_commands_that_run_turns_have_the_llm_client_built(tmp_path: Path) -> None:
    """With ``[llm]`` configured, ``memengine add`` and ``search`` (and ``import``,
    ``init``…) import no openai: they took 1–2 s longer, waiting at exit for a client they
    never use; ``retrieve`` still has it built before its turn."""

    (tmp_path / "memengine.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nrerank_model = "judge"\n'
        "turn_deadline_s = 0.5\nmax_retries = 0\n",
        encoding="utf-8",
    )
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('openai' in sys.modules))\n"
        "from memengine.cli import main\n"
        "sys.argv[0] = 'memengine'\n"
        "main()\n"
    )
    seen = []
    for command in (["add", "the cat sat"], ["search", "the cat"], ["retrieve", "the cat"]):
        seen.append(last_line_printed(probe, *command, "--db", "m.db", cwd=str(tmp_path)))
    assert seen == ["False", "False", "True"]  # (a search asks no LLM)
