"""`codereval tasks`: list the tasks of a records file, or show one in full."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from codereval.errors import UserError
from codereval.model import Level, Task

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


@click.command("tasks")
@click.argument("records", type=click.Path(path_type=Path))
@click.option(
    "--level",
    type=click.Choice([level.value for level in Level]),
    default=None,
    help="Only tasks at this runnable level.",
)
@click.option("--project", default=None, help="Only tasks of this project (owner/repo).")
@click.option(
    "--kind",
    default=None,
    help="CoderUJB: the task kind the dataset file holds (fcg, ctg, itg, apr, dd), when its "
    "columns do not say.",
)
@click.option("--show", "show_id", default=None, help="Print one task in full.")
@click.option(
    "--line-up",
    "line_up_with",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Line RECORDS up with another dataset (repeatable, e.g. one published file per kind): "
    "which tasks both hold, which one only, and whether the shared ones have the same "
    "function, tests, lines and prompt. Only projects both hold are compared.",
)
@click.option("--json", "as_json", is_flag=True, help="Print tasks (or the line-up) as JSON.")
def tasks_command(
    records: Path,
    level: str | None,
    project: str | None,
    kind: str | None,
    show_id: str | None,
    line_up_with: tuple[Path, ...],
    as_json: bool,
) -> None:
    """List CoderEval or CoderUJB tasks (id, project, name, level or kind), or show one.

    RECORDS is a CoderEval records file or a CoderUJB dataset (parquet, the artifact's
    task_*_bench_*.json, or JSON Lines); a CoderUJB file's kind is read from its columns.

    \b
    Examples:
      codereval tasks CoderEval4Python.json --level class_runnable
      codereval tasks CoderEval4Java.json --project protostuff/protostuff
      codereval tasks CoderEval4Python.json --show 62e60f43d76274f8a4026e28
      codereval tasks code_ujb_repair.parquet --project Lang
      codereval tasks task_testgen_bench_default.json --kind ctg --json
      codereval tasks rebuilt/tasks.jsonl --line-up code_ujb_repair.parquet
    """
    from codereval.benchmarks import read_tasks_file
    from codereval.report.table import print_wide, render_tasks

    _, tasks = read_tasks_file(records, kind=kind)
    if line_up_with:
        if show_id is not None:
            raise UserError("--show and --line-up do not go together", hint="use one of them")
        _line_up(tasks, line_up_with, project=project, as_json=as_json)
        return
    if show_id is not None:
        matches = [t for t in tasks if t.task_id == show_id]
        if not matches:
            raise UserError(
                f"no task {show_id!r} in {records}",
                hint="`codereval tasks FILE` lists the ids",
            )
        _show(matches[0])
        return
    chosen = [
        t
        for t in tasks
        if (level is None or (t.level is not None and t.level.value == level))
        and (project is None or t.project == project)
    ]
    if project is not None and not chosen and not any(t.project == project for t in tasks):
        known = sorted({t.project for t in tasks})
        raise UserError(f"no project {project!r} in {records}", hint=f"known: {', '.join(known)}")
    if as_json:
        for task in chosen:
            click.echo(task.to_json())
        return
    print_wide(render_tasks(chosen))


def _line_up(
    tasks: list[Task], others: tuple[Path, ...], *, project: str | None, as_json: bool
) -> None:
    from codereval.benchmarks import read_tasks_file
    from codereval.benchmarks.lineup import line_up
    from codereval.report.table import print_wide, render_line_up

    theirs = [task for other in others for task in read_tasks_file(other)[1]]
    if project is not None:
        tasks = [t for t in tasks if t.project == project]
        theirs = [t for t in theirs if t.project == project]
    line = line_up(tasks, theirs)
    if not line.groups:
        raise UserError(
            "the two sides share no kind of task in a common project",
            hint="line up files of the same benchmark (e.g. our apr.jsonl with the published "
            "code_ujb_repair.parquet)",
        )
    if as_json:
        click.echo(line.to_json())
        return
    from rich.console import Console

    table, notes = render_line_up(line)
    print_wide(table)
    console = Console()
    for note in notes:
        console.print(note)


def _show(task: Task) -> None:
    from rich.console import Console
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.table import Table

    from codereval.prompting.prompts import PromptVariant, build_prompt

    console = Console()
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    location = task.location
    facts.add_row("id", task.task_id)
    facts.add_row("name", task.name)
    if task.ujb is None:
        facts.add_row("level", task.level.value if task.level else "—")
    if location is not None:
        facts.add_row("project", location.project)
        facts.add_row("file", f"{location.file_path}:{location.lineno}-{location.end_lineno}")
        if location.class_name:
            facts.add_row("class", location.class_name)
    if task.test is not None:
        facts.add_row("test", f"{task.test.kind.value} {task.test.path}".strip())
    if task.ujb is not None:
        _show_ujb(task, console, facts)
        return
    console.print(Panel(facts, title=f"task {task.task_id}", title_align="left"))
    lexer = task.language.value if task.language.value in ("python", "java") else "text"
    for variant, title in (
        (PromptVariant.RAW, "prompt: original docstring"),
        (PromptVariant.HUMAN, "prompt: human label"),
    ):
        prompt = build_prompt(task, variant=variant).text
        console.print(Panel(prompt, title=title, title_align="left"))
    console.print(Panel(Syntax(task.reference, lexer), title="reference", title_align="left"))
    if task.oracle_context is not None:
        oracle = Table(title="oracle context", title_justify="left")
        oracle.add_column("type")
        oracle.add_column("tokens")
        for kind, tokens in task.oracle_context.tokens().items():
            oracle.add_row(kind, ", ".join(tokens) or "—")
        console.print(oracle)
    if task.all_context is not None:
        every = Table(title="all context", title_justify="left")
        every.add_column("scope")
        every.add_column("names")
        ctx = task.all_context
        for scope, names in (
            ("import", ctx.imports),
            ("file", ctx.file),
            ("class", ctx.class_),
            ("class_level", ctx.class_level),
        ):
            if names or scope != "class_level":
                every.add_row(scope, " ".join(names) or "—")
        console.print(every)


def _show_ujb(task: Task, console: Console, facts: Table) -> None:
    from rich.panel import Panel
    from rich.syntax import Syntax

    from codereval.prompting.prompts import PromptStyle, build_prompt

    spec = task.ujb
    assert spec is not None
    facts.add_row("kind", spec.kind.value)
    facts.add_row("bug", f"{spec.project}-{spec.bug_id}")
    if spec.test_methods:
        facts.add_row("tests", ", ".join(spec.test_methods))
    if spec.classes_under_test:
        facts.add_row("classes under test", ", ".join(spec.classes_under_test))
    if spec.issue is not None:
        facts.add_row("issue", spec.issue.title or spec.issue.body[:80])
    if spec.defective is not None:
        facts.add_row("defective", "yes" if spec.defective else "no")
    console.print(Panel(facts, title=f"task {task.task_id}", title_align="left"))
    for style in PromptStyle:
        prompt = build_prompt(task, style=style)
        console.print(Panel(prompt.text, title=f"prompt: {style.value}", title_align="left"))
    if spec.buggy_function and spec.kind.value == "apr":
        console.print(Panel(Syntax(spec.buggy_function, "java"), title="buggy", title_align="left"))
    console.print(Panel(Syntax(task.reference, "java"), title="reference", title_align="left"))


def register(app: click.Group) -> None:
    app.add_command(tasks_command)
