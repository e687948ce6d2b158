"""`codereval prepare defects4j`: a fake Defects4J (its metadata files, as Defects4J writes them)
over a fixture git repository goes through rebuild, the reproduction check and task creation,
and the tasks it writes run, gold, through `codereval evaluate`.

The fixture project `Toy` has three bugs:

1. `Calc.add` ignores negative numbers: the fix (two lines longer than the bug) makes
   `CalcTest::testAddNegative` pass. Reproduces; gives APR, DD (two rows) and ITG tasks.
2. Defects4J's record says `CalcTest::testAddPositive` triggers a bug whose patch changes
   nothing that test reaches: the rebuild does not reproduce it, and it gives no task.
3. Its fixed revision has no pom.xml (an Ant build): not rebuilt.

A second project, `Hog`, has one bug whose buggy version fills the heap in its trigger test,
and a dependency jar that adds a class to a package of the JDK's (as Xerces 2.4 does).
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.toy</groupId>
  <artifactId>toy</artifactId>
  <version>1.0</version>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
"""

BUGGY_CALC = """package toy;

/** Arithmetic. */
public class Calc {
    private int calls = 0;

    public Calc() {
    }

    /**
     * Adds two numbers.
     */
    public int add(int a, int b) {
        calls++;
        return Math.max(a, 0) + Math.max(b, 0);
    }

    public int calls() {
        return calls;
    }

    /**
     * Scales a value by a factor and clamps the result into the range from zero to the given
     * limit, so that callers never see a negative or an oversized value, whatever they pass.
     */
    public int scale(int value, int factor, int limit) {
        int scaled = value * factor;
        if (scaled < 0) {
            scaled = 0;
        }
        if (scaled > limit) {
            scaled = limit;
        }
        calls = calls + 1; // every call is counted, even one that clamps its result to the limit
        return scaled;
    }
}
"""

FIXED_CALC = BUGGY_CALC.replace(
    "        return Math.max(a, 0) + Math.max(b, 0);\n",
    "        // negative numbers count as they are\n"
    "        int sum = a + b;\n"
    "        return sum;\n",
)

TEST = """package toy;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class CalcTest {
    @Test
    public void testAddPositive() {
        assertEquals(5, new Calc().add(2, 3));
    }

    /**
     * Scaling keeps small products as they are and clamps large and negative ones into the
     * range, which every caller of scale relies on when it sizes its buffers.
     */
    @Test
    public void testScaleClamps() {
        Calc calc = new Calc();
        assertEquals(6, calc.scale(2, 3, 10));
        assertEquals(10, calc.scale(5, 3, 10));
        assertEquals(0, calc.scale(-5, 3, 10));
        assertEquals("every call is counted", 3, calc.calls());
    }

    @Test
    public void testScaleZero() {
        assertEquals(0, new Calc().scale(0, 7, 10));
    }
%s}
"""

TRIGGER = """
    @Test
    public void testAddNegative() {
        assertEquals(-1, new Calc().add(2, -3));
    }
"""

# A test the fix broke, which Defects4J lists in failing_tests/<fixed revision> and so removes:
# its failure must not count against the developer's fix.
BROKEN_BY_FIX = """
    @Test
    public void testOldBehaviour() {
        assertEquals(1, new Calc().add(1, -1));
    }
"""

# Tests Defects4J takes out of every checkout: one that never ends (Math's broken_tests: some
# revisions loop in GraggBulirschStoerIntegratorTest) and one that fails at random
# (random_tests). Run, the first would hold every run of CalcTest or of the suite to its wall
# time, the baselines' and the coverage map's included.
LEFT_OUT = """
    @Test
    public void testNeverEnds() {
        long spins = 0;
        while (System.nanoTime() != 0) {
            spins++;
        }
        assertEquals(0, spins);
    }

    @Test
    public void testCoinFlip() {
        assertEquals(1, 2);
    }
"""

# A test class outside Defects4J's whole suite (its build file runs **/*Test.java only): it
# holds the buggy behaviour, so the developer's fix fails it, and it must not run as part of
# the suite that judges an APR sample (Lang's MessageFormatTest, Time's TestAll* aggregates).
OUTSIDE_SUITE = """package toy;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class CalcOldBehaviourCheck {
    @Test
    public void negativesAreDropped() {
        assertEquals(2, new Calc().add(2, -3));
    }
}
"""

BUILD_XML = """<project name="Toy" basedir="${basedir}">
    <fileset id="all.manual.tests" dir="${test.dir}" excludes="${d4j.tests.exclude}">
        <include name='**/${test}.java' />
        <include name="**/*Test.java"/>
        <exclude name="**/*Abstract*Test.java"/>
    </fileset>
</project>
"""

ISSUES = [{"issue_id": "TOY-1", "title": "add drops <code>negative</code> numbers",
           "description": "<p>Calc.add(2, -3) returns 2.</p>", "project": "Toy", "bug_id": 1}]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t",
                           "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("d4j")
    repo = root / "checkouts" / "Toy"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    calc, test = "src/main/java/toy/Calc.java", "src/test/java/toy/CalcTest.java"
    buggy1 = _commit(repo, {"pom.xml": POM, calc: BUGGY_CALC, test: TEST % ""}, "buggy")
    fixed1 = _commit(repo, {calc: FIXED_CALC, test: TEST % (TRIGGER + BROKEN_BY_FIX + LEFT_OUT),
                            "src/test/java/toy/CalcOldBehaviourCheck.java": OUTSIDE_SUITE},
                     "fix add")
    patch1 = _git(repo, "diff", fixed1, buggy1, "--", "src/main") + "\n"
    # Bug 2: a patch that only rewords a comment, while its record names a test that passes.
    reworded = _commit(repo, {calc: FIXED_CALC.replace("count as they", "count, as they")},
                       "reword")
    patch2 = _git(repo, "diff", fixed1, reworded, "--", "src/main") + "\n"
    # Bug 3: a revision built with Ant (no pom.xml).
    _git(repo, "rm", "-q", "pom.xml")
    fixed3 = _commit(repo, {"build.xml": "<project default='jar'/>\n"}, "move to ant")
    meta = root / "defects4j" / "framework" / "projects" / "Toy"
    for folder in ("patches", "trigger_tests", "modified_classes", "failing_tests"):
        (meta / folder).mkdir(parents=True)
    (meta / "failing_tests" / fixed1).write_text(
        "## toy: 1f ##\n--- toy.CalcTest::testOldBehaviour\njava.lang.AssertionError\n",
        encoding="utf-8")
    (meta / "Toy.build.xml").write_text(BUILD_XML, encoding="utf-8")
    (meta / "broken_tests").write_text("--- toy.CalcTest::testNeverEnds\n", encoding="utf-8")
    (meta / "random_tests").write_text(
        "    /* fails at random */\n--- toy.CalcTest::testCoinFlip\n", encoding="utf-8")
    (meta / "active-bugs.csv").write_text(
        "bug.id,revision.id.buggy,revision.id.fixed,report.id,report.url\n"
        f"1,{buggy1},{fixed1},TOY-1,https://example.org/TOY-1\n"
        f"2,{buggy1},{fixed1},TOY-2,https://example.org/TOY-2\n"
        f"3,{fixed1},{fixed3},TOY-3,https://example.org/TOY-3\n", encoding="utf-8")
    (meta / "dir-layout.csv").write_text(
        "".join(f"{rev},src/main/java,src/test/java\n" for rev in (buggy1, fixed1, fixed3)),
        encoding="utf-8")
    for bug, patch, trigger in ((1, patch1, "testAddNegative"), (2, patch2, "testAddPositive"),
                                (3, patch1, "testAddNegative")):
        (meta / "patches" / f"{bug}.src.patch").write_text(patch, encoding="utf-8")
        (meta / "trigger_tests" / str(bug)).write_text(
            f"--- toy.CalcTest::{trigger}\njava.lang.AssertionError: expected:<-1> but was:<2>\n"
            "\tat toy.CalcTest.testAddNegative(CalcTest.java:16)\n", encoding="utf-8")
        (meta / "modified_classes" / f"{bug}.src").write_text("toy.Calc\n", encoding="utf-8")
    issues = root / "bug_report.json"
    issues.write_text(json.dumps(ISSUES), encoding="utf-8")
    return {"root": root, "defects4j": root / "defects4j", "checkouts": root / "checkouts",
            "issues": issues}


@pytest.fixture(scope="module")
def prepared(world: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
             ujb_env_root: Path) -> tuple[Path, str]:
    from codereval.cli.app import main

    out = tmp_path_factory.mktemp("bench") / "toy"
    patch = pytest.MonkeyPatch()
    patch.setenv("CODEREVAL_HOME", str(ujb_env_root))
    try:
        main(["prepare", "defects4j", "--defects4j", str(world["defects4j"]), "--checkouts",
              str(world["checkouts"]), "--projects", "Toy", "--issues", str(world["issues"]),
              "--out", str(out)])
    except SystemExit as exc:
        assert not exc.code, f"prepare exited {exc.code}"
    finally:
        patch.undo()
    return out, ""


def _rebuild(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "rebuild.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["bug"]: row for row in map(json.loads, lines)}


def test_a_bug_whose_buggy_version_fails_its_trigger_test_is_reproduced(
        prepared: tuple[Path, str]) -> None:
    bug = _rebuild(prepared[0])["Toy-1"]
    assert bug["status"] == "reproduced", bug
    assert bug["failing_buggy"] == ["toy.CalcTest::testAddNegative"]
    # The tests Defects4J takes out of its checkouts do not run: the one the fix broke and the
    # random one (both fail when run) and the endless one (which would have held the trigger
    # class's run to its wall time, and the bug would not have been reproduced).
    assert bug["failing_fixed"] == []
    # The project's latest (here: only) reproduced bug also gives FCG and CTG tasks.
    assert bug["tasks"] == {"fcg": 1, "ctg": 1, "itg": 1, "apr": 1, "dd": 2}


def test_a_bug_whose_trigger_test_passes_on_the_buggy_version_is_not_used(
        prepared: tuple[Path, str]) -> None:
    bug = _rebuild(prepared[0])["Toy-2"]
    assert bug["status"] == "not_reproduced"
    assert "1 trigger test(s) pass on the buggy version: toy.CalcTest::testAddPositive" \
        in str(bug["reason"])
    assert bug["tasks"] == {}


def test_an_ant_only_revision_without_defects4j_jars_is_reported_not_rebuilt(
        prepared: tuple[Path, str]) -> None:
    bug = _rebuild(prepared[0])["Toy-3"]
    assert bug["status"] == "not_rebuilt"
    assert "no pom.xml" in str(bug["reason"]) and "no jars in Defects4J's lib" in str(
        bug["reason"])


def test_an_ant_only_revision_uses_the_newest_of_each_library_in_defects4js_lib(
        tmp_path: Path) -> None:
    from codereval.families.coderujb.rebuild.versions import latest_jars

    for relative in ("junit/junit/3.8.1/junit-3.8.1.jar", "junit/junit/4.12/junit-4.12.jar",
                     "junit/junit/4.8.2/junit-4.8.2.jar", "jdom/jdom/1.0/jdom-1.0.jar",
                     "loose.jar"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(b"")
    assert [Path(j).relative_to(tmp_path).as_posix() for j in latest_jars(tmp_path)] == [
        "jdom/jdom/1.0/jdom-1.0.jar", "junit/junit/4.12/junit-4.12.jar", "loose.jar"]


def test_an_ant_only_revision_whose_lib_has_no_junit_gets_the_one_defects4j_adds(
        tmp_path: Path) -> None:
    """Math 1.x's lib folder holds commons-discovery alone; Defects4J's build puts its
    framework/projects/lib JUnit on every test classpath, without which Math-105/106's tests
    did not compile (and no test class matched the suite)."""
    from codereval.families.coderujb.rebuild.versions import ant_jars

    own, shared = tmp_path / "Math" / "lib", tmp_path / "lib"
    for jar in (own / "commons-discovery-0.5.jar", shared / "junit-4.12-hamcrest-1.3.jar",
                shared / "cobertura-2.0.3.jar", shared / "cobertura-2.0.3-lib" / "junit-x.jar"):
        jar.parent.mkdir(parents=True, exist_ok=True)
        jar.write_bytes(b"")
    assert ant_jars(own, shared) == (str(own / "commons-discovery-0.5.jar"),
                                     str(shared / "junit-4.12-hamcrest-1.3.jar"))
    # No jars of the project's own: still nothing to build with.
    assert ant_jars(tmp_path / "Toy" / "lib", shared) == ()
    # A lib with a JUnit of its own keeps to it.
    (own / "junit-3.8.1.jar").write_bytes(b"")
    assert ant_jars(own, shared) == (str(own / "commons-discovery-0.5.jar"),
                                     str(own / "junit-3.8.1.jar"))


def test_the_buggy_version_is_the_fixed_tree_with_the_patch_applied(
        prepared: tuple[Path, str]) -> None:
    out = prepared[0]
    overlay = out / "overlays" / "Toy" / "1" / "buggy" / "src/main/java/toy/Calc.java"
    assert overlay.read_text(encoding="utf-8") == BUGGY_CALC
    bugs = (out / "bugs.toml").read_text(encoding="utf-8")
    assert 'overlay = "overlays/Toy/1/buggy"' in bugs and "[projects.\"Toy\".bugs.2]" not in bugs
    # Defects4J's failing_tests of the fixed revision, then random_tests and broken_tests.
    assert ('excluded_tests = ["toy.CalcTest::testOldBehaviour", "toy.CalcTest::testCoinFlip", '
            '"toy.CalcTest::testNeverEnds"]') in bugs


def test_apr_rows_follow_coderujb_the_fixed_functions_lines_and_the_buggy_function_prompted(
        prepared: tuple[Path, str]) -> None:
    rows = [json.loads(line) for line in
            (prepared[0] / "coderujb" / "apr.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1
    row = rows[0]
    fixed_lines = FIXED_CALC.split("\n")
    # 0-based and inclusive, as the published rows: the fix's lines in the fixed file.
    assert "\n".join(fixed_lines[row["start"]:row["end"] + 1]) == row["fix"]
    assert row["fix"].strip().startswith("public int add(int a, int b)")
    assert "Math.max(a, 0)" in row["buggy"] and "Math.max" not in row["fix"]
    assert row["testmethods"] == ["toy.CalcTest::testAddNegative"]
    assert "// Buggy Function\n    /**\n     * Adds two numbers.\n     */\n" \
        "    public int add" in row["prompt_complete"]
    assert row["prompt_complete"].endswith("// Fixed Function\n")
    assert "    public int calls();" in row["prompt_chat"]  # the class's abstract context


def test_dd_rows_are_the_buggy_function_defective_and_the_fixed_one_clean(
        prepared: tuple[Path, str]) -> None:
    rows = [json.loads(line) for line in
            (prepared[0] / "coderujb" / "dd.jsonl").read_text(encoding="utf-8").splitlines()]
    by_truth = {row["defective"]: row for row in rows}
    assert "Math.max" in by_truth[True]["code"] and "int sum" in by_truth[False]["code"]
    assert by_truth[True]["prompt_complete"].endswith("B. No, it doesn't have defects\nAnswer:")


def test_itg_rows_carry_the_issue_as_coderujb_formats_it(prepared: tuple[Path, str]) -> None:
    row = json.loads((prepared[0] / "coderujb" / "itg.jsonl").read_text(encoding="utf-8"))
    assert row["testmethod"] == "toy.CalcTest::testAddNegative"
    assert row["issue_id"] == "Toy-TOY-1"
    assert "## Issue-Title: \nadd drops negative numbers\n" in row["prompt_chat"]
    assert "Calc.add(2, -3) returns 2." in row["prompt_chat"]
    assert row["prompt_chat"].endswith(
        "```java\n    @Test\n    public void testAddNegative() {\n\n```\n")
    assert row["classes_modified"] == ["toy.Calc"]


def _rows(out: Path, kind: str) -> list[dict[str, object]]:
    text = (out / "coderujb" / f"{kind}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_fcg_takes_a_documented_method_its_tests_run_lowest_line_rate_first(
        prepared: tuple[Path, str]) -> None:
    [row] = _rows(prepared[0], "fcg")
    assert row["function_name"] == "scale"
    # Both tests that run it, from the function-test map (JaCoCo, one test at a time).
    assert set(row["testmethods"]) == {"toy.CalcTest::testScaleZero",  # type: ignore[arg-type]
                                       "toy.CalcTest::testScaleClamps"}
    assert row["testmethods"][0] == "toy.CalcTest::testScaleZero"  # type: ignore[index]
    lines = FIXED_CALC.split("\n")
    assert "\n".join(lines[row["start"]:row["end"] + 1]) == row["function"]  # type: ignore[misc]
    assert str(row["prompt_chat"]).endswith(
        "     */\n    public int scale(int value, int factor, int limit) {\n\n```\n")
    assert str(row["prompt_complete_with_comment"]).endswith("     */\n")
    assert float(row["function_tested_rate"]) >= 0.6  # type: ignore[arg-type]


def test_ctg_takes_a_documented_test_of_one_class_with_both_classes_contexts(
        prepared: tuple[Path, str]) -> None:
    [row] = _rows(prepared[0], "ctg")
    assert row["function_name"] == "testScaleClamps"
    assert row["be_test_class_long_name"] == "toy.Calc"
    assert {m["be_test_function_name"] for m in row["classmethods"]} == {  # type: ignore[attr-defined]
        "scale", "calls"}
    chat = str(row["prompt_chat"])
    assert "// Abstract Java Tested Class\npackage toy;" in chat
    assert "// Abstract Java Test Class\npackage toy;" in chat
    assert "create a test case named `testScaleClamps` for the `Calc` class" in chat


def test_the_tasks_run_gold_through_evaluate(prepared: tuple[Path, str], tmp_path: Path,
                                             run_cli, ujb_env_root: Path,  # type: ignore[no-untyped-def]
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = prepared[0]
    monkeypatch.setenv("CODEREVAL_HOME", str(ujb_env_root))
    run = tmp_path / "gold"
    done = run_cli("evaluate", "--tasks", out / "tasks.jsonl", "--projects",
                   out / "projects.toml", "--reference", "--repeat", "1", "--timeout", "60",
                   "--out", run)
    assert done.exit_code == 0, done
    status = {row["task_id"]: row for row in map(
        json.loads, (run / "gold.jsonl").read_text(encoding="utf-8").splitlines())}
    # The developer's fix passes APR (spliced at the fixed function's lines, though it is two
    # lines longer than the bug; the test Defects4J removes, which the fix breaks, does not
    # count), the developer's trigger test passes ITG (fails buggy, passes fixed), and the
    # trivial probes are rejected; FCG's reference passes its tests and the suite, CTG's test
    # passes and covers the class under test.
    assert len(status) == 6
    assert {row["status"] for row in status.values()} == {"ok"}, status


def test_the_whole_suite_is_defects4js_not_every_compiled_test_class(
    prepared: tuple[Path, str],
) -> None:
    """bugs.toml carries Defects4J's all.manual.tests patterns (those naming an Ant property
    left out); a class outside them (CalcOldBehaviourCheck, which the fix fails) would have
    failed the developer's APR fix in the gold run above."""
    import tomllib

    manifest = tomllib.loads((prepared[0] / "bugs.toml").read_text(encoding="utf-8"))
    assert manifest["projects"]["Toy"]["suite"] == {"includes": ["**/*Test.java"],
                                                    "excludes": ["**/*Abstract*Test.java"]}


def test_bad_input_is_one_line_and_writes_nothing(world: dict[str, Path], tmp_path: Path,
                                                  run_cli) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    base = ("prepare", "defects4j", "--checkouts", world["checkouts"], "--out", out)
    wrong_issues = tmp_path / "issues.json"
    wrong_issues.write_text('{"Toy-1": "a map, not a list"}', encoding="utf-8")
    cases = [
        ((*base, "--defects4j", world["defects4j"], "--projects", "Toy", "--issues",
          wrong_issues), "not CoderUJB's bug_report.json"),
        ((*base, "--defects4j", tmp_path), "is not a Defects4J clone"),
        ((*base, "--defects4j", world["defects4j"], "--bugs", "Toy-9"),
         "Toy has no active bug 9 in Defects4J"),
        ((*base, "--defects4j", world["defects4j"], "--projects", "Nope"),
         "Defects4J has no project 'Nope'"),
        ((*base, "--defects4j", world["defects4j"], "--bugs", "Toy-1", "--projects", "Toy"),
         "give --projects or --bugs, not both"),
        (("prepare", "defects4j", "--checkouts", tmp_path, "--out", out, "--defects4j",
          world["defects4j"], "--projects", "Toy"), "no clone of Toy in"),
        (("prepare", "defects4j", "--checkouts", tmp_path / "none", "--out", out,
          "--defects4j", world["defects4j"], "--projects", "Toy"), "is not a folder"),
        (("prepare", "defects4j", "--checkouts", tmp_path, "--fetch", "--out", out,
          "--defects4j", world["defects4j"], "--projects", "Toy"),
         "no public repository is known for Toy"),
    ]
    for args, message in cases:
        done = run_cli(*args)
        assert done.exit_code == 2, (args, done)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, done.stderr)
        assert not out.exists()
    out.mkdir()
    (out / "keep").write_text("mine", encoding="utf-8")
    done = run_cli(*base, "--defects4j", world["defects4j"], "--projects", "Toy")
    assert done.exit_code == 2 and "exists (pass --force" in done.stderr
    assert (out / "keep").read_text(encoding="utf-8") == "mine"


def _public_host(world: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Toy as if it were published at github.com/toyorg/toy: git's own url.insteadOf sends
    the clone to a local bare mirror."""
    from codereval.families.coderujb.rebuild import prepare

    host = tmp_path / "host"
    subprocess.run(["git", "clone", "-q", "--bare", str(world["checkouts"] / "Toy"),
                    str(host / "toyorg" / "toy.git")], check=True)
    monkeypatch.setitem(prepare.REPOSITORIES, "Toy", "toyorg/toy")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{host.as_uri()}/.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", prepare.GIT_HOST)
    return host


def test_fetch_clones_a_missing_project_bare_once_and_rebuilds_from_it(
    world: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    ujb_env_root: Path, run_cli,  # type: ignore[no-untyped-def]
) -> None:
    _public_host(world, monkeypatch, tmp_path)
    monkeypatch.setenv("CODEREVAL_HOME", str(ujb_env_root))
    checkouts = tmp_path / "clones"
    args = ("prepare", "defects4j", "--defects4j", world["defects4j"], "--checkouts",
            checkouts, "--fetch", "--bugs", "Toy-1", "--force")
    done = run_cli(*args, "--out", tmp_path / "first")
    assert done.exit_code == 0, done
    assert "cloning https://github.com/toyorg/toy.git" in done.stderr
    assert (checkouts / "toy.git" / "HEAD").is_file()
    assert [p.name for p in checkouts.iterdir()] == ["toy.git"]  # no partial clone left
    assert _rebuild(tmp_path / "first")["Toy-1"]["status"] == "reproduced"
    again = run_cli(*args, "--out", tmp_path / "second")
    assert again.exit_code == 0 and "cloning" not in again.stderr


def test_a_clone_that_fails_is_one_line_and_leaves_no_partial_clone(
    world: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from codereval.errors import UserError
    from codereval.families.coderujb.rebuild.prepare import fetch_repository

    host = _public_host(world, monkeypatch, tmp_path)
    subprocess.run(["rm", "-rf", str(host / "toyorg")], check=True)
    checkouts = tmp_path / "clones"
    with pytest.raises(UserError, match=re.escape("could not clone https://github.com/toyorg/toy.git")):
        fetch_repository(checkouts, "Toy")
    assert list(checkouts.iterdir()) == []


def test_a_patch_that_deletes_a_file_gives_a_buggy_version_without_it(tmp_path: Path) -> None:
    """A fix that added a file: Defects4J's patch deletes it, and so does the buggy version."""
    from codereval.families.coderujb.rebuild.metadata import Defects4jBug
    from codereval.families.coderujb.rebuild.versions import plan_versions

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    helper = "src/main/java/toy/Helper.java"
    fixed = _commit(repo, {"pom.xml": POM, "src/main/java/toy/Calc.java": FIXED_CALC,
                           helper: "package toy;\nclass Helper {}\n"}, "fixed")
    _git(repo, "rm", "-q", helper)
    without = _commit(repo, {"src/main/java/toy/Calc.java": BUGGY_CALC}, "without helper")
    bug = Defects4jBug(
        project="Toy", bug_id="4", buggy_revision=without, fixed_revision=fixed,
        report_id="", report_url="", src_patch=_git(repo, "diff", fixed, without) + "\n",
        test_patch="", trigger_tests=("toy.CalcTest::testAddNegative",),
        modified_classes=("toy.Calc",), loaded_classes=(), relevant_tests=(),
        src_dir="src/main/java", test_dir="src/test/java", failing_on_fixed=())
    plan = plan_versions(bug, repo)
    assert plan.deleted == (helper,)
    assert plan.buggy_files == {"src/main/java/toy/Calc.java": BUGGY_CALC.encode()}


def test_an_lf_patch_applies_to_a_crlf_file_which_keeps_its_crlf(tmp_path: Path) -> None:
    """Some old revisions of a public history keep CRLF where Defects4J's own repositories,
    and so its patches, have LF (Math-106): the patch still applies, line endings kept."""
    from codereval.families.coderujb.rebuild.metadata import Defects4jBug
    from codereval.families.coderujb.rebuild.versions import plan_versions

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "core.autocrlf", "false")
    calc = "src/main/java/toy/Calc.java"
    buggy = _commit(repo, {"pom.xml": POM, calc: BUGGY_CALC}, "buggy")
    fixed = _commit(repo, {calc: FIXED_CALC}, "fixed")
    lf_patch = _git(repo, "diff", fixed, buggy) + "\n"
    crlf = _commit(repo, {calc: FIXED_CALC.replace("\n", "\r\n")}, "fixed, as CRLF")
    bug = Defects4jBug(
        project="Toy", bug_id="6", buggy_revision=buggy, fixed_revision=crlf,
        report_id="", report_url="", src_patch=lf_patch, test_patch="",
        trigger_tests=("toy.CalcTest::testAddNegative",), modified_classes=("toy.Calc",),
        loaded_classes=(), relevant_tests=(), src_dir="src/main/java", test_dir="src/test/java",
        failing_on_fixed=())
    plan = plan_versions(bug, repo)
    assert plan.buggy_files == {calc: BUGGY_CALC.replace("\n", "\r\n").encode()}


def test_a_project_kept_in_a_folder_of_its_repository_is_rebuilt_from_that_folder(
    tmp_path: Path,
) -> None:
    """Joda-Time lived in JodaTime/ before it moved to the repository's root; Defects4J's
    paths start below that folder."""
    from codereval.families.coderujb.rebuild.metadata import Defects4jBug
    from codereval.families.coderujb.rebuild.prepare import write_manifests
    from codereval.families.coderujb.rebuild.versions import plan_versions

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    calc = "src/main/java/toy/Calc.java"
    buggy = _commit(repo, {"Toy/pom.xml": POM, f"Toy/{calc}": BUGGY_CALC,
                           "Contrib/README": "other\n"}, "buggy")
    fixed = _commit(repo, {f"Toy/{calc}": FIXED_CALC}, "fixed")
    patch = _git(repo, "diff", "--relative=Toy", fixed, buggy) + "\n"
    bug = Defects4jBug(
        project="Toy", bug_id="5", buggy_revision=buggy, fixed_revision=fixed,
        report_id="", report_url="", src_patch=patch, test_patch="",
        trigger_tests=("toy.CalcTest::testAddNegative",), modified_classes=("toy.Calc",),
        loaded_classes=(), relevant_tests=(), src_dir="src/main/java", test_dir="src/test/java",
        failing_on_fixed=())
    plan = plan_versions(bug, repo)
    assert plan.root == "Toy" and plan.build_dir == "" and plan.at(calc) == f"Toy/{calc}"
    assert plan.buggy_files == {calc: BUGGY_CALC.encode()}
    write_manifests(tmp_path, {"Toy-5": plan}, {"Toy": repo})
    assert 'subdir = "Toy"' in (tmp_path / "bugs.toml").read_text(encoding="utf-8")


def test_defects4js_compile_fixes_of_a_bug_go_into_both_versions_first(tmp_path: Path) -> None:
    """compile-errors/<name>-<first>-<last>.diff: Defects4J applies those whose range holds
    the bug to every checkout of it, before the source patch (`*.optional.diff` are not)."""
    from codereval.families.coderujb.rebuild.metadata import Defects4jBug, _compile_fixes
    from codereval.families.coderujb.rebuild.prepare import write_manifests
    from codereval.families.coderujb.rebuild.versions import plan_versions

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    calc, test = "src/main/java/toy/Calc.java", "src/test/java/toy/CalcTest.java"
    buggy = _commit(repo, {"pom.xml": POM, calc: BUGGY_CALC, test: TEST % ""}, "buggy")
    fixed = _commit(repo, {calc: FIXED_CALC}, "fixed")
    src_patch = _git(repo, "diff", fixed, buggy) + "\n"
    # A fix for today's Java in a test file, written against the checkout.
    modern = _commit(repo, {test: (TEST % "").replace("public class", "public final class")},
                     "modern")
    errors = tmp_path / "compile-errors"
    errors.mkdir()
    # Some of Defects4J's fixes have no `diff --git` header, only ---/+++ lines.
    headerless = _git(repo, "diff", fixed, modern).split("\n", 1)[1]
    (errors / "test-1-3.diff").write_text(headerless + "\n", encoding="utf-8")
    (errors / "other-4-9.diff").write_text("not for bug 2\n", encoding="utf-8")
    (errors / "Opt-1-9.optional.diff").write_text("optional\n", encoding="utf-8")
    fixes = _compile_fixes(errors, "2")
    assert len(fixes) == 1 and "public final class" in fixes[0]
    bug = Defects4jBug(
        project="Toy", bug_id="2", buggy_revision=buggy, fixed_revision=fixed,
        report_id="", report_url="", src_patch=src_patch, test_patch="",
        trigger_tests=("toy.CalcTest::testAddNegative",), modified_classes=("toy.Calc",),
        loaded_classes=(), relevant_tests=(), src_dir="src/main/java", test_dir="src/test/java",
        failing_on_fixed=(), compile_fixes=fixes)
    plan = plan_versions(bug, repo)
    fixed_test = (TEST % "").replace("public class", "public final class").encode()
    assert plan.fixed_files == {test: fixed_test}
    assert plan.buggy_files == {calc: BUGGY_CALC.encode(), test: fixed_test}
    assert plan.fixed_text(repo, test) == fixed_test.decode()
    assert plan.fixed_text(repo, calc) == FIXED_CALC
    write_manifests(tmp_path, {"Toy-2": plan}, {"Toy": repo})
    manifest = (tmp_path / "bugs.toml").read_text(encoding="utf-8")
    assert 'overlay = "overlays/Toy/2/fixed"' in manifest
    assert 'overlay = "overlays/Toy/2/buggy"' in manifest


def test_a_version_can_remove_files_of_its_tree(tmp_path: Path) -> None:
    from codereval.environments.base import ProjectSpec
    from codereval.errors import UserError
    from codereval.families.coderujb.bugs import ProjectBugs, VersionRecipe, version_spec
    from codereval.model import Language

    source = tmp_path / "src"
    (source / "a").mkdir(parents=True)
    (source / "a" / "Keep.java").write_text("class Keep {}", encoding="utf-8")
    (source / "a" / "Gone.java").write_text("class Gone {}", encoding="utf-8")
    spec = ProjectSpec(name="t/p", language=Language.JAVA, source=str(source))
    bugs = ProjectBugs(name="t/p", spec=spec, base_dir=tmp_path, bugs={
        "1": (VersionRecipe(remove=("a/Gone.java",)), VersionRecipe()),
        "2": (VersionRecipe(remove=("a/Missing.java",)), VersionRecipe())})
    buggy = Path(version_spec(bugs, "1b", root=tmp_path / "cache").source)
    fixed = Path(version_spec(bugs, "1f", root=tmp_path / "cache").source)
    assert not (buggy / "a" / "Gone.java").exists() and (buggy / "a" / "Keep.java").exists()
    assert (fixed / "a" / "Gone.java").exists()
    with pytest.raises(UserError, match=r"cannot remove a/Missing\.java"):
        version_spec(bugs, "2b", root=tmp_path / "cache")


HOG = """package hog;

public class Hog {
    public int add(int a, int b) {
%s
    }
}
"""

HOG_TEST = """package hog;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class HogTest {
    @Test
    public void testAdd() {
        assertEquals(5, new Hog().add(2, 3));
    }

    @Test
    public void testDraftOfTheParser() throws Exception {
        Class<?> draft = Class.forName("org.w3c.dom.ls.DocumentLS");
        assertEquals(3, draft.getField("DRAFT").get(null));
    }
}
"""

HOG_POM = POM.replace("<groupId>org.toy</groupId>", "<groupId>org.hog</groupId>").replace(
    "  </dependencies>",
    "    <dependency>\n      <groupId>org.hog</groupId>\n      <artifactId>parser</artifactId>\n"
    "      <version>2.4</version>\n      <scope>system</scope>\n"
    "      <systemPath>${project.basedir}/lib/parser.jar</systemPath>\n    </dependency>\n"
    "  </dependencies>")


def _draft_jar(folder: Path) -> bytes:
    """A parser's jar carrying a DOM draft in a package of the JDK's (as Xerces 2.4 does)."""
    source = folder / "DocumentLS.java"
    source.write_text("package org.w3c.dom.ls;\npublic interface DocumentLS { int DRAFT = 3; }\n",
                      encoding="utf-8")
    subprocess.run(["javac", "--release", "8", "-d", str(folder / "classes"), str(source)],
                   check=True, capture_output=True)
    jar = folder / "parser.jar"
    with zipfile.ZipFile(jar, "w") as out:
        out.write(folder / "classes" / "org/w3c/dom/ls/DocumentLS.class",
                  "org/w3c/dom/ls/DocumentLS.class")
    return jar.read_bytes()


@pytest.fixture(scope="module")
def hog_prepared(tmp_path_factory: pytest.TempPathFactory, ujb_env_root: Path) -> Path:
    """Hog-1 prepared: the buggy `add` fills the heap; the project's parser jar adds a class to
    a package of the JDK's."""
    from codereval.cli.app import main

    root = tmp_path_factory.mktemp("hog")
    repo = root / "checkouts" / "Hog"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "lib").mkdir()
    (repo / "lib" / "parser.jar").write_bytes(_draft_jar(root))
    source, test = "src/main/java/hog/Hog.java", "src/test/java/hog/HogTest.java"
    hogging = ("        java.util.List<long[]> all = new java.util.ArrayList<>();\n"
               "        while (true) {\n            all.add(new long[1 << 22]);\n        }")
    buggy = _commit(repo, {"pom.xml": HOG_POM, source: HOG % hogging, test: HOG_TEST}, "buggy")
    fixed = _commit(repo, {source: HOG % "        return a + b;"}, "fixed")
    meta = root / "defects4j" / "framework" / "projects" / "Hog"
    for folder in ("patches", "trigger_tests", "modified_classes"):
        (meta / folder).mkdir(parents=True)
    (meta / "active-bugs.csv").write_text(
        "bug.id,revision.id.buggy,revision.id.fixed,report.id,report.url\n"
        f"1,{buggy},{fixed},HOG-1,https://example.org/HOG-1\n", encoding="utf-8")
    (meta / "dir-layout.csv").write_text(
        "".join(f"{rev},src/main/java,src/test/java\n" for rev in (buggy, fixed)),
        encoding="utf-8")
    (meta / "patches" / "1.src.patch").write_text(
        _git(repo, "diff", fixed, buggy, "--", "src/main") + "\n", encoding="utf-8")
    (meta / "trigger_tests" / "1").write_text(
        "--- hog.HogTest::testAdd\njava.lang.OutOfMemoryError: Java heap space\n",
        encoding="utf-8")
    (meta / "modified_classes" / "1.src").write_text("hog.Hog\n", encoding="utf-8")
    out = root / "out"
    patch = pytest.MonkeyPatch()
    patch.setenv("CODEREVAL_HOME", str(ujb_env_root))
    try:
        main(["prepare", "defects4j", "--defects4j", str(root / "defects4j"),
              "--checkouts", str(root / "checkouts"), "--bugs", "Hog-1", "--out", str(out)])
    except SystemExit as exc:
        assert not exc.code, f"prepare exited {exc.code}"
    finally:
        patch.undo()
    return out


@pytest.fixture(scope="module")
def hog(hog_prepared: Path) -> dict[str, object]:
    return _rebuild(hog_prepared)["Hog-1"]


def test_a_trigger_test_that_fills_the_heap_on_the_buggy_version_fails_there(
        hog: dict[str, object]) -> None:
    """Lang-43's trigger test runs out of memory on the buggy version, which brings down the
    run of its whole class: its trigger tests then run one by one, and one that runs out of
    memory alone fails, as JUnit under Defects4J records it."""
    assert hog["status"] == "reproduced", hog
    assert hog["failing_buggy"] == ["hog.HogTest::testAdd"]
    assert "ran one by one, 1 of them not to their end either" in str(hog["note"]), hog


def test_a_fix_whose_bug_fills_the_heap_passes_apr(
        hog_prepared: Path, tmp_path: Path, run_cli, ujb_env_root: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The buggy version's baseline leaves its trigger tests out (bugs.toml names them) and
    counts them as failing: run in the unchanged suite, Lang-43's took the suite's JVM down
    and the bug's every sample with it (infra_error)."""
    assert 'trigger_tests = ["hog.HogTest::testAdd"]' in (
        hog_prepared / "bugs.toml").read_text(encoding="utf-8")
    monkeypatch.setenv("CODEREVAL_HOME", str(ujb_env_root))
    run = tmp_path / "gold"
    done = run_cli("evaluate", "--tasks", hog_prepared / "tasks.jsonl", "--projects",
                   hog_prepared / "projects.toml", "--reference", "--repeat", "1",
                   "--timeout", "60", "--out", run)
    assert done.exit_code == 0, done
    outcomes = [json.loads(line) for line in
                (run / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
    # The developer's fix (sample 0) passes; the probes that must fail (1, ...) fail.
    apr = [o for o in outcomes if o["ujb"] and o["ujb"].get("tests_failed_before") is not None]
    fix = [o for o in apr if o["sample_index"] == 0]
    assert len(fix) == 1 and fix[0]["verdict"] == "passed", fix
    assert fix[0]["ujb"]["tests_failed_before"] == ["hog.HogTest::testAdd"]
    status = [json.loads(line) for line in
              (run / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {row["status"] for row in status} == {"ok"}, status


def test_classes_a_dependency_adds_to_the_jdks_packages_load_as_on_java_8(
        hog: dict[str, object]) -> None:
    """JxPath's DOM tests need Xerces 2.4's drafts in org.w3c.dom.ls: the fixed version
    fails no test."""
    assert hog["failing_fixed"] == [], hog


def test_a_kind_the_latest_bug_makes_no_row_of_says_why(hog: dict[str, object]) -> None:
    """Hog's functions and tests have no documentation, which CoderUJB's FCG and CTG need:
    the report says the rules found nothing in a map that is not empty."""
    no_tasks = hog["no_tasks"]
    assert isinstance(no_tasks, dict)
    for kind in ("fcg", "ctg"):
        assert re.fullmatch(r"none of the \d+ function-test pairs of its fixed version's map "
                            r"passes CoderUJB's rules", no_tasks[kind]), no_tasks
