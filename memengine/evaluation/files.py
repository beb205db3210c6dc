"""Reading evaluation data files: JSON with clear errors, and the conversations asked for."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import EvaluationError, InvalidInput
from ..importers import read_bounded, why_not_json, wide_codec

__all__ = ["load_json", "select_conversations"]


def load_json(path: Path) -> Any:
    """Read a JSON evaluation file (UTF-8, or UTF-16/32 after a byte-order mark, as an
    import reads it; at most :data:`.importers.MAX_STREAM_BYTES`), turning I/O and syntax
    errors into EvaluationError."""
    try:
        with Path(path).open("rb") as fh:
            data = read_bounded(fh, str(path), advice="an evaluation file is smaller")
        return json.loads(data.decode(wide_codec(data) or "utf-8-sig"))
    except FileNotFoundError as exc:
        raise EvaluationError(f"no such file: {path}") from exc
    except InvalidInput as exc:
        raise EvaluationError(str(exc)) from exc
    except (OSError, ValueError) as exc:  # (not UTF-8, not JSON, a number of 5,000 digits)
        raise EvaluationError(f"{path}: cannot read JSON ({why_not_json(exc)})") from exc
    except RecursionError as exc:
        raise EvaluationError(f"{path}: cannot read JSON (nested too deeply)") from exc


def select_conversations(available: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    """The conversation ids to run: all, or the ``wanted`` ones (which must exist), in file order."""
    if not wanted:
        return list(available)
    missing = [w for w in wanted if w not in available]
    if missing:
        raise EvaluationError(
            f"unknown conversation {', '.join(missing)}; the file holds {', '.join(available)}"
        )
    keep = set(wanted)
    return [a for a in available if a in keep]
