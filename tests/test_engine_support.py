"""A small real runner for the engine, store and gold tests, and helpers to build their inputs.

``SnippetRunner`` runs a task's inline test (``TestSpec.code``) after the sample's code, in a fresh
Python interpreter inside the chosen sandbox, and judges by a per-run marker printed after the
test. Two test-only hooks, read from the environment, let tests observe the engine:

- ``CODEREVAL_TEST_LOG``: every run appends ``task_id#index`` to this file before it starts;
- a task whose ``extra["counter"]`` names a file gets ``RUN_COUNT`` (0, 1, 2 ...) in its
  environment, counted in that file across runs (so a test can pass on alternate runs).

Nothing here is collected as a test; other test modules import it.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from codereval.model import (
    Language,
    Level,
    Location,
    Outcome,
    Sample,
    Stage,
    Task,
    TestKind,
    TestSpec,
    Verdict,
)
from codereval.runners.base import RunContext, Runner
from codereval.runners.marker import marker_seen, new_marker
from codereval.sandbox.base import ExecRequest, Mount

LOG_ENV = "CODEREVAL_TEST_LOG"
PYTHON_HOME = Path(sys.base_prefix)
PYTHON = PYTHON_HOME / "bin" / "python3"

_WRAPPER = """\
import sys
namespace = {"__name__": "__sample__"}
exec(compile(open("solution.py").read(), "solution.py", "exec"), namespace)
exec(compile(open("check.py").read(), "check.py", "exec"), namespace)
print(sys.argv[1], flush=True)
"""


class SnippetRunner(Runner):
    name = "snippet"

    def __init__(self) -> None:
        self.prepared: list[str] = []
        self.closed = False

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        self.prepared.extend(t.task_id for t in tasks)
        return {
            t.task_id: f"environment for {t.project} failed to build"
            for t in tasks
            if t.extra.get("blocked")
        }

    def environment_fingerprint(self, task: Task, ctx: RunContext) -> str:
        return f"snippet:{sys.version_info.major}.{sys.version_info.minor}"

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        log = os.environ.get(LOG_ENV)
        if log:
            _append_line(Path(log), f"{sample.task_id}#{sample.index}")
        code = sample.code or ""
        try:
            compile(code, "solution.py", "exec")
        except SyntaxError as exc:
            return Outcome(
                task_id=sample.task_id,
                sample_index=sample.index,
                verdict=Verdict.SYNTAX_ERROR,
                stage=Stage.INJECT,
                detail=f"SyntaxError: {exc.msg}",
            )
        env = {"PYTHONDONTWRITEBYTECODE": "1"}
        counter = task.extra.get("counter")
        if counter:
            env["RUN_COUNT"] = str(_bump(Path(counter)))
        workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=ctx.work_root))
        try:
            (workspace / "solution.py").write_text(code)
            (workspace / "check.py").write_text(task.test.code if task.test else "")
            (workspace / "wrapper.py").write_text(_WRAPPER)
            marker = new_marker()
            result = ctx.sandbox.run(
                ExecRequest(
                    argv=(str(PYTHON), "wrapper.py", marker),
                    cwd=workspace,
                    scratch=workspace,
                    env=env,
                    mounts=(Mount(source=PYTHON_HOME, target=PYTHON_HOME),),
                    limits=ctx.limits,
                )
            )
        finally:
            shutil.rmtree(workspace)
        stderr = result.stderr.decode("utf-8", "replace")
        if result.sandbox_error:
            verdict, stage = Verdict.INFRA_ERROR, Stage.RUN
        elif result.timed_out:
            verdict, stage = Verdict.TIMEOUT, Stage.RUN
        elif result.exit_code == 0 and marker_seen(result.stdout, marker):
            verdict, stage = Verdict.PASSED, Stage.DONE
        elif "AssertionError" in stderr:
            verdict, stage = Verdict.FAILED, Stage.CHECK
        else:
            verdict, stage = Verdict.RUNTIME_ERROR, Stage.RUN
        return Outcome(
            task_id=sample.task_id,
            sample_index=sample.index,
            verdict=verdict,
            stage=stage,
            exit_code=result.exit_code,
            signal=result.signal,
            wall_time=result.wall_time,
            cpu_time=result.cpu_time,
            stdout_tail=result.stdout.decode("utf-8", "replace")[-2000:],
            stderr_tail=stderr[-2000:],
            detail=result.sandbox_error,
            isolation=result.isolation,
        )

    def close(self) -> None:
        self.closed = True


class BrokenToolchainRunner(SnippetRunner):
    def missing_toolchain(self) -> str | None:
        return "snippetc is not installed (install it with apt-get install snippetc)"


class CrashingRunner(SnippetRunner):
    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        raise RuntimeError("the runner fell over")


def _append_line(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(line + "\n")
        handle.flush()


def _bump(path: Path) -> int:
    """Read and increment a counter file atomically across threads and processes."""
    with path.open("a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        text = handle.read().strip()
        value = int(text) if text else 0
        handle.seek(0)
        handle.truncate()
        handle.write(str(value + 1))
        return value


# --- inputs --------------------------------------------------------------------------------


def make_task(
    task_id: str,
    *,
    reference: str,
    check: str,
    name: str = "f",
    level: Level = Level.SELF_CONTAINED,
    extra: dict[str, str] | None = None,
    language: Language = Language.PYTHON,
) -> Task:
    return Task(
        task_id=task_id,
        benchmark="unit",
        language=language,
        name=name,
        docstring=f"The {name} function.",
        reference=reference,
        level=level,
        location=Location(project="unit/demo", file_path="demo/mod.py", lineno=1, end_lineno=2),
        test=TestSpec(kind=TestKind.SCRIPT, code=check),
        extra=extra or {},
    )


ADD = make_task(
    "add", name="add", reference="def add(a, b):\n    return a + b\n", check="assert add(2, 3) == 5"
)
NEG = make_task(
    "neg", name="neg", reference="def neg(x):\n    return -x\n", check="assert neg(4) == -4"
)

# One sample of each behaviour the engine must carry through unchanged.
BEHAVIOURS: dict[str, str | None] = {
    "pass": "def add(a, b):\n    return a + b\n",
    "fail": "def add(a, b):\n    return a - b\n",
    "crash": "def add(a, b):\n    return a / 0\n",
    "syntax": "def add(a, b)\n    return a + b\n",
    "slow": "import time\ntime.sleep(30)\ndef add(a, b):\n    return a + b\n",
    "empty": None,
}
EXPECTED = {
    "pass": Verdict.PASSED,
    "fail": Verdict.FAILED,
    "crash": Verdict.RUNTIME_ERROR,
    "syntax": Verdict.SYNTAX_ERROR,
    "slow": Verdict.TIMEOUT,
    "empty": Verdict.NO_CODE,
}


def behaviour_samples() -> list[Sample]:
    return [
        Sample(task_id="add", index=i, raw=code or "", code=code, model=kind)
        for i, (kind, code) in enumerate(BEHAVIOURS.items())
    ]


def passing_samples(task: Task, count: int) -> list[Sample]:
    return [
        Sample(task_id=task.task_id, index=i, raw=task.reference, code=task.reference)
        for i in range(count)
    ]


def write_records(path: Path, tasks: Sequence[Task]) -> Path:
    """Tasks as CoderEval records (every value a string), with our inline-test extension."""
    records = []
    for task in tasks:
        assert task.location is not None and task.test is not None
        records.append(
            {
                "_id": task.task_id,
                "name": task.name,
                "project": task.project,
                "file_path": task.location.file_path,
                "code": task.reference,
                "docstring": task.docstring,
                "level": task.level.value if task.level else "",
                "lineno": str(task.location.lineno),
                "end_lineno": str(task.location.end_lineno),
                "test_kind": task.test.kind.value,
                "test_code": task.test.code,
            }
        )
    path.write_text(json.dumps({"RECORDS": records}), encoding="utf-8")
    return path


def write_samples(path: Path, samples: Sequence[Sample]) -> Path:
    lines = [
        json.dumps({"task_id": s.task_id, "index": s.index, "code": s.code, "raw": s.raw})
        for s in samples
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_log(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []
