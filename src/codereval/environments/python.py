"""Python project environments: a source tree plus a uv-made venv with the requirements.

Layout of one environment, ``<root>/envs/<slug>-<key>/``::

    src/        the project's source tree (copied from a directory, git checkout or archive)
    venv/       the interpreter and the installed requirements
    env.json    status ("ready" | "failed"), key, source hash, interpreter, warnings, errors,
                and ``provenance``: how the venv was made, the ``exclude_newer`` cut-off the
                requirements were resolved at, and every installed distribution (a freeze)

It is written once and then made read-only. The key hashes the recipe, the source content and
the harness version, so an unchanged project is never rebuilt. Packages come through one shared
uv cache (``<root>/uv-cache`` or ``$CODEREVAL_UV_CACHE``): after the first build, rebuilding
needs no network.

A project's ``exclude_newer`` (an RFC 3339 UTC timestamp) is passed to uv as ``--exclude-newer``,
so its requirements resolve as they did then; its ``install_env`` variables are set while they
install (e.g. PBR_VERSION for a pbr project installed with ``-e .``). When uv cannot make a
venv for an old interpreter, ``python -m venv`` makes it instead and pip installs the
requirements (pinned first by ``uv pip compile --python-version`` when ``exclude_newer`` is
set); env.json says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from codereval.environments.base import Environment, EnvironmentBuilder, ProjectSpec
from codereval.environments.edits import EditFailed, apply_edits
from codereval.environments.sources import fetch_source, local_source_dir
from codereval.environments.staging import sweep_staging, temporary_staging
from codereval.errors import ToolchainMissing, UserError
from codereval.model import HARNESS_VERSION, Language
from codereval.workspace.views import make_read_only, remove_tree, seal, tree_hash

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


def discard_tree(path: Path) -> None:
    """Remove a half-built environment, even one an orphaned installer still writes into.

    A build killed with ``kill -9`` can leave its installer running (uv, pip): removing the
    folder under it fails ("Directory not empty"). The folder is renamed away first, which is
    atomic, so the rebuild starts clean; the renamed leftovers are removed as far as they can
    be now and swept by later builds.
    """
    parent = path.parent
    for stale in parent.glob(".trash-*"):
        # Still being written: the next build sweeps it.
        with contextlib.suppress(OSError):
            remove_tree(stale)
    if not path.exists() and not path.is_symlink():
        return
    trash = parent / f".trash-{path.name}-{os.getpid()}-{time.monotonic_ns()}"
    path.rename(trash)
    with contextlib.suppress(OSError):
        remove_tree(trash)


class PythonEnvironmentBuilder(EnvironmentBuilder):
    language = Language.PYTHON

    def __init__(self) -> None:
        self.last_report: BuildReport | None = None

    def build(self, spec: ProjectSpec, *, root: Path, force: bool = False) -> Environment:
        """Build the environment for ``spec`` under ``root`` or reuse the cached one."""
        envs_dir = root / "envs"
        envs_dir.mkdir(parents=True, exist_ok=True)
        sweep_staging(envs_dir)
        with temporary_staging(envs_dir, "fetch") as tmp:
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
                discard_tree(path)
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
        edited = ""
        if spec.edits:
            try:
                apply_edits(path / "src", spec.edits)
            except EditFailed as exc:
                edited = f"the manifest's source edits do not fit: {exc}"
        if edited:
            installed = _Installed(error=edited)
        else:
            installed = self._install(spec, path=path, interpreter=interpreter, root=root)
        error = installed.error
        after = tree_hash(path / "src")
        if after != source_hash:
            # An editable requirement (``-e .``) wrote build metadata into the tree: what the
            # environment holds from now on is this tree (the key still names the source).
            meta.update(source_hash=after, source_hash_before_install=source_hash)
        warning = "; ".join(w for w in (warning, installed.note) if w)
        meta.update(python=str(interpreter.path), python_version=interpreter.version,
                    warning=warning)
        meta["provenance"] = {
            "exclude_newer": spec.exclude_newer or None,
            "venv": installed.venv_tool,
            "installer": installed.installer,
            "installed": _freeze(path / "venv", root=root),
        }
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

    def _install(
        self, spec: ProjectSpec, *, path: Path, interpreter: Interpreter, root: Path
    ) -> _Installed:
        """Create the venv and install the requirements (``error`` is '' on success)."""
        uv = uv_binary()
        env = _uv_env(root)
        venv = path / "venv"
        done = subprocess.run(
            [uv, "venv", "--quiet", "--python", str(interpreter.path), str(venv)],
            capture_output=True, text=True, env=env, check=False,
        )
        if done.returncode != 0:
            return self._install_with_pip(
                spec, path=path, interpreter=interpreter, root=root,
                uv_error=_tail(done.stderr or done.stdout, 3),
            )
        requirements = self._requirement_args(spec, path / "src")
        if not requirements:
            return _Installed()
        base = [uv, "pip", "install", "--quiet", "--compile-bytecode",
                "--python", str(venv / "bin" / "python"), *_exclude_newer_args(spec),
                *requirements]
        # Offline first: when the cache has everything, no network is touched.
        env = _uv_env(root, spec)
        offline = subprocess.run([*base, "--offline"], capture_output=True, text=True, env=env,
                                 cwd=path / "src", check=False)
        if offline.returncode == 0:
            return _Installed()
        online = subprocess.run(base, capture_output=True, text=True, env=env, cwd=path / "src",
                                check=False)
        if online.returncode == 0:
            return _Installed()
        return _Installed(
            error="installing requirements failed:\n" + _tail(online.stderr or online.stdout)
        )

    def _install_with_pip(
        self, spec: ProjectSpec, *, path: Path, interpreter: Interpreter, root: Path,
        uv_error: str,
    ) -> _Installed:
        """The fallback for an interpreter uv cannot make a venv for: venv + pip."""
        venv = path / "venv"
        remove_tree(venv)
        note = (f"uv could not make a venv for Python {interpreter.version} "
                f"({uv_error.splitlines()[-1] if uv_error else 'no message'}); "
                "made it with `python -m venv` and installed the requirements with pip")
        done = subprocess.run([str(interpreter.path), "-m", "venv", str(venv)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return _Installed(
                error=f"uv venv failed:\n{uv_error}\npython -m venv failed too:\n"
                      + _tail(done.stderr or done.stdout, 3),
                venv_tool="python -m venv", installer="pip", note=note,
            )
        made = _Installed(venv_tool="python -m venv", installer="pip", note=note)
        requirements = self._requirement_args(spec, path / "src")
        if not requirements:
            return made
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
               "--disable-pip-version-check"]
        if spec.exclude_newer:
            # pip cannot exclude newer uploads: uv resolves the pins for that Python version.
            pins = path / "requirements.lock"
            wanted = path / "requirements.in"
            wanted.write_text("\n".join(_as_requirement_lines(requirements)) + "\n",
                              encoding="utf-8")
            version = ".".join(interpreter.version.split(".")[:2])
            done = subprocess.run(
                [uv_binary(), "pip", "compile", "--quiet", "--no-header",
                 "--python-version", version, *_exclude_newer_args(spec),
                 "-o", str(pins), str(wanted)],
                capture_output=True, text=True, env=_uv_env(root, spec), cwd=path / "src",
                check=False,
            )
            if done.returncode != 0:
                return replace(made, error="resolving requirements (uv pip compile) failed:\n"
                               + _tail(done.stderr or done.stdout))
            argv = [*pip, "--no-deps", "-r", str(pins)]
        else:
            argv = [*pip, *requirements]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=path / "src",
                              env=_uv_env(root, spec), check=False)
        if done.returncode != 0:
            return replace(made, error="installing requirements (pip) failed:\n"
                           + _tail(done.stderr or done.stdout))
        return made

    @staticmethod
    def _requirement_args(spec: ProjectSpec, src: Path) -> list[str]:
        """uv arguments for the manifest's requirements: specifiers as they are; ``-r FILE``,
        ``-c FILE`` and ``-e PATH`` (an editable install, e.g. ``-e .`` for a project whose
        code reads its own installed metadata) relative to the project's source tree."""
        args: list[str] = []
        for requirement in spec.requirements:
            flag, _, value = requirement.partition(" ")
            value = value.strip()
            if flag in ("-r", "-c", "-e") and value:
                remote = "://" in value or value.startswith("git+")
                args += [flag, value if remote else str(src / value)]
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


@dataclass(frozen=True, kw_only=True)
class _Installed:
    """How the venv was made and its requirements installed; ``error`` '' on success."""

    error: str = ""
    venv_tool: str = "uv venv"  # or "python -m venv" (the fallback)
    installer: str = "uv pip"  # or "pip"
    note: str = ""  # a warning for env.json (the fallback was used)


def _uv_env(root: Path, spec: ProjectSpec | None = None) -> dict[str, str]:
    """The environment for uv (and pip): our cache, no interpreter downloads, and the
    project's ``install_env`` when installing its requirements."""
    env = dict(os.environ, UV_CACHE_DIR=str(uv_cache_dir(root)), UV_PYTHON_DOWNLOADS="never",
               UV_NO_PROGRESS="1")
    if spec is not None:
        env.update(spec.install_env)
    return env


def _exclude_newer_args(spec: ProjectSpec) -> list[str]:
    return ["--exclude-newer", spec.exclude_newer] if spec.exclude_newer else []


def _as_requirement_lines(args: list[str]) -> list[str]:
    """``_requirement_args`` output (``-r``, path pairs and specifiers) as requirements lines."""
    lines: list[str] = []
    pending = ""
    for arg in args:
        if pending:
            lines.append(f"{pending} {arg}")
            pending = ""
        elif arg in ("-r", "-c", "-e"):
            pending = arg
        else:
            lines.append(arg)
    return lines


def _freeze(venv: Path, *, root: Path) -> list[str]:
    """Every distribution installed in ``venv`` as ``name==version`` lines ([] when unknown)."""
    python = venv / "bin" / "python"
    if not python.exists():
        return []
    for argv, env in (
        ([uv_binary(), "pip", "freeze", "--python", str(python)], _uv_env(root)),
        ([str(python), "-m", "pip", "freeze", "--disable-pip-version-check"], None),
    ):
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return sorted((line.strip() for line in done.stdout.splitlines() if line.strip()),
                          key=str.lower)
    return []


def _requirement_name(requirement: str) -> str:
    if requirement.startswith("-"):
        return ""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match.group(1) if match else ""


# Imports every top-level module each named distribution provides. Runs on every benchmark
# Python (3.6 and 3.7 have no importlib.metadata: their installed .dist-info is read directly).
_IMPORT_CHECK = """
import importlib, os, re, sys


def _read(folder, name):
    try:
        with open(os.path.join(folder, name)) as handle:
            return handle.read()
    except OSError:
        return ''


def _installed(name):
    # (top_level.txt text, file paths) of the installed distribution, or None
    try:
        import importlib.metadata as md
    except ImportError:
        want = re.sub(r'[-_.]+', '-', name).lower()
        for entry in sys.path:
            if not os.path.isdir(entry):
                continue
            for item in sorted(os.listdir(entry)):
                if not item.endswith('.dist-info'):
                    continue
                dist = item[:-len('.dist-info')].rsplit('-', 1)[0]
                if re.sub(r'[-_.]+', '-', dist).lower() == want:
                    folder = os.path.join(entry, item)
                    files = [line.split(',')[0] for line in _read(folder, 'RECORD').splitlines()]
                    return _read(folder, 'top_level.txt'), files
        return None
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return None
    return dist.read_text('top_level.txt') or '', [str(f) for f in dist.files or ()]


bad = []
for name in sys.argv[1:]:
    found = _installed(name)
    if found is None:
        bad.append(name + ': not installed'); continue
    top = found[0].split()
    if not top:
        top = sorted({f.split('/')[0].split('.py')[0] for f in found[1]
                      if f.endswith('.py') and '.dist-info' not in f and '__pycache__' not in f})
    for module in top:
        if module.startswith('_'):
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:
            bad.append('%s: import %s: %r' % (name, module, exc))
if bad:
    sys.exit('\\n'.join(bad))
"""
