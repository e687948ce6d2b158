"""The sandbox parts below the backends: output capping, limits as prlimit words, the registry,
the cgroups' life cycle, and what bubblewrap hides and drops."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from codereval.errors import UserError
from codereval.sandbox import ExecRequest, Limits, Mount, get_sandbox, sandbox_class
from codereval.sandbox._supervise import OutputCap, supervise
from codereval.sandbox.bwrap import BwrapSandbox, _probe_bwrap
from codereval.sandbox.cgroup import RunCgroup, cgroup_unavailable_reason
from codereval.sandbox.rlimit import prlimit_prefix


def test_output_cap_keeps_everything_below_the_limit() -> None:
    cap = OutputCap(10)
    cap.add(b"hello")
    cap.add(b"world")
    assert (cap.value(), cap.truncated) == (b"helloworld", False)


def test_output_cap_keeps_head_and_tail_and_says_how_much_was_dropped() -> None:
    cap = OutputCap(10)
    for chunk in (b"HEAD-", b"middle" * 1000, b"-TAIL"):
        cap.add(chunk)
    value = cap.value()
    assert cap.truncated
    assert value.startswith(b"HEAD-") and value.endswith(b"-TAIL")
    assert b"6000 bytes of output dropped" in value


def test_prlimit_words_say_which_limits_were_applied() -> None:
    limits = Limits(cpu_time=1.5, file_size_mb=2, memory_mb=100, processes=7)
    words, applied = prlimit_prefix("prlimit", limits, memory=True, processes=True)
    assert words == [
        "prlimit", "--core=0", "--cpu=2:3", f"--fsize={2 << 20}", "--nproc=7",
        f"--as={100 << 20}", "--",
    ]  # fmt: skip
    assert applied == ["cpu", "fsize", "nproc", "as"]


def test_address_space_limit_can_be_refused_by_the_request() -> None:
    # JVMs: memory is then limited by the caller (-Xmx) or a memory cgroup.
    limits = Limits(memory_mb=100, address_space=False, cpu_time=None, file_size_mb=None)
    words, applied = prlimit_prefix("prlimit", limits, memory=True, processes=False)
    assert (words, applied) == (["prlimit", "--core=0", "--"], [])


def test_rlimit_isolation_names_exactly_what_it_applied(tmp_path: Path) -> None:
    request = ExecRequest(
        argv=("true",), cwd=tmp_path, scratch=tmp_path, env={},
        limits=Limits(cpu_time=2, memory_mb=64, address_space=False),
    )  # fmt: skip
    result = get_sandbox("rlimit").run(request)
    expected = "rlimit(cpu,fsize)" if os.geteuid() == 0 else "rlimit(cpu,fsize,nproc)"
    assert (result.exit_code, result.isolation) == (0, expected)


def test_unknown_sandbox_is_a_user_error_listing_the_choices() -> None:
    with pytest.raises(UserError, match="bwrap, rlimit, none"):
        get_sandbox("docker")


def test_auto_prefers_bwrap_when_it_works() -> None:
    expected = "bwrap" if BwrapSandbox.unavailable_reason() is None else "rlimit"
    assert get_sandbox("auto").name == expected


def test_missing_bwrap_explains_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    _probe_bwrap.cache_clear()
    try:
        reason = sandbox_class("bwrap").unavailable_reason()
        assert reason is not None and "apt-get install bubblewrap" in reason
        with pytest.raises(UserError, match="not available"):
            get_sandbox("bwrap")
    finally:
        _probe_bwrap.cache_clear()


@pytest.mark.parametrize("name", ["none", "rlimit"])
def test_backends_without_mount_namespace_refuse_moved_mounts(name: str, tmp_path: Path) -> None:
    request = ExecRequest(
        argv=("true",), cwd=tmp_path, scratch=tmp_path, env={},
        mounts=(Mount(source=tmp_path, target=Path("/elsewhere")),),
    )  # fmt: skip
    result = get_sandbox(name).run(request)
    assert result.exit_code is None and "cannot mount" in result.sandbox_error


needs_bwrap = pytest.mark.skipif(
    BwrapSandbox.unavailable_reason() is not None, reason="bubblewrap unavailable"
)
needs_cgroups = pytest.mark.skipif(
    cgroup_unavailable_reason() is not None, reason="cgroups unavailable"
)


@needs_cgroups
def test_run_cgroup_is_limited_and_removed() -> None:
    group = RunCgroup.create(memory_bytes=64 << 20, pids_max=5)
    try:
        assert (group.dirs["pids"] / "pids.max").read_text().strip() == "5"
        limit = (group.dirs["memory"] / "memory.limit_in_bytes").read_text()
        assert int(limit) == 64 << 20
    finally:
        assert group.kill_all() and group.remove()
    assert not any(path.exists() for path in group.dirs.values())


needs_freezer = pytest.mark.skipif(
    not Path("/sys/fs/cgroup/freezer/cgroup.procs").exists(), reason="no v1 freezer"
)


@needs_cgroups
@needs_freezer
def test_kill_all_signals_members_only_while_they_are_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A member that exits frees its pid for anyone; frozen, it cannot exit before its kill."""
    group = RunCgroup.create(memory_bytes=None, pids_max=200)
    state = group.dirs["freezer"] / "freezer.state"
    bomb = subprocess.Popen(
        [*group.join_prefix("/bin/sh"), "sh", "-c",
         "while :; do sleep 60 & sleep 0.01; done"],
        start_new_session=True,
    )
    try:
        give_up = time.monotonic() + 30
        while len(group.pids()) < 10 and time.monotonic() < give_up:
            time.sleep(0.05)
        assert len(group.pids()) >= 10
        states: list[str] = []
        real_kill = os.kill

        def kill(pid: int, sig: int) -> None:
            states.append(state.read_text().strip())
            real_kill(pid, sig)

        monkeypatch.setattr(os, "kill", kill)
        assert group.kill_all()
        monkeypatch.undo()
        assert states and set(states) == {"FROZEN"}
        assert state.read_text().strip() == "THAWED"
        bomb.wait(timeout=30)
    finally:
        bomb.kill()
        bomb.wait()
        assert group.kill_all() and group.remove()


@needs_cgroups
def test_a_frozen_cgroup_left_by_a_dead_supervisor_is_emptied_and_removed_by_the_next() -> None:
    # A supervisor killed between kill_all's freeze and thaw leaves its members frozen, where
    # not even SIGKILL ends them (seen: a fork bomb's 256 processes outliving a killed Ray
    # node). The next codereval on the machine ends them and removes their cgroups.
    from codereval.sandbox.cgroup import _sweep, probe

    usable = probe()[0]
    if "freezer" not in usable:
        pytest.skip("no freezer cgroup")
    gone = subprocess.Popen(["true"])
    gone.wait()
    name = f"run-{gone.pid}-1"
    dirs = {controller: base / name for controller, base in usable.items()}
    for path in dirs.values():
        path.mkdir()
    left = subprocess.Popen(["sleep", "600"])
    try:
        for path in dirs.values():
            (path / "cgroup.procs").write_text(str(left.pid))
        (dirs["freezer"] / "freezer.state").write_text("FROZEN")
        time.sleep(0.2)
        left.kill()
        with pytest.raises(subprocess.TimeoutExpired):
            left.wait(timeout=0.5)  # frozen: the kill waits for a thaw that never comes
        _sweep(usable)
        assert left.wait(timeout=10) == -9
        assert not any(path.exists() for path in dirs.values())
    finally:
        with contextlib.suppress(OSError):
            (dirs["freezer"] / "freezer.state").write_text("THAWED")
        left.kill()
        left.wait()
        for path in dirs.values():
            with contextlib.suppress(OSError):
                path.rmdir()


@needs_bwrap
@needs_cgroups
def test_bwrap_leaves_no_cgroup_behind(tmp_path: Path) -> None:
    sandbox = get_sandbox("bwrap")
    parents = {p.parent for p in RunCgroup.create(memory_bytes=None, pids_max=None).dirs.values()}
    request = ExecRequest(argv=("sh", "-c", "sleep 5 &"), cwd=tmp_path, scratch=tmp_path, env={})
    sandbox.run(request)
    leftovers = [p for parent in parents for p in parent.glob(f"run-{os.getpid()}-*")]
    # The probe group above was not removed on purpose; every run's group was.
    assert len(leftovers) == len(parents)
    for path in leftovers:
        path.rmdir()


@needs_bwrap
def test_bwrap_drops_every_capability_and_hides_host_tmp(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "host-secret").write_text("x")
    script = f"grep CapEff /proc/self/status; ls {tmp_path}; hostname; id -u"
    request = ExecRequest(argv=("sh", "-c", script), cwd=scratch, scratch=scratch, env={})
    result = get_sandbox("bwrap").run(request)
    lines = result.stdout.decode().split()
    assert lines[:2] == ["CapEff:", "0000000000000000"]
    # Only the scratch dir is visible below the host's /tmp.
    assert "host-secret" not in lines and "scratch" in lines


@needs_bwrap
def test_a_program_installed_under_tmp_still_runs_read_only(tmp_path: Path) -> None:
    # A checkout or virtualenv under /tmp (a CI clone) must not vanish behind the private /tmp;
    # only its installation comes back, not what lives beside it (other runs' results).
    install = Path(tempfile.mkdtemp(prefix="cr-install-", dir="/tmp"))
    try:
        tool = install / "venv" / "bin" / "tool"
        tool.parent.mkdir(parents=True)
        (install / "venv" / "lib").mkdir()
        (install / "other-run").mkdir()
        (install / "other-run" / "results.jsonl").write_text("secret\n")
        tool.write_text(
            "#!/bin/sh\necho ran; ls $(dirname $0)/../lib >/dev/null && echo lib;"
            f" echo x > {install}/venv/written || echo refused;"
            f" cat {install}/other-run/results.jsonl || echo hidden\n")
        tool.chmod(0o755)
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        request = ExecRequest(argv=(str(tool),), cwd=scratch, scratch=scratch, env={})
        result = get_sandbox("bwrap").run(request)
        assert result.stdout.splitlines() == [b"ran", b"lib", b"refused", b"hidden"], (
            result.stderr)
        assert not (install / "venv" / "written").exists()
    finally:
        shutil.rmtree(install)


@needs_bwrap
def test_a_program_inside_a_mount_brings_nothing_else_from_tmp(tmp_path: Path) -> None:
    # A project environment the runner mounts is all of /tmp the run sees: not the folder the
    # environment sits in, with its siblings.
    root = Path(tempfile.mkdtemp(prefix="cr-runs-", dir="/tmp"))
    try:
        env = root / "envs" / "env-1"
        tool = env / "bin" / "tool"
        tool.parent.mkdir(parents=True)
        tool.write_text(f"#!/bin/sh\necho ran; ls {root}/envs; cat {root}/results || echo hidden\n")
        tool.chmod(0o755)
        (root / "envs" / "env-2").mkdir()
        (root / "results").write_text("secret\n")
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        request = ExecRequest(argv=(str(tool),), cwd=scratch, scratch=scratch, env={},
                              mounts=(Mount(source=env, target=env),))
        result = get_sandbox("bwrap").run(request)
        assert result.stdout.splitlines() == [b"ran", b"env-1", b"hidden"], result.stderr
    finally:
        shutil.rmtree(root)


@needs_bwrap
def test_bwrap_mounts_a_directory_at_another_path_read_only(tmp_path: Path) -> None:
    source = tmp_path / "env"
    source.mkdir()
    (source / "lib.txt").write_text("library\n")
    request = ExecRequest(
        argv=("sh", "-c", "cat /tmp/cr-env/lib.txt; echo x > /tmp/cr-env/new || echo refused"),
        cwd=tmp_path, scratch=tmp_path, env={"PATH": "/usr/bin:/bin"},
        mounts=(Mount(source=source, target=Path("/tmp/cr-env")),),
    )  # fmt: skip
    result = get_sandbox("bwrap").run(request)
    assert result.stdout.splitlines() == [b"library", b"refused"]
    assert not (source / "new").exists()


@needs_bwrap
def test_bwrap_mounts_at_a_path_the_host_lacks_without_creating_it(tmp_path: Path) -> None:
    # The original CoderEval machine's /home/travis/builds/repos: read-only tree, writable project.
    tree, project = tmp_path / "repos", tmp_path / "scratch" / "project"
    (tree / "standalone").mkdir(parents=True)
    (tree / "standalone" / "t.py").write_text("standalone\n")
    (tree / "p").mkdir()  # a mount inside a read-only mount needs its mount point there
    project.mkdir(parents=True)
    virtual = Path("/home/cr-virtual/builds/repos")
    script = (f"cat {virtual}/standalone/t.py; echo out > {virtual}/p/new && echo wrote; "
              f"echo x > {virtual}/standalone/u || echo refused; pwd")
    request = ExecRequest(
        argv=("sh", "-c", script), cwd=virtual / "p", scratch=tmp_path / "scratch",
        env={"PATH": "/usr/bin:/bin"},
        mounts=(Mount(source=tree, target=virtual),
                Mount(source=project, target=virtual / "p", writable=True)),
    )  # fmt: skip
    result = get_sandbox("bwrap").run(request)
    assert result.stdout.decode().split() == ["standalone", "wrote", "refused", f"{virtual}/p"]
    assert (project / "new").read_text() == "out\n"
    assert not (tree / "standalone" / "u").exists()
    assert not Path("/home/cr-virtual").exists()


@needs_bwrap
def test_bwrap_reports_its_own_failure_as_a_sandbox_error(tmp_path: Path) -> None:
    request = ExecRequest(
        argv=(sys.executable, "-c", "pass"), cwd=tmp_path, scratch=tmp_path, env={},
        mounts=(Mount(source=tmp_path / "missing", target=Path("/opt/cr-missing")),),
    )  # fmt: skip
    result = get_sandbox("bwrap").run(request)
    assert result.sandbox_error.startswith("bwrap: ")


def test_supervisor_works_without_pidfd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Kernels before 5.3 have no pidfd: the child's exit is then found by polling.
    def no_pidfd(pid: int, flags: int = 0) -> int:
        raise OSError("pidfd_open unsupported")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    done = supervise(
        ["sh", "-c", "cat; exit 4"], cwd=tmp_path, env={}, stdin=b"in", wall_time=5,
        output_bytes=100,
    )  # fmt: skip
    assert (done.exit_code, done.stdout, done.timed_out) == (4, b"in", False)
    slow = supervise(
        ["sleep", "5"], cwd=tmp_path, env={}, stdin=None, wall_time=0.3, output_bytes=100
    )
    assert (slow.signal, slow.timed_out) == (9, True) and slow.wall_time < 1.5


def test_a_listed_stray_is_killed_only_if_its_pid_still_names_the_same_process() -> None:
    """Between listing a tree and killing it a stray may exit and its pid go to someone else."""
    from codereval.sandbox._supervise import _kill_if_same, descendants

    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        [(pid, start)] = [d for d in descendants(os.getpid()) if d[0] == sleeper.pid]
        _kill_if_same(pid, start + 1)  # as if a newer process had taken the pid
        assert sleeper.poll() is None
        _kill_if_same(pid, start)
        assert sleeper.wait(timeout=10) == -9
    finally:
        sleeper.kill()
        sleeper.wait()
