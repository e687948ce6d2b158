"""Reading CoderEval records, prompt files and samples files into the shared vocabulary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.benchmarks.samples import load_samples
from codereval.errors import UserError
from codereval.families.codereval.official import load_prompt_file
from codereval.families.codereval.records import (
    load_records,
    parse_all_context,
    parse_oracle_context,
)
from codereval.model import Language, Level, Outcome, Sample, Task, Verdict

JAVA_RECORD = {
    "_id": "636766f91a6d9265ec01776e",
    "all_context": '{ "import" : "java.util.* ", "file" : "", "class" : "" , "class_level" : '
    '"isEmpty trim " }',
    "class_name": "StringUtils",
    "code": "/** Trims. */\npublic static String trimToNull(final String s){\n"
    "  return s == null || s.trim().isEmpty() ? null : s.trim();\n}\n",
    "docstring": "/**\n * Trims the string, null when empty.\n */",
    "end_lineno": "44",
    "file_content": "package org.example.util;\n...",
    "file_name": "StringUtils.java",
    "human_label": "Trim, null if empty.",
    "level": "slib_runnable",
    "lineno": "40",
    "name": "trimToNull",
    "oracle_context": '{ "apis" : "[isEmpty, trim]", "classes" : "[String]", "vars" : "[]" }',
    "package": "org.example.util",
    "project": "example/utils",
}


def _write(path: Path, payload: object) -> Path:
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_reads_the_official_python_records(shared_data: Path) -> None:
    tasks = load_records(shared_data / "codereval" / "records_python_sample.json")
    assert [t.task_id for t in tasks] == ["62e60f43d76274f8a4026e28", "62ece4982e6aefcf4aabbd64"]
    first, second = tasks
    assert first.language is Language.PYTHON and first.benchmark == "codereval-python"
    assert first.level is Level.PLIB_RUNNABLE
    assert first.signature == "def hydrate_time(nanoseconds, tz=None):"
    assert first.location is not None
    assert (first.location.lineno, first.location.end_lineno) == (66, 82)
    assert first.oracle_context is not None
    assert first.oracle_context.apis == ("localize", "map", "divmod")
    assert first.oracle_context.classes == ("FixedOffset", "Time")
    assert first.all_context is not None
    assert first.all_context.imports == ("time", "datetime", "pytz", "datetime")
    assert second.oracle_context is not None and second.oracle_context.vars == ("sep", "path")
    assert second.test is None  # official records say nothing of our test extension


def test_reads_java_records_with_unquoted_context_lists(tmp_path: Path) -> None:
    path = _write(tmp_path / "java.json", {"RECORDS": [JAVA_RECORD]})
    (task,) = load_records(path)
    assert task.language is Language.JAVA and task.benchmark == "codereval-java"
    assert task.location is not None
    assert task.location.file_path == "org/example/util/StringUtils.java"
    assert task.location.class_name == "StringUtils"
    assert task.oracle_context is not None
    assert task.oracle_context.apis == ("isEmpty", "trim")
    assert task.all_context is not None and task.all_context.class_level == ("isEmpty", "trim")
    assert task.signature == "public static String trimToNull(final String s)"


def test_plain_list_and_jsonl_forms_read_the_same(shared_data: Path, tmp_path: Path) -> None:
    records = json.loads((shared_data / "codereval" / "records_python_sample.json").read_text())
    as_list = _write(tmp_path / "list.json", records["RECORDS"])
    as_lines = tmp_path / "records.jsonl"
    as_lines.write_text("\n".join(json.dumps(r) for r in records["RECORDS"]) + "\n")
    assert load_records(as_list) == load_records(as_lines)


def test_unknown_keys_are_tolerated(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.json", [dict(JAVA_RECORD, something_new="x")])
    assert load_records(path)[0].name == "trimToNull"


def test_our_test_extension_keys_become_a_test_spec(tmp_path: Path) -> None:
    record = dict(JAVA_RECORD, test_kind="junit5", test_path="src/test/java/T.java")
    (task,) = load_records(_write(tmp_path / "r.json", [record]))
    assert task.test is not None and task.test.kind.value == "junit5"
    assert task.test.path == "src/test/java/T.java"


def test_context_parsers_tolerate_both_list_styles() -> None:
    quoted = parse_oracle_context('{ "apis" : "[\'a\', \'b\']", "classes" : "[]", "vars" : "" }')
    bare = parse_oracle_context('{ "apis" : "[a, b]", "classes" : "[]", "vars" : "[]" }')
    assert quoted == bare and quoted is not None and quoted.apis == ("a", "b")
    assert parse_oracle_context("") is None
    context = parse_all_context('{ "import" : "os re ", "file" : "", "class" : "" }')
    assert context is not None and context.imports == ("os", "re")


def test_values_round_trip_through_json_lines(shared_data: Path) -> None:
    tasks = load_records(shared_data / "codereval" / "records_python_sample.json")
    for task in tasks:
        assert Task.from_json(task.to_json()) == task
    outcome = Outcome(task_id="t", sample_index=3, verdict=Verdict.TIMEOUT, signal=9)
    assert Outcome.from_json(outcome.to_json()) == outcome
    sample = Sample(task_id="t", index=1, raw="```python\nx\n```", code="x")
    assert Sample.from_json(sample.to_json()) == sample


def test_reads_official_prompt_files(shared_data: Path) -> None:
    entries = load_prompt_file(shared_data / "codereval" / "prompts" / "CEPythonRaw.jsonl")
    assert len(entries) == 230
    assert entries[0].input.startswith(entries[0].signature)


def test_reads_official_and_our_samples_files(tmp_path: Path) -> None:
    official = tmp_path / "official.jsonl"
    official.write_text(json.dumps({"_id": "a", "generate_results": ["x = 1", ""]}) + "\n")
    samples = load_samples(official)
    assert [(s.task_id, s.index, s.code) for s in samples] == [("a", 0, "x = 1"), ("a", 1, None)]
    ours = tmp_path / "ours.jsonl"
    ours.write_text(
        "\n".join(
            json.dumps(row)
            for row in (
                {"task_id": "a", "completion": "return 1"},
                {"task_id": "a", "completion": "return 2"},
                {"task_id": "b", "index": 7, "raw": "```\nz\n```", "code": "z"},
            )
        )
    )
    samples = load_samples(ours)
    assert [(s.task_id, s.index) for s in samples] == [("a", 0), ("a", 1), ("b", 7)]
    assert samples[2].raw.startswith("```") and samples[2].code == "z"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"RECORDS": [', "malformed JSON"),
        ("", "the file is empty"),
        ('[{"_id": "abc", "name": "f", "project": "o/p", "file_path": "a.py"}]', "'code'"),
        ('[{"_id": "abc", "name": "f", "project": "o/p", "code": "", "file_path": "a.py", '
         '"level": "galaxy_runnable"}]', "unknown level"),
        ('[{"_id": "abc", "name": "f", "project": "o/p", "code": "", "file_path": "a.py", '
         '"lineno": "ten"}]', "lineno must be a whole number"),
    ],
)
def test_bad_records_give_one_clear_error(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UserError) as info:
        load_records(path)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_key_names_the_record_id_and_the_key(tmp_path: Path) -> None:
    record = {k: v for k, v in JAVA_RECORD.items() if k != "code"}
    with pytest.raises(UserError, match=r"636766f91a6d9265ec01776e.*'code'"):
        load_records(_write(tmp_path / "r.json", [record]))


def test_a_malformed_jsonl_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"task_id": "a", "completion": "x"}\n{"task_id": \n')
    with pytest.raises(UserError, match=r"samples\.jsonl:2: malformed JSON"):
        load_samples(path)


def test_a_missing_records_file_says_where_the_official_ones_are(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"records file not found: .*CoderEval/CoderEval"):
        load_records(tmp_path / "CoderEval4Python.json")
