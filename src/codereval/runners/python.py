"""Running a generated Python function inside its project and judging the result.

Per sample: check the code parses, inject it (the official last-def rule into a test module, or
our span rule into the project file), make a private workspace, run our harness wrapper in the
sandbox with the project's interpreter, and turn what the wrapper reported into an Outcome. A
pass needs the per-run marker, which the wrapper reveals only after the test returned.

Official CoderEval tests were written on, and for, the original platform's machine. With
``compat`` each runs as it did there (``platform.toml`` beside the CoderEval data says how): the
test tree visible at ``/home/travis/builds/repos`` (read-only, the sample's project a private
writable view inside it), that working directory and ``sys.argv[0]``, the environment variables a
Docker shell gave, and a standalone test that never calls its test function calls nothing.
Without ``compat`` the stricter behaviour stays, and an outcome's detail says where it may differ.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codereval.benchmarks import compat_machine
from codereval.environments.base import Environment, load_manifest
from codereval.environments.bytecode import compiled_bytecode
from codereval.environments.python import (
    PythonEnvironmentBuilder,
    default_python_version,
    find_environment,
    find_interpreter,
    is_sealed,
    venv_python,
)
from codereval.errors import UserError
from codereval.model import (
    HARNESS_VERSION,
    Language,
    Outcome,
    Provenance,
    Sample,
    Stage,
    Task,
    TestKind,
    Verdict,
)
from codereval.runners.base import RunContext, Runner, sample_workdir
from codereval.runners.import_statements import STATEMENTS_FOLDER, ImportStatements
from codereval.runners.machine import Machine
from codereval.runners.marker import marker_seen, new_marker
from codereval.runners.python_imports import ImportClosure, puts_root_first, shadowing_names
from codereval.sandbox.base import ExecRequest, ExecResult, Mount, ProjectPreload
from codereval.source.inject import (
    Injected,
    InjectionError,
    check_injected,
    compiles,
    inject_at,
    inject_last_def,
    syntax_problem,
)
from codereval.workspace.cache import Lease, WorkspaceCache
from codereval.workspace.views import choose_strategy, empty_folder, make_workspace

if TYPE_CHECKING:
    from codereval.sandbox.warm import Slot

log = logging.getLogger(__name__)

TAIL_CHARS = 4000
# Workspaces kept for reuse per evaluation: enough for each of a few jobs to find its
# project's while samples of neighbouring tasks interleave.
WORKSPACES_KEPT = 8
# What the harness wrapper imports: loaded once in a warm worker, not once per sample. Also
# what it imports late: runpy.run_path imports pkgutil when called, and a traceback with an
# exception imports ast to place its carets (~1 ms of CPU each, per sample, in the child).
WARM_STDLIB = ("json", "runpy", "traceback", "pkgutil", "ast")
INLINE_TEST = "test_codereval_inline.py"
OFFICIAL_KINDS = (TestKind.CODEREVAL_MODULE, TestKind.CODEREVAL_STANDALONE)
# The official layout's folder of standalone tests; a manifest entry of this name gives them an
# environment of their own (the third-party packages those tests import).
STANDALONE = "standalone"
NEVER_CALLED_NOTE = (
    "{func}() was called by our harness; the original platform never called it (so any sample "
    "passed there): --compat reproduces that"
)


class _Infra(Exception):
    """This task cannot run here; the message is the reason (verdict infra_error)."""


@dataclass(kw_only=True)
class _Plan:
    """What to run for one sample: the base tree, the files the sample changes, the test."""

    base: Path | None
    changed: dict[str, str] = field(default_factory=dict)
    target: str = ""  # the test file, relative to the workspace
    mode: str = "script"  # "script" | "pytest"
    span: tuple[int, int] | None = None  # where the sample sits in the target file
    test_func: str = ""
    call_test_func: bool = False
    # compat: where the original platform had the workspace (its folder under the repos root).
    view: str = ""
    # The test reads or runs things at the original machine's absolute paths.
    machine_bound: bool = False
    # The injected test module when its compile here waits for the run (see _unless_broken).
    unchecked: Injected | None = None


# What a Python that could not compile a module prints (SyntaxError and its subclasses).
_COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def _inject_official(path: Path, code: str, name: str) -> tuple[Injected, Injected | None]:
    """The sample in an official test module, and the module again when its whole compile
    here waits for its run: then the file that runs is the one the sample went into, which
    the run compiles first, so a run that passes or fails in the test compiled it (the
    driver compiled every such module: a quarter of its time on the official set). A module
    that does not compile here even without the sample is checked at once, as before."""
    source = path.read_text(encoding="utf-8")
    deferred = compiles(source)
    injected = inject_last_def(source, code, name, check=not deferred)
    return injected, injected if deferred else None


def _may_not_have_compiled(outcome: Outcome) -> bool:
    """Could this run's test module have failed to compile? Not when it passed; a run that
    stopped on a compile error says so in what it printed (and one that printed nothing on
    its error stream is checked too)."""
    if outcome.passed:
        return False
    printed = f"{outcome.detail}\n{outcome.stderr_tail}\n{outcome.stdout_tail}"
    return any(n in printed for n in _COMPILE_ERRORS) or not (outcome.stderr_tail or "").strip()


def _fingerprint(env: Environment | None) -> str:
    """The environment's key; a test run by our own interpreter is keyed by its version."""
    return env.key if env is not None else f"python-{default_python_version()}"


def _tail(data: bytes | str) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text[-TAIL_CHARS:]


def official_module_path(task: Task) -> str:
    """``<file_path without .py>_<name>_passk_validte.py``, relative to the project root."""
    assert task.location is not None
    stem = task.location.file_path.removesuffix(".py")
    return f"{stem}_{task.name}_passk_validte.py"


def official_standalone_path(task: Task) -> str:
    """``standalone/<file_path without .py, '/' -> '-'>-<name>.py`` below ``repos/``."""
    assert task.location is not None
    stem = task.location.file_path.removesuffix(".py").replace("/", "-")
    return f"{STANDALONE}/{stem}-{task.name}.py"


def official_test_file(task: Task, tests_dir: Path, *, standalone: bool) -> tuple[Path, str]:
    """Where a task's official test is (the test's own path when it names one, else the official
    layout's below ``repos/``) and the path it runs under: a standalone file by its name, a
    module by its path in the project (its layout path when the file lies elsewhere)."""
    explicit = task.test.path if task.test is not None else ""
    repos = tests_dir / "repos"
    if standalone:
        path = tests_dir / explicit if explicit else repos / official_standalone_path(task)
        return path, path.name
    project_dir = repos / project_folder(task.project)
    rel = official_module_path(task)
    path = tests_dir / explicit if explicit else project_dir / rel
    if explicit and path.is_relative_to(project_dir):
        rel = str(path.relative_to(project_dir))
    return path, rel


def project_folder(project: str) -> str:
    """``owner/repo`` -> ``owner---repo``, the project's folder below ``repos/``."""
    return project.replace("/", "---")


def _env_cache_root(env_root: Path) -> Path:
    return env_root.parent if env_root.name == "envs" else env_root


class PythonProjectRunner(Runner):
    name = "python-project"

    def __init__(self, *, reuse_workspaces: bool | None = None,
                 bytecode: bool | None = None) -> None:
        self._envs: dict[str, Environment | None] = {}
        self._seal_cache: dict[str, bool] = {}
        self._lock = threading.Lock()
        # Hard-linked workspaces kept between samples of a project (workspace_cache.py);
        # CODEREVAL_WORKSPACE_REUSE=0 makes every sample's anew, to compare.
        if reuse_workspaces is None:
            reuse_workspaces = os.environ.get("CODEREVAL_WORKSPACE_REUSE", "1") != "0"
        self._reuse_workspaces = reuse_workspaces
        self._workspaces: dict[Path, WorkspaceCache] = {}
        # Per (environment, standalone): the evaluation's tasks, and what their tests import
        # (read once, when the first of their samples runs warm; see python_imports.py).
        self._import_lock = threading.Lock()
        self._tasks_by_group: dict[tuple[str, bool], list[Task]] = {}
        self._imports: dict[tuple[str, bool], _Preloads] = {}
        # The project files' import statements, kept beside the environments between runs.
        self._statements: dict[Path, ImportStatements] = {}
        self._harness = (
            resources.files("codereval.runners")
            .joinpath("python_harness.py")
            .read_text(encoding="utf-8")
        )
        # Each environment's compiled bytecode (environments/bytecode.py), or None for none;
        # CODEREVAL_PROJECT_BYTECODE=0 compiles every module from source in each sample, to
        # compare.
        if bytecode is None:
            bytecode = os.environ.get("CODEREVAL_PROJECT_BYTECODE", "1") != "0"
        self._use_bytecode = bytecode
        self._bytecode: dict[str, Path | None] = {}
        # What each (interpreter, environment, base) mounts, resolved once (see _mounts).
        self._mount_cache: dict[tuple[Path, Path | None, Path | None], tuple[Mount, ...]] = {}

    # ------------------------------------------------------------------ environments

    def _environment(self, project: str, ctx: RunContext) -> Environment | None:
        with self._lock:
            if project not in self._envs:
                self._envs[project] = find_environment(_env_cache_root(ctx.env_root), project)
            return self._envs[project]

    def _resolve_from_manifest(self, projects: set[str], ctx: RunContext) -> None:
        """Use exactly the environment the manifest describes, building it when missing.

        ``build`` is a cache lookup by content key when nothing changed, so a project whose
        source or requirements changed gets a fresh environment instead of the newest stale one.
        """
        manifest = ctx.projects_dir
        if manifest is not None and manifest.is_dir():
            manifest = manifest / "projects.toml"
        if manifest is None or not manifest.is_file():
            return
        builder = PythonEnvironmentBuilder()
        named: set[str] = set()
        for spec in load_manifest(manifest):
            if spec.name in projects and spec.language is Language.PYTHON:
                env = builder.build(spec, root=_env_cache_root(ctx.env_root))
                named.add(spec.name)
                with self._lock:
                    self._envs[spec.name] = env
        # What the manifest does not name has no environment: one of that name in the cache was
        # built from another manifest (CoderEval's `standalone` is not mini-python's).
        with self._lock:
            for name in projects - named:
                self._envs[name] = None

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        require_tests_dir(ctx.tests_dir)
        projects = {self._env_name(task, ctx) for task in tasks if task.project}
        self._resolve_from_manifest(projects, ctx)
        reasons: dict[str, str] = {}
        for task in tasks:
            reason = self._unrunnable(task, ctx)
            if reason:
                reasons[task.task_id] = reason
            else:
                group = self._import_group(task, ctx)
                self._tasks_by_group.setdefault(group, []).append(task)
        # Compiled here, before the samples start, rather than by the first sample of each.
        envs = (self._task_environment(task, ctx) for task in tasks
                if task.task_id not in reasons)
        for env in {env.key: env for env in envs if env is not None}.values():
            self._bytecode_of(env, ctx)
        return reasons

    def _bytecode_of(self, env: Environment, ctx: RunContext) -> Path | None:
        """The bytecode compiled from ``env``'s sealed source, for workspaces linked from it."""
        with self._lock:
            if env.key in self._bytecode:
                return self._bytecode[env.key]
        folder = None
        if self._use_bytecode and env.ready and self._sealed(env):
            folder = compiled_bytecode(_env_cache_root(ctx.env_root), env, venv_python(env))
        with self._lock:
            self._bytecode[env.key] = folder
        return folder

    def affinity(self, task: Task, ctx: RunContext) -> str:
        # One warm worker serves an import group: its environment, standalone or not.
        fingerprint, standalone = self._import_group(task, ctx)
        return f"{fingerprint}:{'standalone' if standalone else 'project'}"

    def _import_group(self, task: Task, ctx: RunContext) -> tuple[str, bool]:
        """Tasks whose samples share warm workers: one environment, standalone or not."""
        return _fingerprint(self._task_environment(task, ctx)), self._is_standalone_official(
            task, ctx
        )

    def _preload_imports(
        self, task: Task, ctx: RunContext, env: Environment | None
    ) -> _Preloads:
        """What the tests of the task's group import: candidates the warm worker probes and
        preloads. The same for every sample of the group, so its samples share workers."""
        group = self._import_group(task, ctx)
        with self._import_lock:
            known = self._imports.get(group)
            if known is None:
                tasks = self._tasks_by_group.get(group) or [task]
                project = None if group[1] else self._base_of(env, task, ctx)
                statements = self._statements.get(ctx.env_root)
                if statements is None:
                    statements = self._statements[ctx.env_root] = ImportStatements(
                        ctx.env_root / STATEMENTS_FOLDER)
                closure = ImportClosure(project, statements=statements)
                folders: set[Path] = set() if project is None else {project}
                changed: list[Path] = []
                for each in tasks:
                    for path, rel, text in self._entry_files(each, ctx, project):
                        closure.add_file(path, rel=rel, text=text)
                        if project is not None and rel is not None:
                            folders.add((project / rel).parent)
                    if project is not None:
                        changed += [project / rel for rel in self._changed_files(each, ctx)]
                # Before the external modules are read: following the project's packages may
                # name more of them.
                own, banned = closure.own_modules(changed)
                # A name the tests' own folders hold is theirs in a fresh interpreter: never
                # preloaded, or each sample would forget the preload (warm_server._shadowed).
                local = shadowing_names(folders)
                beside = shadowing_names(folders - {project}) if project is not None else set()
                if project is None or not self._roots_first(tasks, ctx, project):
                    own = []
                known = self._imports[group] = _Preloads(
                    external=tuple(m for m in closure.modules()
                                   if m.split(".", 1)[0] not in local),
                    own=tuple(m for m in own if m.split(".", 1)[0] not in beside),
                    banned=tuple(banned))
                statements.save()
                log.debug("preload candidates for %s: %d modules, %d of the project's",
                          group[0], len(known.external), len(known.own))
            return known

    def _roots_first(self, tasks: Sequence[Task], ctx: RunContext, project: Path) -> bool:
        """Does every official test of the group put its project's root (where --compat
        mounts it) on sys.path before importing the project? Then a worker may preload the
        project's own modules from there (see puts_root_first)."""
        if not ctx.compat or ctx.tests_dir is None:
            return False
        own = shadowing_names([project])
        for task in tasks:
            test = task.test
            machine = compat_machine(task)
            if (test is not None and test.kind not in OFFICIAL_KINDS) or machine is None \
                    or self._is_standalone_official(task, ctx):
                return False
            path, _rel = official_test_file(task, ctx.tests_dir, standalone=False)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return False
            if not puts_root_first(text, str(machine.root / project_folder(task.project)), own):
                return False
        return True

    def _changed_files(self, task: Task, ctx: RunContext) -> list[str]:
        """The project files a sample of the task changes: the file it goes into, the test."""
        test, location = task.test, task.location
        if test is None or test.kind in OFFICIAL_KINDS:
            if ctx.tests_dir is None or self._is_standalone_official(task, ctx):
                return []
            return [official_test_file(task, ctx.tests_dir, standalone=False)[1]]
        files = [location.file_path] if location is not None else []
        return files + ([INLINE_TEST] if test.code else [test.path] if test.path else [])

    @staticmethod
    def _base_of(env: Environment | None, task: Task, ctx: RunContext) -> Path | None:
        if env is not None and env.ready:
            return env.source_dir
        if ctx.tests_dir is not None:
            return ctx.tests_dir / "repos" / project_folder(task.project)
        return None

    def _entry_files(
        self, task: Task, ctx: RunContext, project: Path | None
    ) -> list[tuple[Path, str | None, str | None]]:
        """(path, where it runs in the project, inline text) of the files a task's test runs
        first: the test and the file the sample goes into."""
        test, location = task.test, task.location
        files: list[tuple[Path, str | None, str | None]] = []
        if test is None or test.kind in OFFICIAL_KINDS:
            if ctx.tests_dir is not None:
                standalone = self._is_standalone_official(task, ctx)
                path, rel = official_test_file(task, ctx.tests_dir, standalone=standalone)
                files.append((path, None if standalone else rel, None))
        elif test.code:
            files.append((Path(INLINE_TEST), INLINE_TEST, test.code))
        elif test.path and project is not None:
            files.append((project / test.path, test.path, None))
        if project is not None and location is not None:
            files.append((project / location.file_path, location.file_path, None))
        return files

    def _workspace_cache(self, ctx: RunContext) -> WorkspaceCache | None:
        if not self._reuse_workspaces:
            return None
        with self._lock:
            cache = self._workspaces.get(ctx.work_root)
            if cache is None:
                # Beside the samples' scratch, on its filesystem; no sandbox mounts it.
                cache = WorkspaceCache(ctx.work_root / "kept-workspaces", capacity=WORKSPACES_KEPT)
                self._workspaces[ctx.work_root] = cache
            return cache

    def close(self) -> None:
        with self._lock:
            caches = list(self._workspaces.values())
            self._workspaces.clear()
        for cache in caches:
            stats = cache.stats
            log.info(
                "workspaces: %d made, %d reused, %d kept after their sample, %d not (%s)",
                stats.made,
                stats.reused,
                stats.kept,
                stats.discarded,
                ", ".join(f"{k} {v}" for k, v in sorted(stats.discard_reasons.items())) or "-",
            )
            cache.close()

    def _sealed(self, env: Environment) -> bool:
        with self._lock:
            if env.key not in self._seal_cache:
                self._seal_cache[env.key] = is_sealed(env)
            return self._seal_cache[env.key]

    def _needs_env(self, task: Task, ctx: RunContext) -> bool:
        return not self._is_standalone_official(task, ctx)

    def _env_name(self, task: Task, ctx: RunContext) -> str:
        return STANDALONE if self._is_standalone_official(task, ctx) else task.project

    def _task_environment(self, task: Task, ctx: RunContext) -> Environment | None:
        """The project's environment; for a standalone test, the standalone one if built."""
        if not task.project:
            return None
        env = self._environment(self._env_name(task, ctx), ctx)
        if env is not None and not env.ready and not self._needs_env(task, ctx):
            return None
        return env

    def _is_standalone_official(self, task: Task, ctx: RunContext) -> bool:
        if task.test is not None:
            return task.test.kind is TestKind.CODEREVAL_STANDALONE
        return ctx.tests_dir is not None and task.level is not None and task.level.standalone

    def _unrunnable(self, task: Task, ctx: RunContext) -> str:
        if task.location is None or not task.project:
            return f"task {task.task_id} names no project"
        if task.test is None and ctx.tests_dir is None:
            return "task has no test of its own; give --tests-dir with the official test tree"
        if task.test is not None and task.test.kind in OFFICIAL_KINDS and ctx.tests_dir is None:
            return "task uses the official test layout; give --tests-dir"
        if self._needs_env(task, ctx):
            env = self._environment(task.project, ctx)
            if env is None:
                return (
                    f"no environment built for project {task.project} "
                    "(run `codereval env build --projects MANIFEST`)"
                )
            if not env.ready:
                return f"environment for {task.project} failed to build: {env.error}"
        return ""

    def environment_fingerprint(self, task: Task, ctx: RunContext) -> str:
        return _fingerprint(self._task_environment(task, ctx))

    # ------------------------------------------------------------------ planning

    def _plan(self, task: Task, code: str, ctx: RunContext, env: Environment | None) -> _Plan:
        test = task.test
        assert task.location is not None
        if test is None or test.kind in OFFICIAL_KINDS:
            return self._plan_official(task, code, ctx, env)
        if test.kind not in (TestKind.SCRIPT, TestKind.PYTEST):
            raise _Infra(f"the Python runner cannot run {test.kind.value} tests")
        assert env is not None
        base = env.source_dir
        source_file = base / task.location.file_path
        if not source_file.is_file():
            raise _Infra(f"{task.location.file_path} not found in project {task.project}")
        injected = inject_at(
            source_file.read_text(encoding="utf-8"),
            code,
            task.name,
            lineno=task.location.lineno,
            end_lineno=task.location.end_lineno,
        )
        plan = _Plan(base=base, mode="pytest" if test.kind is TestKind.PYTEST else "script")
        plan.changed[task.location.file_path] = injected.text
        if test.code:
            plan.target = INLINE_TEST
            plan.changed[INLINE_TEST] = test.code
        elif test.path:
            if not (base / test.path).is_file():
                raise _Infra(f"test file {test.path} not found in project {task.project}")
            plan.target = test.path
        else:
            raise _Infra("the task's test has neither a path nor inline code")
        return plan

    def _plan_official(
        self, task: Task, code: str, ctx: RunContext, env: Environment | None
    ) -> _Plan:
        assert ctx.tests_dir is not None
        repos = ctx.tests_dir / "repos"
        if not repos.is_dir():
            raise _Infra(f"no repos/ folder in the tests dir {ctx.tests_dir}")
        standalone = self._is_standalone_official(task, ctx)
        path, rel = official_test_file(task, ctx.tests_dir, standalone=standalone)
        if standalone:
            if not path.is_file():
                raise _Infra(f"standalone test not found: {path}")
            injected, unchecked = _inject_official(path, code, task.name)
            return _Plan(
                base=None,
                changed={rel: injected.text},
                target=rel,
                span=(injected.start, injected.end),
                test_func=f"test_{task.name}",
                # The original ran the file and nothing else: a test never called passed.
                call_test_func="__name__" not in injected.text and not ctx.compat,
                view=STANDALONE,
                unchecked=unchecked,
            )
        project_dir = repos / project_folder(task.project)
        if not path.is_file():
            raise _Infra(f"official test module not found: {path}")
        injected, unchecked = _inject_official(path, code, task.name)
        # The environment's tree is the project; without one, the official tree is.
        base = env.source_dir if env is not None and env.ready else project_dir
        return _Plan(
            base=base,
            changed={rel: injected.text},
            target=rel,
            span=(injected.start, injected.end),
            view=project_folder(task.project),
            unchecked=unchecked,
        )

    # ------------------------------------------------------------------ running

    def _interpreter(self, env: Environment | None) -> Path:
        if env is not None and env.ready:
            return venv_python(env)
        found = find_interpreter(default_python_version())
        if found is None:
            raise _Infra(f"no python{default_python_version()} on this machine")
        return found.path

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        env = self._task_environment(task, ctx)
        provenance = Provenance(
            task_hash=task.content_hash(),
            code_hash=sample.code_hash(),
            environment=_fingerprint(env),
            harness_version=HARNESS_VERSION,
        )

        def outcome(verdict: Verdict, stage: Stage, **fields: Any) -> Outcome:
            return Outcome(
                task_id=task.task_id,
                sample_index=sample.index,
                verdict=verdict,
                stage=stage,
                isolation=ctx.sandbox.isolation,
                provenance=provenance,
                **fields,
            )

        code = sample.code or ""
        if not code.strip():
            return outcome(Verdict.NO_CODE, Stage.EXTRACT, detail="the sample has no code")
        problem = syntax_problem(code)
        if problem:
            return outcome(Verdict.SYNTAX_ERROR, Stage.INJECT, detail=problem)
        reason = self._unrunnable(task, ctx)
        if reason:
            return outcome(Verdict.INFRA_ERROR, Stage.ENVIRONMENT, detail=reason)
        try:
            plan = self._plan(task, code, ctx, env)
        except InjectionError as exc:
            verdict = Verdict.SYNTAX_ERROR if exc.syntax else Verdict.INFRA_ERROR
            return outcome(verdict, Stage.INJECT, detail=exc.detail)
        except (_Infra, OSError, UnicodeDecodeError) as exc:
            return outcome(Verdict.INFRA_ERROR, Stage.INJECT, detail=str(exc))
        try:
            with sample_workdir(ctx, prefix="py-") as (scratch, slot):
                ran = self._execute(task, plan, env, ctx, scratch, outcome, slot)
        except (_Infra, OSError) as exc:
            return outcome(Verdict.INFRA_ERROR, Stage.WORKSPACE, detail=str(exc))
        if plan.unchecked is not None and _may_not_have_compiled(ran):
            try:
                check_injected(plan.unchecked)
            except InjectionError as exc:
                # As it was before the run: a splice that broke the module is told apart.
                verdict = Verdict.SYNTAX_ERROR if exc.syntax else Verdict.INFRA_ERROR
                return outcome(verdict, Stage.INJECT, detail=exc.detail)
        return ran

    def _execute(
        self,
        task: Task,
        plan: _Plan,
        env: Environment | None,
        ctx: RunContext,
        scratch: Path,
        outcome: Callable[..., Outcome],
        slot: Slot | None,
    ) -> Outcome:
        sealed = env is not None and plan.base == env.source_dir and self._sealed(env)
        strategy = choose_strategy(ctx.sandbox.isolation, sealed=sealed)
        machine = compat_machine(task) if ctx.compat and plan.view else None
        platform = self._faithful_platform(machine, ctx)
        (scratch / "tmp").mkdir()
        if platform is None or slot is None:
            return self._execute_in(task, plan, env, ctx, scratch, outcome, slot,
                                    workspace=scratch / "project", strategy=strategy,
                                    platform=platform, machine=machine, in_place=False)
        # The original's tree, mounted per sample, from a warm worker: at folders of the slot
        # that its workers keep mounted (one set per worker: a worker makes its mount points
        # in them). The worker empties the home after each sample, keeping its mount points;
        # the project folder is ours: it keeps the project's workspace between samples when the
        # cache can tell it is as new, as kept workspaces are (see WorkspaceCache).
        python = self._interpreter(env)
        fixed = slot.fixed("compat-" + _digest(
            f"{plan.view}\0{python}\0{env.path if env is not None else ''}"))
        project = slot.fixed(fixed.name + "-project", kept=True)
        done = self._execute_in(task, plan, env, ctx, scratch, outcome, slot,
                                workspace=project, strategy=strategy, platform=platform,
                                machine=machine, in_place=True, home=fixed / "home")
        if done.provenance.executor != "warm":
            # Served fresh (no worker could start, so none has it mounted): ours to empty.
            _empty(fixed / "home")
        return done

    def _execute_in(
        self,
        task: Task,
        plan: _Plan,
        env: Environment | None,
        ctx: RunContext,
        scratch: Path,
        outcome: Callable[..., Outcome],
        slot: Slot | None,
        *,
        workspace: Path,
        strategy: str,
        platform: Machine | None,
        machine: Machine | None,
        in_place: bool,
        home: Path | None = None,
    ) -> Outcome:
        """``in_place``: ``workspace`` is a folder a warm worker keeps mounted, to fill and
        leave empty (or as the cache's kept workspace); ``home``: the compat home to mount,
        by default a new one beside the workspace."""
        lease: Lease | None = None
        cache = self._workspace_cache(ctx) if strategy == "hardlink" else None
        # Linked beside the sealed source's files; a copied view compiles as before.
        bytecode = (self._bytecode_of(env, ctx) if env is not None and strategy == "hardlink"
                    and plan.base == env.source_dir else None)
        if in_place and (cache is None or plan.base is None):
            # Not the cache's to keep there: made in the folder, emptied (already, unless the
            # last sample's clean-up failed) and emptied again after.
            _empty(workspace)
            cache = None
        if plan.base is None:
            workspace.mkdir(exist_ok=in_place)
            for rel, text in plan.changed.items():
                (workspace / rel).write_text(text, encoding="utf-8")
        elif cache is not None:
            checkout = cache.checkout_in_place if in_place else cache.checkout
            lease = checkout(plan.base, workspace, plan.changed, bytecode=bytecode)
        else:
            make_workspace(plan.base, workspace, changed=plan.changed, strategy=strategy,
                           into_empty=in_place, bytecode=bytecode)
        python = self._interpreter(env)
        harness = scratch / "harness.py"
        harness.write_text(self._harness, encoding="utf-8")
        result_path = scratch / f"result-{uuid.uuid4().hex}.json"
        mounts = self._mounts(python, env, plan)
        env_vars = self._env_vars(python, workspace, scratch)
        root, notes = workspace, []
        hostname: str | None = None
        if platform is not None:
            assert ctx.tests_dir is not None
            root = platform.root / plan.view
            mounts += (
                Mount(source=(ctx.tests_dir / "repos").resolve(), target=platform.root),
                Mount(source=workspace, target=root, writable=True),
            )
            home = home or scratch / "home"
            if platform.home is not None:
                # A private, empty home: the host's stays unseen.
                home.mkdir(exist_ok=True)
                mounts += (Mount(source=home, target=platform.home, writable=True),)
            hosts = platform.hosts_file()
            if hosts is not None:
                hosts_path = home.parent / "hosts"
                if not hosts_path.exists() or hosts_path.read_text(encoding="utf-8") != hosts:
                    hosts_path.write_text(hosts, encoding="utf-8")
                mounts += (Mount(source=hosts_path, target=Path("/etc/hosts")),)
            hostname = platform.hostname
            env_vars = platform.environment(python=python, scratch=scratch, cwd=root)
        elif machine is not None:
            notes.append(
                f"the original's {machine.root} view needs the bwrap sandbox; ran in {workspace}"
            )
        target = root / plan.target
        spec = {
            "target": os.path.abspath(target),
            "mode": plan.mode,
            "root": str(root),
            "result": str(result_path),
            "span": list(plan.span) if plan.span else [],
            "test_func": plan.test_func,
            "call_test_func": plan.call_test_func,
        }
        spec_path = scratch / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        marker = new_marker()
        request = ExecRequest(
            argv=(str(python), str(harness), str(spec_path)),
            cwd=root,
            scratch=scratch,
            env=env_vars,
            mounts=mounts,
            stdin=(marker + "\n").encode(),
            limits=ctx.limits,
            hostname=hostname,
        )
        if slot is not None:
            project_dirs = [plan.base] if plan.base is not None else []
            preloads = self._preload_imports(task, ctx, env)
            # The project's own modules only where every sample finds them at the same path
            # (the compat tree, mounted from the slot's fixed folder): what a worker imported
            # from there is what the sample would import, but for the files it changes.
            own = ProjectPreload(root=str(root), cwd=str(root), modules=preloads.own,
                                 banned=preloads.banned) if in_place and preloads.own else None
            result, executor = slot.run(
                request,
                stdlib=WARM_STDLIB,
                project_dirs=project_dirs,
                imports=preloads.external,
                scripts=(self._harness,),
                project=own,
            )
        else:
            result, executor = ctx.sandbox.run(request), "fresh"
        if lease is not None and cache is not None:
            # Every process of the sample is gone once the sandbox has returned.
            if in_place:
                cache.checkin_in_place(lease)
            else:
                cache.checkin(lease)
        elif in_place:
            _empty(workspace)
        report = _read_result(result_path)
        judged = _judge(result, report, marker, outcome)
        judged = judged.model_copy(
            update={"provenance": judged.provenance.model_copy(update={"executor": executor})}
        )
        plan.machine_bound = _machine_bound(plan.changed.get(plan.target, ""))
        return _with_notes(judged, plan, ctx, notes)

    @staticmethod
    def _faithful_platform(machine: Machine | None, ctx: RunContext) -> Machine | None:
        """The original machine's layout to reproduce, when compat asks and the sandbox can."""
        if machine is None or ctx.tests_dir is None:
            return None
        if not ctx.sandbox.isolation.startswith("bwrap"):
            return None
        return machine

    @staticmethod
    def _env_vars(python: Path, workspace: Path, scratch: Path) -> dict[str, str]:
        return {
            "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONPATH": str(workspace),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONNOUSERSITE": "1",
            "HOME": str(scratch),
            "TMPDIR": str(scratch / "tmp"),
            "LANG": "C.UTF-8",
        }

    def _mounts(self, python: Path, env: Environment | None, plan: _Plan) -> tuple[Mount, ...]:
        # The same few per evaluation; resolving them is a dozen syscalls a sample.
        key = (python, env.path if env is not None else None, plan.base)
        mounts = self._mount_cache.get(key)
        if mounts is None:
            mounts = self._mount_cache[key] = self._resolve_mounts(python, env, plan)
        return mounts

    @staticmethod
    def _resolve_mounts(python: Path, env: Environment | None, plan: _Plan) -> tuple[Mount, ...]:
        paths: list[Path] = []
        if env is not None:
            paths.append(env.path)
        if plan.base is not None:
            paths.append(plan.base)
        # The venv's interpreter is a link to a base installation, which must be visible too.
        real = Path(os.path.realpath(python))
        paths.append(real.parent.parent)
        seen: set[Path] = set()
        mounts = []
        for path in paths:
            resolved = path.resolve()
            if resolved not in seen and not any(resolved.is_relative_to(s) for s in seen):
                seen.add(resolved)
                mounts.append(Mount(source=resolved, target=resolved))
        return tuple(mounts)


_TRAVIS = "/home/travis/"


@dataclass(frozen=True)
class _Preloads:
    """A group's preload candidates (see _preload_imports)."""

    external: tuple[str, ...]
    # The project's modules no sample can change, and the module names of what samples change.
    own: tuple[str, ...] = ()
    banned: tuple[str, ...] = ()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _empty(folder: Path) -> None:
    if folder.is_dir():
        empty_folder(folder)


def _machine_bound(test_text: str) -> bool:
    """Does the test use the original machine's paths for more than extending sys.path?"""
    return any(
        _TRAVIS in line and "sys.path" not in line and not line.lstrip().startswith("#")
        for line in test_text.splitlines()
    )


def _with_notes(outcome: Outcome, plan: _Plan, ctx: RunContext, notes: list[str]) -> Outcome:
    """Say in the detail where our stricter default may have decided differently."""
    if outcome.verdict is not Verdict.PASSED and not ctx.compat:
        if plan.call_test_func:
            notes.append(NEVER_CALLED_NOTE.format(func=plan.test_func))
        if plan.machine_bound or (plan.view and _TRAVIS in outcome.stderr_tail):
            notes.append(
                f"the test uses the original machine's {_TRAVIS}... paths, which only "
                "--compat provides"
            )
    if not notes:
        return outcome
    detail = "; ".join([outcome.detail, *notes]) if outcome.detail else "; ".join(notes)
    return outcome.model_copy(update={"detail": detail})


def _read_result(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _judge(
    result: ExecResult, report: dict[str, Any], marker: str, outcome: Callable[..., Outcome]
) -> Outcome:
    times = {
        "exit_code": result.exit_code,
        "signal": result.signal,
        "wall_time": result.wall_time,
        "cpu_time": result.cpu_time,
        "stdout_tail": _tail(result.stdout),
    }
    stderr = _tail(result.stderr)
    if report.get("traceback"):
        stderr = _tail(stderr + ("\n" if stderr else "") + str(report["traceback"]))
    times["stderr_tail"] = stderr
    detail = str(report.get("detail", ""))
    status = report.get("status")
    if result.sandbox_error:
        return outcome(Verdict.INFRA_ERROR, Stage.RUN, detail=result.sandbox_error, **times)
    earned = report.get("marker") == marker or marker_seen(result.stdout, marker)
    if earned and status == "passed":
        return outcome(Verdict.PASSED, Stage.DONE, **times)
    if result.limit_exceeded:
        return outcome(Verdict.RUNTIME_ERROR, Stage.RUN, detail=result.limit_exceeded, **times)
    if result.timed_out:
        return outcome(Verdict.TIMEOUT, Stage.RUN, detail="wall time limit reached", **times)
    if result.memory_exceeded or status == "memory":
        return outcome(Verdict.MEMORY_EXCEEDED, Stage.RUN, detail=detail or "memory limit", **times)
    if status == "failed":
        return outcome(Verdict.FAILED, Stage.CHECK, detail=detail, **times)
    if status == "infra":
        return outcome(Verdict.INFRA_ERROR, Stage.RUN, detail=detail, **times)
    if status in ("error", "exit"):
        return outcome(Verdict.RUNTIME_ERROR, Stage.RUN, detail=detail, **times)
    if status == "passed":
        # Claimed a pass without the marker: someone other than the wrapper wrote it.
        return outcome(
            Verdict.FAILED,
            Stage.CHECK,
            detail="a pass was claimed without the run's marker",
            **times,
        )
    how = f"signal {result.signal}" if result.signal else f"exit code {result.exit_code}"
    return outcome(
        Verdict.RUNTIME_ERROR,
        Stage.RUN,
        detail=f"the process ended ({how}) before the test finished",
        **times,
    )


def require_tests_dir(path: Path | None) -> Path | None:
    """Validate a --tests-dir: it must exist and hold the official repos/ tree."""
    if path is None:
        return None
    if not path.is_dir():
        raise UserError(f"tests dir not found: {path}", hint="give the official test tree")
    if not (path / "repos").is_dir():
        raise UserError(
            f"tests dir {path} has no repos/ folder",
            hint="expected the official layout: repos/<owner>---<repo>/...",
        )
    return path
