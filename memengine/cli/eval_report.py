"""Rich tables for evaluation results, and a two-line progress display. No typer here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ..evaluation.provenance import describe_code
from ..evaluation.runner import EvalResult
from ..evaluation.signals import SignalReport

__all__ = [
    "conversation_table",
    "eval_progress",
    "locomo_tables",
    "memset_tables",
    "render",
    "signal_table",
    "summary_lines",
]

Callback = Callable[[int, int], None]

_PACK_TARGET = 0.8


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _title(result: EvalResult, what: str) -> str:
    convs = len(result.conversations)
    name = " + ".join(Path(f).name for f in result.files) or Path(result.path).name
    return (
        f"{what} — {name} · {convs} conversation{'s' if convs != 1 else ''} · "
        f"{result.embedder} · top {result.k}"
    )


def _caption(result: EvalResult) -> str:
    padding = result.padding.describe() if result.padding else "padding: none"
    return padding


def _best(result: EvalResult, group: str, metric: str) -> float | None:
    values = [
        result.table[m][group][metric]
        for m in result.modes
        if group in result.table[m] and metric in result.table[m][group]
    ]
    return max(values) if len(values) > 1 else None


def _cell(result: EvalResult, mode: str, group: str, metric: str) -> Text:
    value = result.table.get(mode, {}).get(group, {}).get(metric)
    text = Text(_fmt(value))
    best = _best(result, group, metric)
    if value is not None and best is not None and value >= best - 1e-12:
        text.stylize("bold")
    return text


def _section_ends(groups: list[str], group: str) -> bool:
    """A rule under the overall row and under the row just before it."""
    i = groups.index(group)
    nxt = groups[i + 1] if i + 1 < len(groups) else ""
    return group.startswith("overall") or nxt.startswith("overall")


def _n(result: EvalResult, group: str) -> str:
    for mode in result.modes:
        row = result.table[mode].get(group)
        if row is not None:
            return str(int(row["n"]))
    return "0"


def _compact(title: str) -> Table:
    """A table without outer lines, for the detail under a main table."""
    return Table(
        title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True
    )


def _recall_columns(table: Table, first: str, modes: list[str]) -> None:
    """The columns ``first``, ``n``, then R@5 and R@10 for each mode."""
    table.add_column(first, no_wrap=True)
    table.add_column("n", justify="right")
    for mode in modes:
        table.add_column(f"{mode}\nR@5", justify="right")
        table.add_column(f"{mode}\nR@10", justify="right")


def conversation_table(result: EvalResult) -> Table | None:
    """R@5/R@10 of the overall row, one line per conversation (None for a single one).

    The spread between conversations is what a new conversation can be
    expected to land in; the best mode of each line is in bold.
    """
    convs = [
        c for c in result.conversations if any(c in t for t in result.by_conversation.values())
    ]
    if len(convs) < 2:
        return None
    table = _compact("overall, per conversation (best mode in bold)")
    _recall_columns(table, "conversation", result.modes)
    for conv in convs:
        rows = {m: result.by_conversation.get(m, {}).get(conv, {}) for m in result.modes}
        n = next((int(r["n"]) for r in rows.values() if "n" in r), 0)
        cells: list[str | Text] = [conv, str(n)]
        for mode in result.modes:
            for metric in ("R@5", "R@10"):
                value = rows[mode].get(metric)
                others = [r[metric] for r in rows.values() if metric in r]
                text = Text(_fmt(value))
                if value is not None and len(others) > 1 and value >= max(others) - 1e-12:
                    text.stylize("bold")
                cells.append(text)
        table.add_row(*cells)
    return table


def locomo_tables(result: EvalResult) -> list[Table]:
    """The LoCoMo tables: R@5/R@10 with modes side by side, then every metric per mode."""
    side = Table(title=_title(result, "LoCoMo evidence recall"), caption=_caption(result))
    _recall_columns(side, "category", result.modes)
    for group in result.groups:
        cells: list[str | Text] = [group, _n(result, group)]
        for mode in result.modes:
            cells += [_cell(result, mode, group, "R@5"), _cell(result, mode, group, "R@10")]
        side.add_row(*cells, end_section=_section_ends(result.groups, group))

    full = _compact("every metric (best mode in bold)")
    full.add_column("category", no_wrap=True)
    full.add_column("mode", no_wrap=True)
    for metric in result.metrics:
        full.add_column(metric, justify="right")
    for group in result.groups:
        for i, mode in enumerate(result.modes):
            full.add_row(
                group if i == 0 else "",
                mode,
                *[_cell(result, mode, group, m) for m in result.metrics],
                end_section=i == len(result.modes) - 1,
            )
    if not result.summary:
        return [side, full]
    rows: list[tuple[str, str, str | None]] = [
        ("injected, categories 1–4 (right: inject)", "inject_accuracy_answerable", "n_answerable")
    ]
    if any("inject_accuracy_swapped" in s for s in result.summary.values()):
        rows.append(
            ("left empty, names swapped (right: nothing)", "inject_accuracy_swapped", "n_swapped")
        )
    return [side, full, _decisions(result, "should-inject decision", rows)]


def memset_tables(result: EvalResult) -> list[Table]:
    """The memsets tables: recall per question type, then the injection decisions."""
    recall = Table(title=_title(result, "Memsets evidence recall"), caption=_caption(result))
    _recall_columns(recall, "type", result.modes)
    for group in result.groups:
        if group == "none":
            continue
        cells: list[str | Text] = [group, _n(result, group)]
        for mode in result.modes:
            cells += [_cell(result, mode, group, "R@5"), _cell(result, mode, group, "R@10")]
        recall.add_row(*cells, end_section=_section_ends(result.groups, group))

    rows = [
        ("inject accuracy, none questions", "inject_accuracy_none", "n_none"),
        ("inject accuracy, other questions", "inject_accuracy_others", "n_others"),
        (f"pack precision (target ≥ {_PACK_TARGET})", "pack_precision", None),
        ("  other questions with a pack (its n)", "n_injected", None),
    ]
    return [recall, _decisions(result, "should-inject decision and MemoryPack precision", rows)]


def _decisions(result: EvalResult, title: str, rows: list[tuple[str, str, str | None]]) -> Table:
    """One line per ``(label, summary key, key of its n)``, one column per mode."""
    decisions = Table(title=title)
    decisions.add_column("measure", no_wrap=True)
    for mode in result.modes:
        decisions.add_column(mode, justify="right")
    for label, key, n_key in rows:
        first = result.summary.get(result.modes[0], {})
        n = first.get(n_key) if n_key else None
        cells = [label + (f" (n={int(n)})" if n is not None else "")]
        for mode in result.modes:
            value = result.summary.get(mode, {}).get(key)
            if key.startswith("n_"):
                cells.append(str(int(value)) if value is not None else "–")
            else:
                cells.append(_fmt(value))
        decisions.add_row(*cells)
    return decisions


def summary_lines(result: EvalResult) -> list[str]:
    """Notes under the tables: skipped modes, evidence counts, padding exclusions, wall times."""
    lines = list(result.notes)
    if result.dataset == "locomo":
        counted = {g: c for g, c in result.evidence.items() if not g.startswith("overall")}
        unknown = counted.pop("unknown category", {}).get("skipped", 0)
        questions = sum(c.get("questions", 0) for c in counted.values())
        normalised = sum(c.get("normalised", 0) for c in counted.values())
        dropped = sum(c.get("dropped", 0) for c in counted.values())
        skipped = sum(c.get("skipped", 0) for c in counted.values())
        detail = ", ".join(
            f"{g} {c.get('normalised', 0)}/{c.get('dropped', 0)}"
            for g, c in counted.items()
            if c.get("normalised") or c.get("dropped")
        )
        lines.append(
            f"evidence: {normalised} id strings normalised, {dropped} ids dropped (no such "
            "turn, or not a turn's id)"
            + (f" [by category, normalised/dropped: {detail}]" if detail else "")
            + f"; the conversations asked hold {questions + unknown} questions, {skipped} "
            "without valid evidence (never scored)"
            + (
                f", {unknown} of a category LoCoMo does not number (never scored)"
                if unknown
                else ""
            )
        )
    else:
        ev = result.evidence.get("all", {})
        lines.append(
            f"evidence: {ev.get('dropped', 0)} ids dropped (no such exchange), "
            f"{ev.get('skipped', 0)} questions of the conversations asked without valid "
            "evidence (never scored); pack = top "
            "max_results results as the MemoryPack would inject them"
        )
    if result.padding:
        lines.append(result.padding.describe())
        excluded = {c: e for c, e in result.padding.excluded.items() if e}
        if excluded:
            lines.append(
                "haystack conversations left out (the conversation under test): "
                + "; ".join(f"{c}: {', '.join(e)}" for c, e in excluded.items())
            )
    times = result.timings_s
    parts = [f"ingest {times.get('ingest', 0):.1f} s"]
    parts += [
        f"{k.removeprefix('questions_')} {v:.1f} s"
        for k, v in times.items()
        if k.startswith("questions_")
    ]
    parts.append(f"total {times.get('total', 0):.1f} s")
    lines.append(
        "wall time: "
        + ", ".join(parts)
        + " (query vectors are cached across modes: the first mode pays for embedding)"
    )
    if result.code:
        lines.append("code: " + describe_code(result.code))
    changed = ", ".join(f"{k}={v}" for k, v in result.settings.items())
    lines.append("settings: " + (changed or "the defaults"))
    return lines


def render(result: EvalResult, console: Console) -> None:
    """Print the tables and notes of one evaluation run."""
    for note in result.skipped_modes.values():
        console.print(
            f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True, markup=True
        )
    if not result.modes:
        console.print("nothing was run: no mode left to evaluate", highlight=False)
        return
    tables: list[Table] = list(
        locomo_tables(result) if result.dataset == "locomo" else memset_tables(result)
    )
    per_conversation = conversation_table(result)
    if per_conversation is not None:
        tables.append(per_conversation)
    from ._app import print_table  # (whole cells, or lines on a narrow terminal)

    for table in tables:
        print_table(table, console)
    for line in summary_lines(result):
        if line in result.skipped_modes.values():
            continue
        console.print(f"[dim]{escape(line)}[/dim]", highlight=False, soft_wrap=True, markup=True)


def signal_table(report: SignalReport) -> Table:
    """Each should-inject signal alone at the threshold that rejects ``none_target`` of the
    questions that want nothing, beside the decision as it was made."""
    table = Table(
        title=f"should-inject signals alone · {report.mode} · {report.n_nothing} asking questions "
        f"want nothing, {report.n_others} have evidence ({report.small_talk} small talk, "
        f"{report.llm_decided} decided by an LLM left out)",
        caption=f"threshold: the lowest that rejects ≥ {report.none_target:.0%} of the "
        "questions that want nothing (inject at or above it)",
    )
    table.add_column("signal", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("mean: nothing / evidence", justify="right")
    table.add_column("threshold", justify="right")
    table.add_column("nothing rejected", justify="right")
    table.add_column("evidence injected", justify="right")
    table.add_row(
        "the decision as made",
        f"{report.n_nothing}/{report.n_others}",
        "",
        "",
        _fmt(report.decided_nothing_rejected),
        _fmt(report.decided_others_kept),
        end_section=True,
    )
    for row in report.rows:
        table.add_row(
            row.name,
            f"{row.n_nothing}/{row.n_others}",
            f"{_fmt(row.mean_nothing)} / {_fmt(row.mean_others)}",
            "never" if row.threshold == float("inf") else f"{row.threshold:.3f}",
            _fmt(row.nothing_rejected),
            _fmt(row.others_kept),
        )
    return table


@contextmanager
def eval_progress(console: Console, *, enabled: bool = True) -> Iterator[tuple[Callback, Callback]]:
    """Two progress bars (ingest, questions) on ``console``; yields their ``(done, total)`` callbacks."""
    if not enabled or not console.is_terminal:  # a log or a pipe gets no bar (nor its blank line)

        def noop(done: int, total: int) -> None:
            return None

        yield noop, noop
        return
    with Progress(
        TextColumn("{task.description:<9}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        ingest = bar.add_task("ingest", total=None)
        questions = bar.add_task("questions", total=None)

        def on_ingest(done: int, total: int) -> None:
            bar.update(ingest, completed=done, total=total)

        def on_question(done: int, total: int) -> None:
            bar.update(questions, completed=done, total=total)

        yield on_ingest, on_question
