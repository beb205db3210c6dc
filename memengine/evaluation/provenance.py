"""Which code a measurement ran: the package's version, folder and git commit.

A before/after comparison run from a second checkout can silently measure
the wrong copy: ``python -m memengine`` started from the project folder
imports the package there, ahead of ``PYTHONPATH``. Every ``eval`` and
``bench`` result records this, so the numbers can be traced to the code.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import Config, masked_url

__all__ = ["CodeInfo", "changed_settings", "code_info", "describe_code"]

_PACKAGE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class CodeInfo:
    """The memengine a run imported: version, package folder, git commit (``None`` outside a
    checkout of the project) and whether the package's tracked files differ from it."""

    version: str
    path: str
    commit: str | None
    modified: bool | None

    def to_json(self) -> dict[str, Any]:
        """The fields as plain JSON data."""
        return asdict(self)


def describe_code(info: Mapping[str, Any]) -> str:
    """``memengine 0.1.0 (git 1a2b3c4, modified) at /path/memengine`` from :meth:`CodeInfo.to_json`
    data (as a result's JSON holds it)."""
    commit = info.get("commit")
    if not commit:
        where = "not a git checkout"
    else:
        where = f"git {str(commit)[:7]}" + (", modified" if info.get("modified") else "")
    return f"memengine {info.get('version', '?')} ({where}) at {info.get('path', '?')}"


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(_PACKAGE.parent), *args],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return None
    return done.stdout if done.returncode == 0 else None


def code_info() -> CodeInfo:
    """The version, folder and git state of the imported memengine package."""
    from .. import __version__

    commit: str | None = None
    top = _git("rev-parse", "--show-toplevel")
    # only a checkout of this project: an installed copy may sit in another project's tree
    if top is not None and Path(top.strip()).resolve() == _PACKAGE.parent:
        commit = _git("rev-parse", "HEAD")
    modified: bool | None = None
    if commit is not None:
        status = _git("status", "--porcelain", "--untracked-files=no", "--", str(_PACKAGE))
        modified = bool(status.strip()) if status is not None else None
    return CodeInfo(
        version=__version__,
        path=str(_PACKAGE),
        commit=commit.strip() if commit else None,
        modified=modified,
    )


def changed_settings(config: Config) -> dict[str, Any]:
    """The settings of ``config`` that differ from the defaults, as dotted names and JSON
    values (``retrieval.knn_weight``): a ``memengine.toml`` in the folder, or a
    ``MEMENGINE_*`` variable, changes what a measurement measures. The file path is left
    out (an evaluation makes its own files)."""
    found: dict[str, Any] = {}

    def walk(prefix: str, value: Any, default: Any) -> None:
        if isinstance(value, dict) and isinstance(default, dict):
            for key in value:
                walk(f"{prefix}{key}.", value[key], default.get(key))
        elif value != default:
            found[prefix.rstrip(".")] = value

    walk("", config.model_dump(mode="json", exclude={"db"}), Config().model_dump(mode="json"))
    return {key: _masked(key, value) for key, value in found.items()}


def _masked(key: str, value: Any) -> Any:
    """A setting as a result may show it: an API key as ``***``, a URL without the name and
    password it may carry (``https://user:pw@host`` → ``https://***@host``)."""
    if key.endswith("api_key") and value:
        return "***"
    if key.endswith("base_url") and isinstance(value, str):
        return masked_url(value)
    return value
