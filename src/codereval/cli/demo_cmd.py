"""`codereval demo`: evaluate the built-in mini benchmarks end to end, print the tables and write
the HTML report."""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.table import Table

# name -> (label, the toolchain commands it needs)
DEMO_BENCHMARKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mini-python": ("Python", ("python3",)),
    "mini-java": ("Java", ("java", "javac", "mvn")),
    "mini-coderujb": ("CoderUJB (Java, buggy and fixed versions)", ("java", "javac", "mvn")),
}


@click.command("demo")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("runs/demo"),
    show_default=True,
    help="Where the run directories go (re-running resumes them).",
)
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Parallel samples.")
@click.option(
    "--only",
    type=click.Choice(sorted(DEMO_BENCHMARKS)),
    multiple=True,
    help="Only this built-in benchmark (repeatable).",
)
@click.option("--k", "k_text", default="1,3", show_default=True, help="Values of k.")
@click.pass_context
def demo_command(
    ctx: click.Context, out: Path, jobs: int | None, only: tuple[str, ...], k_text: str
) -> None:
    """Evaluate the built-in mini benchmarks (Python, Java, CoderUJB) in the sandbox, score them,
    and write the HTML report (OUT/report.html).

    Each mini benchmark is a small, realistic project of our own with tasks at every runnable
    level (mini-coderujb: three bugs with buggy and fixed versions, and tasks of CoderUJB's five
    kinds), and a samples file of correct, wrong, crashing, slow and hostile generations
    (samples that call exit(0), fake the pass marker, fork-bomb, eat memory or write outside
    their workspace). Environments are built on first use and cached.

    \b
    Examples:
      codereval demo
      codereval demo --only mini-python --jobs 2
      codereval demo --only mini-coderujb
    """
    from codereval.api import score as score_run
    from codereval.cli.evaluate_cmd import evaluate_command
    from codereval.report.html import REPORT_CI, write_report
    from codereval.report.table import print_wide, render_scoreboards
    from codereval.scoring.metrics import parse_ks, score
    from codereval.scoring.scores import load_scored_input

    chosen = list(only) or list(DEMO_BENCHMARKS)
    runs: list[tuple[str, Path]] = []
    for name in chosen:
        label, tools = DEMO_BENCHMARKS[name]
        missing = [tool for tool in tools if shutil.which(tool) is None]
        if missing:
            click.echo(f"skipping {name}: {', '.join(missing)} not installed", err=True)
            continue
        click.secho(f"\n== {name}: the built-in {label} mini benchmark ==", bold=True)
        run_dir = out / name
        ctx.invoke(evaluate_command, benchmark=name, run_dir=run_dir, jobs=jobs)
        runs.append((name, run_dir))
    if not runs:
        raise click.ClickException("no demo benchmark could run here (see the lines above)")
    ks = parse_ks(k_text)
    boards = []
    for name, run_dir in runs:
        item = load_scored_input(run_dir, label=name)
        boards.append(score(item.tasks, item.outcomes, ks=ks, label=name))
    click.echo()
    print_wide(render_scoreboards(boards))
    kinds = [_kinds_table(name, run_dir) for name, run_dir in runs]
    click.echo()
    for table in kinds:
        print_wide(table)
    _print_family_metrics(runs, ks)
    click.echo(
        f"\nOutcomes, with the isolation used and their provenance, are in "
        f"{out}/<benchmark>/outcomes.jsonl."
    )
    report = out / "report.html"
    write_report(
        report,
        [score_run(run_dir, k=ks, ci=REPORT_CI, label=name) for name, run_dir in runs],
        title="codereval demo",
    )
    click.echo(f"HTML report (plots, every sample of every task): {report}")


def _print_family_metrics(runs: list[tuple[str, Path]], ks: Sequence[int]) -> None:
    """Each family's own metrics for the runs that hold its tasks (CoderUJB: pass@k by level,
    trigger and coverage rates, DD's F1; its pass@k alone mixes five kinds of task)."""
    from codereval.benchmarks import families
    from codereval.report.table import print_wide
    from codereval.scoring.scores import family_sections, load_scored_input

    for name, run_dir in runs:
        item = load_scored_input(run_dir, label=name)
        sections = family_sections(item, ks=tuple(ks))
        for family in families():
            section = sections.get(family.name)
            if section is None:
                continue
            click.echo()
            for table in family.score_tables([name], [section], ks):
                table.title = f"{name}: {table.title}"
                print_wide(table)
            for note in family.score_notes([name], [section]):
                click.echo(f"note: {note}")


def _kinds_table(name: str, run_dir: Path) -> Table:
    """Verdicts by the kind of sample (each built-in sample says what it is meant to be)."""
    import json

    from rich.table import Table

    from codereval.benchmarks import builtin_dir
    from codereval.scoring.scores import load_scored_input

    kind_of: dict[tuple[str, int], str] = {}
    samples_file = builtin_dir(name.replace("-", "_")) / "samples.jsonl"
    for line in samples_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            kind_of[(row["task_id"], int(row["index"]))] = str(row.get("label") or row["model"])
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for outcome in load_scored_input(run_dir).outcomes:
        kind = kind_of.get((outcome.task_id, outcome.sample_index), "?")
        by_kind[kind][outcome.verdict.value] += 1
    table = Table(title=f"{name}: verdicts by kind of sample", title_justify="left")
    table.add_column("sample kind", style="bold")
    table.add_column("samples", justify="right")
    table.add_column("passed", justify="right")
    table.add_column("verdicts")
    for kind, counts in sorted(by_kind.items()):
        verdicts = ", ".join(f"{v} {n}" for v, n in counts.most_common())
        table.add_row(kind, str(sum(counts.values())), str(counts.get("passed", 0)), verdicts)
    return table


def register(app: click.Group) -> None:
    app.add_command(demo_command)
