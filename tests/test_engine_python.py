"""The engine with the real Python project runner on the built-in mini benchmark."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codereval.benchmarks import builtin_dir, load_benchmark
from codereval.benchmarks.samples import load_samples
from codereval.evaluation.engine import Benchmark, EvalOptions, evaluate
from codereval.evaluation.gold import gold_samples
from codereval.model import Sample, Verdict

MINI = builtin_dir("mini_python")
LABELS = ("reference", "wrong", "crash")
NORMALIZE = "fe3947f5ba6363ba3802a73e"  # normalize_whitespace: a module-level function


def labelled_samples(labels: tuple[str, ...], *, tasks: int = 6) -> list[Sample]:
    """Samples with these labels for the first ``tasks`` tasks of the samples file."""
    chosen, task_ids = set(), []
    for line in (MINI / "samples.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["task_id"] not in task_ids:
            task_ids.append(row["task_id"])
        if row.get("label") in labels and len(task_ids) <= tasks:
            chosen.add((row["task_id"], row["index"]))
    return [s for s in load_samples(MINI / "samples.jsonl") if (s.task_id, s.index) in chosen]


@pytest.mark.slow
def test_parallel_and_serial_runs_agree_with_the_real_runner(tmp_path: Path) -> None:
    tasks = load_benchmark("mini-python")
    samples = labelled_samples(LABELS)
    bench = Benchmark(name="mini-python", tasks=tasks)
    reports = {}
    for jobs in (1, 2):
        reports[jobs] = evaluate(
            benchmark=bench,
            samples=samples,
            run_dir=tmp_path / f"jobs{jobs}",
            options=EvalOptions(
                jobs=jobs, timeout=20, projects=MINI / "projects.toml",
                tests_dir=MINI / "official", progress=False,
            ),
        )  # fmt: skip
    serial, parallel = (
        {(o.task_id, o.sample_index): o.verdict for o in reports[j].outcomes} for j in (1, 2)
    )
    assert len(serial) == len(samples)
    assert serial == parallel
    references = labelled_samples(("reference",))
    assert all(serial[(s.task_id, s.index)] is Verdict.PASSED for s in references)
    assert Verdict.FAILED in serial.values() and Verdict.RUNTIME_ERROR in serial.values()
    for outcome in reports[2].outcomes:
        assert outcome.isolation.startswith("bwrap") and outcome.provenance.environment


@pytest.mark.slow
def test_gold_validation_of_the_mini_benchmark_finds_every_task_ok(tmp_path: Path) -> None:
    tasks = load_benchmark("mini-python")
    samples = gold_samples(tasks, repeat=1)
    report = evaluate(
        benchmark=Benchmark(name="mini-python", tasks=tasks),
        samples=samples,
        run_dir=tmp_path / "gold",
        options=EvalOptions(
            jobs=2, timeout=20, projects=MINI / "projects.toml", tests_dir=MINI / "official",
            mode="reference x1", progress=False,
        ),
    )  # fmt: skip
    from codereval.evaluation.gold import GoldStatus, classify

    rows = classify(tasks, samples, report.outcomes)
    flagged = {
        r.task_id: f"{r.status.value}: {r.detail}" for r in rows if r.status is not GoldStatus.OK
    }
    # What a flagged task's runs said, so that a failure on CI can be read from its log alone
    # (pytest.fail: an assertion's message is cut short on a quiet run).
    fields = {"task_id", "sample_index", "verdict", "stage", "exit_code", "signal", "wall_time",
              "detail", "stdout_tail", "stderr_tail", "isolation", "provenance"}  # fmt: skip
    runs = [o.model_dump(mode="json", include=fields) for o in report.outcomes
            if o.task_id in flagged]  # fmt: skip
    if flagged:
        pytest.fail(json.dumps({"flagged": flagged, "runs": runs}, indent=1))


@pytest.mark.slow
def test_kill_9_mid_run_resumes_without_rerunning_with_the_real_runner(tmp_path: Path) -> None:
    # Each sample logs its own run from module level, outside the sandbox (--sandbox none).
    log = tmp_path / "runs.log"
    reference = next(t for t in load_benchmark("mini-python") if t.task_id == NORMALIZE).reference
    rows = []
    for index in range(10):
        logger = f"import time\nopen({str(log)!r}, 'a').write('{index}\\n')\ntime.sleep(0.3)\n"
        rows.append({"task_id": NORMALIZE, "index": index, "code": reference + logger})
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    argv = [
        str(Path(sys.executable).parent / "codereval"), "evaluate", "--benchmark", "mini-python",
        "--samples", str(samples), "--sandbox", "none", "--jobs", "2", "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        store = out / "results.sqlite"
        if store.exists():
            with sqlite3.connect(store) as conn:
                try:
                    done = conn.execute("SELECT sample_index FROM outcomes").fetchall()
                except sqlite3.OperationalError:
                    done = []
            if len(done) >= 3:
                break
        time.sleep(0.05)
    proc.kill()
    proc.communicate()
    with sqlite3.connect(out / "results.sqlite") as conn:
        finished = {str(i) for (i,) in conn.execute("SELECT sample_index FROM outcomes")}
    before = log.read_text().split()
    resumed = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    after = log.read_text().split()[len(before) :]
    assert not finished & set(after)
    assert set(after) == {str(i) for i in range(10)} - finished
    outcomes = [json.loads(line) for line in (out / "outcomes.jsonl").read_text().splitlines()]
    assert sorted(o["sample_index"] for o in outcomes) == list(range(10))
    assert {o["verdict"] for o in outcomes} == {"passed"}
