"""A Defects4J bug as the two versions codereval builds (``bugs.toml``), from the project's git
history.

As Defects4J makes them: the **fixed** version is the fixed revision's tree; the **buggy**
version is that tree with the source patch applied (Defects4J's ``<id>.src.patch`` turns fixed
code into buggy code), so it keeps the fixed version's tests. The patched files are written as
the buggy version's overlay. The build root is the folder above the source folder that holds the
project's ``pom.xml`` (``gson/`` in Gson, whose parent pom is the repository's); a revision without
one (an Ant build) is not rebuilt.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from codereval.families.coderujb.rebuild.metadata import Defects4jBug

# javac's oldest --release on Java 17 that is not deprecated; the projects' own levels (1.3 to
# 1.6) are older, and Defects4J compiles them on Java 8 (with their own source levels).
JAVA_RELEASE = "8"
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


class NotRebuildable(Exception):
    """The bug cannot be rebuilt from its public material; the message says why."""


@dataclass(frozen=True, kw_only=True)
class BugVersions:
    """Where a bug's two versions come from: the folder whose pom builds it, the source and
    test roots, and the buggy version's files (all relative to the repository's root, as in
    Defects4J's checkouts)."""

    bug: Defects4jBug
    build_dir: str
    source_root: str
    test_root: str
    buggy_files: dict[str, bytes]
    # An Ant-only revision: the jars its build uses, from Defects4J's lib folder.
    jars: tuple[str, ...] = ()
    # Files the source patch deletes: the buggy version does not have them.
    deleted: tuple[str, ...] = ()
    # The repository's folder that Defects4J's checkout is ("" for the whole repository):
    # Joda-Time lived in JodaTime/ before it moved to the root, and Defects4J's paths start
    # below it.
    root: str = ""
    # The fixed version's files that Defects4J's compile fixes change (none for most bugs).
    fixed_files: dict[str, bytes] = field(default_factory=dict)
    fixed_deleted: tuple[str, ...] = ()

    def at(self, path: str) -> str:
        """A path of Defects4J's checkout as a path of the repository."""
        return f"{self.root}/{path}" if self.root else path

    def fixed_text(self, repository: Path, path: str) -> str | None:
        """A file of the fixed version (Defects4J's checkout path), compile fixes included."""
        if path in self.fixed_files:
            return _decoded(self.fixed_files[path])
        if path in self.fixed_deleted:
            return None
        return file_at(repository, self.bug.fixed_revision, self.at(path))


def git(repository: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", f"--git-dir={_git_dir(repository)}", *args],
                          capture_output=True, check=check)


def _git_dir(repository: Path) -> Path:
    dot = repository / ".git"
    return dot if dot.exists() else repository


def has_commit(repository: Path, revision: str) -> bool:
    return git(repository, "cat-file", "-e", f"{revision}^{{commit}}", check=False).returncode == 0


def _exists(repository: Path, revision: str, path: str) -> bool:
    return git(repository, "cat-file", "-e", f"{revision}:{path}", check=False).returncode == 0


def plan_versions(bug: Defects4jBug, repository: Path, *, lib: Path | None = None,
                  shared_lib: Path | None = None) -> BugVersions:
    """Check the bug's material against the repository and lay out its versions (``lib``:
    Defects4J's ``framework/projects/<P>/lib``, ``shared_lib``: its ``framework/projects/lib``)."""
    if not bug.src_dir or not bug.test_dir:
        raise NotRebuildable("dir-layout.csv names no source folders for its revisions")
    if not bug.src_patch.strip():
        raise NotRebuildable(f"no patches/{bug.bug_id}.src.patch")
    if not bug.trigger_tests:
        raise NotRebuildable(f"no trigger_tests/{bug.bug_id}")
    if not has_commit(repository, bug.fixed_revision):
        raise NotRebuildable(f"the fixed revision {bug.fixed_revision[:12]} is not in "
                             f"{repository}")
    root = checkout_root(repository, bug.fixed_revision, bug.src_dir)
    build_dir = _build_root(repository, bug.fixed_revision, bug.src_dir, root)
    jars: tuple[str, ...] = ()
    if build_dir is None:
        # An Ant-only revision: Defects4J builds it with the jars of its own lib folder.
        jars = ant_jars(lib, shared_lib)
        if not jars:
            raise NotRebuildable(f"no pom.xml above {bug.src_dir} at "
                                 f"{bug.fixed_revision[:12]}, and no jars in Defects4J's lib "
                                 "folder for its Ant build")
        build_dir = ""
    files = buggy_files(bug, repository, root=root)
    fixed = fixed_files(bug, repository, root=root)
    return BugVersions(bug=bug, build_dir=build_dir, source_root=bug.src_dir,
                       test_root=bug.test_dir,
                       buggy_files={p: c for p, c in files.items() if c is not None},
                       jars=jars, deleted=tuple(p for p, c in files.items() if c is None),
                       root=root,
                       fixed_files={p: c for p, c in fixed.items() if c is not None},
                       fixed_deleted=tuple(p for p, c in fixed.items() if c is None))


def checkout_root(repository: Path, revision: str, src_dir: str) -> str:
    """The folder of the repository that holds Defects4J's source folder at ``revision``:
    "" when it is at the root, else the one top-level folder that has it."""
    if _exists(repository, revision, src_dir):
        return ""
    listed = git(repository, "ls-tree", "-d", "--name-only", revision, check=False)
    for folder in listed.stdout.decode("utf-8", "replace").splitlines():
        if _exists(repository, revision, f"{folder}/{src_dir}"):
            return folder
    raise NotRebuildable(f"{src_dir} (dir-layout.csv) is not in {revision[:12]}, nor in a "
                         "folder of it")


def _is_junit(jar: str) -> bool:
    return Path(jar).name.lower().startswith("junit")


def ant_jars(lib: Path | None, shared_lib: Path | None) -> tuple[str, ...]:
    """The jars an Ant-only revision builds with: the newest of each in the project's lib
    folder (none: nothing to build with), and Defects4J's own JUnit from ``shared_lib`` when
    that folder has no JUnit: Defects4J's build puts it on every test classpath (Math 1.x's lib
    holds commons-discovery alone)."""
    jars = latest_jars(lib) if lib is not None else ()
    if jars and shared_lib is not None and not any(_is_junit(jar) for jar in jars):
        jars += tuple(str(j) for j in sorted(shared_lib.glob("*.jar")) if _is_junit(j.name))
    return jars


def latest_jars(lib: Path) -> tuple[str, ...]:
    """The newest version of each library in a Maven-laid-out folder (Defects4J's
    ``framework/projects/<P>/lib``: group/artifact/version/artifact-version.jar), or the
    jars lying loose in it."""
    newest: dict[Path, tuple[tuple[int, ...], Path]] = {}
    if not lib.is_dir():
        return ()
    for jar in sorted(lib.rglob("*.jar")):
        version_dir = jar.parent
        key = version_dir.parent if version_dir != lib else jar
        order = tuple(int(n) for n in re.findall(r"\d+", version_dir.name)) \
            if version_dir != lib else ()
        if key not in newest or order > newest[key][0]:
            newest[key] = (order, jar)
    return tuple(str(jar) for _, jar in sorted(newest.values(), key=lambda v: str(v[1])))


def _build_root(repository: Path, revision: str, src_dir: str, root: str = "") -> str | None:
    """The deepest folder above ``src_dir`` that has a pom.xml ("" for the checkout's root),
    below the checkout's ``root`` in the repository."""
    parts = PurePosixPath(src_dir).parts
    prefix = f"{root}/" if root else ""
    for depth in range(len(parts) - 1, -1, -1):
        folder = "/".join(parts[:depth])
        if _exists(repository, revision, f"{prefix}{folder}/pom.xml" if folder
                   else f"{prefix}pom.xml"):
            return folder
    return None


def buggy_files(bug: Defects4jBug, repository: Path, *,
                root: str = "") -> dict[str, bytes | None]:
    """The files the buggy version has that differ from the fixed revision's (repository
    paths; None for a file it deletes): Defects4J's compile fixes of the bug, then its source
    patch, each applied with ``git apply`` to the fixed revision's files."""
    if not _DIFF_FILE.findall(bug.src_patch):
        raise NotRebuildable("the source patch names no file")
    return _patched(bug, repository, root=root,
                    patches=[*(("a compile fix", f) for f in bug.compile_fixes),
                             ("the source patch", bug.src_patch)])


# The files a patch names: `diff --git` headers, or only ---/+++ lines (some of Defects4J's
# compile fixes have no git header).
_PATCH_PATH = re.compile(r"^(?:diff --git a/\S+ b/(\S+)|(?:---|\+\+\+) [ab]/(\S+))", re.M)


def _patch_paths(text: str) -> list[str]:
    return list(dict.fromkeys(a or b for a, b in _PATCH_PATH.findall(text)))


def fixed_files(bug: Defects4jBug, repository: Path, *,
                root: str = "") -> dict[str, bytes | None]:
    """The files Defects4J's compile fixes change in the fixed version (empty without
    any): its checkouts get them first, to compile and run on today's Java."""
    if not bug.compile_fixes:
        return {}
    return _patched(bug, repository, root=root,
                    patches=[("a compile fix", f) for f in bug.compile_fixes])


def _patched(bug: Defects4jBug, repository: Path, *, root: str,
             patches: list[tuple[str, str]]) -> dict[str, bytes | None]:
    paths = list(dict.fromkeys(path for _, text in patches for path in _patch_paths(text)))
    with tempfile.TemporaryDirectory(prefix="d4j-patch-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        for path in paths:
            stored = f"{root}/{path}" if root else path
            if not _exists(repository, bug.fixed_revision, stored):
                continue  # the patch creates it
            target = tree / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(git(repository, "show", f"{bug.fixed_revision}:{stored}").stdout)
        for number, (what, text) in enumerate(patches):
            patch = Path(tmp) / f"{number}.patch"
            patch.write_text(text, encoding="utf-8", errors="surrogateescape")
            failure = _apply(patch, tree)
            crlf = [tree / path for path in paths if (tree / path).is_file()
                    and b"\r\n" in (tree / path).read_bytes()]
            if failure is not None and crlf:
                failure = _apply_over_lf(patch, tree, crlf)
            if failure is not None:
                raise NotRebuildable(f"{what} does not apply to the fixed revision: {failure}")
        found: dict[str, bytes | None] = {}
        for path in paths:
            target = tree / path
            found[path] = target.read_bytes() if target.is_file() else None
        return found


def _apply(patch: Path, tree: Path) -> str | None:
    """Apply ``patch`` in ``tree`` as Defects4J does: -p1 (a/ and b/ prefixes), else -p0 or
    -p2. None when it applied, else git's first complaint."""
    for strip in ("-p1", "-p0", "-p2"):
        applied = subprocess.run(["git", "apply", strip, "--whitespace=nowarn", str(patch)],
                                 cwd=tree, capture_output=True, text=True)
        if applied.returncode == 0:
            return None
    why = applied.stderr.strip().splitlines()
    return why[0] if why else f"exit {applied.returncode}"


def _apply_over_lf(patch: Path, tree: Path, crlf: list[Path]) -> str | None:
    """Apply ``patch`` with the ``crlf`` files read as LF, then give them their CRLF back.
    Some old revisions of the public histories keep CRLF where Defects4J's own repositories
    (and so its patches) have LF (Math-106)."""
    for path in crlf:
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
    failure = _apply(patch, tree)
    for path in crlf:
        if path.is_file():
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    return failure


def write_overlay(versions: BugVersions, folder: Path, *, fixed: bool = False) -> None:
    """The buggy version's files (or, with ``fixed``, the fixed version's compile-fixed
    ones) laid out in ``folder``."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)  # a patch that only deletes files lays nothing over
    files = versions.fixed_files if fixed else versions.buggy_files
    for path, content in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def file_at(repository: Path, revision: str, path: str) -> str | None:
    """A file's text at a revision (None when absent); Java sources may be Latin-1."""
    done = git(repository, "show", f"{revision}:{path}", check=False)
    if done.returncode != 0:
        return None
    return _decoded(done.stdout)


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def commit_time(repository: Path, revision: str) -> int:
    """The commit's time (seconds since the epoch); CoderUJB picks each project's latest bug
    by its fixed revision's date."""
    done = git(repository, "show", "-s", "--format=%ct", revision, check=False)
    text = done.stdout.decode().strip()
    return int(text) if done.returncode == 0 and text.isdigit() else 0
