"""A project whose source changed is evaluated against its new source, never a stale build."""

from __future__ import annotations

import json
from pathlib import Path

from codereval.families.codereval.records import load_records
from codereval.model import Sample, Verdict
from codereval.runners.base import RunContext
from codereval.runners.python import PythonProjectRunner
from codereval.sandbox import Limits, get_sandbox

HELPER_V1 = "SCALE = 2\n"
HELPER_V2 = "SCALE = 3\n"
TARGET = "from demo.helper import SCALE\n\n\ndef scaled(x):\n    return x * SCALE\n"
TEST = "from demo.target import scaled\n\nassert scaled(2) == {expected}\n"


def _project(root: Path, helper: str) -> None:
    package = root / "projects" / "acme---demo" / "demo"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text(helper)
    (package / "target.py").write_text(TARGET)


def _records(root: Path, expected: int) -> Path:
    record = {
        "_id": "fresh-1", "name": "scaled", "project": "acme/demo",
        "file_path": "demo/target.py", "package": "demo", "docstring": "", "human_label": "",
        "code": "def scaled(x):\n    return x * SCALE\n", "file_content": TARGET,
        "lineno": "4", "end_lineno": "5", "level": "project_runnable",
        "oracle_context": "", "all_context": "", "dependency": "", "test_name": "",
        "test_lineno": "", "test_kind": "script", "test_code": TEST.format(expected=expected),
    }  # fmt: skip
    path = root / "records.json"
    path.write_text(json.dumps({"RECORDS": [record]}))
    return path


def _verdict(root: Path, env_root: Path, records: Path) -> Verdict:
    (task,) = load_records(records)
    ctx = RunContext(
        sandbox=get_sandbox("auto"),
        limits=Limits(wall_time=20.0, memory_mb=1024),
        work_root=root / "work",
        env_root=env_root,
        projects_dir=root / "my-projects.toml",  # any manifest name works
    )
    runner = PythonProjectRunner()
    assert runner.prepare([task], ctx) == {}
    sample = Sample(task_id=task.task_id, code=task.reference)
    return runner.run(task, sample, ctx).verdict


def test_a_changed_source_gets_a_fresh_environment(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    env_root = tmp_path / "envs"
    (tmp_path / "my-projects.toml").write_text(
        '[projects."acme/demo"]\nlanguage = "python"\nsource = "projects/acme---demo"\n'
    )
    _project(tmp_path, HELPER_V1)
    assert _verdict(tmp_path, env_root, _records(tmp_path, expected=4)) is Verdict.PASSED
    # The project moves on: the same task now expects the new constant. A runner that reused
    # the environment built from the old source would fail the reference here.
    _project(tmp_path, HELPER_V2)
    assert _verdict(tmp_path, env_root, _records(tmp_path, expected=6)) is Verdict.PASSED
