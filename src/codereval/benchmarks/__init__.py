"""Benchmark loaders, found by name. Each family's module is imported only when used."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from codereval.errors import UserError
from codereval.model import Task

HUMANEVALX_LANGUAGES = ("python", "cpp", "java", "js", "go", "rust")

BENCHMARKS_HELP = (
    "codereval (with --tasks RECORDS), coderujb or coderujb-<kind> (with --tasks DATASET; "
    "kind: fcg, ctg, itg, apr, dd), mini-python, mini-java, mini-coderujb, humaneval, "
    "humanevalx-<lang>, humanevalx-<source>-to-<target> (lang: "
    + ", ".join(HUMANEVALX_LANGUAGES)
    + ")"
)


def builtin_dir(name: str) -> Path:
    """A built-in data folder shipped in the package (e.g. "mini_python")."""
    path = Path(str(resources.files("codereval.data").joinpath(name)))
    if not path.is_dir():
        raise UserError(f"built-in data {name!r} is missing from this installation")
    return path


def load_benchmark(
    name: str, *, data_dir: Path | None = None, tasks_path: Path | None = None
) -> list[Task]:
    """Tasks of a benchmark by name; see BENCHMARKS_HELP for the names."""
    from codereval.benchmarks.codereval import load_records

    if name == "codereval":
        if tasks_path is None:
            raise UserError(
                "benchmark 'codereval' needs the records file",
                hint="pass --tasks CoderEval4Python.json (or CoderEval4Java.json)",
            )
        return load_records(tasks_path)
    ujb = re.fullmatch(r"coderujb(?:-([a-z]+))?", name)
    if ujb:
        from codereval.benchmarks.coderujb import load_coderujb

        if tasks_path is None:
            raise UserError(
                f"benchmark {name!r} needs a CoderUJB dataset file",
                hint="pass --tasks code_ujb_complete.parquet (or a task_*_bench_*.json, .jsonl)",
            )
        return load_coderujb(tasks_path, kind=ujb.group(1))
    if name in ("mini-python", "mini-java"):
        folder = builtin_dir(name.replace("-", "_"))
        return load_records(folder / "records.json")
    if name == "mini-coderujb":
        from codereval.benchmarks.mini_coderujb import load_tasks_jsonl

        return load_tasks_jsonl(builtin_dir("mini_coderujb") / "tasks.jsonl")
    if name == "humaneval":
        from codereval.benchmarks.humaneval import load_humaneval

        return load_humaneval(path=tasks_path)
    translation = re.fullmatch(r"humanevalx-([a-z]+)-to-([a-z]+)", name)
    if translation:
        from codereval.benchmarks.humanevalx import load_humanevalx_translation

        source, target = translation.groups()
        return load_humanevalx_translation(source, target, data_dir=data_dir)
    generation = re.fullmatch(r"humanevalx-([a-z]+)", name)
    if generation:
        from codereval.benchmarks.humanevalx import load_humanevalx

        return load_humanevalx(generation.group(1), data_dir=data_dir)
    raise UserError(f"unknown benchmark {name!r}", hint=f"choose one of: {BENCHMARKS_HELP}")


__all__ = ["BENCHMARKS_HELP", "builtin_dir", "load_benchmark"]
