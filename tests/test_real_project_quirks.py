"""What projects of Defects4J's era need from the Java engine (found on commons-lang, Lang-1):
sources in the pom's own encoding, a JUnit the launcher accepts, and one's own bugs as tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.benchmarks import builtin_dir
from codereval.environments.java import (
    BuildFailed,
    JavaEnvInfo,
    pom_source_encoding,
    python_codec,
)
from codereval.java.artifacts import needs_newer_junit

POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <properties>
    <project.build.sourceEncoding>{value}</project.build.sourceEncoding>
  </properties>
</project>
"""


@pytest.mark.parametrize(
    ("value", "expected"),
    [("ISO-8859-1", "ISO-8859-1"), ("UTF-8", "UTF-8"), ("${encoding}", "UTF-8")],
)
def test_the_source_encoding_is_the_poms(tmp_path: Path, value: str, expected: str) -> None:
    (tmp_path / "pom.xml").write_text(POM.format(value=value), encoding="utf-8")
    assert pom_source_encoding(tmp_path) == expected


def test_without_a_pom_or_the_property_sources_are_utf8(tmp_path: Path) -> None:
    assert pom_source_encoding(tmp_path) == "UTF-8"
    (tmp_path / "pom.xml").write_text("<project><modelVersion>4.0.0</modelVersion></project>")
    assert pom_source_encoding(tmp_path) == "UTF-8"


def test_java_charset_names_map_to_python_codecs_and_unknown_ones_fail_the_build() -> None:
    assert python_codec("ISO-8859-1") == "iso8859-1"
    assert python_codec("Cp1252") == "cp1252"
    with pytest.raises(BuildFailed, match="not one Python knows"):
        python_codec("X-NO-SUCH")


def test_a_latin1_source_is_read_in_its_own_encoding(tmp_path: Path) -> None:
    source = tmp_path / "EntityArrays.java"
    source.write_bytes('class E { String u = "\\u00FC"; } // \xfc - umlaut\n'.encode("latin-1"))
    info = JavaEnvInfo(root=tmp_path, project_root=tmp_path, main_roots=(), test_roots=(),
                       classes=tmp_path, test_classes=tmp_path, dependencies=(),
                       processors=False, encoding="ISO-8859-1")
    assert "ü - umlaut" in info.read_source(source)
    with pytest.raises(UnicodeDecodeError):
        source.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("jar", "older"),
    [("junit-4.11.jar", True), ("junit-3.8.2.jar", True), ("junit-4.8.1.jar", True),
     ("junit-4.12.jar", False), ("junit-4.13.2.jar", False), ("junit-jupiter-5.9.0.jar", False),
     ("hamcrest-core-1.3.jar", False)],
)
def test_a_junit_older_than_412_is_recognised(jar: str, older: bool) -> None:
    assert needs_newer_junit([Path("/m2/junit") / jar]) is older


def test_evaluate_takes_task_json_lines(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mini = builtin_dir("mini_coderujb")
    # Defect-detection tasks run nothing: the path from --tasks to outcomes, quickly.
    tasks = [line for line in (mini / "tasks.jsonl").read_text().splitlines()
             if json.loads(line)["ujb"]["kind"] == "dd"]
    ids = {json.loads(line)["task_id"] for line in tasks}
    samples = [line for line in (mini / "samples.jsonl").read_text().splitlines()
               if json.loads(line)["task_id"] in ids]
    (tmp_path / "tasks.jsonl").write_text("\n".join(tasks) + "\n")
    (tmp_path / "samples.jsonl").write_text("\n".join(samples) + "\n")
    result = run_cli("evaluate", "--tasks", tmp_path / "tasks.jsonl", "--samples",
                     tmp_path / "samples.jsonl", "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    outcomes = (tmp_path / "run" / "outcomes.jsonl").read_text().splitlines()
    assert len(outcomes) == len(samples)
    assert {json.loads(o)["task_id"] for o in outcomes} == ids
