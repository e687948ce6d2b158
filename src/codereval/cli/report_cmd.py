"""`codereval report`: the HTML report of one or more runs or result files."""

from __future__ import annotations

from pathlib import Path

import click

from codereval.cli.score_cmd import score_inputs, scoring_options


@click.command("report")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The HTML file to write (one self-contained file).",
)
@scoring_options
@click.option(
    "--ci",
    "bootstrap",
    type=click.IntRange(min=100),
    default=1000,
    show_default=True,
    help="Bootstrap resamples behind the 95% intervals (fixed seed).",
)
@click.option("--title", default="", help="The report's title (default: the models' labels).")
def report_command(
    inputs: tuple[Path, ...],
    out: Path,
    k_text: str,
    compat: bool,
    compat_n: int,
    benchmark_size: int | None,
    records: Path | None,
    gold: Path | None,
    bootstrap: int,
    title: str,
) -> None:
    """Write the HTML report of runs or result files: one self-contained file to open offline.

    Each INPUT is an official CoderEval result file (*_out.jsonl) or a run directory written by
    `codereval evaluate`, one per model (1 to 10 read well). The report has pass@k and Acc@k with
    95% bootstrap intervals (overall, per runnable level, standalone or not, per language, per
    project), plots (pass@k by level with interval bars, the verdict mix, the overlap of solved
    tasks), the paired comparison of every two inputs (difference in pass@k, paired bootstrap
    interval, p-value), and a page per task with every sample's code, its diff against the
    reference, verdict, stage, timings and output tails. `score --html` writes the same report.

    \b
    Examples:
      codereval report runs/gpt runs/llama -o report.html
      codereval report results/python/*/Raw_Input.jsonl_out.jsonl --compat -o paper.html
      codereval report runs/gpt --tasks CoderEval4Python.json --k 1,10 -o gpt.html
    """
    from codereval.report.html import write_report

    scores = score_inputs(
        inputs,
        k_text=k_text,
        compat=compat,
        compat_n=compat_n,
        benchmark_size=benchmark_size,
        records=records,
        gold=gold,
        bootstrap=bootstrap,
    )
    write_report(out, scores, title=title)
    click.echo(f"HTML report: {out}")


def register(app: click.Group) -> None:
    app.add_command(report_command)
