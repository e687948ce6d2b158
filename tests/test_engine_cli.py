"""`codereval evaluate` from the command line: summary, errors, and surviving Ctrl-C and kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from test_engine_support import (
    ADD,
    LOG_ENV,
    NEG,
    passing_samples,
    read_log,
    write_records,
    write_samples,
)

from codereval.cli.app import main
from codereval.model import Sample
from codereval.runners import RUNNERS

TESTS = Path(__file__).resolve().parent
# A real `codereval evaluate` process whose Python tasks go to the test's SnippetRunner.
LAUNCH = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from codereval.runners import RUNNERS
RUNNERS["python-project"] = "test_engine_support:SnippetRunner"
from codereval.cli.app import main
main(sys.argv[1:])
"""


@pytest.fixture
def snippet_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RUNNERS, "python-project", "test_engine_support:SnippetRunner")


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def inputs(tmp_path: Path, samples: list[Sample]) -> list[str]:
    records = write_records(tmp_path / "records.json", [ADD, NEG])
    sample_file = write_samples(tmp_path / "samples.jsonl", samples)
    return ["evaluate", "--tasks", str(records), "--samples", str(sample_file)]


@pytest.mark.usefixtures("snippet_registry")
def test_evaluate_prints_a_summary_and_writes_the_run_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = Sample(task_id="neg", index=0, code="def neg(x):\n  return x")
    samples = [*passing_samples(ADD, 2), wrong]
    out_dir = tmp_path / "run"
    args = [*inputs(tmp_path, samples), "--sandbox", "none", "--jobs", "2", "--out", str(out_dir)]
    code, out, err = cli(args, capsys)
    assert code == 0, err
    assert "WARNING: --sandbox none" in err
    assert "passed 2" in out and "failed 1" in out
    assert "pass@1: 50.00%" in out  # add 2/2, neg 0/1
    assert "isolation none" in out
    names = {p.name for p in out_dir.iterdir()}
    assert {"run.json", "tasks.jsonl", "samples.jsonl", "outcomes.jsonl", "results.sqlite"} <= names
    assert "samples.jsonl_out.jsonl" in names
    meta = json.loads((out_dir / "run.json").read_text())
    assert meta["benchmark"]["source_sha256"] and meta["sandbox"]["isolation"] == "none"


@pytest.mark.usefixtures("snippet_registry")
def test_unknown_task_ids_in_samples_fail_in_one_line_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = [*passing_samples(ADD, 1), Sample(task_id="deadbeef", index=0, code="x = 1")]
    out_dir = tmp_path / "run"
    args = [*inputs(tmp_path, samples), "--sandbox", "none", "--out", str(out_dir)]
    code, _, err = cli(args, capsys)
    assert code == 2
    assert err.strip().startswith("error:") and "deadbeef" in err
    assert len(err.strip().splitlines()) == 1
    assert not out_dir.exists()


def test_missing_toolchain_is_reported_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(RUNNERS, "python-project", "test_engine_support:BrokenToolchainRunner")
    out_dir = tmp_path / "run"
    args = [*inputs(tmp_path, passing_samples(ADD, 1)), "--sandbox", "none", "--out", str(out_dir)]
    code, _, err = cli(args, capsys)
    assert code == 2 and "snippetc is not installed" in err
    assert not out_dir.exists()


def test_nothing_to_evaluate_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(["evaluate", "--out", str(tmp_path / "run")], capsys)
    assert code == 2 and "--tasks RECORDS or --benchmark NAME" in err


def _start(args: list[str], log: Path) -> subprocess.Popen[str]:
    env = {**os.environ, LOG_ENV: str(log)}
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stored(out_dir: Path) -> set[str]:
    store = out_dir / "results.sqlite"
    if not store.exists():
        return set()
    with sqlite3.connect(store) as conn:
        try:
            rows = conn.execute("SELECT task_id, sample_index FROM outcomes").fetchall()
        except sqlite3.OperationalError:
            return set()  # the schema is not there yet
    return {f"{t}#{i}" for t, i in rows}


def _wait_for_outcomes(out_dir: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while len(_stored(out_dir)) < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no outcomes appeared"
        time.sleep(0.05)


SLOW_COUNT = 30


def _slow_samples(count: int) -> list[Sample]:
    code = "import time\ntime.sleep(0.3)\ndef add(a, b):\n    return a + b\n"
    return [Sample(task_id="add", index=i, code=code) for i in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill -9", "ctrl-c"])
def test_an_interrupted_run_resumes_without_running_a_finished_sample_again(
    tmp_path: Path, how: str
) -> None:
    # Enough work that the run is still going when the interruption lands, on a loaded machine.
    samples = _slow_samples(SLOW_COUNT)
    out_dir = tmp_path / "run"
    args = [*inputs(tmp_path, samples), "--sandbox", "none", "--jobs", "2", "--out", str(out_dir)]
    log = tmp_path / "runs.log"
    proc = _start(args, log)
    _wait_for_outcomes(out_dir, 3, proc)
    if how == "kill -9":
        proc.kill()
        proc.communicate()
    else:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130
        last = err.strip().splitlines()[-1]
        assert last.startswith("error: interrupted;") and "re-run the same command" in last
        meta = json.loads((out_dir / "run.json").read_text())
        assert meta["status"] == "interrupted"
    finished_before = _stored(out_dir)
    with sqlite3.connect(out_dir / "results.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert 3 <= len(finished_before) < SLOW_COUNT
    runs_before = len(read_log(log))

    resumed = _start(args, log)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert f"{len(finished_before)} already done" in out
    after = read_log(log)[runs_before:]
    # No finished sample ran again, every other one ran, and the result is complete.
    assert not finished_before & set(after)
    assert set(after) == {f"add#{i}" for i in range(SLOW_COUNT)} - finished_before
    outcomes = (out_dir / "outcomes.jsonl").read_text().splitlines()
    assert len(outcomes) == SLOW_COUNT
    assert all(json.loads(line)["verdict"] == "passed" for line in outcomes)
    assert json.loads((out_dir / "run.json").read_text())["status"] == "finished"
    # Whatever scratch the interrupted process left behind is gone.
    assert not list(Path(tempfile.gettempdir()).glob(f"codereval-work-{proc.pid}-*"))


@pytest.mark.usefixtures("snippet_registry")
def test_the_disk_limit_is_recorded_and_part_of_the_runs_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "run"
    args = [*inputs(tmp_path, passing_samples(ADD, 1)), "--sandbox", "none", "--out", str(out_dir)]
    code, _, err = cli([*args, "--disk", "64"], capsys)
    assert code == 0, err
    meta = json.loads((out_dir / "run.json").read_text())
    assert meta["options"]["disk_mb"] == 64 and meta["identity"]["disk_mb"] == 64
    # Another limit is another run; the default is not written into the identity at all, so
    # run directories from before the limit existed resume.
    code, _, err = cli(args, capsys)
    assert code == 2 and err.strip().startswith("error:")
    code, _, err = cli([*args, "--disk", "0"], capsys)
    assert code == 2 and "--disk" in err
    fresh = tmp_path / "fresh"
    code, _, err = cli([*inputs(tmp_path, passing_samples(ADD, 1)), "--sandbox", "none",
                        "--out", str(fresh)], capsys)
    assert code == 0, err
    assert "disk_mb" not in json.loads((fresh / "run.json").read_text())["identity"]
