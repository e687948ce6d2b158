"""What the hostile corpus aims at on the host, and the checks that see whether it got there.

A ``Host`` holds a file to overwrite, one to create, a secret in the host's /tmp, /dev/shm and
in a folder shaped like another evaluation's samples, and TCP, UDP and unix-socket listeners
that record what reaches them. ``host_problems`` says what got out; ``problems_of`` what is
wrong with one outcome (a pass, a verdict that is the harness's fault, the secret printed).
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from live_processes import live_pids_with
from test_marker_secrecy_programs import describe

from codereval.executors.sample import WORK_PREFIX
from codereval.model import Outcome, Verdict

# What may end at the wall-time limit rather than by itself.
MAY_TIME_OUT = {"sleeps past the limit", "busy past the limit", "endless output", "fork bomb",
                "spawn bomb", "thread bomb", "worker thread bomb", "goroutine bomb",
                "memory hog", "disk hog", "reads other samples' folders"}

# What the toolchain may refuse to build (the attempt is then over before it runs).
MAY_BE_REFUSED = {"a main of its own, the test's renamed",
                  "a class named Arrays shadows the test's", "a class named AssertionError",
                  "a package variable named like the test's assert", "a TestMain of its own"}


@dataclasses.dataclass
class Host:
    """What the programs aim at on the host, and what reached it."""

    values: dict[str, object]
    canary: Path
    canary_text: str
    outside: Path
    secret: str
    received: list[str]


@contextmanager
def open_host(tmp_path: Path) -> Iterator[Host]:
    token = secrets.token_hex(8)
    # Outside /tmp: the sandbox's root is the host's, read-only, so the program can see it.
    aimed = Path("/var/tmp") / f"codereval-hostile-{token}"
    aimed.mkdir()
    canary, outside = aimed / "canary", aimed / "created"
    canary.write_text(f"canary {token}\n")
    secret = f"SECRET-{token}"
    (tmp_path / "secret").write_text(secret)
    shm_secret = Path("/dev/shm") / f"codereval-hostile-{secret}"
    shm_secret.write_text(secret)
    # A folder as another evaluation of this machine has it, a sample's file inside (named
    # after this process, which is alive: no evaluation sweeps it as left behind).
    others = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-"))
    (others / "sample-7").mkdir()
    (others / "sample-7" / "solution.py").write_text(f"# {secret}\n")
    received: list[str] = []
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "host.sock"))
    unix.listen(16)
    stop = threading.Event()

    def listen(sock: socket.socket, kind: str, accept: bool) -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                if accept:
                    conn, _ = sock.accept()
                    received.append(f"{kind} connection")
                    conn.close()
                else:
                    sock.recvfrom(64)
                    received.append(f"{kind} datagram")
            except OSError:
                continue

    threads = [threading.Thread(target=listen, args=args, daemon=True)
               for args in ((tcp, "tcp", True), (udp, "udp", False), (unix, "unix", True))]
    for thread in threads:
        thread.start()
    values: dict[str, object] = {
        "canary": canary, "outside": outside, "secret": tmp_path / "secret",
        "tcp": tcp.getsockname()[1], "udp": udp.getsockname()[1], "sock": tmp_path / "host.sock",
        "sleep": 7000 + secrets.randbelow(2000), "others": others.parent,
    }
    try:
        yield Host(values, canary, canary.read_text(), outside, secret, received)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for sock in (tcp, udp, unix):
            sock.close()
        shm_secret.unlink(missing_ok=True)
        shutil.rmtree(aimed, ignore_errors=True)
        shutil.rmtree(others, ignore_errors=True)


def host_problems(host: Host) -> list[str]:
    """What reached the host: sleepers alive, listeners' mail, the host files touched."""
    found = []
    sleepers = f"sleep {host.values['sleep']}"
    deadline = time.monotonic() + 5
    while live_pids_with(sleepers, exact=True) and time.monotonic() < deadline:
        time.sleep(0.1)
    if live_pids_with(sleepers, exact=True):
        found.append(f"survivors: {live_pids_with(sleepers, exact=True)}")
    time.sleep(0.5)  # what a listener was sent is in by now
    if host.received:
        found.append(f"the host's listeners got: {sorted(set(host.received))}")
    if host.canary.read_text() != host.canary_text:
        found.append("the host file was overwritten")
    if host.outside.exists():
        found.append("a host file was created")
    return found


def problems_of(label: str, outcome: Outcome, host: Host) -> list[str]:
    said = f"{label}:\n{describe(outcome)}"
    found = []
    if outcome.verdict is Verdict.PASSED:
        found.append(f"PASSED {said}")
    refused = (Verdict.COMPILE_ERROR, Verdict.SYNTAX_ERROR) if label in MAY_BE_REFUSED else ()
    if outcome.verdict in (Verdict.COMPILE_ERROR, Verdict.SYNTAX_ERROR, Verdict.INFRA_ERROR) and (
            outcome.verdict not in refused):
        found.append(f"{outcome.verdict.value} (a bug of this test or the harness) {said}")
    if outcome.verdict is Verdict.TIMEOUT and label not in MAY_TIME_OUT:
        found.append(f"timed out {said}")
    if host.secret in outcome.stdout_tail + outcome.stderr_tail + outcome.detail:
        found.append(f"printed the host's secret {said}")
    return found
