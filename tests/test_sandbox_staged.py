"""A build and its run in one sandbox launch (``Sandbox.run_staged``).

bubblewrap runs both stages in one launch (a compiled HumanEval-X sample then pays one sandbox
start, not two); every other backend makes two ``run`` calls. Either way each stage has its own
limits, environment, output and verdict, and the run sees no descriptor of ours. Each case here
is run both ways, and the two must agree.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from codereval.sandbox import ExecRequest, ExecResult, Limits, Sandbox
from codereval.sandbox.bwrap import BwrapSandbox

pytestmark = pytest.mark.skipif(BwrapSandbox.unavailable_reason() is not None,
                                reason="bubblewrap does not work here")

PY = sys.executable
Staged = Callable[[ExecRequest, ExecRequest], tuple[ExecResult, ExecResult | None]]


@pytest.fixture(scope="module")
def bwrap() -> BwrapSandbox:
    sandbox = BwrapSandbox()
    if "cgroup(memory,pids,cpuacct" not in sandbox.isolation:
        pytest.skip("staging needs memory, pids and cpuacct cgroups")
    return sandbox


def both(sandbox: BwrapSandbox) -> dict[str, Staged]:
    """The one-launch path and the two-launch default of the interface, on the same backend."""
    return {"one launch": sandbox.run_staged,
            "two launches": lambda first, then: Sandbox.run_staged(sandbox, first, then)}


def request(tmp_path: Path, script: str, **limits: object) -> ExecRequest:
    return ExecRequest(argv=("/bin/sh", "-c", script), cwd=tmp_path, scratch=tmp_path,
                       env={"PATH": "/usr/bin:/bin", "STAGE": script[:8]},
                       limits=Limits(**limits))  # type: ignore[arg-type]


def python(tmp_path: Path, code: str, **limits: object) -> ExecRequest:
    return ExecRequest(argv=(PY, "-c", textwrap.dedent(code)), cwd=tmp_path, scratch=tmp_path,
                       env={"PATH": "/usr/bin:/bin"}, limits=Limits(**limits))  # type: ignore[arg-type]


def outcome(result: ExecResult | None) -> tuple[object, ...] | None:
    if result is None:
        return None
    return (result.exit_code, result.signal, result.timed_out, result.memory_exceeded,
            result.stdout, result.stderr, bool(result.sandbox_error))


def test_each_stage_keeps_its_own_output_status_and_environment(
        bwrap: BwrapSandbox, tmp_path: Path) -> None:
    first = request(tmp_path, "echo built; echo warning >&2; echo $STAGE > out")
    then = request(tmp_path, "echo ran $STAGE; cat out; echo oops >&2; exit 3")
    got = {name: staged(first, then) for name, staged in both(bwrap).items()}
    built, ran = got["one launch"]
    assert (built.exit_code, built.stdout, built.stderr) == (0, b"built\n", b"warning\n")
    assert ran is not None
    assert (ran.exit_code, ran.stdout, ran.stderr) == (3, b"ran echo ran\necho bui\n", b"oops\n")
    assert outcome(built) == outcome(got["two launches"][0])
    assert outcome(ran) == outcome(got["two launches"][1])
    assert ran.cpu_time is not None and built.cpu_time is not None


def test_a_failed_or_timed_out_build_runs_nothing(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    never = request(tmp_path, "touch ran")
    for staged in both(bwrap).values():
        failed, skipped = staged(request(tmp_path, "echo 'error: x' >&2; exit 2"), never)
        assert (failed.exit_code, failed.stderr, skipped) == (2, b"error: x\n", None)
        slow, skipped = staged(request(tmp_path, "sleep 30", wall_time=1.0), never)
        assert slow.timed_out and skipped is None
        assert not (tmp_path / "ran").exists()


def test_the_run_gets_its_own_wall_time(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    for staged in both(bwrap).values():
        built, ran = staged(request(tmp_path, "sleep 1.5", wall_time=30.0),
                            request(tmp_path, "sleep 30", wall_time=1.0))
        assert not built.timed_out and built.wall_time >= 1.4
        assert ran is not None and ran.timed_out and 0.9 <= ran.wall_time < 5


def test_the_run_gets_its_own_memory_limit(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    # 300 MB, touched: fine for a build allowed 1 GB, too much for a run allowed 128 MB.
    hog = """
        block = bytearray(300 << 20)
        block[::4096] = b"x" * len(block[::4096])
        print("held")
    """
    for name, staged in both(bwrap).items():
        built, ran = staged(python(tmp_path, hog, memory_mb=1024),
                            python(tmp_path, hog, memory_mb=128))
        assert built.stdout == b"held\n" and not built.memory_exceeded, name
        assert ran is not None and ran.memory_exceeded and not ran.timed_out, name
        built, ran = staged(python(tmp_path, hog, memory_mb=1024),
                            python(tmp_path, "print('small')", memory_mb=128))
        assert ran is not None and ran.stdout == b"small\n" and not ran.memory_exceeded, name


def test_the_run_is_charged_only_its_own_cpu_time(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    burn = """
        import time
        start = time.process_time()
        while time.process_time() - start < 2.5:
            pass
        print("burnt")
    """
    for name, staged in both(bwrap).items():
        # A build has no CPU limit; its 2.5 s do not count against the run's 1 s.
        built, ran = staged(python(tmp_path, burn, wall_time=30.0),
                            request(tmp_path, "echo fine", cpu_time=1.0, wall_time=30.0))
        assert built.stdout == b"burnt\n" and built.cpu_time is not None
        assert built.cpu_time >= 2.4, name
        assert ran is not None and ran.stdout == b"fine\n" and not ran.timed_out, name
        assert ran.cpu_time is not None and ran.cpu_time < 1.0, name
        built, ran = staged(request(tmp_path, "true"),
                            python(tmp_path, burn, cpu_time=1.0, wall_time=30.0))
        assert ran is not None and ran.timed_out and ran.stdout == b"", name


def test_the_run_gets_its_own_process_limit(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    fan = "for i in 1 2 3 4 5 6 7 8; do sleep 0.3 & done; wait; echo all"
    for name, staged in both(bwrap).items():
        built, ran = staged(request(tmp_path, fan, processes=64),
                            request(tmp_path, fan, processes=4))
        assert built.stdout == b"all\n", name
        assert ran is not None and ran.exit_code != 0 and b"fork" in ran.stderr, name


def test_the_run_sees_no_descriptor_of_ours_and_reads_dev_null(
        bwrap: BwrapSandbox, tmp_path: Path) -> None:
    look = "ls /proc/self/fd | tr '\\n' ' '; readlink /proc/self/fd/0"
    got = {name: staged(request(tmp_path, look), request(tmp_path, look))
           for name, staged in both(bwrap).items()}
    built, ran = got["one launch"]
    # 3 is ls's own listing of the directory.
    assert built.stdout == ran.stdout == b"0 1 2 3 /dev/null\n"  # type: ignore[union-attr]
    assert outcome(ran) == outcome(got["two launches"][1])


def test_the_run_gets_its_own_stdin_and_the_build_never_sees_it(
        bwrap: BwrapSandbox, tmp_path: Path) -> None:
    # The completion marker travels this way: written only once the build has ended, so
    # nothing the build runs (a compile-time include of /dev/stdin) can read it.
    first = request(tmp_path, "cat; readlink /proc/self/fd/0")
    then = replace(request(tmp_path, "cat; echo; cat"), stdin=b"SECRET\nmore")
    got = {name: staged(first, then) for name, staged in both(bwrap).items()}
    built, ran = got["one launch"]
    assert built.stdout == b"/dev/null\n"
    assert ran is not None and ran.stdout == b"SECRET\nmore\n"
    assert outcome(built) == outcome(got["two launches"][0])
    assert outcome(ran) == outcome(got["two launches"][1])
    # Still one launch: the run sees the build's private /tmp.
    _, ran = bwrap.run_staged(request(tmp_path, "echo mine > /tmp/left"),
                              replace(request(tmp_path, "cat /tmp/left; cat"), stdin=b"in"))
    assert ran is not None and ran.stdout == b"mine\nin"


def test_one_launch_really_is_one(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    # The sandbox's /tmp is private to a launch: the run sees the build's only when they share
    # one (the two stages are the same sample; nothing crosses to another launch).
    _, ran = bwrap.run_staged(request(tmp_path, "echo mine > /tmp/left"),
                              request(tmp_path, "cat /tmp/left"))
    assert ran is not None and ran.stdout == b"mine\n"
    _, ran = Sandbox.run_staged(bwrap, request(tmp_path, "echo mine > /tmp/left"),
                                request(tmp_path, "cat /tmp/left"))
    assert ran is not None and ran.exit_code != 0
    fresh = bwrap.run(request(tmp_path, "test -e /tmp/left && echo seen || echo unseen"))
    assert fresh.stdout == b"unseen\n"


def test_requests_that_cannot_share_a_launch_take_two(bwrap: BwrapSandbox,
                                                      tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    first = request(tmp_path, "echo mine > /tmp/left")
    then = ExecRequest(argv=("/bin/sh", "-c", "cat /tmp/left"), cwd=other, scratch=other,
                       env={"PATH": "/usr/bin:/bin"})
    built, ran = bwrap.run_staged(first, then)
    assert built.exit_code == 0 and ran is not None and ran.exit_code != 0


def test_a_program_built_in_a_scratch_directly_under_tmp_may_write_there(
        bwrap: BwrapSandbox) -> None:
    # /tmp is private in the sandbox, so a program under it is bound back read-only: never over
    # the scratch directory it lives in, which must stay writable for the build and the run.
    scratch = Path(tempfile.mkdtemp(prefix="staged-", dir="/tmp"))
    try:
        build = request(scratch, "printf '#!/bin/sh\\necho ran > ran.txt\\n' > prog; chmod +x prog")
        program = (str(scratch / "prog"),)
        then = ExecRequest(argv=program, cwd=scratch, scratch=scratch,
                           env={"PATH": "/usr/bin:/bin"})
        for name, staged in both(bwrap).items():
            (scratch / "ran.txt").unlink(missing_ok=True)
            built, ran = staged(build, then)
            assert built.exit_code == 0 and ran is not None, name
            assert (ran.exit_code, ran.stderr) == (0, b""), name
            assert (scratch / "ran.txt").read_text() == "ran\n", name
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
