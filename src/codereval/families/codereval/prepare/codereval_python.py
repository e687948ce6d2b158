"""`prepare codereval-python`: records + official tests + projects -> a benchmark directory.

The directory has the original platform's layout, so the runner treats it like the official
tree (and ``--compat`` mounts it where the platform had it)::

    OUT/benchmark.json     what was prepared from what (sources, hashes, counts, checks)
    OUT/records.json       the records, each with test_kind / test_path naming its test
    OUT/repos/<owner>---<repo>/...   each project, its official test modules beside the sources
    OUT/repos/standalone/...         the standalone tests
    OUT/projects.toml      the environments' manifest: local sources, Python, pinned requirements
    OUT/checks.jsonl       one row per task: test, project, file, function, file_content

It is built in a staging folder beside OUT and renamed at the end: an error leaves no half-made
benchmark behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codereval.environments.base import ProjectSpec
from codereval.errors import UserError, name_some
from codereval.families.codereval.prepare.checks import TaskCheck, check_file
from codereval.families.codereval.prepare.layout import (
    is_standalone_test,
    module_test_ids,
    module_test_path,
    standalone_test_path,
)
from codereval.families.codereval.prepare.projects import (
    Placed,
    load_project_specs,
    place_project,
    placed_json,
    placement_notes,
)
from codereval.families.codereval.prepare.staging import build_in_staging, check_destination
from codereval.families.codereval.records import record_to_task
from codereval.model import Language, Task, TestKind, __version__
from codereval.runners.python import STANDALONE, project_folder
from codereval.source.inject import InjectionError, last_def_text
from codereval.storage.jsonl import atomic_write_jsonl, atomic_write_text, read_json_or_jsonl
from codereval.workspace.views import remove_tree

FAMILY = "codereval-python"


@dataclass(frozen=True, kw_only=True)
class TestsSource:
    """Where the official tests come from: exactly one of the three."""

    __test__ = False  # not a pytest class

    test_map: Path | None = None
    image: Path | None = None
    tree: Path | None = None
    image_tag: str | None = None

    def describe(self) -> dict[str, str]:
        for kind in ("test_map", "image", "tree"):
            value = getattr(self, kind)
            if value is not None:
                return {"kind": kind, "path": str(Path(value).resolve())}
        return {"kind": "none", "path": ""}


@dataclass(kw_only=True)
class PrepareReport:
    out: Path
    tasks: int
    checks: list[TaskCheck]
    placed: dict[str, Placed]
    notes: list[str] = field(default_factory=list)

    @property
    def ready(self) -> int:
        return sum(not c.problems for c in self.checks)


def load_test_map(path: Path) -> dict[str, str]:
    """The published test map: one JSON object ``{task id: test file text}``."""
    if not path.is_file():
        raise UserError(f"test map not found: {path}")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not a JSON test map ({exc})") from None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise UserError(f"{path}: a test map is one JSON object {{task id: test file text}}")
    return value


def _load_records(path: Path) -> list[tuple[dict[str, Any], Task]]:
    rows = read_json_or_jsonl(path)
    loaded = []
    for where, record in rows:
        task = record_to_task(record, language=Language.PYTHON, origin=f"{path}: record {where}")
        loaded.append((record, task))
    if not loaded:
        raise UserError(f"{path}: no records")
    return loaded


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_repos_tree(tree: Path, dest: Path) -> None:
    source = tree / "repos" if (tree / "repos").is_dir() else tree
    if not source.is_dir():
        raise UserError(f"repos tree not found: {tree}", hint="the folder holding repos/")
    shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)


def prepare_codereval_python(
    *,
    records: Path,
    tests: TestsSource,
    out: Path,
    manifest: Path | None = None,
    checkouts: Path | None = None,
    fetch: bool = False,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> PrepareReport:
    say = progress or (lambda _message: None)
    out = check_destination(out, force=force, checkouts=checkouts)
    loaded = _load_records(records)
    specs = load_project_specs(manifest)
    test_map = load_test_map(tests.test_map) if tests.test_map is not None else None

    def build(staging: Path) -> PrepareReport:
        report = _prepare_into(
            staging, loaded=loaded, specs=specs, tests=tests, test_map=test_map,
            checkouts=checkouts, fetch=fetch, say=say,
        )
        _write_benchmark_json(staging, records=records, tests=tests, manifest=manifest,
                              report=report)
        return report

    report = build_in_staging(out, build)
    report.out = out
    return report


def _prepare_into(
    root: Path,
    *,
    loaded: Sequence[tuple[dict[str, Any], Task]],
    specs: dict[str, ProjectSpec],
    tests: TestsSource,
    test_map: dict[str, str] | None,
    checkouts: Path | None,
    fetch: bool,
    say: Callable[[str], None],
) -> PrepareReport:
    repos = root / "repos"
    repos.mkdir()
    if tests.image is not None:
        from codereval.families.codereval.prepare.docker_image import extract_image_tree

        say(f"reading the image {tests.image}")
        extract_image_tree(tests.image, repos, image=tests.image_tag)
    elif tests.tree is not None:
        say(f"copying the test tree {tests.tree}")
        _copy_repos_tree(tests.tree, repos)
    tasks = [task for _record, task in loaded]
    kinds = {
        task.task_id: _kind(task, test_map=test_map, repos=repos)
        for task in tasks
    }
    in_project = sorted({t.project for t in tasks if kinds[t.task_id] == "module"})
    placed: dict[str, Placed] = {}
    for index, project in enumerate(in_project, start=1):
        say(f"[{index}/{len(in_project)}] project {project}")
        placed[project] = place_project(
            specs.get(project), project=project, dest=repos / project_folder(project),
            checkouts=checkouts, fetch=fetch, downloads=root / ".downloads",
        )
    remove_tree(root / ".downloads")
    out_records: list[dict[str, Any]] = []
    checks: list[TaskCheck] = []
    for record, task in loaded:
        kind = kinds[task.task_id]
        spec = specs.get(task.project)
        record_root = spec.record_root if spec is not None else ""
        rel = (standalone_test_path(task) if kind == "standalone"
               else module_test_path(task, record_root=record_root))
        found = _place_test(task, rel=rel, repos=repos, test_map=test_map)
        row = dict(record)
        reference = "record" if task.reference.strip() else "none"
        if reference == "none" and found != "missing":
            code = _reference_from_test(repos / rel, task.name)
            if code:
                row["code"], reference = code, "official test"
        if found != "missing":
            row["test_kind"] = (TestKind.CODEREVAL_STANDALONE if kind == "standalone"
                                else TestKind.CODEREVAL_MODULE).value
            row["test_path"] = f"repos/{rel}"
        out_records.append(row)
        checks.append(_check(task, kind=kind, found=found, placed=placed, repos=repos,
                             record_root=record_root, reference=reference))
    atomic_write_text(root / "records.json",
                      json.dumps({"RECORDS": out_records}, ensure_ascii=False, indent=1) + "\n")
    atomic_write_jsonl(root / "checks.jsonl", [c.to_dict() for c in checks])
    notes = _write_manifest(root / "projects.toml", placed=placed, specs=specs,
                            standalone=any(k == "standalone" for k in kinds.values()))
    notes += placement_notes(placed)
    return PrepareReport(out=root, tasks=len(tasks), checks=checks, placed=placed, notes=notes)


def _kind(task: Task, *, test_map: dict[str, str] | None, repos: Path) -> str:
    if test_map is not None:
        return "standalone" if is_standalone_test(task, test_map.get(task.task_id)) else "module"
    # A tree says it by where the file is: any level can have a standalone file.
    standalone = task.task_id not in module_test_ids()
    if standalone and (repos / standalone_test_path(task)).is_file():
        return "standalone"
    return "module"


def _place_test(task: Task, *, rel: str, repos: Path, test_map: dict[str, str] | None) -> str:
    target = repos / rel
    if test_map is not None:
        text = test_map.get(task.task_id)
        if text is None:
            return "missing"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return "map"
    return "tree" if target.is_file() else "missing"


def _reference_from_test(test: Path, name: str) -> str:
    """The function the official test holds (the platform's copy of the module or the standalone
    file, reference in place): what the harness replaces with a sample."""
    try:
        return last_def_text(test.read_text(encoding="utf-8"), name)
    except (InjectionError, OSError, UnicodeDecodeError):
        return ""


def _check(
    task: Task, *, kind: str, found: str, placed: dict[str, Placed], repos: Path,
    record_root: str, reference: str,
) -> TaskCheck:
    assert task.location is not None
    project_dir = repos / project_folder(task.project)
    state = placed[task.project].origin if kind == "module" else "n/a"
    if kind == "module" and state != "missing":
        file, function, content = check_file(
            project_dir, os.path.join(record_root, task.location.file_path), task.name,
            task.file_content,
        )
    else:
        file = function = content = "not checked"
    return TaskCheck(task_id=task.task_id, project=task.project, kind=kind, test=found,
                     project_state=state, file=file, function=function, content=content,
                     reference=reference)


def _toml_value(value: object) -> str:
    if isinstance(value, dict):
        pairs = ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + pairs + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _write_manifest(
    path: Path, *, placed: dict[str, Placed], specs: dict[str, ProjectSpec], standalone: bool
) -> list[str]:
    """The environments' manifest: every present project, from its folder in repos/."""
    notes: list[str] = []
    lines = ["# Written by `codereval prepare`: the projects as prepared here, with the Python",
             "# versions and pinned requirements of the manifest they came from.", ""]
    entries: list[tuple[str, ProjectSpec | None, str]] = [
        (name, specs.get(name), f"repos/{project_folder(name)}")
        for name, where in sorted(placed.items()) if where.origin != "missing"
    ]
    if standalone:
        entries.append((STANDALONE, specs.get(STANDALONE), f"repos/{STANDALONE}"))
    unknown = [name for name, spec, _src in entries if spec is None and name != STANDALONE]
    if unknown:
        notes.append(f"not in the projects manifest (built with no requirements): "
                     f"{name_some(unknown)}")
    for name, spec, source in entries:
        if spec is None and name == STANDALONE:
            notes.append("no standalone environment in the manifest: standalone tests run "
                         "with codereval's own Python and only the standard library")
            continue
        fields: dict[str, object] = {"language": "python", "source": source}
        if spec is not None:
            fields.update(python=spec.python, requirements=list(spec.requirements),
                          exclude_newer=spec.exclude_newer, record_root=spec.record_root,
                          install_env=dict(spec.install_env))
            if spec.commit:
                lines.append(f"# {name}: {spec.source} at {spec.commit}")
        lines.append(f'[projects."{name}"]')
        lines += [f"{key} = {_toml_value(value)}" for key, value in fields.items()
                  if value not in ("", [], {})]
        lines.append("")
    atomic_write_text(path, "\n".join(lines))
    return notes


def _write_benchmark_json(
    root: Path, *, records: Path, tests: TestsSource, manifest: Path | None,
    report: PrepareReport,
) -> None:
    meta = {
        "family": FAMILY,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "codereval_version": __version__,
        # Absolute: the file is named for whoever reads this later, from wherever.
        "records": {"path": str(records.resolve()), "sha256": _sha256(records),
                    "tasks": report.tasks},
        "tests": tests.describe(),
        "projects_manifest": str(manifest.resolve()) if manifest else "shipped with codereval",
        "projects": placed_json(report.placed),
        "ready_tasks": report.ready,
        "notes": report.notes,
    }
    atomic_write_text(root / "benchmark.json", json.dumps(meta, indent=2) + "\n")


def read_prepared(path: Path) -> tuple[Path, Path, Path]:
    """(records, tests dir, projects manifest) of a prepared benchmark directory."""
    meta = path / "benchmark.json"
    if not meta.is_file():
        raise UserError(f"{path} is not a prepared benchmark (no benchmark.json)",
                        hint="make one with `codereval prepare codereval-python`")
    tests = path
    if (path / "tests").is_dir():
        # `codereval build java-tests` records a Java benchmark's tests there.
        try:
            family = json.loads(meta.read_text(encoding="utf-8")).get("family")
        except (OSError, ValueError):
            family = None
        if family == "codereval-java":
            tests = path / "tests"
    return path / "records.json", tests, path / "projects.toml"
