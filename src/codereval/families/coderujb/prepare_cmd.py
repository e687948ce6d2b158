"""`codereval prepare defects4j`: Defects4J's bugs rebuilt from public git, checked, and made
into CoderUJB tasks."""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from codereval.errors import Interrupted, UserError

if TYPE_CHECKING:
    from codereval.families.coderujb.rebuild.prepare import BugReport


@click.command("defects4j")
@click.option("--defects4j", "defects4j", required=True,
              type=click.Path(path_type=Path, exists=True, file_okay=False),
              help="A clone of rjust/defects4j (its framework/projects metadata is read; its "
                   "archives and its `defects4j` command are not needed).")
@click.option("--checkouts", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Folder of the projects' git clones, each named by Defects4J's id (Lang), "
                   "by its repository (commons-lang) or owner---repo; bare clones are fine.")
@click.option("--fetch", is_flag=True,
              help="Clone the projects --checkouts lacks from their public repositories "
                   "(github.com, bare, whole history) into --checkouts.")
@click.option("--projects", default=None,
              help="Comma-separated Defects4J projects [Lang, Math, Time, Cli, Codec, Csv, Gson, "
                   "JxPath, Collections, Compress, JacksonCore].")
@click.option("--bugs", default=None,
              help="Comma-separated bugs instead of whole projects (Lang-1,Math-5).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="At most this many bugs per project (the first by id).")
@click.option("--issues", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              default=None,
              help="CoderUJB's bug_report.json (the issue of each bug): needed for issue-based "
                   "test generation (ITG) tasks.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Bugs built and checked at once.")
@click.option("--sandbox", type=click.Choice(["auto", "bwrap", "rlimit", "none"]),
              default="auto", show_default=True, help="Isolation of the trigger-test runs.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="The benchmark directory to write.")
def defects4j_command(defects4j: Path, checkouts: Path, fetch: bool, projects: str | None,
                      bugs: str | None,
                      limit: int | None, issues: Path | None, jobs: int, sandbox: str,
                      force: bool, out: Path) -> None:
    """Rebuild Defects4J's bugs from its public metadata and the projects' git histories,
    check each against its trigger tests, and write CoderUJB's tasks of the reproduced ones.

    A bug's fixed version is its fixed revision; its buggy version is that tree with
    Defects4J's source patch applied (the fixed version's tests kept). Both are built with
    the project's pom (its dependencies) by javac --release 8 on Java 17 (--release 7 where 8
    rejects the sources, Eclipse's compiler at 1.4 for pre-Java 5 ones). A bug is
    reproduced when the buggy version fails exactly its trigger tests and the fixed version
    passes them; one that is not is listed with the reason and makes no task.

    \b
    Examples:
      codereval prepare defects4j --defects4j defects4j --checkouts repos \\
          --projects Lang,Cli --issues bug_report.json --out bench/d4j
      codereval prepare defects4j --defects4j defects4j --checkouts repos --bugs Lang-1 \\
          --fetch --out bench/lang1
      codereval evaluate --tasks bench/d4j/tasks.jsonl --projects bench/d4j/projects.toml \\
          --reference --timeout 300 --out runs/d4j-gold
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from codereval.environments.python import default_root
    from codereval.families.coderujb.rebuild.prepare import (
        DEFAULT_PROJECTS,
        prepare_defects4j,
        select_bugs,
    )
    from codereval.families.coderujb.rebuild.tasks import load_issue_reports
    from codereval.runners.base import RunContext
    from codereval.sandbox import get_sandbox
    from codereval.sandbox.base import Limits

    chosen_projects = _names(projects) or list(DEFAULT_PROJECTS)
    chosen_bugs = _names(bugs)
    if bugs is not None and projects is not None:
        raise UserError("give --projects or --bugs, not both")
    if not fetch and not checkouts.is_dir():
        raise UserError(f"--checkouts {checkouts} is not a folder",
                        hint="give the folder of the projects' clones, or --fetch to clone them")
    reports = load_issue_reports(issues) if issues is not None else None
    total = len(select_bugs(defects4j, chosen_projects, chosen_bugs, limit))
    root = default_root()
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    box = get_sandbox(sandbox)

    def ctx_for(manifest: Path) -> RunContext:
        return RunContext(sandbox=box, limits=Limits(wall_time=60.0),
                          work_root=Path(tempfile.mkdtemp(prefix="d4j-", dir=work)),
                          env_root=root, projects_dir=manifest)

    err = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task("rebuilding bugs", total=total)

        def advance(report: BugReport) -> None:
            progress.advance(bar)
            if report.status != "reproduced":
                err.print(f"[dim]{report.bug}: {report.status.replace('_', ' ')}: "
                          f"{report.reason}[/dim]", highlight=False)

        try:
            result = prepare_defects4j(
                defects4j=defects4j, checkouts=checkouts, out=out, ctx_for=ctx_for,
                projects=chosen_projects, bugs=chosen_bugs, limit=limit, jobs=jobs,
                force=force, issues=reports, progress=advance, fetch=fetch,
                say=lambda line: err.print(f"[dim]{line}[/dim]", highlight=False))
        except KeyboardInterrupt:
            raise Interrupted("interrupted; nothing was written", hint="run it again") from None
    _print_summary(result.bugs, out=out, tasks=result.tasks, issues=issues is not None)


def _names(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def _print_summary(bugs: list[BugReport], out: Path, *, tasks: int, issues: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Defects4J bugs rebuilt")
    for column in ("project", "bugs", "repro.", "not repro.", "not built", "FCG", "CTG", "ITG",
                   "APR", "DD"):
        table.add_column(column, justify="left" if column == "project" else "right")
    projects = list(dict.fromkeys(b.project for b in bugs))
    for project in projects:
        mine = [b for b in bugs if b.project == project]
        status = Counter(b.status for b in mine)
        kinds: Counter[str] = Counter()
        for bug in mine:
            kinds.update(bug.tasks)
        table.add_row(project, str(len(mine)), str(status["reproduced"]),
                      str(status["not_reproduced"]), str(status["not_rebuilt"]),
                      *(str(kinds[k]) for k in ("fcg", "ctg", "itg", "apr", "dd")))
    Console().print(table)
    reproduced = sum(1 for b in bugs if b.status == "reproduced")
    click.echo(f"reproduced {reproduced} of {len(bugs)} bugs; {tasks} tasks in "
               f"{out / 'tasks.jsonl'} (why each bug is or is not used: {out / 'rebuild.jsonl'})")
    if not issues:
        click.echo("note: no --issues given, so no ITG tasks (CoderUJB's datasets/bug_report.json "
                   "holds the issue reports)")
    click.echo(f"next: codereval evaluate --tasks {out / 'tasks.jsonl'} --projects "
               f"{out / 'projects.toml'} --samples SAMPLES --out RUN")
    sys.stdout.flush()
