"""`codereval build java-tests`: a Java benchmark's tasks get tests recorded from their project's
own JUnit suite (a small multi-module Maven project, prepared as CoderEval-Java is), replayed by
the reference, checked with mutants; `evaluate --prepared` then judges samples with them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from codereval.environments.java import JavaEnvInfo
from codereval.families.build.java_tests import (
    Call,
    Recording,
    Target,
    find_target,
    replay_source,
)
from codereval.java.toolchain import missing_toolchain
from codereval.model import Language, Location, Task

CALC = """package demo;

import java.util.ArrayList;
import java.util.List;

public class Calc {
    private final List<String> items = new ArrayList<>();

    /** Puts v between lo and hi. */
    public static int clamp(int v, int lo, int hi) {
        if (v < lo) {
            return lo;
        }
        if (v > hi) {
            return hi;
        }
        return v;
    }

    /** Adds an item. */
    public void put(String item) {
        if (item == null) {
            throw new IllegalArgumentException("no item");
        }
        items.add(item);
    }

    /** Takes the first n items out. */
    public List<String> take(int n) {
        List<String> taken = new ArrayList<>();
        for (int i = 0; i < n && !items.isEmpty(); i++) {
            taken.add(items.remove(0));
        }
        return taken;
    }

    /** A fresh token every time. */
    public static long token(int salt) {
        return System.nanoTime() + salt;
    }

    /** Loudly: only the TestNG suite calls this. */
    public static String shout(String text) {
        if (text.isEmpty()) {
            return "!";
        }
        return text.toUpperCase() + "!";
    }

    /** What label() puts first; the suite sets it, then puts it back. */
    public static String prefix = "";

    /** The name after the prefix, padded with dots to the width. */
    public static String label(String name, int width) {
        StringBuilder text = new StringBuilder(prefix);
        text.append(name);
        while (text.length() < width) {
            text.append('.');
        }
        return text.toString();
    }

    /** Nobody calls this. */
    public static int unused(int x) {
        int y = x * 2;
        y = y + 1;
        return y;
    }

    /** Holds one value; no test uses it, and its only constructor takes the value. */
    public static class Holder {
        private final String value;

        public Holder(String value) {
            this.value = value;
        }

        /** The value, trimmed. */
        public String peek() {
            return value.trim();
        }
    }

    /** The inner helper. */
    public static class Pair<T> {
        /** The first of two. */
        public T first(T a, T b) {
            return a != null ? a : b;
        }
    }

    /** No constructor makes one from generated arguments. */
    public static class Vault {
        public Vault(Runnable opener) {
            opener.run();
        }

        /** Opens it. */
        public String open() {
            return "open";
        }
    }
}
"""
CALC_TEST = """package demo;

import static org.junit.Assert.assertEquals;

import java.util.Arrays;
import org.junit.Test;

public class CalcTest {
    @Test
    public void clamps() {
        assertEquals(5, Calc.clamp(5, 0, 10));
        assertEquals(0, Calc.clamp(-3, 0, 10));
        assertEquals(10, Calc.clamp(42, 0, 10));
        assertEquals(10, Calc.clamp(10, 0, 10));
        assertEquals(0, Calc.clamp(0, 0, 10));
    }

    @Test
    public void takesItems() {
        Calc calc = new Calc();
        calc.put("a");
        calc.put("b");
        calc.put("c");
        assertEquals(Arrays.asList("a", "b"), calc.take(2));
        assertEquals(Arrays.asList("c"), calc.take(5));
        try {
            calc.put(null);
        } catch (IllegalArgumentException expected) {
        }
    }

    @Test
    public void labels() {
        Calc.prefix = "#";
        assertEquals("#ab..", Calc.label("ab", 5));
        assertEquals("#abcdef", Calc.label("abcdef", 3));
        Calc.prefix = "";
    }

    @Test
    public void tokens() {
        Calc.token(1);
        Calc.token(2);
        Calc.token(3);
    }

    @Test
    public void pairs() throws InterruptedException {
        // Three hundred threads alive at once, as a server's suite starts: the sandbox's
        // process limit for a suite must let them start.
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        java.util.List<Thread> crowd = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            thread.start();
            crowd.add(thread);
        }
        go.countDown();
        for (Thread thread : crowd) {
            thread.join();
        }
        assertEquals("x", new Calc.Pair<String>().first("x", "y"));
        assertEquals("y", new Calc.Pair<String>().first(null, "y"));
    }
}
"""
CALC_NG_TEST = """package demo;

import org.testng.Assert;
import org.testng.annotations.Test;

public class ShoutTest {
    @Test
    public void shouts() {
        Assert.assertEquals(Calc.shout("hey"), "HEY!");
        Assert.assertEquals(Calc.shout(""), "!");
        Assert.assertEquals(Calc.shout("a b"), "A B!");
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
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>
      <scope>test</scope></dependency>
    <dependency><groupId>org.testng</groupId><artifactId>testng</artifactId><version>7.5.1</version>
      <scope>test</scope></dependency>
  </dependencies>
</project>
"""
# (task id, method, signature as the prompt has it, level)
TASKS = (
    ("6367670b1a6d9265ec0179b1", "clamp", "public static int clamp(int v, int lo, int hi){",
     "self_contained"),
    ("6367670b1a6d9265ec0179b2", "take", "public List<String> take(int n){", "class_runnable"),
    ("6367670b1a6d9265ec0179b3", "token", "public static long token(int salt){",
     "slib_runnable"),
    ("6367670b1a6d9265ec0179b4", "unused", "public static int unused(int x){",
     "self_contained"),
    ("6367670b1a6d9265ec0179b5", "first", "public T first(T a, T b){", "self_contained"),
    ("6367670b1a6d9265ec0179b6", "peek", "public String peek(){", "class_runnable"),
    ("6367670b1a6d9265ec0179b7", "shout", "public static String shout(String text){",
     "slib_runnable"),
    ("6367670b1a6d9265ec0179b8", "open", "public String open(){", "class_runnable"),
    ("6367670b1a6d9265ec0179b9", "label", "public static String label(String name, int width){",
     "class_runnable"),
)
IDS = {name: task_id for task_id, name, _, _ in TASKS}
needs_java = pytest.mark.skipif(
    missing_toolchain() is not None or shutil.which("mvn") is None, reason="needs a JDK and Maven"
)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def _world(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(checkouts, manifest, results, prompts) of a project whose suite calls its methods."""
    repo = tmp_path / "checkouts" / "me---calc"
    (repo / "core" / "src" / "main" / "java" / "demo").mkdir(parents=True)
    (repo / "core" / "src" / "test" / "java" / "demo").mkdir(parents=True)
    (repo / "pom.xml").write_text(PARENT_POM)
    (repo / "core" / "pom.xml").write_text(CORE_POM)
    (repo / "core" / "src" / "main" / "java" / "demo" / "Calc.java").write_text(CALC)
    (repo / "core" / "src" / "test" / "java" / "demo" / "CalcTest.java").write_text(CALC_TEST)
    (repo / "core" / "src" / "test" / "java" / "demo" / "ShoutTest.java").write_text(CALC_NG_TEST)
    # A test whose package is not its folder's: naming demo.ElsewhereTest would fail the
    # launcher's whole discovery.
    (repo / "core" / "src" / "test" / "java" / "demo" / "ElsewhereTest.java").write_text(
        "package other;\n\npublic class ElsewhereTest {\n    @org.junit.Test\n"
        "    public void nothing() {\n    }\n}\n")
    _git(repo, "init", "--quiet")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "pinned")
    pinned = _git(repo, "rev-parse", "HEAD")
    manifest = tmp_path / "projects.toml"
    ids = json.dumps([t[0] for t in TASKS])
    manifest.write_text(
        '[projects."me/calc"]\nlanguage = "java"\n'
        f'source = "https://example.org/me/calc.git"\ncommit = "{pinned}"\n'
        'java_release = "11"\nmaven_modules = ["core"]\n\n'
        f'[official."me/calc"]\nname = "calc-master"\ntasks = {ids}\n'
    )
    wrong_clamp = "public static int clamp(int v, int lo, int hi) {\n    return v;\n}"
    right_clamp = ("public static int clamp(int v, int lo, int hi) {\n"
                   "    return Math.max(lo, Math.min(hi, v));\n}")
    # open has no test: its sample compiles and is not judged.
    codes = {"clamp": (right_clamp, wrong_clamp),
             "open": ("public String open() {\n    return \"shut\";\n}", "")}
    rows = [{"_id": task_id, "method_name": name, "project_name": "calc-master",
             "code_level": level, "docstring": "",
             "generate_results": [{"generate_code": codes.get(name, ("", ""))[0],
                                   "errormessage": "", "is_pass": True},
                                  {"generate_code": codes.get(name, ("", ""))[1],
                                   "errormessage": "", "is_pass": False}]}
            for task_id, name, _, level in TASKS]
    results = tmp_path / "Raw_Input.jsonl_out.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prompts = tmp_path / "CEJavaRaw.jsonl"
    prompts.write_text("".join(
        json.dumps({"question_id": task_id, "input": signature, "signature": signature,
                    "docstring": ""}) + "\n"
        for task_id, _, signature, _ in TASKS))
    return tmp_path / "checkouts", manifest, results, prompts


def _task(name: str, lineno: int, class_name: str = "Calc") -> Task:
    return Task(task_id=IDS[name], benchmark="t", language=Language.JAVA,
                name=name, prompt="", location=Location(
                    project="me/calc", file_path="demo/Calc.java",
                    lineno=lineno, class_name=class_name))


def test_a_task_is_named_as_the_jvm_knows_it() -> None:
    lines = CALC.splitlines()
    clamp = next(i for i, line in enumerate(lines, 1) if "int clamp(" in line)
    target = find_target(_task("clamp", clamp), CALC)
    assert not isinstance(target, str)
    assert (target.class_name, target.types) == ("demo.Calc", ("int", "int", "int"))
    # CoderEval's layout: <Class>_<method>.java beside the class.
    assert target.relative == "demo/Calc_clamp.java"
    first = next(i for i, line in enumerate(lines, 1) if "T first(" in line)
    inner = find_target(_task("first", first, class_name="Pair"), CALC)
    assert not isinstance(inner, str)
    # A nested class by its binary name; a type variable matches any erased type.
    assert (inner.class_name, inner.types, inner.test_class) == (
        "demo.Calc$Pair", ("?", "?"), "Pair_first")


def test_a_method_of_an_anonymous_class_cannot_be_recorded() -> None:
    source = ("package p;\nclass A {\n  Runnable r = new Runnable() {\n"
              "    public void run() {}\n  };\n}\n")
    task = Task(task_id="x", benchmark="t", language=Language.JAVA, name="run",
                prompt="", location=Location(project="p/a", file_path="p/A.java", lineno=4))
    assert "anonymous or local" in str(find_target(task, source))


def test_the_replay_test_holds_any_text_javac_can_read(tmp_path: Path) -> None:
    target = Target(task_id="t", class_name="demo.Calc", method="clamp", types=("int",) * 3,
                    package="demo", test_class="Calc_clamp", relative="demo/Calc_clamp.java")
    tricky = 'quote " backslash \\ u-escape \\u000a newline \n tab \t é 😀 ' + "x" * 20000
    call = Call(signature="demo.Calc\tclamp\t(III)I", before=tricky, outcome="return",
                value="<int>1</int>", after=tricky)
    source = replay_source(target, [call], project="me/calc")
    assert "public class Calc_clamp" in source and "Replay.join(" in source
    if missing_toolchain() is not None:
        pytest.skip("needs a JDK")
    # The literal survives javac's unicode pre-pass and its 64 KiB constant limit: compile a
    # class that prints it back.
    check = source.split("private static String[] call0()")[1]
    program = ("public class Echo {\n  public static void main(String[] a) {\n"
               "    System.out.print(call0()[1]);\n  }\n"
               "  private static String[] call0()" + check.replace(
                   "codereval.replay.Replay.join(", "String.join(\"\", "))
    (tmp_path / "Echo.java").write_text(program.rstrip().rstrip("}") + "}\n")
    subprocess.run(["javac", "-encoding", "UTF-8", "Echo.java"], cwd=tmp_path, check=True)
    shown = subprocess.run(["java", "-Dfile.encoding=UTF-8", "-Dstdout.encoding=UTF-8", "Echo"],
                           cwd=tmp_path, capture_output=True, check=True)
    assert shown.stdout.decode("utf-8") == tricky


@pytest.mark.slow
@needs_java
def test_recorded_tests_judge_samples_end_to_end(  # type: ignore[no-untyped-def]
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    checkouts, manifest, results, prompts = _world(tmp_path)
    bench = tmp_path / "bench"
    done = run_cli("prepare", "codereval-java", "--results", results, "--prompts", prompts,
                   "--checkouts", checkouts, "--manifest", manifest, "--out", bench)
    assert done.exit_code == 0, done
    done = run_cli("build", "java-tests", bench, "--mutants", "8", "--jobs", "1",
                   "--keep-work")
    assert done.exit_code == 0, done
    checks = {c["task_id"]: c for c in map(json.loads, (bench / "tests" / "checks.jsonl").open())}
    status = {name: checks[IDS[name]]["status"] for name in IDS}
    source = {name: checks[IDS[name]]["source"] for name in IDS}
    # Recorded and strong; the time-dependent method does not replay.
    assert status["clamp"] == status["take"] == status["first"] == "ok", checks
    assert source["clamp"] == source["take"] == source["first"] == "suite"
    # A TestNG suite runs on TestNG's own runner, beside the JUnit one.
    assert (status["shout"], source["shout"], checks[IDS["shout"]]["calls"]) == ("ok", "suite", 3)
    # A time-dependent method replays from neither its suite's calls nor generated ones.
    assert status["token"] == "flaky" and "generated inputs" in checks[IDS["token"]]["detail"]
    # label's suite calls saw a prefix another statement set and reset: none replays. Its
    # generated calls, made with the prefix as the class starts, do, and its test is theirs.
    label = checks[IDS["label"]]
    assert (label["status"], label["source"]) == ("ok", "generated"), label
    assert "the suite's calls" in label["detail"]
    # Nobody calls `unused`: its calls come from generated inputs (small ints), and they tell
    # its mutants apart. `peek`'s receivers come from its one constructor, given generated
    # texts: several receivers, so "  padded  " tells trim() from no trim. No constructor of
    # Vault works on generated arguments: `open` stays without a test, and says why.
    assert (status["unused"], source["unused"]) == ("ok", "generated")
    assert (status["peek"], source["peek"]) == ("ok", "generated")
    assert checks[IDS["peek"]]["calls"] > 1
    assert status["open"] == "unreached" and "no receiver" in checks[IDS["open"]]["detail"]
    assert checks[IDS["clamp"]]["calls"] == 5
    assert checks[IDS["clamp"]]["killed"] >= checks[IDS["clamp"]]["mutants"] // 2 > 0
    test = bench / "tests" / "me---calc" / "demo" / "Calc_clamp.java"
    assert "codereval.replay.Replay.check" in test.read_text()
    # Only validated tests are written.
    assert not (bench / "tests" / "me---calc" / "demo" / "Calc_token.java").exists()
    assert "ok" in done.stdout and "tests written to" in done.stdout
    # A right sample passes, a wrong one fails; a task without a test still only compiles.
    run = tmp_path / "run"
    done = run_cli("evaluate", "--prepared", bench, "--samples", results, "--jobs", "1",
                   "--out", run)
    assert done.exit_code == 0, done
    outcomes = {(o["task_id"], o["sample_index"]): o
                for o in map(json.loads, (run / "outcomes.jsonl").open())}
    assert outcomes[(IDS["clamp"], 0)]["verdict"] == "passed"
    untested = outcomes[(IDS["open"], 0)]
    assert untested["verdict"] == "infra_error" and "no official test" in untested["detail"]
    wrong = outcomes[(IDS["clamp"], 1)]
    assert wrong["verdict"] == "failed" and "recorded call" in wrong["stderr_tail"]
    # The outcome says which call differed and how, not only that the test printed false.
    assert wrong["detail"].startswith("the test printed false: recorded call "), wrong
    # The official is_pass, on the tasks with a test: both clamp samples agree.
    done = run_cli("compare", run, results, "--json")
    assert done.exit_code == 0, done
    passing = [r for r in json.loads(done.stdout) if r.get("kind") == "pass"]
    assert [(r["tasks"], r["compared"], r["agreement"]) for r in passing] == [(1, 2, 100.0)]
    # The official test ran to its end there (a sample passed): nothing is left out.
    assert [(r["ran_tasks"], r["ran_compared"]) for r in passing] == [(1, 2)]
    assert [(r["checked_tasks"], r["checked_compared"]) for r in passing] == [(1, 2)]
    # pass@k over the tasks with a test: open's compiled sample is neither a pass nor a fail.
    done = run_cli("score", run)
    assert done.exit_code == 0, done
    assert "1 task(s) without a test left out" in done.stdout
    # Resuming the finished run runs nothing again, the compiled-untested samples included.
    done = run_cli("evaluate", "--prepared", bench, "--samples", results, "--jobs", "1",
                   "--out", run)
    assert done.exit_code == 0 and "0 run now" in done.stdout + done.stderr, done


def test_a_pom_says_where_its_tests_are_and_where_they_run(tmp_path: Path) -> None:
    from codereval.families.build.java_tests import suite_modules

    project = tmp_path / "log"
    (project / "src" / "main" / "java").mkdir(parents=True)
    (project / "tests" / "src" / "java").mkdir(parents=True)
    (project / "tests" / "resources").mkdir(parents=True)
    (project / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><build>'
        "<testSourceDirectory>tests/src/java</testSourceDirectory>"
        "<testResources><testResource><directory>${basedir}/tests/resources</directory>"
        "</testResource></testResources><plugins><plugin>"
        "<artifactId>maven-surefire-plugin</artifactId>"
        "<configuration><workingDirectory>tests</workingDirectory></configuration>"
        "</plugin></plugins></build></project>")
    info = _env_info(tmp_path, project_root=project,
                     main_roots=(project / "src" / "main" / "java",))
    [module] = suite_modules(info)
    assert module.sources == (project / "tests" / "src" / "java",)
    assert module.resources == (project / "tests" / "resources",)
    assert module.workdir == project / "tests"


def test_overloads_get_a_test_each_and_evaluate_looks_for_the_task_s_own_first(
    tmp_path: Path,
) -> None:
    from codereval.families.build.java_tests import _distinct_names
    from codereval.runners.java import _tests_dir_candidates

    def target(task_id: str, method: str) -> Target:
        return Target(task_id=task_id, class_name="p.U", method=method, types=(), package="p",
                      test_class=f"U_{method}", relative=f"p/U_{method}.java")

    named = _distinct_names({"a1": target("a1", "f"), "b2": target("b2", "f"),
                             "c3": target("c3", "g")})
    assert named["a1"].relative == "p/U_f_a1.java" and named["b2"].test_class == "U_f_b2"
    assert named["c3"].relative == "p/U_g.java"
    task = Task(task_id="b2", benchmark="t", language=Language.JAVA, name="f", prompt="",
                location=Location(project="o/r", file_path="p/U.java", lineno=3))
    candidates = _tests_dir_candidates(task, tmp_path)
    assert candidates[0] == tmp_path / "p" / "U_f_b2.java"
    assert tmp_path / "o---r" / "p" / "U_f.java" in candidates


def test_the_suite_runs_on_the_launcher_s_own_junit_platform() -> None:
    from codereval.families.build.java_tests import _PLATFORM_JAR, _suite_counts

    dropped = ["junit-jupiter-api-5.8.2.jar", "junit-platform-engine-1.8.2.jar",
               "junit-vintage-engine-5.8.2.jar", "opentest4j-1.2.0.jar",
               "apiguardian-api-1.1.2.jar", "junit-jupiter-engine-5.9.2.jar"]
    kept = ["junit-4.13.2.jar", "mockito-junit-jupiter-4.11.0.jar", "armeria-junit5-1.23.1.jar",
            "testng-6.9.10.jar"]
    assert all(_PLATFORM_JAR.fullmatch(name) for name in dropped)
    assert not any(_PLATFORM_JAR.fullmatch(name) for name in kept)
    assert _suite_counts("testng", "Total tests run: 12, Passes: 10, Failures: 2, Skips: 0") == {
        "tests_found": 12, "tests_failed": 2, "tests_successful": 10}
    assert _suite_counts("junit", "[ 7 tests successful ]\n[ 1 tests failed ]\n"
                                  "[ 8 tests found ]") == {
        "tests_successful": 7, "tests_failed": 1, "tests_found": 8}


def test_recorded_calls_are_read_once_each_up_to_the_limit(tmp_path: Path) -> None:
    import base64

    from codereval.families.build.java_tests import read_calls

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    line = "\t".join(["call", "t1", b64("p.U\tf\t(I)I"), b64("<in/>"), "return",
                      b64("<int>1</int>"), b64("<in/>")])
    other = line.replace(b64("<in/>"), b64("<in>2</in>"), 1)
    third = line.replace(b64("<in/>"), b64("<in>3</in>"), 1)
    (tmp_path / "calls.tsv").write_text("\n".join([
        line, line, other, third, "drop\tt2\t" + b64("a lambda"), "count\tt2\t0\t4",
        "count\tt2\t0\t1"]) + "\n")
    recording = read_calls(tmp_path / "calls.tsv", max_calls=2)
    assert [c.before for c in recording.calls["t1"]] == ["<in/>", "<in>2</in>"]
    assert recording.dropped["t2"] == 5 and recording.reasons["t2"] == ["a lambda"]


def test_generated_inputs_start_from_the_method_s_own_constants() -> None:
    source = CALC.replace('        if (text.isEmpty()) {\n            return "!";',
                          '        if (text.startsWith("@\\\\n") || text.indexOf(\'/\') > 41) {\n'
                          '            return "!";')
    lines = source.splitlines()
    shout = next(i for i, line in enumerate(lines, 1) if "String shout(" in line)
    target = find_target(_task("shout", shout), source)
    assert not isinstance(target, str)
    assert target.seeds[:4] == (("text", "@\\n"), ("char", "/"), ("number", "41"), ("text", "!"))


def test_update_redoes_the_named_projects_and_keeps_the_others(tmp_path: Path) -> None:
    from codereval.families.build.java_tests import _keep_others

    out, staging = tmp_path / "tests", tmp_path / "staging"
    for root, folder, test in ((out, "a---b", "X_f.java"), (out, "c---d", "Y_g.java"),
                               (staging, "c---d", "Y_g2.java")):
        (root / folder / "p").mkdir(parents=True)
        (root / folder / "p" / test).write_text("class T {}")
    (out / "checks.jsonl").write_text('{"task_id": "x", "status": "ok"}\n'
                                      '{"task_id": "y", "status": "weak"}\n')
    (out / "summary.json").write_text('{"suites": {"a/b": {"modules": []}, "c/d": {}}}')
    (staging / "checks.jsonl").write_text('{"task_id": "y", "status": "ok"}\n')
    task = Task(task_id="y", benchmark="t", language=Language.JAVA, name="g", prompt="",
                location=Location(project="c/d", file_path="p/Y.java", lineno=1))
    suites = _keep_others(out, staging, [task], {"c/d": {"modules": ["new"]}})
    assert (staging / "a---b" / "p" / "X_f.java").is_file()
    assert sorted(p.name for p in (staging / "c---d" / "p").iterdir()) == ["Y_g2.java"]
    checks = [json.loads(line) for line in (staging / "checks.jsonl").open()]
    assert [(c["task_id"], c["status"]) for c in checks] == [("x", "ok"), ("y", "ok")]
    assert suites == {"a/b": {"modules": []}, "c/d": {"modules": ["new"]}}


def test_update_needs_projects_and_an_existing_recording(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "benchmark.json").write_text("{}")
    (bench / "records.json").write_text('{"RECORDS": []}')
    done = run_cli("build", "java-tests", bench, "--update", "--project", "a/b")
    assert done.exit_code != 0 and "no recorded tests to update" in done.stderr
    assert not (bench / "tests").exists()
    done = run_cli("build", "java-tests", tmp_path / "nowhere")
    assert done.exit_code != 0 and "is not a prepared benchmark" in done.stderr


def test_surefire_s_includes_and_excludes_choose_the_test_classes(tmp_path: Path) -> None:
    from codereval.families.build.java_tests import SuiteModule, _test_classes

    root = tmp_path / "src" / "test" / "java"
    files = ["com/a/core/ParserTest.java", "com/a/perf/SpeedTest.java", "com/a/core/Helper.java",
             "org/other/ThingTest.java", "com/a/core/SlowTest.java"]
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("class X {}")
    compiled = [root / name for name in files]

    def chosen(includes: tuple[str, ...] = (), excludes: tuple[str, ...] = ()) -> list[str]:
        module = SuiteModule(folder=tmp_path, sources=(root,), resources=(), workdir=tmp_path,
                             includes=includes, excludes=excludes)
        return sorted(name for name, _ in _test_classes(module, compiled))

    # Surefire's default: the names that look like tests.
    assert chosen() == ["com.a.core.ParserTest", "com.a.core.SlowTest", "com.a.perf.SpeedTest",
                        "org.other.ThingTest"]
    # fastjson2's POM: only its own package (its perf tests run for minutes).
    assert chosen(("com/a/core/**/*.java",), ("**/Slow*",)) == ["com.a.core.Helper",
                                                                "com.a.core.ParserTest"]
    # log4j 1's: classes named one by one, with or without the extension.
    assert chosen(("com/a/perf/SpeedTest.java", "org/other/ThingTest")) == [
        "com.a.perf.SpeedTest", "org.other.ThingTest"]


def test_surefire_s_execution_groups_and_parent_properties_are_read(tmp_path: Path) -> None:
    from codereval.families.build.java_tests import suite_modules

    project = tmp_path / "graph"
    core = project / "core"
    (core / "src" / "main" / "java").mkdir(parents=True)
    (project / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><properties>'
        "<excludedGroups>org.g.SlowTests,org.g.OptionalTests</excludedGroups><tz>UTC</tz>"
        "</properties></project>")
    (core / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><build><plugins><plugin>'
        "<artifactId>maven-surefire-plugin</artifactId><executions><execution>"
        "<id>default-test</id><configuration><excludes><exclude>**/perf/**</exclude></excludes>"
        "<excludedGroups>${excludedGroups}</excludedGroups>"
        "<systemPropertyVariables><user.timezone>${tz}</user.timezone>"
        "</systemPropertyVariables></configuration></execution></executions>"
        "</plugin></plugins></build></project>")
    info = _env_info(tmp_path, project_root=project, main_roots=(core / "src" / "main" / "java",))
    [module] = suite_modules(info)
    assert module.excludes == ("**/perf/**",)
    assert module.excluded_groups == ("org.g.SlowTests", "org.g.OptionalTests")
    assert module.properties == (("user.timezone", "UTC"),)


def test_a_task_whose_official_test_never_ran_to_its_end_is_told_apart(tmp_path: Path) -> None:
    from codereval.families.codereval.agreement import official_never_ran
    from codereval.families.codereval.official import load_official_results

    def official(name: str, results: dict[str, list[tuple[bool, str]]]) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps({
            "_id": task_id, "method_name": "f", "project_name": "p", "code_level": "self_contained",
            "generate_results": [{"generate_code": "int f() { return 1; }", "errormessage": m,
                                  "is_pass": ok} for ok, m in rows]}) + "\n"
            for task_id, rows in results.items()))
        return path

    a = official("a.jsonl", {"6367670b1a6d9265ec0179c1": [(False, "exec error!")] * 2,
                             "6367670b1a6d9265ec0179c2": [(False, "exec error!")] * 2,
                             "6367670b1a6d9265ec0179c3": [(False, "compile error")] * 2})
    b = official("b.jsonl", {"6367670b1a6d9265ec0179c1": [(False, "compile error")] * 2,
                             "6367670b1a6d9265ec0179c2": [(True, ""), (False, "exec error!")],
                             "6367670b1a6d9265ec0179c3": [(False, "compile error")] * 2})
    # c1: nothing ran to its end, in either file; c2: a model passed it; c3: nothing compiled.
    assert official_never_ran([load_official_results(a), load_official_results(b)]) == {
        "6367670b1a6d9265ec0179c1"}


def test_a_test_that_a_trivial_body_passes_is_weak_whatever_mutants_it_kills() -> None:
    from codereval.families.build.pipeline import TaskCheck, judge
    from codereval.model import Outcome, Verdict

    def outcomes(*verdicts: Verdict) -> list[Outcome]:
        return [Outcome(task_id="t", sample_index=i, verdict=v) for i, v in enumerate(verdicts)]

    passed, failed = Verdict.PASSED, Verdict.FAILED
    strong = TaskCheck(task_id="t", function="f", file_path="F.java")
    judge(strong, outcomes(passed, passed, passed), outcomes(failed, failed), min_kill=0.5,
          trivial=outcomes(failed))
    assert (strong.status, strong.killed) == ("ok", 2)
    # Every mutant killed, yet `return null;` passes: the test cannot tell "does nothing".
    hollow = TaskCheck(task_id="t", function="f", file_path="F.java")
    judge(hollow, outcomes(passed, passed, passed), outcomes(failed, failed), min_kill=0.5,
          trivial=outcomes(passed))
    assert hollow.status == "weak" and "trivial body" in hollow.detail
    # The reference failing outranks everything: broken.
    broken = TaskCheck(task_id="t", function="f", file_path="F.java")
    judge(broken, outcomes(passed, failed, passed), outcomes(failed), min_kill=0.5,
          trivial=outcomes(passed))
    assert broken.status == "broken"


TEXTS_SOURCE = """package demo;

public class Texts {
    public static int len(String s) {
        return s.length();
    }

    public static String echo(String s) {
        return s;
    }
}
"""


def _env_info(tmp_path: Path, **fields: object) -> JavaEnvInfo:
    """A Java environment in tmp_path with nothing built; ``fields`` replace its defaults."""
    defaults: dict[str, object] = {
        "root": tmp_path, "project_root": tmp_path, "main_roots": (), "test_roots": (),
        "classes": tmp_path / "c", "test_classes": tmp_path / "t", "dependencies": (),
        "processors": False}
    return JavaEnvInfo(**{**defaults, **fields})


def _generated(tmp_path: Path, sources: dict[str, str], targets: list[Target], *,
               max_calls: int = 20, edges: bool = False) -> tuple[Recording, JavaEnvInfo]:
    """The classes of ``sources`` (class name -> source of package demo) compiled, and Generate
    run on ``targets`` as `build java-tests` runs it."""
    from codereval.families.build.java_tests import generate_calls
    from codereval.java.recording import ensure_recorder
    from codereval.java.toolchain import find_jdk
    from codereval.sandbox import get_sandbox

    files = []
    for name, text in sources.items():
        source = tmp_path / "src" / "demo" / f"{name}.java"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(text)
        files.append(str(source))
    info = _env_info(tmp_path, main_roots=(tmp_path / "src",), classes=tmp_path / "classes")
    subprocess.run([str(find_jdk().javac), "-d", str(info.classes), *files], check=True)
    work = tmp_path / "work"
    work.mkdir()
    made = generate_calls(info, targets, tools=ensure_recorder(), sandbox=get_sandbox("auto"),
                          work=work, max_calls=max_calls, timeout=120, edges=edges)
    return made, info


@needs_java
@pytest.mark.parametrize("edges", [False, True])
def test_generated_inputs_are_typical_unless_edges_are_asked_for(
        tmp_path: Path, edges: bool) -> None:
    targets = [Target(task_id=name, class_name="demo.Texts", method=name, types=("String",),
                      package="demo", test_class=f"Texts_{name}", relative=f"Texts_{name}.java")
               for name in ("len", "echo")]
    made, _ = _generated(tmp_path, {"Texts": TEXTS_SOURCE}, targets, edges=edges)
    echoed = made.calls["echo"]
    # Null is a typical input (hand-written tests pass it as often as not); "" is an edge.
    assert any("<null/>" in c.before.split("<object-array>", 2)[2] for c in echoed)
    assert any("<string></string>" in c.before for c in echoed) is edges
    # len(null) throws: an official test that passes the reference cannot hold such a call.
    assert any(c.outcome == "throw" for c in made.calls["len"]) is edges


def test_a_java_8_projects_suite_gets_the_java_ee_api_java_17_removed(tmp_path: Path) -> None:
    from codereval.families.build.java_tests import java_ee_removed

    def info(release: str) -> JavaEnvInfo:
        return _env_info(tmp_path, java_release=release)

    # hasor's tests, built for Java 8, load classes annotated @PostConstruct.
    [jar] = java_ee_removed(info("8"))
    assert jar.name == "javax.annotation-api-1.3.2.jar" and jar.is_file()
    assert java_ee_removed(info("1.8")) == [jar]
    assert java_ee_removed(info("11")) == java_ee_removed(info("17")) == []


EVENT_SOURCE = """package demo;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;

public class Event implements Serializable {
    String message = "m";
    String where;

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        if (where == null) {
            where = "unknown";
        }
    }

    public static int size(Event event) {
        return event.message.length();
    }
}
"""


@needs_java
def test_a_class_whose_readobject_fills_a_field_replays_as_recorded(tmp_path: Path) -> None:
    """log4j's LoggingEvent sets its location when read back: the argument after the call is
    compared with the recording rebuilt the same way, not taken for a change the call made."""
    target = Target(task_id="size", class_name="demo.Event", method="size", types=("Event",),
                    package="demo", test_class="Event_size", relative="demo/Event_size.java")
    made, info = _generated(tmp_path, {"Event": EVENT_SOURCE}, [target], max_calls=5)
    calls = [c for c in made.calls["size"] if c.outcome == "return"]
    assert calls and "<where>" not in calls[0].after
    done = _replayed(tmp_path, target, calls, info.classes)
    assert done.stdout.strip() == "true", done.stderr


def _replayed(tmp_path: Path, target: Target, calls: list[Call],
              classes: Path) -> subprocess.CompletedProcess[str]:
    """The replay test of ``calls`` compiled and run against the classes in ``classes``."""
    from codereval.java.recording import REPLAY_JVM_FLAGS, ensure_recorder
    from codereval.java.toolchain import find_jdk

    out = tmp_path / f"replay-{classes.name}"
    test = out / "src" / target.relative
    test.parent.mkdir(parents=True, exist_ok=True)
    test.write_text(replay_source(target, calls, project="me/demo"))
    jdk = find_jdk()
    classpath = ":".join(map(str, [classes, *ensure_recorder().replay_classpath]))
    subprocess.run([str(jdk.javac), "-cp", classpath, "-d", str(out), str(test)], check=True)
    name = f"{target.package}.{target.test_class}"
    return subprocess.run([str(jdk.java), *REPLAY_JVM_FLAGS, "-cp", f"{out}:{classpath}", name],
                          capture_output=True, text=True, check=False)


GRAPH_SOURCES = {
    "Node": "package demo;\n\npublic class Node {\n    final int label;\n"
            "    final java.util.Set<Node> next = new java.util.HashSet<>();\n\n"
            "    public Node(int label) {\n        this.label = label;\n    }\n}\n",
    # Nodes hash by identity: a rebuilt set of them iterates in a new order every run.
    "Graph": "package demo;\n\npublic class Graph {\n"
             "    private final java.util.Set<Node> nodes = new java.util.HashSet<>();\n\n"
             "    public int chain(int n) {\n        Node last = null;\n"
             "        for (int i = 0; i < n; i++) {\n"
             "            Node node = new Node(nodes.size() + OFFSET);\n"
             "            if (last != null) {\n                last.next.add(node);\n"
             "            }\n            nodes.add(node);\n            last = node;\n"
             "        }\n        return nodes.size();\n    }\n}\n",
}


@needs_java
def test_a_graph_in_hash_sets_replays_whatever_order_its_sets_iterate_in(
        tmp_path: Path) -> None:
    """jgrapht's graphs: sets of objects hashed by identity. The state after a call is
    compared as a graph, each such set as a set; a build that labels its nodes otherwise still
    fails."""
    from codereval.java.toolchain import find_jdk

    target = Target(task_id="chain", class_name="demo.Graph", method="chain", types=("int",),
                    package="demo", test_class="Graph_chain", relative="demo/Graph_chain.java")
    sources = {name: text.replace("OFFSET", "0") for name, text in GRAPH_SOURCES.items()}
    made, info = _generated(tmp_path, sources, [target])
    calls = made.calls.get("chain", [])
    # Calls that leave sets of several nodes behind, whose order a rebuild shuffles.
    assert sum(c.after.count("<demo.Node") >= 5 for c in calls) >= 2, calls
    for run in range(3):
        done = _replayed(tmp_path, target, calls, info.classes)
        assert done.stdout.strip() == "true", (run, done.stderr)
    wrong = tmp_path / "wrong"
    (tmp_path / "wrong-src" / "demo").mkdir(parents=True)
    for name, text in GRAPH_SOURCES.items():
        (tmp_path / "wrong-src" / "demo" / f"{name}.java").write_text(
            text.replace("OFFSET", "1"))
    subprocess.run([str(find_jdk().javac), "-d", str(wrong),
                    *map(str, (tmp_path / "wrong-src" / "demo").iterdir())], check=True)
    done = _replayed(tmp_path, target, calls, wrong)
    assert done.stdout.strip() == "false"
    assert "left its receiver other than the original did" in done.stderr


SORTER_SOURCE = """package demo;

public class Sorter {
    private final java.util.Comparator<String> order = (a, b) -> b.compareTo(a);
    private final String name;

    public Sorter(String name) {
        this.name = name;
    }

    public String first(String a, String b) {
        return order.compare(a, b) <= 0 ? a : b;
    }

    public String tag() {
        return "<" + name.trim() + ">";
    }
}
"""


@needs_java
def test_a_receiver_holding_a_lambda_replays_only_where_the_lambda_is_not_used(
        tmp_path: Path) -> None:
    """XStream writes a lambda that is not Serializable as null. A method that does not use
    it replays as recorded; one that does throws on the rebuilt receiver, and calibration drops
    such calls as it drops any the reference does not reproduce."""
    targets = [Target(task_id=name, class_name="demo.Sorter", method=name, types=types,
                      package="demo", test_class=f"Sorter_{name}",
                      relative=f"demo/Sorter_{name}.java")
               for name, types in (("first", ("String", "String")), ("tag", ()))]
    made, info = _generated(tmp_path, {"Sorter": SORTER_SOURCE}, targets)
    tag = _replayed(tmp_path, targets[1], made.calls["tag"], info.classes)
    assert tag.stdout.strip() == "true", tag.stderr
    first = _replayed(tmp_path, targets[0], made.calls["first"], info.classes)
    assert first.stdout.strip() == "false" and "NullPointerException" in first.stderr


SHAPE_SOURCES = {
    "Shape": "package demo;\n\npublic abstract class Shape {\n    abstract int area();\n\n"
             "    public String describe() {\n        return \"area \" + area();\n    }\n}\n",
    # First in name order, but its describe() is its own: calling it would not run Shape's.
    "Ball": "package demo;\n\npublic class Ball extends Shape {\n"
            "    int area() {\n        return 3;\n    }\n\n"
            "    @Override\n    public String describe() {\n        return \"round\";\n    }\n}\n",
    "Square": "package demo;\n\npublic class Square extends Shape {\n    final int side;\n\n"
              "    public Square(int side) {\n        this.side = side;\n    }\n\n"
              "    int area() {\n        return side * side;\n    }\n}\n",
}


@needs_java
def test_an_abstract_class_s_method_is_called_on_a_subclass_that_inherits_it(
        tmp_path: Path) -> None:
    target = Target(task_id="describe", class_name="demo.Shape", method="describe", types=(),
                    package="demo", test_class="Shape_describe",
                    relative="demo/Shape_describe.java")
    made, info = _generated(tmp_path, SHAPE_SOURCES, [target])
    calls = made.calls.get("describe", [])
    assert calls, made.reasons
    assert all("<demo.Square>" in c.before and "<demo.Ball" not in c.before for c in calls)
    # Several squares: area 1, 4, 9 ... tell describe's arithmetic apart.
    assert len({c.value for c in calls}) > 1
    done = _replayed(tmp_path, target, calls, info.classes)
    assert done.stdout.strip() == "true", done.stderr


def test_calibration_keeps_the_calls_the_reference_reproduces_unless_most_are_lost() -> None:
    from codereval.families.build.java_tests import _settle

    calls = [Call(signature="s", before=str(i), outcome="return", value="v", after="a")
             for i in range(4)]
    kept = _settle(calls, {3})
    assert (kept.status, [c.before for c in kept.kept], kept.unstable) == (
        "recorded", ["0", "1", "2"], 1)
    # Half lost is still a test; more than half is a method that does not replay.
    assert _settle(calls, {0, 1}).status == "recorded"
    lost = _settle(calls, {0, 1, 2})
    assert lost.status == "flaky" and "3 of 4" in lost.detail
    assert _settle(calls, "the replay test does not compile").status == "broken"


STREAM_SOURCES = {
    "Source": "package demo;\n\npublic interface Source {\n    String name();\n}\n",
    "FileSource": "package demo;\n\npublic class FileSource implements Source {\n"
                  "    private final String path;\n\n"
                  "    public FileSource(String path) {\n        this.path = path;\n    }\n\n"
                  "    public String name() {\n        return path.trim();\n    }\n}\n",
    "Streams": "package demo;\n\npublic class Streams {\n"
               "    public static int lines(java.io.InputStream in) throws java.io.IOException {\n"
               "        int n = 0;\n        for (int c = in.read(); c != -1; c = in.read()) {\n"
               "            n += c == '\\n' ? 1 : 0;\n        }\n        return n;\n    }\n\n"
               "    public static String label(Source source) {\n"
               "        return \"[\" + source.name() + \"]\";\n    }\n\n"
               "    public static boolean isControl(char ch) {\n"
               "        return ch < 32 || ch == 127;\n    }\n}\n",
}


@needs_java
def test_streams_interfaces_and_compared_chars_get_generated_values(tmp_path: Path) -> None:
    """An InputStream to read, a project interface made from the class that implements it,
    and a char the method compares with a number: each gets values other than null."""
    def target(name: str, types: tuple[str, ...],
               seeds: tuple[tuple[str, str], ...] = ()) -> Target:
        return Target(task_id=name, class_name="demo.Streams", method=name, types=types,
                      package="demo", test_class=f"Streams_{name}",
                      relative=f"demo/Streams_{name}.java", seeds=seeds)

    # isControl's seeds, as find_target reads them from its source.
    targets = [target("lines", ("InputStream",)), target("label", ("Source",)),
               target("isControl", ("char",), (("number", "32"), ("number", "127")))]
    made, _ = _generated(tmp_path, STREAM_SOURCES, targets)
    assert any(c.value == "<int>2</int>" for c in made.calls["lines"]), made.calls["lines"]
    assert any("<demo.FileSource>" in c.before for c in made.calls["label"]), made.reasons
    # 32 and 127 from its source, and the chars beside them: true and false both seen.
    assert {c.value for c in made.calls["isControl"]} == {
        "<boolean>true</boolean>", "<boolean>false</boolean>"}


def test_a_body_that_computes_nothing_is_told_from_one_that_computes() -> None:
    from codereval.analysis.java import computes_nothing

    assert computes_nothing("void removeSelf() {\n    // remove it\n}", name="removeSelf")
    assert computes_nothing("/** Doc. */\npublic int size() { return 0; }", name="size")
    assert computes_nothing("String name() { return \"x\"; /* later */ }", name="name")
    assert not computes_nothing("int size() { return items.size(); }", name="size")
    assert not computes_nothing("int f() { int x = 1; return x; }", name="f")
    assert not computes_nothing("int f() { return -1; }", name="g")
    # A loop that does nothing in its body computes nothing either; one that calls does.
    idle = "void addAll(final Stream[] s) {\n    for (int i = s.length - 1; i >= 0; i--) {\n" \
           "        // add it\n    }\n}"
    assert computes_nothing(idle, name="addAll")
    assert not computes_nothing("void f() { while (it.hasNext()) { } }", name="f")
    assert not computes_nothing("void f() { for (int i = 0; i < 3; i++) { n++; } }", name="f")


def test_an_official_pass_of_a_body_that_computes_nothing_is_the_official_test_s_weakness(
        tmp_path: Path) -> None:
    """Ours failed, the official test passed: for an empty body that is the official test's
    weakness, for any other body ours is the stronger test."""
    from codereval.families.codereval.agreement import JAVA_PASS_CAUSES, compare_java_pass
    from codereval.families.codereval.official import load_official_results
    from codereval.model import Outcome, Sample, Stage, Verdict
    from codereval.storage.store import Run

    task_id = "6367670b1a6d9265ec0179d1"
    codes = ["void removeSelf() {\n}", "void removeSelf() {\n    next = null;\n}"]
    path = tmp_path / "official.jsonl"
    path.write_text(json.dumps({
        "_id": task_id, "method_name": "removeSelf", "project_name": "p",
        "code_level": "class_runnable",
        "generate_results": [{"generate_code": code, "errormessage": "", "is_pass": True}
                             for code in codes]}) + "\n")
    task = Task(task_id=task_id, benchmark="codereval-java", language=Language.JAVA,
                name="removeSelf", prompt="")
    run = Run(path=tmp_path, tasks=[task],
              samples=[Sample(task_id=task_id, index=i, raw=c, code=c)
                       for i, c in enumerate(codes)],
              outcomes=[Outcome(task_id=task_id, sample_index=i, verdict=Verdict.FAILED,
                                stage=Stage.RUN) for i in range(2)], meta={})
    agreement = compare_java_pass(run, load_official_results(path), label="m")
    assert [d.cause for d in agreement.disagreements] == [
        JAVA_PASS_CAUSES["hollow"], JAVA_PASS_CAUSES["stronger"]]


def test_a_task_whose_official_test_passed_a_body_that_computes_nothing_is_told_apart(
        tmp_path: Path) -> None:
    """The official test is blind to the method when it passed a body that computes nothing;
    not so when the reference computes nothing as well (then the empty body is right)."""
    from codereval.families.codereval.agreement import official_blind
    from codereval.families.codereval.official import load_official_results
    from codereval.model import Sample
    from codereval.storage.store import Run

    blind, fine, literal = ("6367670b1a6d9265ec0179e1", "6367670b1a6d9265ec0179e2",
                            "6367670b1a6d9265ec0179e3")
    rows = {blind: ("void drop() {\n}", True), fine: ("void drop() {\n}", False),
            literal: ("int size() { return 0; }", True)}
    path = tmp_path / "official.jsonl"
    path.write_text("".join(json.dumps({
        "_id": task_id, "method_name": "m", "project_name": "p", "code_level": "class_runnable",
        "generate_results": [{"generate_code": code, "errormessage": "", "is_pass": ok}]}) + "\n"
        for task_id, (code, ok) in rows.items()))
    references = {blind: ("drop", "void drop() { items.clear(); }"),
                  fine: ("drop", "void drop() { items.clear(); }"),
                  literal: ("size", "int size() { return 0; }")}
    run = Run(path=tmp_path, meta={}, outcomes=[],
              tasks=[Task(task_id=t, benchmark="codereval-java", language=Language.JAVA,
                          name=name, prompt="", reference=reference)
                     for t, (name, reference) in references.items()],
              samples=[Sample(task_id=t, index=0, raw=code, code=code)
                       for t, (code, _) in rows.items()])
    assert official_blind([(run, load_official_results(path))]) == {blind}


RARE_SOURCE = """package demo;

public class Rare {
    public static boolean both(int a, int b) {
        return a == 100 && b == 100;
    }
}
"""


@needs_java
def test_generation_goes_on_for_a_call_that_does_otherwise_than_the_rest(
        tmp_path: Path) -> None:
    """`both` is false on nearly every input: calls that all return false would be a test
    that `return false;` passes. Generation goes on past the limit (three calls here; the
    pools reach 100 and 100 on the seventh) for a call that returns otherwise, and keeps it
    among the three."""
    target = Target(task_id="both", class_name="demo.Rare", method="both",
                    types=("int", "int"), package="demo", test_class="Rare_both",
                    relative="demo/Rare_both.java")
    made, _ = _generated(tmp_path, {"Rare": RARE_SOURCE}, [target], max_calls=3)
    values = [c.value for c in made.calls["both"]]
    assert len(values) == 3
    assert "<boolean>true</boolean>" in values and "<boolean>false</boolean>" in values
