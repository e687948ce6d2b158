"""A Java project can come from a git repository at a pinned commit or from a source archive, not
only a local directory: `codereval env build` fetches it, compiles that content, and keys the
environment on it, so a second build is a no-op."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codereval.java.toolchain import find_jdk

CliRun = Callable[..., Any]

GREETING = """package hello;

public class Greeting {
    public static void main(String[] args) {
        System.out.println("%s");
    }
}
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def _two_commit_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose first commit greets "one" (plus a class the second commit deletes)
    and whose second commit greets "two"."""
    repo = tmp_path / "repo"
    (repo / "java" / "hello").mkdir(parents=True)
    _git(repo, "init", "--quiet")
    (repo / "java" / "hello" / "Greeting.java").write_text(GREETING % "one")
    (repo / "java" / "hello" / "Gone.java").write_text("package hello;\nclass Gone {}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "first")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "java" / "hello" / "Greeting.java").write_text(GREETING % "two")
    _git(repo, "rm", "--quiet", "java/hello/Gone.java")
    _git(repo, "commit", "--quiet", "-am", "second")
    return repo, first


def _manifest(tmp_path: Path, **fields: str) -> Path:
    manifest = tmp_path / "projects.toml"
    lines = [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
    manifest.write_text('[projects."me/hello"]\nlanguage = "java"\n' + "\n".join(lines)
                        + '\nsource_roots = ["java"]\n')
    return manifest


def _only_env(root: Path) -> Path:
    envs = [p for p in (root / "envs").glob("me---hello-*") if p.is_dir()]
    assert len(envs) == 1, envs
    return envs[0]


def _greets(env: Path) -> str:
    done = subprocess.run([str(find_jdk().java), "-cp", str(env / "classes"), "hello.Greeting"],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def _build_twice(manifest: Path, root: Path, run_cli: CliRun) -> Path:
    """Build, check the environment is ready, build again: the second build does nothing."""
    result = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert result.exit_code == 0 and "me/hello: built" in result.stdout, result
    env = _only_env(root)
    built = (env / "env.json").stat().st_mtime_ns
    check = run_cli("env", "check", "--root", root)
    assert check.exit_code == 0 and "me/hello: ok" in check.stdout, check

    again = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert again.exit_code == 0, again
    assert "me/hello: up to date, nothing to do" in again.stdout
    assert _only_env(root) == env and (env / "env.json").stat().st_mtime_ns == built
    return env


def test_java_project_from_git_builds_the_pinned_commit(tmp_path: Path, run_cli: CliRun) -> None:
    repo, first = _two_commit_repo(tmp_path)
    env = _build_twice(_manifest(tmp_path, source=repo.as_uri(), commit=first),
                       tmp_path / "cache", run_cli)
    # The first commit's content was compiled, not the working tree's (which greets "two").
    assert (env / "src" / "java" / "hello" / "Greeting.java").read_text() == GREETING % "one"
    assert (env / "classes" / "hello" / "Gone.class").is_file()
    assert _greets(env) == "one"
    assert json.loads((env / "env.json").read_text())["main_roots"] == ["src/java"]


@pytest.mark.slow
def test_java_project_at_another_commit_is_another_environment(
    tmp_path: Path, run_cli: CliRun
) -> None:
    repo, first = _two_commit_repo(tmp_path)
    second = _git(repo, "rev-parse", "HEAD")
    root = tmp_path / "cache"
    for commit in (first, second):
        result = run_cli("env", "build", "--projects",
                         _manifest(tmp_path, source=str(repo), commit=commit), "--root", root)
        assert result.exit_code == 0 and "me/hello: built" in result.stdout, result
    envs = [p for p in (root / "envs").glob("me---hello-*") if p.is_dir()]
    assert sorted(_greets(env) for env in envs) == ["one", "two"]


def test_java_project_from_an_archive_is_built_from_its_top_folder(
    tmp_path: Path, run_cli: CliRun
) -> None:
    archive = tmp_path / "hello-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for name, text in {
            "hello-1.0/README": "hello\n",
            "hello-1.0/java/hello/Greeting.java": GREETING % "from the archive",
        }.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tf.addfile(info, io.BytesIO(text.encode()))
    env = _build_twice(_manifest(tmp_path, source=str(archive)), tmp_path / "cache", run_cli)
    assert sorted(p.name for p in (env / "src").iterdir()) == ["README", "java"]
    assert _greets(env) == "from the archive"


def test_java_project_at_an_unknown_commit_is_a_failed_environment(
    tmp_path: Path, run_cli: CliRun
) -> None:
    repo, _first = _two_commit_repo(tmp_path)
    missing = "0123456789abcdef0123456789abcdef01234567"
    root = tmp_path / "cache"
    result = run_cli("env", "build", "--projects",
                     _manifest(tmp_path, source=str(repo), commit=missing), "--root", root)
    assert result.exit_code == 1, result
    assert "me/hello: FAILED" in result.stdout
    assert f"git checkout {missing} failed" in result.stdout
    assert not list((root / "envs").glob("me---hello-*")), "no half-built environment is left"
