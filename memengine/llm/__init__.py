"""LLM access: a deadline-bounded JSON chat client for OpenAI-compatible servers."""

from __future__ import annotations

from .client import ChatClient, JSONReply, Usage
from .jsonparse import parse_json_object

__all__ = ["ChatClient", "JSONReply", "Usage", "parse_json_object"]
