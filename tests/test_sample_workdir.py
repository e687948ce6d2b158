"""A sample's private directory: where it is made, and that none of it outlives the sample."""

from __future__ import annotations

import os
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from codereval.runners.base import RunContext, sample_workdir
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.warm import WarmPool
from codereval.workspace.views import remove_tree

NOBODY = 65534


def _ctx(work_root: Path) -> RunContext:
    return RunContext(sandbox=get_sandbox("none"), limits=Limits(), work_root=work_root,
                      env_root=work_root.parent / "envs")


def _lock_up(workdir: Path) -> None:
    """What a hostile sample can do to its own directory: files in folders it cannot write."""
    locked = workdir / "locked" / "deeper"
    locked.mkdir(parents=True)
    (locked / "file").write_text("x")
    (locked.parent / "file").write_text("x")
    locked.chmod(0o500)
    locked.parent.chmod(0o000)
    workdir.chmod(0o000)


def test_without_warm_workers_it_is_a_new_folder_under_the_work_root_and_gone_after(
        tmp_path: Path) -> None:
    ctx = _ctx(tmp_path / "work")
    with sample_workdir(ctx, prefix="java-") as (first, slot):
        assert slot is None
        assert first.parent == ctx.work_root and first.name.startswith("java-")
        (first / "out.txt").write_text("written by the sample")
        with sample_workdir(ctx, prefix="java-") as (second, _):
            assert second != first and not any(second.iterdir())
    assert not first.exists() and not second.exists()
    assert list(ctx.work_root.iterdir()) == []


def test_it_is_removed_when_the_run_raises(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path / "work")
    with pytest.raises(RuntimeError), sample_workdir(ctx, prefix="py-") as (workdir, _):
        (workdir / "half").mkdir()
        raise RuntimeError("the runner failed mid-sample")
    assert not workdir.exists()


def _cleaned_up_as_an_unprivileged_user(job: Callable[[Path], bool], *, prefix: str) -> None:
    """Run ``job(work_root)`` in a forked child as an unprivileged user, in a folder it can reach
    (pytest's own are private to root); it says whether what it checked is gone, and the work
    root must be empty after. Root ignores file modes, so the case that matters (a user running
    codereval, whose sandboxed samples own their files) needs another user."""
    uid = NOBODY if os.geteuid() == 0 else os.geteuid()
    outer = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        outer.chmod(0o755)
        work_root = outer / "work"
        work_root.mkdir()
        if uid != os.geteuid():
            os.chown(work_root, uid, uid)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status only
            code = 3
            try:
                if os.geteuid() != uid:
                    os.setgroups([])
                    os.setgid(uid)
                    os.setuid(uid)
                code = 0 if job(work_root) else 1
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) in (0, 1), status
        assert os.WEXITSTATUS(status) == 0
        assert list(work_root.iterdir()) == []
    finally:
        remove_tree(outer)


def test_folders_the_sample_made_read_only_are_removed_too_for_a_user_other_than_root() -> None:
    def job(work_root: Path) -> bool:
        with sample_workdir(_ctx(work_root), prefix="cpp-") as (workdir, _):
            _lock_up(workdir)
        return not workdir.exists()

    _cleaned_up_as_an_unprivileged_user(job, prefix="codereval-test-workdir-")


def test_a_warm_pool_removes_its_folders_read_only_parts_and_all() -> None:
    # Its slots' folders hold the samples' scratches, on /dev/shm too (memory, not disk).
    reason = BwrapSandbox.unavailable_reason()
    if reason is not None:
        pytest.skip(f"bwrap unavailable: {reason}")
    sandbox = BwrapSandbox()  # found as root: the unprivileged child cannot search /root

    def job(work_root: Path) -> bool:
        pool = WarmPool(sandbox=sandbox, root=work_root / "warm")
        with pool.slot() as slot:
            scratch = slot.new_scratch(in_memory=True)
            roots = [folder.parent for folder in slot.dirs]
        # What a sample left where the lease's own sweep does not look.
        for root in roots:
            _lock_up(root / "left-behind")
        pool.close()
        return not (any(root.exists() for root in roots) or scratch.exists())

    _cleaned_up_as_an_unprivileged_user(job, prefix="codereval-test-pool-")
