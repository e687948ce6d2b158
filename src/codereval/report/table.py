"""Terminal tables for scores and task lists, side by side when several runs are compared."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from codereval.benchmarks.lineup import ASPECTS, LineUp
from codereval.model import Task
from codereval.scoring.metrics import GroupScore, Scoreboard


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _cell(group: GroupScore, k: int) -> str:
    text = _fmt(group.pass_at.get(k))
    if group.ci and k in group.ci:
        low, high = group.ci[k]
        text += f" [{low:.1f}, {high:.1f}]"
    return text


def _rows(board: Scoreboard, *, by_project: bool) -> list[tuple[str, GroupScore | None]]:
    rows: list[tuple[str, GroupScore | None]] = [("all", board.overall)]
    for group in board.levels:
        rows.append((group.name, group))
    if board.standalone or board.non_standalone:
        rows.append(("standalone", board.standalone))
        rows.append(("non_standalone", board.non_standalone))
    if by_project:
        for group in board.projects:
            rows.append((f"project {group.name}", group))
    return rows


def render_scoreboards(
    boards: Sequence[Scoreboard], *, by_project: bool = False, extra: Sequence[Table] = ()
) -> Group:
    """Pass@k per group (rows) for each scoreboard (column groups), then verdict counts."""
    ks = boards[0].ks
    conventions = sorted({b.convention for b in boards})
    title = f"pass@k (%) — {', '.join(conventions)} convention"
    single = len(boards) == 1
    if single and boards[0].label:
        title = f"{boards[0].label}: {title}"
    table = Table(title=title, title_justify="left", show_lines=False)
    names: list[str] = []
    lookup: list[dict[str, GroupScore | None]] = []
    for board in boards:
        rows = dict(_rows(board, by_project=by_project))
        lookup.append(rows)
        names.extend(name for name in rows if name not in names)
    # One "tasks" column when every input covers the same tasks per group, else one each.
    shared_counts = all(
        {(n, g.tasks if g else None) for n, g in rows.items()}
        == {(n, g.tasks if g else None) for n, g in lookup[0].items()}
        for rows in lookup
    )
    table.add_column("group", style="bold")
    if shared_counts:
        table.add_column("tasks", justify="right", style="dim")
    for board in boards:
        head = "" if single else f"{board.label}\n"
        if not shared_counts:
            table.add_column(f"{head}tasks", justify="right", style="dim")
        for k in ks:
            table.add_column(f"{head}pass@{k}", justify="right")
    first_project = next((n for n in names if n.startswith("project ")), None)
    for index, name in enumerate(names):
        if index == 1 or name in ("standalone", first_project):
            table.add_section()
        cells = [name]
        if shared_counts:
            group0 = lookup[0].get(name)
            cells.append(str(group0.tasks) if group0 else "")
        for rows in lookup:
            group = rows.get(name)
            if not shared_counts:
                cells.append(str(group.tasks) if group else "")
            cells.extend(_cell(group, k) if group else "" for k in ks)
        table.add_row(*cells)

    verdicts = Table(title="verdicts (samples)", title_justify="left")
    verdicts.add_column("verdict", style="bold")
    for board in boards:
        verdicts.add_column(board.label, justify="right")
    for verdict in boards[0].verdicts:
        counts = [board.verdicts.get(verdict, 0) for board in boards]
        if any(counts):
            verdicts.add_row(verdict, *(str(c) for c in counts))

    notes: list[Text] = []
    for convention_note in dict.fromkeys(board.convention_note for board in boards):
        notes.append(Text(convention_note, style="italic"))
    for board in boards:
        prefix = f"{board.label}: " if len(boards) > 1 else ""
        for note in board.notes:
            notes.append(Text(f"{prefix}note: {note}", style="yellow"))
    return Group(table, *extra, verdicts, *notes)


def render_tasks(tasks: Sequence[Task]) -> Table:
    table = Table(title=f"{len(tasks)} task(s)", title_justify="left")
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("project")
    table.add_column("name", style="bold")
    table.add_column("level" if not any(t.ujb for t in tasks) else "kind / bug")
    for task in tasks:
        if task.ujb is not None:
            # CoderUJB tasks have no runnable level; their kind and bug say where they live.
            where = f"{task.ujb.kind.value} {task.ujb.project}-{task.ujb.bug_id}"
            table.add_row(task.task_id, task.project, task.name, where)
            continue
        table.add_row(
            task.task_id, task.project, task.name, task.level.value if task.level else "—"
        )
    return table


def render_line_up(line: LineUp, *, shown: int = 10) -> tuple[Table, list[Text]]:
    """A line-up's counts per group, then (as lines to wrap) what one side only holds and
    what differs."""
    table = Table(title="line-up: ours against theirs", title_justify="left")
    for column in ("kind", "ours", "theirs", "paired", "same id", "only ours", "only theirs"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for aspect in ASPECTS:
        table.add_column(f"same {aspect}", justify="right")
    for group in line.groups:
        paired = len(group.pairs)
        table.add_row(
            group.group,
            str(group.ours),
            str(group.theirs),
            str(paired),
            str(sum(p.same_id for p in group.pairs)),
            str(len(group.only_ours)),
            str(len(group.only_theirs)),
            *(f"{group.same(aspect)}/{paired}" for aspect in ASPECTS),
        )
    parts: list[Text] = []
    for group in line.groups:
        differing = [f"{p.task}: {', '.join(p.differs)}" for p in group.pairs if p.differs]
        for title, items in (
            ("only ours", group.only_ours),
            ("only theirs", group.only_theirs),
            ("differ", differing),
        ):
            if not items:
                continue
            listed = "; ".join(items[:shown])
            more = (
                f" … and {len(items) - shown} more (--json lists all)" if len(items) > shown else ""
            )
            parts.append(Text(f"{group.group} {title}: {listed}{more}"))
    if line.not_compared:
        parts.append(
            Text(f"not compared (one side only): {', '.join(line.not_compared)}", style="yellow")
        )
    if line.projects_left_out:
        parts.append(
            Text(
                f"projects left out (one side only): {', '.join(line.projects_left_out)}",
                style="yellow",
            )
        )
    return table, parts


def print_wide(renderable: Table | Group) -> None:
    """Print without squeezing columns: widen the console to what the tables need."""
    console = Console()
    needed = console.measure(renderable, options=console.options.update_width(400)).maximum
    if needed > console.width:
        console = Console(width=needed)
    console.print(renderable)
