"""`codereval compare` for CoderEval-Java: agreement with the official compile verdicts."""

from __future__ import annotations

from pathlib import Path

import click

from codereval.families.codereval.agreement import (
    CompileAgreement,
    JavaPassAgreement,
    compare_compile_paths,
    compare_java_pass_paths,
)
from codereval.families.codereval.causes import causes_table


def compare_java(
    pairs: tuple[Path, ...], *, gold_path: Path | None, details: bool,
    min_agreement: float | None, as_json: bool,
) -> None:
    from codereval.scoring.scores import dump_json

    paired = [(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)]
    results = compare_compile_paths(paired, gold_path=gold_path)
    # With recorded tests (`build java-tests`), the official is_pass too, on the tasks that
    # have one; the compile agreement stays the measure for the others.
    passing = [r for r in compare_java_pass_paths(paired, [r.label for r in results])
               if r.tasks]
    if as_json:
        click.echo(dump_json([r.model_dump(mode="json") for r in results]
                             + [r.model_dump(mode="json") | {"kind": "pass"} for r in passing]))
    else:
        _print(results, details=details)
        if passing:
            _print_pass(passing, details=details)
    if min_agreement is not None:
        low = [f"{r.label} {r.agreement:.2f}%" for r in results if r.agreement < min_agreement]
        low += [f"{r.label} (pass) {r.agreement:.2f}%" for r in passing
                if r.agreement < min_agreement]
        if low:
            click.echo("below --min-agreement " + ", ".join(low), err=True)
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


def _print_pass(results: list[JavaPassAgreement], *, details: bool) -> None:
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if Console().is_terminal else 120)
    table = Table(title="Pass agreement with the official is_pass (tasks with a recorded test)",
                  title_justify="left",
                  caption="pass/fail columns: the official verdict, then ours; official ran: "
                          "left out the tasks whose official test never ran to its end "
                          "(tasks, agreement); official checks: left out also the tasks whose "
                          "official test passed a body that computes nothing",
                  caption_justify="left")
    for name in ("model", "tasks", "samples", "agree", "pass pass", "fail fail", "pass fail",
                 "fail pass", "official ran", "official checks"):
        table.add_column(name, justify="left" if name == "model" else "right")
    for r in results:
        table.add_row(r.label, str(r.tasks), str(r.compared), f"{r.agreement:.2f}%",
                      str(r.both_pass), str(r.both_fail), str(r.official_only),
                      str(r.ours_only), f"{r.ran_tasks}: {r.ran_agreement:.2f}%",
                      f"{r.checked_tasks}: {r.checked_agreement:.2f}%")
    console.print(table)
    causes: Counter[str] = Counter()
    for r in results:
        causes.update(r.causes)
        if r.infra_errors:
            click.echo(f"{r.label}: {r.infra_errors} infra_error outcome(s) not comparable")
    for cause, count in causes.most_common():
        click.echo(f"  {count:>5}  {cause}")
    if details:
        for r in results:
            for d in r.disagreements:
                click.echo(f"{r.label} {d.task_id}#{d.sample_index}: ours {d.ours.value}, "
                           f"official {'pass' if d.official_pass else 'fail'} — {d.cause}"
                           + (f": {d.evidence}" if d.evidence else ""))
