"""What Defects4J publishes about each bug, read from its ``framework/projects/<Project>``.

Per project: ``active-bugs.csv`` (bug id, the buggy and fixed revisions, the issue),
``dir-layout.csv`` (the source and test folders at a revision), ``patches/<id>.src.patch`` (the
fixed version's source turned into the buggy one), ``patches/<id>.test.patch``,
``trigger_tests/<id>`` (the tests that fail on the buggy version, each ``--- pkg.Class::method``
followed by its stack trace), ``modified_classes/<id>.src``, ``loaded_classes/<id>.src`` and
``relevant_tests/<id>``, and ``failing_tests/<revision>`` (tests that fail on that revision under
Defects4J's own set-up, which it leaves out).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from codereval.errors import UserError

# The GitHub repositories that hold the projects' histories with Defects4J's revision ids
# (public facts; Defects4J names them in framework/core/Project/<Project>.pm by repository).
REPOSITORIES: dict[str, str] = {
    "Chart": "jfree/jfreechart",
    "Cli": "apache/commons-cli",
    "Closure": "google/closure-compiler",
    "Codec": "apache/commons-codec",
    "Collections": "apache/commons-collections",
    "Compress": "apache/commons-compress",
    "Csv": "apache/commons-csv",
    "Gson": "google/gson",
    "JacksonCore": "FasterXML/jackson-core",
    "JacksonDatabind": "FasterXML/jackson-databind",
    "JacksonXml": "FasterXML/jackson-dataformat-xml",
    "Jsoup": "jhy/jsoup",
    "JxPath": "apache/commons-jxpath",
    "Lang": "apache/commons-lang",
    "Math": "apache/commons-math",
    "Mockito": "mockito/mockito",
    "Time": "JodaOrg/joda-time",
}

_TRIGGER = re.compile(r"^--- (\S+)\s*$")


@dataclass(frozen=True, kw_only=True)
class Defects4jBug:
    """One active bug, as Defects4J records it."""

    project: str
    bug_id: str
    buggy_revision: str
    fixed_revision: str
    report_id: str
    report_url: str
    src_patch: str
    test_patch: str
    trigger_tests: tuple[str, ...]
    modified_classes: tuple[str, ...]
    loaded_classes: tuple[str, ...]
    relevant_tests: tuple[str, ...]
    src_dir: str
    test_dir: str
    # Tests that fail on the fixed revision under Defects4J itself, and tests that depend on
    # others running first: Defects4J removes both from its checkouts.
    failing_on_fixed: tuple[str, ...]
    dependent_tests: tuple[str, ...] = ()
    # Tests Defects4J removes from every checkout of the project: ``random_tests`` (they fail
    # at random) and ``broken_tests`` (Math's: they loop on some revisions).
    flaky_tests: tuple[str, ...] = ()
    # Defects4J's compile-errors/<name>-<first>-<last>.diff whose range holds this bug: fixes
    # its checkouts get first, to compile and run on today's Java (in file-name order).
    compile_fixes: tuple[str, ...] = ()

    @property
    def excluded_tests(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.failing_on_fixed, *self.dependent_tests,
                                    *self.flaky_tests)))

    @property
    def name(self) -> str:
        return f"{self.project}-{self.bug_id}"


_COMPILE_FIX = re.compile(r"-(\d+)-(\d+)\.diff$")


def _compile_fixes(folder: Path, bug_id: str) -> tuple[str, ...]:
    """The texts of the compile-errors diffs whose id range holds ``bug_id`` (Defects4J's
    ``_post_checkout``; ``*.optional.diff`` are not among them)."""
    if not folder.is_dir() or not bug_id.isdigit():
        return ()
    chosen = []
    for path in sorted(folder.iterdir()):
        found = _COMPILE_FIX.search(path.name)
        if found and int(found.group(1)) <= int(bug_id) <= int(found.group(2)):
            chosen.append(path.read_text(encoding="utf-8", errors="surrogateescape"))
    return tuple(chosen)


def projects_folder(defects4j: Path) -> Path:
    """``framework/projects`` of a Defects4J clone (or that folder itself)."""
    for candidate in (defects4j / "framework" / "projects", defects4j):
        if (candidate / "Lang").is_dir() or any(
                (p / "active-bugs.csv").is_file() for p in candidate.glob("*")):
            return candidate
    raise UserError(f"{defects4j} is not a Defects4J clone (no framework/projects/*/"
                    "active-bugs.csv)",
                    hint="git clone https://github.com/rjust/defects4j and pass its folder")


_SUITE_FILESET = re.compile(r'<fileset\s[^>]*id="all\.manual\.tests"[^>]*>(.*?)</fileset>', re.S)
_PATTERN = re.compile(r"""<(include|exclude)\s+name=['"]([^'"]*)['"]""")


def suite_patterns(defects4j: Path, project: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The test files Defects4J runs as a project's whole suite: the includes and excludes of
    the ``all.manual.tests`` fileset in ``<project>.build.xml`` (``**/*Test.java`` minus
    ``**/*Abstract*Test.java`` and the project's known-bad ones); patterns naming an Ant
    property (``**/${test}.java``, set only for one test's run) are left out. Both empty when
    the file or fileset is not there."""
    path = projects_folder(defects4j) / project / f"{project}.build.xml"
    try:
        found = _SUITE_FILESET.search(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return (), ()
    if found is None:
        return (), ()
    pairs = [(kind, name) for kind, name in _PATTERN.findall(found.group(1)) if "${" not in name]
    return (tuple(n for k, n in pairs if k == "include"),
            tuple(n for k, n in pairs if k == "exclude"))


def available_projects(defects4j: Path) -> list[str]:
    folder = projects_folder(defects4j)
    return sorted(p.name for p in folder.iterdir() if (p / "active-bugs.csv").is_file())


def load_bugs(defects4j: Path, project: str) -> list[Defects4jBug]:
    """Every active bug of a project, in bug-id order."""
    folder = projects_folder(defects4j) / project
    active = folder / "active-bugs.csv"
    if not active.is_file():
        known = ", ".join(available_projects(defects4j))
        raise UserError(f"Defects4J has no project {project!r} in {folder.parent}",
                        hint=f"one of: {known}")
    layout = _layout(folder / "dir-layout.csv")
    dependent = trigger_tests(_text(folder / "dependent_tests"))
    # Defects4J's fix_tests takes random_tests out of every project's checkouts, and its Math
    # takes broken_tests out as well; a project that has the file is treated alike.
    flaky = trigger_tests(_text(folder / "random_tests") + "\n" + _text(folder / "broken_tests"))
    bugs = []
    for row in _csv(active):
        bug_id = row["bug.id"].strip()
        buggy, fixed = row["revision.id.buggy"].strip(), row["revision.id.fixed"].strip()
        src_dir, test_dir = layout.get(fixed) or layout.get(buggy) or ("", "")
        bugs.append(Defects4jBug(
            project=project,
            bug_id=bug_id,
            buggy_revision=buggy,
            fixed_revision=fixed,
            report_id=row.get("report.id", "").strip(),
            report_url=row.get("report.url", "").strip(),
            src_patch=_text(folder / "patches" / f"{bug_id}.src.patch"),
            test_patch=_text(folder / "patches" / f"{bug_id}.test.patch"),
            trigger_tests=trigger_tests(_text(folder / "trigger_tests" / bug_id)),
            modified_classes=_lines(folder / "modified_classes" / f"{bug_id}.src"),
            loaded_classes=_lines(folder / "loaded_classes" / f"{bug_id}.src"),
            relevant_tests=_lines(folder / "relevant_tests" / bug_id),
            src_dir=src_dir,
            test_dir=test_dir,
            failing_on_fixed=trigger_tests(_text(folder / "failing_tests" / fixed)),
            dependent_tests=dependent,
            flaky_tests=flaky,
            compile_fixes=_compile_fixes(folder / "compile-errors", bug_id),
        ))
    return sorted(bugs, key=lambda b: (int(b.bug_id) if b.bug_id.isdigit() else 1 << 30,
                                       b.bug_id))


def trigger_tests(text: str) -> tuple[str, ...]:
    """The test names of a ``trigger_tests`` / ``failing_tests`` file (``--- name`` lines)."""
    found = (_TRIGGER.match(line) for line in text.splitlines())
    return tuple(dict.fromkeys(m.group(1) for m in found if m is not None))


def _layout(path: Path) -> dict[str, tuple[str, str]]:
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3 and parts[0]:
            found[parts[0]] = (parts[1], parts[2])
    return found


def _csv(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: unreadable ({exc})") from None
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows and not {"bug.id", "revision.id.buggy", "revision.id.fixed"} <= set(rows[0]):
        raise UserError(f"{path}: not Defects4J's active-bugs.csv (columns {sorted(rows[0])})")
    return rows


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _lines(path: Path) -> tuple[str, ...]:
    return tuple(line.strip() for line in _text(path).splitlines() if line.strip())
