"""`codereval generate` (samples from a model) and `codereval run` (generate, evaluate, score)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from codereval.errors import Interrupted, UserError
from codereval.model import Level, Task

F = TypeVar("F", bound=Callable[..., Any])

GENERATED = "generation.jsonl"


def _task_options(func: F) -> F:
    for option in reversed(
        [
            click.option(
                "--benchmark",
                default=None,
                help="A benchmark by name: mini-python, humanevalx-python, codereval, "
                "coderujb-<kind> ...",
            ),
            click.option(
                "--tasks",
                "tasks_path",
                type=click.Path(path_type=Path),
                help="CoderEval records file (CoderEval4Python.json, records.jsonl ...) "
                "or a CoderUJB dataset (code_ujb_*.parquet, task_*_bench_*.json).",
            ),
            click.option(
                "--data-dir",
                type=click.Path(path_type=Path),
                help="Where the benchmark's data files are.",
            ),
            click.option(
                "--task-id",
                "--only-task",
                "task_ids",
                multiple=True,
                help="Only these tasks (repeatable).",
            ),
            click.option(
                "--only-level",
                "only_levels",
                multiple=True,
                type=click.Choice([level.value for level in Level]),
                help="Only tasks at this runnable level (repeatable).",
            ),
            click.option(
                "--only-project",
                "only_projects",
                multiple=True,
                metavar="OWNER/REPO",
                help="Only tasks of this project (repeatable).",
            ),
            click.option(
                "--limit", type=click.IntRange(min=1), default=None, help="Only the first N tasks."
            ),
        ]
    ):
        func = option(func)
    return func


def _model_options(func: F) -> F:
    for option in reversed(
        [
            click.option(
                "--model",
                default=None,
                help="Model name (openai) or local model directory (hf, vllm).",
            ),
            click.option(
                "--backend",
                default="openai",
                show_default=True,
                help="openai, hf, vllm, or module:Class.",
            ),
            click.option(
                "--base-url",
                default="",
                help="OpenAI-compatible server URL [$OPENAI_BASE_URL or OpenAI's].",
            ),
            click.option("--api-key", default="", help="API key [$OPENAI_API_KEY]."),
            click.option(
                "--prompt",
                "variant",
                default="raw",
                show_default=True,
                type=click.Choice(["raw", "human", "oracle", "all", "skeleton"]),
                help="Docstring, human label, or docstring with context.",
            ),
            click.option(
                "--style",
                default="completion",
                show_default=True,
                type=click.Choice(["completion", "chat"]),
                help="Continue the prompt, or chat messages asking for the function.",
            ),
            click.option(
                "-n",
                "n",
                type=click.IntRange(min=1),
                default=10,
                show_default=True,
                help="Samples per task.",
            ),
            click.option(
                "--temperature", type=click.FloatRange(min=0), default=0.6, show_default=True
            ),
            click.option(
                "--top-p",
                type=click.FloatRange(min=0, max=1, min_open=True),
                default=0.95,
                show_default=True,
            ),
            click.option(
                "--max-new-tokens", type=click.IntRange(min=1), default=1024, show_default=True
            ),
            click.option(
                "--stop",
                multiple=True,
                help="Stop sequence, repeatable [Python completion: new top-level code].",
            ),
            click.option("--seed", type=int, default=None, help="Sampling seed, when supported."),
            click.option(
                "--concurrency",
                type=click.IntRange(min=1),
                default=4,
                show_default=True,
                help="Requests in flight (openai).",
            ),
            click.option(
                "--request-timeout",
                type=click.FloatRange(min=0, min_open=True),
                default=120.0,
                show_default=True,
                help="Seconds per request (openai).",
            ),
            click.option(
                "--max-retries",
                type=click.IntRange(min=0),
                default=5,
                show_default=True,
                help="Retries on 429/5xx/timeouts (openai).",
            ),
            click.option(
                "--batch-size",
                type=click.IntRange(min=1),
                default=None,
                help="Tasks per write (default: 2 x concurrency).",
            ),
        ]
    ):
        func = option(func)
    return func


def _load_tasks(
    *,
    benchmark: str | None,
    tasks_path: Path | None,
    data_dir: Path | None,
    task_ids: tuple[str, ...],
    only_levels: tuple[str, ...],
    only_projects: tuple[str, ...],
    limit: int | None,
) -> tuple[str, list[Task]]:
    from codereval.api import select_tasks
    from codereval.benchmarks import load_benchmark, read_tasks_file

    if benchmark is None and tasks_path is None:
        raise UserError("no tasks given", hint="pass --benchmark NAME or --tasks RECORDS")
    if benchmark is None:
        assert tasks_path is not None
        name, tasks = read_tasks_file(tasks_path)
    else:
        name, tasks = benchmark, load_benchmark(benchmark, data_dir=data_dir, tasks_path=tasks_path)
    if only_levels or only_projects:
        from codereval.evaluation.selection import TaskFilter

        tasks = TaskFilter(
            levels=tuple(Level(v) for v in only_levels), projects=only_projects
        ).apply(tasks, benchmark=name)
    return name, select_tasks(tasks, name=name, task_ids=task_ids, limit=limit)


def _generate(
    tasks: list[Task],
    *,
    out: Path,
    params: dict[str, Any],
    dry_run: bool,
) -> None:
    """Shared by `generate` and `run`: build prompts, then fill ``out`` (or print them)."""
    from codereval.api import generate_file
    from codereval.generation.base import SamplingOptions
    from codereval.prompting.prompts import PromptStyle, PromptVariant, build_prompts

    prompts = build_prompts(
        tasks, variant=PromptVariant(params["variant"]), style=PromptStyle(params["style"])
    )
    if dry_run:
        for prompt in prompts:
            click.echo(f"===== {prompt.task_id} ({prompt.label})")
            click.echo(prompt.render())
        click.echo(f"===== {len(prompts)} prompt(s); nothing was sent (--dry-run)")
        return
    model = params["model"]
    if not model:
        raise UserError("--model is required", hint="a model name (openai) or directory (hf)")
    options = SamplingOptions(
        n=params["n"],
        temperature=params["temperature"],
        top_p=params["top_p"],
        max_new_tokens=params["max_new_tokens"],
        stop=tuple(params["stop"]),
        seed=params["seed"],
    )
    done = 0

    def progress(count: int) -> None:
        nonlocal done
        done += count
        click.echo(f"\r{done} task(s) sampled", nl=False, err=True)

    try:
        report = generate_file(
            tasks,
            prompts,
            out=out,
            model=model,
            backend=params["backend"],
            options=options,
            base_url=params["base_url"],
            api_key=params["api_key"],
            concurrency=params["concurrency"],
            request_timeout=params["request_timeout"],
            max_retries=params["max_retries"],
            batch_size=params["batch_size"],
            progress=progress if sys.stderr.isatty() else None,
        )
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted; the samples written so far are kept in {out}",
            hint="re-run the same command to continue",
        ) from None
    if sys.stderr.isatty():
        click.echo("", err=True)
    click.echo(
        f"{report.written} sample(s) written to {out} ({report.existing} already there); "
        f"no code: {report.no_code}, cut off: {report.truncated}"
    )
    if report.failed:
        worst, times = report.errors.most_common(1)[0]
        click.echo(
            f"warning: {report.failed} sample request(s) failed and were not written "
            f"(e.g. {times}x {worst}); details in {report.errors_path}; "
            "re-run the same command to retry them",
            err=True,
        )


@click.command("generate")
@_task_options
@_model_options
@click.option("--dry-run", is_flag=True, help="Print the prompts and exit.")
@click.option(
    "--out",
    default=None,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Samples file (JSONL); appended to, and resumed from (not with --dry-run).",
)
def generate_command(
    benchmark: str | None,
    tasks_path: Path | None,
    data_dir: Path | None,
    task_ids: tuple[str, ...],
    only_levels: tuple[str, ...],
    only_projects: tuple[str, ...],
    limit: int | None,
    dry_run: bool,
    out: Path | None,
    **params: Any,
) -> None:
    """Sample completions from a model and extract the code to evaluate.

    Samples are appended to --out as they arrive (raw output and extracted code); re-running
    the same command asks only for what is missing. Requests that fail after retries are not
    written (see OUT.errors.jsonl) and are retried on the next run.

    \b
    Examples:
      codereval generate --benchmark mini-python --prompt raw --dry-run
      OPENAI_BASE_URL=http://localhost:8000/v1 codereval generate --benchmark mini-python \\
          --model my-model --style chat -n 10 --out samples.jsonl
      codereval generate --tasks CoderEval4Python.json --backend hf --model ./tiny \\
          --prompt human -n 1 --temperature 0 --out samples.jsonl
    """
    if out is None and not dry_run:
        raise UserError("--out is required", hint="name the samples file to write, or --dry-run")
    _, tasks = _load_tasks(
        benchmark=benchmark,
        tasks_path=tasks_path,
        data_dir=data_dir,
        task_ids=task_ids,
        only_levels=only_levels,
        only_projects=only_projects,
        limit=limit,
    )
    _generate(tasks, out=out or Path("-"), params=params, dry_run=dry_run)


@click.command("run")
@_task_options
@_model_options
@click.option(
    "--projects",
    type=click.Path(path_type=Path),
    help="Projects manifest (projects.toml) [the built-in one for mini benchmarks].",
)
@click.option(
    "--tests-dir",
    type=click.Path(path_type=Path),
    help="The official CoderEval test tree (the folder holding repos/).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Parallel samples in evaluation [cores].",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Wall-time limit per sample, seconds.",
)
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "rlimit", "none"]),
    default="auto",
    show_default=True,
    help="Isolation for the evaluation.",
)
@click.option("--k", "k_text", default="1,5,10", show_default=True, help="Values of k.")
@click.option(
    "--out",
    "run_dir",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Run directory: generation.jsonl, then the evaluation's files.",
)
def run_command(
    benchmark: str | None,
    tasks_path: Path | None,
    data_dir: Path | None,
    task_ids: tuple[str, ...],
    only_levels: tuple[str, ...],
    only_projects: tuple[str, ...],
    limit: int | None,
    projects: Path | None,
    tests_dir: Path | None,
    jobs: int | None,
    timeout: float,
    sandbox: str,
    k_text: str,
    run_dir: Path,
    **params: Any,
) -> None:
    """Generate samples with a model, evaluate them in their projects, and print pass@k.

    Every step resumes: re-running the same command asks the model only for missing samples
    and runs only samples without an outcome. RUN_DIR/generation.jsonl holds the samples.

    \b
    Examples:
      OPENAI_BASE_URL=http://localhost:8000/v1 codereval run --benchmark mini-python \\
          --model my-model -n 10 --out runs/my-model
      codereval run --benchmark humanevalx-python --backend hf --model ./tiny -n 1 \\
          --out runs/tiny
    """
    from rich.console import Console

    from codereval.api import Benchmark, evaluate_samples, open_benchmark
    from codereval.benchmarks.samples import load_samples
    from codereval.report.table import print_wide, render_scoreboards
    from codereval.scoring.metrics import parse_ks, score
    from codereval.storage.store import official_results_name

    try:
        ks = parse_ks(k_text)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    name, tasks = _load_tasks(
        benchmark=benchmark,
        tasks_path=tasks_path,
        data_dir=data_dir,
        task_ids=task_ids,
        only_levels=only_levels,
        only_projects=only_projects,
        limit=limit,
    )
    if projects is not None and not projects.is_file():
        raise UserError(f"projects manifest not found: {projects}", hint="check --projects")
    # Where the tests and projects are, as `evaluate` finds them: a built-in benchmark brings
    # its manifest and its official-layout tests, so it runs the same through every command.
    located = open_benchmark(
        name=benchmark,
        tasks_path=tasks_path,
        data_dir=data_dir,
        tests_dir=tests_dir,
        projects=projects,
    )
    generated = run_dir / GENERATED
    _generate(tasks, out=generated, params=params, dry_run=False)
    samples = load_samples(generated) if generated.exists() else []
    if not samples:
        raise UserError(
            "the model produced no samples to evaluate", hint=f"see {generated}.errors.jsonl"
        )
    try:
        report = evaluate_samples(
            Benchmark(
                name=name,
                tasks=tasks,
                source=str(tasks_path or name),
                tests_dir=located.tests_dir,
                projects=located.projects,
            ),
            samples,
            run_dir=run_dir,
            jobs=jobs,
            timeout=timeout,
            sandbox=sandbox,
            progress=sys.stderr.isatty(),
            official_name=official_results_name(GENERATED),
            console=Console(stderr=True),
        )
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted; finished outcomes are kept in {run_dir}",
            hint="re-run the same command to resume",
        ) from None
    board = score(report.tasks, report.outcomes, ks=ks, label=params["model"] or "")
    print_wide(render_scoreboards([board]))
    click.echo(f"run directory: {run_dir}")


def register(app: click.Group) -> None:
    """Adds this module's commands to the app."""
    app.add_command(generate_command)
    app.add_command(run_command)
