"""`codereval env`: build once, cache by content, record failures, check integrity."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from codereval import data, model
from codereval.cli.app import app, main
from codereval.environments import get_builder
from codereval.environments.base import ProjectSpec
from codereval.environments.python import PythonEnvironmentBuilder, default_root
from codereval.model import Language, Location, Sample, Task, TestSpec, Verdict
from codereval.runners.base import RunContext
from codereval.runners.python import PythonProjectRunner
from codereval.sandbox import Limits, get_sandbox


@pytest.fixture(autouse=True)
def _shared_uv_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEREVAL_UV_CACHE", str(default_root() / "uv-cache"))


def _tiny_project(tmp_path: Path, requirement: str, *, python: str = "") -> Path:
    src = tmp_path / "tiny"
    (src / "tiny").mkdir(parents=True)
    (src / "tiny" / "__init__.py").write_text("def answer():\n    return 42\n")
    (src / "check.py").write_text("from tiny import answer\nassert answer() == 42\n")
    manifest = tmp_path / "projects.toml"
    extra = f'python = "{python}"\n' if python else ""
    manifest.write_text(
        f'[projects."me/tiny"]\nsource = "tiny"\n{extra}requirements = [{requirement}]\n'
    )
    return manifest


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_build_is_cached_by_content_and_rebuilds_when_the_source_changes(tmp_path: Path) -> None:
    manifest = _tiny_project(tmp_path, "")
    root = tmp_path / "cache"
    code, out = _cli("env", "build", "--projects", str(manifest), "--root", str(root))
    assert code == 0 and "me/tiny: built" in out
    code, out = _cli("env", "build", "--projects", str(manifest), "--root", str(root))
    assert code == 0 and "up to date, nothing to do" in out
    (tmp_path / "tiny" / "tiny" / "__init__.py").write_text("def answer():\n    return 43\n")
    code, out = _cli("env", "build", "--projects", str(manifest), "--root", str(root))
    assert "me/tiny: built" in out
    code, out = _cli("env", "list", "--root", str(root))
    assert out.count("me/tiny") == 2 and "ready" in out
    code, out = _cli("env", "check", "--root", str(root))
    assert code == 0 and "me/tiny: ok" in out


def test_built_environment_is_read_only_and_check_notices_tampering(tmp_path: Path) -> None:
    manifest = _tiny_project(tmp_path, "")
    root = tmp_path / "cache"
    assert _cli("env", "build", "--projects", str(manifest), "--root", str(root))[0] == 0
    env_dir = next((root / "envs").glob("me---tiny-*"))
    source = env_dir / "src" / "tiny" / "__init__.py"
    assert source.stat().st_mode & 0o222 == 0
    source.chmod(0o644)
    source.write_text("broken = True\n")
    code, out = _cli("env", "check", "--root", str(root))
    assert code == 1 and "source tree changed" in out


@pytest.mark.slow
def test_failing_requirement_is_recorded_and_its_tasks_are_infra_error(tmp_path: Path) -> None:
    manifest = _tiny_project(tmp_path, '"codereval-no-such-package-xyz==0.0.1"')
    root = tmp_path / "cache"
    code, out = _cli("env", "build", "--projects", str(manifest), "--root", str(root))
    assert code == 1 and "me/tiny: FAILED" in out
    meta = json.loads(next((root / "envs").glob("me---tiny-*/env.json")).read_text())
    assert meta["status"] == "failed" and "codereval-no-such-package-xyz" in meta["error"]
    task = Task(
        task_id="t1", benchmark="test", language=Language.PYTHON, name="answer",
        location=Location(project="me/tiny", file_path="tiny/__init__.py", lineno=1,
                          end_lineno=2),
        test=TestSpec(kind=model.TestKind.SCRIPT, path="check.py"),
    )
    ctx = RunContext(sandbox=get_sandbox("none"), limits=Limits(), work_root=tmp_path,
                     env_root=root)
    runner = PythonProjectRunner()
    assert "failed to build" in runner.prepare([task], ctx)["t1"]
    outcome = runner.run(task, Sample(task_id="t1", code="def answer():\n    return 42\n"), ctx)
    assert outcome.verdict is Verdict.INFRA_ERROR and "codereval-no-such-package" in outcome.detail


def test_missing_python_version_falls_back_with_a_recorded_warning(tmp_path: Path) -> None:
    manifest = _tiny_project(tmp_path, "", python="3.1")
    root = tmp_path / "cache"
    result = CliRunner().invoke(app, ["env", "build", "--projects", str(manifest), "--root",
                                      str(root)])
    assert result.exit_code == 0
    assert "requested Python 3.1 is not installed" in result.output
    meta = json.loads(next((root / "envs").glob("me---tiny-*/env.json")).read_text())
    assert "requested Python 3.1" in meta["warning"]


def test_mini_manifest_builds_through_the_language_registry(tmp_path: Path) -> None:
    builder = get_builder("python")
    assert isinstance(builder, PythonEnvironmentBuilder)
    spec = ProjectSpec(name="x/y", language=Language.PYTHON, source=str(tmp_path / "missing"))
    with pytest.raises(Exception, match="source directory not found"):
        builder.build(spec, root=tmp_path)
    assert (data.mini_python_root() / "projects.toml").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["env", "build", "--projects", "/nonexistent/projects.toml"], "manifest not found"),
        (["env", "build", "--projects", "MINI", "--project", "nobody/nothing"],
         "'nobody/nothing' is not in"),
        (["env", "check", "--root", "EMPTY"], "no environments under"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(data.mini_python_manifest()) if a == "MINI" else
            str(tmp_path) if a == "EMPTY" else a for a in args]
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_env_help_has_an_example() -> None:
    for sub in ("build", "list", "check"):
        code, out = _cli("env", sub, "--help")
        assert code == 0 and "codereval env" in out
    assert shutil.which("true")


def test_a_half_built_environment_that_cannot_be_removed_is_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 of a build can leave its installer writing into the folder: rebuild anyway."""
    from codereval.environments import python as envpy

    manifest = _tiny_project(tmp_path, "")
    root = tmp_path / "cache"
    code, _ = _cli("env", "build", "--projects", str(manifest), "--root", str(root))
    assert code == 0
    [built] = [p for p in (root / "envs").iterdir() if p.name.startswith("me---tiny-")]
    # What a killed build leaves: no ready marker, and a folder still being written.
    (built / "env.json").write_text(json.dumps({"status": "building"}))
    real_remove = envpy.remove_tree

    def busy(path: Path) -> None:
        # The half-built folder cannot be removed while the orphan writes into it.
        if path.name.startswith((".trash-me---tiny-", "me---tiny-")):
            raise OSError(39, "Directory not empty", "__pycache__")
        real_remove(path)

    monkeypatch.setattr(envpy, "remove_tree", busy)
    code, out = _cli("env", "build", "--projects", str(manifest), "--root", str(root))
    assert code == 0 and "me/tiny: built" in out, out
    assert json.loads((built / "env.json").read_text())["status"] == "ready"
    # The leftovers wait aside, and a later build sweeps them once they can go.
    assert list((root / "envs").glob(".trash-*"))
    monkeypatch.setattr(envpy, "remove_tree", real_remove)
    envpy.discard_tree(root / "envs" / "nothing-here")
    assert not list((root / "envs").glob(".trash-*"))
