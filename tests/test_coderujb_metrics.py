"""CoderUJB's metrics on hand-computed cases, in `score` (table and JSON) and the HTML report.

The outcomes are written here with their ``ujb`` measures, as the execution side produces them:
that is the contract between the two.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.families.coderujb.metrics import UjbKindScore, dd_rates, reached, score_ujb
from codereval.model import (
    Language,
    Outcome,
    Task,
    UjbKind,
    UjbMeasures,
    UjbSpec,
    Verdict,
)


def _task(task_id: str, kind: UjbKind, *, defective: bool | None = None) -> Task:
    spec = UjbSpec(kind=kind, project="Lang", bug_id="1", defective=defective)
    return Task(
        task_id=task_id, benchmark="coderujb", language=Language.JAVA, name="f", ujb=spec
    )


def _out(task_id: str, index: int, verdict: Verdict, **measures: object) -> Outcome:
    ujb = UjbMeasures.model_validate(measures) if measures else None
    return Outcome(task_id=task_id, sample_index=index, verdict=verdict, ujb=ujb)


P, F = Verdict.PASSED, Verdict.FAILED


def fcg_case() -> tuple[list[Task], list[Outcome]]:
    tasks = [_task("fcg-a", UjbKind.FCG), _task("fcg-b", UjbKind.FCG)]
    outcomes = [
        _out("fcg-a", 0, P, syntax_ok=True, compiled=True, passed_fixed=True),
        _out("fcg-a", 1, Verdict.COMPILE_ERROR, syntax_ok=True, compiled=False),
        _out("fcg-a", 2, Verdict.SYNTAX_ERROR, syntax_ok=False, compiled=False),
        _out("fcg-b", 0, F, syntax_ok=True, compiled=True, passed_fixed=False),
        _out("fcg-b", 1, Verdict.NO_CODE),
        # Our fault, not the model's: not one of fcg-b's samples.
        _out("fcg-b", 2, Verdict.INFRA_ERROR),
    ]
    return tasks, outcomes


def ctg_case() -> tuple[list[Task], list[Outcome]]:
    tasks = [_task("ctg-c", UjbKind.CTG), _task("ctg-d", UjbKind.CTG)]
    outcomes = [
        _out("ctg-c", 0, P, syntax_ok=True, compiled=True, passed_fixed=True,
             lines_covered=8, lines_total=10, branches_covered=1, branches_total=4),
        _out("ctg-c", 1, F, syntax_ok=True, compiled=True, passed_fixed=False),
        _out("ctg-d", 0, P, syntax_ok=True, compiled=True, passed_fixed=True,
             lines_covered=5, lines_total=10, branches_covered=0, branches_total=0),
        _out("ctg-d", 1, P, syntax_ok=True, compiled=True, passed_fixed=True,
             lines_covered=10, lines_total=10, branches_covered=2, branches_total=2),
    ]
    return tasks, outcomes


def itg_case() -> tuple[list[Task], list[Outcome]]:
    tasks = [_task("itg-e", UjbKind.ITG)]
    outcomes = [
        _out("itg-e", 0, P, syntax_ok=True, compiled=True, passed_fixed=True, failed_buggy=True,
             lines_covered=3, lines_total=4),
        # Passes on both versions: it does not reproduce the issue, whatever the verdict says.
        _out("itg-e", 1, P, syntax_ok=True, compiled=True, passed_fixed=True, failed_buggy=False,
             lines_covered=4, lines_total=4),
    ]
    return tasks, outcomes


def dd_case() -> tuple[list[Task], list[Outcome]]:
    tasks = [_task("dd-t", UjbKind.DD, defective=True), _task("dd-f", UjbKind.DD, defective=False)]
    outcomes = [
        _out("dd-t", 0, P, prediction=True),
        _out("dd-t", 1, F, prediction=False),
        _out("dd-t", 2, Verdict.NO_CODE),
        _out("dd-f", 0, P, prediction=False),
        _out("dd-f", 1, F, prediction=True),
        _out("dd-f", 2, P, prediction=False),
    ]
    return tasks, outcomes


def _kind(tasks: list[Task], outcomes: list[Outcome], *, bootstrap: int = 0) -> UjbKindScore:
    scores = score_ujb(tasks, outcomes, ks=(1, 2, 3), bootstrap=bootstrap)
    assert scores is not None and len(scores.kinds) == 1
    return scores.kinds[0]


def test_fcg_pass_at_k_and_count_at_n_at_three_levels() -> None:
    score = _kind(*fcg_case())
    levels = {level.name: level for level in score.levels}
    assert list(levels) == ["syntax", "compile", "pass"]
    # a: 2 of 3 parse, 1 of 3 compiles, 1 of 3 passes; b: 1 of 2 parses and compiles, 0 pass.
    assert levels["syntax"].pass_at == {1: 58.33, 2: 100.0, 3: 100.0}
    assert levels["compile"].pass_at == {1: 41.67, 2: 83.33, 3: 100.0}
    assert levels["pass"].pass_at == {1: 16.67, 2: 33.33, 3: 100.0}
    assert [(lv.count, lv.tasks) for lv in levels.values()] == [(2, 2), (2, 2), (1, 2)]
    assert score.samples == 5 and score.infra_errors == 1
    assert score.samples_per_task == {2: 1, 3: 1}
    assert "pass@3: 1 task(s) with fewer than 3 samples left out" in score.notes


def test_levels_follow_the_verdict_where_no_measure_was_recorded() -> None:
    assert reached(Outcome(task_id="t", verdict=P), UjbKind.APR) == {
        "syntax": True, "compile": True, "pass": True,
    }
    assert reached(Outcome(task_id="t", verdict=Verdict.COMPILE_ERROR), UjbKind.APR) == {
        "syntax": True, "compile": False, "pass": False,
    }
    assert reached(Outcome(task_id="t", verdict=Verdict.RUNTIME_ERROR), UjbKind.FCG)["compile"]


def test_ctg_trigger_and_coverage_paper_mean_and_succeeding_tests() -> None:
    score = _kind(*ctg_case())
    levels = {level.name: level for level in score.levels}
    assert list(levels) == ["syntax", "compile", "trigger"]
    assert levels["trigger"].pass_at[1] == 75.0
    rates = {rate.name: rate.value for rate in score.rates}
    # Paper: failures count 0 per sample; c = (0.8 + 0) / 2, d = (0.5 + 1.0) / 2.
    assert rates["line coverage (paper: failures count 0)"] == 57.5
    assert rates["line coverage of succeeding tests"] == 77.5
    # d's first test has no branch to cover: no branch coverage of its own.
    assert rates["branch coverage (paper: failures count 0)"] == 31.25
    assert rates["branch coverage of succeeding tests"] == 62.5


def test_itg_trigger_needs_failing_on_the_buggy_version() -> None:
    score = _kind(*itg_case())
    levels = {level.name: level for level in score.levels}
    assert levels["trigger"].pass_at[1] == 50.0
    assert levels["compile"].pass_at[1] == 100.0
    rates = {rate.name: rate.value for rate in score.rates}
    assert rates["line coverage of succeeding tests"] == 75.0
    assert rates["line coverage (paper: failures count 0)"] == 37.5
    # No branch counters recorded: not measured, not a zero.
    branch = [rate for rate in score.rates if rate.name.startswith("branch")]
    assert [(rate.value, rate.support) for rate in branch] == [(None, "not measured")] * 2


def test_dd_accuracy_precision_recall_f1() -> None:
    score = _kind(*dd_case())
    assert score.levels == []
    assert score.confusion == {"tp": 1, "tn": 2, "fp": 1, "fn": 1, "unanswered": 1}
    rates = {rate.name: rate.value for rate in score.rates}
    assert rates == {
        "accuracy": 60.0,
        "accuracy (unanswered wrong)": 50.0,
        "precision": 50.0,
        "recall": 50.0,
        "F1": 50.0,
        "answered": 83.33,
    }
    assert dd_rates((3, 0, 1, 0, 0))["F1"] == pytest.approx(2 * 0.75 * 1.0 / 1.75)
    assert dd_rates((0, 4, 0, 0, 0))["precision"] is None  # nothing called defective


def test_bootstrap_intervals_hold_every_value() -> None:
    for case in (fcg_case, ctg_case, dd_case):
        score = _kind(*case(), bootstrap=200)
        for level in score.levels:
            assert level.ci is not None
            for k, value in level.pass_at.items():
                if value is not None:
                    low, high = level.ci[k]
                    assert low <= value <= high
        for rate in score.rates:
            if rate.value is not None:
                assert rate.ci is not None and rate.ci[0] <= rate.value <= rate.ci[1], rate


def test_runs_without_coderujb_tasks_have_no_coderujb_metrics() -> None:
    task = Task(task_id="x", benchmark="humaneval", language=Language.PYTHON, name="f")
    assert score_ujb([task], [Outcome(task_id="x", verdict=P)], ks=(1,)) is None


def _run_dir(path: Path, tasks: list[Task], outcomes: list[Outcome]) -> Path:
    path.mkdir()
    (path / "tasks.jsonl").write_text("".join(t.to_json() + "\n" for t in tasks))
    (path / "outcomes.jsonl").write_text("".join(o.to_json() + "\n" for o in outcomes))
    return path


def _all_kinds(tmp_path: Path) -> Path:
    tasks: list[Task] = []
    outcomes: list[Outcome] = []
    for case in (fcg_case, ctg_case, itg_case, dd_case):
        t, o = case()
        tasks += t
        outcomes += o
    return _run_dir(tmp_path / "ujb-run", tasks, outcomes)


def test_score_prints_the_coderujb_tables(tmp_path: Path, run_cli) -> None:
    run = _all_kinds(tmp_path)
    result = run_cli("score", run, "--k", "1,2", "--ci")
    assert result.exit_code == 0, result
    out = result.stdout
    assert "CoderUJB pass@k (%) and count@n by level" in out
    assert "58.33 [" in out and "1/2" in out  # FCG syntax pass@1, pass count@n
    assert "CoderUJB rates (%)" in out and "precision" in out and "1/2/1/1/1" in out
    assert "line coverage of succeeding tests" in out
    assert "FCG: 1 infra_error sample(s) not counted" in out


def test_score_json_carries_the_metrics_only_for_coderujb_runs(tmp_path: Path, run_cli) -> None:
    result = run_cli("score", _all_kinds(tmp_path), "--k", "1", "--json", "--ci")
    assert result.exit_code == 0, result
    (document,) = json.loads(result.stdout)
    kinds = {k["kind"]: k for k in document["coderujb"]["kinds"]}
    assert list(kinds) == ["fcg", "ctg", "itg", "dd"]
    assert kinds["fcg"]["levels"][0]["pass_at"] == {"1": 58.33}
    assert kinds["fcg"]["levels"][0]["ci"]["1"][0] <= 58.33
    assert kinds["dd"]["confusion"]["unanswered"] == 1
    plain = Task(task_id="x", benchmark="humaneval", language=Language.PYTHON, name="f")
    other = _run_dir(tmp_path / "plain", [plain], [Outcome(task_id="x", verdict=P)])
    (doc,) = json.loads(run_cli("score", other, "--k", "1", "--json").stdout)
    assert "coderujb" not in doc


def test_html_report_has_the_coderujb_section(tmp_path: Path, run_cli) -> None:
    report = tmp_path / "report.html"
    result = run_cli("report", _all_kinds(tmp_path), "--k", "1,2", "-o", report)
    assert result.exit_code == 0, result
    html = report.read_text()
    assert 'id="coderujb"' in html and "count@n" in html
    assert "58.33" in html and "line coverage (paper: failures count 0)" in html
    assert "tp/tn/fp/fn/unanswered" in html
    plain = Task(task_id="x", benchmark="humaneval", language=Language.PYTHON, name="f")
    other = _run_dir(tmp_path / "plain", [plain], [Outcome(task_id="x", verdict=P)])
    assert run_cli("report", other, "--k", "1", "-o", tmp_path / "p.html").exit_code == 0
    assert 'id="coderujb"' not in (tmp_path / "p.html").read_text()


def test_the_demo_prints_coderujb_metrics_for_coderujb_runs_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codereval.cli.demo_cmd import _print_family_metrics

    plain = Task(task_id="x", benchmark="b", language=Language.PYTHON, name="f")
    other = _run_dir(tmp_path / "plain", [plain], [Outcome(task_id="x", verdict=P)])
    _print_family_metrics([("mini-python", other), ("mini-coderujb", _all_kinds(tmp_path))], [1])
    printed = capsys.readouterr().out
    assert "mini-coderujb: CoderUJB pass@k" in printed
    assert "mini-coderujb: CoderUJB rates" in printed
    assert "F1" in printed and "line coverage" in printed
    assert "mini-python" not in printed
