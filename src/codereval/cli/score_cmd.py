"""`codereval score`: pass@k tables from result files or run directories."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from codereval.errors import UserError

if TYPE_CHECKING:
    from collections import Counter

    from rich.table import Table

    from codereval.scoring.acc import AccResult
    from codereval.scoring.categories import Category
    from codereval.scoring.metrics import Scoreboard
    from codereval.scoring.paired import PairedComparison
    from codereval.scoring.scores import Scores


def scoring_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options `score` and `report` share: what to score and under which convention."""
    options = [
        click.option("--k", "k_text", default="1,5,10", show_default=True, help="Values of k."),
        click.option(
            "--compat", is_flag=True, help="The paper's convention: n fixed, divide by 230."
        ),
        click.option("--n", "compat_n", default=10, show_default=True, help="n under --compat."),
        click.option(
            "--benchmark-size",
            type=int,
            default=None,
            help="Denominator under --compat (default: 230).",
        ),
        click.option(
            "--tasks",
            "records",
            type=click.Path(path_type=Path),
            default=None,
            help="Records file: levels and projects from it; results for unknown ids are an error.",
        ),
        click.option(
            "--exclude-flagged",
            "gold",
            type=click.Path(path_type=Path),
            default=None,
            help="Leave out tasks a gold-validation report (gold.jsonl) flags.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def score_inputs(
    inputs: Sequence[Path],
    *,
    k_text: str,
    compat: bool,
    compat_n: int,
    benchmark_size: int | None,
    records: Path | None,
    gold: Path | None,
    bootstrap: int,
) -> list[Scores]:
    """Score each input (labels from their paths, made unique)."""
    from codereval.api import score
    from codereval.scoring.metrics import parse_ks
    from codereval.scoring.scores import default_label

    try:
        ks = parse_ks(k_text)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    labels = [default_label(path) for path in inputs]
    if len(set(labels)) < len(labels):
        labels = [f"{path.parent.name}/{path.name}" for path in inputs]
    return [
        score(
            path,
            k=ks,
            compat=compat,
            ci=bootstrap,
            n=compat_n,
            benchmark_size=benchmark_size,
            tasks=records,
            exclude_flagged=gold,
            label=label,
        )
        for path, label in zip(inputs, labels, strict=True)
    ]


@click.command("score")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@scoring_options
@click.option("--by-project", is_flag=True, help="Add one row per project.")
@click.option(
    "--ci",
    "bootstrap",
    is_flag=True,
    flag_value=1000,
    default=0,
    help="Add 95% bootstrap intervals over tasks (1000 resamples, fixed seed).",
)
@click.option(
    "--paired",
    is_flag=True,
    help="Compare the inputs pairwise on their common tasks: the difference in pass@k with a "
    "95% paired bootstrap interval and a sign-flip permutation p-value.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the HTML report (as `codereval report` does).",
)
def score_command(
    inputs: tuple[Path, ...],
    k_text: str,
    compat: bool,
    compat_n: int,
    benchmark_size: int | None,
    records: Path | None,
    gold: Path | None,
    by_project: bool,
    bootstrap: int,
    paired: bool,
    as_json: bool,
    html_path: Path | None,
) -> None:
    """Score result files or run directories: pass@k overall, per level, standalone.

    A run of CoderUJB tasks adds the paper's metrics: pass@k and count@n at the syntax,
    compile and pass (or trigger) levels, test coverage, and defect detection's accuracy,
    precision, recall and F1.

    Each INPUT is an official CoderEval result file (*_out.jsonl) or a run directory written by
    `codereval evaluate`. With several inputs, models are compared side by side; --paired adds,
    for each pair (first minus second), the difference in pass@k with a paired bootstrap
    interval and a p-value. With --json --paired the output is {"scores": [...], "paired": [...]}.

    \b
    Examples:
      codereval score results/python/ChatGPT/Raw_Input.jsonl_out.jsonl --compat
      codereval score runs/gpt runs/llama --k 1,10
      codereval score runs/gpt runs/llama --paired
      codereval score runs/gpt --exclude-flagged runs/gold/gold.jsonl --json
      codereval score runs/gpt runs/llama --html report.html
      codereval score runs/gpt --ci
      codereval score runs/ujb-fcg --k 1,5 --ci
    """
    from codereval.report.table import print_wide, render_scoreboards
    from codereval.scoring.scores import dump_json, family_columns

    if paired and len(inputs) < 2:
        raise UserError("--paired needs two or more inputs", hint="codereval score A B --paired")
    options: dict[str, Any] = {
        "k_text": k_text,
        "compat": compat,
        "compat_n": compat_n,
        "benchmark_size": benchmark_size,
        "records": records,
        "gold": gold,
    }
    results = score_inputs(inputs, bootstrap=bootstrap, **options)
    comparisons = []
    if paired:
        for i, a in enumerate(results):
            for b in results[i + 1 :]:
                comparisons += a.paired(b)
    if html_path is not None:
        from codereval.report.html import REPORT_CI, write_report

        # The report always shows intervals; the terminal only with --ci.
        shown = results if bootstrap else score_inputs(inputs, bootstrap=REPORT_CI, **options)
        write_report(html_path, shown)
    boards = [result.board for result in results]
    accs = [result.acc for result in results]
    categories = [result.categories for result in results]
    if as_json:
        documents = [result.to_dict() for result in results]
        if paired:
            click.echo(
                dump_json(
                    {
                        "scores": documents,
                        "paired": [c.model_dump(mode="json") for c in comparisons],
                    }
                )
            )
        else:
            click.echo(dump_json(documents))
        return
    extra = [render_acc(boards, accs)] if any(acc is not None for acc in accs) else []
    if any(counts is not None for counts in categories):
        extra.append(render_categories(boards, categories))
    labels = [board.label for board in boards]
    family_notes: list[str] = []
    for family, sections in family_columns(results):
        extra += family.score_tables(labels, sections, boards[0].ks)
        family_notes += family.score_notes(labels, sections)
    print_wide(render_scoreboards(boards, by_project=by_project, extra=extra))
    for note in [*selection_notes(inputs), *family_notes]:
        click.echo(f"note: {note}")
    if paired:
        click.echo()
        print_wide(render_paired(comparisons, ks=boards[0].ks))
    if html_path is not None:
        click.echo(f"HTML report: {html_path}")


def selection_notes(inputs: Sequence[Path]) -> list[str]:
    """Runs of part of a benchmark (evaluate --only-*) say so: their scores are over that part."""
    from codereval.storage.store import read_run_json

    notes = []
    for path in inputs:
        meta = read_run_json(path) if path.is_dir() else None
        bench = meta.get("benchmark") if meta else None
        if isinstance(bench, dict) and bench.get("selection"):
            notes.append(
                f"{path} evaluated {bench.get('tasks')} task(s) of {bench.get('name')}, "
                f"selected with {' '.join(map(str, bench['selection']))}: its scores "
                "are over those tasks only"
            )
    return notes


def render_paired(comparisons: Sequence[PairedComparison], *, ks: Sequence[int]) -> Table:
    from rich.table import Table
    from rich.text import Text

    from codereval.scoring.paired import format_p

    table = Table(
        title="paired comparison: difference in pass@k (points, first − second), "
        "95% paired bootstrap interval, sign-flip p-value",
        title_justify="left",
    )
    table.add_column("comparison", style="bold")
    table.add_column("tasks", justify="right", style="dim")
    for k in ks:
        table.add_column(f"Δ pass@{k}", justify="right")
        table.add_column("p", justify="right")
    pairs: dict[tuple[str, str], dict[int, PairedComparison]] = {}
    for comparison in comparisons:
        pairs.setdefault((comparison.a, comparison.b), {})[comparison.k] = comparison
    for (a, b), by_k in pairs.items():
        cells = [Text(f"{a} − {b}"), Text(str(max(c.tasks for c in by_k.values())))]
        for k in ks:
            found = by_k.get(k)
            if found is None:
                cells += [Text("—"), Text("")]
                continue
            low, high = found.ci
            text = f"{found.difference:+.2f} [{low:+.2f}, {high:+.2f}]"
            # Bold when the interval excludes zero.
            cells += [
                Text(text, style="bold" if low > 0 or high < 0 else ""),
                Text(format_p(found.p_value)),
            ]
        table.add_row(*cells)
    return table


def render_categories(
    boards: list[Scoreboard], categories: list[dict[str, Counter[Category]] | None]
) -> Table:
    from rich.table import Table

    from codereval.scoring.categories import JUDGED, Category, percentages

    table = Table(
        title="result categories (% of judged samples, CodeGeeX Figure 7)", title_justify="left"
    )
    table.add_column("run / language", style="bold")
    for category in JUDGED:
        table.add_column(category.value.replace("_", " "), justify="right")
    table.add_column("samples", justify="right", style="dim")
    for board, counts in zip(boards, categories, strict=True):
        for language, by in sorted((counts or {}).items()):
            shares = percentages(by)
            label = language if len(boards) == 1 else f"{board.label} / {language}"
            judged = sum(by.get(c, 0) for c in JUDGED)
            infra = by.get(Category.NOT_JUDGED, 0)
            cells = [f"{shares[c]:.1f}" for c in JUDGED]
            table.add_row(label, *cells, f"{judged}" + (f" (+{infra} infra)" if infra else ""))
    return table


def render_acc(boards: list[Scoreboard], accs: list[AccResult | None]) -> Table:
    from rich.table import Table

    ks = boards[0].ks
    single = len(boards) == 1
    title = "Acc@k (%) — recall of the reference's context tokens"
    table = Table(title=title, title_justify="left")
    table.add_column("token type", style="bold")
    for board in boards:
        for k in ks:
            table.add_column(f"{'' if single else board.label + chr(10)}acc@{k}", justify="right")
    for name in ("all", "TypeReference", "APIInvocation", "VarReference"):
        cells = [name]
        for acc in accs:
            values: dict[int, float] = {}
            if acc is not None:
                values = acc.overall if name == "all" else acc.by_type.get(name, {})
            for k in ks:
                value = values.get(k)
                cells.append("—" if value is None else f"{100 * value:.2f}")
        table.add_row(*cells)
    return table


def register(app: click.Group) -> None:
    app.add_command(score_command)
