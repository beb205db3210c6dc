"""The quick-start demo: load the bundled sample conversations and print two MemoryPacks.

Runs offline with the default embedder. ``make demo`` runs it; the database
is written to ``demo.db`` (recreated each time) so that you can explore it
afterwards with ``.venv/bin/memengine retrieve --db demo.db --agent en-c1 "…"`` (its
agents are ``en-c1`` and ``ja-c1``, one per sample conversation).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from importlib import resources
from pathlib import Path

from memengine import FixedClock, Memory, Message
from memengine.importers import read_memsets

DB = Path("demo.db")


def main() -> None:
    """Import both samples into one file and print a pack for a Japanese and an English turn."""
    if not sys.stdout.isatty():  # (into a file or a pipe: UTF-8, whatever the locale's code page)
        sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    for suffix in ("", "-wal", "-shm"):
        Path(f"{DB}{suffix}").unlink(missing_ok=True)
    samples = resources.files("memengine.sample")
    turns = []
    clock = FixedClock(datetime.fromisoformat("2026-06-01T12:00:00+00:00"))
    with Memory.open(DB, clock=clock) as mem:
        for name in ("companion_ja.json", "companion_en.json"):
            data = json.loads((samples / name).read_text(encoding="utf-8"))
            for conv in data["conversations"]:
                ids = mem.add_many(read_memsets(conv, agent=f"{data['language']}-{conv['id']}"))
                print(f"loaded {len(ids)} exchanges of {conv['user_name']} ({data['language']})")
                anaphora = next(q for q in conv["questions"] if q["type"] == "anaphora")
                turns.append((f"{data['language']}-{conv['id']}", anaphora))
        for agent, q in turns:
            clock.set(datetime.fromisoformat(q["asked_at"]))
            recent = [Message(role=m["role"], text=m["text"]) for m in q["recent"]]
            retrieval = mem.retrieve(q["query"], recent=recent, agent=agent)
            pack = mem.pack(retrieval, query=q["query"])
            print("\n" + "=" * 72)
            for m in recent:
                print(f"  {m.role}: {m.text}")
            print(f"> user: {q['query']}")
            print(f"  ({retrieval.timings_ms['turn']:.0f} ms, {pack.tokens} tokens)\n")
            print(pack.text or "(nothing relevant: nothing injected)")
    windows = sys.platform == "win32"  # (cmd.exe keeps single quotes; both read double ones)
    program = r".venv\Scripts\memengine" if windows else ".venv/bin/memengine"
    question = "Who looks after Juno while I am away?"
    question = f'"{question}"' if windows else f"'{question}'"
    print(f"\nThe memory file is {DB}; try: {program} retrieve --db {DB} --agent en-c1 {question}")


if __name__ == "__main__":
    main()
