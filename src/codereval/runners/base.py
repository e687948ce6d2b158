"""The runner interface: one per way of testing code (a language, a test layout).

The evaluation engine hands a runner one (task, sample) at a time, from several threads; the
runner injects the sample into a private workspace, runs the test in the sandbox and classifies
the result into an Outcome. It must never write to the project's base tree or environment.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codereval.model import Outcome, Sample, Task
from codereval.sandbox.base import Limits, Sandbox
from codereval.workspace.views import remove_tree

if TYPE_CHECKING:
    from codereval.sandbox.warm import Slot, WarmPool

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class RunContext:
    sandbox: Sandbox
    limits: Limits
    # Private workspaces are created below this directory and removed after each sample.
    work_root: Path
    # Cache of built project environments (see `codereval env build`).
    env_root: Path
    # The official CoderEval test tree (repos/...), when given with --tests-dir.
    tests_dir: Path | None = None
    # The projects manifest, or the folder holding it as projects.toml (see `codereval env`).
    projects_dir: Path | None = None
    # Reproduce the original platform's quirks instead of fixing them.
    compat: bool = False
    # Warm sandboxed Python workers (--executor warm); None runs every sample fresh.
    warm: WarmPool | None = None


class Runner(ABC):
    """Evaluates samples for the tasks it supports. Thread-safe ``run``."""

    name: str = ""

    def missing_toolchain(self) -> str | None:
        """None if this runner's compilers and runtimes are installed, else a one-line fix."""
        return None

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        """Get ready to run these tasks (environments, warm services).

        Returns task_id -> reason for tasks that cannot run here (their samples become
        infra_error with that reason).
        """
        return {}

    @abstractmethod
    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        """Evaluate one sample; never raises for anything the sample does."""

    def affinity(self, task: Task, ctx: RunContext) -> str:
        """Tasks whose samples share warm state (a worker, a compiled project): an executor
        keeps each such group on one thread where it can, so that state is made once."""
        return task.project

    def environment_fingerprint(self, task: Task, ctx: RunContext) -> str:
        """Identifies the environment the task runs in (recorded for reproducibility)."""
        return ""

    def settled(self, outcome: Outcome, task: Task, tests_dir: Path | None) -> bool:
        """Is this infra_error final, so that a resumed run does not run the sample again?
        (Infra errors are the harness's failures and are tried again; a runner may know some
        are not: a Java sample that compiled and has no test to run, while it still has none.)"""
        return False

    def close(self) -> None:
        """Stop warm services. Called once when the evaluation ends."""
        return None


@contextlib.contextmanager
def sample_workdir(ctx: RunContext, *, prefix: str, warm: bool = True,
                   in_memory: bool = False) -> Iterator[tuple[Path, Slot | None]]:
    """A private directory for one sample and the warm slot it belongs to, removed after.

    With warm workers in the run (and ``warm``), the directory is a fresh scratch in a leased
    slot (``in_memory``: on /dev/shm), which the slot's workers already see; else a new folder
    under the work root and no slot. Removed even if the sample made parts of it read-only
    (which plain ``rmtree`` cannot undo for a user other than root).
    """
    pool = ctx.warm if warm else None
    leased = pool.slot() if pool is not None else contextlib.nullcontext(None)
    with leased as slot:
        if slot is not None:
            workdir = slot.new_scratch(in_memory=in_memory)
        else:
            ctx.work_root.mkdir(parents=True, exist_ok=True)
            workdir = Path(tempfile.mkdtemp(prefix=prefix, dir=ctx.work_root))
        try:
            yield workdir, slot
        finally:
            try:
                remove_tree(workdir)
            except OSError as exc:
                # The verdict stands; the evaluation's work root is removed again at its end.
                log.warning("could not remove %s: %s", workdir, exc)
