"""`prepare codereval-java`: result rows + prompts (+ records) + projects -> a benchmark directory.

CoderEval-Java's 230 tasks live in 10 projects, one git repository each.
The official records are rarely at hand and the official tests were never published, so this
works from what is public: an official result file (task ids, method names, levels), a prompt
file (signatures, Javadoc) and the projects at the commits of the manifest shipped with
codereval (``data/codereval_java/projects.toml``). Each task's method is located in its
project's source roots (``java_locate``) and written as a record of the official 15-key form;
given the real ``CoderEval4Java.json``, its records are used as they are (their ``project``
mapped to the manifest's). The directory::

    OUT/benchmark.json     what was prepared from what
    OUT/records.json       the records (15 keys; ``project`` is the manifest's owner/repo)
    OUT/repos/<owner>---<repo>/...   each project at its commit
    OUT/projects.toml      the environments' manifest (Maven modules, Java release)
    OUT/checks.jsonl       one row per task: project, file, method located

Built in a staging folder beside OUT and renamed at the end.
"""

from __future__ import annotations

import json
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from codereval.environments.base import ProjectSpec, load_manifest
from codereval.errors import UserError
from codereval.families.codereval.official import PromptEntry, load_prompt_file
from codereval.families.codereval.prepare.checks import TaskCheck, content_difference
from codereval.families.codereval.prepare.codereval_python import PrepareReport
from codereval.families.codereval.prepare.java_locate import (
    Found,
    Method,
    index_methods,
    locate,
    methods_of,
)
from codereval.families.codereval.prepare.projects import (
    Placed,
    place_project,
    placed_json,
    placement_notes,
)
from codereval.families.codereval.prepare.staging import build_in_staging, check_destination
from codereval.families.codereval.records import JAVA_KEYS
from codereval.model import __version__
from codereval.runners.python import project_folder
from codereval.storage.jsonl import (
    atomic_write_jsonl,
    atomic_write_text,
    iter_jsonl,
    read_json_or_jsonl,
)
from codereval.workspace.views import remove_tree

FAMILY = "codereval-java"
SHIPPED_MANIFEST = "codereval_java/projects.toml"
NO_TESTS = "not published"


def shipped_manifest() -> Path:
    """The manifest of the CoderEval-Java projects that ships with codereval."""
    return Path(str(resources.files("codereval.data").joinpath(SHIPPED_MANIFEST)))


@dataclass(frozen=True, kw_only=True)
class JavaProjects:
    """The manifest: each project's spec, and which project each task belongs to."""

    specs: dict[str, ProjectSpec]
    official_names: dict[str, str]  # manifest project -> the result files' project_name
    task_project: dict[str, str]  # task id -> manifest project


def load_java_projects(path: Path | None = None) -> JavaProjects:
    """``[projects."owner/repo"]`` tables (an environments manifest) plus an ``[official]``
    table naming each project's ``name`` in the official files and its ``tasks``."""
    path = path or shipped_manifest()
    specs = {spec.name: spec for spec in load_manifest(path)}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    official = data.get("official", {})
    if not isinstance(official, dict):
        raise UserError(f"{path}: [official] must be a table of projects")
    names: dict[str, str] = {}
    owner: dict[str, str] = {}
    for project, entry in official.items():
        if project not in specs or not isinstance(entry, dict):
            raise UserError(f"{path}: [official.{project!r}] names no project of the manifest")
        names[project] = str(entry.get("name", ""))
        for task_id in entry.get("tasks", []):
            if str(task_id) in owner:
                raise UserError(f"{path}: task {task_id} is in two projects")
            owner[str(task_id)] = project
    return JavaProjects(specs=specs, official_names=names, task_project=owner)


@dataclass(frozen=True, kw_only=True)
class ResultRow:
    task_id: str
    name: str
    project_name: str
    level: str


def load_result_rows(path: Path) -> list[ResultRow]:
    """The tasks of an official Java result file (``_id, method_name, project_name,
    code_level``)."""
    if not path.is_file():
        raise UserError(f"official result file not found: {path}",
                        hint="pass results/java/<model>/Raw_Input.jsonl_out.jsonl")
    rows = []
    for lineno, row in iter_jsonl(path):
        missing = [k for k in ("_id", "method_name", "project_name") if k not in row]
        if missing:
            raise UserError(f"{path}:{lineno}: not an official Java result line "
                            f"(no {', '.join(missing)})")
        rows.append(ResultRow(task_id=str(row["_id"]), name=str(row["method_name"]),
                              project_name=str(row["project_name"]),
                              level=str(row.get("code_level", ""))))
    if not rows:
        raise UserError(f"{path}: no result lines")
    return rows


def _module_roots(spec: ProjectSpec) -> list[str]:
    """Where a project's task files live: its Maven modules' main roots, else source_roots."""
    if spec.maven_modules:
        return [f"{m}/src/main/java" for m in spec.maven_modules]
    return list(spec.source_roots) or ["src/main/java"]


def prepare_codereval_java(
    *,
    results: Path,
    prompts: Path,
    out: Path,
    records: Path | None = None,
    manifest: Path | None = None,
    checkouts: Path | None = None,
    fetch: bool = False,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> PrepareReport:
    say = progress or (lambda _message: None)
    out = check_destination(out, force=force, checkouts=checkouts)
    rows = load_result_rows(results)
    entries: dict[str, PromptEntry] = {}
    for entry in load_prompt_file(prompts):
        entries.setdefault(entry.question_id, entry)
    given = _load_records(records) if records is not None else None
    projects = load_java_projects(manifest)

    def build(staging: Path) -> PrepareReport:
        report = _prepare_into(staging, rows=rows, prompts=entries, given=given,
                               projects=projects, checkouts=checkouts, fetch=fetch, say=say)
        meta = {
            "family": FAMILY,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "codereval_version": __version__,
            "results": str(results.resolve()),
            "prompts": str(prompts.resolve()),
            "records": (str(records.resolve()) if records
                        else "rebuilt from the prompts and projects"),
            "tests": "none: the official CoderEval-Java tests were never published",
            "projects_manifest": (str(manifest.resolve()) if manifest
                                  else "shipped with codereval"),
            "projects": placed_json(report.placed),
            "ready_tasks": report.ready,
            "notes": report.notes,
        }
        atomic_write_text(staging / "benchmark.json", json.dumps(meta, indent=2) + "\n")
        return report

    report = build_in_staging(out, build)
    report.out = out
    return report


def _load_records(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        raise UserError(f"records file not found: {path}")
    found = {}
    for where, record in read_json_or_jsonl(path):
        if "_id" not in record or "file_name" not in record:
            raise UserError(f"{path}: record {where} is not a CoderEval-Java record")
        found[str(record["_id"])] = record
    return found


def _project_of(row: ResultRow, projects: JavaProjects) -> str | None:
    known = projects.task_project.get(row.task_id)
    if known is not None:
        return known
    named = [p for p, name in projects.official_names.items() if name == row.project_name]
    return named[0] if len(named) == 1 else None


def _prepare_into(
    root: Path,
    *,
    rows: Sequence[ResultRow],
    prompts: dict[str, PromptEntry],
    given: dict[str, dict[str, Any]] | None,
    projects: JavaProjects,
    checkouts: Path | None,
    fetch: bool,
    say: Callable[[str], None],
) -> PrepareReport:
    repos = root / "repos"
    repos.mkdir()
    owners = {row.task_id: _project_of(row, projects) for row in rows}
    needed = sorted({p for p in owners.values() if p is not None})
    placed: dict[str, Placed] = {}
    for index, name in enumerate(needed, start=1):
        say(f"[{index}/{len(needed)}] project {name}")
        placed[name] = place_project(
            projects.specs[name], project=name, dest=repos / project_folder(name),
            checkouts=checkouts, fetch=fetch, downloads=root / ".downloads",
        )
    remove_tree(root / ".downloads")
    indexes: dict[str, dict[str, list[Method]]] = {}
    out_records: list[dict[str, Any]] = []
    checks: list[TaskCheck] = []
    for row in rows:
        project = owners[row.task_id]
        state = placed[project].origin if project is not None else "missing"
        base = dict(task_id=row.task_id, project=project or row.project_name, kind="module",
                    test=NO_TESTS, project_state=state)
        if project is None or state == "missing":
            checks.append(TaskCheck(**base, file="not checked", function="not checked",
                                    content="project not in the manifest" if project is None
                                    else "not checked"))
            out_records.append(_unlocated(row, project or row.project_name))
            continue
        spec = projects.specs[project]
        folder = repos / project_folder(project)
        if given is not None:
            record, check = _given_record(given.get(row.task_id), row=row, project=project,
                                          folder=folder, spec=spec, base=base)
        else:
            if project not in indexes:
                say(f"indexing the methods of {project}")
                indexes[project] = index_methods(folder, _module_roots(spec))
            record, check = _located_record(row, prompts.get(row.task_id), project=project,
                                            folder=folder, index=indexes[project], base=base)
        checks.append(check)
        out_records.append(record if record is not None else _unlocated(row, project))
    atomic_write_text(root / "records.json",
                      json.dumps({"RECORDS": out_records}, ensure_ascii=False, indent=1) + "\n")
    atomic_write_jsonl(root / "checks.jsonl", [c.to_dict() for c in checks])
    _write_manifest(root / "projects.toml", placed=placed, specs=projects.specs)
    notes = ["no official tests: CoderEval-Java's tests were never published; evaluate gives "
             "compile verdicts (a sample that compiles is not judged)"]
    unlocated = sum(1 for c in checks if c.problems)
    if unlocated:
        notes.append(f"{unlocated} task(s) not located: their records have no location, so "
                     "their samples are not evaluated (infra_error)")
    notes += placement_notes(placed)
    return PrepareReport(out=root, tasks=len(rows), checks=checks, placed=placed, notes=notes)


def _unlocated(row: ResultRow, project: str) -> dict[str, Any]:
    """A record without a location: its samples are evaluated as "the task has no file
    location" (infra_error), never dropped and never guessed."""
    return {**dict.fromkeys(JAVA_KEYS, ""), "_id": row.task_id, "name": row.name,
            "level": row.level, "project": project}


def _located_record(
    row: ResultRow, prompt: PromptEntry | None, *, project: str, folder: Path,
    index: dict[str, list[Method]], base: dict[str, Any],
) -> tuple[dict[str, Any] | None, TaskCheck]:
    if prompt is None:
        return None, TaskCheck(**base, file="not checked", function="not found: no prompt",
                               content="not checked")
    found: Found = locate(index, name=row.name, signature=prompt.signature,
                          javadoc=prompt.docstring)
    method = found.method
    if method is None:
        return (_unlocated(row, project),
                TaskCheck(**base, file="not checked", function=found.status,
                          content="not checked"))
    text = (folder / method.file).read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    record = {
        "_id": row.task_id,
        "all_context": "",
        "class_name": method.class_name,
        "code": "".join(lines[method.lineno - 1 : method.end_lineno]),
        "docstring": method.javadoc,
        "end_lineno": str(method.end_lineno),
        "file_content": text,
        "file_name": Path(method.file).name,
        "human_label": "",
        "level": row.level,
        "lineno": str(method.lineno),
        "name": row.name,
        "oracle_context": "",
        "package": method.package,
        "project": project,
    }
    assert tuple(sorted(record)) == tuple(sorted(JAVA_KEYS))
    return record, TaskCheck(**base, file="ok", function=found.status,
                             content=f"located at {method.file}:{method.lineno}")


def _given_record(
    record: dict[str, Any] | None, *, row: ResultRow, project: str, folder: Path,
    spec: ProjectSpec, base: dict[str, Any],
) -> tuple[dict[str, Any] | None, TaskCheck]:
    if record is None:
        return None, TaskCheck(**base, file="not checked", function="not found: no record",
                               content="not checked")
    package = str(record.get("package", ""))
    relative = "/".join([*package.split("."), str(record["file_name"])]) if package \
        else str(record["file_name"])
    path = next((folder / r / relative for r in _module_roots(spec)
                 if (folder / r / relative).is_file()), None)
    kept = {**record, "project": project}
    if path is None:
        return kept, TaskCheck(**base, file=f"missing: {relative}", function="not checked",
                               content="not checked")
    text = path.read_text(encoding="utf-8", errors="replace")
    names = {m.name for m in methods_of(text, file=relative)}
    function = "ok" if row.name in names else "not defined"
    return kept, TaskCheck(**base, file="ok", function=function,
                           content=content_difference(text, str(record.get("file_content", ""))))


def _write_manifest(path: Path, *, placed: dict[str, Placed],
                    specs: dict[str, ProjectSpec]) -> None:
    lines = ["# Written by `codereval prepare codereval-java`: the projects as prepared here",
             "# (Maven modules and Java release from the manifest they came from).", ""]
    for name, where in sorted(placed.items()):
        if where.origin == "missing":
            continue
        spec = specs[name]
        lines.append(f"# {name}: {spec.source} at {spec.commit}")
        if spec.edits and where.origin != "tree":
            # Applied to repos/ by prepare: listing them again would apply them twice.
            lines.append(f"# with the {len(spec.edits)} source edit(s) of the manifest "
                         "applied (see the manifest for why)")
        lines.append(f'[projects."{name}"]')
        fields: dict[str, object] = {
            "language": "java", "source": f"repos/{project_folder(name)}",
            "java_release": spec.java_release, "maven_modules": list(spec.maven_modules),
            "maven_args": list(spec.maven_args), "source_roots": list(spec.source_roots),
            "jars": list(spec.jars), "compile_per_file": spec.compile_per_file,
        }
        lines += [f"{key} = {json.dumps(value)}" for key, value in fields.items()
                  if value not in ("", [], False)]
        lines.append("")
    atomic_write_text(path, "\n".join(lines))
