"""The benchmark's projects: which manifest describes them, and putting each one in place.

A project comes, in this order, from the official tree itself (an image or an extracted
``repos/`` holds the projects as the platform had them), from a local checkout the user names
(``--checkouts DIR``: ``DIR/<owner>---<repo>``, a git repository checked out at the pinned commit,
or a plain tree taken as is), or, with ``--fetch`` only, cloned from the manifest's git URL at
its commit. Nothing is fetched without ``--fetch``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from codereval.environments.base import ProjectSpec, load_manifest
from codereval.environments.edits import EditFailed, apply_edits
from codereval.environments.sources import fetch_source
from codereval.errors import UserError, name_some
from codereval.runners.python import project_folder
from codereval.workspace.views import SKIP_DIRS, remove_tree

SHIPPED_MANIFEST = "codereval_python/projects.toml"


def shipped_manifest() -> Path:
    """The manifest of the 43 CoderEval Python projects that ships with codereval."""
    return Path(str(resources.files("codereval.data").joinpath(SHIPPED_MANIFEST)))


def load_project_specs(path: Path | None) -> dict[str, ProjectSpec]:
    specs = load_manifest(path or shipped_manifest())
    return {spec.name: spec for spec in specs}


@dataclass(frozen=True, kw_only=True)
class Placed:
    """How a project got into the prepared tree."""

    project: str
    origin: str  # "tree" | "checkout" | "checkout (unverified)" | "fetched" | "missing"
    commit: str = ""
    note: str = ""
    # The checkout's own HEAD where it was not the pinned commit (the pinned one was placed).
    moved_from: str = ""
    # Files of the pinned commit the checkout could not produce (objects missing from the
    # repository: a partial or damaged clone); git still exits 0 for them.
    incomplete: tuple[str, ...] = ()


def placement_notes(placed: dict[str, Placed]) -> list[str]:
    """What to know about where projects came from: a checkout at another commit than the
    pinned one placed, files a checkout could not produce."""
    notes = []
    for name, where in sorted(placed.items()):
        if where.moved_from:
            notes.append(f"{name}: the checkout is at {where.moved_from[:12]}; prepared at the "
                         f"manifest's pinned commit {where.commit[:12]}")
        if where.incomplete:
            notes.append(f"{name}: {len(where.incomplete)} file(s) of {where.commit[:12]} are "
                         f"missing, their objects absent from the checkout's repository: "
                         f"{name_some(list(where.incomplete))}")
    return notes


def placed_json(placed: dict[str, Placed]) -> dict[str, dict[str, str | list[str]]]:
    """benchmark.json's record of where each project came from."""
    return {name: {"origin": p.origin, "commit": p.commit, "note": p.note}
            | ({"checkout_head": p.moved_from} if p.moved_from else {})
            | ({"missing_files": list(p.incomplete)} if p.incomplete else {})
            for name, p in sorted(placed.items())}


def _git(argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True, check=False)


def _is_git_checkout(path: Path) -> bool:
    bare = (path / "HEAD").is_file() and (path / "objects").is_dir()
    return (path / ".git").exists() or bare


def place_project(
    spec: ProjectSpec | None,
    *,
    project: str,
    dest: Path,
    checkouts: Path | None,
    fetch: bool,
    downloads: Path,
) -> Placed:
    """Put ``project``'s source at ``dest`` (which the official tree may already hold), with the
    manifest's source edits applied unless it is the official tree (which has them already)."""
    placed = _place(spec, project=project, dest=dest, checkouts=checkouts, fetch=fetch,
                    downloads=downloads)
    if spec is None or not spec.edits or placed.origin in ("tree", "missing"):
        return placed
    try:
        apply_edits(dest, spec.edits)
    except EditFailed as exc:
        remove_tree(dest)
        return Placed(project=project, origin="missing", note=f"source edits: {exc}")
    edited = f"{len(spec.edits)} source edit(s) from the manifest applied"
    return replace(placed, note=f"{placed.note}; {edited}" if placed.note else edited)


def _place(
    spec: ProjectSpec | None,
    *,
    project: str,
    dest: Path,
    checkouts: Path | None,
    fetch: bool,
    downloads: Path,
) -> Placed:
    if dest.is_dir() and any(p.name not in SKIP_DIRS for p in dest.iterdir()):
        return Placed(project=project, origin="tree")
    commit = spec.commit if spec is not None else ""
    local = checkouts / project_folder(project) if checkouts is not None else None
    if local is not None and local.is_dir():
        if _is_git_checkout(local) and commit:
            return _clone_at(local, commit=commit, dest=dest, project=project,
                             submodules=spec.submodules if spec is not None else ())
        _copy_tree(local, dest)
        return Placed(project=project, origin="checkout (unverified)",
                      note="not a git checkout: taken as is, its commit not checked")
    if spec is None:
        return Placed(project=project, origin="missing", note="not in the projects manifest")
    if not fetch:
        where = f"no {local}" if local is not None else "no --checkouts given"
        return Placed(project=project, origin="missing",
                      note=f"{where}; pass --fetch to clone {spec.source} at {commit[:12]}")
    try:
        fetch_source(replace(spec, subdir=""), dest, downloads=downloads)
    except UserError as exc:
        return Placed(project=project, origin="missing", note=exc.one_line())
    return Placed(project=project, origin="fetched", commit=commit)


def _clone_at(
    repo: Path, *, commit: str, dest: Path, project: str, submodules: tuple[str, ...] = ()
) -> Placed:
    """A clone of ``repo`` with ``commit`` checked out (its .git left out of the tree).

    Each of ``submodules`` comes from the checkout's own clone of it (``git submodule update``
    made one), at the commit ``commit`` records for it; git never clones them into a clone.
    """
    # Absolute: git runs in another directory, and a relative --out must not land there.
    staging = dest.resolve().with_name(dest.name + ".clone")
    head = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd=repo).stdout.strip()
    pinned = _git(["rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
                  cwd=repo).stdout.strip()
    remove_tree(staging)
    done = _git(["clone", "--quiet", "--no-hardlinks", "--no-checkout", str(repo.resolve()),
                 str(staging)], cwd=repo.parent)
    if done.returncode == 0:
        done = _git(["checkout", "--quiet", commit], cwd=staging)
    if done.returncode != 0:
        remove_tree(staging)
        why = (done.stderr or done.stdout).strip().splitlines()
        return Placed(project=project, origin="missing",
                      note=f"{repo}: cannot check out {commit[:12]}: {why[-1] if why else '?'}")
    for path in submodules:
        missing = _place_submodule(repo, staging, path=path, commit=commit)
        if missing:
            remove_tree(staging)
            return Placed(project=project, origin="missing", note=missing)
    # A blob the repository lacks is reported on stderr, and checkout still exits 0.
    listed = _git(["ls-files", "--deleted", "-z"], cwd=staging)
    incomplete = tuple(sorted(p for p in listed.stdout.split("\0") if p))
    remove_tree(staging / ".git")
    if dest.exists():
        # The official tree had only this project's test files: keep them over the checkout.
        shutil.copytree(dest, staging, dirs_exist_ok=True)
        remove_tree(dest)
    staging.rename(dest)
    return Placed(project=project, origin="checkout", commit=commit,
                  moved_from=head if head and pinned and head != pinned else "",
                  incomplete=incomplete)


def _place_submodule(repo: Path, clone: Path, *, path: str, commit: str) -> str:
    """Check out submodule ``path`` of ``clone`` from ``repo``'s; a one-line reason if not."""
    listed = _git(["ls-tree", commit, "--", path], cwd=clone)
    fields = listed.stdout.split()
    if listed.returncode != 0 or len(fields) < 3 or fields[1] != "commit":
        return f"{path} is not a submodule at {commit[:12]} (fix submodules in the manifest)"
    wanted = fields[2]
    inner = repo / path
    hint = f"run `git submodule update --init {path}` in {repo}"
    if not _is_git_checkout(inner):
        return f"submodule {path} is not checked out in {repo}: {hint}"
    target = clone / path
    remove_tree(target)
    done = _git(["clone", "--quiet", "--no-hardlinks", "--no-checkout", str(inner.resolve()),
                 str(target.resolve())], cwd=clone)
    if done.returncode == 0:
        done = _git(["checkout", "--quiet", wanted], cwd=target)
    if done.returncode != 0:
        return f"submodule {path}: {inner} lacks {wanted[:12]}: {hint}"
    remove_tree(target / ".git")
    return ""


def _copy_tree(source: Path, dest: Path) -> None:
    shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(*SKIP_DIRS))
