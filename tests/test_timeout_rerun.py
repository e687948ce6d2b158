"""A timeout that spent its wall time waiting, not computing, is run once more.

An overloaded host can stall a sample that needs milliseconds until its wall-time limit passes;
that timeout is the host's, not the sample's. A run that used under half its wall time on CPU
is therefore run a second time and only a second timeout stands. A busy loop, which is what
models' timeouts mostly are, is confirmed by its first run and costs nothing more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_engine_support import LOG_ENV, SnippetRunner, make_task, read_log

from codereval.evaluation.engine import Benchmark, EvalOptions, evaluate
from codereval.executors.sample import RERUN_NOTE, waited_out
from codereval.model import Outcome, Sample, Verdict
from codereval.sandbox import get_sandbox

# Sleeps past the limit on its first run only, as a sample stalled by a busy host would.
STALLED_ONCE = make_task(
    "stalled-once", reference="def f():\n    return 1\n",
    check="import os, time\nif os.environ['RUN_COUNT'] == '0':\n    time.sleep(60)\n"
          "assert f() == 1\n",
)  # fmt: skip
SLEEPER = make_task("sleeper", reference="def f():\n    return 1\n",
                    check="import time\ntime.sleep(60)\n")  # fmt: skip
BUSY = make_task("busy", reference="def f():\n    return 1\n", check="while True:\n    pass\n")


@pytest.fixture()
def sandbox():  # type: ignore[no-untyped-def]
    box = get_sandbox("auto")
    if "cpuacct" not in box.isolation:
        pytest.skip("needs a sandbox that measures the CPU time of the run (cpuacct cgroup)")
    return box


def _evaluate(tmp_path: Path, sandbox, tasks: list) -> dict[str, Outcome]:  # type: ignore[no-untyped-def]
    counted = [t.model_copy(update={"extra": {"counter": str(tmp_path / f"{t.task_id}.n")}})
               for t in tasks]
    report = evaluate(
        benchmark=Benchmark(name="unit", tasks=counted),
        samples=[Sample(task_id=t.task_id, code=t.reference) for t in counted],
        run_dir=tmp_path / "run",
        options=EvalOptions(jobs=2, timeout=2, progress=False),
        runners={"python-project": SnippetRunner()},
        sandbox=sandbox,
    )
    return {o.task_id: o for o in report.outcomes}


def test_a_stalled_run_is_run_again_and_its_second_verdict_stands(
    tmp_path: Path, sandbox, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setenv(LOG_ENV, str(tmp_path / "runs.log"))
    got = _evaluate(tmp_path, sandbox, [STALLED_ONCE, SLEEPER, BUSY])
    runs = read_log(tmp_path / "runs.log")
    # Passed on its second run, which says so.
    assert got["stalled-once"].verdict is Verdict.PASSED
    assert RERUN_NOTE in got["stalled-once"].detail
    # Waiting both times: a timeout, run twice.
    assert got["sleeper"].verdict is Verdict.TIMEOUT and RERUN_NOTE in got["sleeper"].detail
    assert runs.count("stalled-once#0") == 2 and runs.count("sleeper#0") == 2
    # Computing all the time: a timeout from its first run (unless the host starved that run
    # of CPU too, which the note then says).
    assert got["busy"].verdict is Verdict.TIMEOUT
    assert runs.count("busy#0") == (2 if RERUN_NOTE in got["busy"].detail else 1)


def test_only_a_timeout_that_mostly_waited_counts_as_stalled() -> None:
    def timeout(cpu: float | None, wall: float | None = 10.0,
                verdict: Verdict = Verdict.TIMEOUT) -> Outcome:
        return Outcome(task_id="t", verdict=verdict, cpu_time=cpu, wall_time=wall)

    assert waited_out(timeout(0.02))
    assert not waited_out(timeout(9.7))  # a busy loop
    assert not waited_out(timeout(None))  # CPU time unknown: nothing to tell them apart
    assert not waited_out(timeout(0.02, verdict=Verdict.FAILED))
