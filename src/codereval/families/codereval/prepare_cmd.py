"""`codereval prepare codereval-python|codereval-java`: a ready benchmark directory from public
material."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from codereval.errors import Interrupted, UserError

if TYPE_CHECKING:
    from codereval.families.codereval.prepare.codereval_python import PrepareReport

FAMILIES = ("codereval-python", "codereval-java")


@click.command("prepare")
@click.argument("family", type=click.Choice(FAMILIES))
@click.option("--records", type=click.Path(path_type=Path),
              help="The official records (CoderEval4Python.json; for Java, CoderEval4Java.json "
                   "is optional: without it each task's method is located in its project).")
@click.option("--results", type=click.Path(path_type=Path),
              help="Java: an official result file (Raw_Input.jsonl_out.jsonl): the task ids, "
                   "method names and levels.")
@click.option("--prompts", type=click.Path(path_type=Path),
              help="Java: an official prompt file (CEJavaRaw.jsonl): signatures and Javadoc.")
@click.option("--test-map", type=click.Path(path_type=Path),
              help="Official tests as one JSON object {task id: test file text}.")
@click.option("--image", type=click.Path(path_type=Path),
              help="The official Docker image tarball (`docker save` or `docker export` form, "
                   "read without Docker): tests and projects as the platform had them.")
@click.option("--image-tag", default=None, help="Which image of a multi-image tarball.")
@click.option("--repos-tree", type=click.Path(path_type=Path),
              help="An extracted official tree (the folder holding repos/, or repos/ itself).")
@click.option("--manifest", type=click.Path(path_type=Path), default=None,
              help="Projects manifest (git URL, commit, and the Python or Java build) [the one "
                   "shipped with codereval for the benchmark: its 43 Python or 10 Java "
                   "projects].")
@click.option("--checkouts", type=click.Path(path_type=Path), default=None,
              help="Folder of local project clones, <owner>---<repo> each, at any commit whose "
                   "history holds the manifest's (the pinned commit is what is prepared).")
@click.option("--fetch", is_flag=True,
              help="Allow network: clone missing projects from the manifest's git URLs.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="The benchmark directory to write.")
def prepare_command(
    family: str, records: Path | None, results: Path | None, prompts: Path | None,
    test_map: Path | None, image: Path | None,
    image_tag: str | None, repos_tree: Path | None, manifest: Path | None,
    checkouts: Path | None, fetch: bool, force: bool, out: Path,
) -> None:
    """Turn the official records, the official tests and the projects into a benchmark
    directory that `codereval evaluate --prepared DIR` runs.

    codereval-java has no official tests (never published): it takes --results and --prompts
    (and --records when you have them) and the projects; samples get compile verdicts.

    Tests come from exactly one of --test-map, --image or --repos-tree. Projects come from the
    image or tree when it holds them, else from --checkouts, else (only with --fetch) are
    cloned at the pinned commits. What is missing is listed in a table; nothing is guessed.

    \b
    Examples:
      codereval prepare codereval-python --records CoderEval4Python.json \\
          --test-map record_testcases_map_python.json --fetch --out bench/codereval-python
      codereval prepare codereval-python --records CoderEval4Python.json \\
          --image codereval-python.tar --out bench/codereval-python
      codereval evaluate --prepared bench/codereval-python --samples Raw_Input.jsonl \\
          --compat --out runs/chatgpt
      codereval prepare codereval-java --results ChatGPT/Raw_Input.jsonl_out.jsonl \\
          --prompts CEJavaRaw.jsonl --checkouts projects --out bench/codereval-java
    """
    from rich.console import Console

    if family == "codereval-java":
        _prepare_java(records=records, results=results, prompts=prompts, manifest=manifest,
                      checkouts=checkouts, fetch=fetch, force=force, out=out,
                      tests=(test_map, image, repos_tree))
        return
    if records is None:
        raise UserError("--records is required for codereval-python",
                        hint="pass CoderEval4Python.json")

    from codereval.families.codereval.prepare.codereval_python import (
        TestsSource,
        prepare_codereval_python,
    )

    given = [p for p in (test_map, image, repos_tree) if p is not None]
    if len(given) != 1:
        raise UserError("give exactly one source of official tests",
                        hint="--test-map MAP.json, --image IMAGE.tar or --repos-tree DIR")
    for path, what in ((records, "records file"), (given[0], "tests source")):
        if not path.exists():
            raise UserError(f"{what} not found: {path}")
    if image_tag is not None and image is None:
        raise UserError("--image-tag goes with --image")
    err = Console(stderr=True)
    try:
        report = prepare_codereval_python(
            records=records,
            tests=TestsSource(test_map=test_map, image=image, tree=repos_tree,
                              image_tag=image_tag),
            out=out, manifest=manifest, checkouts=checkouts, fetch=fetch, force=force,
            progress=lambda message: err.print(f"[dim]{message}[/dim]"),
        )
    except KeyboardInterrupt:
        raise Interrupted("interrupted; nothing was written", hint="run it again") from None
    _print_report(report, out=out, ready="ready")


def _prepare_java(
    *, records: Path | None, results: Path | None, prompts: Path | None,
    manifest: Path | None, checkouts: Path | None, fetch: bool, force: bool, out: Path,
    tests: tuple[Path | None, ...],
) -> None:
    from rich.console import Console

    from codereval.families.codereval.prepare.codereval_java import prepare_codereval_java

    if any(t is not None for t in tests):
        raise UserError("codereval-java takes no tests source (its tests were never published)",
                        hint="drop --test-map/--image/--repos-tree")
    if results is None or prompts is None:
        raise UserError("codereval-java needs --results and --prompts",
                        hint="--results Raw_Input.jsonl_out.jsonl --prompts CEJavaRaw.jsonl")
    err = Console(stderr=True)
    try:
        report = prepare_codereval_java(
            results=results, prompts=prompts, records=records, out=out, manifest=manifest,
            checkouts=checkouts, fetch=fetch, force=force,
            progress=lambda message: err.print(f"[dim]{message}[/dim]"),
        )
    except KeyboardInterrupt:
        raise Interrupted("interrupted; nothing was written", hint="run it again") from None
    _print_report(report, out=out, ready="located")


def _print_report(report: PrepareReport, *, out: Path, ready: str) -> None:
    """The checks tables, the notes and what to run next; ``ready`` names the good state."""
    from rich.console import Console

    from codereval.families.codereval.prepare.checks import problems_table, summary_table

    console = Console()
    console.print(summary_table(report.checks))
    problems = problems_table(report.checks)
    if problems is not None:
        console.print(problems)
    for note in report.notes:
        click.echo(f"note: {note}")
    click.echo(f"prepared {report.tasks} tasks in {out}: {report.ready} {ready}, "
               f"{report.tasks - report.ready} with problems (see {out / 'checks.jsonl'})")
    click.echo(f"next: codereval evaluate --prepared {out} --samples SAMPLES --out RUN")
    sys.stdout.flush()


def prepare_commands() -> tuple[click.Command, ...]:
    """``prepare codereval-python`` and ``prepare codereval-java``: the command above with its
    family fixed, so that ``prepare`` can hold other families' subcommands too."""

    def subcommand(family: str) -> click.Command:
        def callback(**options: object) -> None:
            assert prepare_command.callback is not None
            prepare_command.callback(family=family, **options)

        return click.Command(family, callback=callback, help=prepare_command.help,
                             params=[p for p in prepare_command.params if p.name != "family"])

    return tuple(subcommand(family) for family in FAMILIES)
