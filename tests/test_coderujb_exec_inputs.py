"""CoderUJB execution's pieces and its bad input: bug versions, splicing, JaCoCo's report, the
harness's status line, pinned artifacts, and the one line a wrong task or version gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import codereval
from codereval.benchmarks import builtin_dir, load_benchmark
from codereval.errors import UserError
from codereval.families.coderujb.bugs import load_bugs, split_version, version_spec
from codereval.families.coderujb.runner import classify_tests
from codereval.java import artifacts
from codereval.java.artifacts import Artifact, ArtifactUnavailable, ensure_artifact
from codereval.java.jacoco import CoverageReportError, agent_option, class_coverage
from codereval.java.splice import (
    SpliceError,
    add_to_class,
    annotated_tests,
    declared_tests,
    is_junit3_test_file,
    parses,
    replace_lines,
)
from codereval.java.toolchain import missing_toolchain
from codereval.model import Task, Verdict
from codereval.sandbox.base import ExecResult

MINI = builtin_dir("mini_coderujb")
needs_java = pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")


# --- bug versions ---------------------------------------------------------------------------


def test_the_mini_bugs_manifest() -> None:
    bugs = load_bugs(MINI / "bugs.toml")["mini-ujb/langlite"]
    assert sorted(bugs.bugs) == ["1", "2", "3"]
    assert bugs.recipe("2b").overlay == "bugs/2/buggy"
    assert bugs.recipe("2f").overlay == ""


@pytest.mark.parametrize(("version", "message"), [
    ("9b", "project mini-ujb/langlite has no bug 9 (its bugs: 1, 2, 3)"),
    ("1x", "version '1x' is not <bug>b or <bug>f"),
    ("b1", "version 'b1' is not <bug>b or <bug>f"),
])
def test_a_version_that_does_not_exist_is_one_line(version: str, message: str) -> None:
    bugs = load_bugs(MINI / "bugs.toml")["mini-ujb/langlite"]
    with pytest.raises(UserError) as raised:
        bugs.recipe(version)
    assert raised.value.one_line().startswith(message)
    assert "\n" not in raised.value.one_line()


def test_split_version() -> None:
    assert split_version("12b") == ("12", "b")
    assert split_version("3f") == ("3", "f")


@pytest.mark.parametrize(("text", "message"), [
    ('[projects."mini-ujb/langlite".bugs.1]\nbuggy = { patch = "x" }\n',
     "a version is a table of source, commit, overlay"),
    ('[projects."mini-ujb/langlite"]\nbranch = "x"\n', "unknown keys ['branch']"),
    ('[projects."other/lib".bugs.1]\nbuggy = {}\n', "project 'other/lib' is not in"),
    ('[projects."mini-ujb/langlite".bugs.one]\nbuggy = {}\n', "bug 'one' must be a number"),
    ("[projects]\n", "no [projects] table"),
])
def test_a_malformed_bugs_manifest_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "projects.toml").write_text(
        f'[projects."mini-ujb/langlite"]\nlanguage = "java"\n'
        f'source = "{MINI / "projects" / "langlite"}"\n', encoding="utf-8")
    (tmp_path / "bugs.toml").write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_bugs(tmp_path / "bugs.toml")


def test_versions_are_trees_put_together_once(tmp_path: Path) -> None:
    bugs = load_bugs(MINI / "bugs.toml")["mini-ujb/langlite"]
    buggy = version_spec(bugs, "1b", root=tmp_path)
    fixed = version_spec(bugs, "1f", root=tmp_path)
    assert buggy.name.startswith("mini-ujb/langlite@") and buggy.name != fixed.name
    # Bugs 1 and 2 were fixed in the same tree: their fixed versions are one tree.
    assert version_spec(bugs, "2f", root=tmp_path).source == fixed.source
    relative = "src/main/java/org/langlite/StringUtils.java"
    base = (MINI / "projects" / "langlite" / relative).read_text(encoding="utf-8")
    assert (Path(fixed.source) / relative).read_text(encoding="utf-8") == base
    broken = (Path(buggy.source) / relative).read_text(encoding="utf-8")
    assert "str.length() < maxWidth" in broken and "str.length() < maxWidth" not in base
    # The tests are the fixed version's in both (as in Defects4J).
    test = "src/test/java/org/langlite/StringUtilsTest.java"
    assert (Path(buggy.source) / test).read_bytes() == (Path(fixed.source) / test).read_bytes()
    assert version_spec(bugs, "1b", root=tmp_path).source == buggy.source


# --- splicing ---------------------------------------------------------------------------------


def test_replace_lines_and_its_bounds() -> None:
    text = "a\nb\nc\nd\n"
    assert replace_lines(text, "X", start=2, end=3) == "a\nX\nd\n"
    with pytest.raises(SpliceError, match=r"lines 4\.\.9 are outside F.java \(4 lines\)"):
        replace_lines(text, "X", start=4, end=9, where="F.java")


def test_add_to_class_finds_the_closing_brace_in_the_tree() -> None:
    source = 'package p;\n\npublic class T {\n    String s = "}";\n}\n// }\n'
    added = add_to_class(source, "    @Test\n    public void b() {}\n", class_name="T")
    assert added == ('package p;\n\npublic class T {\n    String s = "}";\n    @Test\n'
                     '    public void b() {}\n}\n// }\n')
    with pytest.raises(SpliceError, match="class Other not found"):
        add_to_class(source, "void x() {}", class_name="Other")


def test_parses_and_test_methods() -> None:
    assert parses("class A { int f() { return 1; } }")
    assert not parses("class A { int f() { return 1 } }")
    code = ("@Test\npublic void one() {}\n@org.junit.jupiter.api.Test void two() {}\n"
            "private void helper() {}\n")
    assert annotated_tests(code) == ["one", "two"]
    assert annotated_tests("public void helper() {}") == []


JUNIT3_METHODS = """    public void testEncoder() throws EncoderException {
        assertEquals("A", encode("a"));
    }
    public void helper() {}
    public void testWithArgument(int a) {}
    private void testPrivate() {}
    public int testReturning() { return 1; }
"""


def test_a_junit3_class_runs_its_public_void_test_methods_without_parameters() -> None:
    assert declared_tests(JUNIT3_METHODS, junit3=True) == ["testEncoder"]
    # In a JUnit 4 or 5 class only @Test counts, and @Test wins in a JUnit 3 file too.
    assert declared_tests(JUNIT3_METHODS) == []
    assert declared_tests("@Test public void check() {}", junit3=True) == ["check"]


def test_a_test_file_without_any_test_annotation_is_junit3() -> None:
    assert is_junit3_test_file("public class CodecTest extends TestCase {\n"
                               "    public void testA() {}\n}\n")
    assert not is_junit3_test_file("import org.junit.Test;\npublic class T {\n"
                                   "    @Test public void a() {}\n}\n")
    assert not is_junit3_test_file("class T { @org.junit.jupiter.api.Test void a() {} }")


# --- JaCoCo's XML report ----------------------------------------------------------------------

JACOCO_XML = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd">
<report name="JaCoCo Coverage Report">
<sessioninfo id="x" start="1" dump="2"/>
<package name="org/langlite">
<class name="org/langlite/IntRange" sourcefilename="IntRange.java">
<method name="fit" desc="(I)I" line="79">
<counter type="INSTRUCTION" missed="0" covered="12"/>
<counter type="BRANCH" missed="0" covered="4"/>
<counter type="LINE" missed="0" covered="5"/>
</method>
<counter type="INSTRUCTION" missed="80" covered="30"/>
<counter type="BRANCH" missed="22" covered="4"/>
<counter type="LINE" missed="19" covered="9"/>
<counter type="METHOD" missed="8" covered="2"/>
</class>
<class name="org/langlite/IntRange$Cursor" sourcefilename="IntRange.java">
<counter type="BRANCH" missed="1" covered="1"/>
<counter type="LINE" missed="2" covered="1"/>
</class>
<class name="org/langlite/StringUtils" sourcefilename="StringUtils.java">
<counter type="LINE" missed="29" covered="0"/>
</class>
<counter type="LINE" missed="50" covered="10"/>
</package>
<counter type="LINE" missed="50" covered="10"/>
</report>
"""


def test_jacoco_class_counters_include_nested_classes_only() -> None:
    found = class_coverage(JACOCO_XML, ["org.langlite.IntRange"])
    # IntRange's own class counters (not its method's twice) plus IntRange$Cursor's.
    assert (found.lines_covered, found.lines_total) == (10, 31)
    assert (found.branches_covered, found.branches_total) == (5, 28)
    with pytest.raises(CoverageReportError, match=r"no class org\.langlite\.Missing"):
        class_coverage(JACOCO_XML, ["org.langlite.Missing"])
    with pytest.raises(CoverageReportError, match="unreadable"):
        class_coverage("<report", ["org.langlite.IntRange"])


def test_jacoco_agent_records_only_the_classes_under_test() -> None:
    flag = agent_option("/j/agent.jar", destfile="/s/jacoco.exec", classes=["a.B", "c.D"])
    assert flag == ("-javaagent:/j/agent.jar=destfile=/s/jacoco.exec,includes=a.B:a.B$*:c.D:c.D$*,"
                    "dumponexit=false,output=file")


# --- the harness's status line ----------------------------------------------------------------


def _exec(stdout: str, *, exit_code: int = 0) -> ExecResult:
    return ExecResult(exit_code=exit_code, signal=None, wall_time=0.5, cpu_time=0.5,
                      stdout=stdout.encode(), stderr=b"", isolation="bwrap")


def test_harness_status_names_the_failing_tests() -> None:
    run = classify_tests(_exec("printed\nM tests run=5 failures=1 errors=1 "
                               "failed=a.BTest::x,a.BTest::y\n"), marker="M")
    assert run.status is Verdict.RUNTIME_ERROR
    assert run.failed == ("a.BTest::x", "a.BTest::y") and run.tests == 5
    assert run.stdout_tail == "printed"
    assert classify_tests(_exec("M tests run=2 failures=0 errors=0 failed=\n"),
                          marker="M").status is Verdict.PASSED
    # A forged line without the marker, or an exit before the end, is not a pass.
    forged = classify_tests(_exec("X tests run=1 failures=0 errors=0 failed=\n"), marker="M")
    assert forged.status is Verdict.RUNTIME_ERROR
    assert classify_tests(_exec("M tests run=0 failures=0 errors=0 failed=\n"),
                          marker="M").status is Verdict.INFRA_ERROR


# --- pinned artifacts -------------------------------------------------------------------------


def test_a_pinned_artifact_with_another_hash_is_refused(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Artifact(group="org.example", artifact="thing", version="1.0", classifier="runtime",
                    sha256="0" * 64)
    jar = fake.path(tmp_path)
    assert jar.name == "thing-1.0-runtime.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"not the published jar")
    monkeypatch.setattr(artifacts, "maven_repository", lambda: tmp_path)
    with pytest.raises(ArtifactUnavailable, match="not the pinned 0000"):
        ensure_artifact(fake)
    assert fake.coordinates == "org.example:thing:1.0:jar:runtime"


# --- bad tasks, through the API and the CLI ---------------------------------------------------


def _task(task_id: str, **changes: object) -> Task:
    task = next(t for t in load_benchmark("mini-coderujb") if t.task_id == task_id)
    assert task.ujb is not None
    return task.model_copy(update={"ujb": task.ujb.model_copy(update=changes)})


@needs_java
@pytest.mark.parametrize(("task", "message"), [
    (_task("apr-langlite-1-abbreviate", bug_id="7"),
     "project mini-ujb/langlite has no bug 7 (its bugs: 1, 2, 3)"),
    (_task("fcg-langlite-1-abbreviate", start=400, end=410),
     "task fcg-langlite-1-abbreviate: lines 400..410 are outside"),
    (_task("ctg-langlite-2-toInt", test_file="src/test/java/Nowhere.java"),
     "task ctg-langlite-2-toInt: src/test/java/Nowhere.java is not in"),
])
def test_a_wrong_task_is_one_line_and_writes_nothing(tmp_path: Path, task: Task,
                                                     message: str) -> None:
    bench = codereval.load_benchmark([task], projects=MINI / "projects.toml")
    run_dir = tmp_path / "run"
    with pytest.raises(UserError) as raised:
        codereval.evaluate(bench, [{"task_id": task.task_id, "completion": task.reference}],
                           run_dir=run_dir, timeout=8)
    assert raised.value.one_line().startswith(message)
    assert "\n" not in raised.value.one_line()
    assert not run_dir.exists()


def test_defects4j_asked_for_without_it_is_one_line(tmp_path: Path, run_cli,  # type: ignore[no-untyped-def]
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    projects = tmp_path / "projects.toml"
    projects.write_text(f'[projects."mini-ujb/langlite"]\nlanguage = "java"\n'
                        f'source = "{MINI / "projects" / "langlite"}"\n', encoding="utf-8")
    (tmp_path / "bugs.toml").write_text('[projects."mini-ujb/langlite"]\ndefects4j = "Lang"\n',
                                        encoding="utf-8")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "fcg-langlite-2-max", "code": "int x;"}) + "\n",
                       encoding="utf-8")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    done = run_cli("evaluate", "--benchmark", "mini-coderujb", "--projects", projects,
                   "--samples", samples, "--sandbox", "rlimit", "--out", tmp_path / "run")
    assert done.exit_code == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "defects4j is not on PATH" in lines[0], done
    assert not (tmp_path / "run").exists()
