"""CoderUJB's verdict rules, shared by both ways of running its samples (our sandboxed engine
and Defects4J): what a run of some tests says, and how FCG/APR and CTG/ITG samples are judged.

One run of tests ends in a ``TestRun``: how it ended (its status is a verdict: passed, failed,
runtime_error, timeout, memory_exceeded, infra_error) and which tests failed, named as Defects4J
names them (``pkg.Class::method``).

- FCG and APR: the named tests must pass, then the whole suite must fail no test that the
  unchanged version passes (its failing tests, measured once per version, are the baseline).
  The named tests run under the sample's time limit; the whole suite, whose length is the
  developers' and not the sample's, gets that limit plus three times what the unchanged suite
  took (``suite_wall_time``): a correct sample of a project whose suite takes minutes must not
  time out, and one that makes the suite loop still does.
  APR's ``tests_failed_before`` is the buggy version's baseline, ``tests_failed_after`` the
  suite's failing tests with the patch.
- CTG: the generated test must pass on the fixed version; its coverage is recorded then.
- ITG: the generated test must pass on the fixed version and fail on the buggy one (an
  assertion failure, an exception, running out of time or memory: anything but passing). A test
  that passes on both is ``failed`` ("does not reveal the bug"); both facts are kept in the
  measures (``passed_fixed``, ``failed_buggy``).
"""

from __future__ import annotations

from dataclasses import dataclass

from codereval.errors import UserError
from codereval.model import Outcome, Stage, Task, UjbKind, UjbMeasures, UjbSpec, Verdict


@dataclass(frozen=True, kw_only=True)
class TestRun:
    """How one run of tests ended."""

    __test__ = False

    status: Verdict
    failed: tuple[str, ...] = ()
    tests: int = 0
    detail: str = ""
    stdout_tail: str = ""
    stderr_tail: str = ""
    exit_code: int | None = None
    signal: int | None = None
    wall_time: float | None = None
    cpu_time: float | None = None
    isolation: str = ""

    @property
    def passed(self) -> bool:
        return self.status is Verdict.PASSED

    @property
    def ended_normally(self) -> bool:
        """The tests ran to their end (passing or not): their failing list is complete."""
        return self.status in (Verdict.PASSED, Verdict.FAILED, Verdict.RUNTIME_ERROR) and (
            self.tests > 0)


# The whole suite of a sample's version may take this many times the unchanged suite (a loaded
# machine, two workers, the sample's own slower code), plus the sample's own limit.
SUITE_FACTOR = 3.0


@dataclass(frozen=True, kw_only=True)
class Baseline:
    """What the unchanged version's whole suite did, measured once per version: the tests it
    fails and the time it took (0 when unknown)."""

    failing: tuple[str, ...]
    wall_time: float = 0.0


def suite_wall_time(sample_wall_time: float, baseline: Baseline) -> float:
    """The wall time a sample's run of the whole suite may take."""
    return sample_wall_time + SUITE_FACTOR * baseline.wall_time


def stage_of(status: Verdict) -> Stage:
    if status is Verdict.PASSED:
        return Stage.DONE
    if status is Verdict.FAILED:
        return Stage.CHECK
    return Stage.RUN


def new_failures(after: tuple[str, ...], before: tuple[str, ...]) -> tuple[str, ...]:
    """The tests failing after that did not fail before (a class-level failure before, such as
    a broken ``@BeforeClass``, covers the class's methods)."""
    old = set(before)
    return tuple(t for t in after if t not in old and t.split("::", 1)[0] not in old)


def suite_verdict(named: TestRun, suite: TestRun | None,
                  baseline: tuple[str, ...]) -> tuple[Verdict, str]:
    """FCG / APR: the named tests first, then the whole suite against the version's baseline."""
    if not named.passed:
        return named.status, _join("the task's tests do not pass", named.detail)
    if suite is None:
        return Verdict.INFRA_ERROR, "the whole suite was not run"
    if suite.status in (Verdict.TIMEOUT, Verdict.MEMORY_EXCEEDED, Verdict.INFRA_ERROR):
        return suite.status, _join("the whole suite", suite.detail)
    if suite.tests == 0:
        return Verdict.INFRA_ERROR, "the whole suite ran no test"
    broken = new_failures(suite.failed, baseline)
    if broken:
        more = f" and {len(broken) - 5} more" if len(broken) > 5 else ""
        return Verdict.FAILED, (f"the task's tests pass but {len(broken)} other test(s) now "
                                f"fail: {', '.join(broken[:5])}{more}")
    return Verdict.PASSED, (f"the task's tests pass; the suite ({suite.tests} tests) fails none "
                            "it passed before")


def trigger_verdict(fixed: TestRun, buggy: TestRun | None) -> tuple[Verdict, str]:
    """ITG: passes on the fixed version and fails on the buggy one."""
    if not fixed.passed:
        return fixed.status, _join("the test does not pass on the fixed version", fixed.detail)
    if buggy is None:
        return Verdict.INFRA_ERROR, "the test was not run on the buggy version"
    if buggy.status is Verdict.INFRA_ERROR:
        return Verdict.INFRA_ERROR, _join("on the buggy version", buggy.detail)
    if buggy.passed:
        return Verdict.FAILED, ("passes on the fixed version and on the buggy one: does not "
                                "reveal the bug")
    return Verdict.PASSED, (f"passes on the fixed version, fails on the buggy one "
                            f"({buggy.status.value})")


def buggy_failed(buggy: TestRun | None) -> bool | None:
    """Did the test fail on the buggy version? None when it could not be told."""
    if buggy is None or buggy.status is Verdict.INFRA_ERROR:
        return None
    return not buggy.passed


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def ujb_spec(task: Task) -> UjbSpec:
    if task.ujb is None:
        raise UserError(f"task {task.task_id} is not a CoderUJB task (it has no ujb spec)")
    return task.ujb


def versions_for(spec: UjbSpec) -> tuple[str, ...]:
    """The versions a kind runs on ("b" buggy, "f" fixed), the one its location is in first."""
    if spec.kind is UjbKind.APR:
        return ("b",)
    if spec.kind is UjbKind.ITG:
        return ("f", "b")
    return ("f",)


def outcome_of(base: dict[str, object], verdict: Verdict, detail: str, run: TestRun,
               measures: UjbMeasures) -> Outcome:
    """The outcome of a sample judged ``verdict``, with the process facts of ``run``."""
    return Outcome(**base, verdict=verdict, stage=stage_of(verdict), detail=detail,
                   exit_code=run.exit_code, signal=run.signal, wall_time=run.wall_time,
                   cpu_time=run.cpu_time, stdout_tail=run.stdout_tail,
                   stderr_tail=run.stderr_tail, isolation=run.isolation, ujb=measures)
