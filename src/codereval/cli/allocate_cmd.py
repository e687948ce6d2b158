"""`codereval allocate`: pass@k_π across languages from HumanEval-X run directories."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from codereval.errors import UserError

if TYPE_CHECKING:
    from codereval.model import Outcome, Task


def _read_run(run_dir: Path) -> tuple[list[Task], list[Outcome]]:
    from codereval.model import Outcome, Task
    from codereval.storage.jsonl import iter_jsonl

    for name in ("tasks.jsonl", "outcomes.jsonl"):
        if not (run_dir / name).is_file():
            raise UserError(f"{run_dir / name} not found",
                            hint="pass run directories written by `codereval evaluate --out`")
    tasks = [Task.model_validate(obj) for _, obj in iter_jsonl(run_dir / "tasks.jsonl")]
    outcomes = [Outcome.model_validate(obj) for _, obj in iter_jsonl(run_dir / "outcomes.jsonl")]
    return tasks, outcomes


@click.command("allocate")
@click.argument("runs", nargs=-1, required=True,
                type=click.Path(path_type=Path, file_okay=False))
@click.option("--k", "budget", default=10, show_default=True, help="Total budget of samples.")
@click.option("--strategy", "strategies", multiple=True,
              type=click.Choice(["best", "uniform", "weighted"]),
              help="Strategies to show (default: best and uniform, and weighted with --weights).")
@click.option("--weights", default="", help="Weights for the weighted strategy: python=2,cpp=1.")
def allocate_command(runs: tuple[Path, ...], budget: int, strategies: tuple[str, ...],
                     weights: str) -> None:
    """pass@k_π: a budget of k samples spread over languages (CodeGeeX eq. 7).

    Each RUN is a run directory of one HumanEval-X language (tasks.jsonl + outcomes.jsonl);
    problems are matched across languages by their number.

    \b
    Examples:
      codereval allocate runs/py runs/cpp runs/java runs/js runs/go --k 10
      codereval allocate runs/* --k 5 --strategy weighted --weights python=2,cpp=1
    """
    from codereval.scoring.allocation import (
        allocate,
        counts_from_outcomes,
        parse_weights,
        pass_at_k_pi,
    )

    tasks: list[Task] = []
    outcomes: list[Outcome] = []
    for run in runs:
        run_tasks, run_outcomes = _read_run(run)
        tasks += run_tasks
        outcomes += run_outcomes
    counts = counts_from_outcomes(tasks, outcomes)
    languages = sorted({t.language.value for t in tasks})
    parsed = parse_weights(weights) if weights else None
    chosen = strategies or (("best", "uniform") + (("weighted",) if parsed else ()))
    click.echo(f"budget k={budget} over {', '.join(languages)}; {len(counts)} problems")
    for strategy in chosen:
        pi = allocate(strategy, k=budget, counts=counts, languages=languages, weights=parsed)
        value = pass_at_k_pi(counts, pi)
        shown = ", ".join(f"{lang}={n}" for lang, n in pi.items() if n)
        click.echo(f"{strategy:<9} pass@{budget}_pi = {100 * value:6.2f}%   ({shown})")


def register(app: click.Group) -> None:
    app.add_command(allocate_command)
