"""The tests a bug excludes do not run in its whole suite.

Defects4J takes some tests out of every checkout (`failing_tests/<fixed revision>`,
`dependent_tests`, `random_tests`, Math's `broken_tests`). Left in and merely not counted, a test
that never ends still held every run of the suite to its wall time: Math-88's fixed version
loops in `GraggBulirschStoerIntegratorTest::testIntegratorControls`, which Defects4J lists as
broken, and the coverage map's run of its suite went on for its whole hour. The harness
leaves such tests out (`!name` selectors, a JUnit Platform post-discovery filter); the fake
Defects4J of tests/test_prepare_defects4j.py covers the way from Defects4J's files to the
runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_coderujb_exec import LIMITS, _ctx

from codereval.families.coderujb.runner import CoderUjbRunner, VersionEnv
from codereval.java.toolchain import missing_toolchain

EXACT = "org.langlite.StringUtilsTest::testAbbreviateExactWidth"


@pytest.mark.slow
@pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")
def test_tests_named_with_a_bang_are_left_out_of_what_the_others_select(
    ujb_env_root: Path, tmp_path: Path,
) -> None:
    runner = CoderUjbRunner()
    ctx = _ctx(ujb_env_root, tmp_path)
    try:
        env = runner.version_environment("mini-ujb/langlite", "1b", ctx)
        assert isinstance(env, VersionEnv), env
        whole = runner.run_tests(env, ctx, selectors=env.suite_selectors, limits=LIMITS)
        ranges = runner.run_tests(env, ctx, selectors=("org.langlite.IntRangeTest",),
                                  limits=LIMITS)
        assert whole.ended_normally and ranges.ended_normally and ranges.tests > 1
        assert EXACT in whole.failed  # bug 1's trigger test, on the buggy version
        # One method and one whole class left out of the whole suite.
        skipping = VersionEnv(info=env.info, key=env.key,
                              skipped=(EXACT, "org.langlite.IntRangeTest"))
        assert skipping.suite_selectors == (f"@{env.info.test_classes}", f"!{EXACT}",
                                            "!org.langlite.IntRangeTest")
        fewer = runner.run_tests(env, ctx, selectors=skipping.suite_selectors, limits=LIMITS)
        assert fewer.ended_normally and fewer.failed == ()
        assert fewer.tests == whole.tests - 1 - ranges.tests
        # A left-out name selects nothing by itself: the selected class runs whole.
        alone = runner.run_tests(env, ctx, selectors=("org.langlite.IntRangeTest",
                                                      f"!{EXACT}"), limits=LIMITS)
        assert alone.tests == ranges.tests
    finally:
        runner.close()
