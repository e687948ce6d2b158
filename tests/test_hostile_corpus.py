"""The hostile corpus (tests/hostile_corpus.py) through the real runners: fresh, warm, and
(Python and JavaScript) on a Ray cluster.

For every language and executor, each hostile program of HumanEval-X's task 0 is run, and
then checked, not assumed: no program passes (each answers wrongly); none builds badly (a bug of
this test) or is an infra error; none prints what it was not to see (a secret in the host's
/tmp and /dev/shm); and after the batch the host file it tried to overwrite is unchanged, the
one it tried to create does not exist, the listeners on the host (TCP, UDP, unix socket) got
nothing, no process it started survives, and the task's reference, run next, passes.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import in_own_process
from hostile_corpus import CORPUS, PYTHON_TEST_TAMPERING, fill, python_code
from live_processes import live_pids_with
from test_humanevalx_runner import make_ctx, run_all
from test_marker_secrecy_programs import context, describe

from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Outcome, Verdict
from codereval.runners.program import WARM_LANGUAGES, ProgramRunner
from codereval.sandbox import get_sandbox
from codereval.sandbox.bwrap import BwrapSandbox

if TYPE_CHECKING:
    from codereval.executors.ray_local import LocalRayCluster

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BwrapSandbox.unavailable_reason() is not None,
                       reason="bubblewrap unavailable"),
]

WALL_TIME = 6.0
# What may end at the wall-time limit rather than by itself.
MAY_TIME_OUT = {"sleeps past the limit", "busy past the limit", "endless output", "fork bomb",
                "spawn bomb", "thread bomb", "worker thread bomb", "goroutine bomb",
                "memory hog", "disk hog"}


@dataclasses.dataclass
class Host:
    """What the programs aim at on the host, and what reached it."""

    values: dict[str, object]
    canary: Path
    canary_text: str
    outside: Path
    secret: str
    received: list[str]


@pytest.fixture()
def host(tmp_path: Path) -> Iterator[Host]:
    token = secrets.token_hex(8)
    # Outside /tmp: the sandbox's root is the host's, read-only, so the program can see it.
    aimed = Path("/var/tmp") / f"codereval-hostile-{token}"
    aimed.mkdir()
    canary, outside = aimed / "canary", aimed / "created"
    canary.write_text(f"canary {token}\n")
    secret = f"SECRET-{token}"
    (tmp_path / "secret").write_text(secret)
    shm_secret = Path("/dev/shm") / f"codereval-hostile-{secret}"
    shm_secret.write_text(secret)
    received: list[str] = []
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "host.sock"))
    unix.listen(16)
    stop = threading.Event()

    def listen(sock: socket.socket, kind: str, accept: bool) -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                if accept:
                    conn, _ = sock.accept()
                    received.append(f"{kind} connection")
                    conn.close()
                else:
                    sock.recvfrom(64)
                    received.append(f"{kind} datagram")
            except OSError:
                continue

    threads = [threading.Thread(target=listen, args=args, daemon=True)
               for args in ((tcp, "tcp", True), (udp, "udp", False), (unix, "unix", True))]
    for thread in threads:
        thread.start()
    values: dict[str, object] = {
        "canary": canary, "outside": outside, "secret": tmp_path / "secret",
        "tcp": tcp.getsockname()[1], "udp": udp.getsockname()[1], "sock": tmp_path / "host.sock",
        "sleep": 7000 + secrets.randbelow(2000),
    }
    try:
        yield Host(values, canary, canary.read_text(), outside, secret, received)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for sock in (tcp, udp, unix):
            sock.close()
        shm_secret.unlink(missing_ok=True)
        shutil.rmtree(aimed, ignore_errors=True)


def host_problems(host: Host) -> list[str]:
    """What reached the host: sleepers alive, listeners' mail, the host files touched."""
    found = []
    sleepers = f"sleep {host.values['sleep']}"
    deadline = time.monotonic() + 5
    while live_pids_with(sleepers, exact=True) and time.monotonic() < deadline:
        time.sleep(0.1)
    if live_pids_with(sleepers, exact=True):
        found.append(f"survivors: {live_pids_with(sleepers, exact=True)}")
    time.sleep(0.5)  # what a listener was sent is in by now
    if host.received:
        found.append(f"the host's listeners got: {sorted(set(host.received))}")
    if host.canary.read_text() != host.canary_text:
        found.append("the host file was overwritten")
    if host.outside.exists():
        found.append("a host file was created")
    return found


# What the toolchain may refuse to build (the attempt is then over before it runs).
MAY_BE_REFUSED = {"a main of its own, the test's renamed",
                  "a class named Arrays shadows the test's", "a class named AssertionError",
                  "a package variable named like the test's assert", "a TestMain of its own"}


def problems_of(label: str, outcome: Outcome, host: Host) -> list[str]:
    said = f"{label}:\n{describe(outcome)}"
    found = []
    if outcome.verdict is Verdict.PASSED:
        found.append(f"PASSED {said}")
    refused = (Verdict.COMPILE_ERROR, Verdict.SYNTAX_ERROR) if label in MAY_BE_REFUSED else ()
    if outcome.verdict in (Verdict.COMPILE_ERROR, Verdict.SYNTAX_ERROR, Verdict.INFRA_ERROR) and (
            outcome.verdict not in refused):
        found.append(f"{outcome.verdict.value} (a bug of this test or the harness) {said}")
    if outcome.verdict is Verdict.TIMEOUT and label not in MAY_TIME_OUT:
        found.append(f"timed out {said}")
    if host.secret in outcome.stdout_tail + outcome.stderr_tail + outcome.detail:
        found.append(f"printed the host's secret {said}")
    return found


# Languages built in the sandbox (C++, Go, Rust) run fresh under the warm executor too: their
# warm run would be the fresh one again.
RUNS = [(language, executor) for language in CORPUS for executor in ("fresh", "warm")
        if executor == "fresh" or language in WARM_LANGUAGES]


@pytest.mark.parametrize(("language", "executor"), RUNS)
def test_no_hostile_program_passes_reaches_the_host_or_survives(
    language: str, executor: str, hx: Path, runner: ProgramRunner, host: Host, tmp_path: Path
) -> None:
    programs, wrap = CORPUS[language]
    build: Callable[[str], str] = wrap  # type: ignore[assignment]
    assert len(programs) >= 25
    task = load_humanevalx(language, data_dir=hx)[0]
    ctx = context(executor, tmp_path, wall_time=WALL_TIME)
    try:
        outcomes = run_all(runner, ctx, [(task, build(fill(code, host.values)))
                                         for _, code in programs])
        problems = [p for (label, _), o in zip(programs, outcomes, strict=True)
                    for p in problems_of(label, o, host)]
        # Whatever they started is gone (the sleepers would live for thousands of seconds).
        problems += host_problems(host)
        # The next sample is unaffected.
        (after,) = run_all(runner, ctx, [(task, task.reference)])
        if after.verdict is not Verdict.PASSED:
            problems.append(f"the reference after the corpus: {describe(after)}")
        if executor == "warm" and after.provenance.executor != "warm":
            problems.append(f"the reference after the corpus ran {after.provenance.executor}")
    finally:
        if ctx.warm is not None:
            ctx.warm.close()
    assert not problems, "\n\n".join(problems)


ESCAPES = ("sleepers left behind", "overwrites a host file", "creates a host file",
           "reads another folder of the host", "tcp to the host", "udp to the host",
           "unix socket of the host")


def test_the_checks_see_each_escape_when_nothing_contains_it(
    hx: Path, runner: ProgramRunner, host: Host, tmp_path: Path
) -> None:
    # The same programs without a sandbox: every check above must fire, or it checks nothing.
    programs = [(label, code) for label, code in CORPUS["python"][0] if label in ESCAPES]
    assert len(programs) == len(ESCAPES)
    task = load_humanevalx("python", data_dir=hx)[0]
    ctx = dataclasses.replace(make_ctx(tmp_path / "work", wall_time=WALL_TIME),
                              sandbox=get_sandbox("none"))
    build: Callable[[str], str] = CORPUS["python"][1]  # type: ignore[assignment]
    try:
        outcomes = run_all(runner, ctx, [(task, build(fill(code, host.values)))
                                         for _, code in programs])
        leaked = [label for (label, _), o in zip(programs, outcomes, strict=True)
                  if any("secret" in p for p in problems_of(label, o, host))]
        found = host_problems(host)
    finally:
        for pid in live_pids_with(f"sleep {host.values['sleep']}", exact=True):
            os.kill(pid, signal.SIGKILL)
    assert leaked == ["reads another folder of the host"]
    assert any(p.startswith("survivors") for p in found)
    assert "the host file was overwritten" in found and "a host file was created" in found
    got = next(p for p in found if p.startswith("the host's listeners got"))
    assert all(kind in got for kind in ("tcp connection", "udp datagram", "unix connection"))


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="the task's own test compares with ==, which an object of the "
                   "sample's can satisfy: a weakness of the benchmark's tests, run as written")
def test_what_tampering_with_the_tests_own_checks_can_do(
    hx: Path, runner: ProgramRunner, tmp_path: Path
) -> None:
    task = load_humanevalx("python", data_dir=hx)[0]
    ctx = make_ctx(tmp_path / "work", wall_time=WALL_TIME)
    pairs = [(task, python_code(code)) for _, code in PYTHON_TEST_TAMPERING]
    outcomes = run_all(runner, ctx, pairs)
    assert all(o.verdict is not Verdict.PASSED for o in outcomes), [describe(o) for o in outcomes]


@pytest.mark.xdist_group("ray-cluster")
def test_through_ray_no_hostile_program_passes_reaches_the_host_or_survives(
    cluster: LocalRayCluster, hx: Path, host: Host, tmp_path: Path
) -> None:
    # The nodes are processes of this machine: what reaches the host is seen as above.
    from codereval.api import evaluate, load_benchmark

    tasks, rows, labels = [], [], []
    for language in ("python", "js"):
        programs, wrap = CORPUS[language]
        build: Callable[[str], str] = wrap  # type: ignore[assignment]
        task = load_humanevalx(language, data_dir=hx)[0]
        tasks.append(task)
        for index, (label, code) in enumerate(programs):
            rows.append({"task_id": task.task_id, "index": index,
                         "code": build(fill(code, host.values))})
            labels.append(label)
        rows.append({"task_id": task.task_id, "index": len(programs), "code": task.reference})
        labels.append("the reference")
    run = in_own_process(evaluate, load_benchmark(tasks), rows, run_dir=tmp_path / "ray",
                         executor="ray", ray_address=cluster.address, timeout=WALL_TIME)
    got = {(o.task_id, o.sample_index): o for o in run.outcomes}
    problems = []
    for row, label in zip(rows, labels, strict=True):
        outcome = got[(str(row["task_id"]), int(row["index"]))]  # type: ignore[call-overload]
        if label == "the reference":
            if outcome.verdict is not Verdict.PASSED:
                problems.append(f"the reference through Ray: {describe(outcome)}")
            continue
        problems += problems_of(label, outcome, host)
        if not outcome.provenance.executor.startswith("ray") and outcome.stage.value not in (
                "extract", "inject"):
            problems.append(f"{label}: not run by ray ({outcome.provenance.executor})")
    problems += host_problems(host)
    assert not problems, "\n\n".join(problems)
