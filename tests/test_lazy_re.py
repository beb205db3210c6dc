"""Patterns compiled on first use: every one compiles, acts as ``re.compile``'s, and
importing the command compiles (almost) none of them."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import signal
import threading
from pathlib import Path

import pytest

import memengine
from memengine import lazy_re
from memengine.lazy_re import LazyPattern, lazy_compile, made
from tests.helpers import in_forked_child, last_line_printed


def test_every_pattern_of_the_package_compiles() -> None:
    for found in pkgutil.walk_packages(memengine.__path__, "memengine."):
        if not found.name.endswith("__main__"):  # (that one runs the command)
            importlib.import_module(found.name)
    patterns = list(made)
    assert len(patterns) > 400  # the rule tables' patterns are all lazy
    for pattern in patterns:
        assert isinstance(pattern.compiled(), re.Pattern), pattern


@pytest.mark.parametrize("flags", [0, re.IGNORECASE, re.ASCII | re.VERBOSE])
def test_a_lazy_pattern_answers_as_the_compiled_one(flags: int) -> None:
    text = "Kai fed Juno at 7; juno ate. 猫のジュノ、7時"
    source = r"(?P<name>juno)|(\d+)"
    lazy, real = lazy_compile(source, flags), re.compile(source, flags)
    assert "_compiled" not in lazy.__dict__  # nothing compiled before the first use
    assert lazy.pattern == real.pattern
    assert lazy.groups == real.groups == 2
    assert dict(lazy.groupindex) == {"name": 1}

    def spans(found: re.Match[str] | None) -> tuple[int, int] | None:
        return None if found is None else found.span()

    assert spans(lazy.search(text)) == spans(real.search(text))
    assert spans(lazy.search(text, 10, 20)) == spans(real.search(text, 10, 20))
    assert spans(lazy.match(text, 8)) == spans(real.match(text, 8))
    assert spans(lazy.fullmatch("7")) == spans(real.fullmatch("7"))
    assert lazy.findall(text) == real.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.sub("<>", text) == real.sub("<>", text)
    assert lazy.sub(lambda m: m.group().upper(), text, 1) == real.sub(
        lambda m: m.group().upper(), text, 1
    )
    assert lazy.subn("-", text) == real.subn("-", text)
    assert lazy.split(text, 2) == real.split(text, 2)


def test_after_the_first_use_its_methods_are_the_compiled_patterns() -> None:
    lazy = lazy_compile(r"\bcat\b")
    assert lazy.search("a cat") is not None  # the first use compiles it
    compiled = lazy.compiled()
    assert lazy.search.__self__ is compiled  # no call in between from now on
    assert lazy.sub.__self__ is compiled
    found = lazy.search("the cat")
    assert found is not None and found.re is compiled


def test_threads_that_use_it_first_together_share_one_compiled_pattern() -> None:
    lazy = lazy_compile("|".join(f"word{n}" for n in range(2000)))
    start = threading.Barrier(8)
    seen: list[re.Pattern[str]] = []

    def use() -> None:
        start.wait()
        found = lazy.search("… word1999 …")
        assert found is not None
        seen.append(found.re)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and all(p is lazy.compiled() for p in seen)


def test_a_pattern_that_does_not_compile_says_so_at_its_first_use() -> None:
    broken = LazyPattern("(unclosed")
    with pytest.raises(re.error, match="missing \\)"):
        broken.search("text")


def test_importing_the_command_compiles_next_to_none_of_the_patterns() -> None:
    """The cold start's import: its patterns wait for a turn that needs them."""
    script = (
        "import json, memengine.cli\n"
        "from memengine.lazy_re import made\n"
        "done = [p.pattern for p in made if '_compiled' in p.__dict__]\n"
        "print(json.dumps([len(made), done]))\n"
    )
    count, compiled = json.loads(last_line_printed(script))
    assert count > 400
    assert len(compiled) <= 3, compiled  # (a table built at import may use one)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_child_forked_while_a_thread_compiles_compiles_its_own() -> None:
    """The lock a parent thread held, compiling, at the fork is not the child's: its first
    use of a pattern answers (it waited forever)."""
    pattern = lazy_compile(r"\blast (week|month)\b")

    def child() -> object:
        signal.alarm(10)  # (a child waiting forever is killed: the test fails, not hangs)
        found = pattern.search("I went there last week")
        return None if found is None else found.group(1)

    with lazy_re._COMPILING:  # as a thread compiling at the fork holds it
        assert in_forked_child(child) == "week"


@pytest.mark.parametrize(
    ("llm", "opened"),
    [(False, ""), (True, ""), (True, ", warm_llm=False")],
    ids=["offline", "llm", "llm-built-by-warm"],
)
def test_warm_compiles_them_all_before_the_first_turn(
    tmp_path: Path, llm: bool, opened: str
) -> None:
    """A server's warm-up pays for the patterns, so its first turn compiles none: with an
    LLM configured, its client's and turn runner's modules' patterns too (imported while
    warming, also by a memory opened not to build them in the background)."""
    settings = "Config(llm=LLMConfig(base_url='http://127.0.0.1:9/v1', rerank_model='judge'))"
    script = (
        "import sys\n"
        "from memengine import Config, LLMConfig, Memory\n"
        "from memengine.lazy_re import made\n"
        "from tests.helpers import HashEmbedder, word_episodes\n"
        "def waiting(): return sum('_compiled' not in p.__dict__ for p in made)\n"
        f"cfg = {settings if llm else 'Config()'}\n"
        f"with Memory.open(sys.argv[1], config=cfg, embedder=HashEmbedder(){opened}) as mem:\n"
        "    mem.add_many(word_episodes(20, 'a'))\n"
        "    before = waiting()\n"
        "    mem.warm('a')\n"
        "    after = waiting()\n"
        "    mem.retrieve('what did the cat eat last week?', agent='a')\n"
        "    print(before, after, waiting())\n"
    )
    printed = last_line_printed(script, str(tmp_path / "m.db"))
    before, after, after_a_turn = map(int, printed.split())
    assert before > 300
    assert after == 0
    assert after_a_turn == 0, printed
