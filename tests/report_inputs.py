"""Inputs for the report tests: slices of the official result files, and a small run directory
whose tasks carry references, timings and output tails."""

from __future__ import annotations

import shutil
from pathlib import Path

from codereval.model import (
    Language,
    Level,
    Location,
    Outcome,
    Sample,
    Stage,
    Task,
    Verdict,
)

OFFICIAL_MODELS = ("ChatGPT", "CodeGen", "PanGu-Coder")


def official(shared_data: Path, model: str) -> Path:
    return shared_data / "codereval" / "results" / "python" / model / "Raw_Input.jsonl_out.jsonl"


def official_slice(shared_data: Path, model: str, out: Path, *, tasks: int) -> Path:
    """The first ``tasks`` lines of a model's official results, under out/<model>/."""
    lines = official(shared_data, model).read_text(encoding="utf-8").splitlines()[:tasks]
    path = out / model / "Raw_Input.jsonl_out.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def many_models(shared_data: Path, out: Path, *, count: int, tasks: int) -> list[Path]:
    """``count`` inputs (model-01, model-02 ...) cycling through the official models."""
    paths = []
    for index in range(count):
        source = official_slice(
            shared_data, OFFICIAL_MODELS[index % 3], out / "slices", tasks=tasks
        )
        path = out / f"model-{index + 1:02d}" / source.name
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, path)
        paths.append(path)
    return paths


HEAD = 'def slugify(text):\n    """Lower-case words joined by dashes."""\n'
REFERENCE = HEAD + '    return "-".join(text.lower().split())\n'
WRONG = HEAD + '    return "_".join(text.split())\n'


def run_with_references(out: Path) -> Path:
    """A run directory of one task: a passing sample, a wrong one (with its stderr), a repeat."""
    run = out / "run"
    run.mkdir(parents=True)
    task = Task(
        task_id="demo/slugify",
        benchmark="mini-python",
        language=Language.PYTHON,
        name="slugify",
        docstring="Lower-case words joined by dashes.",
        reference=REFERENCE,
        level=Level.SELF_CONTAINED,
        location=Location(project="demo/text", file_path="text/slug.py"),
    )
    samples = [
        Sample(task_id=task.task_id, index=0, raw=REFERENCE, code=REFERENCE),
        Sample(task_id=task.task_id, index=1, raw=WRONG, code=WRONG),
        Sample(task_id=task.task_id, index=2, raw=WRONG, code=WRONG),
    ]
    outcomes = [
        Outcome(task_id=task.task_id, sample_index=0, verdict=Verdict.PASSED, stage=Stage.DONE,
                exit_code=0, wall_time=0.25, cpu_time=0.125, isolation="bwrap"),
        Outcome(task_id=task.task_id, sample_index=1, verdict=Verdict.FAILED, stage=Stage.CHECK,
                exit_code=1, wall_time=0.5, cpu_time=0.375, isolation="bwrap",
                stderr_tail="AssertionError: expected 'a-b', got 'A_B'\n",
                detail="the test's assertion failed"),
        Outcome(task_id=task.task_id, sample_index=2, verdict=Verdict.FAILED, stage=Stage.CHECK,
                exit_code=1, wall_time=0.5, cpu_time=0.375, isolation="bwrap"),
    ]
    (run / "tasks.jsonl").write_text(task.to_json() + "\n")
    (run / "samples.jsonl").write_text("".join(s.to_json() + "\n" for s in samples))
    (run / "outcomes.jsonl").write_text("".join(o.to_json() + "\n" for o in outcomes))
    return run
