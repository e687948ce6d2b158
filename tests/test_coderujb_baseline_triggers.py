"""A buggy version's baseline leaves out the bug's trigger tests and counts them as failing.

Lang-43's bug makes ExtendedMessageFormat run out of memory, and Defects4J records its trigger
test failing with OutOfMemoryError. Run inside the unchanged suite, that test took the whole
suite's JVM down, the buggy version had no baseline, and every sample of the bug ended in
infra_error. The trigger tests are known to fail there (the rebuild checked it): the baseline
need not run them, and a sample's own run of them is what judges it.

Here mini-coderujb's bug 1 is copied with a buggy version whose trigger test exhausts the heap.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_coderujb_exec import LIMITS, MINI

from codereval.benchmarks.tasks_jsonl import load_tasks_jsonl
from codereval.families.coderujb.runner import CoderUjbRunner
from codereval.java.toolchain import missing_toolchain
from codereval.model import Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.sandbox import get_sandbox

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")]

EXACT = "org.langlite.StringUtilsTest::testAbbreviateExactWidth"
TRIGGER_LINE = f'trigger_tests = ["{EXACT}"]'
BUGGY = "bugs/1/buggy/src/main/java/org/langlite/StringUtils.java"
# The buggy line, and what it becomes: an exact fit holds on to memory until the JVM has none.
BUG = "        if (str.length() < maxWidth) {\n            return str;\n        }\n"
HOG = (BUG + "        if (str.length() == maxWidth) {\n"
       "            java.util.List<long[]> held = new java.util.ArrayList<>();\n"
       "            while (true) {\n                held.add(new long[1 << 20]);\n"
       "            }\n        }\n")


def _memory_hungry_copy(folder: Path, *, triggers: bool) -> Path:
    shutil.copytree(MINI, folder)
    buggy = folder / BUGGY
    text = buggy.read_text(encoding="utf-8")
    assert BUG in text
    buggy.write_text(text.replace(BUG, HOG), encoding="utf-8")
    bugs = folder / "bugs.toml"
    manifest = bugs.read_text(encoding="utf-8")
    assert TRIGGER_LINE in manifest
    if not triggers:
        bugs.write_text(manifest.replace(TRIGGER_LINE, ""), encoding="utf-8")
    return folder


def _apr_reference(folder: Path) -> tuple[Sample, Task]:
    task = next(t for t in load_tasks_jsonl(folder / "tasks.jsonl")
                if t.task_id == "apr-langlite-1-abbreviate")
    row = next(r for r in map(json.loads, (folder / "samples.jsonl").read_text().splitlines())
               if r["task_id"] == task.task_id and r["label"] == "reference")
    return Sample(task_id=task.task_id, index=0, code=row["code"], raw=row["code"]), task


@pytest.mark.parametrize("triggers", [True, False], ids=["trigger tests named", "not named"])
def test_a_trigger_test_that_kills_the_jvm_does_not_take_the_baseline_with_it(
    tmp_path: Path, triggers: bool,
) -> None:
    folder = _memory_hungry_copy(tmp_path / "mini", triggers=triggers)
    ctx = RunContext(sandbox=get_sandbox("auto"), limits=LIMITS, work_root=tmp_path / "work",
                     env_root=tmp_path / "envs", projects_dir=folder / "projects.toml")
    sample, task = _apr_reference(folder)
    runner = CoderUjbRunner()
    try:
        done = runner.run(task, sample, ctx)
    finally:
        runner.close()
    if not triggers:
        # Without the names the suite runs them, and the JVM dies: the old failure mode.
        assert done.verdict is Verdict.INFRA_ERROR
        assert "did not run to its end" in done.detail and "memory" in done.detail
        return
    # The developer's fix passes, and the baseline says the trigger test failed before.
    assert done.verdict is Verdict.PASSED, done.detail
    assert done.ujb is not None
    assert done.ujb.tests_failed_before == (EXACT,)
    assert done.ujb.tests_failed_after == ()
    cached = [json.loads(p.read_text()) for p in (tmp_path / "envs" / "ujb-baselines").iterdir()]
    assert [c["failing"] for c in cached] == [[EXACT]]
    # The test itself never ran in the baseline: the suite counted one test fewer.
    assert cached[0]["tests"] + 1 == int(done.detail.split("suite (")[1].split(" tests")[0])
