"""The warm executor gives the fresh executor's verdicts on every Python benchmark we have.

Each benchmark runs twice through the real engine, once per executor; every outcome must agree
in verdict, stage, exit code, signal and detail, and say which executor produced it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.benchmarks import load_benchmark
from codereval.evaluation.engine import Benchmark, EvalOptions, evaluate
from codereval.executors.sample import RERUN_NOTE
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Outcome, Provenance, Sample, Task
from codereval.sandbox.bwrap import BwrapSandbox

FIELDS = ("verdict", "stage", "exit_code", "signal", "detail")


@pytest.fixture(autouse=True)
def _needs_bwrap() -> None:
    reason = BwrapSandbox.unavailable_reason()
    if reason is not None:
        pytest.skip(f"bwrap unavailable: {reason}")


def both(tmp_path: Path, bench: Benchmark, samples: list[Sample],
         **options: object) -> dict[str, list[Outcome]]:
    runs = {}
    for executor in ("fresh", "warm"):
        report = evaluate(
            benchmark=bench, samples=samples, run_dir=tmp_path / executor,
            options=EvalOptions(jobs=2, executor=executor, progress=False, **options),  # type: ignore[arg-type]
        )
        # What ran says how; a sample stopped before running (no code, a syntax error at
        # injection, a Java compile error: javac runs outside the sandbox) is filed as fresh.
        ran = {o.provenance.executor for o in report.outcomes
               if o.stage.value not in ("extract", "inject", "environment", "compile")}
        assert ran == {executor} and report.executor == executor
        runs[executor] = report.outcomes
    return runs


def _field(outcome: Outcome, name: str) -> object:
    value = getattr(outcome, name)
    if name == "detail":
        # Whether a busy loop's timeout was run twice depends on how busy the host was (it
        # is when the loop got under half its wall time on CPU), not on the executor.
        value = value.replace(f"; {RERUN_NOTE}", "").replace(RERUN_NOTE, "")
    return value


def assert_same_verdicts(runs: dict[str, list[Outcome]]) -> None:
    fresh = {(o.task_id, o.sample_index): o for o in runs["fresh"]}
    warm = {(o.task_id, o.sample_index): o for o in runs["warm"]}
    assert fresh.keys() == warm.keys()
    differences = [
        (key, name, _field(fresh[key], name), _field(warm[key], name))
        for key in fresh for name in FIELDS
        if _field(fresh[key], name) != _field(warm[key], name)
    ]
    assert differences == [], "\n".join(
        f"{key} {name}: fresh {a!r} (wall {fresh[key].wall_time}), warm {b!r} "
        f"(wall {warm[key].wall_time})" for key, name, a, b in differences)


def both_on_builtin(tmp_path: Path, name: str, **options: object) -> dict[str, list[Outcome]]:
    """A built-in mini benchmark's default samples through both executors."""
    from codereval.api import open_benchmark
    from codereval.benchmarks.samples import load_samples

    bench = open_benchmark(name=name)
    assert bench.default_samples is not None
    return both(tmp_path, bench, load_samples(bench.default_samples),
                tests_dir=bench.tests_dir, projects=bench.projects, **options)


def test_mini_python_with_its_hostile_samples(tmp_path: Path) -> None:
    # The limits are the question's, not the machine's: a sample must meet its limit on both
    # executors or neither. 512 MB, not the default 2 GB: on this VM first-touching 2 GB costs
    # ~3.5 s of system time even unsandboxed (512 MB: 0.25 s). 30 s, not the default 10: on a
    # CI machine whose other worker is busy, references of under a second have stalled past
    # 10 s on one executor's run and not the other's (seen once). The endless loops still end
    # in timeout on both.
    runs = both_on_builtin(tmp_path, "mini-python", memory_mb=512, timeout=30.0)
    verdicts = {o.verdict.value for o in runs["warm"]}
    # The hostile samples are there: timeouts, memory hogs, crashes, fakes of a pass.
    assert {"passed", "failed", "runtime_error", "timeout", "memory_exceeded"} <= verdicts
    assert_same_verdicts(runs)


def test_mini_java_with_its_hostile_samples(tmp_path: Path) -> None:
    from codereval.java.toolchain import missing_toolchain

    if missing_toolchain() is not None:
        pytest.skip("no JDK here")
    # The test JVM starts from a warm worker's fork; compile errors never reach a sandbox.
    runs = both_on_builtin(tmp_path, "mini-java", memory_mb=1024, timeout=30.0)
    verdicts = {o.verdict.value for o in runs["warm"]}
    assert {"passed", "failed", "runtime_error", "timeout", "compile_error"} <= verdicts
    assert_same_verdicts(runs)


def _wrong(task: Task) -> str:
    return "    return None\n"


@pytest.mark.slow
def test_humaneval_canonical_and_wrong_solutions(tmp_path: Path) -> None:
    tasks = load_benchmark("humaneval")
    samples = [Sample(task_id=t.task_id, index=0, code=t.reference) for t in tasks]
    samples += [Sample(task_id=t.task_id, index=1, code=_wrong(t)) for t in tasks]
    runs = both(tmp_path, Benchmark(name="humaneval", tasks=tasks), samples)
    assert sum(o.passed for o in runs["warm"]) == 164
    assert_same_verdicts(runs)


@pytest.mark.slow
def test_humanevalx_python_canonical_solutions(tmp_path: Path, shared_data: Path) -> None:
    tasks = load_humanevalx("python", data_dir=shared_data / "humanevalx")
    samples = [Sample(task_id=t.task_id, code=t.reference) for t in tasks]
    # Canonical solutions finish in milliseconds: the limit is generous so that a host
    # loaded by the rest of the suite (a fresh sandbox took over 10 s to start once, twice
    # in a row) cannot turn one into a timeout; this compares verdicts, not limits.
    runs = both(tmp_path, Benchmark(name="humanevalx-python", tasks=tasks), samples,
                timeout=60.0)
    assert_same_verdicts(runs)


def test_outcomes_written_before_executors_still_load() -> None:
    old = {"task_id": "t", "verdict": "passed", "provenance": {"code_hash": "abc"}}
    outcome = Outcome.model_validate_json(json.dumps(old))
    assert outcome.provenance == Provenance(code_hash="abc")
    assert outcome.provenance.executor == ""
    again = Outcome.model_validate_json(outcome.model_copy(update={
        "provenance": Provenance(code_hash="abc", executor="warm")}).to_json())
    assert again.provenance.executor == "warm"


# --- the command line ------------------------------------------------------------------------


def test_warm_needs_bwrap_one_line_and_nothing_written(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    result = run_cli("evaluate", "--benchmark", "mini-python", "--executor", "warm",
                     "--sandbox", "rlimit", "--out", out)
    assert result.exit_code != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) <= 2 and "warm executor runs in the bwrap sandbox" in lines[0]
    assert "--executor fresh" in result.stderr
    assert not out.exists()


def test_a_bad_preload_is_one_line_and_nothing_written(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    result = run_cli("evaluate", "--benchmark", "mini-python", "--preload", "numpy, not a name",
                     "--out", out)
    assert result.exit_code != 0
    assert "--preload 'numpy, not a name' is not auto, none or a comma-separated" in result.stderr
    assert not out.exists()


def test_an_unknown_executor_names_the_choices(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("evaluate", "--benchmark", "mini-python", "--executor", "warp",
                     "--out", tmp_path / "run")
    assert result.exit_code == 2
    assert "'fresh', 'warm', 'ray'" in result.stderr
    assert not (tmp_path / "run").exists()


def test_the_run_records_its_executor(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    result = run_cli("evaluate", "--benchmark", "humaneval", "--executor", "warm", "--samples",
                     _first_two_humaneval(tmp_path), "--out", out)
    assert result.exit_code == 0, result
    assert "executor warm" in result.stdout
    meta = json.loads((out / "run.json").read_text())
    assert meta["executor"]["name"] == "warm" and meta["executor"]["preload"] == "auto"
    outcomes = [json.loads(line) for line in (out / "outcomes.jsonl").read_text().splitlines()]
    assert [o["provenance"]["executor"] for o in outcomes] == ["warm", "warm"]


def _first_two_humaneval(tmp_path: Path) -> Path:
    tasks = load_benchmark("humaneval")[:2]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"task_id": t.task_id, "completion": t.reference}) + "\n"
                            for t in tasks))
    return path


def test_without_executor_python_runs_warm_where_bwrap_works_and_fresh_elsewhere(
    tmp_path: Path,
) -> None:
    from codereval.api import evaluate as api_evaluate
    from codereval.errors import UserError

    samples = _first_two_humaneval(tmp_path)
    run = api_evaluate("humaneval", samples, run_dir=tmp_path / "auto", jobs=1)
    expected = "warm" if BwrapSandbox.unavailable_reason() is None else "fresh"
    assert run.executor == expected
    assert {o.provenance.executor for o in run.outcomes} == {expected}
    # Without bubblewrap, the default falls back; asking for warm is one clear error.
    plain = api_evaluate("humaneval", samples, run_dir=tmp_path / "rlimit", jobs=1,
                     sandbox="rlimit")
    assert plain.executor == "fresh"
    with pytest.raises(UserError, match="the warm executor runs in the bwrap sandbox"):
        api_evaluate("humaneval", samples, run_dir=tmp_path / "warm", jobs=1, sandbox="rlimit",
                 executor="warm")
    assert not (tmp_path / "warm").exists()


# Statements put first in the function's body: each must end the same way on both executors.
HOSTILE = {
    "java": {
        "spin": "if (Math.abs(1) == 1) { while (true) {} }",
        "exit0": "if (Math.abs(1) == 1) { System.exit(0); }",
        "hog": ("if (Math.abs(1) == 1) { long[][] a = new long[64][];"
                " for (int i = 0; i < 64; i++) { a[i] = new long[1 << 24]; } }"),
        "daemon": ("try { new ProcessBuilder(\"sh\", \"-c\", \"sleep 60 &\").start().waitFor(); }"
                   " catch (Exception e) { throw new RuntimeException(e); }"),
        "tmp": ("try { java.nio.file.Files.writeString(java.nio.file.Path.of("
                "System.getProperty(\"java.io.tmpdir\"), \"left-behind\"), \"x\"); }"
                " catch (java.io.IOException e) { throw new RuntimeException(e); }"),
        "thread": "new Thread(() -> { while (true) {} }).start();",
    },
    "js": {
        "spin": "while (Math.abs(1) === 1) {}",
        "exit0": "process.exit(0);",
        "hog": "{ const a = []; for (let i = 0; i < 64; i++) a.push(new Array(1 << 24).fill(i)); }",
        "daemon": ("require('child_process').spawn('sleep', ['60'],"
                   " {detached: true, stdio: 'ignore'}).unref();"),
        "tmp": "require('fs').writeFileSync(require('os').tmpdir() + '/left-behind', 'x');",
        "throw": "throw new Error('boom');",
    },
}


@pytest.mark.parametrize("language", ["java", "js"])
def test_humanevalx_programs_run_warm_with_the_fresh_verdicts(
    tmp_path: Path, shared_data: Path, language: str
) -> None:
    # Java and JavaScript programs need no build in the sandbox: they start from a warm
    # worker's fork. References, then each hostile statement ahead of a reference's body.
    tasks = load_humanevalx(language, data_dir=shared_data / "humanevalx")[:12]
    samples = [Sample(task_id=t.task_id, index=0, code=t.reference) for t in tasks]
    for index, statement in enumerate(HOSTILE[language].values(), start=1):
        task = tasks[index]
        samples.append(Sample(task_id=task.task_id, index=index,
                              code=f"        {statement}\n{task.reference}"))
    # 15 s: room for a JVM starting on a loaded CI machine; the endless loops end in timeout.
    runs = both(tmp_path, Benchmark(name=f"humanevalx-{language}", tasks=tasks), samples,
                memory_mb=512, timeout=15.0)
    by_index = {(o.task_id, o.sample_index): o.verdict.value for o in runs["warm"]}
    assert sum(o.passed for o in runs["warm"] if o.sample_index == 0) == len(tasks)
    hostile = {name: by_index[tasks[i].task_id, i]
               for i, name in enumerate(HOSTILE[language], start=1)}
    assert hostile["spin"] == "timeout"
    assert hostile["exit0"] == "runtime_error"
    # Files and processes a sample leaves behind are its own business: it still passes.
    assert hostile["daemon"] == hostile["tmp"] == "passed"
    assert_same_verdicts(runs)
