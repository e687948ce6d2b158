"""The evaluation engine: parallel runs, input checks, provenance, resume within one process."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
from test_engine_support import (
    ADD,
    BEHAVIOURS,
    EXPECTED,
    LOG_ENV,
    NEG,
    BrokenToolchainRunner,
    CrashingRunner,
    SnippetRunner,
    behaviour_samples,
    make_task,
    passing_samples,
    read_log,
)

from codereval.errors import UserError
from codereval.evaluation.engine import Benchmark, EvalOptions, evaluate
from codereval.model import HARNESS_VERSION, Sample, Verdict
from codereval.sandbox import get_sandbox
from codereval.storage.store import load_run

BENCH = Benchmark(name="unit", tasks=[ADD, NEG])


def options(**changes: object) -> EvalOptions:
    base: dict[str, object] = {
        "jobs": 1,
        "timeout": 4.0,  # generous: a loaded 2-core machine can take seconds to start Python
        "memory_mb": 512,
        "sandbox": "none",
        "progress": False,
    }
    base.update(changes)
    return EvalOptions(**base)  # type: ignore[arg-type]


def run(tmp_path: Path, samples: list[Sample], *, name: str = "run", **changes: object):  # type: ignore[no-untyped-def]
    runner = changes.pop("runner", None) or SnippetRunner()
    return evaluate(
        benchmark=changes.pop("benchmark", BENCH),  # type: ignore[arg-type]
        samples=samples,
        run_dir=tmp_path / name,
        options=options(**changes),
        runners={"python-project": runner},  # type: ignore[dict-item]
        sandbox=get_sandbox("none"),
    )


def verdicts(report) -> dict[tuple[str, int], Verdict]:  # type: ignore[no-untyped-def]
    return {(o.task_id, o.sample_index): o.verdict for o in report.outcomes}


def test_each_behaviour_gets_its_verdict_and_parallel_runs_agree_with_serial(
    tmp_path: Path,
) -> None:
    samples = [*behaviour_samples(), *passing_samples(NEG, 3)]
    serial = run(tmp_path, samples, name="serial", jobs=1)
    parallel = run(tmp_path, samples, name="parallel", jobs=4)
    expected = {(s.task_id, s.index): EXPECTED[s.model] for s in samples if s.task_id == "add"}
    expected.update({("neg", i): Verdict.PASSED for i in range(3)})
    assert verdicts(serial) == expected
    assert verdicts(parallel) == expected
    assert parallel.ran == len(samples) and parallel.skipped == 0


def test_run_directory_holds_tasks_samples_outcomes_and_provenance(tmp_path: Path) -> None:
    samples = passing_samples(ADD, 2)
    report = run(tmp_path, samples)
    run_dir = report.run_dir
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "finished" and meta["finished"]
    assert meta["harness_version"] == HARNESS_VERSION
    assert meta["sandbox"] == {"requested": "none", "isolation": "none"}
    assert meta["benchmark"]["name"] == "unit" and meta["benchmark"]["version"] == BENCH.version
    assert meta["options"]["timeout"] == 4.0 and meta["python"]
    loaded = load_run(run_dir)
    assert [t.task_id for t in loaded.tasks] == ["add", "neg"]
    assert loaded.samples == samples
    lines = (run_dir / "outcomes.jsonl").read_text().splitlines()
    assert len(lines) == 2
    for outcome in loaded.outcomes:
        assert outcome.isolation == "none"
        prov = outcome.provenance
        assert prov.task_hash == ADD.content_hash()
        assert prov.code_hash == samples[outcome.sample_index].code_hash()
        assert prov.environment.startswith("snippet:")
        assert prov.harness_version == HARNESS_VERSION
        assert prov.benchmark_version == BENCH.version
    assert (run_dir / "samples.jsonl_out.jsonl").exists()


def test_unknown_sample_ids_are_one_line_error_and_nothing_is_written(tmp_path: Path) -> None:
    samples = [*passing_samples(ADD, 1), Sample(task_id="ghost", code="x = 1")]
    with pytest.raises(UserError) as caught:
        run(tmp_path, samples)
    assert "ghost" in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "run").exists()


def test_missing_toolchain_stops_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="snippetc is not installed"):
        run(tmp_path, passing_samples(ADD, 1), runner=BrokenToolchainRunner())
    assert not (tmp_path / "run").exists()


def test_a_crashing_runner_is_infra_error_not_a_lost_sample(tmp_path: Path) -> None:
    report = run(tmp_path, passing_samples(ADD, 2), runner=CrashingRunner())
    assert [o.verdict for o in report.outcomes] == [Verdict.INFRA_ERROR] * 2
    assert "the runner fell over" in report.outcomes[0].detail


def test_tasks_a_runner_cannot_prepare_become_infra_error(tmp_path: Path) -> None:
    blocked = make_task(
        "blocked", reference="def f():\n    return 1\n", check="assert f() == 1",
        extra={"blocked": "1"},
    )
    bench = Benchmark(name="unit", tasks=[ADD, blocked])
    samples = [*passing_samples(ADD, 1), *passing_samples(blocked, 1)]
    report = run(tmp_path, samples, benchmark=bench)
    by_task = {o.task_id: o for o in report.outcomes}
    assert by_task["add"].verdict is Verdict.PASSED
    assert by_task["blocked"].verdict is Verdict.INFRA_ERROR
    assert "failed to build" in by_task["blocked"].detail


def test_rerunning_skips_finished_samples_and_runs_new_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.log"
    monkeypatch.setenv(LOG_ENV, str(log))
    first = passing_samples(ADD, 2)
    run(tmp_path, first)
    assert sorted(read_log(log)) == ["add#0", "add#1"]
    # Same command again: nothing runs. Then a new sample and a changed one: only those run.
    again = run(tmp_path, first)
    assert again.ran == 0 and again.skipped == 2 and len(again.outcomes) == 2
    changed = [
        first[0],
        Sample(task_id="add", index=1, code=BEHAVIOURS["fail"]),
        *passing_samples(NEG, 1),
    ]
    third = run(tmp_path, changed)
    assert third.ran == 2 and third.skipped == 1
    assert sorted(read_log(log)) == ["add#0", "add#1", "add#1", "neg#0"]
    assert verdicts(third) == {
        ("add", 0): Verdict.PASSED,
        ("add", 1): Verdict.FAILED,
        ("neg", 0): Verdict.PASSED,
    }


def test_a_run_dir_with_other_options_is_refused_unless_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.log"
    monkeypatch.setenv(LOG_ENV, str(log))
    samples = passing_samples(ADD, 1)
    run(tmp_path, samples)
    with pytest.raises(UserError, match="different timeout") as caught:
        run(tmp_path, samples, timeout=3.0)
    assert "--rerun" in str(caught.value)
    other = Benchmark(name="unit", tasks=[ADD])
    with pytest.raises(UserError, match="different tasks"):
        run(tmp_path, samples, benchmark=other)
    report = run(tmp_path, samples, timeout=3.0, rerun=True)
    assert report.ran == 1 and read_log(log) == ["add#0", "add#0"]
    assert json.loads((report.run_dir / "run.json").read_text())["options"]["timeout"] == 3.0


def test_files_of_a_directory_that_is_not_a_run_are_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "thesis.tex").write_text("precious")
    (tmp_path / "run" / "tasks.jsonl").write_text("my own tasks")
    with pytest.raises(UserError, match=r"not a codereval run directory but holds tasks\.jsonl"):
        run(tmp_path, passing_samples(ADD, 1))
    assert (tmp_path / "run" / "tasks.jsonl").read_text() == "my own tasks"
    # Files that are not ours stay where they are, beside the run.
    (tmp_path / "run" / "tasks.jsonl").unlink()
    run(tmp_path, passing_samples(ADD, 1))
    assert (tmp_path / "run" / "thesis.tex").read_text() == "precious"


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def test_outcomes_are_exported_while_a_run_goes_on_and_exports_never_hog_the_recording_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One batch of one outcome a second for a minute. Exports that take 0.01 s come every
    # EXPORT_INTERVAL (2 s); once an export takes 0.5 s (a run of thousands of outcomes), the
    # next waits EXPORT_SHARE times that: exports stay a small share of the recording thread.
    from rich.console import Console

    from codereval.evaluation import engine
    from codereval.model import Outcome, Provenance

    clock = _Clock()
    monkeypatch.setattr(engine.time, "monotonic", clock.monotonic)
    exported_at: list[float] = []
    export_takes = [0.01]

    def export() -> None:
        exported_at.append(clock.now)
        clock.now += export_takes[0]

    class Executor:
        def run(self, pending: list[Sample]):  # type: ignore[no-untyped-def]
            for index in range(60):
                clock.now += 1.0
                if index == 30:
                    export_takes[0] = 0.5
                yield [Outcome(task_id="t", sample_index=index, verdict=Verdict.PASSED,
                               provenance=Provenance(code_hash=f"{index:08x}"))]

    class Store:
        recorded = 0

        def record(self, batch: list[Outcome]) -> None:
            self.recorded += len(batch)

    store = Store()
    ran = engine._run_pending(
        [], store=store, options=EvalOptions(progress=False), console=Console(quiet=True),
        executor=Executor(), export=export,  # type: ignore[arg-type]
    )  # fmt: skip
    assert ran == store.recorded == 60
    early = [t for t in exported_at if t < 30]
    late = [t for t in exported_at if t > 32]
    assert len(early) >= 10 and all(b - a <= 2.1 for a, b in pairwise(early))
    assert all(b - a >= engine.EXPORT_SHARE * 0.5 for a, b in pairwise(late))
    assert 1 <= len(late) <= 3
