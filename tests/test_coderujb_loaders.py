"""CoderUJB datasets read by path: the five kinds, three formats, and every bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ujb_rows import (
    FUNCTION,
    SOURCE,
    apr_row,
    ctg_row,
    dd_rows,
    fcg_row,
    itg_row,
    rows_of,
    write_artifact_json,
    write_jsonl,
    write_parquet,
)

from codereval.benchmarks import load_benchmark
from codereval.errors import UserError
from codereval.families.coderujb.dataset import is_coderujb_file, load_coderujb
from codereval.model import Language, Task, UjbKind

KINDS = ("fcg", "ctg", "itg", "apr", "dd")


def _write(tmp_path: Path, kind: str, fmt: str, rows: list[dict[str, Any]] | None = None) -> Path:
    rows = rows if rows is not None else rows_of(kind)
    if fmt == "json":
        return write_artifact_json(tmp_path / f"task_{kind}_bench_default.json", kind, rows)
    if fmt == "jsonl":
        return write_jsonl(tmp_path / f"code_ujb_{kind}.jsonl", rows)
    return write_parquet(tmp_path / f"code_ujb_{kind}.parquet", rows)


@pytest.mark.parametrize("fmt", ["json", "jsonl", "parquet"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_loads_the_same_tasks_from_every_published_format(
    tmp_path: Path, kind: str, fmt: str
) -> None:
    tasks = load_coderujb(_write(tmp_path, kind, fmt))
    reference = load_coderujb(_write(tmp_path, kind, "jsonl"))
    assert tasks == reference
    assert [t.ujb.kind.value for t in tasks if t.ujb] == [kind] * len(rows_of(kind))
    for task in tasks:
        assert task.benchmark == "coderujb" and task.language is Language.JAVA
        assert task.prompt.startswith("//")
        assert task.extra["prompt_chat"].startswith("```")


def test_fcg_rows_map_to_the_spec_with_one_based_lines(tmp_path: Path) -> None:
    (task,) = load_coderujb(_write(tmp_path, "fcg", "jsonl"))
    spec = task.ujb
    assert spec is not None
    assert (spec.project, spec.bug_id) == ("Lang", "12")
    assert spec.location == "src/main/java/org/apache/commons/lang3/StringUtils.java"
    assert spec.source_dir == "src/main/java"
    # Published rows count from 0: row start 14 is the signature's line, line 15 of the file.
    assert (spec.start, spec.end) == (15, 20)
    lines = SOURCE.splitlines()
    assert "\n".join(lines[spec.start - 1 : spec.end]) == FUNCTION
    assert spec.test_methods == (
        "org.apache.commons.lang3.StringUtilsTest::testAbbreviate",
        "org.apache.commons.lang3.StringUtilsTest::testAbbreviateNull",
    )
    assert spec.function_name == task.name == "abbreviate"
    assert spec.indent == "    "
    assert task.reference == FUNCTION and task.file_content == SOURCE
    assert task.location is not None and task.location.lineno == 15
    assert (task.location.package, task.location.class_name) == (
        "org.apache.commons.lang3", "StringUtils"
    )
    assert "Abbreviates a String" in task.docstring


def test_ctg_rows_name_the_test_class_and_the_classes_under_test(tmp_path: Path) -> None:
    (task,) = load_coderujb(_write(tmp_path, "ctg", "parquet"))
    spec = task.ujb
    assert spec is not None and spec.kind is UjbKind.CTG
    assert spec.test_class == "org.apache.commons.lang3.StringUtilsTest"
    assert spec.test_file == spec.location
    assert spec.test_dir == "src/test/java"
    assert spec.classes_under_test == ("org.apache.commons.lang3.StringUtils",)
    assert (spec.start, spec.end) == (11, 14)
    assert spec.function_signature.startswith("@Test")


def test_itg_rows_carry_the_issue_and_both_versions_lines(tmp_path: Path) -> None:
    row = itg_row()
    row["start_buggy"], row["end_buggy"] = 20, 23
    (task,) = load_coderujb(_write(tmp_path, "itg", "json", [row]))
    spec = task.ujb
    assert spec is not None and spec.kind is UjbKind.ITG
    assert spec.test_methods == ("org.apache.commons.lang3.StringUtilsTest::testAbbreviateNull",)
    assert spec.test_class == "org.apache.commons.lang3.StringUtilsTest"
    assert spec.classes_under_test == ("org.apache.commons.lang3.StringUtils",)
    assert (spec.start, spec.end, spec.start_buggy, spec.end_buggy) == (11, 14, 21, 24)
    assert spec.issue is not None
    assert spec.issue.title == "StringUtils.abbreviate throws NullPointerException for null input"
    assert spec.issue.body.startswith("Calling abbreviate(null, 4) throws an NPE")
    assert task.extra["issue_id"] == "Lang-571"
    assert task.extra["source_buggy"] == row["source_buggy"]


def test_apr_and_dd_rows_keep_both_versions_of_the_method(tmp_path: Path) -> None:
    (repair,) = load_coderujb(_write(tmp_path, "apr", "jsonl"))
    assert repair.ujb is not None
    assert repair.ujb.buggy_function == apr_row()["buggy"]
    assert repair.ujb.fixed_function == repair.reference == apr_row()["fix"]
    assert repair.name == "abbreviate"  # from the signature: APR rows have no function_name
    buggy, fixed = load_coderujb(_write(tmp_path, "dd", "jsonl"))
    assert buggy.ujb is not None and fixed.ujb is not None
    assert (buggy.ujb.defective, fixed.ujb.defective) == (True, False)
    assert buggy.ujb.buggy_function == dd_rows()[0]["code"] and not buggy.ujb.fixed_function
    assert buggy.name == "abbreviate"


def test_an_itg_spec_without_buggy_lines_serialises_as_before_the_fields_existed(
    tmp_path: Path,
) -> None:
    (task,) = load_coderujb(_write(tmp_path, "fcg", "jsonl"))
    data = json.loads(task.to_json())
    assert "start_buggy" not in data["ujb"] and "end_buggy" not in data["ujb"]
    assert Task.from_json(task.to_json()) == task
    (itg,) = load_coderujb(_write(tmp_path, "itg", "jsonl"))
    assert json.loads(itg.to_json())["ujb"]["start_buggy"] == 11


def test_kind_override_and_benchmark_names(tmp_path: Path) -> None:
    path = _write(tmp_path, "apr", "jsonl")
    assert load_benchmark("coderujb", tasks_path=path) == load_coderujb(path)
    assert load_benchmark("coderujb-apr", tasks_path=path) == load_coderujb(path, kind="apr")
    assert is_coderujb_file(path) and is_coderujb_file(_write(tmp_path, "dd", "json"))


def _error(path: Path, **kwargs: Any) -> str:
    with pytest.raises(UserError) as info:
        load_coderujb(path, **kwargs)
    line = info.value.one_line()
    assert "\n" not in line
    return line


def test_a_row_missing_a_column_names_file_row_and_column(tmp_path: Path) -> None:
    rows = [fcg_row(), fcg_row()]
    rows[1]["task_id"] = "other"
    del rows[1]["testmethods"]
    path = _write(tmp_path, "fcg", "jsonl", rows)
    line = _error(path)
    assert str(path) in line and "row 2" in line and "'testmethods'" in line and "fcg" in line


def test_a_kind_that_does_not_fit_the_file_names_the_missing_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "dd", "jsonl")
    line = _error(path, kind="apr")
    assert "row 1" in line and "'testmethods'" in line and "apr tasks need" in line


def test_unknown_kind(tmp_path: Path) -> None:
    line = _error(_write(tmp_path, "fcg", "jsonl"), kind="xyz")
    assert "unknown CoderUJB task kind 'xyz'" in line and "fcg, ctg, itg, apr, dd" in line
    with pytest.raises(UserError, match="unknown CoderUJB task kind"):
        load_benchmark("coderujb-xyz", tasks_path=_write(tmp_path, "fcg", "jsonl"))


def test_a_file_whose_columns_fit_no_kind_asks_for_kind(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rows.jsonl", [{"task_id": "a", "bug_id": 1, "x": 2}])
    line = _error(path)
    assert "cannot tell which CoderUJB task kind" in line and "--kind" in line


def test_wrong_values_name_row_and_column(tmp_path: Path) -> None:
    cases: list[tuple[str, Any, str]] = [
        ("start", "twelve", "must be a line number"),
        ("start", -3, "must not be negative"),
        ("end", 2, "is before 'start'"),
        ("testmethods", "not a test", "is not a test method"),
        ("function", ["a"], "must be text"),
    ]
    for column, value, message in cases:
        row = fcg_row()
        row[column] = value
        line = _error(write_jsonl(tmp_path / f"{column}.jsonl", [row]))
        assert "row 1" in line and f"'{column}'" in line and message in line, line
    row = dd_rows()[0]
    row["defective"] = "maybe"
    line = _error(write_jsonl(tmp_path / "dd.jsonl", [row]))
    assert "'defective' must be true or false" in line
    row = ctg_row()
    row["classmethods"] = [{"be_test_function_name": "x"}]
    assert "has no be_test_class_name" in _error(write_jsonl(tmp_path / "ctg.jsonl", [row]))


def test_repeated_task_ids_are_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "fcg", "jsonl", [fcg_row(), fcg_row()])
    line = _error(path)
    assert "row 2" in line and "repeats row 1" in line


def test_unreadable_and_empty_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 this is not parquet")
    assert "not a readable parquet file" in _error(broken)
    assert "not found" in _error(tmp_path / "missing.jsonl")
    bad_json = tmp_path / "task_repair_bench_x.json"
    bad_json.write_text('{"code_ujb_repair": [', encoding="utf-8")
    assert "malformed JSON" in _error(bad_json)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert "empty" in _error(empty)
    wrong = tmp_path / "task_complete_bench_x.json"
    wrong.write_text('{"code_ujb_complete": {"a": 1}}', encoding="utf-8")
    assert "must hold a list of rows" in _error(wrong)


def test_parquet_without_pyarrow_says_which_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "fcg", "parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    line = _error(path)
    assert "needs pyarrow" in line and "codereval[coderujb]" in line


def test_tasks_command_lists_shows_and_reports_bad_input(tmp_path: Path, run_cli) -> None:
    path = _write(tmp_path, "dd", "parquet")
    result = run_cli("tasks", path)
    assert result.exit_code == 0, result
    assert "dd Lang-12" in result.stdout and "abbreviate" in result.stdout
    listed = run_cli("tasks", _write(tmp_path, "apr", "json"), "--json")
    assert [json.loads(line)["ujb"]["kind"] for line in listed.stdout.splitlines()] == ["apr"]
    shown = run_cli("tasks", _write(tmp_path, "itg", "jsonl"), "--show", itg_row()["task_id"])
    assert shown.exit_code == 0, shown
    assert "prompt: chat" in shown.stdout and "NullPointerException" in shown.stdout
    bad = run_cli("tasks", path, "--kind", "nope")
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "unknown CoderUJB task kind 'nope'" in bad.stderr


def test_generate_dry_run_prints_the_datasets_prompts(tmp_path: Path, run_cli) -> None:
    path = _write(tmp_path, "fcg", "json")
    result = run_cli("generate", "--benchmark", "coderujb", "--tasks", path, "--dry-run")
    assert result.exit_code == 0, result
    assert fcg_row()["prompt_complete"].strip() in result.stdout
    chat = run_cli(
        "generate", "--tasks", path, "--style", "chat", "--dry-run"
    )
    assert chat.exit_code == 0, chat
    assert "[system]\nYou are a helpful assistant." in chat.stdout
    missing = run_cli("generate", "--benchmark", "coderujb-fcg", "--dry-run")
    assert missing.exit_code == 2 and "needs a CoderUJB dataset file" in missing.stderr
