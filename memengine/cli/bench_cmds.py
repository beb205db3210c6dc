"""bench_cmds commands (registered on the app)."""

from __future__ import annotations
