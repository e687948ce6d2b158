"""Executors, found by name: where the sandboxed samples of an evaluation run.

``fresh`` runs each sample in a new sandboxed process on this machine; ``warm`` forks Python
samples from sandboxed workers that have the interpreter and the project's imports loaded (the
default where bubblewrap works; other languages run fresh under it); ``ray`` spreads them over
the nodes of a Ray cluster (``pip install 'codereval[ray]'``). Nothing of an
executor is imported until it is chosen, so Ray is never imported without ``--executor ray``.
"""

from __future__ import annotations

import importlib

from codereval.errors import UserError
from codereval.executors.base import Executor, ExecutorOptions, Job

# name -> "module:Class"; imported only when chosen.
EXECUTORS: dict[str, str] = {
    "fresh": "codereval.executors.local:FreshExecutor",
    "warm": "codereval.executors.local:WarmExecutor",
    "ray": "codereval.executors.ray_cluster:RayExecutor",
}
# Warm where the sandbox is bubblewrap, else fresh: decided once the sandbox is known.
DEFAULT_EXECUTOR = ""
# How a Ray node runs its samples (the first is the default; warm only where bwrap works).
NODE_EXECUTORS = ("warm", "fresh")


def check_executor(name: str) -> None:
    if name != DEFAULT_EXECUTOR and name not in EXECUTORS:
        raise UserError(
            f"unknown executor {name!r}", hint=f"choose one of: {', '.join(EXECUTORS)}"
        )


def load_executor(name: str, options: ExecutorOptions) -> Executor:
    check_executor(name)
    if name == DEFAULT_EXECUTOR:
        from codereval.executors.local import WarmExecutor

        return WarmExecutor(options, auto=True)
    module_name, _, class_name = EXECUTORS[name].partition(":")
    cls: object = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, Executor)):
        raise TypeError(f"{EXECUTORS[name]} is not an Executor")
    return cls(options)


__all__ = [
    "DEFAULT_EXECUTOR",
    "EXECUTORS",
    "NODE_EXECUTORS",
    "Executor",
    "ExecutorOptions",
    "Job",
    "check_executor",
    "load_executor",
]
