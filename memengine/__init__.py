"""memengine: a local-first memory engine in one SQLite file."""
