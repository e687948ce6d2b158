"""The versions of a buggy project: each bug has a buggy and a fixed tree (CoderUJB, Defects4J).

A bugs manifest (``bugs.toml``, beside the projects manifest) names, per project, its bugs and
how to get each version's tree, in Defects4J's words ``<bug>b`` and ``<bug>f``::

    [projects."mini-ujb/langlite".bugs.1]
    buggy = { overlay = "bugs/1/buggy" }   # the project's source, these files laid over it
    # fixed = {}                           # the default: the project's source as it is

    [projects."acme/lib".bugs.7]
    buggy = { commit = "4f2c..." }         # the project's git source at a revision
    fixed = { commit = "9ab1...", overlay = "patches/7f" }
    excluded_tests = ["pkg.FooTest::testFlaky"]   # left out of the suite, never counted
    trigger_tests = ["pkg.FooTest::testBug7"]     # fail on 7b (Defects4J's trigger tests)

    [projects."acme/lib".suite]            # the whole suite: these test files (Ant patterns
    includes = ["**/*Test.java"]           # over paths below a test root), not every class
    excludes = ["**/Abstract*Test.java"]   # the tests compiled

    [projects."Lang"]
    defects4j = "Lang"                     # versions are Defects4J checkouts (defects4j on PATH)

A version keys: ``source`` (another tree, archive or repository for this version), ``commit``,
``overlay`` (a folder whose files replace or join the tree's, relative to the manifest),
``remove`` (files of the tree the version does not have), and the
build's layout at that revision where it differs from the project's: ``subdir``,
``build_dir``, ``source_roots``, ``test_roots``, ``java_release``, ``jars``. A
version's tree is put together once under the environment cache, named by its content, and then
built into an ordinary Java environment (``JavaEnvironmentBuilder``) under the name
``<project>@<content hash>``: two versions with the same content share one environment.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import re
import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from codereval.environments.base import ProjectSpec, load_manifest
from codereval.environments.sources import fetch_source, local_source_dir
from codereval.errors import UserError
from codereval.model import canonical_json

BUGS_FILE = "bugs.toml"
_VERSION = re.compile(r"(\d+)([bf])")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "target", "build"})


@dataclass(frozen=True, kw_only=True)
class VersionRecipe:
    """How one version's tree is made from the project's source."""

    source: str = ""
    commit: str = ""
    overlay: str = ""
    # Files of the tree this version does not have (a fix that added a file: its buggy
    # version lacks it), relative to the tree's root.
    remove: tuple[str, ...] = ()
    # The build's layout at this revision, when it differs from the project's (a project
    # that moved from src/java to src/main/java between two bugs): replaces the project's.
    subdir: str = ""
    build_dir: str = ""
    source_roots: tuple[str, ...] = ()
    test_roots: tuple[str, ...] = ()
    java_release: str = ""
    jars: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ProjectBugs:
    """A project's bugs: bug id -> (buggy recipe, fixed recipe), or a Defects4J project id."""

    name: str
    spec: ProjectSpec | None
    bugs: dict[str, tuple[VersionRecipe, VersionRecipe]] = field(default_factory=dict)
    # Per bug, tests that do not count (Defects4J removes the ones that fail on the fixed
    # revision under its own set-up, or depend on other tests, from its checkouts).
    excluded: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Per bug, the tests that fail on its buggy version (Defects4J's trigger tests). The buggy
    # version's baseline counts them as failing without running them: run inside the whole
    # suite, one may take the suite's JVM down with it (Lang-43's runs out of memory).
    triggers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    defects4j: str = ""
    base_dir: Path = Path(".")
    # The whole suite's test files (Ant patterns); none: every test class compiled.
    suite_includes: tuple[str, ...] = ()
    suite_excludes: tuple[str, ...] = ()

    def recipe(self, version: str) -> VersionRecipe:
        bug, which = split_version(version)
        if bug not in self.bugs:
            known = ", ".join(sorted(self.bugs, key=_bug_order)) or "none"
            raise UserError(f"project {self.name} has no bug {bug} (its bugs: {known})",
                            hint=f"add [projects.\"{self.name}\".bugs.{bug}] to {BUGS_FILE}")
        buggy, fixed = self.bugs[bug]
        return buggy if which == "b" else fixed


def _bug_order(bug: str) -> tuple[int, str]:
    return (int(bug), bug) if bug.isdigit() else (1 << 30, bug)


def split_version(version: str) -> tuple[str, str]:
    """``"12b"`` -> ``("12", "b")``; anything else is a one-line error."""
    match = _VERSION.fullmatch(version)
    if match is None:
        raise UserError(f"version {version!r} is not <bug>b or <bug>f",
                        hint="e.g. 1b (the buggy version of bug 1) or 1f (the fixed one)")
    return match.group(1), match.group(2)


def bugs_manifest_for(projects: Path | None) -> Path | None:
    """The bugs manifest beside a projects manifest (or in the folder holding it), if any."""
    if projects is None:
        return None
    folder = projects if projects.is_dir() else projects.parent
    candidate = folder / BUGS_FILE
    return candidate if candidate.is_file() else None


def load_bugs(path: Path) -> dict[str, ProjectBugs]:
    """Read a bugs manifest; projects with trees take their source from the projects manifest
    beside it (``projects.toml``)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: unreadable bugs manifest ({exc})") from None
    projects = data.get("projects")
    if not isinstance(projects, dict) or not projects:
        raise UserError(f"{path}: no [projects] table", hint='add [projects."owner/repo".bugs.1]')
    manifest = path.parent / "projects.toml"
    specs = {s.name: s for s in load_manifest(manifest)} if manifest.is_file() else {}
    found: dict[str, ProjectBugs] = {}
    for name, entry in projects.items():
        if not isinstance(entry, dict):
            raise UserError(f"{path}: project {name!r} must be a table")
        unknown = set(entry) - {"bugs", "defects4j", "suite"}
        if unknown:
            raise UserError(f"{path}: project {name!r} has unknown keys {sorted(unknown)}",
                            hint="allowed: bugs, defects4j, suite")
        suite = entry.get("suite", {})
        if not isinstance(suite, dict) or set(suite) - {"includes", "excludes"} or not all(
                isinstance(suite.get(k, []), list) for k in ("includes", "excludes")):
            raise UserError(f"{path}: project {name!r}: suite must be a table of includes and "
                            "excludes (lists of Ant patterns)",
                            hint='e.g. suite = { includes = ["**/*Test.java"] }')
        d4j = str(entry.get("defects4j", ""))
        bugs: dict[str, tuple[VersionRecipe, VersionRecipe]] = {}
        excluded: dict[str, tuple[str, ...]] = {}
        triggers: dict[str, tuple[str, ...]] = {}
        for bug, versions in (entry.get("bugs") or {}).items():
            if not str(bug).isdigit() or not isinstance(versions, dict):
                raise UserError(f"{path}: project {name!r}: bug {bug!r} must be a number with "
                                "a table of buggy/fixed")
            extra = set(versions) - {"buggy", "fixed", "excluded_tests", "trigger_tests"}
            if extra:
                raise UserError(f"{path}: project {name!r} bug {bug}: unknown keys "
                                f"{sorted(extra)}",
                                hint="allowed: buggy, fixed, excluded_tests, trigger_tests")
            bugs[str(bug)] = (_recipe(path, name, bug, versions.get("buggy", {})),
                              _recipe(path, name, bug, versions.get("fixed", {})))
            excluded[str(bug)] = tuple(str(t) for t in versions.get("excluded_tests", ()))
            triggers[str(bug)] = tuple(str(t) for t in versions.get("trigger_tests", ()))
        spec = specs.get(name)
        if spec is None and not d4j:
            raise UserError(f"{path}: project {name!r} is not in {manifest}",
                            hint="add it there (its source), or give defects4j = \"<id>\"")
        found[name] = ProjectBugs(
            name=name, spec=spec, bugs=bugs, excluded=excluded, triggers=triggers, defects4j=d4j,
            base_dir=path.parent.resolve(),
            suite_includes=tuple(str(p) for p in suite.get("includes", [])),
            suite_excludes=tuple(str(p) for p in suite.get("excludes", [])))
    return found


def _recipe(path: Path, name: str, bug: object, value: object) -> VersionRecipe:
    if not isinstance(value, dict) or set(value) - set(_RECIPE_KEYS):
        raise UserError(f"{path}: project {name!r} bug {bug}: a version is a table of "
                        f"{', '.join(_RECIPE_KEYS)}",
                        hint='e.g. buggy = { overlay = "bugs/1b" }')
    return VersionRecipe(source=str(value.get("source", "")),
                         commit=str(value.get("commit", "")),
                         overlay=str(value.get("overlay", "")),
                         remove=tuple(str(r) for r in value.get("remove", ())),
                         subdir=str(value.get("subdir", "")),
                         build_dir=str(value.get("build_dir", "")),
                         source_roots=tuple(str(r) for r in value.get("source_roots", ())),
                         test_roots=tuple(str(r) for r in value.get("test_roots", ())),
                         java_release=str(value.get("java_release", "")),
                         jars=tuple(str(j) for j in value.get("jars", ())))


_RECIPE_KEYS = ("source", "commit", "overlay", "remove", "subdir", "build_dir", "source_roots",
                "test_roots", "java_release", "jars")


def _tree_hash(root: Path) -> str:
    from codereval.environments.java import source_hash

    return source_hash(root)


def version_spec(bugs: ProjectBugs, version: str, *, root: Path) -> ProjectSpec:
    """The project spec of one version: its tree put together (once, cached by content) under
    ``root/ujb-versions``, named ``<project>@<content hash>``."""
    recipe = bugs.recipe(version)
    if bugs.spec is None:
        raise UserError(f"project {bugs.name} has no source tree (it is a Defects4J project)",
                        hint="run it with defects4j on PATH")
    base = dataclasses.replace(bugs.spec, source=recipe.source or bugs.spec.source,
                               commit=recipe.commit or ("" if recipe.source else bugs.spec.commit),
                               subdir=recipe.subdir or bugs.spec.subdir,
                               base_dir=bugs.base_dir if recipe.source else bugs.spec.base_dir)
    overlay = (bugs.base_dir / recipe.overlay) if recipe.overlay else None
    if overlay is not None and not overlay.is_dir():
        raise UserError(f"project {bugs.name} version {version}: overlay folder not found: "
                        f"{overlay}")
    versions = root / "ujb-versions"
    versions.mkdir(parents=True, exist_ok=True)
    local = local_source_dir(base)
    origin = {"source": base.resolved_source(), "commit": base.commit, "subdir": base.subdir}
    digest = hashlib.sha256(canonical_json(origin).encode())
    if local is not None:
        digest.update(_tree_hash(local).encode())
    if overlay is not None:
        digest.update(b"overlay\0" + _tree_hash(overlay).encode())
    for removed in recipe.remove:
        digest.update(b"remove\0" + removed.encode() + b"\0")
    key = digest.hexdigest()[:16]
    # Named by content, not by version: versions with the same tree (the fixed versions of
    # bugs fixed in one release) share the tree and the environment built from it.
    target = versions / f"{bugs.spec.slug}@{key}"
    with (versions / f".{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".complete").exists():
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=versions))
            tree = staging / "tree"
            try:
                if local is not None:
                    shutil.copytree(local, tree, symlinks=True,
                                    ignore=shutil.ignore_patterns(*SKIP_DIRS))
                else:
                    fetch_source(base, tree, downloads=root / "downloads", ignore=SKIP_DIRS)
                if overlay is not None:
                    shutil.copytree(overlay, tree, dirs_exist_ok=True)
                for removed in recipe.remove:
                    gone = (tree / removed).resolve()
                    if not gone.is_relative_to(tree.resolve()) or not gone.is_file():
                        raise UserError(f"project {bugs.name} version {version}: cannot remove "
                                        f"{removed}: no such file in the tree")
                    gone.unlink()
                (tree / ".complete").write_text(key + "\n", encoding="utf-8")
                if target.exists():
                    shutil.rmtree(target)
                tree.rename(target)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return dataclasses.replace(
        bugs.spec, name=f"{bugs.name}@{key}", source=str(target), commit="", subdir="",
        base_dir=versions, source_roots=recipe.source_roots or bugs.spec.source_roots,
        test_roots=recipe.test_roots or bugs.spec.test_roots,
        build_dir=recipe.build_dir or bugs.spec.build_dir,
        jars=recipe.jars or bugs.spec.jars,
        java_release=recipe.java_release or bugs.spec.java_release)
