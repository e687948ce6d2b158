"""A run directory the machine stops taking writes to: a full disk, a read-only file system.

The run stops with one line naming the directory and the reason (exit status 3), what was
committed stays intact, and the same command, once the directory can be written, resumes
without running a finished sample again. The full disk is real: a small tmpfs that bubblewrap
mounts for the run (its own mount namespace, so nothing on the host fills up), filled up by a
sample of the run itself; the read-only store is a read-only bind mount over the run directory.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from codereval.api import load_benchmark
from codereval.errors import RunDirUnwritable
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.storage.store import unwritable

pytestmark = pytest.mark.skipif(
    BwrapSandbox.unavailable_reason() is not None, reason="bubblewrap unavailable"
)

CODEREVAL = str(Path(sys.executable).parent / "codereval")
NORMALIZE = "fe3947f5ba6363ba3802a73e"  # mini-python: normalize_whitespace, a module function
SAMPLES = 24
FILLER = 8


def samples(log: Path, small: Path) -> list[dict[str, object]]:
    """Passing samples that log their index as they start (on the real disk); the FILLER-th
    fills the small disk up, once (its flag is on the real disk as well)."""
    tasks = load_benchmark("mini-python").tasks
    reference = next(t for t in tasks if t.task_id == NORMALIZE).reference
    fill = (
        f"import os\nflag = {str(log) + '.filled'!r}\n"
        "if not os.path.exists(flag):\n"
        "    open(flag, 'w').close()\n"
        f"    with open({str(small / 'filler')!r}, 'wb', buffering=0) as out:\n"
        "        for size in (1 << 16, 1 << 12, 1 << 9, 1):\n"
        "            try:\n"
        "                while True:\n"
        "                    out.write(bytes(size))\n"
        "            except OSError:\n"
        "                pass\n"
    )
    rows = []
    for index in range(SAMPLES):
        logger = f"open({str(log)!r}, 'a').write('{index}\\n')\n"
        code = reference + logger + (fill if index == FILLER else "")
        rows.append({"task_id": NORMALIZE, "index": index, "code": code})
    return rows


# Runs inside the mount namespace that has the small disk: evaluate until the disk is full,
# look at the store, free the disk, evaluate again; report on the real disk.
SCENARIO = """
import json, shutil, sqlite3, subprocess, sys
from pathlib import Path

argv, small, report = json.loads(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
found = {}
first = subprocess.run(argv, capture_output=True, text=True, timeout=300)
found["first"] = [first.returncode, first.stderr]
store = small / "run" / "results.sqlite"
with sqlite3.connect(store) as db:
    found["integrity"] = db.execute("PRAGMA integrity_check").fetchone()[0]
    found["committed"] = sorted(i for (i,) in db.execute("SELECT sample_index FROM outcomes"))
(small / "filler").unlink()
second = subprocess.run(argv, capture_output=True, text=True, timeout=300)
found["second"] = [second.returncode, second.stdout, second.stderr]
with sqlite3.connect(store) as db:
    found["final"] = [list(r) for r in db.execute(
        "SELECT sample_index, verdict FROM outcomes ORDER BY sample_index")]
found["outcomes"] = [json.loads(line)["sample_index"]
                     for line in (small / "run" / "outcomes.jsonl").read_text().splitlines()]
report.write_text(json.dumps(found))
"""


@pytest.mark.slow
def test_a_full_disk_stops_the_run_in_one_line_and_the_same_command_resumes(
    tmp_path: Path,
) -> None:
    small = tmp_path / "small"
    small.mkdir()
    log, rows = tmp_path / "started.log", tmp_path / "samples.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in samples(log, small)))
    argv = [
        CODEREVAL, "evaluate", "--benchmark", "mini-python", "--samples", str(rows),
        "--sandbox", "none", "--jobs", "1", "--out", str(small / "run"),
    ]  # fmt: skip
    report = tmp_path / "report.json"
    bwrap = shutil.which("bwrap") or "bwrap"
    done = subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--size", str(2 << 20), "--tmpfs", str(small),
         sys.executable, "-c", SCENARIO, json.dumps(argv), str(small), str(report)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(report.read_text())

    code, stderr = found["first"]
    assert code == 3, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot write the run directory {small / 'run'}: no space left")
    assert "run the same command again" in last and "Traceback" not in stderr
    # Intact, and holding what finished before the disk filled up (never the samples after).
    assert found["integrity"] == "ok"
    assert FILLER - 1 in found["committed"] or not found["committed"]
    assert all(i <= FILLER for i in found["committed"])

    code, stdout, stderr = found["second"]
    assert code == 0, stderr
    assert f"{len(found['committed'])} already done" in stdout
    assert found["final"] == [[i, "passed"] for i in range(SAMPLES)]
    assert found["outcomes"] == list(range(SAMPLES))
    # No finished sample ran again: each ran once, but those the full disk kept from being
    # recorded, which ran once more.
    started = [int(line) for line in log.read_text().split()]
    assert sorted(set(started)) == list(range(SAMPLES))
    again = {i for i in started if started.count(i) > 1}
    assert not again & set(found["committed"])


def test_a_read_only_run_directory_is_one_line_and_the_store_is_untouched(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    first = subprocess.run(
        [CODEREVAL, "evaluate", "--benchmark", "mini-python", "--reference", "--repeat", "1",
         "--only-level", "self_contained", "--out", str(run)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in run.iterdir()}
    bwrap = shutil.which("bwrap") or "bwrap"
    again = subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(run), str(run),
         CODEREVAL, "evaluate", "--benchmark", "mini-python", "--reference", "--repeat", "1",
         "--only-level", "self_contained", "--out", str(run)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 3, again.stderr
    lines = [line for line in again.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, again.stderr
    assert lines[0].startswith(f"error: cannot write the run directory {run}: ")
    assert "read-only" in lines[0] or "cannot be opened for writing" in lines[0]
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in run.iterdir()}
    assert after == before


def test_only_refused_writes_are_told_as_an_unwritable_run_directory(tmp_path: Path) -> None:
    import errno

    full = unwritable(OSError(errno.ENOSPC, "No space left on device"), tmp_path)
    assert isinstance(full, RunDirUnwritable) and full.exit_code == 3
    assert "no space left" in full.one_line()
    assert unwritable(sqlite3.OperationalError("database or disk is full"), tmp_path)
    assert unwritable(sqlite3.OperationalError("attempt to write a readonly database"), tmp_path)
    # A bug or a damaged store is not dressed up as a full disk.
    assert unwritable(OSError(errno.ENOENT, "No such file"), tmp_path) is None
    assert unwritable(sqlite3.OperationalError("no such table: outcomes"), tmp_path) is None
    assert unwritable(ValueError("bad"), tmp_path) is None
