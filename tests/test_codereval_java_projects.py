"""What the real CoderEval-Java projects need beyond a plain Maven build: a git submodule placed
from the user's checkout (skywalking's protocol files), a folder of independent programs that
only compiles file by file (several `class Solution`), compile-only gold validation (the
references compile in place; there are no tests to run), and disagreements the official rows
explain by themselves (no error message; a task no sample of any model ever compiled)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_prepare_codereval_java import PARENT_POM

from codereval.environments.base import load_manifest
from codereval.errors import UserError
from codereval.evaluation.gold import GoldStatus, classify, gold_summary, gold_table
from codereval.families.codereval.agreement import (
    COMPILE_UNEXPLAINED,
    compare_compile,
    load_compile_causes,
    official_never_compiled,
)
from codereval.families.codereval.official import OfficialResults
from codereval.families.codereval.prepare.projects import place_project
from codereval.java.toolchain import missing_toolchain
from codereval.model import Language, Outcome, Sample, Stage, Task, Verdict
from codereval.runners.java import NO_TEST
from codereval.storage.store import Run

needs_java = pytest.mark.skipif(missing_toolchain() is not None, reason="needs a JDK")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
         "-c", "protocol.file.allow=always", *args],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def _project_with_submodule(tmp_path: Path) -> tuple[Path, str, str]:
    """(checkouts, pinned commit, the protocol commit it records): a project whose `proto`
    folder is a submodule; the protocol moved on after the pin."""
    protocol = tmp_path / "protocol"
    protocol.mkdir()
    _git(protocol, "init", "--quiet")
    (protocol / "service.proto").write_text("// v1\n")
    _git(protocol, "add", "-A")
    _git(protocol, "commit", "--quiet", "-m", "v1")
    recorded = _git(protocol, "rev-parse", "HEAD")
    project = tmp_path / "upstream"
    project.mkdir()
    _git(project, "init", "--quiet")
    (project / "Main.java").write_text("class Main {}\n")
    _git(project, "submodule", "--quiet", "add", str(protocol), "proto")
    _git(project, "commit", "--quiet", "-m", "pinned")
    pinned = _git(project, "rev-parse", "HEAD")
    (protocol / "service.proto").write_text("// v2\n")
    _git(protocol, "commit", "--quiet", "-am", "v2")
    checkouts = tmp_path / "checkouts"
    checkout = checkouts / "me---sky"
    _git(tmp_path, "clone", "--quiet", str(project), str(checkout))
    return checkouts, pinned, recorded


def _spec(tmp_path: Path, commit: str, *, submodules: str) -> Path:
    manifest = tmp_path / "projects.toml"
    manifest.write_text(
        f'[projects."me/sky"]\nlanguage = "java"\nsource = "https://example.org/me/sky.git"\n'
        f'commit = "{commit}"\nsource_roots = ["."]\nsubmodules = {submodules}\n')
    return manifest


def test_a_needed_submodule_comes_from_the_checkouts_own_clone_at_the_recorded_commit(
    tmp_path: Path,
) -> None:
    checkouts, pinned, _recorded = _project_with_submodule(tmp_path)
    [spec] = load_manifest(_spec(tmp_path, pinned, submodules='["proto"]'))
    # Not checked out yet: the project is missing, and the line says how to fix it.
    dest = tmp_path / "bench" / "me---sky"
    placed = place_project(spec, project="me/sky", dest=dest, checkouts=checkouts,
                           fetch=False, downloads=tmp_path / "dl")
    assert placed.origin == "missing"
    assert "git submodule update --init proto" in placed.note
    assert not dest.exists()
    _git(checkouts / "me---sky", "submodule", "--quiet", "update", "--init", "proto")
    # The checkout's submodule may be anywhere; the recorded commit is what gets placed.
    _git(checkouts / "me---sky" / "proto", "pull", "--quiet", "origin", "HEAD")
    placed = place_project(spec, project="me/sky", dest=dest, checkouts=checkouts,
                           fetch=False, downloads=tmp_path / "dl")
    assert placed.origin == "checkout", placed
    assert (dest / "proto" / "service.proto").read_text() == "// v1\n"
    assert not (dest / "proto" / ".git").exists() and not (dest / ".git").exists()


def test_a_path_that_is_not_a_submodule_is_reported(tmp_path: Path) -> None:
    checkouts, pinned, _ = _project_with_submodule(tmp_path)
    [spec] = load_manifest(_spec(tmp_path, pinned, submodules='["docs"]'))
    placed = place_project(spec, project="me/sky", dest=tmp_path / "bench" / "me---sky",
                           checkouts=checkouts, fetch=False, downloads=tmp_path / "dl")
    assert placed.origin == "missing" and "docs is not a submodule" in placed.note


def test_fetching_a_project_clones_its_needed_submodules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _checkouts, pinned, _ = _project_with_submodule(tmp_path)
    # git refuses file:// submodules by default; the fixture's are local folders.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")
    manifest = tmp_path / "projects.toml"
    manifest.write_text(
        f'[projects."me/sky"]\nlanguage = "java"\nsource = "{tmp_path / "upstream"}"\n'
        f'commit = "{pinned}"\nsource_roots = ["."]\nsubmodules = ["proto"]\n')
    [spec] = load_manifest(manifest)
    dest = tmp_path / "bench" / "me---sky"
    placed = place_project(spec, project="me/sky", dest=dest, checkouts=None, fetch=True,
                           downloads=tmp_path / "dl")
    assert placed.origin == "fetched", placed
    assert (dest / "proto" / "service.proto").read_text() == "// v1\n"


def test_manifest_flags_are_checked(tmp_path: Path) -> None:
    manifest = tmp_path / "projects.toml"
    manifest.write_text('[projects."me/x"]\nlanguage = "java"\nsource = "x"\n'
                        'compile_per_file = "yes"\n')
    with pytest.raises(UserError, match="compile_per_file must be true or false"):
        load_manifest(manifest)
    manifest.write_text('[projects."me/x"]\nlanguage = "java"\nsource = "x"\n'
                        'compile_per_file = true\nmaven_modules = ["core"]\n')
    with pytest.raises(UserError, match="compile_per_file is for plain source folders"):
        load_manifest(manifest)


LOGGER = """import java.util.HashMap;

public class LoggerRateLimiter {
    public static void main(String[] args) {
        System.out.println(new Logger().shouldPrintMessage(1, "foo"));
    }
}

class Logger {
    HashMap<String, Integer> map = new HashMap<>();

    /** Returns true if the message should be printed. */
    public boolean shouldPrintMessage(int timestamp, String message) {
        Integer last = map.get(message);
        if (last != null && timestamp - last < 10) {
            return false;
        }
        map.put(message, timestamp);
        return true;
    }
}
"""
# Two more programs of the same folder, each with its own `class Solution`: javac over the whole
# folder stops at "duplicate class: Solution".
SOLUTION = """class Solution {
    int answer() { return %d; }
}
"""
TASK_ID = "6367672d1a6d9265ec017c99"


def write_logger_inputs(
    tmp_path: Path, task_id: str, *, signature: str, level: str,
    generated: list[tuple[str, str, bool]],
) -> tuple[Path, Path]:
    """An official result file (one `shouldPrintMessage` task of "interviews-master" with the
    given (code, errormessage, is_pass) samples) and its prompt file, as prepare reads them."""
    rows = [{"_id": task_id, "method_name": "shouldPrintMessage",
             "project_name": "interviews-master", "code_level": level, "docstring": "",
             "generate_results": [
                 {"generate_code": code, "errormessage": error, "is_pass": passed}
                 for code, error, passed in generated]}]
    results = tmp_path / "Raw_Input.jsonl_out.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prompts = tmp_path / "CEJavaRaw.jsonl"
    doc = "/** Returns true if the message should be printed. */"
    prompts.write_text(json.dumps({"question_id": task_id, "input": doc + "\n" + signature,
                                   "signature": signature, "docstring": doc}) + "\n")
    return results, prompts


@pytest.mark.slow
@needs_java
def test_a_folder_of_programs_compiles_file_by_file_and_gold_says_the_reference_compiles(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    repo = tmp_path / "checkouts" / "me---leet"
    (repo / "java").mkdir(parents=True)
    (repo / "java" / "LoggerRateLimiter.java").write_text(LOGGER)
    (repo / "java" / "PerfectSquares.java").write_text(SOLUTION % 1)
    (repo / "java" / "UglyNumber.java").write_text(SOLUTION % 2)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "pinned")
    pinned = _git(repo, "rev-parse", "HEAD")
    manifest = tmp_path / "projects.toml"
    manifest.write_text(
        f'[projects."me/leet"]\nlanguage = "java"\nsource = "https://example.org/me/leet.git"\n'
        f'commit = "{pinned}"\njava_release = "8"\nsource_roots = ["java"]\n'
        'compile_per_file = true\n\n'
        f'[official."me/leet"]\nname = "interviews-master"\ntasks = ["{TASK_ID}"]\n')
    signature = "public boolean shouldPrintMessage(int timestamp, String message){"
    good = ("public boolean shouldPrintMessage(int timestamp, String message) {\n"
            "    return map.putIfAbsent(message, timestamp) == null;\n}")
    results, prompts = write_logger_inputs(
        tmp_path, TASK_ID, signature=signature, level="self_contained",
        generated=[(good, "", True), (good.replace("map.", "cache."), "compile error", False)])
    bench = tmp_path / "bench"
    done = run_cli("prepare", "codereval-java", "--results", results, "--prompts", prompts,
                   "--checkouts", tmp_path / "checkouts", "--manifest", manifest, "--out", bench)
    assert done.exit_code == 0, done
    assert "compile_per_file = true" in (bench / "projects.toml").read_text()
    run = tmp_path / "run"
    done = run_cli("evaluate", "--prepared", bench, "--samples", results, "--out", run)
    assert done.exit_code == 0, done
    outcomes = {o["sample_index"]: o for o in map(json.loads, (run / "outcomes.jsonl").open())}
    assert outcomes[0]["detail"].startswith(NO_TEST), outcomes[0]
    assert outcomes[1]["verdict"] == "compile_error"
    assert "cannot find symbol" in outcomes[1]["detail"]
    # The summary tells a compiled sample with no test from the harness's own failures, and
    # gives no pass rate where no sample could reach a test.
    assert "note: 1 sample(s) compiled and have no test to run" in done.stdout
    assert "harness's failures" not in done.stdout
    assert "pass@1: n/a (no sample reached a test)" in done.stdout
    gold = tmp_path / "gold"
    done = run_cli("evaluate", "--prepared", bench, "--reference", "--repeat", "2",
                   "--out", gold)
    assert done.exit_code == 0, done
    assert "gold validation: 0 ok, 0 broken, 0 flaky, 0 weak, 1 untested" in done.stdout
    [row] = map(json.loads, (gold / "gold.jsonl").open())
    assert row["status"] == "untested" and "compiles in place (2/2)" in row["detail"]


def _task(task_id: str) -> Task:
    return Task(task_id=task_id, benchmark="codereval-java", language=Language.JAVA,
                name="f", reference="public int f() { return 1; }")


def _outcome(task_id: str, index: int, verdict: Verdict, stage: Stage, detail: str = "",
             ) -> Outcome:
    return Outcome(task_id=task_id, sample_index=index, verdict=verdict, stage=stage,
                   detail=detail)


def test_gold_calls_a_task_without_tests_untested_only_when_its_reference_compiles() -> None:
    tasks = [_task("a"), _task("b")]
    samples = [Sample(task_id=t, index=i, raw="", code="", prompt_variant="gold:reference")
               for t in ("a", "b") for i in (0, 1)]
    outcomes = [
        _outcome("a", 0, Verdict.INFRA_ERROR, Stage.COMPILE, NO_TEST),
        _outcome("a", 1, Verdict.INFRA_ERROR, Stage.COMPILE, NO_TEST),
        _outcome("b", 0, Verdict.COMPILE_ERROR, Stage.COMPILE, "X.java:3: error: ..."),
        _outcome("b", 1, Verdict.COMPILE_ERROR, Stage.COMPILE, "X.java:3: error: ..."),
    ]
    rows = {row.task_id: row for row in classify(tasks, samples, outcomes)}
    assert rows["a"].status is GoldStatus.UNTESTED
    assert rows["b"].status is GoldStatus.BROKEN and "compile_error" in rows["b"].detail
    summary = gold_summary(list(rows.values()))
    assert summary == "gold validation: 0 ok, 1 broken, 0 flaky, 0 weak, 1 untested"
    table = gold_table(list(rows.values()))
    assert table is not None and table.row_count == 1  # untested tasks are counted, not listed
    # A run with tests says nothing about untested.
    assert "untested" not in gold_summary([rows["b"]])


def _official(rows: dict[str, list[tuple[str, bool]]]) -> OfficialResults:
    """An official Java file in memory: task -> [(errormessage, is_pass)]."""
    from codereval.families.codereval.official import _outcome as official_outcome

    outcomes = [official_outcome({"errormessage": message, "is_pass": passed},
                                 task_id=task, index=index, language=Language.JAVA)
                for task, items in rows.items() for index, (message, passed) in enumerate(items)]
    samples = [Sample(task_id=o.task_id, index=o.sample_index, raw="", code="")
               for o in outcomes]
    return OfficialResults(path=Path("official.jsonl"), language=Language.JAVA, tasks=[],
                           samples=samples, outcomes=outcomes)


def test_official_rows_explain_their_own_disagreements() -> None:
    official = _official({
        # Failed with no message at all: the platform recorded no compile verdict.
        "quiet": [("", False), ("", True)],
        # Every sample a compile error, in every file: the task never compiled there.
        "never": [("compile error", False), ("compile error", False)],
        # A compile error beside a compiled sample: a real disagreement if we compile it.
        "mixed": [("compile error", False), ("exec error!", False)],
    })
    other_model = _official({"never": [("compile error", False)],
                             "mixed": [("compile error", False)], "quiet": [("", False)]})
    ours = [
        _outcome("quiet", 0, Verdict.COMPILE_ERROR, Stage.COMPILE, "missing return statement"),
        _outcome("quiet", 1, Verdict.INFRA_ERROR, Stage.COMPILE, NO_TEST),
        _outcome("never", 0, Verdict.INFRA_ERROR, Stage.COMPILE, NO_TEST),
        _outcome("never", 1, Verdict.COMPILE_ERROR, Stage.COMPILE, "cannot find symbol"),
        _outcome("mixed", 0, Verdict.INFRA_ERROR, Stage.COMPILE, NO_TEST),
        _outcome("mixed", 1, Verdict.INFRA_ERROR, Stage.COMPILE, NO_TEST),
    ]
    run = Run(path=Path("run"), tasks=[], samples=list(official.samples), outcomes=ours,
              meta={})
    never = official_never_compiled([official, other_model])
    assert never == frozenset({"never"})
    result = compare_compile(run, official, label="m", never_compiled=never)
    causes = {(d.task_id, d.sample_index): d.cause for d in result.disagreements}
    assert causes == {
        ("quiet", 0): "official: failed, no message",
        ("never", 0): "official: task never compiled",
        ("mixed", 0): COMPILE_UNEXPLAINED.label,
    }
    assert (result.compared, result.both_error) == (6, 1)
    # With the task whose reference does not compile here left out (gold "broken").
    result = compare_compile(run, official, label="m", never_compiled=never,
                             broken=frozenset({"never"}))
    assert (result.compared, result.excluded, result.excluded_tasks) == (4, 2, ["never"])
    assert result.agreement == 50.0 and result.agreement_with_broken == 50.0


def test_a_causes_file_with_an_unknown_official_verdict_is_refused(tmp_path: Path) -> None:
    causes = tmp_path / "agreement.toml"
    causes.write_text('[[cause]]\nname = "x"\nside = "ours"\nofficial_verdicts = ["nope"]\n')
    with pytest.raises(UserError, match="unknown official verdict 'nope'"):
        load_compile_causes(causes)
    causes.write_text('[[cause]]\nname = "x"\nside = "ours"\nofficial_task = "sometimes"\n')
    with pytest.raises(UserError, match="official_task 'sometimes'"):
        load_compile_causes(causes)


def test_the_shipped_manifest_places_skywalkings_protocol_and_compiles_leetcode_folders_per_file(
) -> None:
    from codereval.families.codereval.prepare.codereval_java import shipped_manifest

    specs = {spec.name: spec for spec in load_manifest(shipped_manifest())}
    assert specs["apache/skywalking"].submodules == ("apm-protocol/apm-network/src/main/proto",)
    assert specs["kdn251/interviews"].compile_per_file
    assert shutil.which("git") is not None


PROCESSOR = """package stamp;

import java.util.Set;
import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.RoundEnvironment;
import javax.annotation.processing.SupportedAnnotationTypes;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.Element;
import javax.lang.model.element.TypeElement;
import javax.tools.Diagnostic;

@SupportedAnnotationTypes("*")
public class NoForbidden extends AbstractProcessor {
    @Override
    public SourceVersion getSupportedSourceVersion() {
        return SourceVersion.latestSupported();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
        for (Element type : round.getRootElements()) {
            for (Element member : type.getEnclosedElements()) {
                if (member.getSimpleName().contentEquals("forbidden")) {
                    processingEnv.getMessager().printMessage(
                        Diagnostic.Kind.ERROR, "stamp: no method may be called forbidden", member);
                }
            }
        }
        return false;
    }
}
"""
STAMPED_CORE_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>demo</groupId><artifactId>parent</artifactId><version>1</version></parent>
  <artifactId>core</artifactId>
  <dependencies>
    <dependency>
      <groupId>stamp</groupId><artifactId>stamp</artifactId><version>1</version>
      <scope>system</scope><systemPath>${project.basedir}/../lib/stamp.jar</systemPath>
    </dependency>
  </dependencies>
</project>
"""
STAMPED_TASK = "6367670b1a6d9265ec0179ad"


@pytest.mark.slow
@needs_java
@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven")
def test_a_maven_projects_annotation_processors_run_when_a_sample_compiles(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    """Lombok's case: the processor on the project's classpath runs on the injected file too
    (Maven runs it by default); a processor's error is a compile error of the sample."""
    import zipfile

    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    processor_src = tmp_path / "proc" / "stamp" / "NoForbidden.java"
    processor_src.parent.mkdir(parents=True)
    processor_src.write_text(PROCESSOR)
    classes = tmp_path / "proc-classes"
    subprocess.run(["javac", "--release", "11", "-d", str(classes), str(processor_src)],
                   check=True, capture_output=True)
    repo = tmp_path / "checkouts" / "me---stamped"
    source = repo / "core" / "src" / "main" / "java" / "demo"
    source.mkdir(parents=True)
    (repo / "lib").mkdir()
    with zipfile.ZipFile(repo / "lib" / "stamp.jar", "w") as jar:
        jar.write(classes / "stamp" / "NoForbidden.class", "stamp/NoForbidden.class")
        jar.writestr("META-INF/services/javax.annotation.processing.Processor",
                     "stamp.NoForbidden\n")
    (repo / "pom.xml").write_text(PARENT_POM)
    (repo / "core" / "pom.xml").write_text(STAMPED_CORE_POM)
    (source / "Util.java").write_text(
        "package demo;\n\npublic class Util {\n    /** Doubles. */\n"
        "    public static int twice(int n) {\n        return 2 * n;\n    }\n}\n")
    _git(repo, "init", "--quiet")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "pinned")
    pinned = _git(repo, "rev-parse", "HEAD")
    manifest = tmp_path / "projects.toml"
    manifest.write_text(
        '[projects."me/stamped"]\nlanguage = "java"\n'
        f'source = "https://example.org/me/stamped.git"\ncommit = "{pinned}"\n'
        'java_release = "11"\nmaven_modules = ["core"]\n\n'
        f'[official."me/stamped"]\nname = "stamped"\ntasks = ["{STAMPED_TASK}"]\n')
    plain = "public static int twice(int n) {\n    return n + n;\n}"
    rows = [{"_id": STAMPED_TASK, "method_name": "twice", "project_name": "stamped",
             "code_level": "self_contained", "docstring": "", "generate_results": [
                 {"generate_code": plain, "errormessage": "", "is_pass": True},
                 {"generate_code": plain + "\npublic static void forbidden() {}",
                  "errormessage": "compile error", "is_pass": False}]}]
    results = tmp_path / "Raw_Input.jsonl_out.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prompts = tmp_path / "CEJavaRaw.jsonl"
    signature = "public static int twice(int n){"
    prompts.write_text(json.dumps({"question_id": STAMPED_TASK, "signature": signature,
                                   "input": "/** Doubles. */\n" + signature,
                                   "docstring": "/** Doubles. */"}) + "\n")
    bench = tmp_path / "bench"
    done = run_cli("prepare", "codereval-java", "--results", results, "--prompts", prompts,
                   "--checkouts", tmp_path / "checkouts", "--manifest", manifest, "--out", bench)
    assert done.exit_code == 0, done
    run = tmp_path / "run"
    done = run_cli("evaluate", "--prepared", bench, "--samples", results, "--out", run)
    assert done.exit_code == 0, done
    outcomes = {o["sample_index"]: o for o in map(json.loads, (run / "outcomes.jsonl").open())}
    assert outcomes[0]["detail"].startswith(NO_TEST), outcomes[0]
    assert outcomes[1]["verdict"] == "compile_error", outcomes[1]
    assert "no method may be called forbidden" in outcomes[1]["detail"]


def test_the_java_manifest_keeps_the_published_pins_but_where_evidence_says_otherwise(
    shared_data: Path,
) -> None:
    """Every Java repository at its published commit, except where the official results say the
    platform had something else: jjwt's copy had no `Strings.EMPTY` (a sample using it did not
    compile there), which the published pin has; and "interviews-master" is kdn251/interviews,
    not the two repositories published for it (ChatGPT's passing samples are its code word for
    word), with the edits its platform copy needed to compile."""
    from codereval.families.codereval.prepare.codereval_java import (
        load_java_projects,
        shipped_manifest,
    )

    published = {p["git"]: p["commit"] for p in
                 json.loads((shared_data / "codereval" / "projects_public.json").read_text())
                 if p["language"] == "java"}
    specs = load_manifest(shipped_manifest())
    replaced = {"https://github.com/neerazz/FAANG.git", "https://github.com/Sunchit/Coding-Decoded.git"}
    assert replaced <= set(published)
    assert {spec.source for spec in specs} == (
        set(published) - replaced | {"https://github.com/kdn251/interviews.git"})
    moved = {spec.name: spec.commit for spec in specs
             if spec.commit != published.get(spec.source)}
    assert moved == {"jwtk/jjwt": "a95b699baec9780b5186539f9f2eb00e5f1a8625",
                     "kdn251/interviews": "a70c2250ec5f2e43972a359e050182f970ea2ffd"}
    text = shipped_manifest().read_text()
    assert "Strings.EMPTY" in text and published["https://github.com/jwtk/jjwt.git"][:8] in text
    projects = load_java_projects(None)
    assert projects.official_names["kdn251/interviews"] == "interviews-master"
    assert {t for t, p in projects.task_project.items() if p == "kdn251/interviews"} == {
        "6367672d1a6d9265ec017c73", "6367672d1a6d9265ec017c74", "6367672d1a6d9265ec017c78"}
    assert [e.file for e in specs[[s.name for s in specs].index("kdn251/interviews")].edits] == [
        "leetcode/hash-table/LoggerRateLimiter.java",
        "leetcode/hash-table/LoggerRateLimiter.java",
        "leetcode/hash-table/InsertDeleteGetRandomO1.java"]
