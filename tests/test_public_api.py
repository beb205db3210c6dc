"""The public API: everything in ``__all__`` exists, and the error tree has one root."""

from __future__ import annotations

import inspect

import pytest

import memengine
from memengine import errors


def test_all_names_exist_and_are_documented() -> None:
    assert sorted(memengine.__all__) == memengine.__all__
    for name in memengine.__all__:
        obj = getattr(memengine, name)
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

    import tomllib

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
