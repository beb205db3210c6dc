"""Bundled sample conversations (original, CC0) used by `make demo`."""
