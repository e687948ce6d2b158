"""A project's bytecode, compiled once and linked into workspaces: used where a module is the
project's own, never for a file a sample changed (environments/bytecode.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codereval import model
from codereval.environments.base import Environment, ProjectSpec
from codereval.environments.bytecode import RECORD, bytecode_folder, compiled_bytecode
from codereval.environments.python import PythonEnvironmentBuilder, default_root, find_interpreter
from codereval.model import Language, Location, Sample, Task, TestSpec, Verdict
from codereval.runners.base import RunContext
from codereval.runners.python import PythonProjectRunner
from codereval.sandbox import Limits, get_sandbox
from codereval.workspace.cache import WorkspaceCache
from codereval.workspace.views import SEALED_UID, make_workspace, seal

TAG = sys.implementation.cache_tag
ROOT = os.geteuid() == 0


def _env(tmp_path: Path) -> Environment:
    """An environment folder whose sealed source is a package of two modules and a script."""
    path = tmp_path / "envs" / "me---proj-0123456789abcdef"
    src = path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "mod.py").write_text("def f():\n    return 'base'\n")
    (src / "pkg" / "other.py").write_text("def g():\n    return 'other'\n")
    (src / "py2only.py").write_text("print 'not python 3'\n")
    (src / ".git").mkdir()
    (src / ".git" / "hook.py").write_text("X = 1\n")
    (src / "run.py").write_text("import pkg.mod, pkg.other\nprint(pkg.mod.f(), pkg.other.g())\n")
    seal(src)
    spec = ProjectSpec(name="me/proj", language=Language.PYTHON, source="src")
    return Environment(spec=spec, path=path, key="0123456789abcdef", ready=True)


def _pyc(folder: Path, rel: str) -> Path:
    parent, name = os.path.split(rel)
    return folder / parent / "__pycache__" / f"{name[:-3]}.{TAG}.pyc"


def _forge(pyc: Path, source: Path, code: str) -> None:
    """Bytecode of ``code`` that claims to be compiled from ``source``'s text (its hash)."""
    text = source.read_bytes()
    compiled = compile(code, str(source), "exec")
    data = importlib._bootstrap_external._code_to_hash_pyc(  # type: ignore[attr-defined]
        compiled, importlib.util.source_hash(text), checked=True)
    pyc.chmod(0o644)
    pyc.write_bytes(data)
    pyc.chmod(0o444)


def _linked(workspace: Path, folder: Path, rel: str) -> bool:
    """Is the workspace's bytecode of ``rel`` the compiled folder's own inode?"""
    return os.lstat(_pyc(workspace, rel)).st_ino == os.lstat(_pyc(folder, rel)).st_ino


@pytest.fixture
def compiled(tmp_path: Path) -> tuple[Environment, Path]:
    """An environment (``_env``) and its sealed bytecode, which needs root."""
    if not ROOT:
        pytest.skip("sealed bytecode needs root (ownership moves to nobody)")
    env = _env(tmp_path)
    folder = compiled_bytecode(tmp_path, env, Path(sys.executable))
    assert folder is not None
    return env, folder


def _run(workspace: Path) -> str:
    done = subprocess.run([sys.executable, "run.py"], cwd=workspace, capture_output=True,
                          text=True, check=True,
                          env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ["PATH"]})
    return done.stdout.strip()


def test_every_module_of_the_source_is_compiled_checked_hash_and_sealed(tmp_path: Path) -> None:
    env = _env(tmp_path)
    folder = compiled_bytecode(tmp_path, env, Path(sys.executable))
    if not ROOT:
        # Without ownership to move, linked bytecode could be rewritten: none is made.
        assert folder is None
        return
    assert folder == bytecode_folder(tmp_path, env)
    record = json.loads((folder / RECORD).read_text())
    assert record["tag"] == TAG and record["modules"] == 4
    for rel in ("pkg/__init__.py", "pkg/mod.py", "pkg/other.py", "run.py"):
        pyc = _pyc(folder, rel)
        flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
        assert flags == 0b11, f"{rel}: not checked-hash bytecode"  # hash-based, checked
        assert pyc.stat().st_uid == SEALED_UID and pyc.stat().st_mode & 0o222 == 0
    # What does not compile here, and the folders workspaces leave out, have none.
    assert not _pyc(folder, "py2only.py").exists()
    assert not (folder / ".git").exists()
    # Compiled once: asked again, the same folder, untouched.
    before = _pyc(folder, "pkg/mod.py").stat().st_ino
    assert compiled_bytecode(tmp_path, env, Path(sys.executable)) == folder
    assert _pyc(folder, "pkg/mod.py").stat().st_ino == before


@pytest.mark.parametrize("version", ["2.7", "3.6"])
def test_an_interpreter_without_checked_hash_bytecode_gets_none(
    tmp_path: Path, version: str
) -> None:
    found = find_interpreter(version)
    if found is None:
        pytest.skip(f"no Python {version} on this machine")
    env = _env(tmp_path)
    assert compiled_bytecode(tmp_path, env, found.path) is None
    assert not (tmp_path / "bytecode").exists() or not any((tmp_path / "bytecode").iterdir())


def test_a_changed_file_runs_from_its_source_even_beside_bytecode_forged_for_the_old_one(
    tmp_path: Path, compiled: tuple[Environment, Path],
) -> None:
    env, folder = compiled
    src = env.source_dir
    # Bytecode that matches each base file's hash but says where it came from.
    _forge(_pyc(folder, "pkg/mod.py"), src / "pkg/mod.py", "def f():\n    return 'stale'\n")
    _forge(_pyc(folder, "pkg/other.py"), src / "pkg/other.py",
           "def g():\n    return 'bytecode'\n")
    changed = {"pkg/mod.py": "def f():\n    return 'sample'\n"}
    workspace = make_workspace(src, tmp_path / "ws", changed=changed, strategy="hardlink",
                               bytecode=folder)
    # The unchanged module came from the linked bytecode; the changed one from its new text.
    assert _run(workspace) == "sample bytecode"
    assert _linked(workspace, folder, "pkg/other.py")


def test_a_kept_workspace_whose_bytecode_a_sample_replaced_is_never_reused(
    tmp_path: Path, compiled: tuple[Environment, Path],
) -> None:
    env, folder = compiled
    cache = WorkspaceCache(tmp_path / "kept")
    try:
        changed = {"pkg/mod.py": "def f():\n    return 'sample'\n"}
        first = cache.checkout(env.source_dir, tmp_path / "s1", changed, bytecode=folder)
        assert cache.checkin(first)
        second = cache.checkout(env.source_dir, tmp_path / "s2", changed, bytecode=folder)
        assert cache.stats.reused == 1 and _pyc(second.path, "pkg/other.py").exists()
        # What a sample could do to the next one: its own bytecode in place of the linked one.
        pyc = _pyc(second.path, "pkg/other.py")
        pyc.unlink()
        pyc.write_bytes(b"evil")
        assert not cache.checkin(second)
        third = cache.checkout(env.source_dir, tmp_path / "s3", changed, bytecode=folder)
        assert cache.stats.made == 2
        assert _linked(third.path, folder, "pkg/other.py")
        # Kept without bytecode is another workspace than kept with it.
        assert cache.checkin(third)
        cache.checkout(env.source_dir, tmp_path / "s4", changed)
        assert cache.stats.made == 3
    finally:
        cache.close()


@pytest.mark.skipif(not ROOT, reason="sealed sources need root (ownership moves to nobody)")
def test_samples_run_with_the_projects_bytecode_and_see_their_own_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEREVAL_UV_CACHE", str(default_root() / "uv-cache"))
    project = tmp_path / "tiny"
    (project / "tiny").mkdir(parents=True)
    (project / "tiny" / "__init__.py").write_text("def answer():\n    return 42\n")
    (project / "tiny" / "helper.py").write_text("from tiny import answer\nA = answer()\n")
    (project / "check.py").write_text(
        "import os\nimport tiny.helper\nassert tiny.helper.A == 42, tiny.helper.A\n"
        "assert os.path.exists(tiny.helper.__cached__), 'no bytecode beside the module'\n")
    root = tmp_path / "cache"
    env = PythonEnvironmentBuilder().build(
        ProjectSpec(name="me/tiny", language=Language.PYTHON, source=str(project)), root=root)
    assert env.ready, env.error
    task = Task(
        task_id="t1", benchmark="test", language=Language.PYTHON, name="answer",
        location=Location(project="me/tiny", file_path="tiny/__init__.py", lineno=1,
                          end_lineno=2),
        test=TestSpec(kind=model.TestKind.SCRIPT, path="check.py"),
    )
    ctx = RunContext(sandbox=get_sandbox("bwrap"), limits=Limits(wall_time=60),
                     work_root=tmp_path / "work", env_root=root)
    runner = PythonProjectRunner()
    try:
        assert not runner.prepare([task], ctx)
        folder = bytecode_folder(root, env)
        assert json.loads((folder / RECORD).read_text())["modules"] == 3
        verdicts = [runner.run(task, Sample(task_id="t1", index=i, code=code), ctx).verdict
                    for i, code in enumerate(["def answer():\n    return 42\n",
                                              "def answer():\n    return 43\n",
                                              "def answer():\n    return 42\n"])]
    finally:
        runner.close()
    # The wrong sample fails though the base's bytecode (answer 42) sits beside its file.
    assert verdicts == [Verdict.PASSED, Verdict.FAILED, Verdict.PASSED]
    # Turned off to compare (bench/python_engine.py's warm-nobytecode): none is used.
    monkeypatch.setenv("CODEREVAL_PROJECT_BYTECODE", "0")
    off = PythonProjectRunner()
    try:
        assert not off.prepare([task], ctx)
        assert off._bytecode_of(env, ctx) is None
        wrong = Sample(task_id="t1", index=3, code="def answer():\n    return 43\n")
        outcome = off.run(task, wrong, ctx)
        assert outcome.verdict is Verdict.FAILED
    finally:
        off.close()
