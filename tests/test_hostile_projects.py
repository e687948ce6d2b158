"""The Java hostile corpus inside real project runners: mini-java (a CoderEval-Java-shaped
project) and mini-coderujb (a method for FCG, a test method for CTG and ITG), fresh, warm and on
a Ray cluster.

Each program of tests/hostile_corpus.py's Java corpus, and two aimed at a project (its
sources and build output; other samples' folders), goes in as the task's method or as a
generated test method, through ``evaluate`` as a user runs it. Then checked, not assumed: no
program passes; none is a build error of ours or an infra error; none prints a secret; the
host file is unchanged and none was created; the listeners got nothing; no sleeper survives;
every built environment (sources, classes, dependencies) is byte for byte what it was; and
the task's reference, run after them, passes on the same executor.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import in_own_process
from hostile_corpus import (
    JAVA,
    JAVA_PROJECT,
    fill,
    java_method_code,
    java_test_method_code,
)
from hostile_host import Host, host_problems, problems_of
from test_marker_secrecy_programs import describe

from codereval.api import Run, evaluate, load_benchmark
from codereval.environments.java import source_hash
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome, Stage, Verdict
from codereval.sandbox.bwrap import BwrapSandbox

if TYPE_CHECKING:
    from codereval.executors.ray_local import LocalRayCluster

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BwrapSandbox.unavailable_reason() is not None,
                       reason="bubblewrap unavailable"),
    pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK"),
]

# The corpus's limit (the programs that spin or sleep take it all); the references get more,
# a slow machine must not fail them.
WALL_TIME = 5.0
REFERENCE_TIME = 30.0

# benchmark, task, how a program is written for it
TARGETS: dict[str, tuple[str, str, Callable[[str], str]]] = {
    "mini-java": ("mini-java", "1ad67bd2eadffd936a3a768f",
                  java_method_code("public static long gcd(long a, long b)", "return 0;")),
    "coderujb-fcg": ("mini-coderujb", "fcg-langlite-1-abbreviate",
                     java_method_code("public static String abbreviate(String str, int maxWidth)",
                                      "return null;")),
    "coderujb-ctg": ("mini-coderujb", "ctg-langlite-2-toInt", java_test_method_code),
}
# The CoderUJB runner runs fresh under every executor (its warm run would be the fresh one
# again); ITG's test method goes through the same runner as CTG's, on two versions.
RUNS = [("mini-java", "fresh"), ("mini-java", "warm"), ("coderujb-fcg", "fresh"),
        ("coderujb-ctg", "fresh")]
PROGRAMS = JAVA + JAVA_PROJECT
# Stages before anything of the sample's ran (an executor has not been chosen for it yet).
BEFORE_RUNNING = {Stage.EXTRACT, Stage.ENVIRONMENT, Stage.WORKSPACE, Stage.INJECT, Stage.COMPILE}


@pytest.fixture(scope="module")
def home() -> Iterator[Path]:
    # Outside /tmp, where the sandbox shows the host read-only: the programs see every built
    # environment at its own path, not only the one their run mounts.
    path = Path("/var/tmp") / f"codereval-hostile-home-{secrets.token_hex(6)}"
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def built(home: Path) -> dict[str, str]:
    """Every environment built under ``home`` and every file beside them, hashed."""
    envs = home / "envs"
    if not envs.is_dir():
        return {}
    return {p.name: source_hash(p) if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(envs.iterdir())}


def rows_for(task_id: str, codes: list[str]) -> list[dict[str, object]]:
    return [{"task_id": task_id, "index": i, "code": code} for i, code in enumerate(codes)]


def run_target(target: str, codes: list[str], run_dir: Path, **options: object) -> list[Outcome]:
    name, task_id, _ = TARGETS[target]
    benchmark = load_benchmark(name).select(task_ids=[task_id])
    options.setdefault("timeout", WALL_TIME)
    if options.get("executor") != "ray":  # a Ray node runs as many as it has CPUs
        options["jobs"] = 2
    run: Run = evaluate(benchmark, rows_for(task_id, codes), run_dir=run_dir, memory_mb=512,
                        **options)  # type: ignore[arg-type]
    got = {o.sample_index: o for o in run.outcomes}
    return [got[i] for i in range(len(codes))]


def reference_of(target: str) -> str:
    name, task_id, _ = TARGETS[target]
    (task,) = load_benchmark(name).select(task_ids=[task_id]).tasks
    return task.reference


def corpus_problems(outcomes: list[Outcome], host: Host, executor: str) -> list[str]:
    problems = []
    for (label, _), outcome in zip(PROGRAMS, outcomes, strict=True):
        problems += problems_of(label, outcome, host)
        if outcome.stage not in BEFORE_RUNNING and outcome.provenance.executor != executor:
            problems.append(f"{label}: ran {outcome.provenance.executor}, not {executor}")
    return problems


@pytest.mark.parametrize(("target", "executor"), RUNS)
def test_no_hostile_program_in_a_project_passes_reaches_the_host_or_changes_the_project(
    target: str, executor: str, home: Path, host: Host, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(home))
    reference = reference_of(target)
    # The reference first: it builds the environments the programs then aim at.
    (before_run,) = run_target(target, [reference], tmp_path / "before", executor=executor,
                               timeout=REFERENCE_TIME)
    assert before_run.verdict is Verdict.PASSED, describe(before_run)
    assert before_run.provenance.executor == executor, describe(before_run)
    before = built(home)
    assert before, "no environment was built"
    host.values["project"] = home / "envs"
    wrap = TARGETS[target][2]
    outcomes = run_target(target, [wrap(fill(code, host.values)) for _, code in PROGRAMS],
                          tmp_path / "corpus", executor=executor)
    problems = corpus_problems(outcomes, host, executor)
    problems += host_problems(host)
    changed = sorted(name for name, digest in before.items() if built(home).get(name) != digest)
    if changed:
        problems.append(f"environments changed: {changed}")
    if (home / "envs" / "pwned").exists():
        problems.append("a file was created beside the environments")
    (after,) = run_target(target, [reference], tmp_path / "after", executor=executor,
                          timeout=REFERENCE_TIME)
    if after.verdict is not Verdict.PASSED or after.provenance.executor != executor:
        problems.append(f"the reference after the corpus: {describe(after)}")
    assert not problems, "\n\n".join(problems)


@pytest.mark.xdist_group("ray-cluster")
def test_through_ray_no_hostile_program_in_a_project_passes_or_reaches_the_host(
    cluster: LocalRayCluster, node_homes: list[Path], host: Host, tmp_path: Path
) -> None:
    # One project of each runner. Each node builds its environments in its own home: the
    # references first, so that every node has them before the programs aim at them.
    targets = ("mini-java", "coderujb-fcg")
    for target in targets:
        warmed = in_own_process(run_target, target, [reference_of(target)] * 4,
                                tmp_path / f"{target}-before", executor="ray",
                                ray_address=cluster.address, timeout=REFERENCE_TIME)
        assert all(o.verdict is Verdict.PASSED for o in warmed), [describe(o) for o in warmed]
    before = [built(home) for home in node_homes]
    problems = []
    for target in targets:
        host.values["project"] = node_homes[0] / "envs"
        wrap = TARGETS[target][2]
        corpus: list[Outcome] = in_own_process(
            run_target, target, [wrap(fill(code, host.values)) for _, code in PROGRAMS],
            tmp_path / target, executor="ray", ray_address=cluster.address)
        (after,) = in_own_process(run_target, target, [reference_of(target)],
                                  tmp_path / f"{target}-after", executor="ray",
                                  ray_address=cluster.address, timeout=REFERENCE_TIME)
        problems += [p for (label, _), o in zip(PROGRAMS, corpus, strict=True)
                     for p in problems_of(label, o, host)]
        problems += [f"{label}: not run by ray ({o.provenance.executor})"
                     for (label, _), o in zip(PROGRAMS, corpus, strict=True)
                     if o.stage not in BEFORE_RUNNING
                     and not o.provenance.executor.startswith("ray")]
        if after.verdict is not Verdict.PASSED:
            problems.append(f"{target}'s reference through Ray: {describe(after)}")
    problems += host_problems(host)
    for home, hashes in zip(node_homes, before, strict=True):
        changed = sorted(name for name, digest in hashes.items() if built(home).get(name) != digest)
        if changed:
            problems.append(f"{home.name}: environments changed: {changed}")
    assert not problems, "\n\n".join(problems)


def test_the_project_checks_see_each_escape_when_nothing_contains_it(
    host: Host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The two programs aimed at a project, with no sandbox: the environment check and the
    # secret check must fire, or they check nothing. A home of its own: this one is damaged.
    home = tmp_path / "home"
    monkeypatch.setenv("CODEREVAL_HOME", str(home))
    (ready,) = run_target("mini-java", [reference_of("mini-java")], tmp_path / "before",
                          executor="fresh", sandbox="rlimit", timeout=REFERENCE_TIME)
    assert ready.verdict is Verdict.PASSED, describe(ready)
    before = built(home)
    host.values["project"] = home / "envs"
    wrap = TARGETS["mini-java"][2]
    # One after the other: the writes reach the class-data archive every JVM of the project
    # maps, and would bring the reader down with them.
    (_, read) = [
        run_target("mini-java", [wrap(fill(code, host.values))], tmp_path / label[:5],
                   executor="fresh", sandbox="rlimit")[0] for label, code in JAVA_PROJECT]
    assert [label for label, _ in JAVA_PROJECT] == ["writes into the project and its build output",
                                                    "reads other samples' folders"]
    assert host.secret in read.stdout_tail, describe(read)
    changed = [name for name, digest in before.items() if built(home).get(name) != digest]
    assert any(name.startswith("codereval-mini---textkit-") for name in changed), changed
    assert (home / "envs" / "pwned").exists()
