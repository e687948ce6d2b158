"""Private workspaces: each sample gets its own view of a project; the base is only read.

Three ways to make the view, measured by bench/bench_workspace.py on the mini projects:

- ``copy``: every file copied. Always safe: nothing in the view shares storage with the base.
- ``symlink``: directories recreated, files symlinked to the base, changed files written as
  real files. Fast on big trees, but safe only when the sandbox mounts the base read-only
  (a write through a link would otherwise land in the base).
- ``hardlink``: like symlink with hard links: no new inode per file, by far the cheapest here
  (creating an inode is what costs). Safe only for a *sealed* base: files read-only and owned
  by another user (``seal``), run in a sandbox without capabilities (bwrap --cap-drop ALL), so
  the sample can neither chmod nor write a shared inode; it can only unlink its own links.

``choose_strategy`` picks ``hardlink`` for a sealed base under bwrap, else ``copy``. (An overlay
mounted by bubblewrap would cost nothing per file, but bwrap 0.8 has no --overlay-src.)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from codereval.errors import UserError

STRATEGIES = ("copy", "symlink", "hardlink")
# Never carried from a base into a workspace: its bytecode is not ours to reuse (ours comes
# from environments/bytecode.py), VCS data is not needed.
SKIP_DIRS = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache"})


# The owner of sealed trees: nobody, so a sandboxed root without capabilities is not the owner.
SEALED_UID = 65534


def choose_strategy(isolation: str, *, sealed: bool) -> str:
    """The fastest strategy that is safe under the given sandbox isolation."""
    return "hardlink" if sealed and isolation.startswith("bwrap") else "copy"


def make_workspace(
    base: Path, dest: Path, *, changed: Mapping[str, str], strategy: str = "copy",
    strict: bool = False, into_empty: bool = False, bytecode: Path | None = None,
) -> Path:
    """Create ``dest`` as a private view of ``base`` with ``changed`` files (relative path ->
    text) written as real files. ``dest`` must not exist yet, or with ``into_empty`` be an
    empty folder (one a sandbox keeps mounted).

    ``strict``: a file that cannot be hard-linked raises instead of being copied (a reused
    workspace relies on every file being the base's sealed inode). ``bytecode``: a tree of
    ``__pycache__`` folders compiled from ``base`` (environments/bytecode.py), placed in the
    view's folders as the base's files are."""
    if strategy not in STRATEGIES:
        raise UserError(f"unknown workspace strategy {strategy!r}", hint=f"one of {STRATEGIES}")
    if into_empty and dest.is_dir():
        if any(dest.iterdir()):
            raise FileExistsError(f"{dest} is not empty")
    else:
        dest.mkdir(parents=True)
    changed_paths = {os.path.normpath(rel) for rel in changed}
    for rel in changed_paths:
        if rel.startswith("..") or os.path.isabs(rel):
            raise ValueError(f"changed file outside the workspace: {rel}")
    base_s = str(base)
    for dirpath, dirnames, filenames in os.walk(base_s):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        rel_dir = os.path.relpath(dirpath, base_s)
        out_dir = dest if rel_dir == "." else dest / rel_dir
        for name in dirnames:
            src = os.path.join(dirpath, name)
            if os.path.islink(src):
                # A symlinked directory is recreated as a link (copied trees keep its target).
                os.symlink(os.readlink(src), out_dir / name)
                continue
            (out_dir / name).mkdir()
        for name in filenames:
            rel = name if rel_dir == "." else os.path.join(rel_dir, name)
            if rel in changed_paths or name.endswith(".pyc"):
                continue
            src = os.path.join(dirpath, name)
            place(src, str(out_dir / name), strategy=strategy, strict=strict)
    if bytecode is not None:
        _place_bytecode(bytecode, dest, strategy=strategy, strict=strict)
    for rel, text in changed.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return dest


def _place_bytecode(bytecode: Path, dest: Path, *, strategy: str, strict: bool) -> None:
    """Each ``__pycache__`` of ``bytecode`` into the same folder of ``dest``, where that is a
    folder of the view (not a link, not left out)."""
    root = str(bytecode)
    for dirpath, _dirnames, filenames in os.walk(root):
        if os.path.basename(dirpath) != "__pycache__":
            continue
        rel_dir = os.path.relpath(os.path.dirname(dirpath), root)
        home = dest if rel_dir == "." else dest / rel_dir
        if home.is_symlink() or not home.is_dir():
            continue
        cache = home / "__pycache__"
        cache.mkdir(exist_ok=True)
        for name in filenames:
            place(os.path.join(dirpath, name), str(cache / name), strategy=strategy,
                  strict=strict)


def place(src: str, dst: str, *, strategy: str, strict: bool = False) -> None:
    """Put one file of the base at ``dst`` the strategy's way."""
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
    elif strategy == "symlink":
        os.symlink(src, dst)
    elif strategy == "hardlink":
        try:
            os.link(src, dst)
        except OSError:  # another filesystem, or links not allowed: a copy is always safe
            if strict:
                raise
            shutil.copyfile(src, dst)
    else:
        shutil.copyfile(src, dst)
        mode = os.stat(src).st_mode
        if mode & stat.S_IXUSR:
            os.chmod(dst, 0o755)


def remove_tree(path: Path) -> None:
    """Remove a workspace or environment even if a sample (or we) made parts read-only."""
    if path.is_symlink():
        path.unlink()
        return
    try:
        # Almost always enough; the walk below is for what was made read-only.
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        if not path.exists():
            return
    except OSError:
        pass
    # A folder with no search permission hides its contents from the walk: open each first.
    os.chmod(path, 0o700)
    for dirpath, dirnames, _filenames in os.walk(str(path)):
        os.chmod(dirpath, 0o700)
        for name in dirnames:
            sub = os.path.join(dirpath, name)
            if not os.path.islink(sub):
                os.chmod(sub, 0o700)
    shutil.rmtree(path)


def empty_folder(folder: Path) -> None:
    """Remove what ``folder`` holds, keeping the folder (a sandbox may have it mounted)."""
    with os.scandir(folder) as entries:
        found = list(entries)
    for entry in found:
        if entry.is_dir(follow_symlinks=False):
            remove_tree(Path(entry.path))
        else:
            os.unlink(entry.path)


def tree_hash(root: Path) -> str:
    """A content hash of a tree: paths, file bytes, symlink targets and the executable bit.

    ``__pycache__`` and VCS folders are left out, as workspaces leave them out.
    """
    digest = hashlib.sha256()
    root_s = str(root)
    for dirpath, dirnames, filenames in os.walk(root_s):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel_dir = os.path.relpath(dirpath, root_s)
        digest.update(f"d {rel_dir}\n".encode())
        linked = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in sorted(filenames + linked):
            path = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if name.endswith(".pyc"):
                continue
            if os.path.islink(path):
                digest.update(f"l {rel} {os.readlink(path)}\n".encode())
                continue
            mode = os.stat(path).st_mode
            digest.update(f"f {rel} {int(bool(mode & stat.S_IXUSR))}\n".encode())
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def seal(root: Path) -> bool:
    """Make ``root`` read-only and, when we may, owned by nobody. True when ownership moved
    (the condition for hard-linking it into workspaces)."""
    chown = os.geteuid() == 0
    if chown:
        for dirpath, _dirnames, filenames in os.walk(str(root)):
            os.lchown(dirpath, SEALED_UID, SEALED_UID)
            for name in filenames:
                os.lchown(os.path.join(dirpath, name), SEALED_UID, SEALED_UID)
    make_read_only(root)
    return chown


def make_read_only(root: Path) -> None:
    """Drop every write bit below ``root`` (a built environment is only ever read)."""
    for dirpath, dirnames, filenames in os.walk(str(root)):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    mode = os.stat(root).st_mode
    os.chmod(root, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
