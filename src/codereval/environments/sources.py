"""Project sources for every builder: a local directory, a git repository at a commit, or an
archive (path or URL), put in place as the environment's ``src/`` tree.

A builder hashes the fetched tree (or, for a local directory used as is, the directory where it
is) and keys its environment on that hash, so each language rebuilds exactly when the content
changes.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path

from codereval.environments.base import ProjectSpec
from codereval.errors import ToolchainMissing, UserError
from codereval.workspace.views import SKIP_DIRS, remove_tree


def is_archive(source: str) -> bool:
    return bool(re.search(r"\.(tar\.gz|tgz|tar\.bz2|tar\.xz|tar|zip|whl)$", source))


def is_git(source: str) -> bool:
    return source.startswith("git@") or source.endswith(".git") or source.startswith("git+")


def fetch_source(
    spec: ProjectSpec, dest: Path, *, downloads: Path, ignore: Iterable[str] = ()
) -> None:
    """Put the project's source tree at ``dest`` (which must not exist).

    ``ignore`` names glob patterns left out when copying a local directory (build outputs).
    """
    source = spec.resolved_source()
    staging = dest.with_name(dest.name + ".fetch")
    remove_tree(staging)
    # A commit names a git revision whatever the address looks like (a repository path,
    # file://, https://host/owner/repo): never ignore it silently.
    if is_git(source) or (spec.commit and not is_archive(source)):
        _git_checkout(source.removeprefix("git+"), spec.commit, staging,
                      submodules=spec.submodules)
    elif is_archive(source):
        archive = _download(source, downloads) if "://" in source else Path(source)
        if not archive.is_file():
            raise UserError(f"project {spec.name}: source archive not found: {archive}")
        _extract(archive, staging)
    elif "://" in source:
        raise UserError(
            f"project {spec.name}: cannot fetch {source!r}",
            hint="use a git URL (ending in .git), an archive URL, or a local directory",
        )
    else:
        path = Path(source)
        if not path.is_dir():
            raise UserError(f"project {spec.name}: source directory not found: {path}")
        shutil.copytree(path, staging, symlinks=True,
                        ignore=shutil.ignore_patterns(*SKIP_DIRS, *ignore))
    if spec.subdir:
        root = staging / spec.subdir
    else:
        root = _single_top(staging) if is_archive(source) else staging
    if not root.is_dir():
        raise UserError(f"project {spec.name}: subdir {spec.subdir!r} not found in the source")
    shutil.move(str(root), str(dest))
    remove_tree(staging)


def local_source_dir(spec: ProjectSpec) -> Path | None:
    """The project's directory when its source is a local tree used as is (None otherwise)."""
    source = spec.resolved_source()
    if "://" in source or is_git(source) or is_archive(source) or spec.commit:
        return None
    path = Path(source)
    if not path.is_dir():
        raise UserError(f"project {spec.name}: source directory not found: {path}")
    return path / spec.subdir if spec.subdir else path


def _single_top(path: Path) -> Path:
    """An archive holding one folder (``name-1.0/``) has its project inside that folder."""
    entries = [p for p in path.iterdir() if p.name not in SKIP_DIRS]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return path


def _git_checkout(url: str, commit: str, dest: Path, *, submodules: tuple[str, ...] = ()) -> None:
    if shutil.which("git") is None:
        raise ToolchainMissing("git is not installed", hint="apt-get install git")
    # --no-hardlinks: a local clone would share object files with the user's repository, and
    # sealing the environment would then chown and chmod the user's files.
    # --no-checkout with a commit: the branch head is never written out, so a head whose
    # files cannot be checked out (a mirror without its large files) does not stop a commit
    # that can.
    _checked_run(["git", "clone", "--quiet", "--no-hardlinks",
                  *(["--no-checkout"] if commit else []), url, str(dest)],
                 what=f"git clone {url}")
    if commit:
        _checked_run(["git", "-C", str(dest), "checkout", "--quiet", commit],
                     what=f"git checkout {commit}")
    if submodules:
        # Only the ones the build needs: a project's UI or test submodules can be large.
        _checked_run(["git", "-C", str(dest), "submodule", "update", "--init", "--quiet", "--",
                      *submodules], what=f"git submodule update {' '.join(submodules)}")


def _checked_run(argv: list[str], *, what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        printed = done.stderr or done.stdout
        tail = "\n".join([line for line in printed.strip().splitlines() if line.strip()][-3:])
        raise UserError(f"{what} failed: {tail}")


def _download(url: str, downloads: Path) -> Path:
    import httpx

    downloads.mkdir(parents=True, exist_ok=True)
    target = downloads / re.sub(r"[^A-Za-z0-9._-]", "_", url.rsplit("/", 1)[-1])
    if target.is_file():
        return target
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60) as response:
            response.raise_for_status()
            fd, tmp = tempfile.mkstemp(dir=downloads)
            with os.fdopen(fd, "wb") as handle:
                for chunk in response.iter_bytes():
                    handle.write(chunk)
        os.replace(tmp, target)
    except httpx.HTTPError as exc:
        raise UserError(f"cannot download {url}: {exc}") from None
    return target


def _extract(archive: Path, dest: Path) -> None:
    dest.mkdir(parents=True)
    name = archive.name
    try:
        if name.endswith((".zip", ".whl")):
            with zipfile.ZipFile(archive) as zf:
                for member in zf.namelist():
                    if member.startswith("/") or ".." in Path(member).parts:
                        raise UserError(f"{archive}: unsafe path in archive: {member}")
                zf.extractall(dest)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(dest, filter="data")
    # A truncated compressed stream raises EOFError / zlib.error / LZMAError, not TarError.
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, zlib.error,
            lzma.LZMAError) as exc:
        raise UserError(f"{archive}: cannot extract ({exc})") from None
