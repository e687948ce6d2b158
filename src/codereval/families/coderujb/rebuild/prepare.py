"""``codereval prepare defects4j``: Defects4J's bugs rebuilt from its metadata and the projects'
public git histories, checked against its trigger tests, and made into CoderUJB tasks.

What it writes (``--out``), read back by ``codereval evaluate --tasks OUT/tasks.jsonl
--projects OUT/projects.toml``:

- ``projects.toml`` and ``bugs.toml``: each project's repository, each bug's two versions
  (the fixed revision; the buggy one, the fixed revision with ``overlays/<P>/<id>`` laid over);
- ``overlays/``: the buggy versions' source files;
- ``rebuild.jsonl``: one line per requested bug (``reproduced``, or why not, with the tests
  that failed on each version and the times);
- ``coderujb/{apr,dd,itg}.jsonl``: CoderUJB's rows of the reproduced bugs, in the published
  datasets' columns (what ``codereval tasks`` and ``--tasks`` read from the Hub's files);
- ``tasks.jsonl``: the same tasks as codereval ``Task`` lines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.families.coderujb.dataset import load_coderujb
from codereval.families.coderujb.rebuild.coverage_map import CoverageMapError, coverage_map
from codereval.families.coderujb.rebuild.metadata import (
    REPOSITORIES,
    Defects4jBug,
    available_projects,
    load_bugs,
    projects_folder,
    suite_patterns,
)
from codereval.families.coderujb.rebuild.reproduce import Reproduction, check_bug
from codereval.families.coderujb.rebuild.tasks import KINDS, IssueReport, Truncate, bug_rows
from codereval.families.coderujb.rebuild.tasks_tested import SeenNames, ctg_rows, fcg_rows
from codereval.families.coderujb.rebuild.versions import (
    JAVA_RELEASE,
    BugVersions,
    NotRebuildable,
    commit_time,
    plan_versions,
    write_overlay,
)
from codereval.runners.base import RunContext

REBUILD_FILE = "rebuild.jsonl"
TASKS_FILE = "tasks.jsonl"
# The projects issue #35 asks for: Defects4J's whose histories are public with the revisions.
DEFAULT_PROJECTS = ("Lang", "Math", "Time", "Cli", "Codec", "Csv", "Gson", "JxPath",
                    "Collections", "Compress", "JacksonCore")


@dataclass(frozen=True, kw_only=True)
class BugReport:
    """One line of rebuild.jsonl."""

    bug: str
    project: str
    bug_id: str
    status: str  # reproduced | not_reproduced | not_rebuilt
    reason: str = ""
    note: str = ""  # how a reproduced bug was checked, when not the usual way
    fixed_revision: str = ""
    failing_fixed: tuple[str, ...] = ()
    failing_buggy: tuple[str, ...] = ()
    trigger_tests: tuple[str, ...] = ()
    build_seconds: float = 0.0
    test_seconds: float = 0.0
    tasks: dict[str, int] = field(default_factory=dict)
    no_tasks: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PrepareResult:
    out: Path
    bugs: list[BugReport]
    tasks: int


def find_repository(checkouts: Path, project: str) -> Path | None:
    """A project's clone under ``checkouts``: named by Defects4J's id (``Lang``), by the
    repository (``commons-lang``) or ``owner---repo``; a work tree or a bare repository."""
    slug = REPOSITORIES.get(project, "")
    names = [project, project.lower()]
    if slug:
        owner, repo = slug.split("/")
        names += [repo, f"{owner}---{repo}", f"{owner}+{repo}"]
    for name in names:
        for candidate in (checkouts / name, checkouts / name / "repo", checkouts / f"{name}.git"):
            if (candidate / ".git").exists() or (candidate / "HEAD").is_file():
                return candidate.resolve()
    return None


# Where --fetch clones from; git's own ``url.<base>.insteadOf`` redirects it (a mirror, or a
# folder of bare clones in tests).
GIT_HOST = "https://github.com/"


def fetch_repository(checkouts: Path, project: str,
                     say: Callable[[str], None] | None = None) -> Path:
    """Clone a project's public repository (bare, its whole history: a bug's revisions can be
    anywhere in it) into ``checkouts`` as ``<repository>.git``; the clone is made beside its
    final name and renamed, so an interrupted clone is never taken for a whole one."""
    slug = REPOSITORIES.get(project)
    if slug is None:
        raise UserError(f"no public repository is known for {project}",
                        hint=f"clone it yourself into {checkouts}")
    url = f"{GIT_HOST}{slug}.git"
    target = checkouts / f"{slug.split('/')[1]}.git"
    checkouts.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=checkouts))
    if say is not None:
        say(f"cloning {url} into {target}")
    try:
        done = subprocess.run(["git", "clone", "--bare", "--quiet", url, str(partial / "repo")],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["git failed"])[-1]
            raise UserError(f"could not clone {url}: {last}",
                            hint=f"clone it yourself into {checkouts}, or try again")
        (partial / "repo").rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target.resolve()


def select_bugs(defects4j: Path, projects: Sequence[str], wanted: Sequence[str],
                limit: int | None) -> list[Defects4jBug]:
    """The requested bugs: every active bug of ``projects``, or those named (``Lang-1``)."""
    known = set(available_projects(defects4j))
    chosen: list[Defects4jBug] = []
    if wanted:
        by_project: dict[str, list[str]] = {}
        for name in wanted:
            project, _, bug_id = name.rpartition("-")
            if not project or not bug_id:
                raise UserError(f"bug {name!r} is not <Project>-<id>", hint="e.g. Lang-1")
            by_project.setdefault(project, []).append(bug_id)
        for project, ids in by_project.items():
            if project not in known:
                raise UserError(f"Defects4J has no project {project!r}",
                                hint=f"one of: {', '.join(sorted(known))}")
            bugs = {b.bug_id: b for b in load_bugs(defects4j, project)}
            missing = [i for i in ids if i not in bugs]
            if missing:
                raise UserError(f"{project} has no active bug {missing[0]} in Defects4J",
                                hint="see its framework/projects/<P>/active-bugs.csv")
            chosen += [bugs[i] for i in ids]
    else:
        for project in projects:
            if project not in known:
                raise UserError(f"Defects4J has no project {project!r}",
                                hint=f"one of: {', '.join(sorted(known))}")
            chosen += load_bugs(defects4j, project)[:limit]
    return chosen


def prepare_defects4j(
    *, defects4j: Path, checkouts: Path, out: Path, ctx_for: Callable[[Path], RunContext],
    projects: Sequence[str] = DEFAULT_PROJECTS, bugs: Sequence[str] = (),
    limit: int | None = None, jobs: int = 2, force: bool = False,
    issues: Mapping[str, IssueReport] | None = None, truncate: Truncate | None = None,
    progress: Callable[[BugReport], None] | None = None, fetch: bool = False,
    say: Callable[[str], None] | None = None,
) -> PrepareResult:
    """Rebuild the requested bugs into ``out`` (written whole at the end: an interrupted run
    leaves nothing). ``ctx_for(projects.toml)`` gives the context the checks run in."""
    if out.exists() and not force:
        raise UserError(f"{out} exists", hint="pass --force to replace it, or another --out")
    chosen = select_bugs(defects4j, projects, bugs, limit)
    repositories: dict[str, Path] = {}
    for project in dict.fromkeys(b.project for b in chosen):
        found = find_repository(checkouts, project)
        if found is None and fetch:
            found = fetch_repository(checkouts, project, say)
        if found is None:
            where = REPOSITORIES.get(project, "its repository")
            raise UserError(f"no clone of {project} in {checkouts}",
                            hint=f"pass --fetch, or git clone {GIT_HOST}{where} "
                                 f"{checkouts / where.split('/')[-1]}")
        repositories[project] = found
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        plans: dict[str, BugVersions] = {}
        reports: dict[str, BugReport] = {}
        for bug in chosen:
            try:
                plans[bug.name] = plan_versions(
                    bug, repositories[bug.project],
                    lib=projects_folder(defects4j) / bug.project / "lib",
                    shared_lib=projects_folder(defects4j) / "lib")
            except NotRebuildable as exc:
                reports[bug.name] = _report(bug, status="not_rebuilt", reason=str(exc))
                if progress is not None:
                    progress(reports[bug.name])
        for plan in plans.values():
            write_overlay(plan, staging / overlay_path(plan.bug))
            if plan.fixed_files:
                write_overlay(plan, staging / overlay_path(plan.bug, "fixed"), fixed=True)
        suites = {project: suite_patterns(defects4j, project) for project in repositories}
        write_manifests(staging, plans, repositories, suites)
        ctx = ctx_for(staging / "projects.toml")
        from codereval.families.coderujb.runner import CoderUjbRunner

        runner = CoderUjbRunner()

        def check(plan: BugVersions) -> BugReport:
            bug = plan.bug
            found: Reproduction = check_bug(runner, ctx, project=bug.project, bug_id=bug.bug_id,
                                            name=bug.name, trigger=bug.trigger_tests,
                                            excluded=bug.excluded_tests)
            report = _report(bug, status="reproduced" if found.reproduced else "not_reproduced",
                             reason=found.reason, note=found.note,
                             failing_fixed=found.failing_fixed,
                             failing_buggy=found.failing_buggy,
                             build_seconds=found.build_seconds,
                             test_seconds=found.test_seconds)
            if progress is not None:
                progress(report)
            return report

        try:
            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                for report in pool.map(check, plans.values()):
                    reports[report.bug] = report
        finally:
            runner.close()
        # Only reproduced bugs stay: a version that does not behave as Defects4J says is
        # never used, not even by a published row that names it.
        kept = {n: p for n, p in plans.items() if reports[n].status == "reproduced"}
        for name, plan in plans.items():
            if name not in kept:
                shutil.rmtree((staging / overlay_path(plan.bug)).parent, ignore_errors=True)
        write_manifests(staging, kept, repositories, suites)
        made = 0
        by_kind: dict[str, dict[str, dict[str, Any]]] = {
            kind: {} for kind in (*KINDS, "fcg", "ctg")}
        seen = SeenNames()
        for project in dict.fromkeys(p.bug.project for p in kept.values()):
            latest = max((p for p in kept.values() if p.bug.project == project),
                         key=lambda p: commit_time(repositories[project], p.bug.fixed_revision))
            tested = _tested_rows(latest, repositories[project], ctx=ctx, seen=seen,
                                  truncate=truncate)
            if isinstance(tested, str):
                reports[latest.bug.name] = replace(
                    reports[latest.bug.name], no_tasks={"fcg": tested, "ctg": tested})
                continue
            made_tested, pairs = tested
            for kind, made_rows in made_tested.items():
                for row in made_rows:
                    by_kind[kind].setdefault(str(row["task_id"]), row)
            # A kind with no row says why: an empty map is not the rules finding nothing.
            reports[latest.bug.name] = replace(
                reports[latest.bug.name],
                tasks={k: len(v) for k, v in made_tested.items() if v},
                no_tasks={k: (f"none of the {pairs} function-test pairs of its fixed "
                              "version's map passes CoderUJB's rules" if pairs else
                              "its fixed version's function-test map is empty (no test ran a "
                              "function of the project's classes)")
                          for k, v in made_tested.items() if not v})
        for name, plan in plans.items():
            if reports[name].status != "reproduced":
                continue
            rows, skipped = bug_rows(plan, repositories[plan.bug.project], issues=issues,
                                     truncate=truncate)
            for kind, made_rows in rows.items():
                for row in made_rows:
                    # DD rows are keyed by the function's text, which two bugs can share.
                    by_kind[kind].setdefault(str(row["task_id"]), row)
            reports[name] = replace(reports[name],
                                    tasks={**reports[name].tasks,
                                           **{k: len(v) for k, v in rows.items() if v}},
                                    no_tasks={**reports[name].no_tasks, **skipped})
        (staging / "coderujb").mkdir()
        with (staging / TASKS_FILE).open("w", encoding="utf-8") as tasks_file:
            for kind, keyed in by_kind.items():
                published = staging / "coderujb" / f"{kind}.jsonl"
                with published.open("w", encoding="utf-8") as handle:
                    for key in sorted(keyed):  # CoderUJB sorts each list by task id
                        handle.write(json.dumps(keyed[key], ensure_ascii=False) + "\n")
                if keyed:
                    for task in load_coderujb(published, kind=kind):
                        tasks_file.write(task.model_dump_json(exclude_defaults=True) + "\n")
                        made += 1
        ordered = [reports[b.name] for b in chosen]
        with (staging / REBUILD_FILE).open("w", encoding="utf-8") as handle:
            for report in ordered:
                handle.write(json.dumps(asdict(report), sort_keys=True) + "\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return PrepareResult(out=out, bugs=ordered, tasks=made)


def _tested_rows(plan: BugVersions, repository: Path, *, ctx: RunContext, seen: SeenNames,
                 truncate: Truncate | None) -> tuple[dict[str, list[dict[str, Any]]], int] | str:
    """FCG and CTG rows of a project's latest bug, from its fixed version's function-test
    map, and the map's size; or why there are none."""
    from codereval.families.coderujb.runner import CoderUjbRunner

    bug = plan.bug
    runner = CoderUjbRunner()
    try:
        env = runner.version_environment(bug.project, f"{bug.bug_id}f", ctx)
        if isinstance(env, str):
            return env
        try:
            mappings = coverage_map(runner, ctx, env)
        except CoverageMapError as exc:
            return f"no function-test map: {exc}"
    finally:
        runner.close()

    def read(path: str) -> str | None:
        return plan.fixed_text(repository, path)

    common = {"project": bug.project, "bug_id": bug.bug_id, "src_dir": plan.source_root,
              "mappings": mappings, "read": read, "seen": seen, "truncate": truncate}
    return ({"fcg": fcg_rows(**common),  # type: ignore[arg-type]
             "ctg": ctg_rows(test_dir=plan.test_root, **common)},  # type: ignore[arg-type]
            len(mappings))


def overlay_path(bug: Defects4jBug, version: str = "buggy") -> str:
    return f"overlays/{bug.project}/{bug.bug_id}/{version}"


def _toml_string(value: str) -> str:
    return json.dumps(value)


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(_toml_string(v) for v in values) + "]"


def write_manifests(folder: Path, plans: dict[str, BugVersions],
                    repositories: dict[str, Path],
                    suites: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None = None,
                    ) -> None:
    projects = ["# Defects4J's projects, from their public git histories "
                "(codereval prepare defects4j)"]
    bugs = ["# Each bug's two versions, as Defects4J builds them: the fixed revision, and the",
            "# fixed revision with the source patch applied (overlays/) for the buggy one."]
    used = dict.fromkeys(p.bug.project for p in plans.values())
    for project in used:
        projects += ["", f"[projects.{_toml_string(project)}]", 'language = "java"',
                     f"source = {_toml_string(str(repositories[project]))}",
                     f"java_release = {_toml_string(JAVA_RELEASE)}"]
    for project in used:
        includes, excludes = (suites or {}).get(project, ((), ()))
        if includes or excludes:
            # Defects4J's whole suite (its all.manual.tests), not every class the tests compile
            # (a JUnit 3 aggregate would run its tests twice).
            bugs += ["", f"[projects.{_toml_string(project)}.suite]",
                     f"includes = {_toml_list(list(includes))}",
                     f"excludes = {_toml_list(list(excludes))}"]
    for plan in plans.values():
        bug = plan.bug
        layout = (f"commit = {_toml_string(bug.fixed_revision)}, "
                  f"build_dir = {_toml_string(plan.build_dir)}, "
                  f"source_roots = {_toml_list([plan.source_root])}, "
                  f"test_roots = {_toml_list([plan.test_root])}"
                  + (f", subdir = {_toml_string(plan.root)}" if plan.root else "")
                  + (f", jars = {_toml_list(list(plan.jars))}" if plan.jars else ""))
        fixed = ((f", overlay = {_toml_string(overlay_path(bug, 'fixed'))}"
                  if plan.fixed_files else "")
                 + (f", remove = {_toml_list(list(plan.fixed_deleted))}"
                    if plan.fixed_deleted else ""))
        bugs += ["", f"[projects.{_toml_string(bug.project)}.bugs.{bug.bug_id}]",
                 f"fixed = {{ {layout}{fixed} }}",
                 f"buggy = {{ {layout}, overlay = {_toml_string(overlay_path(bug))}"
                 + (f", remove = {_toml_list(list(plan.deleted))}" if plan.deleted else "")
                 + " }"]
        if bug.excluded_tests:
            # Defects4J's failing_tests of the fixed revision, dependent_tests, random_tests
            # and broken_tests: removed from its checkouts, so here they are left out of the
            # whole suite's runs, and their failures never count.
            bugs.append(f"excluded_tests = {_toml_list(list(bug.excluded_tests))}")
        if bug.trigger_tests:
            # Checked above to fail on the buggy version: its baseline need not run them.
            bugs.append(f"trigger_tests = {_toml_list(list(bug.trigger_tests))}")
    (folder / "projects.toml").write_text("\n".join(projects) + "\n", encoding="utf-8")
    (folder / "bugs.toml").write_text("\n".join(bugs) + "\n", encoding="utf-8")


def _report(bug: Defects4jBug, *, status: str, reason: str = "", note: str = "",
            failing_fixed: tuple[str, ...] = (), failing_buggy: tuple[str, ...] = (),
            build_seconds: float = 0.0, test_seconds: float = 0.0) -> BugReport:
    return BugReport(bug=bug.name, project=bug.project, bug_id=bug.bug_id, status=status,
                     reason=reason, note=note, fixed_revision=bug.fixed_revision,
                     failing_fixed=failing_fixed, failing_buggy=failing_buggy,
                     trigger_tests=bug.trigger_tests, build_seconds=build_seconds,
                     test_seconds=test_seconds)


