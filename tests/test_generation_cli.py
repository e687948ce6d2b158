"""`codereval generate`: prompts, resumable sample files, failures kept out of the samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_generation_server import fake_openai

from codereval.cli.app import app
from codereval.generation.session import existing_samples

HX = ["--benchmark", "humanevalx-python", "--limit", "3"]


def _invoke(args: list[str], shared_data: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, [*args, "--data-dir", str(shared_data / "humanevalx")], catch_exceptions=False
    )
    return result.exit_code, result.output


def test_dry_run_prints_prompts_and_sends_nothing(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    code, output = _invoke(["generate", *HX, "--dry-run", "--out", str(out)], shared_data)
    assert code == 0
    assert output.count("===== Python/") == 3
    assert "def has_close_elements(" in output
    assert not out.exists()
    # --out is not needed to look at prompts.
    code, output = _invoke(["generate", *HX, "--dry-run"], shared_data)
    assert code == 0 and output.count("===== Python/") == 3


def test_generation_resumes_and_keeps_failed_requests_out(
    shared_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s.jsonl"
    base = ["generate", *HX, "--model", "fake", "-n", "2", "--max-retries", "0",
            "--concurrency", "1", "--out", str(out)]
    with fake_openai(lambda payload: "    return None\n") as server:
        server.script = ["500"]
        code, output = _invoke([*base, "--base-url", server.base_url], shared_data)
        assert code == 0, output
        first = existing_samples(out)
        assert len(first) == 4  # one task's request failed
        errors = (tmp_path / "s.jsonl.errors.jsonl").read_text().splitlines()
        assert len(errors) == 2 and "HTTP 500" in json.loads(errors[0])["error"]
        # Simulate a crash mid-write: a torn last line is dropped on resume.
        with out.open("a") as handle:
            handle.write('{"task_id": "Python/0", "ind')
        code, output = _invoke([*base, "--base-url", server.base_url], shared_data)
        assert code == 0, output
        requests = len(server.requests)
    samples = existing_samples(out)
    assert len(samples) == 6
    assert sorted((s.task_id, s.index) for s in samples) == [
        (f"Python/{t}", i) for t in range(3) for i in range(2)
    ]
    assert requests == 4  # 3 first time (one failed), then only the missing task
    assert all(s.raw == "    return None\n" and s.code == "    return None\n" for s in samples)
    assert {s.prompt_variant for s in samples} == {"raw/completion"}


def test_resuming_with_another_model_is_refused(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    out.write_text('{"task_id": "Python/0", "index": 0, "model": "other", '
                   '"prompt_variant": "raw/completion"}\n')
    with fake_openai(lambda payload: "x") as server, pytest.raises(SystemExit) as exit_info:
        from codereval.cli.app import main

        main(["generate", *HX, "--model", "fake", "--base-url", server.base_url,
              "--data-dir", str(shared_data / "humanevalx"), "--out", str(out)])
    assert exit_info.value.code == 2


def test_missing_model_and_unknown_task_are_user_errors(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codereval.cli.app import main

    for args, message in (
        (["generate", *HX, "--out", str(tmp_path / "s.jsonl")], "--model is required"),
        (["generate", *HX, "--model", "m"], "--out is required"),
        (["generate", "--benchmark", "humanevalx-python", "--task-id", "Python/9999",
          "--model", "m", "--out", str(tmp_path / "s.jsonl")], "unknown task id"),
        (["generate", *HX, "--model", "m", "--backend", "nope",
          "--out", str(tmp_path / "s.jsonl")], "unknown backend"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main([*args, "--data-dir", str(shared_data / "humanevalx")])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


def test_generate_takes_the_same_task_selection_as_evaluate(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codereval.api import load_benchmark
    from codereval.cli.app import main

    chosen = load_benchmark("mini-python").select(levels=["class_runnable"],
                                                  projects=["acme/graphkit"])
    code, output = _invoke(["generate", "--benchmark", "mini-python", "--dry-run",
                            "--only-level", "class_runnable", "--only-project", "acme/graphkit"],
                           shared_data)
    assert code == 0, output
    shown = [line.split()[1] for line in output.splitlines()
             if line.startswith("===== ") and line.endswith(")") and "prompt(s)" not in line]
    assert shown == [t.task_id for t in chosen.tasks] and len(shown) == 2
    code, output = _invoke(["generate", "--benchmark", "mini-python", "--dry-run",
                            "--only-task", shown[1]], shared_data)
    assert code == 0 and "1 prompt(s)" in output and f"===== {shown[1]} " in output
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "--benchmark", "mini-python", "--dry-run", "--only-project", "no/such"])
    assert exit_info.value.code == 2
    assert "--only-project no/such: no task of mini-python is in this project" in (
        capsys.readouterr().err)
