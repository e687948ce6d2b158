"""A real Ray cluster on this machine: a head and workers, each a `ray start` of its own.

For trying ``--executor ray`` without a cluster, for the tests and for bench/ray_executor.py.
Every node listens on loopback, keeps its files under a private temp dir and runs in a session
of its own (Ray's workers take process groups of their own, but stay in the session), so one
node can be killed alone (as a machine dies) and ``stop`` ends exactly the processes this
cluster started, never anyone else's Ray (``ray stop`` would).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from codereval.errors import UserError

LOOPBACK = "127.0.0.1"
# Per node; Ray's default (30% of RAM) is far more than evaluation needs (tasks and outcomes).
OBJECT_STORE_BYTES = 100 * 1024 * 1024


# No usage reports; and no token authentication, whatever ~/.ray holds: Ray turns it on for a
# head when it finds a token there (a local ray.init() writes one), and a worker started
# without that token could not join. Nodes listen on this machine only while the cluster runs.
NODE_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Node:
    role: str
    # The session of everything this node's `ray start` left running (its id: that pid).
    session: int
    cpus: int
    log: Path


@dataclass
class LocalRayCluster:
    """``with LocalRayCluster(workers=1) as cluster: ... cluster.address ...``"""

    workers: int = 1
    head_cpus: int = 1
    worker_cpus: int = 1
    # The environment of every node (PYTHONPATH, CODEREVAL_HOME ...); the caller's by default.
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    # Added to the environment of the head, and of each of the first workers, in order.
    node_envs: list[dict[str, str]] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    address: str = ""
    root: Path | None = None

    def __enter__(self) -> LocalRayCluster:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _ray(self) -> str:
        found = shutil.which("ray", path=str(Path(sys.executable).parent))
        if found is None:
            raise UserError(
                "the `ray` command is not installed beside this Python",
                hint="pip install 'codereval[ray]'",
            )
        return found

    def _start_node(
        self, role: str, args: list[str], cpus: int, env: dict[str, str] | None = None
    ) -> Node:
        assert self.root is not None
        log = self.root / f"{role}-{len(self.nodes)}.log"
        argv = [
            self._ray(), "start", *args, f"--num-cpus={cpus}", f"--node-ip-address={LOOPBACK}",
            f"--temp-dir={self.root / 'ray'}", f"--object-store-memory={OBJECT_STORE_BYTES}",
            f"--dashboard-agent-listen-port={free_port()}", f"--metrics-export-port={free_port()}",
            "--disable-usage-stats",
        ]  # fmt: skip
        with log.open("w") as out:
            # Its own session, which the node's daemons and workers keep: it can be ended (or
            # killed, as a machine dies) without touching other nodes or anyone's Ray.
            proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**self.env, **(env or {}), **NODE_ENV},
                start_new_session=True,
            )
            code = proc.wait(timeout=120)
        node = Node(role=role, session=proc.pid, cpus=cpus, log=log)
        self.nodes.append(node)
        if code != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:]
            raise RuntimeError(f"ray start ({role}) failed: {' '.join(tail)}")
        return node

    def start(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="codereval-ray-"))
        port = free_port()
        self.address = f"{LOOPBACK}:{port}"
        try:
            envs = iter(self.node_envs)
            self._start_node(
                "head",
                ["--head", f"--port={port}", "--include-dashboard=false"],
                self.head_cpus,
                next(envs, None),
            )
            for _ in range(self.workers):
                self.add_worker(env=next(envs, None))
        except BaseException:
            self.stop()
            raise

    def add_worker(self, cpus: int | None = None, env: dict[str, str] | None = None) -> Node:
        """Another node; ``env`` adds to its environment (e.g. its own CODEREVAL_HOME)."""
        cpus = self.worker_cpus if cpus is None else cpus
        return self._start_node("worker", [f"--address={self.address}"], cpus, env)

    def kill(self, node: Node) -> None:
        """SIGKILL every process of one node at once: the node dies as a machine would."""
        _signal_session(node.session, signal.SIGKILL)

    def stop(self) -> None:
        # Workers first, then the head; SIGTERM lets the daemons exit, SIGKILL what lingers.
        for node in reversed(self.nodes):
            _signal_session(node.session, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(session_pids(n.session) for n in self.nodes):
            time.sleep(0.1)
        for node in self.nodes:
            _signal_session(node.session, signal.SIGKILL)
        self.nodes.clear()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


def session_pids(session: int) -> list[int]:
    """The processes of a session (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) == session:
                pids.append(int(entry.name))
        except (ProcessLookupError, PermissionError):
            continue
    return pids


def _signal_session(session: int, sig: signal.Signals) -> None:
    for pid in session_pids(session):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            continue
