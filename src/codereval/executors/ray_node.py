"""What runs on each Ray node: one actor holding prepared runners, running samples in threads.

The actor is the local engine in miniature. It is created once per node with as many threads as
the node has Ray CPUs; the first sample of an environment group makes it prepare that group
(build or find the environment in the node's own cache, keyed by content hash as everywhere),
and every sample then goes through the same ``evaluate_sample`` as on one machine: same runners,
same sandbox, same verdict rules; where the node's sandbox is bubblewrap, Python samples fork
from the node's own warm workers (and Java and JavaScript tests start from such a fork), as the
local warm executor does. The group's tasks travel once through Ray's object store; the
tests tree, the projects manifest and the project sources it names must be readable at the
same paths on every node (``describe`` says which are not, before anything runs).
"""

from __future__ import annotations

import importlib
import os
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.executors.sample import (
    ProvenanceFiller,
    default_env_root,
    evaluate_sample,
    make_work_root,
)
from codereval.model import HARNESS_VERSION, Outcome, Sample, Task, __version__
from codereval.runners import RunContext, Runner
from codereval.sandbox import Limits, Sandbox, get_sandbox
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.preload_hints import HINTS_FOLDER, PreloadHints
from codereval.sandbox.warm import Preload, WarmPool
from codereval.workspace.views import remove_tree

EXECUTOR = "ray"


@dataclass(frozen=True, kw_only=True)
class NodeSetup:
    """Everything a node needs besides the samples; small, sent once per node."""

    benchmark_version: str
    # runner name -> "module:Class", constructed on the node (runners hold locks and services).
    runner_specs: dict[str, str]
    limits: Limits
    sandbox: str = "auto"
    # None: the node's own cache ($CODEREVAL_HOME in the environment of `ray start`).
    env_root: Path | None = None
    tests_dir: Path | None = None
    projects_dir: Path | None = None
    compat: bool = False
    # Fork samples from warm workers where the node's sandbox allows it (else fresh).
    warm: bool = True
    # What the node's warm project workers import before forking (as --preload).
    preload: str = "auto"
    # (what it is, path): inputs that live in files and must be visible on the node.
    shared_paths: tuple[tuple[str, str], ...] = ()
    # What the driver runs, so a node with another harness is refused.
    codereval_version: str = __version__
    harness_version: str = HARNESS_VERSION


@dataclass(frozen=True, kw_only=True)
class NodeReport:
    """What a node says about itself before it is given work."""

    node_id: str
    address: str
    hostname: str
    pid: int
    # The worker's parent: the node's raylet (tests kill it to kill the node).
    raylet_pid: int
    isolation: str
    # How it runs samples: "warm" (workers forked from) or "fresh".
    executor: str
    codereval_version: str
    harness_version: str
    problems: list[str] = field(default_factory=list)


@dataclass
class _Group:
    tasks: dict[str, Task]
    blocked: dict[str, str]


def runner_spec(runner: Runner) -> str:
    """How a node constructs the same runner: its class, importable by module and name."""
    cls = type(runner)
    return f"{cls.__module__}:{cls.__qualname__}"


def _construct(spec: str) -> Runner:
    module_name, _, class_name = spec.partition(":")
    runner = getattr(importlib.import_module(module_name), class_name)()
    if not isinstance(runner, Runner):
        raise TypeError(f"{spec} is not a Runner")
    return runner


class NodeWorker:
    """The per-node actor (wrapped with ``ray.remote`` by the driver). Thread-safe ``run``."""

    def __init__(self, setup: NodeSetup, slots: int = 1) -> None:
        self.setup = setup
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self._group_locks: dict[str, threading.Lock] = {}
        self._groups: dict[str, _Group] = {}
        self._runners: dict[str, Runner] = {}
        for name, spec in setup.runner_specs.items():
            try:
                runner = _construct(spec)
            except Exception as exc:
                self.problems.append(f"runner {name!r} ({spec}) cannot be loaded: {exc}")
                continue
            missing = runner.missing_toolchain()
            if missing:
                self.problems.append(f"runner {name!r} cannot run here: {missing}")
            self._runners[name] = runner
        sandbox: Sandbox | None = None
        try:
            sandbox = get_sandbox(setup.sandbox)
        except UserError as exc:
            self.problems.append(exc.one_line())
        self.isolation = sandbox.isolation if sandbox is not None else ""
        for what, path in setup.shared_paths:
            if not Path(path).exists():
                self.problems.append(
                    f"cannot see {what} {path} (give every node the same path, e.g. on a "
                    "shared file system)"
                )
        if setup.codereval_version != __version__ or setup.harness_version != HARNESS_VERSION:
            self.problems.append(
                f"runs codereval {__version__} ({HARNESS_VERSION}), the driver "
                f"{setup.codereval_version} ({setup.harness_version}); install the same "
                "version on every node"
            )
        self.work_root = make_work_root()
        warm: WarmPool | None = None
        if setup.warm and isinstance(sandbox, BwrapSandbox):
            try:
                # As the local warm executor: a worker per (environment, slot), a few idle
                # ones beyond the slots kept warm.
                warm = WarmPool(sandbox=sandbox, root=self.work_root / "warm",
                                preload=Preload.parse(setup.preload), max_workers=2 * slots + 2,
                                hints=PreloadHints((setup.env_root or default_env_root())
                                                   / HINTS_FOLDER))
            except UserError as exc:
                self.problems.append(exc.one_line())
        self.ctx = RunContext(
            warm=warm,
            sandbox=sandbox if sandbox is not None else get_sandbox("none"),
            limits=setup.limits,
            work_root=self.work_root,
            env_root=setup.env_root or default_env_root(),
            tests_dir=setup.tests_dir,
            projects_dir=setup.projects_dir,
            compat=setup.compat,
        )
        self.fill = ProvenanceFiller(
            benchmark_version=setup.benchmark_version,
            isolation=self.isolation,
            executor=EXECUTOR,
            ctx=self.ctx,
            override=True,
        )

    def describe(self) -> NodeReport:
        import ray

        return NodeReport(
            node_id=ray.get_runtime_context().get_node_id(),
            address=ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
            hostname=socket.gethostname(),
            pid=os.getpid(),
            raylet_pid=os.getppid(),
            isolation=self.isolation,
            executor="warm" if self.ctx.warm is not None else "fresh",
            codereval_version=__version__,
            harness_version=HARNESS_VERSION,
            problems=list(self.problems),
        )

    def _prepared(self, key: str, runner_name: str, tasks_box: Sequence[Any]) -> _Group:
        """The group, prepared once on this node; other threads wait for the first."""
        with self._lock:
            lock = self._group_locks.setdefault(key, threading.Lock())
        with lock:
            group = self._groups.get(key)
            if group is not None:
                return group
            import ray

            tasks: list[Task] = ray.get(tasks_box[0])
            try:
                blocked = self._runners[runner_name].prepare(tasks, self.ctx)
            except Exception as exc:
                # A group that cannot be prepared costs its own samples (infra_error, run
                # again on resume), not the node.
                reason = exc.one_line() if isinstance(exc, UserError) else (
                    f"{type(exc).__name__}: {exc}"
                )
                message = f"preparing on node {socket.gethostname()} failed: {reason}"
                blocked = {t.task_id: message for t in tasks}
            group = _Group(tasks={t.task_id: t for t in tasks}, blocked=blocked)
            self._groups[key] = group
            return group

    def run(self, key: str, runner_name: str, tasks_box: Sequence[Any], sample: Sample) -> Outcome:
        """Evaluate one sample of group ``key``. ``tasks_box`` holds the reference to the
        group's tasks (in a list, so Ray does not fetch them for every call)."""
        # What raises here (a task missing from its group) reaches the driver as a task error
        # and is recorded there as infra_error.
        group = self._prepared(key, runner_name, tasks_box)
        task = group.tasks[sample.task_id]
        runner = self._runners[runner_name]
        return evaluate_sample(
            sample, task=task, runner=runner, blocked=group.blocked, ctx=self.ctx, fill=self.fill
        )

    def close(self) -> None:
        for runner in self._runners.values():
            try:
                runner.close()
            except Exception:
                continue  # closing is best effort; the actor is killed next
        if self.ctx.warm is not None:
            self.ctx.warm.close()
        remove_tree(self.work_root)
