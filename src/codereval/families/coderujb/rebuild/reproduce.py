"""Does a rebuilt bug behave as Defects4J says? The buggy version must fail exactly its trigger
tests and the fixed version must pass them.

Both versions are built into ordinary environments and the test classes that hold the trigger
tests run, unchanged, in the sandbox on each. A test that fails on the fixed version too is the
JDK's or the environment's (Java 17 against Defects4J's Java 8): it does not count either way,
but a trigger test among them means the bug is not reproduced.

A buggy version whose trigger classes do not run to their end (a trigger test that loops or
fills the heap: Lang-43) has its trigger tests run one by one: one that fails, or runs out of
time or memory alone, fails, as JUnit under Defects4J records an error thrown by the test.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from codereval.errors import UserError
from codereval.families.coderujb.runner import CoderUjbRunner, VersionEnv
from codereval.families.coderujb.verdicts import TestRun
from codereval.model import Verdict
from codereval.runners.base import RunContext
from codereval.sandbox.base import Limits

# A trigger class runs a few seconds; Math's slowest classes take minutes on a slow machine.
TEST_SECONDS = 600.0
# A trigger test run alone on the buggy version, against the fixed version's run of its classes:
# this many times as long, and never less than ALONE_SECONDS.
ALONE_FACTOR = 4.0
ALONE_SECONDS = 60.0
ENDED = (Verdict.PASSED, Verdict.FAILED, Verdict.RUNTIME_ERROR)


@dataclass(frozen=True, kw_only=True)
class Reproduction:
    """What one bug's check found; ``reproduced`` is the verdict, ``reason`` says why not."""

    bug: str
    reproduced: bool
    reason: str = ""
    note: str = ""
    failing_fixed: tuple[str, ...] = ()
    failing_buggy: tuple[str, ...] = ()
    tests_run: int = 0
    build_seconds: float = 0.0
    test_seconds: float = 0.0
    env_keys: dict[str, str] = field(default_factory=dict)


def _matches(test: str, failed: Sequence[str]) -> bool:
    """A trigger test names a method, or a whole class (a class-level failure)."""
    if "::" in test:
        return test in failed or test.split("::")[0] in failed
    return any(f == test or f.startswith(test + "::") for f in failed)


def check_bug(runner: CoderUjbRunner, ctx: RunContext, *, project: str, bug_id: str, name: str,
              trigger: Sequence[str], excluded: Sequence[str] = ()) -> Reproduction:
    """Build both versions of ``project`` bug ``bug_id`` and run its trigger tests' classes."""
    started = time.monotonic()
    envs: dict[str, VersionEnv] = {}
    for which in ("f", "b"):
        try:
            env = runner.version_environment(project, f"{bug_id}{which}", ctx)
        except UserError as exc:
            env = exc.one_line()
        if isinstance(env, str):
            return Reproduction(bug=name, reproduced=False,
                                reason=f"the {_word(which)} version does not build: {env}",
                                build_seconds=round(time.monotonic() - started, 1))
        envs[which] = env
    built = time.monotonic()
    classes = tuple(dict.fromkeys(t.split("::")[0] for t in trigger))
    test_classes = envs["f"].info.test_classes
    absent = [c for c in classes
              if not (test_classes / (c.replace(".", "/") + ".class")).is_file()]
    if absent:
        return Reproduction(
            bug=name, reproduced=False,
            reason=f"the trigger test class {absent[0]} does not compile here (left out of the "
                   "fixed version's build: its env.json lists the test files javac rejected)",
            build_seconds=round(built - started, 1), env_keys={w: e.key for w, e in envs.items()})
    limits = dataclasses.replace(ctx.limits, wall_time=max(TEST_SECONDS, ctx.limits.wall_time),
                                 cpu_time=2 * max(TEST_SECONDS, ctx.limits.wall_time))
    # Defects4J's checkouts lack the excluded tests (a looping one would hold the run to its
    # wall time), but never a trigger test.
    skipped = tuple(f"!{e}" for e in excluded if not any(_matches(t, (e,)) for t in trigger))
    failing: dict[str, tuple[str, ...]] = {}
    tests = 0
    note = ""
    fixed_seconds = 0.0
    for which in ("f", "b"):
        ran = time.monotonic()
        run = runner.run_tests(envs[which], ctx, selectors=(*classes, *skipped), limits=limits)
        if which == "f":
            fixed_seconds = time.monotonic() - ran
        elif not _ended(run):
            wall = max(ALONE_SECONDS, ALONE_FACTOR * fixed_seconds)
            alone = _one_by_one(runner, envs["b"], ctx, trigger,
                                dataclasses.replace(ctx.limits, wall_time=wall,
                                                    cpu_time=2 * wall))
            if alone is not None:
                failed, stuck = alone
                failing["b"] = failed
                note = (f"the buggy version's trigger classes did not run to their end "
                        f"({run.status.value}): its trigger tests ran one by one"
                        + (f", {len(stuck)} of them not to their end either (failing): "
                           f"{_few(stuck)}" if stuck else ""))
                continue
        if not _ended(run):
            return Reproduction(
                bug=name, reproduced=False,
                reason=f"the trigger tests did not run to their end on the {_word(which)} "
                       f"version ({run.status.value}: {run.detail})",
                build_seconds=round(built - started, 1),
                test_seconds=round(time.monotonic() - built, 1),
                env_keys={w: e.key for w, e in envs.items()})
        failing[which] = run.failed
        tests = max(tests, run.tests)
    fixed, buggy = failing["f"], failing["b"]
    reason = ""
    broken_fixed = [t for t in trigger if _matches(t, fixed)]
    silent = [t for t in trigger if not _matches(t, buggy)]
    extra = [f for f in buggy if f not in fixed and f not in excluded
             and not any(_matches(t, (f,)) for t in trigger)]
    if broken_fixed:
        reason = (f"{len(broken_fixed)} trigger test(s) fail on the fixed version too: "
                  f"{_few(broken_fixed)}")
    elif silent:
        reason = f"{len(silent)} trigger test(s) pass on the buggy version: {_few(silent)}"
    elif extra:
        reason = (f"the buggy version also fails {len(extra)} test(s) that are not trigger "
                  f"tests: {_few(extra)}")
    return Reproduction(bug=name, reproduced=not reason, reason=reason, note=note,
                        failing_fixed=fixed,
                        failing_buggy=buggy, tests_run=tests,
                        build_seconds=round(built - started, 1),
                        test_seconds=round(time.monotonic() - built, 1),
                        env_keys={w: e.key for w, e in envs.items()})


def _ended(run: TestRun) -> bool:
    return run.status in ENDED and not (run.status is Verdict.RUNTIME_ERROR and not run.failed)


def _one_by_one(runner: CoderUjbRunner, env: VersionEnv, ctx: RunContext,
                trigger: Sequence[str], limits: Limits
                ) -> tuple[tuple[str, ...], list[str]] | None:
    """The trigger tests that fail on ``env`` run one at a time, and those of them whose run
    did not end; None when that cannot be said (a whole-class trigger, or the harness's own
    failure)."""
    failed: list[str] = []
    stuck: list[str] = []
    for test in trigger:
        if "::" not in test:
            return None
        run = runner.run_tests(env, ctx, selectors=(test,), limits=limits)
        if run.status in (Verdict.TIMEOUT, Verdict.MEMORY_EXCEEDED):
            failed.append(test)
            stuck.append(test)
        elif _ended(run):
            failed.extend(f for f in run.failed if f not in failed)
        else:
            return None
    return tuple(failed), stuck


def _word(which: str) -> str:
    return "fixed" if which == "f" else "buggy"


def _few(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
