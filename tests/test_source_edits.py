"""Source edits in a projects manifest: the changes the original platform's copy of a project had
over its public history (CoderEval's "interviews-master": imports added, a constructor renamed).
They are applied exactly, once, where the project is placed or built, and never silently skipped
or misapplied when they do not fit the pinned source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_codereval_java_projects import _git, needs_java, write_logger_inputs

from codereval.environments.base import load_manifest
from codereval.environments.edits import EditFailed, SourceEdit, apply_edits, parse_edits
from codereval.environments.java import JavaEnvironmentBuilder
from codereval.errors import UserError
from codereval.families.codereval.prepare.codereval_java import shipped_manifest
from codereval.families.codereval.prepare.projects import place_project

# As the public repository has it: no import, and a constructor named after another class.
LOGGER = """// Design a logger system.
public class LoggerRateLimiter {
    HashMap<String, Integer> messages;

    /** Initialize your data structure here. */
    public Logger() {
        this.messages = new HashMap<String, Integer>();
    }

    /** Returns true if the message should be printed. */
    public boolean shouldPrintMessage(int timestamp, String message) {
        Integer last = messages.get(message);
        if (last != null && timestamp - last < 10) {
            return false;
        }
        messages.put(message, timestamp);
        return true;
    }
}
"""
EDITS = """
[[projects."me/leet".edits]]
file = "java/LoggerRateLimiter.java"
old = "public class LoggerRateLimiter {"
new = "import java.util.HashMap;\\n\\npublic class LoggerRateLimiter {"
why = "HashMap is used but not imported"

[[projects."me/leet".edits]]
file = "java/LoggerRateLimiter.java"
old = "public Logger() {"
new = "public LoggerRateLimiter() {"
"""
TASK_ID = "6367672d1a6d9265ec017c98"


def _repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "checkouts" / "me---leet"
    (repo / "java").mkdir(parents=True)
    (repo / "java" / "LoggerRateLimiter.java").write_text(LOGGER)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "pinned")
    return repo, _git(repo, "rev-parse", "HEAD")


def _manifest(tmp_path: Path, pinned: str, edits: str = EDITS) -> Path:
    manifest = tmp_path / "projects.toml"
    manifest.write_text(
        f'[projects."me/leet"]\nlanguage = "java"\nsource = "https://example.org/me/leet.git"\n'
        f'commit = "{pinned}"\njava_release = "8"\nsource_roots = ["java"]\n'
        f'compile_per_file = true\n{edits}\n'
        f'[official."me/leet"]\nname = "interviews-master"\ntasks = ["{TASK_ID}"]\n')
    return manifest


def test_an_edit_replaces_its_text_once_and_keeps_the_files_bytes_otherwise(
    tmp_path: Path,
) -> None:
    source = tmp_path / "A.java"
    source.write_bytes("// caf\xe9\nclass A { int x; }\n".encode("latin-1"))
    apply_edits(tmp_path, [SourceEdit(file="A.java", old="int x;", new="long x;")])
    assert source.read_bytes() == "// caf\xe9\nclass A { long x; }\n".encode("latin-1")


@pytest.mark.parametrize(("content", "problem"), [
    ("class A { }\n", "'int x;' not found, expected once"),
    ("class A { int x; int x; }\n", "'int x;' found 2 times, expected once"),
])
def test_an_edit_that_does_not_fit_the_source_fails_naming_it(
    tmp_path: Path, content: str, problem: str,
) -> None:
    (tmp_path / "A.java").write_text(content)
    with pytest.raises(EditFailed, match=f"edit 1 of A.java: {problem}"):
        apply_edits(tmp_path, [SourceEdit(file="A.java", old="int x;", new="long x;")])
    with pytest.raises(EditFailed, match=r"edit 1: B\.java is not in the source"):
        apply_edits(tmp_path, [SourceEdit(file="B.java", old="x", new="y")])


@pytest.mark.parametrize(("value", "problem"), [
    ({"file": "A.java"}, "must be an array of tables"),
    ([{"file": "A.java", "old": "x"}], r"edit 1 has no \['new'\]"),
    ([{"file": "A.java", "old": "x", "new": "y", "when": "now"}], r"unknown keys \['when'\]"),
    ([{"file": "../A.java", "old": "x", "new": "y"}], "must be a path inside the project"),
    ([{"file": "A.java", "old": "", "new": "y"}], "old must not be empty"),
    ([{"file": "A.java", "old": 1, "new": "y"}], "must be strings"),
])
def test_malformed_edits_are_refused_with_what_is_wrong(value: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_edits(value)


def test_a_manifest_with_bad_edits_is_one_clear_error(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path, "0" * 40, edits='\n[[projects."me/leet".edits]]\nfile = "x"\n')
    with pytest.raises(UserError, match=r"project 'me/leet': edit 1 has no \['new'\]"):
        load_manifest(manifest)


def test_edits_change_the_environments_recipe() -> None:
    [spec] = [s for s in load_manifest(shipped_manifest()) if s.name == "kdn251/interviews"]
    assert len(spec.edits) == 3
    plain = spec.__class__(name=spec.name, language=spec.language, source=spec.source,
                           commit=spec.commit, java_release=spec.java_release,
                           source_roots=spec.source_roots, compile_per_file=True)
    assert spec.key(source_hash="h", harness_version="v") != plain.key(source_hash="h",
                                                                       harness_version="v")


def test_placing_a_checkout_applies_the_edits_and_a_misfit_leaves_the_project_missing(
    tmp_path: Path,
) -> None:
    _, pinned = _repo(tmp_path)
    [spec] = load_manifest(_manifest(tmp_path, pinned))
    dest = tmp_path / "bench" / "me---leet"
    placed = place_project(spec, project="me/leet", dest=dest, checkouts=tmp_path / "checkouts",
                           fetch=False, downloads=tmp_path / "dl")
    assert placed.origin == "checkout"
    assert placed.note == "2 source edit(s) from the manifest applied"
    text = (dest / "java" / "LoggerRateLimiter.java").read_text()
    assert text.startswith("// Design a logger system.\nimport java.util.HashMap;\n\npublic class")
    assert "public LoggerRateLimiter() {" in text and "Logger()" not in text.replace(
        "LoggerRateLimiter()", "")
    # The user's checkout itself is never edited.
    assert (tmp_path / "checkouts" / "me---leet" / "java" / "LoggerRateLimiter.java"
            ).read_text() == LOGGER

    misfit = EDITS.replace('old = "public Logger() {"', 'old = "public Log() {"')
    [spec] = load_manifest(_manifest(tmp_path, pinned, edits=misfit))
    other = tmp_path / "bench2" / "me---leet"
    placed = place_project(spec, project="me/leet", dest=other, checkouts=tmp_path / "checkouts",
                           fetch=False, downloads=tmp_path / "dl")
    assert placed.origin == "missing"
    assert placed.note == ("source edits: edit 2 of java/LoggerRateLimiter.java: "
                           "'public Log() {' not found, expected once (fix the edit or the "
                           "pinned commit)")
    assert not other.exists()


def test_the_official_tree_is_taken_as_it_is(tmp_path: Path) -> None:
    _, pinned = _repo(tmp_path)
    [spec] = load_manifest(_manifest(tmp_path, pinned))
    dest = tmp_path / "bench" / "me---leet"
    (dest / "java").mkdir(parents=True)
    (dest / "java" / "LoggerRateLimiter.java").write_text("the platform's own copy\n")
    placed = place_project(spec, project="me/leet", dest=dest, checkouts=None, fetch=False,
                           downloads=tmp_path / "dl")
    assert placed.origin == "tree" and placed.note == ""
    assert (dest / "java" / "LoggerRateLimiter.java").read_text() == "the platform's own copy\n"


@needs_java
def test_an_environment_built_straight_from_a_manifest_applies_its_edits_to_its_copy(
    tmp_path: Path,
) -> None:
    repo, pinned = _repo(tmp_path)
    manifest = _manifest(tmp_path, pinned)
    manifest.write_text(manifest.read_text().replace(
        'source = "https://example.org/me/leet.git"', f'source = "{repo}"'))
    [spec] = load_manifest(manifest)
    env = JavaEnvironmentBuilder().build(spec, root=tmp_path / "home")
    assert env.ready, env.error
    built = (env.source_dir / "java" / "LoggerRateLimiter.java").read_text()
    assert "import java.util.HashMap;" in built and "public LoggerRateLimiter() {" in built
    assert (repo / "java" / "LoggerRateLimiter.java").read_text() == LOGGER

    misfit = manifest.read_text().replace('old = "public Logger() {"', 'old = "Nope"')
    manifest.write_text(misfit)
    [spec] = load_manifest(manifest)
    env = JavaEnvironmentBuilder().build(spec, root=tmp_path / "home")
    assert not env.ready
    assert "the manifest's source edits do not fit: edit 2 of java/LoggerRateLimiter.java: " \
           "'Nope' not found" in env.error


@pytest.mark.slow
@needs_java
def test_prepare_places_the_edited_copy_and_samples_compile_as_on_the_platform(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    _, pinned = _repo(tmp_path)
    manifest = _manifest(tmp_path, pinned)
    signature = "public boolean shouldPrintMessage(int timestamp,String message){"
    samples = [
        # The field of the platform's copy: compiles (no test: not judged further).
        "public boolean shouldPrintMessage(int timestamp,String message){\n"
        "    return messages.putIfAbsent(message, timestamp) == null;\n}",
        # Map is not imported in the platform's copy: a compile error there and here.
        "public boolean shouldPrintMessage(int timestamp,String message){\n"
        "    Map<String, Integer> seen = messages;\n    return seen.isEmpty();\n}",
    ]
    results, prompts = write_logger_inputs(
        tmp_path, TASK_ID, signature=signature, level="class_runnable",
        generated=[(samples[0], "exec error!", False), (samples[1], "compile error", False)])
    bench = tmp_path / "bench"
    done = run_cli("prepare", "codereval-java", "--results", results, "--prompts", prompts,
                   "--checkouts", tmp_path / "checkouts", "--manifest", manifest, "--out", bench)
    assert done.exit_code == 0, done
    written = (bench / "projects.toml").read_text()
    assert "# with the 2 source edit(s) of the manifest applied" in written
    assert "edits" not in load_manifest(bench / "projects.toml")[0].recipe()
    [record] = json.loads((bench / "records.json").read_text())["RECORDS"]
    # Located in the edited file: the two import lines moved the method down by two.
    assert record["lineno"] == "13"
    meta = json.loads((bench / "benchmark.json").read_text())
    assert "2 source edit(s)" in meta["projects"]["me/leet"]["note"]

    gold = tmp_path / "gold"
    done = run_cli("evaluate", "--prepared", bench, "--reference", "--out", gold)
    assert done.exit_code == 0, done
    assert "1 untested" in done.stdout
    run = tmp_path / "run"
    done = run_cli("evaluate", "--prepared", bench, "--samples", results, "--out", run)
    assert done.exit_code == 0, done
    outcomes = {o["sample_index"]: o for o in map(json.loads, (run / "outcomes.jsonl").open())}
    assert outcomes[0]["stage"] == "compile" and outcomes[0]["verdict"] == "infra_error"
    assert outcomes[1]["verdict"] == "compile_error"
    assert "cannot find symbol" in outcomes[1]["detail"]


# A CoderEval-Python shape: the platform's copy imported a sibling module by its top-level name
# (its tests run the module's folder as a script), where git has a relative import.
CACHE_PY = "from .base import Base\n\n\nclass Cache(Base):\n    pass\n"


def _python_project(tmp_path: Path, edit_old: str) -> Path:
    project = tmp_path / "cachelib"
    (project / "cachelib").mkdir(parents=True)
    (project / "cachelib" / "__init__.py").write_text("")
    (project / "cachelib" / "base.py").write_text("class Base:\n    pass\n")
    (project / "cachelib" / "cache.py").write_text(CACHE_PY)
    manifest = tmp_path / "projects.toml"
    manifest.write_text(
        f'[projects."me/cachelib"]\nsource = "{project}"\n'
        '[[projects."me/cachelib".edits]]\nfile = "cachelib/cache.py"\n'
        f'old = "{edit_old}"\nnew = "from base import Base"\n'
        'why = "the tests import cache as a top-level module"\n')
    return manifest


def test_a_python_environment_is_built_from_the_edited_source(tmp_path: Path) -> None:
    from codereval.environments.python import PythonEnvironmentBuilder

    [spec] = load_manifest(_python_project(tmp_path, "from .base import Base"))
    env = PythonEnvironmentBuilder().build(spec, root=tmp_path / "cache")
    assert env.ready, env.error
    edited = (env.source_dir / "cachelib" / "cache.py").read_text()
    assert edited == CACHE_PY.replace("from .base import Base", "from base import Base")
    # The source the manifest names is never touched.
    assert (tmp_path / "cachelib" / "cachelib" / "cache.py").read_text() == CACHE_PY


def test_a_python_edit_that_does_not_fit_fails_the_environment_with_why(tmp_path: Path) -> None:
    from codereval.environments.python import PythonEnvironmentBuilder

    [spec] = load_manifest(_python_project(tmp_path, "from .nothing import Base"))
    env = PythonEnvironmentBuilder().build(spec, root=tmp_path / "cache")
    assert not env.ready
    assert "source edits do not fit" in env.error and "cachelib/cache.py" in env.error


def test_an_edit_without_old_creates_a_file_the_source_lacks(tmp_path: Path) -> None:
    # A file only the platform's copy had (federation's entities/diaspora/pom.xml), rebuilt
    # from what the official test expects to read from it.
    [created] = parse_edits([{"file": "pkg/data/pom.xml", "new": "<project/>\n",
                              "why": "the test reads it"}])
    assert created.creates
    (tmp_path / "pkg").mkdir()
    apply_edits(tmp_path, [created])
    assert (tmp_path / "pkg" / "data" / "pom.xml").read_text() == "<project/>\n"
    # Never over a file the source has.
    with pytest.raises(EditFailed, match="already in the source"):
        apply_edits(tmp_path, [created])
    with pytest.raises(ValueError, match="leave it out to create the file"):
        parse_edits([{"file": "a.txt", "old": "", "new": "x"}])


def test_an_edit_cannot_reach_outside_the_source_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "project"
    root.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(EditFailed, match="outside the source"):
        apply_edits(root, parse_edits([{"file": "link/x.txt", "new": "x"}]))
    # Nor through a folder it would have to make beyond the link.
    with pytest.raises(EditFailed, match="outside the source"):
        apply_edits(root, parse_edits([{"file": "link/new/x.txt", "new": "x"}]))
    assert list(outside.iterdir()) == []


def test_an_edit_with_copy_places_a_copy_of_a_project_file(tmp_path: Path) -> None:
    # infrared's tests read infrared/core/utils/plugin.spec, a copy of tests/example/plugin.spec
    # the platform's tree had: the manifest names the file to copy, never its content.
    (tmp_path / "tests" / "example").mkdir(parents=True)
    (tmp_path / "tests" / "example" / "plugin.spec").write_bytes(b"config: {}\n")
    [edit] = parse_edits([{"file": "core/utils/plugin.spec", "copy": "tests/example/plugin.spec"}])
    apply_edits(tmp_path, [edit])
    assert (tmp_path / "core" / "utils" / "plugin.spec").read_bytes() == b"config: {}\n"
    [missing] = parse_edits([{"file": "b.spec", "copy": "tests/none.spec"}])
    with pytest.raises(EditFailed, match=r"tests/none\.spec .* is not in the source"):
        apply_edits(tmp_path, [missing])
    with pytest.raises(ValueError, match="takes no old, new"):
        parse_edits([{"file": "c.spec", "copy": "a", "new": "x"}])
    with pytest.raises(ValueError, match="must be a path inside the project"):
        parse_edits([{"file": "c.spec", "copy": "../../etc/passwd"}])


def test_an_edit_with_zip_makes_an_archive_of_those_entries_the_same_every_time(
    tmp_path: Path,
) -> None:
    # packtools' test lists HumanEval.zip, an archive of the authors' only that listing tells.
    import zipfile

    entries = ["HumanEval/", "HumanEval/a.jsonl", "HumanEval/b.jsonl"]
    [edit] = parse_edits([{"file": "HumanEval.zip", "zip": entries}])
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        apply_edits(tmp_path / folder, [edit])
    made = tmp_path / "one" / "HumanEval.zip"
    with zipfile.ZipFile(made) as archive:
        assert archive.namelist() == entries
        assert all(archive.read(name) == b"" for name in entries if not name.endswith("/"))
    assert made.read_bytes() == (tmp_path / "two" / "HumanEval.zip").read_bytes()
    with pytest.raises(ValueError, match="zip must be a list of entry names"):
        parse_edits([{"file": "a.zip", "zip": "HumanEval/"}])
    with pytest.raises(ValueError, match="takes no old, new, copy or zip besides"):
        parse_edits([{"file": "a.zip", "zip": ["a"], "copy": "b"}])
