"""`codereval evaluate`: run samples (or the references) in their projects, into a run directory."""

from __future__ import annotations

from pathlib import Path

import click

from codereval.errors import Interrupted, UserError
from codereval.model import Level, Sample, Stage
from codereval.sandbox.base import DEFAULT_DISK_MB


@click.command("evaluate")
@click.option(
    "--tasks",
    "tasks_path",
    type=click.Path(path_type=Path),
    help="CoderEval records file (CoderEval4Python.json, records.jsonl ...) or a CoderUJB "
    "dataset (code_ujb_*.parquet, task_*_bench_*.json, .jsonl).",
)
@click.option(
    "--benchmark",
    default=None,
    help="A benchmark by name: mini-python, mini-java, mini-coderujb, humaneval, coderujb-dd ...",
)
@click.option(
    "--prepared",
    type=click.Path(path_type=Path),
    help="A benchmark directory written by `codereval prepare` (records, tests and projects).",
)
@click.option(
    "--data-dir", type=click.Path(path_type=Path), help="Where the benchmark's data files are."
)
@click.option(
    "--samples",
    "samples_path",
    type=click.Path(path_type=Path),
    help="Samples: the official file ({_id, generate_results}) or JSONL {task_id, completion}; "
    "a built-in benchmark defaults to its own.",
)
@click.option(
    "--only-task",
    "only_tasks",
    multiple=True,
    metavar="ID|@FILE",
    help="Evaluate only this task (repeat, or comma-separate; @FILE: one id per line).",
)
@click.option(
    "--only-level",
    "only_levels",
    multiple=True,
    type=click.Choice([level.value for level in Level]),
    help="Evaluate only tasks at this runnable level (repeatable).",
)
@click.option(
    "--only-project",
    "only_projects",
    multiple=True,
    metavar="OWNER/REPO",
    help="Evaluate only tasks of this project (repeatable).",
)
@click.option(
    "--tests-dir",
    type=click.Path(path_type=Path),
    help="The official CoderEval test tree (the folder holding repos/); a built-in benchmark "
    "defaults to its own.",
)
@click.option(
    "--projects",
    type=click.Path(path_type=Path),
    help="Projects manifest (projects.toml; CoderUJB's bug versions in a bugs.toml beside it); "
    "a built-in benchmark defaults to its own.",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=None, help="Parallel samples [cores]."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Wall-time limit per sample, seconds.",
)
@click.option(
    "--memory",
    "memory_mb",
    type=click.IntRange(min=16),
    default=2048,
    show_default=True,
    help="Memory limit per sample, MB.",
)
@click.option(
    "--disk",
    "disk_mb",
    type=click.IntRange(min=16),
    default=DEFAULT_DISK_MB,
    show_default=True,
    help="What a sample may write to disk in all, MB (the run is stopped beyond it).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "rlimit", "none"]),
    default="auto",
    show_default=True,
    help="Isolation: auto picks the strongest that works here; none is for debugging only.",
)
@click.option(
    "--executor",
    type=click.Choice(["fresh", "warm", "ray"]),
    default=None,
    help="Where and how samples run: warm forks each Python sample from a sandboxed worker "
    "that has the interpreter and the project's imports loaded (and starts Java and JavaScript "
    "tests, a new JVM or node each, from such a fork); fresh starts a new sandbox and "
    "process per sample; ray runs them on the nodes of a Ray cluster (pip install "
    "'codereval[ray]'). [warm where bwrap works, else fresh]",
)
@click.option(
    "--preload",
    default="auto",
    show_default=True,
    help="What warm project workers import before forking: auto (third-party modules whose "
    "import has no detectable side effect), none, or a comma-separated list of modules.",
)
@click.option(
    "--node-executor",
    type=click.Choice(["warm", "fresh"]),
    default=None,
    help="With --executor ray: how each node runs its samples, warm (as --executor warm, "
    "where the node's sandbox is bwrap, else fresh) or fresh. [warm]",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="HOST:PORT",
    help="With --executor ray: the cluster's head (what `ray start --head` printed) "
    "[$RAY_ADDRESS, else a Ray started here].",
)
@click.option(
    "--overlap-waits/--no-overlap-waits",
    default=True,
    show_default=True,
    help="Start more samples (up to --jobs more) while running ones wait, asleep in a back-off "
    "or a poll, and leave the machine's cores idle; --no-overlap-waits runs exactly --jobs "
    "at once. The fresh and warm executors.",
)
@click.option("--compat", is_flag=True, help="Reproduce the original platform's quirks.")
@click.option("--rerun", is_flag=True, help="Discard what --out holds and evaluate everything.")
@click.option(
    "--reference", is_flag=True, help="Gold validation: run each task's reference instead."
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=None,
    help="With --reference: runs of each reference (flaky tests change verdict) [3].",
)
@click.option(
    "--out", "run_dir", required=True, type=click.Path(path_type=Path), help="Run directory."
)
def evaluate_command(
    tasks_path: Path | None,
    benchmark: str | None,
    prepared: Path | None,
    data_dir: Path | None,
    samples_path: Path | None,
    only_tasks: tuple[str, ...],
    only_levels: tuple[str, ...],
    only_projects: tuple[str, ...],
    tests_dir: Path | None,
    projects: Path | None,
    jobs: int | None,
    timeout: float,
    memory_mb: int,
    disk_mb: int,
    sandbox: str,
    executor: str | None,
    ray_address: str | None,
    preload: str,
    node_executor: str | None,
    overlap_waits: bool,
    compat: bool,
    rerun: bool,
    reference: bool,
    repeat: int | None,
    run_dir: Path,
) -> None:
    """Run samples inside their projects, sandboxed and in parallel, into a run directory.

    Outcomes are written as they come (results.sqlite, outcomes.jsonl, the official
    <samples>_out.jsonl). Interrupted and re-run with the same command, it resumes without
    running a finished sample again. With --reference it validates the benchmark itself: each
    reference is run --repeat times and trivial bodies are probed; gold.jsonl lists broken,
    flaky and weak tasks (use it with `codereval score --exclude-flagged`).

    \b
    Examples:
      codereval evaluate --benchmark mini-python --out runs/mini
      codereval evaluate --tasks CoderEval4Python.json --samples Raw_Input.jsonl \\
          --tests-dir codereval-tests --projects projects.toml --jobs 2 --out runs/chatgpt
      codereval evaluate --benchmark mini-python --reference --repeat 3 --out runs/gold
      codereval evaluate --benchmark mini-coderujb --out runs/ujb
      codereval evaluate --prepared bench/codereval-python --samples Raw_Input.jsonl \\
          --compat --out runs/chatgpt
      codereval evaluate --benchmark humanevalx-python --samples gens.jsonl \\
          --executor ray --ray-address 10.0.0.1:6379 --out runs/hx-py
      codereval evaluate --prepared bench/codereval-python --samples Raw_Input.jsonl \\
          --only-level class_runnable --only-project pexip/os-python-cachetools --out runs/part
    """
    from rich.console import Console

    from codereval.api import evaluate_samples, open_benchmark, resolve_samples

    if repeat is not None and not reference:
        raise UserError("--repeat only applies with --reference")
    if node_executor is not None and executor != "ray":
        raise UserError(
            "--node-executor only applies with --executor ray",
            hint="add --executor ray, or leave --node-executor out",
        )
    if reference and samples_path is not None:
        raise UserError("--reference runs the references; do not pass --samples as well")
    bench = open_benchmark(
        name=benchmark,
        tasks_path=tasks_path,
        data_dir=data_dir,
        tests_dir=tests_dir,
        projects=projects,
        prepared=prepared,
    )
    from codereval.evaluation.selection import read_task_ids, samples_of

    whole = bench
    bench = bench.select(task_ids=read_task_ids(only_tasks), levels=only_levels,
                         projects=only_projects)
    samples: list[Sample]
    given = 0
    if reference:
        from codereval.evaluation.gold import gold_samples

        samples = gold_samples(bench.tasks, repeat=repeat or 3)
        official_name = ""
    else:
        samples_path = samples_path or bench.default_samples
        if samples_path is None:
            raise UserError("no samples to evaluate", hint="pass --samples FILE (or --reference)")
        # Checked against the whole benchmark: a sample of a task left out is no mistake.
        samples, official_name = resolve_samples(samples_path, benchmark=whole)
        given = len(samples)
        if bench is not whole:
            samples = samples_of(samples, bench.tasks)

    try:
        report = evaluate_samples(
            bench,
            samples,
            run_dir=run_dir,
            jobs=jobs,
            timeout=timeout,
            memory_mb=memory_mb,
            disk_mb=disk_mb,
            sandbox=sandbox,
            compat=compat,
            rerun=rerun,
            progress=True,
            mode=f"reference x{repeat or 3}" if reference else "samples",
            official_name=official_name,
            console=Console(stderr=True),
            executor=executor or "",
            ray_address=ray_address,
            preload=preload,
            node_executor=node_executor or "warm",
            overlap_waits=overlap_waits,
        )
    except KeyboardInterrupt:
        # Raised here, not left to click, which would turn it into a bare "aborted".
        raise Interrupted(
            f"interrupted; finished outcomes are kept in {run_dir}",
            hint="re-run the same command to resume",
        ) from None
    # A part of a benchmark says which part, so that its numbers are not read as the whole's.
    of_samples = f", {given} samples" if given else ""
    part = (f" (of {len(whole.tasks)} tasks{of_samples}: {' '.join(bench.selection)})"
            if bench is not whole else "")
    click.echo(
        f"{len(report.outcomes)} outcomes for {len(report.samples)} samples of "
        f"{len({s.task_id for s in report.samples})} tasks{part}: {report.ran} run now, "
        f"{report.skipped} already done; isolation {report.isolation}, executor "
        f"{report.executor}; in {run_dir}"
    )
    click.echo(
        "verdicts: " + (", ".join(f"{v} {n}" for v, n in report.counts.most_common()) or "none")
    )
    from codereval.model import compiled_untested

    untested = sum(1 for o in report.outcomes if compiled_untested(o))
    if untested:
        click.echo(
            f"note: {untested} sample(s) compiled and have no test to run (their tasks have no "
            "official test): neither passes nor failures; `codereval compare` checks them "
            "against the official compile verdicts"
        )
    infra = report.counts.get("infra_error", 0) - untested
    if infra:
        click.echo(
            f"note: {infra} infra_error outcome(s) are the harness's failures, not the model's; "
            "see outcomes.jsonl"
        )
    if reference:
        from codereval.evaluation.gold import classify, gold_summary, gold_table, write_gold

        rows = classify(report.tasks, report.samples, report.outcomes)
        path = write_gold(run_dir / "gold.jsonl", rows)
        table = gold_table(rows)
        if table is not None:
            Console().print(table)
        click.echo(gold_summary(rows))
        click.echo(f"wrote {path}; exclude flagged tasks with: codereval score RUNS "
                   f"--exclude-flagged {path}")
        return
    tested = (Stage.RUN, Stage.CHECK, Stage.DONE)
    if report.outcomes and not any(o.stage in tested for o in report.outcomes):
        # Compile verdicts only (no sample reached a test): a pass rate would read as 0%.
        click.echo("pass@1: n/a (no sample reached a test)")
        return
    click.echo(f"pass@1: {100 * report.pass_at_1():.2f}%")


def register(app: click.Group) -> None:
    """Adds this module's commands to the app."""
    app.add_command(evaluate_command)
