"""Python project environments: a source tree plus a uv-made venv with the requirements.

Layout of one environment, ``<root>/envs/<slug>-<key>/``::

    src/        the project's source tree (copied from a directory, git checkout or archive)
    venv/       the interpreter and the installed requirements
    env.json    status ("ready" | "failed"), key, source hash, interpreter, warnings, errors

It is written once and then made read-only. The key hashes the recipe, the source content and
the harness version, so an unchanged project is never rebuilt. Packages come through one shared
uv cache (``<root>/uv-cache`` or ``$CODEREVAL_UV_CACHE``): after the first build, rebuilding
needs no network.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codereval import HARNESS_VERSION
from codereval.environments.base import Environment, EnvironmentBuilder, ProjectSpec
from codereval.environments.sources import fetch_source, local_source_dir
from codereval.errors import ToolchainMissing, UserError
from codereval.model import Language
from codereval.workspace import make_read_only, remove_tree, seal, tree_hash

ENV_FILE = "env.json"
# Left out when copying a local project: bytecode is rebuilt by the environment's interpreter.
PYTHON_IGNORE = ("*.pyc",)
TAIL_LINES = 15


def default_root() -> Path:
    """The cache root: ``$CODEREVAL_HOME`` or ``~/.cache/codereval``."""
    home = os.environ.get("CODEREVAL_HOME")
    return Path(home) if home else Path.home() / ".cache" / "codereval"


def uv_cache_dir(root: Path) -> Path:
    override = os.environ.get("CODEREVAL_UV_CACHE")
    return Path(override) if override else root / "uv-cache"


def uv_binary() -> str:
    try:
        from uv import find_uv_bin
    except ImportError:
        found = shutil.which("uv")
        if found:
            return found
        raise ToolchainMissing("uv is not installed", hint="pip install uv") from None
    return str(find_uv_bin())


# --------------------------------------------------------------------------- interpreters


@dataclass(frozen=True, kw_only=True)
class Interpreter:
    path: Path
    version: str  # "3.11.7"


def _probe(path: Path) -> str | None:
    try:
        done = subprocess.run(
            [str(path), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True, text=True, timeout=20, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _candidates(version: str) -> Iterator[Path]:
    name = f"python{version}"
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        # pyenv shims answer for versions that are installed but not selected: skip them.
        if entry and "shims" not in Path(entry).parts:
            yield Path(entry) / name
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        for prefix in sorted(pyenv.glob(f"{version}*"), reverse=True):
            yield prefix / "bin" / name
    for folder in ("/usr/local/bin", "/usr/bin"):
        yield Path(folder) / name


def find_interpreter(version: str) -> Interpreter | None:
    """A working ``python<version>`` on this machine (``version`` like "3.11"), or None."""
    if not re.fullmatch(r"\d+\.\d+", version):
        raise UserError(f"python version must look like '3.11', got {version!r}")
    for candidate in _candidates(version):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            found = _probe(candidate)
            if found and found.startswith(version + "."):
                return Interpreter(path=candidate, version=found)
    return None


def default_python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


# --------------------------------------------------------------------------- environments


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def read_env_file(path: Path) -> dict[str, Any] | None:
    meta = path / ENV_FILE
    if not meta.is_file():
        return None
    try:
        value = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def environment_from_dir(path: Path, spec: ProjectSpec | None = None) -> Environment | None:
    """The environment recorded in ``path`` (None when it holds no finished build)."""
    meta = read_env_file(path)
    if meta is None:
        return None
    if spec is None:
        # Builders of other languages write their own env.json: read what is common.
        language = meta.get("language") or ("java" if "jdk" in meta else "python")
        spec = ProjectSpec(
            name=str(meta.get("name", "")),
            language=Language(language),
            source=str(meta.get("recipe", {}).get("source", "")),
        )
    key = str(meta.get("key") or path.name.rsplit("-", 1)[-1])
    status = meta.get("status", "failed" if meta.get("error") else "ready")
    return Environment(
        spec=spec, path=path, key=key, ready=status == "ready", error=str(meta.get("error", "")),
    )


def list_environments(root: Path) -> list[tuple[Environment, dict[str, Any]]]:
    """Every finished environment under ``root`` (any language), newest first."""
    envs_dir = root / "envs"
    if not envs_dir.is_dir():
        return []
    found = []
    for path in envs_dir.iterdir():
        if path.is_dir() and not path.name.startswith("."):
            meta = read_env_file(path)
            env = environment_from_dir(path)
            if env is not None and meta is not None:
                found.append((env, meta))
    found.sort(key=lambda item: float(item[1].get("built_at", 0)), reverse=True)
    return found


def find_environment(root: Path, project: str) -> Environment | None:
    """The newest environment built for ``project`` (ready ones preferred)."""
    matches = [env for env, _meta in list_environments(root) if env.spec.name == project]
    ready = [env for env in matches if env.ready]
    chosen = ready or matches
    return chosen[0] if chosen else None


def is_sealed(env: Environment) -> bool:
    meta = read_env_file(env.path)
    return bool(meta and meta.get("sealed"))


def venv_python(env: Environment) -> Path:
    return env.path / "venv" / "bin" / "python"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True, kw_only=True)
class BuildReport:
    """What ``build`` did, for the CLI to say."""

    env: Environment
    action: str  # "built" | "cached" | "failed"
    warning: str = ""


class PythonEnvironmentBuilder(EnvironmentBuilder):
    language = Language.PYTHON

    def __init__(self) -> None:
        self.last_report: BuildReport | None = None

    def build(self, spec: ProjectSpec, *, root: Path, force: bool = False) -> Environment:
        """Build the environment for ``spec`` under ``root`` or reuse the cached one."""
        envs_dir = root / "envs"
        envs_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=envs_dir) as tmp:
            # The key needs the source's hash: a local directory is hashed where it is (so a
            # cached environment costs one read), anything else is fetched first.
            local = local_source_dir(spec)
            if local is not None:
                source_hash = tree_hash(local)
            else:
                fetch_source(spec, Path(tmp) / "src", downloads=root / "downloads",
                             ignore=PYTHON_IGNORE)
                source_hash = tree_hash(Path(tmp) / "src")
            key = spec.key(source_hash=source_hash, harness_version=HARNESS_VERSION)
            path = envs_dir / f"{spec.slug}-{key}"
            with _locked(envs_dir / f".{spec.slug}-{key}.lock"):
                meta = read_env_file(path)
                if meta is not None and meta.get("status") == "ready" and not force:
                    env = environment_from_dir(path, spec)
                    assert env is not None
                    self.last_report = BuildReport(
                        env=env, action="cached", warning=str(meta.get("warning", ""))
                    )
                    return env
                remove_tree(path)
                path.mkdir()
                if local is not None:
                    fetch_source(spec, path / "src", downloads=root / "downloads",
                                 ignore=PYTHON_IGNORE)
                else:
                    shutil.move(str(Path(tmp) / "src"), str(path / "src"))
                if tree_hash(path / "src") != source_hash:
                    raise UserError(f"project {spec.name}: the source changed while building")
                return self._build_venv(spec, path=path, key=key, source_hash=source_hash,
                                        root=root)

    def _build_venv(
        self, spec: ProjectSpec, *, path: Path, key: str, source_hash: str, root: Path
    ) -> Environment:
        started = time.monotonic()
        meta: dict[str, Any] = {
            "name": spec.name, "language": spec.language.value, "key": key,
            "recipe": spec.recipe(), "source_hash": source_hash,
            "harness_version": HARNESS_VERSION, "requested_python": spec.python,
        }
        warning = ""
        wanted = spec.python or default_python_version()
        interpreter = find_interpreter(wanted)
        if interpreter is None:
            fallback = find_interpreter(default_python_version())
            if fallback is None:
                raise ToolchainMissing(f"no python{default_python_version()} found on PATH")
            warning = (
                f"requested Python {wanted} is not installed on this machine; "
                f"using Python {fallback.version} ({fallback.path}) instead"
            )
            interpreter = fallback
        meta.update(python=str(interpreter.path), python_version=interpreter.version,
                    warning=warning)
        error = self._install(spec, path=path, interpreter=interpreter, root=root)
        meta.update(status="failed" if error else "ready", error=error,
                    built_at=time.time(), build_seconds=round(time.monotonic() - started, 2))
        if not error:
            # The source tree may be hard-linked into workspaces: owned by nobody, read-only.
            meta["sealed"] = seal(path / "src")
        (path / ENV_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        if not error:
            make_read_only(path)
        env = Environment(spec=spec, path=path, key=key, ready=not error, error=error)
        self.last_report = BuildReport(env=env, action="failed" if error else "built",
                                       warning=warning)
        return env

    def _install(self, spec: ProjectSpec, *, path: Path, interpreter: Interpreter, root: Path)\
            -> str:
        """Create the venv and install requirements; '' on success, else the error tail."""
        uv = uv_binary()
        env = dict(os.environ, UV_CACHE_DIR=str(uv_cache_dir(root)), UV_PYTHON_DOWNLOADS="never",
                   UV_NO_PROGRESS="1")
        venv = path / "venv"
        done = subprocess.run(
            [uv, "venv", "--quiet", "--python", str(interpreter.path), str(venv)],
            capture_output=True, text=True, env=env, check=False,
        )
        if done.returncode != 0:
            return "uv venv failed:\n" + _tail(done.stderr or done.stdout)
        requirements = self._requirement_args(spec, path / "src")
        if not requirements:
            return ""
        base = [uv, "pip", "install", "--quiet", "--compile-bytecode",
                "--python", str(venv / "bin" / "python"), *requirements]
        # Offline first: when the cache has everything, no network is touched.
        offline = subprocess.run([*base, "--offline"], capture_output=True, text=True, env=env,
                                 cwd=path / "src", check=False)
        if offline.returncode == 0:
            return ""
        online = subprocess.run(base, capture_output=True, text=True, env=env, cwd=path / "src",
                                check=False)
        if online.returncode == 0:
            return ""
        return "installing requirements failed:\n" + _tail(online.stderr or online.stdout)

    @staticmethod
    def _requirement_args(spec: ProjectSpec, src: Path) -> list[str]:
        args: list[str] = []
        for requirement in spec.requirements:
            if requirement.startswith("-r "):
                args += ["-r", str(src / requirement[3:].strip())]
            else:
                args.append(requirement)
        return args

    def check(self, env: Environment) -> str | None:
        """None when the environment is intact: recorded ready, same source, requirements
        importable by its own interpreter."""
        meta = read_env_file(env.path)
        if meta is None:
            return "no env.json: the build never finished (run `codereval env build --force`)"
        if meta.get("status") != "ready":
            return f"build failed: {_tail(str(meta.get('error', '')), 3)}"
        if not env.source_dir.is_dir():
            return "source tree missing"
        actual = tree_hash(env.source_dir)
        if actual != meta.get("source_hash"):
            return "source tree changed since it was built (rebuild with --force)"
        python = venv_python(env)
        if not python.exists():
            return f"interpreter missing: {python}"
        names = [_requirement_name(r) for r in env.spec.requirements or
                 tuple(meta.get("recipe", {}).get("requirements", ()))]
        names = [n for n in names if n]
        done = subprocess.run(
            [str(python), "-c", _IMPORT_CHECK, *names], capture_output=True, text=True,
            timeout=120, check=False, env={"PATH": os.environ.get("PATH", ""),
                                            "PYTHONDONTWRITEBYTECODE": "1"},
        )
        if done.returncode != 0:
            return "requirements do not import: " + _tail(done.stderr or done.stdout, 3)
        return None


def _requirement_name(requirement: str) -> str:
    if requirement.startswith("-"):
        return ""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match.group(1) if match else ""


# Imports every top-level module each named distribution provides.
_IMPORT_CHECK = """
import importlib, importlib.metadata as md, sys
bad = []
for name in sys.argv[1:]:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        bad.append(name + ': not installed'); continue
    top = (dist.read_text('top_level.txt') or '').split()
    if not top:
        top = sorted({str(f).split('/')[0].split('.py')[0] for f in dist.files or ()
                      if str(f).endswith('.py') and '.dist-info' not in str(f)
                      and '__pycache__' not in str(f)})
    for module in top:
        if module.startswith('_'):
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:
            bad.append(f'{name}: import {module}: {exc!r}')
if bad:
    sys.exit('\\n'.join(bad))
"""
