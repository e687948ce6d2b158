"""Nothing lost, nothing run twice, nothing left behind, under repeated crashes.

An evaluation of mixed languages (tests/crash_resume_driver.py: Python and JavaScript programs,
passing and failing, C++, and mini-java's samples in their Java project) is killed with SIGKILL
at moments drawn from a seeded generator — the driver itself, or one of its warm workers — and
resumed each time. In the end the store holds exactly one outcome per sample with the verdicts
of an uninterrupted run; no sample that was finished before a kill ran again (its row keeps the
time it was recorded); and nothing a killed driver started is left: no process, no work root,
no /dev/shm folder, no cgroup.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from live_processes import live_pids_with

from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.cgroup import probe

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BwrapSandbox.unavailable_reason() is not None,
                       reason="bubblewrap unavailable (the warm workers need it)"),
]

DRIVER = Path(__file__).with_name("crash_resume_driver.py")
SAMPLES = 302  # crash_resume_driver: 90 x 2 Python, 40 x 2 JavaScript, 6 C++, 36 Java
Row = tuple[str, int, str, str, float]  # task, index, code hash, verdict, recorded at
SURVIVOR_DEADLINE = 30.0


def described(pids: list[int]) -> list[str]:
    """Each pid with its state and command line (what a failure should show)."""
    found = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue  # gone meanwhile
        found.append(f"{pid} [{stat[stat.rfind(')') + 2:].split()[0]}] {cmdline[:300]!r}")
    return found


def rows(run: Path) -> list[Row]:
    store = run / "results.sqlite"
    if not store.exists():
        return []
    try:
        with sqlite3.connect(store) as db:
            return [tuple(r) for r in db.execute(  # type: ignore[misc]
                "SELECT task_id, sample_index, code_hash, verdict, recorded_at FROM outcomes")]
    except sqlite3.OperationalError:
        return []  # the driver is still creating it


def start(hx: Path, run: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(DRIVER), str(hx), str(run)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_until(predicate: object, proc: subprocess.Popen[bytes], limit: float = 240) -> None:
    deadline = time.monotonic() + limit
    while not predicate():  # type: ignore[operator]
        assert proc.poll() is None, f"the driver ended first: {proc.stderr.read()!r}"  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def warm_workers(driver: int) -> list[int]:
    """The driver's warm workers: their bubblewrap, whose command line binds its work root."""
    mine = set(live_pids_with(f"codereval-work-{driver}-"))
    return sorted(mine & set(live_pids_with("warm_server")))


def leftovers(pid: int) -> list[str]:
    """What a driver that was killed left: processes, folders, cgroups named with its pid."""
    found = [f"process {p}" for p in live_pids_with(f"codereval-work-{pid}-")]
    found += [str(p) for p in Path("/tmp").glob(f"codereval-work-{pid}-*")]
    found += [str(p) for p in Path("/dev/shm").glob(f"codereval-warm-{pid}-*")]
    for base in probe()[0].values():
        found += [str(p) for p in base.glob(f"run-{pid}-*")]
    return found


def test_killed_at_random_moments_and_resumed_the_run_ends_as_one_never_interrupted(
    hx: Path, tmp_path: Path
) -> None:
    baseline = subprocess.run([sys.executable, str(DRIVER), str(hx), str(tmp_path / "whole")],
                              capture_output=True, text=True, timeout=600)
    assert baseline.returncode == 0, baseline.stderr
    expected = {(t, i, h): v for t, i, h, v, _ in rows(tmp_path / "whole")}
    assert len(expected) == SAMPLES

    run = tmp_path / "run"
    chance = random.Random(34)
    # Where each crash happens: the number of outcomes stored by then, and what is killed.
    moments = sorted(chance.sample(range(15, SAMPLES - 30), 6))
    kinds = ["driver", "worker", "driver", "driver", "worker", "driver"]
    killed: list[int] = []
    finished: dict[tuple[str, int, str], float] = {}
    worker_kills = 0
    proc = start(hx, run)
    for moment, kind in zip(moments, kinds, strict=True):
        wait_until(lambda m=moment: len(rows(run)) >= m, proc)
        if kind == "worker":
            wait_until(lambda pid=proc.pid: warm_workers(pid), proc)
            for pid in warm_workers(proc.pid):
                os.kill(pid, signal.SIGKILL)
            worker_kills += 1
            continue
        proc.kill()
        proc.wait()
        killed.append(proc.pid)
        # What it started dies with it (bubblewrap's --die-with-parent, the pid namespaces).
        # A killed JVM can take seconds to exit on a loaded machine: what is still there
        # after the deadline was left behind.
        deadline = time.monotonic() + SURVIVOR_DEADLINE
        while live_pids_with(f"codereval-work-{proc.pid}-") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not described(live_pids_with(f"codereval-work-{proc.pid}-"))
        for task, index, code, verdict, at in rows(run):
            if verdict != "infra_error":
                finished.setdefault((task, index, code), at)
        proc = start(hx, run)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert worker_kills == 2 and len(killed) == 4
    # A sample whose worker was killed under it is an infra_error, run again on the next resume.
    if any(r[3] == "infra_error" for r in rows(run)):
        again = subprocess.run([sys.executable, str(DRIVER), str(hx), str(run)],
                               capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr

    final = rows(run)
    assert len(final) == SAMPLES == len({(t, i, h) for t, i, h, _, _ in final})
    assert {(t, i, h): v for t, i, h, v, _ in final} == expected
    # Finished before a crash, never run (nor recorded) again.
    recorded = {(t, i, h): at for t, i, h, _, at in final}
    assert len(finished) >= moments[0]
    assert {key: recorded[key] for key in finished} == finished
    # The resumed runs swept what each killed driver left.
    for pid in killed:
        assert not leftovers(pid), (pid, leftovers(pid))
