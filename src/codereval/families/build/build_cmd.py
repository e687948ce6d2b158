"""`codereval build python REPO --commit C --out DIR`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from codereval.errors import UserError

if TYPE_CHECKING:
    from codereval.families.build.pipeline import TaskCheck


@click.group(name="build")
def build_command() -> None:
    """Build a CoderEval-style benchmark from a repository and its own test suite.

    \b
    Examples:
      codereval build python ./attrs --commit 24.2.0 --out bench/attrs --since 2024-01-01
      codereval evaluate --prepared bench/attrs --reference
      codereval build java-tests bench/codereval-java --project jwtk/jjwt
    """


@build_command.command(name="python")
@click.argument("repo", type=click.Path(path_type=Path))
@click.option("--commit", required=True, help="The commit (or tag, branch) to build from.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="The benchmark directory to write (must not exist).")
@click.option("--name", default="", help="The project as owner/repo (default: from origin).")
@click.option("--since", default="", metavar="YYYY-MM-DD",
              help="Only functions with a line changed on or after this date (git blame).")
@click.option("--python", "python", default="3.11", show_default=True,
              help="The project's Python version.")
@click.option("--requirement", "requirements", multiple=True,
              help="Extra requirement for the project's environment (repeatable); `-e .`, "
                   "requirements*.txt and pytest are found or added.")
@click.option("--pytest-args", default="",
              help="Arguments for the suite, e.g. 'tests/ -k \"not slow\"'.")
@click.option("--min-statements", default=3, show_default=True,
              help="Statements a function needs besides its docstring.")
@click.option("--max-calls", default=20, show_default=True,
              help="Calls recorded per function.")
@click.option("--serializer", type=click.Choice(["pickle", "cloudpickle"]), default="pickle",
              show_default=True,
              help="How calls are recorded: cloudpickle (installed into the project's "
                   "environment) also holds lambdas and local functions.")
@click.option("--max-tasks", type=int, default=None, help="Keep the first N functions selected.")
@click.option("--mutants", default=12, show_default=True, help="Mutants per task, for strength.")
@click.option("--min-kill", default=0.5, show_default=True,
              help="Share of mutants a test must kill; below it the task is weak.")
@click.option("--include-weak", is_flag=True, help="Keep weak tasks (marked in checks.jsonl).")
@click.option("--suite-timeout", default=900.0, show_default=True,
              help="Seconds the recorded suite may take.")
@click.option("--timeout", default=20.0, show_default=True, help="Seconds per replay.")
@click.option("--jobs", default=2, show_default=True, help="Replays run in parallel.")
@click.option("--sandbox", default="auto", show_default=True, help="auto, bwrap or rlimit.")
@click.option("--keep-work", is_flag=True,
              help="Keep the recorded calls and the validation run in OUT/.work.")
@click.option("--env-root", type=click.Path(path_type=Path), default=None,
              help="Where project environments are cached.")
def build_python_command(
    repo: Path, commit: str, out: Path, name: str, since: str, python: str,
    requirements: tuple[str, ...], pytest_args: str, min_statements: int, max_calls: int,
    serializer: str, max_tasks: int | None, mutants: int, min_kill: float, include_weak: bool,
    suite_timeout: float, timeout: float, jobs: int, sandbox: str, keep_work: bool,
    env_root: Path | None,
) -> None:
    """Tasks from the functions of a Python repository, tested by replaying the calls its own
    test suite makes to them (recorded in the sandbox), validated by the reference (three
    replays) and by mutants.

    \b
    Example:
      codereval build python ./attrs --commit 24.2.0 --out bench/attrs --since 2024-01-01
    """
    import shlex

    from codereval.families.build.pipeline import BuildOptions, build_python

    if not 0.0 <= min_kill <= 1.0:
        raise UserError(f"--min-kill {min_kill} is not a share", hint="give 0 to 1, e.g. 0.5")
    if sandbox == "none":
        raise UserError("build runs the project's suite: it needs a sandbox",
                        hint="use --sandbox auto, bwrap or rlimit")
    options = BuildOptions(
        repo=repo, commit=commit, out=out, name=name, since=since, python=python,
        requirements=requirements, pytest_args=tuple(shlex.split(pytest_args)),
        min_statements=min_statements, max_calls=max_calls, serializer=serializer,
        max_tasks=max_tasks,
        mutants=mutants, min_kill=min_kill, include_weak=include_weak,
        suite_timeout=suite_timeout, timeout=timeout, jobs=jobs, sandbox=sandbox,
        env_root=env_root, keep_work=keep_work, progress=True,
    )  # fmt: skip
    report = build_python(options, say=lambda text: click.echo(f"build: {text}", err=True))
    suite = report.suite
    click.echo(
        f"{report.project} at {report.commit[:12]}: {report.candidates} functions selected, "
        f"{sum(1 for c in report.checks if c.calls or c.dropped)} reached by the suite "
        f"(pytest exit {suite.get('exit')})"
    )
    for status in ("ok", "weak", "flaky", "broken", "unrecorded", "unreached"):
        click.echo(f"  {status:<10} {report.count(status)}")
    click.echo(
        f"{report.kept} tasks written to {report.out} in {report.seconds:.0f} s "
        f"(checks.jsonl says why each function is in or out)"
    )


@build_command.command(name="java-tests")
@click.argument("prepared", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Where the tests go (default: PREPARED/tests, where `evaluate --prepared` "
                   "finds them).")
@click.option("--project", "projects", multiple=True,
              help="Only this project's tasks (owner/repo; repeatable).")
@click.option("--task", "tasks", multiple=True, help="Only this task (repeatable).")
@click.option("--max-calls", default=20, show_default=True, help="Calls recorded per method.")
@click.option("--mutants", default=12, show_default=True, help="Mutants per task, for strength.")
@click.option("--min-kill", default=0.5, show_default=True,
              help="Share of mutants a test must kill; below it the task is weak.")
@click.option("--include-weak", is_flag=True, help="Keep weak tasks' tests (marked in checks).")
@click.option("--suite-timeout", default=1800.0, show_default=True,
              help="Seconds each module's recorded suite may take.")
@click.option("--timeout", default=30.0, show_default=True, help="Seconds per replay.")
@click.option("--jobs", default=2, show_default=True, help="Replays run in parallel.")
@click.option("--sandbox", default="auto", show_default=True, help="auto, bwrap or rlimit.")
@click.option("--keep-work", is_flag=True,
              help="Keep the recorded calls, suite logs and validation run in OUT/.work.")
@click.option("--force", is_flag=True, help="Record again over an existing OUT.")
@click.option("--update", is_flag=True,
              help="Replace only the --project(s) named in an existing OUT, keep the rest.")
@click.option("--generate/--no-generate", default=True, show_default=True,
              help="For a method no test calls, calls from generated inputs (by parameter "
                   "type), checked like recorded ones; checks.jsonl says which.")
@click.option("--edge-inputs", is_flag=True,
              help="Generated inputs include empty values, negatives and calls that "
                   "throw: stronger tests, further from the hand-written official ones.")
@click.option("--env-root", type=click.Path(path_type=Path), default=None,
              help="Where project environments are cached.")
def build_java_tests_command(
    prepared: Path, out: Path | None, projects: tuple[str, ...], tasks: tuple[str, ...],
    max_calls: int, mutants: int, min_kill: float, include_weak: bool, suite_timeout: float,
    timeout: float, jobs: int, sandbox: str, keep_work: bool, force: bool, update: bool,
    generate: bool, edge_inputs: bool, env_root: Path | None,
) -> None:
    """Tests for a prepared Java benchmark's tasks (CoderEval-Java's were never published),
    recorded from the calls each project's own JUnit suite makes to the tasks' methods (a Java
    agent, in the sandbox), replayed by the reference three times and checked with mutants.

    \b
    Example:
      codereval prepare codereval-java --results R --prompts P --checkouts C --out bench
      codereval build java-tests bench
      codereval evaluate --prepared bench --samples samples.jsonl --out run
    """
    from codereval.families.build.java_tests import (
        STATUSES,
        JavaTestsOptions,
        build_java_tests,
    )

    if sandbox == "none":
        raise UserError("java-tests runs the projects' suites: it needs a sandbox",
                        hint="use --sandbox auto, bwrap or rlimit")
    report = build_java_tests(JavaTestsOptions(
        prepared=prepared, out=out, projects=projects, tasks=tasks, max_calls=max_calls,
        mutants=mutants, min_kill=min_kill, include_weak=include_weak,
        suite_timeout=suite_timeout, timeout=timeout, jobs=jobs, sandbox=sandbox,
        env_root=env_root, keep_work=keep_work, force=force, update=update, generate=generate,
        edge_inputs=edge_inputs, progress=True))
    reached = sum(1 for c in report.checks if c.status not in ("unreached",))
    click.echo(f"{len(report.checks)} tasks, {reached} reached by their project's suite")
    for status in STATUSES:
        generated = sum(1 for c in report.checks if c.status == status
                        and c.source == "generated")
        note = f" ({generated} from generated inputs)" if generated else ""
        click.echo(f"  {status:<10} {report.count(status)}{note}")
    _per_project(report.checks, STATUSES)
    click.echo(f"{report.kept} tests written to {report.out} in {report.seconds:.0f} s "
               f"(checks.jsonl says why each task has a test or not)")


def _per_project(checks: Sequence[TaskCheck], statuses: Sequence[str]) -> None:
    """The statuses per project, "ok" split by where the calls came from."""
    from rich.console import Console
    from rich.table import Table

    projects = sorted({c.project for c in checks})
    if len(projects) < 2:
        return
    table = Table(title="tasks per project (ok: from the suite + from generated inputs)",
                  title_justify="left")
    for name in ("project", "tasks", *statuses):
        table.add_column(name, justify="left" if name == "project" else "right")
    for project in projects:
        mine = [c for c in checks if c.project == project]
        cells = []
        for status in statuses:
            count = sum(1 for c in mine if c.status == status)
            generated = sum(1 for c in mine if c.status == status and c.source == "generated")
            cells.append(f"{count - generated}+{generated}" if status == "ok" and generated
                         else str(count))
        table.add_row(project, str(len(mine)), *cells)
    Console(width=None if Console().is_terminal else 120).print(table)


__all__ = ["build_command"]
