"""Environments resolved as at a benchmark's snapshot: exclude_newer, record_root, provenance,
and the venv + pip fallback for interpreters uv cannot make a venv for."""

from __future__ import annotations

import json
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from codereval.environments.base import ProjectSpec, load_manifest, parse_exclude_newer
from codereval.environments.python import PythonEnvironmentBuilder, default_root, uv_binary
from codereval.errors import UserError
from codereval.model import Language


@pytest.fixture(autouse=True)
def _shared_uv_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEREVAL_UV_CACHE", str(default_root() / "uv-cache"))


def _manifest(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "projects.toml"
    path.write_text(body, encoding="utf-8")
    return path


def _wheel(folder: Path) -> Path:
    """A tiny pure-Python wheel with no dependencies: installs without any network."""
    path = folder / "tinydep-1.0-py3-none-any.whl"
    files = {
        "tinydep/__init__.py": "VALUE = 7\n",
        "tinydep-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
        "tinydep-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        "tinydep-1.0.dist-info/top_level.txt": "tinydep\n",
    }
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        record = [f"{name},," for name in files] + ["tinydep-1.0.dist-info/RECORD,,"]
        zf.writestr("tinydep-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def _tiny(tmp_path: Path, *, extra: str = "", requirements: str = "") -> Path:
    src = tmp_path / "tiny"
    (src / "src" / "tiny").mkdir(parents=True)
    (src / "src" / "tiny" / "__init__.py").write_text("def answer():\n    return 42\n")
    return _manifest(
        tmp_path,
        f'[projects."me/tiny"]\nsource = "tiny"\nrequirements = [{requirements}]\n{extra}',
    )


# --------------------------------------------------------------------------- manifest


def test_manifest_reads_exclude_newer_and_record_root(tmp_path: Path) -> None:
    path = _manifest(tmp_path, """
[projects."a/plain"]
source = "a"

[projects."a/date"]
source = "a"
exclude_newer = "2022-08-01"
record_root = "src"

[projects."a/toml-date"]
source = "a"
exclude_newer = 2022-08-01
record_root = "./src/"

[projects."a/datetime"]
source = "a"
exclude_newer = 2022-08-01T12:30:00+02:00
install_env = { PBR_VERSION = "2.0.1", A = "x" }
""")
    specs = {spec.name: spec for spec in load_manifest(path)}
    assert specs["a/plain"].exclude_newer == "" and specs["a/plain"].record_root == ""
    assert specs["a/date"].exclude_newer == "2022-08-01T00:00:00Z"
    assert specs["a/toml-date"].exclude_newer == "2022-08-01T00:00:00Z"
    assert specs["a/date"].record_root == specs["a/toml-date"].record_root == "src"
    assert specs["a/datetime"].exclude_newer == "2022-08-01T10:30:00Z"
    assert specs["a/datetime"].install_env == (("A", "x"), ("PBR_VERSION", "2.0.1"))
    assert specs["a/plain"].install_env == ()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('exclude_newer = "2022-13-45"', "bad exclude_newer"),
        ('exclude_newer = "last summer"', "bad exclude_newer"),
        ("exclude_newer = 20220801", "bad exclude_newer"),
        ('record_root = "../elsewhere"', "bad record_root"),
        ('install_env = "PBR_VERSION=1"', "bad install_env"),
        ("install_env = { PBR_VERSION = 1 }", "bad install_env"),
    ],
)
def test_bad_snapshot_keys_are_one_clear_line(
    line: str, message: str, tmp_path: Path, run_cli: object
) -> None:
    path = _manifest(tmp_path, f'[projects."a/b"]\nsource = "a"\n{line}\n')
    with pytest.raises(UserError, match=message):
        load_manifest(path)
    result = run_cli("env", "build", "--projects", path, "--root", tmp_path / "cache")  # type: ignore[operator]
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr and "'a/b'" in result.stderr
    assert not (tmp_path / "cache" / "envs").exists() or not any(
        (tmp_path / "cache" / "envs").glob("a---b-*")
    )


def test_parse_exclude_newer_normalises_to_utc() -> None:
    assert parse_exclude_newer("2023-06-10T23:30:00-02:00") == "2023-06-11T01:30:00Z"
    assert parse_exclude_newer("2023-06-10 08:00") == "2023-06-10T08:00:00Z"
    with pytest.raises(ValueError, match="not an ISO date"):
        parse_exclude_newer("")


# --------------------------------------------------------------------------- the key


def test_key_changes_with_exclude_newer_but_not_record_root() -> None:
    def spec(**kw: str) -> ProjectSpec:
        return ProjectSpec(name="a/b", language=Language.PYTHON, source="a", **kw)

    def key(s: ProjectSpec) -> str:
        return s.key(source_hash="h", harness_version="v")

    plain = spec()
    assert "exclude_newer" not in plain.recipe()  # keys of older builds stay as they were
    first = spec(exclude_newer="2022-08-01T00:00:00Z")
    later = spec(exclude_newer="2023-06-10T00:00:00Z")
    assert len({key(plain), key(first), key(later)}) == 3
    assert first.recipe()["exclude_newer"] == "2022-08-01T00:00:00Z"
    assert key(spec(record_root="src")) == key(plain)
    assert "record_root" not in plain.recipe() and "install_env" not in plain.recipe()
    with_env = ProjectSpec(name="a/b", language=Language.PYTHON, source="a",
                           install_env=(("PBR_VERSION", "2.0.1"),))
    assert key(with_env) != key(plain)


# --------------------------------------------------------------------------- provenance


def test_env_json_records_the_cut_off_and_the_installed_distributions(
    tmp_path: Path, run_cli: object
) -> None:
    manifest = _tiny(tmp_path, extra='exclude_newer = "2022-08-01"\nrecord_root = "src"\n',
                     requirements='"./tinydep-1.0-py3-none-any.whl"')
    _wheel(tmp_path / "tiny")
    root = tmp_path / "cache"
    result = run_cli("env", "build", "--projects", manifest, "--root", root,  # type: ignore[operator]
                     "--only", "me/tiny")
    assert result.exit_code == 0, result.stdout + result.stderr
    env_json = next((root / "envs").glob("me---tiny-*/env.json"))
    meta = json.loads(env_json.read_text())
    assert meta["status"] == "ready"
    assert meta["recipe"]["exclude_newer"] == "2022-08-01T00:00:00Z"
    provenance = meta["provenance"]
    assert provenance["exclude_newer"] == "2022-08-01T00:00:00Z"
    assert provenance["venv"] == "uv venv" and provenance["installer"] == "uv pip"
    assert any(line.lower().startswith("tinydep") for line in provenance["installed"])
    listed = run_cli("env", "list", "--root", root)  # type: ignore[operator]
    assert "resolved before 2022-08-01T00:00:00Z" in listed.stdout
    # Another cut-off is another recipe: a second environment beside the first.
    manifest.write_text(manifest.read_text().replace("2022-08-01", "2023-06-10"))
    result = run_cli("env", "build", "--projects", manifest, "--root", root)  # type: ignore[operator]
    assert result.exit_code == 0 and "me/tiny: built" in result.stdout
    assert len(list((root / "envs").glob("me---tiny-*/env.json"))) == 2


def test_env_without_requirements_records_an_empty_freeze(tmp_path: Path) -> None:
    manifest = _tiny(tmp_path)
    spec = load_manifest(manifest)[0]
    env = PythonEnvironmentBuilder().build(spec, root=tmp_path / "cache")
    meta = json.loads((env.path / "env.json").read_text())
    assert env.ready and meta["provenance"] == {
        "exclude_newer": None, "venv": "uv venv", "installer": "uv pip", "installed": [],
    }


# --------------------------------------------------------------------------- the fallback


def _uv_without_venv(tmp_path: Path) -> Path:
    """A uv that refuses `uv venv` (as uv does for interpreters it cannot handle)."""
    script = tmp_path / "fake-uv"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = venv ]; then echo "error: unsupported Python version" >&2; exit 2; fi\n'
        f'exec "{uv_binary()}" "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.slow
@pytest.mark.parametrize("exclude_newer", ["", "2022-08-01"])
def test_uv_venv_failure_falls_back_to_venv_and_pip(
    exclude_newer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _uv_without_venv(tmp_path)
    monkeypatch.setattr("codereval.environments.python.uv_binary", lambda: str(fake))
    extra = f'exclude_newer = "{exclude_newer}"\n' if exclude_newer else ""
    manifest = _tiny(tmp_path, extra=extra, requirements='"./tinydep-1.0-py3-none-any.whl"')
    _wheel(tmp_path / "tiny")
    builder = PythonEnvironmentBuilder()
    env = builder.build(load_manifest(manifest)[0], root=tmp_path / "cache")
    meta = json.loads((env.path / "env.json").read_text())
    assert env.ready, meta["error"]
    assert meta["provenance"]["venv"] == "python -m venv"
    assert meta["provenance"]["installer"] == "pip"
    assert "uv could not make a venv" in meta["warning"]
    assert builder.last_report is not None and "python -m venv" in builder.last_report.warning
    assert any(line.lower().startswith("tinydep") for line in meta["provenance"]["installed"])
    assert builder.check(env) is None


# --------------------------------------------------------------------------- requirement lines


def test_requirement_lines_resolve_files_and_editables_in_the_source_tree(tmp_path: Path) -> None:
    spec = ProjectSpec(
        name="a/b", language=Language.PYTHON, source="a",
        requirements=("-r requirements.txt", "-c constraints.txt", "-e .", "six==1.16.0",
                      "-e git+https://example.invalid/x.git#egg=x", "pytz ; python_version < '4'"),
    )
    src = tmp_path / "src"
    assert PythonEnvironmentBuilder._requirement_args(spec, src) == [
        "-r", str(src / "requirements.txt"), "-c", str(src / "constraints.txt"),
        "-e", str(src / "."), "six==1.16.0",
        "-e", "git+https://example.invalid/x.git#egg=x", "pytz ; python_version < '4'",
    ]


@pytest.mark.parametrize("version", ["3.6", "3.7", "3.8", "3.9", "3.10", "3.11"])
def test_every_benchmark_python_gets_a_uv_venv(version: str, tmp_path: Path) -> None:
    from codereval.environments.python import find_interpreter

    if find_interpreter(version) is None:
        pytest.skip(f"python{version} is not installed here")
    manifest = _tiny(tmp_path, extra=f'python = "{version}"\nexclude_newer = "2022-08-01"\n',
                     requirements='"./tinydep-1.0-py3-none-any.whl"')
    _wheel(tmp_path / "tiny")
    builder = PythonEnvironmentBuilder()
    env = builder.build(load_manifest(manifest)[0], root=tmp_path / "cache")
    meta = json.loads((env.path / "env.json").read_text())
    assert env.ready, meta["error"]
    assert meta["python_version"].startswith(version + ".") and not meta["warning"]
    assert meta["provenance"]["venv"] == "uv venv"
    assert [line.split(" ")[0] for line in meta["provenance"]["installed"]] == ["tinydep"]
    assert builder.check(env) is None
    # `env check` imports what the named distributions provide, on old interpreters too
    from codereval.environments.python import _IMPORT_CHECK, venv_python

    def run_check(*names: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv_python(env)), "-c", _IMPORT_CHECK, *names],
                              capture_output=True, text=True, check=False)

    assert run_check("tinydep").returncode == 0
    missing = run_check("tinydep", "codereval-absent")
    assert missing.returncode == 1 and "codereval-absent: not installed" in missing.stderr


# An in-tree PEP 517 backend with no build requirements, so `-e .` installs without a network.
# Like setuptools, it writes build metadata into the project tree while installing.
_BACKEND = '''
import os, zipfile

NAME = "tinyself"
META = "Metadata-Version: 2.1\\nName: tinyself\\nVersion: 1.0\\n"
DIST = "tinyself-1.0.dist-info"


def get_requires_for_build_editable(config_settings=None):
    return []


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # Like pbr, the version can come from the environment (the manifest's install_env).
    os.makedirs("tinyself.egg-info", exist_ok=True)
    with open("tinyself.egg-info/PKG-INFO", "w") as handle:
        handle.write(META + "X-Tiny-Version: " + os.environ.get("TINY_VERSION", "?") + "\\n")
    name = "tinyself-1.0-py3-none-any.whl"
    files = {
        "tinyself.pth": os.path.abspath("src") + "\\n",
        DIST + "/METADATA": META,
        DIST + "/WHEEL": "Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\n"
                         "Tag: py3-none-any\\n",
    }
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
        zf.writestr(DIST + "/RECORD", "".join(p + ",,\\n" for p in files) + DIST + "/RECORD,,\\n")
    return name


build_wheel = build_editable
'''


def test_editable_project_install_keeps_the_environment_consistent(tmp_path: Path) -> None:
    manifest = _tiny(tmp_path, requirements='"-e ."',
                     extra='install_env = { TINY_VERSION = "2.0.1.dev5" }\n')
    project = tmp_path / "tiny"
    (project / "backend.py").write_text(_BACKEND)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "tinyself"\nversion = "1.0"\n\n'
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    builder = PythonEnvironmentBuilder()
    env = builder.build(load_manifest(manifest)[0], root=tmp_path / "cache")
    meta = json.loads((env.path / "env.json").read_text())
    assert env.ready, meta["error"]
    pkg_info = (env.source_dir / "tinyself.egg-info" / "PKG-INFO").read_text()
    assert "X-Tiny-Version: 2.0.1.dev5" in pkg_info
    assert meta["recipe"]["install_env"] == {"TINY_VERSION": "2.0.1.dev5"}
    assert meta["source_hash_before_install"] != meta["source_hash"]
    # `uv pip freeze` names an editable install by where it is
    assert meta["provenance"]["installed"] == [f"-e file://{env.source_dir}"]
    assert builder.check(env) is None
