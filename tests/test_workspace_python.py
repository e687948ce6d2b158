"""Private workspaces: the base tree is only read, whatever the strategy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codereval.workspace.views import (
    SEALED_UID,
    choose_strategy,
    make_workspace,
    remove_tree,
    seal,
    tree_hash,
)


def _base(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    (base / "pkg" / "__pycache__").mkdir(parents=True)
    (base / "pkg" / "__init__.py").write_text("")
    (base / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (base / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"stale")
    (base / "run.sh").write_text("#!/bin/sh\n")
    (base / "run.sh").chmod(0o755)
    return base


@pytest.mark.parametrize("strategy", ["copy", "symlink", "hardlink"])
def test_workspace_has_the_tree_with_changed_files_as_private_copies(
    tmp_path: Path, strategy: str
) -> None:
    base = _base(tmp_path)
    before = tree_hash(base)
    ws = make_workspace(base, tmp_path / "ws", changed={"pkg/mod.py": "def f():\n    return 2\n"},
                        strategy=strategy)
    assert (ws / "pkg" / "mod.py").read_text().endswith("return 2\n")
    assert not (ws / "pkg" / "mod.py").is_symlink()
    assert (ws / "pkg" / "__init__.py").exists()
    assert not (ws / "pkg" / "__pycache__").exists()  # stale bytecode never comes along
    (ws / "pkg" / "mod.py").write_text("changed again")
    os.remove(ws / "pkg" / "__init__.py")
    assert tree_hash(base) == before
    remove_tree(ws)
    assert not ws.exists()


def test_copy_is_independent_of_the_base_even_when_written_in_place(tmp_path: Path) -> None:
    base = _base(tmp_path)
    before = tree_hash(base)
    ws = make_workspace(base, tmp_path / "ws", changed={}, strategy="copy")
    (ws / "run.sh").write_text("overwritten")
    assert os.access(ws / "run.sh", os.X_OK)
    assert tree_hash(base) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="sealing changes ownership, which needs root")
def test_sealed_base_is_read_only_and_owned_by_nobody(tmp_path: Path) -> None:
    base = _base(tmp_path)
    assert seal(base)
    stat = (base / "pkg" / "mod.py").stat()
    assert stat.st_uid == SEALED_UID and stat.st_mode & 0o222 == 0
    remove_tree(base)
    assert not base.exists()


def test_hard_links_only_for_a_sealed_base_in_bubblewrap() -> None:
    assert choose_strategy("bwrap+cgroup(memory,pids)", sealed=True) == "hardlink"
    assert choose_strategy("bwrap+cgroup(memory,pids)", sealed=False) == "copy"
    assert choose_strategy("rlimit", sealed=True) == "copy"
    assert choose_strategy("none", sealed=True) == "copy"


def test_tree_hash_sees_content_names_and_exec_bit(tmp_path: Path) -> None:
    base = _base(tmp_path)
    first = tree_hash(base)
    (base / "run.sh").chmod(0o644)
    second = tree_hash(base)
    (base / "pkg" / "new.py").write_text("")
    third = tree_hash(base)
    assert len({first, second, third}) == 3
