"""A project's whole suite is the test classes its build's patterns name (Defects4J's
all.manual.tests, Surefire's includes), and a bugs manifest says which."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codereval.benchmarks import builtin_dir
from codereval.errors import UserError
from codereval.families.coderujb.bugs import load_bugs
from codereval.families.coderujb.rebuild.metadata import suite_patterns
from codereval.families.coderujb.runner import CoderUjbRunner
from codereval.java.test_selection import ant_pattern, selected_test_classes
from codereval.java.toolchain import missing_toolchain
from codereval.runners.base import RunContext
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits


def _classes(root: Path, *names: str) -> Path:
    for name in names:
        path = root / f"{name}.class"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\xca\xfe\xba\xbe")
    return root


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("**/*Test.java", "org/a/FooTest", True),
    ("**/*Test.java", "FooTest", True),
    ("**/*Test.java", "org/a/FooTests", False),
    ("**/Test*.java", "org/joda/time/TestAllPackages", True),
    ("**/gj/*.java", "org/joda/time/chrono/gj/TestGJChronology", True),
    ("org/apache/x/MessageFormatTest.java", "org/apache/x/MessageFormatTest", True),
    ("org/apache/x/MessageFormatTest.java", "org/apache/y/MessageFormatTest", False),
    ("%regex[.*IT.class]", "org/a/FooIT", True),
])
def test_ant_patterns_match_test_paths_as_ant_does(pattern: str, path: str,
                                                  matches: bool) -> None:
    assert (ant_pattern(pattern).fullmatch(path) is not None) is matches


def test_the_suite_is_the_included_classes_minus_the_excluded_top_level_ones(
    tmp_path: Path,
) -> None:
    root = _classes(tmp_path, "org/joda/time/TestDateTime", "org/joda/time/TestAllPackages",
                    "org/joda/time/TestDateTime$1", "org/joda/time/chrono/gj/TestGJChronology",
                    "org/joda/time/AbstractTestCase", "org/joda/time/MockZone")
    # Joda-Time's: its TestAll* aggregates would run every test a second time.
    chosen = selected_test_classes(root, ["**/Test*.java", "**/gj/TestAll.java"],
                                   ["**/TestAll*.java", "**/gj/*.java"])
    assert chosen == ["org.joda.time.TestDateTime"]


def test_defects4js_suite_patterns_come_from_its_build_file(tmp_path: Path) -> None:
    folder = tmp_path / "framework" / "projects" / "Toy"
    folder.mkdir(parents=True)
    (folder / "active-bugs.csv").write_text("bug.id\n", encoding="utf-8")
    assert suite_patterns(tmp_path, "Toy") == ((), ())  # no build file: every class
    (folder / "Toy.build.xml").write_text(
        '<project><fileset id="rel.manual.tests"><include name="x"/></fileset>\n'
        '<fileset id="all.manual.tests" dir="${test.dir}">\n'
        "  <include name='**/${test}.java' /><include name=\"**/*Test.java\"/>\n"
        "  <exclude name='**/*Abstract*Test.java'/><exclude name='**/random/*.java'/>\n"
        "</fileset></project>\n", encoding="utf-8")
    assert suite_patterns(tmp_path, "Toy") == (("**/*Test.java",),
                                               ("**/*Abstract*Test.java", "**/random/*.java"))


def test_a_bugs_manifest_names_a_projects_suite(tmp_path: Path) -> None:
    manifest = tmp_path / "bugs.toml"
    manifest.write_text('[projects."Lang"]\ndefects4j = "Lang"\n'
                        '[projects."Lang".suite]\nincludes = ["**/*Test.java"]\n'
                        'excludes = ["**/Abstract*.java"]\n', encoding="utf-8")
    lang = load_bugs(manifest)["Lang"]
    assert (lang.suite_includes, lang.suite_excludes) == (("**/*Test.java",),
                                                          ("**/Abstract*.java",))
    manifest.write_text('[projects."Lang"]\ndefects4j = "Lang"\n'
                        'suite = { includes = "**/*Test.java" }\n', encoding="utf-8")
    with pytest.raises(UserError, match="suite must be a table of includes and excludes"):
        load_bugs(manifest)


@pytest.mark.slow
@pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")
def test_a_version_whose_suite_patterns_match_no_class_says_so(
    ujb_env_root: Path, tmp_path: Path,
) -> None:
    """Rather than run an empty suite that every sample would pass."""
    bench = tmp_path / "mini"
    shutil.copytree(builtin_dir("mini_coderujb"), bench)
    manifest = bench / "bugs.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8")
                        + '\n[projects."mini-ujb/langlite".suite]\n'
                          'includes = ["**/*IT.java"]\n', encoding="utf-8")
    ctx = RunContext(sandbox=get_sandbox("auto"), limits=Limits(wall_time=20.0),
                     work_root=tmp_path / "work", env_root=ujb_env_root,
                     projects_dir=bench / "projects.toml")
    runner, fresh = CoderUjbRunner(), CoderUjbRunner()  # each reads the manifest once
    try:
        found = runner.version_environment("mini-ujb/langlite", "1f", ctx)
        assert isinstance(found, str)
        assert found.startswith("no test class of mini-ujb/langlite 1f matches its suite's "
                                "patterns (includes ['**/*IT.java']")
        manifest.write_text(manifest.read_text(encoding="utf-8").replace("*IT.java", "*Test.java"),
                            encoding="utf-8")
        chosen = fresh.version_environment("mini-ujb/langlite", "1f", ctx)
        assert not isinstance(chosen, str)
        assert chosen.suite and all(c.endswith("Test") for c in chosen.suite)
        assert chosen.suite_selectors == chosen.suite
    finally:
        runner.close()
        fresh.close()
