"""`codereval run`: generate with a model (a real local HTTP server), evaluate, score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_generation_server import fake_openai

from codereval.cli.app import app
from codereval.families.humanevalx.dataset import load_humanevalx


@pytest.mark.slow
def test_run_generates_evaluates_and_prints_the_table(shared_data: Path, tmp_path: Path) -> None:
    data = shared_data / "humanevalx"
    tasks = load_humanevalx("python", data_dir=data)[:3]
    # The "model" answers two tasks with their reference and the third wrongly.
    answers = {t.prompt: t.reference for t in tasks[:2]}

    def answer(payload: dict[str, object]) -> str:
        return answers.get(str(payload["prompt"]), "    return None\n")

    run_dir = tmp_path / "run"
    args = ["run", "--benchmark", "humanevalx-python", "--data-dir", str(data), "--limit", "3",
            "--model", "fake-model", "-n", "2", "--jobs", "2", "--k", "1,2",
            "--out", str(run_dir)]
    with fake_openai(answer) as server:
        result = CliRunner().invoke(app, [*args, "--base-url", server.base_url],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert "pass@1" in result.output and "fake-model" in result.output
        assert "66.67" in result.output  # 2 of 3 tasks pass, every sample alike
        outcomes = [json.loads(line) for line in (run_dir / "outcomes.jsonl").read_text()
                    .splitlines()]
        assert sorted(o["verdict"] for o in outcomes) == ["failed"] * 2 + ["passed"] * 4
        requests = len(server.requests)
        # Run again: nothing is missing, so the model is not asked and nothing re-runs.
        again = CliRunner().invoke(app, [*args, "--base-url", server.base_url],
                                   catch_exceptions=False)
        assert again.exit_code == 0, again.output
        assert len(server.requests) == requests
        assert "66.67" in again.output
    generated = (run_dir / "generation.jsonl").read_text().splitlines()
    assert len(generated) == 6


@pytest.mark.slow
def test_run_finds_a_builtin_benchmarks_official_tests_as_evaluate_does(tmp_path: Path) -> None:
    # mini-python ships tasks in the official test layout beside its records: `run` must find
    # them without --tests-dir, as `evaluate --benchmark mini-python` does.
    from codereval.benchmarks import load_benchmark

    tasks = load_benchmark("mini-python")
    assert len({t.name for t in tasks}) == len(tasks)

    def answer(payload: dict[str, object]) -> str:
        # The model answers with the reference of the task its prompt is about.
        prompt = str(payload["prompt"])
        return next(t.reference for t in tasks if f"def {t.name}(" in prompt)

    run_dir = tmp_path / "run"
    with fake_openai(answer) as server:
        result = CliRunner().invoke(
            app, ["run", "--benchmark", "mini-python", "--model", "fake-model", "-n", "2",
                  "--jobs", "2", "--base-url", server.base_url, "--out", str(run_dir)],
            catch_exceptions=False)
    assert result.exit_code == 0, result.output
    outcomes = [json.loads(line) for line in (run_dir / "outcomes.jsonl").read_text()
                .splitlines()]
    assert len(outcomes) == 2 * len(tasks)
    wrong = [(o["task_id"], o["verdict"], o["detail"][:120]) for o in outcomes
             if o["verdict"] != "passed"]
    assert not wrong, wrong
