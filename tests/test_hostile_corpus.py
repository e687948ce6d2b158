"""The hostile corpus (tests/hostile_corpus.py) through the real runners: fresh, warm, and on a
Ray cluster.

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
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import in_own_process
from hostile_corpus import CORPUS, PYTHON_TEST_TAMPERING, fill, python_code
from hostile_host import MAY_TIME_OUT, Host, host_problems, problems_of
from live_processes import live_pids_with
from test_humanevalx_runner import make_ctx, run_all
from test_marker_secrecy_programs import context, describe

from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Verdict
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


# Through Ray, the languages built in the sandbox leave out the programs that only spend the
# wall time (bombs, hogs, endless output, sleeping): a node runs them under the very limits and
# runner measured above, and each would cost a build and the whole limit again.
RAY_PROGRAMS = {language: [(label, code) for label, code in CORPUS[language][0]
                           if language in WARM_LANGUAGES or label not in MAY_TIME_OUT]
                for language in CORPUS}


# Go and Rust through Ray take minutes (each node's build caches start cold, as a new machine's
# do): run on request, `CODEREVAL_LONG_TESTS=1 pytest tests/test_hostile_corpus.py -k ray`.
LONG = pytest.mark.skipif(not os.environ.get("CODEREVAL_LONG_TESTS"),
                          reason="minutes long: set CODEREVAL_LONG_TESTS=1 to run it")


@pytest.mark.xdist_group("ray-cluster")
@pytest.mark.parametrize("languages", [("python", "js", "java"), ("cpp",),
                                       pytest.param(("go", "rust"), marks=LONG)],
                         ids="+".join)
def test_through_ray_no_hostile_program_passes_reaches_the_host_or_survives(
    languages: tuple[str, ...], cluster: LocalRayCluster, hx: Path, host: Host, tmp_path: Path
) -> None:
    # The nodes are processes of this machine: what reaches the host is seen as above.
    from codereval.api import evaluate, load_benchmark

    tasks, rows, labels = [], [], []
    for language in languages:
        programs = RAY_PROGRAMS[language]
        build: Callable[[str], str] = CORPUS[language][1]  # type: ignore[assignment]
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
                "extract", "inject", "compile"):
            problems.append(f"{label}: not run by ray ({outcome.provenance.executor})")
    problems += host_problems(host)
    assert not problems, "\n\n".join(problems)
