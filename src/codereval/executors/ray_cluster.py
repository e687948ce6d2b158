"""The ray executor: the samples of an evaluation spread over the nodes of a Ray cluster.

One actor per node (``ray_node.NodeWorker``) holds that node's prepared runners and runs as many
samples at once as the node has Ray CPUs, each in our sandbox as on one machine. The driver
(this process) groups the pending samples by environment, hands each node the groups it already
prepared before new ones (a node builds an environment only when it takes a group, and helps
with another node's group only when that one has more waiting than its nodes take at once), and
streams outcomes back with ``ray.wait`` to the engine, which alone writes the store.

A node that dies takes only its in-flight samples with it: they go back to the front of their
queues and run elsewhere, up to ``max_retries`` times, then are recorded as infra_error. The
engine drops any outcome of a sample already recorded, so nothing is counted twice; nodes that
join while the run goes on are put to work.
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from codereval.environments.base import load_manifest
from codereval.errors import UserError
from codereval.executors.base import Executor, ExecutorOptions, Job
from codereval.executors.ray_node import EXECUTOR, NodeReport, NodeSetup, NodeWorker, runner_spec
from codereval.executors.sample import complete_provenance
from codereval.model import Outcome, Sample, Stage, Task, Verdict

# How long the first nodes may take to start their actor (placing it waits for free CPUs).
START_TIMEOUT = 120.0
# Samples queued on a node beyond those running, so it never waits for the driver.
PIPELINE = 2
# How often the driver looks for nodes that joined (or lost only their actor).
REFRESH_INTERVAL = 10.0
# With no usable node left, how long to wait for one before giving up.
NO_NODE_GRACE = 30.0
# How long connecting to the head's port may take before the address is called unreachable.
PROBE_TIMEOUT = 5.0
INSTALL_HINT = "pip install 'codereval[ray]'"


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise UserError(
            "--executor ray needs Ray, which is not installed", hint=INSTALL_HINT
        ) from None
    return ray


def group_key(runner_name: str, task: Task) -> str:
    """Samples sharing an environment: the runner and the project (or language)."""
    return f"{runner_name}:{task.project or task.language.value}"


@dataclass(eq=False)
class _Item:
    sample: Sample
    group: str
    attempts: int = 0
    last_error: str = ""


@dataclass(eq=False)
class _Node:
    report: NodeReport
    handle: Any
    slots: int
    inflight: dict[Any, _Item] = field(default_factory=dict)
    groups: set[str] = field(default_factory=set)


@dataclass(eq=False)
class _Starting:
    node_id: str
    handle: Any
    slots: int


class RayExecutor(Executor):
    name = EXECUTOR

    def __init__(self, options: ExecutorOptions) -> None:
        super().__init__(options)
        self._ray: ModuleType | None = None
        self._owns_ray = False
        self._job: Job | None = None
        self._setup: NodeSetup | None = None
        self._actor_class: Any = None
        self._affinity: Any = None
        # Nodes that said they cannot run (asked once, not every refresh).
        self._refused: set[str] = set()
        self._nodes: list[_Node] = []
        self._starting: dict[Any, _Starting] = {}
        self._boxes: dict[str, list[Any]] = {}
        self._group_runner: dict[str, str] = {}
        self._last_refresh = 0.0
        self._notice: Callable[[str], None] = lambda text: None
        self._address = ""
        self._isolations: set[str] = set()
        # node label -> what run.json says of it (samples: outcomes it returned).
        self._described: dict[str, dict[str, Any]] = {}

    # --- start ---------------------------------------------------------------------------

    def start(self, job: Job) -> None:
        if job.sandbox_override is not None:
            raise UserError(
                "a Sandbox object cannot be sent to Ray nodes",
                hint="pass the sandbox by name (sandbox='auto', 'bwrap', 'rlimit' or 'none')",
            )
        ray = import_ray()
        self._ray = ray
        self._job = job
        self._notice = job.notice
        self._connect(ray)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._affinity = NodeAffinitySchedulingStrategy
        self._actor_class = ray.remote(concurrency_groups={"control": 1})(NodeWorker)
        self._setup = NodeSetup(
            benchmark_version=job.benchmark_version,
            runner_specs={name: runner_spec(r) for name, (r, _) in job.runners.items()},
            limits=job.limits,
            sandbox=job.sandbox,
            # Absolute: a node's worker does not start in the driver's directory.
            env_root=_absolute(job.env_root),
            tests_dir=_absolute(job.tests_dir),
            projects_dir=_absolute(job.projects_dir),
            compat=job.compat,
            warm=self.options.node_executor == "warm",
            preload=self.options.preload,
            shared_paths=_shared_paths(job),
        )
        self._put_groups(job)
        self._start_nodes(wait=True)

    def _connect(self, ray: ModuleType) -> None:
        address = self.options.ray_address
        if ray.is_initialized():
            # Called from inside a Ray program: use its connection, leave it open.
            self._address = "(this program's Ray)"
            return
        if address is not None:
            _probe(address)
        try:
            ray.init(
                address=address,
                logging_level="ERROR",
                log_to_driver=False,
                configure_logging=True,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise UserError(
                f"cannot reach a Ray cluster at {address}: {_short(exc)}",
                hint="start one with `ray start --head` and pass the address it prints "
                "(--ray-address HOST:PORT), or leave --ray-address out to start Ray here",
            ) from None
        self._owns_ray = True
        self._address = address or ray.get_runtime_context().gcs_address

    def _put_groups(self, job: Job) -> None:
        ray = self._ray
        assert ray is not None
        pending = {s.task_id for s in job.pending}
        groups: dict[str, list[Task]] = {}
        for name, (_, tasks) in job.runners.items():
            for task in tasks:
                if task.task_id in pending:
                    key = group_key(name, task)
                    groups.setdefault(key, []).append(task)
                    self._group_runner[key] = name
        # In a list so that Ray hands the node the reference, fetched once per group.
        self._boxes = {key: [ray.put(tasks)] for key, tasks in groups.items()}

    def _start_nodes(self, *, wait: bool) -> None:
        """Start an actor on every alive node that has CPUs and none of ours."""
        ray = self._ray
        assert ray is not None
        self._last_refresh = time.monotonic()
        ours = (
            {n.report.node_id for n in self._nodes}
            | {s.node_id for s in self._starting.values()}
            | self._refused
        )
        for info in ray.nodes():
            cpus = int(info.get("Resources", {}).get("CPU", 0))
            if not info.get("Alive") or cpus < 1 or info["NodeID"] in ours:
                continue
            handle = self._actor_class.options(
                num_cpus=cpus,
                max_concurrency=cpus,
                max_restarts=0,
                scheduling_strategy=self._affinity(info["NodeID"], soft=False),
            ).remote(self._setup, cpus)
            ref = handle.describe.options(concurrency_group="control").remote()
            self._starting[ref] = _Starting(node_id=info["NodeID"], handle=handle, slots=cpus)
        if not wait:
            return
        if not self._starting and not self._nodes:
            raise UserError(
                f"the Ray cluster at {self._address} has no node with a CPU",
                hint="start nodes with `ray start --address HEAD:PORT --num-cpus N`",
            )
        ready, _ = ray.wait(
            list(self._starting), num_returns=len(self._starting), timeout=START_TIMEOUT
        )
        problems = self._admit(ready)
        if not self._nodes:
            if problems:
                raise UserError(problems[0], hint="fix it on the node or leave the node out")
            raise UserError(
                f"no Ray node started a codereval worker within {START_TIMEOUT:.0f} s",
                hint="are the nodes' CPUs taken by other work? see `ray status`",
            )

    def _admit(self, ready: Sequence[Any]) -> list[str]:
        """Nodes whose describe answered: put to work, or refused with the reason. What nodes
        said of themselves comes first (a node that died while starting is no setup problem)."""
        ray = self._ray
        assert ray is not None
        problems: list[str] = []
        failures: list[str] = []
        for ref in ready:
            starting = self._starting.pop(ref)
            try:
                report: NodeReport = ray.get(ref)
            except ray.exceptions.RayError as exc:
                self._refused.add(starting.node_id)
                problem = (
                    f"node {starting.node_id[:12]} failed to start a codereval worker: "
                    f"{_short(exc)}"
                )
                failures.append(problem)
                self._notice(f"ray: {problem}; left out")
                self._kill(starting.handle)
                continue
            if report.problems:
                self._refused.add(report.node_id)
                problems.append(f"node {_label(report)}: {report.problems[0]}")
                self._notice(f"ray: node {_label(report)} left out: {report.problems[0]}")
                self._kill(starting.handle)
                continue
            self._nodes.append(_Node(report=report, handle=starting.handle, slots=starting.slots))
            self._isolations.add(report.isolation)
            self._described[_label(report)] = {
                "node": _label(report),
                "hostname": report.hostname,
                "slots": starting.slots,
                "isolation": report.isolation,
                "executor": report.executor,
                "samples": 0,
            }
        return problems + failures

    # --- run -----------------------------------------------------------------------------

    @property
    def isolation(self) -> str:
        # Of every node that took part, including those lost since.
        return ", ".join(sorted(self._isolations))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "address": self._address,
            "max_retries": self.options.max_retries,
            "nodes": list(self._described.values()),
        }

    def run(self, samples: Sequence[Sample]) -> Generator[Sequence[Outcome], None, None]:
        ray = self._ray
        job = self._job
        assert ray is not None and job is not None
        queues: dict[str, deque[_Item]] = {}
        for sample in samples:
            key = group_key(job.runner_names[sample.task_id], job.tasks[sample.task_id])
            queues.setdefault(key, deque()).append(_Item(sample=sample, group=key))
        stranded_since: float | None = None
        while queues or any(n.inflight for n in self._nodes):
            if time.monotonic() - self._last_refresh >= REFRESH_INTERVAL:
                self._start_nodes(wait=False)
            self._dispatch(queues)
            inflight = {ref: node for node in self._nodes for ref in node.inflight}
            refs = [*inflight, *self._starting]
            if not inflight:
                stranded_since = stranded_since or time.monotonic()
                if time.monotonic() - stranded_since > NO_NODE_GRACE:
                    left = sum(len(q) for q in queues.values())
                    raise UserError(
                        f"no Ray node left to run on; {left} sample(s) not run",
                        hint="finished outcomes are kept; re-run the same command to resume",
                    )
                if not self._starting:
                    time.sleep(1.0)
                    self._start_nodes(wait=False)
                    continue
            else:
                stranded_since = None
            ready, _ = ray.wait(refs, num_returns=1, timeout=1.0)
            if not ready:
                continue
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            batch: list[Outcome] = []
            self._admit([r for r in ready if r in self._starting])
            for ref in ready:
                node = inflight.get(ref)
                if node is None or ref not in node.inflight:
                    continue  # a describe, or a sample already given back with its node
                batch.extend(self._collect(ref, node, queues))
            if batch:
                yield batch

    def _dispatch(self, queues: dict[str, deque[_Item]]) -> None:
        for node in self._nodes:
            while queues and len(node.inflight) < PIPELINE * node.slots:
                key = self._choose_group(node, queues)
                if key is None:
                    break
                item = queues[key].popleft()
                if not queues[key]:
                    del queues[key]
                ref = node.handle.run.remote(
                    key, self._group_runner[key], self._boxes[key], item.sample
                )
                node.inflight[ref] = item
                node.groups.add(key)

    def _choose_group(self, node: _Node, queues: dict[str, deque[_Item]]) -> str | None:
        own = [k for k in queues if k in node.groups]
        if own:
            return max(own, key=lambda k: len(queues[k]))
        served = {k for n in self._nodes for k in n.groups}
        untouched = [k for k in queues if k not in served]
        if untouched:
            return max(untouched, key=lambda k: len(queues[k]))

        def backlog(key: str) -> int:
            return len(queues[key]) - sum(n.slots for n in self._nodes if key in n.groups)

        busiest = max(queues, key=backlog)
        return busiest if backlog(busiest) > 0 else None

    def _collect(self, ref: Any, node: _Node, queues: dict[str, deque[_Item]]) -> list[Outcome]:
        ray = self._ray
        assert ray is not None
        errors = ray.exceptions
        lost = (
            errors.RayActorError,
            errors.WorkerCrashedError,
            errors.NodeDiedError,
            errors.ObjectLostError,
            errors.OutOfMemoryError,
        )
        item = node.inflight[ref]
        try:
            outcome: Outcome = ray.get(ref)
        except lost as exc:
            return self._lose(node, exc, queues)
        except errors.RayTaskError as exc:
            # Raised by our code on the node (not the sample's doing): infra_error, not retried.
            del node.inflight[ref]
            return [self._failed(item, f"node {_label(node.report)}: {_short(exc)}")]
        del node.inflight[ref]
        self._described[_label(node.report)]["samples"] += 1
        return [outcome]

    def _lose(self, node: _Node, exc: Exception, queues: dict[str, deque[_Item]]) -> list[Outcome]:
        """The node (or its actor) is gone: its in-flight samples go back to their queues."""
        reason = _short(exc)
        given_up: list[Outcome] = []
        for item in reversed(list(node.inflight.values())):
            item.attempts += 1
            item.last_error = f"node {_label(node.report)}: {type(exc).__name__}"
            if item.attempts > self.options.max_retries:
                given_up.append(
                    self._failed(
                        item,
                        f"lost {item.attempts} times with the Ray node running it "
                        f"(last: {item.last_error}: {reason})",
                    )
                )
            else:
                queues.setdefault(item.group, deque()).appendleft(item)
        self._notice(
            f"ray: lost node {_label(node.report)} ({type(exc).__name__}); "
            f"{len(node.inflight) - len(given_up)} in-flight sample(s) go back to the queue"
        )
        node.inflight.clear()
        self._nodes.remove(node)
        self._kill(node.handle)
        # Look for a replacement at once (a new node, or a new actor on a live node).
        self._last_refresh = 0.0
        return given_up

    def _failed(self, item: _Item, detail: str) -> Outcome:
        job = self._job
        assert job is not None
        outcome = Outcome(
            task_id=item.sample.task_id,
            sample_index=item.sample.index,
            verdict=Verdict.INFRA_ERROR,
            stage=Stage.UNKNOWN,
            detail=detail,
        )
        return complete_provenance(
            outcome,
            task=job.tasks[item.sample.task_id],
            sample=item.sample,
            benchmark_version=job.benchmark_version,
            environment="",
            isolation=self.isolation,
            executor=self.name,
        )

    # --- close ---------------------------------------------------------------------------

    def _kill(self, handle: Any) -> None:
        ray = self._ray
        assert ray is not None
        with contextlib.suppress(ray.exceptions.RayError, ValueError):
            ray.kill(handle, no_restart=True)

    def close(self) -> None:
        ray = self._ray
        if ray is None:
            return
        # Runners close their services and workspaces on their node; a node that does not
        # answer in time is killed all the same (its sandboxes die with the actor).
        closing = [
            n.handle.close.options(concurrency_group="control").remote() for n in self._nodes
        ]
        if closing:
            with contextlib.suppress(ray.exceptions.RayError):
                ray.wait(closing, num_returns=len(closing), timeout=30)
        for node in self._nodes:
            self._kill(node.handle)
        for starting in self._starting.values():
            self._kill(starting.handle)
        self._nodes.clear()
        self._starting.clear()
        if self._owns_ray:
            ray.shutdown()


def _probe(address: str) -> None:
    """Fail at once on a HOST:PORT where nothing listens (ray.init would retry for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # "auto", "local" or ray://: Ray's own forms, its own checks
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT):
            return
    except OSError as exc:
        raise UserError(
            f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}",
            hint="start one with `ray start --head` and pass the address it prints "
            "(--ray-address HOST:PORT), or leave --ray-address out to start Ray here",
        ) from None


def _label(report: NodeReport) -> str:
    """A node as people find it: its address, and the start of its Ray id (several nodes may
    share a machine)."""
    return f"{report.address}/{report.node_id[:8]}"


def _short(exc: BaseException) -> str:
    """One line for a Ray error: the innermost "SomeError: message" line when it has one
    (Ray's messages carry whole remote tracebacks)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and cause is not exc:
        return f"{type(cause).__name__}: {cause}".splitlines()[0]
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception): ", line):
            return line
    return lines[0] if lines else type(exc).__name__


def _absolute(path: Path | None) -> Path | None:
    return path.resolve() if path is not None else None


def _shared_paths(job: Job) -> tuple[tuple[str, str], ...]:
    """Inputs that live in files: every node must read them at the same path."""
    paths: list[tuple[str, str]] = []
    if job.tests_dir is not None:
        paths.append(("the tests directory", str(job.tests_dir.resolve())))
    manifest = job.projects_dir
    if manifest is not None:
        paths.append(("the projects manifest", str(manifest.resolve())))
        if manifest.is_dir():
            manifest = manifest / "projects.toml"
        if manifest.is_file():
            used = {job.tasks[s.task_id].project for s in job.pending}
            for spec in load_manifest(manifest):
                source = spec.resolved_source()
                if spec.name in used and "://" not in source and not source.startswith("git@"):
                    paths.append((f"the source of {spec.name}", source))
    return tuple(paths)
