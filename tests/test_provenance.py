"""Which code a measurement ran: read from the imported package and its git checkout."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import memengine
from memengine.evaluation.provenance import code_info, describe_code

PACKAGE = Path(memengine.__file__).resolve().parent


def test_code_info_names_the_imported_package() -> None:
    info = code_info()
    assert info.version == memengine.__version__
    assert info.path == str(PACKAGE)
    assert info.to_json()["path"] == str(PACKAGE)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_code_info_reads_the_commit_of_a_checkout() -> None:
    top = subprocess.run(
        ["git", "-C", str(PACKAGE.parent), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    info = code_info()
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != PACKAGE.parent:
        assert info.commit is None and info.modified is None  # an installed copy, not a checkout
        return
    head = subprocess.run(
        ["git", "-C", str(PACKAGE.parent), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert info.commit == head
    assert re.fullmatch(r"[0-9a-f]{40}", head)
    assert isinstance(info.modified, bool)


def test_describe_code() -> None:
    line = describe_code(
        {"version": "0.1.0", "path": "/src/memengine", "commit": "1a2b3c4d5e", "modified": True}
    )
    assert line == "memengine 0.1.0 (git 1a2b3c4, modified) at /src/memengine"
    plain = describe_code({"version": "0.1.0", "path": "/x", "commit": None, "modified": None})
    assert plain == "memengine 0.1.0 (not a git checkout) at /x"
