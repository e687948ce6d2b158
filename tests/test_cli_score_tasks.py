"""`codereval score` and `codereval tasks` from the command line, including bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

RESULTS = Path("codereval") / "results"


def _official(shared_data: Path, language: str = "python", model: str = "ChatGPT") -> Path:
    return shared_data / RESULTS / language / model / "Raw_Input.jsonl_out.jsonl"


def test_every_command_has_help_with_an_example(run_cli) -> None:
    from codereval.cli.app import app

    for name in app.commands:
        result = run_cli(name, "--help")
        assert result.exit_code == 0, (name, result)
        assert "codereval " in result.stdout, f"`{name} --help` shows no example"


def test_tasks_lists_and_filters(shared_data: Path, run_cli) -> None:
    records = shared_data / "codereval" / "records_python_sample.json"
    result = run_cli("tasks", records)
    assert result.exit_code == 0, result
    assert "hydrate_time" in result.stdout and "strip_root" in result.stdout
    result = run_cli("tasks", records, "--level", "slib_runnable", "--json")
    assert [json.loads(line)["name"] for line in result.stdout.splitlines()] == ["strip_root"]


def test_tasks_show_prints_prompts_reference_and_context(shared_data: Path, run_cli) -> None:
    records = shared_data / "codereval" / "records_python_sample.json"
    result = run_cli("tasks", records, "--show", "62ece4982e6aefcf4aabbd64")
    assert result.exit_code == 0, result
    out = result.stdout
    assert "Remove root from path, throw exception on failure." in out  # original docstring
    assert "Remove root from path. If fails, throw exception" in out  # human label
    assert "commonprefix" in out  # reference and oracle context
    assert "VarReference" in out


def _one_line_error(result) -> str:
    assert result.exit_code != 0
    assert result.stdout == "", "no partial output on error"
    lines = result.stderr.strip().splitlines()
    assert lines and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_unknown_task_id(shared_data: Path, run_cli) -> None:
    records = shared_data / "codereval" / "records_python_sample.json"
    line = _one_line_error(run_cli("tasks", records, "--show", "nope"))
    assert "no task 'nope'" in line


def test_missing_file(tmp_path: Path, run_cli) -> None:
    line = _one_line_error(run_cli("score", tmp_path / "absent.jsonl"))
    assert "absent.jsonl" in line


def test_malformed_line_names_file_and_line(shared_data: Path, tmp_path: Path, run_cli) -> None:
    lines = _official(shared_data).read_text().splitlines()[:3]
    bad = tmp_path / "bad_out.jsonl"
    bad.write_text("\n".join([*lines[:2], '{"_id": "x", "generate_results": [', lines[2]]))
    line = _one_line_error(run_cli("score", bad))
    assert "bad_out.jsonl:3: malformed JSON" in line


def test_empty_file(tmp_path: Path, run_cli) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "empty" in _one_line_error(run_cli("score", empty))


def test_results_for_tasks_the_records_lack_name_the_ids(shared_data: Path, run_cli) -> None:
    records = shared_data / "codereval" / "records_python_sample.json"
    line = _one_line_error(run_cli("score", _official(shared_data), "--tasks", records))
    assert "results for 228 task(s) not in" in line
    assert "62b43425903eeb48555d3ea1" in line  # the first unknown id, by sort order


def test_score_against_matching_records_uses_their_levels(
    shared_data: Path, tmp_path: Path, run_cli
) -> None:
    records = shared_data / "codereval" / "records_python_sample.json"
    wanted = {"62e60f43d76274f8a4026e28", "62ece4982e6aefcf4aabbd64"}
    rows = [
        line
        for line in _official(shared_data).read_text().splitlines()
        if json.loads(line)["_id"] in wanted
    ]
    subset = tmp_path / "subset_out.jsonl"
    subset.write_text("\n".join(rows) + "\n")
    result = run_cli("score", subset, "--tasks", records, "--json")
    assert result.exit_code == 0, result
    (board,) = json.loads(result.stdout)
    assert board["overall"]["tasks"] == 2
    assert {g["name"] for g in board["levels"]} == {"plib_runnable", "slib_runnable"}
    # The records carry oracle context and the result file the samples' code: Acc@k is shown.
    acc = board["acc_at_k"]
    assert acc is not None and acc["tasks"]["1"] == 2
    assert 0.0 < acc["overall"]["10"] <= 1.0
    assert acc["overall"]["1"] <= acc["overall"]["5"] <= acc["overall"]["10"]
    table = run_cli("score", subset, "--tasks", records)
    assert "Acc@k" in table.stdout and "APIInvocation" in table.stdout
    html = tmp_path / "report.html"
    assert run_cli("score", subset, "--tasks", records, "--html", html).exit_code == 0
    assert "Acc@k" in html.read_text() and "APIInvocation" in html.read_text()


def test_a_directory_that_is_not_a_run(tmp_path: Path, run_cli) -> None:
    assert "not a run directory" in _one_line_error(run_cli("score", tmp_path))


def test_bad_k(shared_data: Path, run_cli) -> None:
    assert "--k" in _one_line_error(run_cli("score", _official(shared_data), "--k", "1,a"))


def test_unknown_option_is_one_clear_line(run_cli) -> None:
    result = run_cli("score", "--frobnicate")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")


@pytest.mark.parametrize("flagged", [["62e60f43d76274f8a4026e28"]])
def test_exclude_flagged_tasks(
    shared_data: Path, tmp_path: Path, run_cli, flagged: list[str]
) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "\n".join(json.dumps({"task_id": t, "status": "weak", "detail": ""}) for t in flagged)
    )
    result = run_cli("score", _official(shared_data), "--exclude-flagged", gold, "--json")
    assert result.exit_code == 0, result
    (board,) = json.loads(result.stdout)
    assert board["excluded_tasks"] == flagged
    assert board["overall"]["tasks"] == 229


def test_html_report_is_written_whole(shared_data: Path, tmp_path: Path, run_cli) -> None:
    out = tmp_path / "report.html"
    result = run_cli("score", _official(shared_data, "java"), "--compat", "--html", out)
    assert result.exit_code == 0, result
    html = out.read_text()
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert "35.39" in html and "6367672d1a6d9265ec017c73" in html
    assert "compile_error" in html


def test_humanevalx_runs_show_codegeex_result_categories(tmp_path: Path, run_cli) -> None:
    from codereval.model import Language, Outcome, Sample, Task, TestKind, TestSpec, Verdict

    run = tmp_path / "run"
    run.mkdir()
    tasks = [
        Task(
            task_id=f"CPP/{i}", benchmark="humanevalx-cpp", language=Language.CPP, name=f"f{i}",
            test=TestSpec(kind=TestKind.PROGRAM),
        )
        for i in range(2)
    ]
    verdicts = [Verdict.PASSED, Verdict.FAILED, Verdict.COMPILE_ERROR, Verdict.INFRA_ERROR]
    outcomes = [
        Outcome(task_id=f"CPP/{i % 2}", sample_index=i // 2, verdict=v)
        for i, v in enumerate(verdicts)
    ]
    samples = [
        Sample(task_id=o.task_id, index=o.sample_index, code="x", truncated=(i == 1))
        for i, o in enumerate(outcomes)
    ]
    (run / "tasks.jsonl").write_text("".join(t.to_json() + "\n" for t in tasks))
    (run / "outcomes.jsonl").write_text("".join(o.to_json() + "\n" for o in outcomes))
    (run / "samples.jsonl").write_text("".join(s.to_json() + "\n" for s in samples))
    result = run_cli("score", run, "--k", "1", "--json")
    assert result.exit_code == 0, result
    (board,) = json.loads(result.stdout)
    # The cut-off generation that failed counts as unfinished, not as a wrong answer.
    assert board["categories"] == {
        "cpp": {
            "passing": 1,
            "unfinished_generation": 1,
            "syntax_semantic_error": 1,
            "infra_error": 1,
        }
    }
    table = run_cli("score", run, "--k", "1")
    assert "result categories" in table.stdout and "33.3" in table.stdout


def test_ci_adds_bootstrap_intervals(shared_data: Path, run_cli) -> None:
    result = run_cli("score", _official(shared_data), "--compat", "--ci", "--k", "1", "--json")
    assert result.exit_code == 0, result
    (board,) = json.loads(result.stdout)
    low, high = board["overall"]["ci"]["1"]
    assert low < 21.04 < high
    table = run_cli("score", _official(shared_data), "--compat", "--ci", "--k", "1")
    assert f"21.04 [{low:.1f}, {high:.1f}]" in table.stdout
