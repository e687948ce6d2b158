"""`--executor ray` on a real Ray cluster on loopback: a head and a worker, each a `ray start`.

The mini benchmarks (with their hostile samples) and a HumanEval slice give the same outcomes
through the cluster as on the local executor, on nodes that run warm (the mini benchmarks) and
on nodes that run fresh (the slice); each node builds the environments it takes in its
own cache; a killed driver resumes without running a finished sample again; a node killed mid-run
costs only its in-flight samples, which run elsewhere and are counted once.

One cluster per session; the xdist_group keeps every test of this file on one xdist worker, so
two clusters never start at once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import in_own_process

from codereval.api import evaluate, load_benchmark
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

from codereval.executors.ray_local import LocalRayCluster  # noqa: E402

pytestmark = [pytest.mark.xdist_group("ray-cluster"), pytest.mark.slow]

CODEREVAL = str(Path(sys.executable).parent / "codereval")
NORMALIZE = "fe3947f5ba6363ba3802a73e"  # mini-python: normalize_whitespace, a module function


# The cluster and its nodes' homes (fixtures cluster, node_homes) are in conftest.py, shared
# with the other tests that run on Ray.


def keyed(outcomes: list[Outcome]) -> dict[tuple[str, int], Outcome]:
    return {(o.task_id, o.sample_index): o for o in outcomes}


def assert_same_outcomes(local: list[Outcome], remote: list[Outcome], *, nodes: str) -> None:
    """Same verdict, stage, exit and environment for every sample; only the executor differs:
    on nodes that run warm, what the local run forked from a warm worker says ray-warm, the
    rest ray; on nodes that run fresh, everything says ray."""
    here, there = keyed(local), keyed(remote)
    assert here.keys() == there.keys()
    for key, mine in here.items():
        theirs = there[key]
        assert (theirs.verdict, theirs.stage, theirs.exit_code, theirs.signal) == (
            mine.verdict, mine.stage, mine.exit_code, mine.signal,
        ), (key, mine.detail, theirs.detail)  # fmt: skip
        assert theirs.isolation == mine.isolation
        local_executor = mine.provenance.executor
        assert theirs.provenance.model_copy(update={"executor": local_executor}) == mine.provenance
        # The local run is the default executor: warm for Python where bwrap works; a sample
        # that ran no process (a syntax error) names none on either side.
        if local_executor == "none":
            assert theirs.provenance.executor == "none", key
            continue
        assert local_executor in ("fresh", "warm")
        expected = "ray-warm" if nodes == "warm" and local_executor == "warm" else "ray"
        assert theirs.provenance.executor == expected, (key, local_executor)


def ran_on(run_dir: Path, *, nodes: str = "fresh") -> dict[str, int]:
    """node -> samples it returned, checking that every node ran them as ``nodes`` says."""
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["executor"]["name"] == "ray"
    assert {n["executor"] for n in meta["executor"]["nodes"]} == {nodes}
    return {n["node"]: n["samples"] for n in meta["executor"]["nodes"]}


# The mini benchmarks' own tests use 20 s: under a loaded CI machine a legitimate sample must
# not time out in one run and not the other.
def test_mini_python_through_the_cluster_equals_the_local_executor(
    cluster: LocalRayCluster, node_homes: list[Path], tmp_path: Path
) -> None:
    bench = load_benchmark("mini-python")
    local = evaluate(bench, None, run_dir=tmp_path / "local", jobs=2, timeout=20)
    remote = in_own_process(
        evaluate, bench, None, run_dir=tmp_path / "ray", timeout=20, executor="ray",
        ray_address=cluster.address,
    )  # fmt: skip
    assert len(remote.outcomes) == len(remote.samples) == 106
    assert_same_outcomes(local.outcomes, remote.outcomes, nodes="warm")
    assert sum(o.provenance.executor == "ray-warm" for o in remote.outcomes) > 80
    # Both nodes worked, and each built the environments of the groups it took, keyed by the
    # same content hash as the local build.
    per_node = ran_on(tmp_path / "ray", nodes="warm")
    assert len(per_node) == 2 and all(n > 0 for n in per_node.values())
    assert sum(per_node.values()) == 106
    keys = {o.provenance.environment for o in remote.outcomes}
    keys = {k for k in keys if re.fullmatch(r"[0-9a-f]{20}", k)}  # not "python-3.11"
    built = {p.name.rsplit("-", 1)[1] for h in node_homes for p in (h / "envs").glob("*-*")}
    assert len(keys) == 2 and keys <= built


@pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")
def test_mini_java_through_the_cluster_equals_the_local_executor(
    cluster: LocalRayCluster, tmp_path: Path
) -> None:
    bench = load_benchmark("mini-java")
    local = evaluate(bench, None, run_dir=tmp_path / "local", jobs=2, timeout=20)
    remote = in_own_process(
        evaluate, bench, None, run_dir=tmp_path / "ray", timeout=20, executor="ray",
        ray_address=cluster.address,
    )  # fmt: skip
    assert len(remote.outcomes) == 37
    assert_same_outcomes(local.outcomes, remote.outcomes, nodes="warm")
    assert any(o.provenance.executor == "ray-warm" for o in remote.outcomes)


def test_humaneval_programs_through_the_cluster_equal_the_local_executor(
    cluster: LocalRayCluster, tmp_path: Path
) -> None:
    bench = load_benchmark("humaneval")
    tasks = bench.tasks[:12]
    samples = [
        *({"task_id": t.task_id, "completion": t.reference} for t in tasks),
        *({"task_id": t.task_id, "completion": "    return None\n"} for t in tasks),
    ]
    small = load_benchmark(tasks)
    local = evaluate(small, samples, run_dir=tmp_path / "local", jobs=2)
    remote = in_own_process(
        evaluate, small, samples, run_dir=tmp_path / "ray", executor="ray",
        ray_address=cluster.address, node_executor="fresh",
    )  # fmt: skip
    assert_same_outcomes(local.outcomes, remote.outcomes, nodes="fresh")
    ran_on(tmp_path / "ray", nodes="fresh")
    assert remote.counts["passed"] == 12 and len(remote.outcomes) == 24


def slow_samples(log: Path, count: int, *, seconds: float) -> list[dict[str, object]]:
    """Passing samples of one task that take ``seconds`` and log, as they start, their index
    and their workspace (--sandbox none lets them write the log); a node's workspaces are
    under codereval-work-<pid of its worker>-."""
    reference = next(t for t in load_benchmark("mini-python").tasks if t.task_id == NORMALIZE)
    rows = []
    for index in range(count):
        logger = (
            f"import os, time\nopen({str(log)!r}, 'a').write(f'{index} {{os.getcwd()}}\\n')\n"
            f"time.sleep({seconds})\n"
        )
        rows.append({"task_id": NORMALIZE, "index": index, "code": reference.reference + logger})
    return rows


def start_cli(
    tmp_path: Path, rows: list[dict[str, object]], address: str
) -> tuple[list[str], subprocess.Popen[str]]:
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = [
        CODEREVAL, "evaluate", "--benchmark", "mini-python", "--samples", str(samples),
        "--sandbox", "none", "--executor", "ray", "--ray-address", address,
        "--out", str(tmp_path / "run"),
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return argv, proc


def stored(run_dir: Path) -> list[int]:
    store = run_dir / "results.sqlite"
    if not store.exists():
        return []
    with sqlite3.connect(store) as conn:
        try:
            return [i for (i,) in conn.execute("SELECT sample_index FROM outcomes")]
        except sqlite3.OperationalError:
            return []


def started(log: Path) -> list[tuple[str, int]]:
    """(sample index, pid of the node worker that ran it) per start, in order."""
    if not log.exists():
        return []
    rows = []
    for line in log.read_text().splitlines():
        index, cwd = line.split(" ", 1)
        found = re.search(r"codereval-work-(\d+)-", cwd)
        assert found, cwd
        rows.append((index, int(found.group(1))))
    return rows


def session_of(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except ProcessLookupError:
        return None


def wait_for(predicate: object, proc: subprocess.Popen[str], *, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while not predicate():  # type: ignore[operator]
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["kill -9", "ctrl-c"])
def test_stopping_the_driver_then_rerunning_never_runs_a_finished_sample_again(
    cluster: LocalRayCluster, tmp_path: Path, how: str
) -> None:
    log = tmp_path / "runs.log"
    argv, proc = start_cli(tmp_path, slow_samples(log, 12, seconds=0.4), cluster.address)
    wait_for(lambda: len(stored(tmp_path / "run")) >= 3, proc)
    if how == "kill -9":
        proc.kill()
        proc.communicate()
    else:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert err.strip().splitlines()[-1].startswith("error: interrupted;")
        assert json.loads((tmp_path / "run/run.json").read_text())["status"] == "interrupted"
    finished = {str(i) for i in stored(tmp_path / "run")}
    before = started(log)
    resumed = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(finished)} already done" in resumed.stdout
    after = [index for index, _ in started(log)[len(before) :]]
    assert not finished & set(after)
    assert set(after) == {str(i) for i in range(12)} - finished
    outcomes = [json.loads(line) for line in (tmp_path / "run/outcomes.jsonl").open()]
    assert sorted(o["sample_index"] for o in outcomes) == list(range(12))
    assert {o["verdict"] for o in outcomes} == {"passed"}


def test_a_node_killed_mid_run_costs_only_its_in_flight_samples(
    cluster: LocalRayCluster, node_homes: list[Path], tmp_path: Path
) -> None:
    # Sharing the worker's cache (built by now), it starts samples without building first.
    doomed = cluster.add_worker(env={"CODEREVAL_HOME": str(node_homes[1])})
    log = tmp_path / "runs.log"
    _, proc = start_cli(tmp_path, slow_samples(log, 20, seconds=1.0), cluster.address)
    # Kill the node while a sample it started is still running (each takes a second).
    victims: list[str] = []

    def doomed_is_running() -> bool:
        victims[:] = [i for i, pid in started(log) if session_of(pid) == doomed.session]
        return bool(victims)

    wait_for(doomed_is_running, proc)
    cluster.kill(doomed)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    lost = re.search(r"lost node (\S+) \((\w+)\); (\d+) in-flight sample", err)
    assert lost, err
    assert int(lost.group(3)) >= 1
    # What it was running ran again on another node ...
    starts = started(log)
    assert sorted({i for i, _ in starts}) == sorted(str(i) for i in range(20))
    for victim in victims:
        assert sum(i == victim for i, _ in starts) >= 2, starts
    # ... yet every sample has exactly one outcome, in the store and in the export.
    run_dir = tmp_path / "run"
    assert sorted(stored(run_dir)) == list(range(20))
    outcomes = [json.loads(line) for line in (run_dir / "outcomes.jsonl").open()]
    assert sorted(o["sample_index"] for o in outcomes) == list(range(20))
    assert {o["verdict"] for o in outcomes} == {"passed"}
    assert "20 run now" in out
    assert sum(ran_on(run_dir).values()) == 20


def start_with_tests_gone(address: str, tests: Path) -> str:
    """What starting the Ray executor says when the tests tree it was given is gone by then."""
    from codereval.errors import UserError
    from codereval.executors import ExecutorOptions, Job, load_executor
    from codereval.sandbox import Limits

    bench = load_benchmark("mini-python")
    job = Job(
        benchmark_version=bench.version,
        tasks={t.task_id: t for t in bench.tasks},
        runners={},
        pending=[],
        limits=Limits(wall_time=5),
        tests_dir=tests,
    )
    executor = load_executor("ray", ExecutorOptions(ray_address=address))
    tests.rmdir()
    try:
        executor.start(job)
    except UserError as exc:
        return exc.one_line()
    finally:
        executor.close()
    return "(started)"


def test_a_path_the_nodes_cannot_see_is_one_line_naming_node_and_path(
    cluster: LocalRayCluster, tmp_path: Path
) -> None:
    # Here the tests tree exists when the driver checks it and is gone before the nodes look,
    # as a path on the driver's own disk is missing on the nodes of a real cluster.
    tests = tmp_path / "official"
    tests.mkdir()
    message = in_own_process(start_with_tests_gone, cluster.address, tests)
    assert "\n" not in message
    assert re.search(r"^node \S+: cannot see the tests directory \S+/official ", message), message
