"""HumanEval-X Java under the JVM flags chosen by measurement gives the verdicts it gave before.

A quarter of the tasks (every fourth), each with its canonical solution and a broken variant
(a constant return), through the real ProgramRunner and sandbox, once with the flags the Java
toolchain used before (the serial collector) and once with today's; the acceptance suite runs
all 164 with today's flags.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_humanevalx_acceptance import broken_body

from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.java.toolchain import missing_toolchain
from codereval.model import Sample, Task, Verdict
from codereval.runners import program_toolchains
from codereval.runners.base import RunContext
from codereval.runners.program import ProgramRunner
from codereval.sandbox import Limits, get_sandbox

pytestmark = [pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")]

FLAGS_BEFORE = ("-ea", "-Xmx512m", "-Xss8m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Duser.language=en", "-Duser.country=US")


def _verdicts(tasks: list[Task], codes: list[str], work: Path) -> list[tuple[object, ...]]:
    runner = ProgramRunner()
    ctx = RunContext(sandbox=get_sandbox("auto"), limits=Limits(wall_time=30.0),
                     work_root=work, env_root=work / "envs")
    assert runner.prepare(tasks, ctx) == {}

    def one(pair: tuple[Task, str]) -> tuple[object, ...]:
        task, code = pair
        o = runner.run(task, Sample(task_id=task.task_id, code=code), ctx)
        return (task.task_id, o.verdict, o.stage, o.exit_code, o.signal, o.detail)

    try:
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(one, zip(tasks, codes, strict=True)))
    finally:
        runner.close()


@pytest.mark.slow
def test_java_verdicts_match_the_flags_before(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    chosen = load_humanevalx("java", data_dir=shared_data / "humanevalx")[::4]
    tasks = chosen + chosen
    codes = [t.reference for t in chosen] + [broken_body(t) for t in chosen]
    assert program_toolchains.JAVA_RUN_FLAGS != FLAGS_BEFORE
    now = _verdicts(tasks, codes, tmp_path / "now")
    monkeypatch.setattr(program_toolchains, "JAVA_RUN_FLAGS", FLAGS_BEFORE)
    before = _verdicts(tasks, codes, tmp_path / "before")
    assert now == before
    # Both halves ran: passes and failures (not only compile errors) are compared.
    verdicts = [v[1] for v in now]
    assert verdicts.count(Verdict.PASSED) >= len(chosen) - 1 and Verdict.FAILED in verdicts
