"""The wheel, installed into a fresh virtual environment, runs the demo and the API example."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO


@pytest.mark.slow
def test_the_installed_wheel_runs_the_demo_and_the_api_example(
    shared_data: Path, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "HUMANEVALX_DIR": str(shared_data / "humanevalx"),
        "TMPDIR": str(tmp_path),
    }
    env.pop("CODEREVAL_HOME", None)
    # A checkout's sources on PYTHONPATH (as when a worktree borrows another's venv) would be
    # imported instead of the wheel the test installed.
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "wheel-smoke.sh")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "wheel-smoke: ok" in done.stdout
    assert "KiB with plots" in done.stdout  # `codereval demo` ends with the HTML report
    assert "python block(s) ran" in done.stdout
    assert not list(tmp_path.glob("codereval-wheel-smoke.*"))  # the scratch is removed
