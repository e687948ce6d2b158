"""Kept workspaces: a reused workspace is the one a new make would give, or it is not reused."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codereval.workspace import cache as cache_module
from codereval.workspace.cache import Lease, WorkspaceCache, scan, verify
from codereval.workspace.views import make_workspace, remove_tree, seal, tree_hash

CHANGED_A = {"pkg/mod.py": "def f():\n    return 'a'\n"}
CHANGED_B = {"pkg/other.py": "def g():\n    return 'b'\n"}


def _base(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    (base / "pkg" / "sub").mkdir(parents=True)
    (base / "pkg" / "__init__.py").write_text("")
    (base / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (base / "pkg" / "other.py").write_text("def g():\n    return 2\n")
    (base / "pkg" / "sub" / "deep.py").write_text("X = 3\n")
    (base / "README").write_text("readme\n")
    os.symlink("README", base / "README.link")
    seal(base)
    return base


def _inodes(root: Path) -> dict[str, int | str]:
    """Every file's path -> its inode (hard links share the base's), or a link's target."""
    found: dict[str, int | str] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            found[os.path.relpath(path, root)] = (
                os.readlink(path) if os.path.islink(path) else os.lstat(path).st_ino)
    return found


def _fresh(base: Path, tmp_path: Path, changed: dict[str, str], name: str) -> Path:
    return make_workspace(base, tmp_path / name, changed=changed, strategy="hardlink")


def _sample_dir(tmp_path: Path, n: int) -> Path:
    scratch = tmp_path / f"scratch-{n}"
    scratch.mkdir()
    return scratch / "project"


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[WorkspaceCache]:
    kept = WorkspaceCache(tmp_path / "kept")
    yield kept
    kept.close()


def test_a_reused_workspace_is_what_a_new_one_would_be_for_the_next_samples_files(
    tmp_path: Path, cache: WorkspaceCache
) -> None:
    base = _base(tmp_path)
    first = cache.checkout(base, _sample_dir(tmp_path, 1), CHANGED_A)
    assert cache.checkin(first)
    second = cache.checkout(base, _sample_dir(tmp_path, 2), CHANGED_B)
    assert (cache.stats.made, cache.stats.reused) == (1, 1)
    fresh = _fresh(base, tmp_path, CHANGED_B, "fresh-b")
    assert tree_hash(second.path) == tree_hash(fresh)
    reused, made = _inodes(second.path), _inodes(fresh)
    # Same files, and every file but the changed one is the base's own inode in both.
    assert reused.keys() == made.keys()
    for rel in reused:
        if rel != "pkg/other.py":
            assert reused[rel] == made[rel], rel
    # The previous sample's file is the base's again, not its text.
    assert (second.path / "pkg" / "mod.py").read_text() == "def f():\n    return 1\n"
    assert os.lstat(second.path / "pkg" / "mod.py").st_ino == os.lstat(
        base / "pkg" / "mod.py").st_ino


def test_a_changed_file_the_sample_rewrote_is_replaced_not_kept(
    tmp_path: Path, cache: WorkspaceCache
) -> None:
    base = _base(tmp_path)
    lease = cache.checkout(base, _sample_dir(tmp_path, 1), CHANGED_A)
    (lease.path / "pkg" / "mod.py").write_text("tampered")
    assert cache.checkin(lease)
    again = cache.checkout(base, _sample_dir(tmp_path, 2), CHANGED_A)
    assert cache.stats.reused == 1
    assert (again.path / "pkg" / "mod.py").read_text() == CHANGED_A["pkg/mod.py"]


def _add_file(ws: Path) -> None:
    (ws / "pkg" / "sub" / "left-behind.txt").write_text("for the next sample")


def _remove_link(ws: Path) -> None:
    os.unlink(ws / "pkg" / "sub" / "deep.py")


def _replace_link(ws: Path) -> None:
    os.unlink(ws / "README")
    (ws / "README").write_text("not the base's")


def _rename_away_and_back_as_copy(ws: Path) -> None:
    os.rename(ws / "pkg" / "other.py", ws / "pkg" / "moved.py")
    (ws / "pkg" / "other.py").write_text((ws / "pkg" / "moved.py").read_text())
    os.unlink(ws / "pkg" / "moved.py")


def _add_folder(ws: Path) -> None:
    (ws / "pkg" / "__pycache__").mkdir()


def _chmod_folder(ws: Path) -> None:
    os.chmod(ws / "pkg" / "sub", 0o500)


def _xattr_on_folder(ws: Path) -> None:
    try:
        os.setxattr(ws / "pkg", "user.note", b"from a sample")
    except OSError as exc:
        pytest.skip(f"no user extended attributes here: {exc}")


@pytest.mark.parametrize("tamper", [
    _add_file, _remove_link, _replace_link, _rename_away_and_back_as_copy, _add_folder,
    _chmod_folder, _xattr_on_folder,
])
def test_a_workspace_the_sample_changed_is_never_reused(
    tmp_path: Path, cache: WorkspaceCache, tamper: Callable[[Path], None]
) -> None:
    base = _base(tmp_path)
    lease = cache.checkout(base, _sample_dir(tmp_path, 1), CHANGED_A)
    tamper(lease.path)
    assert not cache.checkin(lease)
    assert cache.stats.discarded == 1 and cache.stats.kept == 0
    next_one = cache.checkout(base, _sample_dir(tmp_path, 2), CHANGED_A)
    assert cache.stats.made == 2 and cache.stats.reused == 0
    assert tree_hash(next_one.path) == tree_hash(_fresh(base, tmp_path, CHANGED_A, "fresh"))


def test_workspaces_of_another_base_or_a_rebuilt_base_are_not_reused(
    tmp_path: Path, cache: WorkspaceCache
) -> None:
    base = _base(tmp_path)
    assert cache.checkin(cache.checkout(base, _sample_dir(tmp_path, 1), CHANGED_A))
    other = tmp_path / "other"
    (other / "pkg").mkdir(parents=True)
    (other / "pkg" / "mod.py").write_text("")
    lease = cache.checkout(other, _sample_dir(tmp_path, 2), CHANGED_A)
    assert cache.stats.reused == 0
    assert not (lease.path / "README").exists()
    # The same path rebuilt: a new folder, whose files the kept one does not link.
    remove_tree(base)
    base = _base(tmp_path)
    cache.checkout(base, _sample_dir(tmp_path, 3), CHANGED_A)
    assert cache.stats.reused == 0


def test_changed_files_in_folders_the_base_lacks_are_made_anew_every_time(
    tmp_path: Path, cache: WorkspaceCache
) -> None:
    base = _base(tmp_path)
    changed = {"tests/test_new.py": "assert True\n"}
    lease = cache.checkout(base, _sample_dir(tmp_path, 1), changed)
    assert lease.listing is None
    assert not cache.checkin(lease)
    assert (lease.path / "tests" / "test_new.py").is_file()


def test_the_cache_keeps_at_most_its_capacity_and_close_removes_everything(
    tmp_path: Path
) -> None:
    base = _base(tmp_path)
    cache = WorkspaceCache(tmp_path / "kept", capacity=2)
    leases = [cache.checkout(base, _sample_dir(tmp_path, n), CHANGED_A) for n in range(4)]
    for lease in leases:
        assert cache.checkin(lease)
    assert len(list((tmp_path / "kept").iterdir())) == 2
    cache.close()
    assert not (tmp_path / "kept").exists()


def test_scan_sees_every_folder_and_entry(tmp_path: Path) -> None:
    base = _base(tmp_path)
    listing = scan(base)
    assert set(listing) == {"", "pkg", os.path.join("pkg", "sub")}
    assert {name for name, _ in listing["pkg"].entries} == {
        "__init__.py", "mod.py", "other.py", "sub"}


def test_codereval_workspace_reuse_0_makes_every_view_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codereval.runners.base import RunContext
    from codereval.runners.python import PythonProjectRunner
    from codereval.sandbox import Limits, get_sandbox

    ctx = RunContext(sandbox=get_sandbox("none"), limits=Limits(), work_root=tmp_path,
                     env_root=tmp_path)
    monkeypatch.setenv("CODEREVAL_WORKSPACE_REUSE", "0")
    assert PythonProjectRunner()._workspace_cache(ctx) is None
    monkeypatch.delenv("CODEREVAL_WORKSPACE_REUSE")
    assert PythonProjectRunner()._workspace_cache(ctx) is not None


def test_a_workspace_kept_in_place_is_what_a_new_one_would_be_in_the_same_folder(
    tmp_path: Path, cache: WorkspaceCache
) -> None:
    """--compat's warm workers keep the project folder mounted: the workspace stays in it
    between samples, its folder never moved, and is what a new one would be for each."""
    base = _base(tmp_path)
    folder = tmp_path / "mounted"
    folder.mkdir()
    inode = os.stat(folder).st_ino
    first = cache.checkout_in_place(base, folder, CHANGED_A)
    assert cache.checkin_in_place(first)
    second = cache.checkout_in_place(base, folder, CHANGED_B)
    assert (cache.stats.made, cache.stats.reused) == (1, 1)
    assert os.stat(folder).st_ino == inode and second.path == folder
    assert tree_hash(folder) == tree_hash(_fresh(base, tmp_path, CHANGED_B, "fresh-b"))
    assert os.lstat(folder / "pkg" / "mod.py").st_ino == os.lstat(base / "pkg" / "mod.py").st_ino


@pytest.mark.parametrize("tamper", [_add_file, _remove_link, _replace_link, _add_folder,
                                    _chmod_folder])
def test_a_workspace_in_place_the_sample_changed_is_emptied_and_made_anew(
    tmp_path: Path, cache: WorkspaceCache, tamper: Callable[[Path], None]
) -> None:
    base = _base(tmp_path)
    folder = tmp_path / "mounted"
    folder.mkdir()
    lease = cache.checkout_in_place(base, folder, CHANGED_A)
    tamper(lease.path)
    assert not cache.checkin_in_place(lease)
    # Emptied, the folder itself kept (a worker has it mounted).
    assert folder.is_dir() and list(folder.iterdir()) == []
    again = cache.checkout_in_place(base, folder, CHANGED_A)
    assert cache.stats.reused == 0
    assert tree_hash(again.path) == tree_hash(_fresh(base, tmp_path, CHANGED_A, "fresh"))


# --- settled folders: checked by one lstat, not listed (cache.verify) -------------------------

CHANGED_AT_ROOT = {"README": "the sample's readme\n"}


def _settled_lease(tmp_path: Path, cache: WorkspaceCache, base: Path, *, in_place: bool
                   ) -> Lease:
    """A second lease of a kept workspace, handed out well after its folders were made: all
    but the root (where the changed file is written again) are settled."""
    if in_place:
        folder = tmp_path / "mounted"
        folder.mkdir()
        assert cache.checkin_in_place(cache.checkout_in_place(base, folder, CHANGED_AT_ROOT))
        time.sleep(0.2)
        return cache.checkout_in_place(base, folder, CHANGED_AT_ROOT)
    assert cache.checkin(cache.checkout(base, _sample_dir(tmp_path, 1), CHANGED_AT_ROOT))
    time.sleep(0.2)
    return cache.checkout(base, _sample_dir(tmp_path, 2), CHANGED_AT_ROOT)


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("tamper", [
    _add_file, _remove_link, _rename_away_and_back_as_copy, _add_folder, _chmod_folder,
    _xattr_on_folder,
])
def test_a_change_to_a_settled_folder_is_seen_without_listing_it(
    tmp_path: Path, cache: WorkspaceCache, tamper: Callable[[Path], None], in_place: bool
) -> None:
    base = _base(tmp_path)
    lease = _settled_lease(tmp_path, cache, base, in_place=in_place)
    assert cache.stats.reused == 1
    tamper(lease.path)
    kept = cache.checkin_in_place(lease) if in_place else cache.checkin(lease)
    assert not kept and cache.stats.discarded == 1


def test_an_untouched_workspace_lists_only_its_unsettled_folders(
    tmp_path: Path, cache: WorkspaceCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _base(tmp_path)
    lease = _settled_lease(tmp_path, cache, base, in_place=False)
    listed: list[str] = []
    state = cache_module._dir_state

    def counted(path: str) -> object:
        listed.append(os.path.relpath(path, lease.path))
        return state(path)

    monkeypatch.setattr(cache_module, "_dir_state", counted)
    assert verify(lease.path, lease.listing or {}, since_ns=lease.since_ns) == ""
    # The root holds the file written for the sample; pkg and pkg/sub were only stat'ed.
    assert listed == ["."]
    assert cache.checkin(lease)
