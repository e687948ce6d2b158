"""Defect detection through `codereval evaluate`: answers read, nothing run, then scored."""

from __future__ import annotations

import json
from pathlib import Path

from ujb_rows import dd_rows, write_jsonl

from codereval.model import Outcome, Verdict
from codereval.runners import runner_name_for

DEFECTIVE, CLEAN = (row["task_id"] for row in dd_rows())

ANSWERS = {
    DEFECTIVE: [
        "A. Yes, it has defects. `str.length()` is called before any null check.",
        "B. No, it doesn't have defects",
        "Note: I cannot tell without the callers.",
    ],
    CLEAN: [
        "B. No, there are no defects",
        "**Answer: B** — the null check comes first.",
        "Yes, there is a potential issue: maxWidth below 4 throws.",
    ],
}


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    dataset = write_jsonl(tmp_path / "code_ujb_defectdetection.jsonl", dd_rows())
    samples = tmp_path / "samples.jsonl"
    lines = [
        json.dumps({"task_id": task_id, "index": i, "raw": answer, "code": answer})
        for task_id, answers in ANSWERS.items()
        for i, answer in enumerate(answers)
    ]
    samples.write_text("\n".join(lines) + "\n")
    return dataset, samples


def _outcomes(run: Path) -> dict[tuple[str, int], Outcome]:
    lines = (run / "outcomes.jsonl").read_text().splitlines()
    outcomes = [Outcome.from_json(line) for line in lines]
    return {(o.task_id, o.sample_index): o for o in outcomes}


def test_dd_samples_get_verdicts_from_their_answers_without_running(
    tmp_path: Path, run_cli
) -> None:
    dataset, samples = _inputs(tmp_path)
    run = tmp_path / "run"
    result = run_cli(
        "evaluate", "--benchmark", "coderujb-dd", "--tasks", dataset, "--samples", samples,
        "--out", run,
    )
    assert result.exit_code == 0, result
    got = _outcomes(run)
    verdicts = {key: o.verdict for key, o in got.items()}
    assert verdicts == {
        (DEFECTIVE, 0): Verdict.PASSED,
        (DEFECTIVE, 1): Verdict.FAILED,
        (DEFECTIVE, 2): Verdict.NO_CODE,
        (CLEAN, 0): Verdict.PASSED,
        (CLEAN, 1): Verdict.PASSED,
        (CLEAN, 2): Verdict.FAILED,
    }
    predictions = {key: o.ujb.prediction if o.ujb else None for key, o in got.items()}
    assert predictions[(DEFECTIVE, 0)] is True and predictions[(CLEAN, 2)] is True
    assert predictions[(DEFECTIVE, 2)] is None
    assert {o.isolation for o in got.values()} == {"none (not executed)"}
    assert got[(DEFECTIVE, 1)].detail == "answered not defective; the method is defective"

    scored = run_cli("score", run, "--k", "1", "--json")
    (document,) = json.loads(scored.stdout)
    (dd,) = document["coderujb"]["kinds"]
    assert dd["confusion"] == {"tp": 1, "tn": 2, "fp": 1, "fn": 1, "unanswered": 1}


def test_compat_reads_answers_by_the_original_rule(tmp_path: Path, run_cli) -> None:
    dataset, samples = _inputs(tmp_path)
    run = tmp_path / "run-compat"
    result = run_cli(
        "evaluate", "--tasks", dataset, "--samples", samples, "--compat", "--out", run,
    )
    assert result.exit_code == 0, result
    got = _outcomes(run)
    # "Note: ..." holds "No": the original reads it as "no defect" (a wrong answer here).
    assert got[(DEFECTIVE, 2)].verdict is Verdict.FAILED
    assert got[(DEFECTIVE, 2)].ujb is not None and got[(DEFECTIVE, 2)].ujb.prediction is False
    assert "original phrase list" in got[(DEFECTIVE, 2)].provenance.environment


def test_only_dd_tasks_go_to_the_dd_runner(tmp_path: Path) -> None:
    from ujb_rows import rows_of

    from codereval.families.coderujb.dataset import load_coderujb

    (dd, _) = load_coderujb(write_jsonl(tmp_path / "dd.jsonl", dd_rows()))
    assert runner_name_for(dd) == "coderujb-dd"
    (apr,) = load_coderujb(write_jsonl(tmp_path / "apr.jsonl", rows_of("apr")))
    assert runner_name_for(apr) != "coderujb-dd"


def test_gold_validation_answers_right_and_probes_with_the_opposite(
    tmp_path: Path, run_cli
) -> None:
    dataset, _ = _inputs(tmp_path)
    run = tmp_path / "gold"
    result = run_cli("evaluate", "--tasks", dataset, "--reference", "--repeat", "2", "--out", run)
    assert result.exit_code == 0, result
    rows = [json.loads(line) for line in (run / "gold.jsonl").read_text().splitlines()]
    assert {row["task_id"]: row["status"] for row in rows} == {DEFECTIVE: "ok", CLEAN: "ok"}
    verdicts = sorted(o.verdict.value for o in _outcomes(run).values())
    # Two right answers per task pass; the opposite answer (the probe) fails.
    assert verdicts == ["failed", "failed", "passed", "passed", "passed", "passed"]
