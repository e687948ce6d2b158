"""`codereval compare`: how far our verdicts agree with the official platform's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from codereval.errors import UserError
from codereval.families.codereval.causes import causes_table

if TYPE_CHECKING:

    from codereval.families.codereval.agreement import Agreement


@click.command("compare")
@click.argument("pairs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--gold",
    "gold_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="gold.jsonl from `evaluate --reference`: tasks it calls broken are left out.",
)
@click.option("--details", is_flag=True, help="List every disagreement with its evidence.")
@click.option(
    "--recheck",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Re-run each disagreeing sample N times (the run's own options): a sample whose "
    "verdict changes is nondeterministic.",
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Parallel samples for --recheck.")
@click.option(
    "--min-agreement",
    type=click.FloatRange(0, 100),
    default=None,
    help="Exit 1 when a model's agreement (percent) is below this.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def compare_command(
    pairs: tuple[Path, ...],
    gold_path: Path | None,
    details: bool,
    recheck: int,
    jobs: int,
    min_agreement: float | None,
    as_json: bool,
) -> None:
    """Compare runs with official result files: RUN OFFICIAL_OUT [RUN OFFICIAL_OUT ...].

    Each RUN is a run directory made by `codereval evaluate --samples OFFICIAL_OUT`; each
    OFFICIAL_OUT an official CoderEval result file with its is_pass verdicts. Prints, per model,
    the samples compared, the agreement, the 2x2 table, and every disagreement's cause
    (never-called test, path-bound test, network, missing package, Python version, timeout,
    ... or unexplained). For CoderEval-Java official files (no tests were ever published) it
    compares the compile stage instead: ours compile_error vs compiled, theirs "compile error".

    \b
    Examples:
      codereval compare runs/chatgpt results/python/ChatGPT/Raw_Input.jsonl_out.jsonl
      codereval compare runs/chatgpt ChatGPT/Raw_Input.jsonl_out.jsonl \\
          runs/codegen CodeGen/Raw_Input.jsonl_out.jsonl --gold runs/gold/gold.jsonl \\
          --recheck 5 --details
    """
    from codereval.families.codereval.agreement import compare_paths
    from codereval.scoring.scores import dump_json

    if len(pairs) % 2:
        raise UserError(
            f"got {len(pairs)} path(s); give pairs of RUN OFFICIAL_OUT",
            hint="e.g. codereval compare runs/chatgpt ChatGPT/Raw_Input.jsonl_out.jsonl",
        )
    if gold_path is not None and not gold_path.is_file():
        raise UserError(f"gold file not found: {gold_path}",
                        hint="pass the gold.jsonl that `codereval evaluate --reference` wrote")
    if _java_pairs(pairs):
        # CoderEval-Java: no official tests were published, so the verdicts compared are the
        # compile stage's (ours: compile_error or compiled; theirs: "compile error").
        from codereval.families.codereval.compare_java import compare_java

        compare_java(pairs, gold_path=gold_path, details=details, min_agreement=min_agreement,
                     as_json=as_json)
        return
    results = [
        compare_paths(pairs[i], pairs[i + 1], gold_path=gold_path, recheck_times=recheck,
                      jobs=jobs)
        for i in range(0, len(pairs), 2)
    ]
    if as_json:
        click.echo(dump_json([r.model_dump(mode="json") for r in results]))
    else:
        _print(results, details=details)
    if min_agreement is not None:
        low = [r for r in results if r.agreement < min_agreement]
        if low:
            click.echo(
                "below --min-agreement "
                + ", ".join(f"{r.label} {r.agreement:.2f}%" for r in low),
                err=True,
            )
            raise SystemExit(1)


def _java_pairs(pairs: tuple[Path, ...]) -> bool:
    """True when every official file is a Java one; UserError when Java and Python mix."""
    from codereval.families.codereval.agreement import is_java_results

    kinds = {is_java_results(pairs[i + 1]) for i in range(0, len(pairs), 2)
             if pairs[i + 1].is_file()}
    if len(kinds) > 1:
        raise UserError("give either Java or Python official result files, not both")
    return kinds == {True}


def _print(results: list[Agreement], *, details: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    # Piped output (a file, a paper's appendix) gets room for every column.
    console = Console(width=None if Console().is_terminal else 120)
    table = Table(title="Agreement with the official verdicts", title_justify="left",
                  caption="pass/fail columns: the official verdict, then ours",
                  caption_justify="left")
    for name in ("model", "samples", "agree", "pass pass", "fail fail", "pass fail",
                 "fail pass"):
        if name == "model":
            table.add_column(name, min_width=max(len(r.label) for r in results))
        else:
            table.add_column(name, justify="right")
    for r in results:
        table.add_row(r.label, str(r.compared), f"{r.agreement:.2f}%", str(r.both_pass),
                      str(r.both_fail), str(r.official_only), str(r.ours_only))
    console.print(table)
    for r in results:
        notes = []
        if r.excluded:
            notes.append(f"{r.excluded} sample(s) of {len(r.excluded_tasks)} broken task(s) "
                         f"left out (with them: {r.agreement_with_broken:.2f}% agree)")
        if r.infra_errors:
            notes.append(f"{r.infra_errors} infra_error outcome(s) not comparable")
        if r.not_in_run:
            notes.append(f"{r.not_in_run} official sample(s) not in {r.run}")
        if notes:
            click.echo(f"{r.label}: " + "; ".join(notes))
    by_cause = causes_table(results)
    if by_cause is not None:
        console.print(by_cause)
    if details:
        for r in results:
            for d in r.disagreements:
                official = "pass" if d.official_pass else f"fail (rc {d.official_return_code})"
                click.echo(f"{r.label} {d.task_id}#{d.sample_index}: ours {d.ours.value}, "
                           f"official {official} — {d.cause}"
                           + (f": {d.evidence}" if d.evidence else ""))


def register(app: click.Group) -> None:
    app.add_command(compare_command)
