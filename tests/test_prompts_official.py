"""Prompt builders reproduce CoderEval's official prompt files byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.families.codereval.records import load_records
from codereval.model import Language, Task
from codereval.prompting.prompts import (
    PromptStyle,
    PromptVariant,
    base_prompt,
    build_prompt,
    java_human_prompt,
    java_raw_prompt,
    python_prompt,
)

FILES = {
    "CEPythonRaw.jsonl": python_prompt,
    "CEPythonHumanLabel.jsonl": python_prompt,
    "CEJavaRaw.jsonl": java_raw_prompt,
    "CEJavaHumanLabel.jsonl": java_human_prompt,
}


def _entries(shared_data: Path, name: str) -> list[dict[str, str]]:
    path = shared_data / "codereval" / "prompts" / name
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_every_official_prompt_is_rebuilt_exactly(shared_data: Path) -> None:
    total = 0
    for name, builder in FILES.items():
        for entry in _entries(shared_data, name):
            built = builder(entry["signature"], entry["docstring"])
            assert built == entry["input"], (name, entry["question_id"])
            total += 1
    # 230 Python tasks in each Python file; the Java files hold 239 (9 beyond the 230 tasks).
    assert total == 938


def _task_from_entry(entry: dict[str, str], *, language: Language, human: bool) -> Task:
    return Task(
        task_id=entry["question_id"],
        benchmark=f"codereval-{language}",
        language=language,
        name="f",
        signature=entry["signature"] if language is Language.PYTHON else "",
        docstring="" if human else entry["docstring"],
        human_label=entry["docstring"] if human else "",
        # Java prompts show the declaration as the reference writes it, through its brace.
        reference=entry["signature"] + "\n    return;\n}" if language is Language.JAVA else "",
    )


@pytest.mark.parametrize("name", sorted(FILES))
def test_builder_from_tasks_gives_the_official_prompts(shared_data: Path, name: str) -> None:
    language = Language.PYTHON if "Python" in name else Language.JAVA
    human = "HumanLabel" in name
    variant = PromptVariant.HUMAN if human else PromptVariant.RAW
    for entry in _entries(shared_data, name):
        task = _task_from_entry(entry, language=language, human=human)
        prompt = build_prompt(task, variant=variant, style=PromptStyle.COMPLETION)
        assert prompt.text == entry["input"], entry["question_id"]
        assert prompt.head == entry["input"]


def test_real_records_give_the_official_prompts(shared_data: Path) -> None:
    tasks = load_records(shared_data / "codereval" / "records_python_sample.json")
    raw = {e["question_id"]: e for e in _entries(shared_data, "CEPythonRaw.jsonl")}
    human = {e["question_id"]: e for e in _entries(shared_data, "CEPythonHumanLabel.jsonl")}
    assert tasks
    for task in tasks:
        assert base_prompt(task, human=False) == raw[task.task_id]["input"]
        assert base_prompt(task, human=True) == human[task.task_id]["input"]


def test_java_signature_keeps_annotations_and_spacing_but_not_javadoc() -> None:
    task = Task(
        task_id="t",
        benchmark="codereval-java",
        language=Language.JAVA,
        name="write",
        docstring="/** \n * Writes.\n */\n",
        reference=(
            "/** Writes {braces} in a comment. */\n@Override public void write(byte b[]) "
            "throws IOException {\n  out.write(b);\n}"
        ),
    )
    assert build_prompt(task).text == (
        "/** \n * Writes.\n */\n\n@Override public void write(byte b[]) throws IOException {"
    )
