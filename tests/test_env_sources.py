"""`codereval env build` fetches a project's source from git (URL or path plus commit) or from a
source archive (an sdist-like ``.tar.gz`` or ``.zip``), all offline, through the CLI."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codereval.environments.python import default_root

CliRun = Callable[..., Any]


@pytest.fixture(autouse=True)
def _shared_uv_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEREVAL_UV_CACHE", str(default_root() / "uv-cache"))


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def _write_project(root: Path, version: int) -> None:
    (root / "tiny").mkdir(parents=True, exist_ok=True)
    (root / "tiny" / "__init__.py").write_text(f"def answer():\n    return {version}\n")


def _two_commit_repo(tmp_path: Path) -> tuple[Path, str]:
    """A git repository whose first commit answers 1 and whose second answers 2."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "--quiet")
    _write_project(repo, 1)
    (repo / "only_in_first.txt").write_text("first\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "first")
    first = _git(repo, "rev-parse", "HEAD")
    _write_project(repo, 2)
    _git(repo, "rm", "--quiet", "only_in_first.txt")
    _git(repo, "commit", "--quiet", "-am", "second")
    return repo, first


def _manifest(tmp_path: Path, **fields: str) -> Path:
    manifest = tmp_path / "projects.toml"
    lines = [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
    manifest.write_text('[projects."me/tiny"]\n' + "\n".join(lines) + "\nrequirements = []\n")
    return manifest


def _only_env(root: Path) -> Path:
    envs = sorted((root / "envs").glob("me---tiny-*"))
    assert len(envs) == 1, envs
    return envs[0]


def _ownership(tree: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for dirpath, _dirs, files in os.walk(tree):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            found[os.path.join(dirpath, name)] = (st.st_uid, st.st_mode)
    return found


# --------------------------------------------------------------------------- git


@pytest.mark.parametrize("address", ["path", "file-url"])
def test_git_source_builds_the_named_commit_and_rebuilding_does_nothing(
    address: str, tmp_path: Path, run_cli: CliRun
) -> None:
    repo, first = _two_commit_repo(tmp_path)
    source = str(repo) if address == "path" else repo.as_uri()
    manifest = _manifest(tmp_path, source=source, commit=first)
    root = tmp_path / "cache"
    before = _ownership(repo / ".git")

    result = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert result.exit_code == 0, result
    assert "me/tiny: built" in result.stdout
    src = _only_env(root) / "src"
    # The first commit's tree, not the working tree (HEAD answers 2, and lost a file).
    assert (src / "tiny" / "__init__.py").read_text() == "def answer():\n    return 1\n"
    assert (src / "only_in_first.txt").read_text() == "first\n"
    meta = json.loads((_only_env(root) / "env.json").read_text())
    assert meta["status"] == "ready" and meta["recipe"]["commit"] == first

    result = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert result.exit_code == 0 and "me/tiny: up to date, nothing to do" in result.stdout
    assert _only_env(root) / "src" == src
    check = run_cli("env", "check", "--root", root)
    assert check.exit_code == 0 and "me/tiny: ok" in check.stdout
    # Sealing the environment must not reach the user's repository through shared files.
    assert _ownership(repo / ".git") == before


def test_git_source_at_another_commit_is_another_environment(
    tmp_path: Path, run_cli: CliRun
) -> None:
    repo, first = _two_commit_repo(tmp_path)
    second = _git(repo, "rev-parse", "HEAD")
    root = tmp_path / "cache"
    for commit in (first, second):
        manifest = _manifest(tmp_path, source=str(repo), commit=commit)
        result = run_cli("env", "build", "--projects", manifest, "--root", root)
        assert result.exit_code == 0 and "me/tiny: built" in result.stdout, result
    answers = sorted((env / "src" / "tiny" / "__init__.py").read_text().split()[-1]
                     for env in (root / "envs").glob("me---tiny-*"))
    assert answers == ["1", "2"]


@pytest.mark.parametrize("commit", ["0123456789abcdef0123456789abcdef01234567", "no-such-ref"])
def test_git_source_with_an_unknown_commit_is_a_one_line_error(
    commit: str, tmp_path: Path, run_cli: CliRun
) -> None:
    repo, _first = _two_commit_repo(tmp_path)
    manifest = _manifest(tmp_path, source=str(repo), commit=commit)
    root = tmp_path / "cache"
    result = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert result.exit_code == 2, result
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert f"git checkout {commit} failed" in result.stderr
    assert not list((root / "envs").glob("me---tiny-*")), "no half-built environment is left"


def test_git_source_that_is_not_a_repository_is_a_one_line_error(
    tmp_path: Path, run_cli: CliRun
) -> None:
    plain = tmp_path / "plain"
    _write_project(plain, 1)
    manifest = _manifest(tmp_path, source=plain.as_uri(), commit="main")
    result = run_cli("env", "build", "--projects", manifest, "--root", tmp_path / "cache")
    assert result.exit_code == 2, result
    assert "git clone" in result.stderr and result.stderr.count("\n") == 1


# --------------------------------------------------------------------------- archives


def _sdist_files() -> dict[str, str]:
    """An sdist-like project: metadata at the top, the package under src/."""
    return {
        "pkg-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
        "pkg-1.0/src/tiny/__init__.py": "def answer():\n    return 3\n",
    }


def _write_archive(path: Path, files: dict[str, str]) -> Path:
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path, "w") as zf:
            for name, text in files.items():
                zf.writestr(name, text)
        return path
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("name", ["pkg-1.0.tar.gz", "pkg-1.0.zip"])
def test_archive_source_is_extracted_without_its_top_folder(
    name: str, tmp_path: Path, run_cli: CliRun
) -> None:
    archive = _write_archive(tmp_path / name, _sdist_files())
    manifest = _manifest(tmp_path, source=str(archive))
    root = tmp_path / "cache"
    result = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert result.exit_code == 0 and "me/tiny: built" in result.stdout, result
    src = _only_env(root) / "src"
    assert sorted(p.name for p in src.iterdir()) == ["PKG-INFO", "src"]
    assert (src / "src" / "tiny" / "__init__.py").read_text().endswith("return 3\n")

    result = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert result.exit_code == 0 and "up to date, nothing to do" in result.stdout


def test_archive_subdir_names_the_project_root_inside_the_archive(
    tmp_path: Path, run_cli: CliRun
) -> None:
    archive = _write_archive(tmp_path / "pkg-1.0.tar.gz", _sdist_files())
    manifest = _manifest(tmp_path, source=str(archive), subdir="pkg-1.0/src")
    root = tmp_path / "cache"
    result = run_cli("env", "build", "--projects", manifest, "--root", root)
    assert result.exit_code == 0, result
    src = _only_env(root) / "src"
    assert sorted(p.name for p in src.iterdir()) == ["tiny"]

    missing = _manifest(tmp_path, source=str(archive), subdir="pkg-1.0/lib")
    result = run_cli("env", "build", "--projects", missing, "--root", root)
    assert result.exit_code == 2 and "subdir 'pkg-1.0/lib' not found" in result.stderr


def test_archive_with_several_top_entries_is_kept_whole(tmp_path: Path, run_cli: CliRun) -> None:
    archive = _write_archive(tmp_path / "flat.tar.gz", {
        "tiny/__init__.py": "def answer():\n    return 4\n", "README": "flat\n",
    })
    root = tmp_path / "cache"
    result = run_cli("env", "build", "--projects", _manifest(tmp_path, source=str(archive)),
                     "--root", root)
    assert result.exit_code == 0, result
    assert sorted(p.name for p in (_only_env(root) / "src").iterdir()) == ["README", "tiny"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "zip-garbage"])
def test_corrupt_archive_is_a_one_line_error(
    damage: str, tmp_path: Path, run_cli: CliRun
) -> None:
    good = _write_archive(tmp_path / "good.tar.gz", _sdist_files())
    if damage == "garbage":
        archive = tmp_path / "pkg-1.0.tar.gz"
        archive.write_bytes(b"this is not an archive\n" * 20)
    elif damage == "truncated":
        archive = tmp_path / "pkg-1.0.tar.gz"
        archive.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    else:
        archive = tmp_path / "pkg-1.0.zip"
        archive.write_bytes(b"PK\x03\x04 not really a zip")
    root = tmp_path / "cache"
    result = run_cli("env", "build", "--projects", _manifest(tmp_path, source=str(archive)),
                     "--root", root)
    assert result.exit_code == 2, result
    assert result.stderr.startswith(f"error: {archive}: cannot extract")
    assert result.stderr.count("\n") == 1
    assert not list((root / "envs").glob("me---tiny-*"))


def test_missing_archive_is_a_one_line_error(tmp_path: Path, run_cli: CliRun) -> None:
    manifest = _manifest(tmp_path, source="dist/pkg-9.9.tar.gz")
    result = run_cli("env", "build", "--projects", manifest, "--root", tmp_path / "cache")
    assert result.exit_code == 2
    assert "source archive not found" in result.stderr and "pkg-9.9.tar.gz" in result.stderr
