"""Project environments: what a project needs to run tests, built once and then only read.

A ``ProjectSpec`` says where a project's source comes from and what it needs; its ``key()`` is a
content hash, so an environment is rebuilt exactly when its recipe changes. Builders for each
language live beside this module.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
import re
import tomllib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codereval.environments.edits import SourceEdit, parse_edits
from codereval.errors import UserError
from codereval.model import Language, canonical_json, sha256_text


@dataclass(frozen=True, kw_only=True)
class ProjectSpec:
    """One project: its source, language and dependencies."""

    name: str  # "owner/repo", as CoderEval records name it
    language: Language
    # A local directory, a git URL, or a source archive (path or URL) such as a PyPI sdist.
    source: str
    commit: str = ""
    # Directory inside the source that is the project root (e.g. archive top folder).
    subdir: str = ""
    python: str = ""  # requested Python version, e.g. "3.11"
    requirements: tuple[str, ...] = ()
    # Resolve requirements as they were then: uv's --exclude-newer, an RFC 3339 UTC timestamp
    # ("2022-08-01T00:00:00Z"); normalise manifest values with ``parse_exclude_newer``.
    exclude_newer: str = ""
    # Folder inside the project where the task records' file_path is rooted (neo4j: "src").
    # Where tests are placed, not how the environment is built: not part of the recipe.
    record_root: str = field(default="", compare=False)
    # Environment variables set while the requirements install, e.g. PBR_VERSION for a pbr
    # project installed (``-e .``) from a tree without its git history.
    install_env: tuple[tuple[str, str], ...] = ()
    # Java: source roots relative to the project root, extra jars.
    source_roots: tuple[str, ...] = ()
    # Java: test source roots (Maven's src/test/java when empty). Given roots, main and test,
    # also serve as resource folders, as an Ant build that copies them into its output does.
    test_roots: tuple[str, ...] = ()
    # Java: the folder (below the project root) whose pom.xml builds it, when the repository
    # holds more than the module (Gson's gson/, whose parent pom is the repository's).
    build_dir: str = ""
    jars: tuple[str, ...] = ()
    # Java: the javac --release the project's code is compiled with ("8"); "" for javac's own.
    java_release: str = ""
    # Java, multi-module Maven: the modules (folders under the root) Maven compiles, with what
    # they need (-am); their classes and classpath make the environment. Extra Maven arguments.
    maven_modules: tuple[str, ...] = ()
    maven_args: tuple[str, ...] = ()
    # Java, a folder of independent programs (LeetCode solutions: several `class Solution`):
    # nothing is compiled ahead; a sample compiles its own file, the classes it names found
    # through -sourcepath.
    compile_per_file: bool = False
    # Git submodules (paths) the build needs: placed from the checkout's own submodule clones,
    # or cloned with the project under --fetch. Part of the source, so not of the recipe.
    submodules: tuple[str, ...] = field(default=(), compare=False)
    # Edits the original platform's copy had over the pinned commit (see
    # codereval.environments.edits), applied to the copy an environment is built from.
    edits: tuple[SourceEdit, ...] = ()
    # Where the manifest that named this project lives (relative sources resolve from here).
    base_dir: Path = field(default=Path("."), compare=False)

    def resolved_source(self) -> str:
        if "://" in self.source or self.source.startswith("git@"):
            return self.source
        path = Path(self.source)
        return str(path if path.is_absolute() else (self.base_dir / path).resolve())

    def recipe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "language": self.language.value,
            "source": self.source,
            "commit": self.commit,
            "subdir": self.subdir,
            "python": self.python,
            "requirements": list(self.requirements),
            "source_roots": list(self.source_roots),
            "jars": list(self.jars),
            # Only when set, so environments built before the key existed keep their keys.
            **({"exclude_newer": self.exclude_newer} if self.exclude_newer else {}),
            **({"install_env": dict(self.install_env)} if self.install_env else {}),
            **({"java_release": self.java_release} if self.java_release else {}),
            **({"test_roots": list(self.test_roots)} if self.test_roots else {}),
            **({"build_dir": self.build_dir} if self.build_dir else {}),
            **({"maven_modules": list(self.maven_modules)} if self.maven_modules else {}),
            **({"maven_args": list(self.maven_args)} if self.maven_args else {}),
            **({"compile_per_file": True} if self.compile_per_file else {}),
            **({"edits": [e.recipe() for e in self.edits]} if self.edits else {}),
        }

    def key(self, *, source_hash: str, harness_version: str) -> str:
        """The environment's cache key: recipe + source content + harness version."""
        payload = canonical_json(
            {"recipe": self.recipe(), "source": source_hash, "harness": harness_version}
        )
        return sha256_text(payload)[:20]

    @property
    def slug(self) -> str:
        return self.name.replace("/", "---")


@dataclass(frozen=True, kw_only=True)
class Environment:
    """A built environment on disk. ``error`` is set when building failed (tasks: infra_error)."""

    spec: ProjectSpec
    path: Path
    key: str
    ready: bool
    error: str = ""

    @property
    def source_dir(self) -> Path:
        return self.path / "src"


class EnvironmentBuilder(ABC):
    language: Language

    @abstractmethod
    def build(self, spec: ProjectSpec, *, root: Path, force: bool = False) -> Environment:
        """Build (or find in the cache under ``root``) the environment for ``spec``."""

    @abstractmethod
    def check(self, env: Environment) -> str | None:
        """None when the environment is intact, else what is wrong."""


def parse_exclude_newer(value: object) -> str:
    """An ISO date or datetime as the RFC 3339 UTC timestamp uv's ``--exclude-newer`` takes.

    A date means the start of that day in UTC (packages uploaded before it); a datetime without
    an offset is taken as UTC. TOML date and datetime values are accepted as they are parsed.
    Raises ValueError for anything else.
    """
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:
                day = dt.date.fromisoformat(text)
                moment = dt.datetime(day.year, day.month, day.day)
            else:
                moment = dt.datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            raise ValueError(f"not an ISO date or datetime: {value!r}") from None
    else:
        raise ValueError(f"not an ISO date or datetime: {value!r}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record_root(value: object) -> str:
    """A relative folder inside the project ('' for its root); ValueError otherwise."""
    text = str(value).strip().replace("\\", "/")
    if not text:
        return ""
    norm = posixpath.normpath(text)
    if text.startswith("/") or norm == ".." or norm.startswith("../"):
        raise ValueError(f"must be a folder inside the project, got {value!r}")
    return "" if norm == "." else norm


def _install_env(value: object) -> tuple[tuple[str, str], ...]:
    """A table of environment variables (name -> string); ValueError otherwise."""
    if not isinstance(value, dict):
        raise ValueError(f"must be a table of NAME = \"value\", got {value!r}")
    pairs = []
    for name, text in sorted(value.items()):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not isinstance(text, str):
            raise ValueError(f"{name} = {text!r}: names are identifiers, values strings")
        pairs.append((name, text))
    return tuple(pairs)


def _flag(path: Path, name: str, entry: dict[str, Any], key: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise UserError(f"{path}: project {name!r}: {key} must be true or false, got {value!r}")
    return value


def load_manifest(path: Path) -> list[ProjectSpec]:
    """Read a projects manifest (TOML or JSON): ``[projects."owner/repo"]`` tables.

    Keys per project: language, source, commit, subdir, python, requirements, exclude_newer,
    record_root, install_env, source_roots, test_roots, build_dir, jars, java_release,
    maven_modules, maven_args, compile_per_file, submodules (Java); edits (both).
    """
    if not path.exists():
        raise UserError(f"projects manifest not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: malformed manifest ({exc})") from None
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict) or not projects:
        raise UserError(f"{path}: no [projects] table", hint='add [projects."owner/repo"]')
    specs = []
    allowed = {
        "language", "source", "commit", "subdir", "python", "requirements", "exclude_newer",
        "record_root", "install_env", "source_roots", "test_roots", "build_dir", "jars",
        "java_release",
        "maven_modules", "maven_args", "compile_per_file", "submodules", "edits",
    }
    for name, entry in projects.items():
        if not isinstance(entry, dict):
            raise UserError(f"{path}: project {name!r} must be a table")
        unknown = set(entry) - allowed
        if unknown:
            raise UserError(
                f"{path}: project {name!r} has unknown keys {sorted(unknown)}",
                hint=f"allowed: {sorted(allowed)}",
            )
        if "source" not in entry:
            raise UserError(f"{path}: project {name!r} has no 'source'")
        try:
            language = Language(entry.get("language", "python"))
        except ValueError:
            raise UserError(
                f"{path}: project {name!r}: unknown language {entry.get('language')!r}",
                hint=f"one of {[lang.value for lang in Language]}",
            ) from None
        try:
            exclude_newer = (parse_exclude_newer(entry["exclude_newer"])
                             if entry.get("exclude_newer", "") != "" else "")
        except ValueError as exc:
            raise UserError(
                f"{path}: project {name!r}: bad exclude_newer ({exc})",
                hint='write an ISO date or datetime, e.g. "2022-08-01" or "2022-08-01T12:00:00Z"',
            ) from None
        try:
            record_root = _record_root(entry.get("record_root", ""))
        except ValueError as exc:
            raise UserError(f"{path}: project {name!r}: bad record_root ({exc})") from None
        try:
            install_env = _install_env(entry.get("install_env", {}))
        except ValueError as exc:
            raise UserError(f"{path}: project {name!r}: bad install_env ({exc})") from None
        try:
            edits = parse_edits(entry.get("edits", []))
        except ValueError as exc:
            raise UserError(f"{path}: project {name!r}: {exc}") from None
        if entry.get("compile_per_file") and entry.get("maven_modules"):
            raise UserError(f"{path}: project {name!r}: compile_per_file is for plain source "
                            "folders, not maven_modules", hint="drop one of the two")
        specs.append(
            ProjectSpec(
                name=name,
                language=language,
                source=str(entry["source"]),
                commit=str(entry.get("commit", "")),
                subdir=str(entry.get("subdir", "")),
                python=str(entry.get("python", "")),
                requirements=tuple(str(r) for r in entry.get("requirements", ())),
                exclude_newer=exclude_newer,
                record_root=record_root,
                install_env=install_env,
                source_roots=tuple(str(r) for r in entry.get("source_roots", ())),
                test_roots=tuple(str(r) for r in entry.get("test_roots", ())),
                build_dir=str(entry.get("build_dir", "")).strip("/"),
                jars=tuple(str(r) for r in entry.get("jars", ())),
                java_release=str(entry.get("java_release", "")),
                maven_modules=tuple(str(m) for m in entry.get("maven_modules", ())),
                maven_args=tuple(str(a) for a in entry.get("maven_args", ())),
                compile_per_file=_flag(path, name, entry, "compile_per_file"),
                submodules=tuple(str(m).strip("/") for m in entry.get("submodules", ())),
                edits=edits,
                base_dir=path.parent.resolve(),
            )
        )
    return specs
