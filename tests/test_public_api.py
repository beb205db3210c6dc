"""The public API: everything in ``__all__`` exists, and the error tree has one root."""

from __future__ import annotations

import inspect

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
