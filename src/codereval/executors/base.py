"""The executor interface: where the sandboxed samples of an evaluation run.

The engine owns the run directory, the store, the progress bar and resume; an executor only
takes the pending samples and yields their outcomes as they finish. ``start`` does everything
that can fail on bad input (toolchains, connecting to a cluster, checking what its machines can
see) before the engine writes anything, and raises ``UserError`` for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from codereval.model import Outcome, Sample, Task
from codereval.runners import Runner
from codereval.sandbox import Limits, Sandbox


@dataclass(frozen=True, kw_only=True)
class Job:
    """What an executor is given: the tasks, their runners and the options that shape a run."""

    benchmark_version: str
    tasks: Mapping[str, Task]
    # runner name -> (the runner, the tasks it evaluates), as the engine grouped them.
    runners: Mapping[str, tuple[Runner, list[Task]]]
    # Samples not finished yet; an executor prepares only what these need.
    pending: Sequence[Sample]
    limits: Limits
    sandbox: str = "auto"
    # A ready sandbox instead of the named one (library use, tests); local executors only.
    sandbox_override: Sandbox | None = None
    # None: each machine uses its own environment cache ($CODEREVAL_HOME).
    env_root: Path | None = None
    tests_dir: Path | None = None
    projects_dir: Path | None = None
    compat: bool = False
    # One-line notes for the user while the run goes on (a node lost, a node left out).
    notice: Callable[[str], None] = field(default=lambda text: None, compare=False)

    @cached_property
    def runner_names(self) -> dict[str, str]:
        """task id -> the name of the runner that evaluates it."""
        return {t.task_id: name for name, (_, group) in self.runners.items() for t in group}


@dataclass(frozen=True, kw_only=True)
class ExecutorOptions:
    """How the chosen executor is configured (each reads the fields it knows)."""

    # fresh: samples run at once on this machine.
    jobs: int = 1
    # fresh, warm: more samples (up to as many again) while running ones wait and leave
    # cores idle (executors/overlap.py).
    overlap_waits: bool = True
    # ray: the cluster to join (None: $RAY_ADDRESS, else a Ray started for this run).
    ray_address: str | None = None
    # ray: times a sample lost with its node is tried again before it is an infra_error.
    max_retries: int = 3
    # warm: what project workers import before forking (auto, none, or module names).
    preload: str = "auto"
    # ray: how each node runs its samples: "warm" (where its sandbox is bubblewrap, else
    # fresh) or "fresh".
    node_executor: str = "warm"


class Executor(ABC):
    """Runs samples somewhere and yields their outcomes, complete with provenance."""

    name: str = ""

    def __init__(self, options: ExecutorOptions) -> None:
        self.options = options

    @abstractmethod
    def start(self, job: Job) -> None:
        """Get ready to run ``job`` (runners prepared or machines found); UserError if it
        cannot run. Nothing is written to the run directory before this returns."""

    @property
    @abstractmethod
    def isolation(self) -> str:
        """The isolation the samples get (after start): one name, or several joined by ", "
        when the machines differ."""

    @abstractmethod
    def run(self, samples: Sequence[Sample]) -> Generator[Sequence[Outcome], None, None]:
        """Yield the outcomes of ``samples`` in batches as they finish, each sample's once.

        Closing the iterator early (Ctrl-C in the engine) stops what has not started; the
        outcomes not yielded by then are not recorded and run again on resume.
        """

    def describe(self) -> dict[str, Any]:
        """What run.json records about where the samples ran."""
        return {"name": self.name}

    def close(self) -> None:
        """Release what start took (runners' warm services, cluster actors). Called once."""
        return None
