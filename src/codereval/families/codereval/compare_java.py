"""`codereval compare` for CoderEval-Java: agreement with the official compile verdicts."""

from __future__ import annotations

from pathlib import Path

import click

from codereval.families.codereval.agreement import CompileAgreement, compare_compile_paths
from codereval.families.codereval.causes import causes_table


def compare_java(
    pairs: tuple[Path, ...], *, gold_path: Path | None, details: bool,
    min_agreement: float | None, as_json: bool,
) -> None:
    from codereval.scoring.scores import dump_json

    results = compare_compile_paths(
        [(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)], gold_path=gold_path)
    if as_json:
        click.echo(dump_json([r.model_dump(mode="json") for r in results]))
    else:
        _print(results, details=details)
    if min_agreement is not None:
        low = [r for r in results if r.agreement < min_agreement]
        if low:
            click.echo("below --min-agreement "
                       + ", ".join(f"{r.label} {r.agreement:.2f}%" for r in low), err=True)
            raise SystemExit(1)


def _print(results: list[CompileAgreement], *, details: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if Console().is_terminal else 120)
    table = Table(title="Compile agreement with the official verdicts", title_justify="left",
                  caption="columns: the official verdict, then ours (ok = compiled, "
                          "err = compile error)", caption_justify="left")
    for name in ("model", "samples", "agree", "ok ok", "err err", "ok err", "err ok"):
        table.add_column(name, justify="left" if name == "model" else "right",
                         min_width=max(len(r.label) for r in results) if name == "model"
                         else None)
    for r in results:
        table.add_row(r.label, str(r.compared), f"{r.agreement:.2f}%", str(r.both_compiled),
                      str(r.both_error), str(r.ours_only), str(r.official_only))
    console.print(table)
    for r in results:
        if r.excluded:
            click.echo(f"{r.label}: {r.excluded} sample(s) of {len(r.excluded_tasks)} task(s) "
                       f"whose reference does not compile here left out; with them "
                       f"{r.agreement_with_broken:.2f}%")
        if r.not_compiled_by_us:
            reasons = "; ".join(f"{n} {why}" for why, n in r.not_compiled_reasons.items())
            click.echo(f"{r.label}: {r.not_compiled_by_us} sample(s) not compared ({reasons})")
        if r.not_in_run:
            click.echo(f"{r.label}: {r.not_in_run} official sample(s) not in {r.run}")
    by_cause = causes_table(results)
    if by_cause is not None:
        console.print(by_cause)
    if details:
        for r in results:
            for d in r.disagreements:
                click.echo(f"{r.label} {d.task_id}#{d.sample_index}: ours {d.ours}, official "
                           f"{d.official} — {d.cause}" + (f": {d.evidence}" if d.evidence else ""))
