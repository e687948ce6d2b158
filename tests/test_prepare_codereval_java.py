"""CoderEval-Java from public material: each task's method located in its project (a local git
repository with a small multi-module Maven project at a pinned commit), records in the official
15-key form, compile verdicts without tests, and compile agreement with an official file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from codereval.families.codereval.agreement import compile_state
from codereval.families.codereval.prepare.java_locate import (
    index_methods,
    locate,
    methods_of,
    signature_of,
)
from codereval.families.codereval.records import JAVA_KEYS
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome, Stage, Verdict
from codereval.runners.java import NO_TEST

UTIL = """package demo;

public class Util {

    private static final String PREFIX = "x";

    /**
     * Doubles a number.
     * @param n the number
     */
    public static int twice(int n) {
        return 2 * n;
    }

    /** Doubles a text. */
    @Deprecated
    public static String twice(String s) {
        return s + s;
    }

    /** Says hello. */
    public String hello() {
        return PREFIX + "hello";
    }
}
"""
OTHER = """package demo;

public class Other {
    /** Says hello. */
    public String hello() {
        return "other";
    }
}
"""
PARENT_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId><artifactId>parent</artifactId><version>1</version>
  <packaging>pom</packaging>
  <modules><module>core</module></modules>
  <properties>
    <maven.compiler.source>11</maven.compiler.source>
    <maven.compiler.target>11</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
</project>
"""
CORE_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>demo</groupId><artifactId>parent</artifactId><version>1</version></parent>
  <artifactId>core</artifactId>
</project>
"""
IDS = ("6367670b1a6d9265ec0179aa", "6367670b1a6d9265ec0179ab", "6367670b1a6d9265ec0179ac")


def test_a_signature_names_its_method_and_parameter_types() -> None:
    assert signature_of("public static String[] f(final byte[] a,Map<String, Integer> m){") == (
        "f", ("byte[]", "Map<String,Integer>"))
    assert signature_of("void g(String... xs){") == ("g", ("String...",))


def test_overloads_are_told_apart_by_types_and_copies_by_javadoc(tmp_path: Path) -> None:
    (tmp_path / "src" / "demo").mkdir(parents=True)
    (tmp_path / "src" / "demo" / "Util.java").write_text(UTIL)
    (tmp_path / "src" / "demo" / "Other.java").write_text(OTHER)
    index = index_methods(tmp_path, ["src"])
    by_type = locate(index, name="twice", signature="public static String twice(String s){",
                     javadoc="/** Doubles a text. */")
    assert by_type.status == "ok" and by_type.method is not None
    # The span starts at the annotation and leaves the Javadoc out.
    assert (by_type.method.lineno, by_type.method.end_lineno) == (16, 19)
    assert by_type.method.javadoc.strip() == "/** Doubles a text. */"
    assert by_type.method.class_name == "Util" and by_type.method.package == "demo"
    same = locate(index, name="hello", signature="public String hello(){",
                  javadoc="/**\n * Says hello.\n */")
    assert same.method is None and same.status.startswith("ambiguous: 2 candidates")
    missing = locate(index, name="gone", signature="void gone(){", javadoc="")
    assert missing.method is None and missing.status.startswith("not found")
    assert [m.name for m in methods_of(OTHER, file="Other.java")] == ["hello"]


def test_compile_state_reads_our_outcomes() -> None:
    def outcome(verdict: Verdict, stage: Stage, detail: str = "") -> Outcome:
        return Outcome(task_id="t", sample_index=0, verdict=verdict, stage=stage, detail=detail)

    assert compile_state(outcome(Verdict.COMPILE_ERROR, Stage.COMPILE)) == "compile_error"
    assert compile_state(outcome(Verdict.FAILED, Stage.CHECK)) == "compiled"
    assert compile_state(outcome(Verdict.INFRA_ERROR, Stage.COMPILE, NO_TEST)) == "compiled"
    assert compile_state(outcome(Verdict.INFRA_ERROR, Stage.ENVIRONMENT, "no env")) is None


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def _world(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(checkouts, manifest, results, prompts): a pinned multi-module project and its files."""
    repo = tmp_path / "checkouts" / "me---demo"
    source = repo / "core" / "src" / "main" / "java" / "demo"
    source.mkdir(parents=True)
    (repo / "pom.xml").write_text(PARENT_POM)
    (repo / "core" / "pom.xml").write_text(CORE_POM)
    (source / "Util.java").write_text(UTIL)
    (source / "Other.java").write_text(OTHER)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "pinned")
    pinned = _git(repo, "rev-parse", "HEAD")
    (source / "Util.java").write_text(UTIL.replace("2 * n", "n + n"))
    _git(repo, "commit", "--quiet", "-am", "later")
    manifest = tmp_path / "projects.toml"
    manifest.write_text(
        '[projects."me/demo"]\nlanguage = "java"\n'
        f'source = "https://example.org/me/demo.git"\ncommit = "{pinned}"\n'
        'java_release = "11"\nmaven_modules = ["core"]\n\n'
        f'[official."me/demo"]\nname = "demo-master"\ntasks = {json.dumps(list(IDS))}\n'
    )
    good = "public static int twice(int n) {\n    return n << 1;\n}"
    bad = "public static int twice(int n) {\n    return n.twice();\n}"
    rows = [
        {"_id": IDS[0], "method_name": "twice", "project_name": "demo-master",
         "code_level": "self_contained", "docstring": "",
         "generate_results": [
             {"generate_code": good, "errormessage": "", "is_pass": True},
             {"generate_code": bad, "errormessage": "compile error", "is_pass": False},
             # The original said compile error; ours compiles: a disagreement.
             {"generate_code": good, "errormessage": "compile error", "is_pass": False},
         ]},
        {"_id": IDS[1], "method_name": "hello", "project_name": "demo-master",
         "code_level": "class_runnable", "docstring": "",
         "generate_results": [
             {"generate_code": "public String hello() { return PREFIX; }",
              "errormessage": "exec error!", "is_pass": False}]},
        {"_id": IDS[2], "method_name": "gone", "project_name": "demo-master",
         "code_level": "self_contained", "docstring": "",
         "generate_results": [
             {"generate_code": "void gone() {}", "errormessage": "", "is_pass": True}]},
    ]
    results = tmp_path / "Raw_Input.jsonl_out.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prompts = tmp_path / "CEJavaRaw.jsonl"
    entries = [
        (IDS[0], "public static int twice(int n){", "/**\n * Doubles a number.\n */"),
        (IDS[1], "public String hello(){", "/** Says hello. */"),
        (IDS[2], "void gone(){", ""),
    ]
    prompts.write_text("".join(
        json.dumps({"question_id": i, "input": d + "\n" + s, "signature": s, "docstring": d})
        + "\n" for i, s, d in entries))
    return tmp_path / "checkouts", manifest, results, prompts


def test_prepare_locates_methods_and_reports_what_it_cannot(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    checkouts, manifest, results, prompts = _world(tmp_path)
    out = tmp_path / "bench"
    done = run_cli("prepare", "codereval-java", "--results", results, "--prompts", prompts,
                   "--checkouts", checkouts, "--manifest", manifest, "--out", out)
    assert done.exit_code == 0, done
    assert "1 located, 2 with problems" in done.stdout
    records = {r["_id"]: r for r in json.loads((out / "records.json").read_text())["RECORDS"]}
    located = records[IDS[0]]
    assert sorted(located) == sorted(JAVA_KEYS)
    # The pinned commit, not the later one.
    assert "return 2 * n;" in located["code"] and located["lineno"] == "11"
    assert located["file_name"] == "Util.java" and located["package"] == "demo"
    assert located["project"] == "me/demo" and located["level"] == "self_contained"
    # Not located: kept without a location, never guessed.
    assert records[IDS[1]]["lineno"] == "" and records[IDS[2]]["file_name"] == ""
    checks = {c["task_id"]: c for c in map(json.loads, (out / "checks.jsonl").open())}
    assert checks[IDS[1]]["function"].startswith("ambiguous")
    assert checks[IDS[2]]["function"].startswith("not found")
    assert checks[IDS[0]]["test"] == "not published"
    env_manifest = (out / "projects.toml").read_text()
    assert 'maven_modules = ["core"]' in env_manifest and 'java_release = "11"' in env_manifest


def test_prepare_java_needs_results_and_prompts(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    done = run_cli("prepare", "codereval-java", "--out", tmp_path / "bench")
    assert done.exit_code != 0 and "--results and --prompts" in done.stderr
    assert not (tmp_path / "bench").exists()


@pytest.mark.slow
@pytest.mark.skipif(missing_toolchain() is not None or shutil.which("mvn") is None,
                    reason="needs a JDK and Maven")
def test_samples_get_compile_verdicts_and_compile_agreement(  # type: ignore[no-untyped-def]
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    checkouts, manifest, results, prompts = _world(tmp_path)
    out = tmp_path / "bench"
    assert run_cli("prepare", "codereval-java", "--results", results, "--prompts", prompts,
                   "--checkouts", checkouts, "--manifest", manifest, "--out", out).exit_code == 0
    run = tmp_path / "run"
    done = run_cli("evaluate", "--prepared", out, "--samples", results, "--compat",
                   "--jobs", "1", "--out", run)
    assert done.exit_code == 0, done
    outcomes = {(o["task_id"], o["sample_index"]): o
                for o in map(json.loads, (run / "outcomes.jsonl").open())}
    compiled = outcomes[(IDS[0], 0)]
    # Compiled and nothing to run: not judged, never a pass, and it says why.
    assert compiled["verdict"] == "infra_error" and compiled["stage"] == "compile"
    assert compiled["detail"].startswith("compiled; no official test available")
    assert outcomes[(IDS[0], 1)]["verdict"] == "compile_error"
    assert "no file location" in outcomes[(IDS[1], 0)]["detail"]
    done = run_cli("compare", run, results, "--json")
    assert done.exit_code == 0, done
    [agreement] = json.loads(done.stdout)
    assert agreement["compared"] == 3
    assert (agreement["both_compiled"], agreement["both_error"]) == (1, 1)
    assert agreement["official_only"] == 1 and agreement["ours_only"] == 0
    assert agreement["not_compiled_by_us"] == 2
    done = run_cli("compare", run, results)
    assert "Compile agreement" in done.stdout and "66.67%" in done.stdout
