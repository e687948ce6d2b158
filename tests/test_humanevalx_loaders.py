"""HumanEval-X and HumanEval loaders: what a task holds, the translation prompt, bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from codereval.benchmarks import load_benchmark
from codereval.errors import UserError
from codereval.families.humanevalx.dataset import (
    LANGUAGES,
    load_humanevalx,
    load_humanevalx_translation,
    load_problems,
)
from codereval.model import Language
from codereval.model import TestKind as Kind


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_164_problems_with_an_entry_point(hx: Path, language: str) -> None:
    tasks = load_humanevalx(language, data_dir=hx)
    assert len(tasks) == 164
    assert len({t.task_id for t in tasks}) == 164
    assert all(t.language is Language(language) for t in tasks)
    assert all(t.name and t.name in t.extra["declaration"] for t in tasks)
    assert all(t.test is not None and t.test.kind is Kind.PROGRAM for t in tasks)
    assert all(t.benchmark == f"humanevalx-{language}" for t in tasks)


def test_generation_task_keeps_prompt_and_go_specific_fields(hx: Path) -> None:
    task = load_humanevalx("go", data_dir=hx)[0]
    assert task.task_id == "Go/0"
    assert task.name == "HasCloseElements"
    assert task.prompt.startswith("import (")
    # The runner writes its own import block, so the prefix drops the prompt's.
    assert '"math"' not in task.extra["prefix"]
    assert task.extra["prefix"].rstrip().endswith("func HasCloseElements(numbers []float64, "
                                                  "threshold float64) bool {")
    assert "testify/assert" in task.extra["go_test_setup"]
    assert task.extra["go_import"].strip().startswith("import")
    assert task.docstring.startswith("// Check if")


def test_python_docstring_comes_from_text(hx: Path) -> None:
    task = load_humanevalx("python", data_dir=hx)[0]
    assert task.name == "has_close_elements"
    assert task.docstring.strip().startswith("Check if in given list")
    assert task.extra["prefix"] == task.prompt


def test_translation_prompt_is_header_source_solution_target_declaration(hx: Path) -> None:
    tasks = load_humanevalx_translation("python", "cpp", data_dir=hx)
    assert len(tasks) == 164
    task = tasks[3]
    python = load_problems("python", data_dir=hx)[3]
    cpp = load_problems("cpp", data_dir=hx)[3]
    assert task.benchmark == "humanevalx-python-to-cpp"
    assert task.language is Language.CPP
    assert task.task_id == "CPP/3"
    assert task.prompt.startswith("code translation\nPython:\n")
    assert task.prompt == (
        "code translation\nPython:\n" + python.declaration + "\n"
        + python.canonical_solution.rstrip() + "\nC++:\n" + cpp.declaration
    )
    assert task.prompt.endswith("C++:\n" + cpp.declaration)
    # No docstring on either side, as in the paper.
    assert python.docstring.strip() not in task.prompt
    # The evaluated program starts from the target declaration.
    assert task.extra["prefix"] == cpp.declaration
    assert task.extra["mode"] == "translation"
    assert task.extra["source_language"] == "python"


def test_registry_dispatches_generation_and_translation_names(hx: Path) -> None:
    assert len(load_benchmark("humanevalx-js", data_dir=hx)) == 164
    assert load_benchmark("humanevalx-java-to-go", data_dir=hx)[0].task_id == "Go/0"


def test_unknown_language_names_the_choices(hx: Path) -> None:
    with pytest.raises(UserError, match=r"unknown HumanEval-X language 'cobol'.*python, cpp"):
        load_humanevalx("cobol", data_dir=hx)
    with pytest.raises(UserError, match="unknown HumanEval-X language"):
        load_humanevalx_translation("python", "cobol", data_dir=hx)


def test_translation_to_the_same_language_is_refused(hx: Path) -> None:
    with pytest.raises(UserError, match="two different languages"):
        load_humanevalx_translation("go", "go", data_dir=hx)


def test_missing_file_names_the_path_and_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        load_humanevalx("cpp", data_dir=tmp_path)
    message = caught.value.one_line()
    assert "\n" not in message
    assert str(tmp_path / "humaneval_cpp.jsonl.gz") in message
    assert "humaneval-x/cpp/data/humaneval_cpp.jsonl.gz" in message


def test_without_data_dir_the_error_says_how_to_fetch_the_file() -> None:
    with pytest.raises(UserError, match=r"--data-dir.*download it from https://\S+humaneval_go"):
        load_humanevalx("go", data_dir=None)


def test_plain_jsonl_is_read_too(tmp_path: Path, hx: Path) -> None:
    with gzip.open(hx / "humaneval_js.jsonl.gz", "rt", encoding="utf-8") as handle:
        first = handle.readline()
    (tmp_path / "humaneval_js.jsonl").write_text(first, encoding="utf-8")
    tasks = load_humanevalx("js", data_dir=tmp_path)
    assert [t.task_id for t in tasks] == ["JavaScript/0"]


def test_malformed_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "humaneval_cpp.jsonl").write_text('{"task_id": "CPP/0"\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"humaneval_cpp.jsonl:1: malformed JSON"):
        load_humanevalx("cpp", data_dir=tmp_path)


def test_record_missing_keys_is_named(tmp_path: Path) -> None:
    record = {"task_id": "Go/0", "prompt": "", "declaration": "func F() {\n",
              "canonical_solution": "}", "test": ""}
    (tmp_path / "humaneval_go.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r":1: not a HumanEval-X record \(missing import, "
                                        r"docstring, test_setup\)"):
        load_humanevalx("go", data_dir=tmp_path)
