"""Executors without a cluster: the choice and its bad inputs, what every outcome records, Ray
never imported unless chosen, and the engine counting each sample once whatever it is given."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Generator, Sequence
from pathlib import Path

import pytest

from codereval.api import evaluate, load_benchmark
from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.errors import UserError
from codereval.evaluation.engine import Benchmark, EvalOptions
from codereval.evaluation.engine import evaluate as run_engine
from codereval.executors import EXECUTORS
from codereval.executors.local import FreshExecutor
from codereval.model import Outcome, Sample

MINI_PY = builtin_dir("mini_python")
NORMALIZE = "fe3947f5ba6363ba3802a73e"  # mini-python: normalize_whitespace


def normalize_samples() -> list[Sample]:
    return [s for s in load_samples(MINI_PY / "samples.jsonl") if s.task_id == NORMALIZE][:4]


def test_every_outcome_and_the_run_record_say_which_executor_ran(tmp_path: Path) -> None:
    bench = load_benchmark("mini-python")
    run = evaluate(bench, normalize_samples(), run_dir=tmp_path / "run", jobs=2, timeout=20,
                   executor="fresh")
    assert {o.provenance.executor for o in run.outcomes} == {"fresh"} and run.executor == "fresh"
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    # How many samples ran beside waiting ones depends on the machine's load (overlap.py).
    assert meta["executor"].keys() == {"name", "jobs", "overlap_waits", "samples_beyond_jobs"}
    assert (meta["executor"]["name"], meta["executor"]["jobs"]) == ("fresh", 2)
    line = (tmp_path / "run" / "outcomes.jsonl").read_text().splitlines()[0]
    assert json.loads(line)["provenance"]["executor"] == "fresh"
    assert Outcome.from_json(line).to_json() == line


def test_a_sample_that_ran_no_process_names_no_executor(tmp_path: Path) -> None:
    bench = load_benchmark("mini-python")
    broken = Sample(task_id=NORMALIZE, index=0, raw="def normalize(", code="def normalize(")
    for executor in ("fresh", "warm"):
        run = evaluate(bench, [broken], run_dir=tmp_path / executor, jobs=1, timeout=20,
                       executor=executor)
        [outcome] = run.outcomes
        assert (outcome.verdict.value, outcome.provenance.executor) == ("syntax_error", "none")


def test_outcomes_written_before_executors_existed_still_load() -> None:
    old = (
        '{"task_id":"t","sample_index":0,"verdict":"passed","stage":"done","isolation":"rlimit",'
        '"provenance":{"benchmark_version":"b","task_hash":"h","code_hash":"c",'
        '"environment":"e","harness_version":"codereval-harness/2"}}'
    )
    outcome = Outcome.from_json(old)
    assert outcome.provenance.executor == "" and outcome.provenance.code_hash == "c"


class RepeatingExecutor(FreshExecutor):
    """The fresh executor yielding every batch twice: what a retried sample whose first run
    still reported would look like to the engine."""

    def run(self, samples: Sequence[Sample]) -> Generator[Sequence[Outcome], None, None]:
        for batch in super().run(samples):
            yield batch
            yield batch


def test_the_engine_counts_a_sample_once_however_often_it_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(EXECUTORS, "repeating", f"{__name__}:RepeatingExecutor")
    bench = load_benchmark("mini-python")
    samples = normalize_samples()
    report = run_engine(
        benchmark=Benchmark(name="mini-python", tasks=bench.tasks),
        samples=samples,
        run_dir=tmp_path / "run",
        options=EvalOptions(
            executor="repeating", jobs=2, progress=False, projects=bench.projects,
            tests_dir=bench.tests_dir, timeout=20,
        ),
    )  # fmt: skip
    assert report.ran == len(samples) == len(report.outcomes)
    with sqlite3.connect(tmp_path / "run" / "results.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM outcomes").fetchone() == (len(samples),)


def test_the_fresh_executor_never_imports_ray(tmp_path: Path) -> None:
    script = f"""
import sys
import codereval
from codereval.cli.app import main
try:
    main(["evaluate", "--benchmark", "mini-python", "--samples", {str(tmp_path / "s.jsonl")!r},
          "--out", {str(tmp_path / "run")!r}])
except SystemExit as exc:
    assert not exc.code, exc.code
print("ray imported" if "ray" in sys.modules else "ray not imported")
"""
    rows = [{"task_id": NORMALIZE, "completion": "def normalize_whitespace(t):\n  return t\n"}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "ray not imported"


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def test_ray_missing_is_one_line_with_the_install_hint_and_nothing_written(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    out = tmp_path / "run"
    result = run_cli("evaluate", "--benchmark", "mini-python", "--executor", "ray", "--out", out)
    assert result.exit_code == 2
    line = one_error_line(result.stderr)
    assert "needs Ray, which is not installed" in line and "pip install 'codereval[ray]'" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--ray-address", "127.0.0.1:6379"], "--ray-address only applies with --executor ray"),
        (["--executor", "ray", "--jobs", "2"], "--jobs does not apply with --executor ray"),
        (["--executor", "warp"], "'warp' is not one of 'fresh', 'warm', 'ray'"),
        (["--node-executor", "fresh"], "--node-executor only applies with --executor ray"),
        (["--executor", "ray", "--node-executor", "hot"], "'hot' is not one of 'warm', 'fresh'"),
        (["--executor", "ray", "--no-overlap-waits"],
         "--no-overlap-waits only applies to the fresh and warm executors"),
    ],
)
def test_executor_options_that_do_not_fit_are_one_line_and_nothing_written(
    run_cli, tmp_path: Path, args: list[str], expected: str
) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    result = run_cli("evaluate", "--benchmark", "mini-python", *args, "--out", out)
    assert result.exit_code == 2
    assert expected in result.stderr
    assert not out.exists()


def test_an_unknown_executor_in_the_api_names_the_choices(tmp_path: Path) -> None:
    choices = r"unknown executor 'warp' \(choose one of: fresh, warm, ray\)"
    with pytest.raises(UserError, match=choices):
        evaluate("mini-python", None, run_dir=tmp_path / "run", executor="warp")
    assert not (tmp_path / "run").exists()


def test_an_unknown_node_executor_in_the_api_names_the_choices(tmp_path: Path) -> None:
    choices = r"unknown node executor 'hot' \(choose one of: warm, fresh\)"
    with pytest.raises(UserError, match=choices):
        evaluate("mini-python", None, run_dir=tmp_path / "run", executor="ray",
                 node_executor="hot")
    assert not (tmp_path / "run").exists()


def test_an_address_where_no_ray_listens_fails_at_once_in_one_line(
    run_cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("ray", reason="the ray extra is not installed")
    from codereval.executors.ray_local import free_port

    out = tmp_path / "run"
    address = f"127.0.0.1:{free_port()}"
    result = run_cli(
        "evaluate", "--benchmark", "mini-python", "--executor", "ray", "--ray-address", address,
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 2
    line = one_error_line(result.stderr)
    assert line.startswith(f"error: cannot reach a Ray cluster at {address}: Connection refused")
    assert "ray start --head" in line
    assert not out.exists()


def test_evaluate_help_shows_the_executor_and_a_cluster_example(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("evaluate", "--help")
    assert result.exit_code == 0
    assert "--executor [fresh|warm|ray]" in result.stdout
    assert "--executor ray --ray-address" in result.stdout
