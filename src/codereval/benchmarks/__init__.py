"""Benchmark families, found by name: the one place the generic layers meet them.

Each family is a package under ``codereval/families/`` exposing ``FAMILY`` (a
:class:`~codereval.benchmarks.family.Family`), registered below by import path and imported
only when first asked for. Adding a family is its folder and one line here.
"""

from __future__ import annotations

import functools
import importlib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from codereval.benchmarks.family import Family
from codereval.errors import UserError
from codereval.model import Task

if TYPE_CHECKING:
    from codereval.runners.machine import Machine

# name -> "module:attribute", in the order --help lists them and tasks files are offered to
# them (a file no family recognises goes to the one that reads last resorts: CoderEval's).
FAMILIES: dict[str, str] = {
    "codereval": "codereval.families.codereval:FAMILY",
    "coderujb": "codereval.families.coderujb:FAMILY",
    "humaneval": "codereval.families.humaneval:FAMILY",
    "humanevalx": "codereval.families.humanevalx:FAMILY",
    "build": "codereval.families.build:FAMILY",
}


@functools.cache
def family(name: str) -> Family:
    try:
        target = FAMILIES[name]
    except KeyError:
        raise UserError(
            f"unknown benchmark family {name!r}",
            hint=f"choose one of: {', '.join(FAMILIES)}",
        ) from None
    module_name, _, attribute = target.partition(":")
    found = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(found, Family):
        raise TypeError(f"{target} is not a Family")
    return found


def families() -> list[Family]:
    return [family(name) for name in FAMILIES]


def family_of(task: Task) -> Family | None:
    """The family that claims a task for its own hooks (None: generic handling only)."""
    for candidate in families():
        if candidate.owns(task):
            return candidate
    return None


def benchmarks_help() -> str:
    return ", ".join(f.names_help for f in families() if f.names_help)


def builtin_dir(name: str) -> Path:
    """A built-in data folder shipped in the package (e.g. "mini_python")."""
    path = Path(str(resources.files("codereval.data").joinpath(name)))
    if not path.is_dir():
        raise UserError(f"built-in data {name!r} is missing from this installation")
    return path


def load_benchmark(
    name: str, *, data_dir: Path | None = None, tasks_path: Path | None = None
) -> list[Task]:
    """Tasks of a benchmark by name; ``benchmarks_help()`` lists the names."""
    for candidate in families():
        tasks = candidate.load(name, data_dir=data_dir, tasks_path=tasks_path)
        if tasks is not None:
            return tasks
    raise UserError(f"unknown benchmark {name!r}", hint=f"choose one of: {benchmarks_help()}")


def read_tasks_file(path: Path, *, kind: str | None = None) -> tuple[str, list[Task]]:
    """(benchmark name, tasks) of a tasks file in any family's format, or in ours (``Task``
    JSON Lines, as ``codereval tasks --json`` prints; the run is named after the first task's
    benchmark)."""
    from codereval.benchmarks.tasks_jsonl import is_tasks_jsonl, load_tasks_jsonl

    if kind is None and is_tasks_jsonl(path):
        tasks = load_tasks_jsonl(path)
        return (tasks[0].benchmark if tasks else "tasks"), tasks
    for candidate in families():
        if candidate.recognises(path, kind=kind):
            return candidate.read_tasks(path, kind=kind)
    for candidate in families():
        if candidate.reads_last_resort():
            return candidate.read_tasks(path, kind=kind)
    raise UserError(
        f"{path}: not a tasks file of any benchmark family",
        hint="give CoderEval records, a CoderUJB dataset or `codereval tasks --json` output",
    )


def compat_machine(task: Task) -> Machine | None:
    """The original machine ``--compat`` rebuilds for a task's official tests, if any."""
    owner = family_of(task)
    return owner.compat_machine(task) if owner is not None else None


__all__ = [
    "FAMILIES",
    "Family",
    "benchmarks_help",
    "builtin_dir",
    "compat_machine",
    "families",
    "family",
    "family_of",
    "load_benchmark",
    "read_tasks_file",
]
