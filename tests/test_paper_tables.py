"""The CoderEval paper's Tables 3 and 4, reproduced from its released result files (--compat)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.families.codereval.official import load_official_results
from codereval.scoring.metrics import Scoreboard, score

# Table 3 (pass@1/5/10). PanGu-Coder Python pass@1 is printed as 11.83 in the paper; its
# released file gives 11.87 (one sample differs), and we assert what the data gives.
TABLE3 = {
    ("python", "ChatGPT"): (21.04, 27.31, 30.00),
    ("python", "CodeGen"): (9.48, 19.58, 23.48),
    ("python", "PanGu-Coder"): (11.87, 20.93, 27.39),
    ("java", "ChatGPT"): (35.39, 42.77, 46.09),
    ("java", "CodeGen"): (13.91, 27.34, 33.48),
    ("java", "PanGu-Coder"): (25.43, 37.39, 43.04),
}

TABLE4_PYTHON_CHATGPT = {
    "self_contained": (52.29, 60.08, 62.86),
    "slib_runnable": (15.36, 22.92, 28.57),
    "plib_runnable": (21.43, 28.06, 28.57),
    "class_runnable": (8.73, 12.57, 14.55),
    "file_runnable": (21.03, 29.09, 32.35),
    "project_runnable": (9.57, 12.08, 13.04),
}


def _result_file(shared_data: Path, language: str, model: str) -> Path:
    return shared_data / "codereval" / "results" / language / model / "Raw_Input.jsonl_out.jsonl"


def _board(shared_data: Path, language: str, model: str) -> Scoreboard:
    results = load_official_results(_result_file(shared_data, language, model))
    return score(results.tasks, results.outcomes, ks=(1, 5, 10), compat=True)


def _triple(values: dict[int, float | None]) -> tuple[float | None, ...]:
    return (values[1], values[5], values[10])


@pytest.mark.parametrize(("language", "model"), sorted(TABLE3))
def test_table3_pass_at_k(shared_data: Path, language: str, model: str) -> None:
    board = _board(shared_data, language, model)
    assert _triple(board.overall.pass_at) == TABLE3[(language, model)]
    assert board.overall.denominator == 230


def test_table4_python_chatgpt_by_level(shared_data: Path) -> None:
    board = _board(shared_data, "python", "ChatGPT")
    assert {g.name: _triple(g.pass_at) for g in board.levels} == TABLE4_PYTHON_CHATGPT
    assert board.standalone is not None and board.non_standalone is not None
    assert _triple(board.standalone.pass_at) == (35.87, 43.56, 47.62)
    assert _triple(board.non_standalone.pass_at) == (15.45, 21.18, 23.35)


def test_table4_java_chatgpt_standalone_split(shared_data: Path) -> None:
    board = _board(shared_data, "java", "ChatGPT")
    assert board.standalone is not None and board.non_standalone is not None
    assert _triple(board.standalone.pass_at) == (64.88, 68.65, 70.00)
    assert _triple(board.non_standalone.pass_at) == (19.67, 28.97, 33.33)


def test_default_convention_reports_the_task_with_a_dropped_sample(shared_data: Path) -> None:
    # The original platform dropped timed-out samples: one ChatGPT task has 9, not 10.
    results = load_official_results(_result_file(shared_data, "python", "ChatGPT"))
    board = score(results.tasks, results.outcomes, ks=(1, 5, 10))
    assert board.short_tasks == {"6306292352e177c0ba469f1d": 9}
    assert board.overall.pass_at[10] != 30.00  # n = 9 for that task changes pass@10


def test_java_error_messages_map_to_precise_verdicts(shared_data: Path) -> None:
    results = load_official_results(_result_file(shared_data, "java", "ChatGPT"))
    verdicts = {o.verdict.value for o in results.outcomes}
    assert verdicts == {"passed", "failed", "compile_error", "runtime_error"}
    assert all(o.isolation == "imported" for o in results.outcomes)


def test_score_cli_compares_models_side_by_side(shared_data: Path, run_cli) -> None:
    files = [_result_file(shared_data, "python", m) for m in ("ChatGPT", "CodeGen")]
    result = run_cli("score", *files, "--compat")
    assert result.exit_code == 0, result
    assert "ChatGPT" in result.stdout and "CodeGen" in result.stdout
    assert "21.04" in result.stdout and "9.48" in result.stdout
    assert "compat" in result.stdout


def test_score_cli_json_output(shared_data: Path, run_cli) -> None:
    result = run_cli(
        "score", _result_file(shared_data, "java", "ChatGPT"), "--compat", "--json"
    )
    assert result.exit_code == 0, result
    boards = json.loads(result.stdout)
    assert boards[0]["overall"]["pass_at"] == {"1": 35.39, "5": 42.77, "10": 46.09}
    assert boards[0]["convention"] == "compat"
