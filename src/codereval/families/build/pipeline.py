"""`codereval build python`: a CoderEval-style benchmark from a repository and its own suite.

The steps, each with what can stop it (one line, nothing written):
1. the repository and commit are checked, and the tree at the commit is exported into a
   staging folder beside ``--out`` (``repos/<owner>---<repo>``, the CoderEval layout);
2. functions are selected (``select``); none → "nothing selected";
3. the project's environment is built as for any project (its Python, its dependencies
   resolved as at the commit's date, pytest);
4. the project's test suite runs once in the sandbox with a recorder (``data/build_harness/
   record.py``) that pickles, for each selected function, the calls the suite makes; no test
   collected, or a suite that does not start → an error;
5. each reached function gets a test that replays its calls (``replay.py``). The reference
   replays them three times in the sandbox, each under another hash seed; a call it does not
   reproduce every time (time, randomness, hash order, the network) is non-deterministic and
   dropped, and a function that
   loses more than half of its calls is flaky and left out;
6. the tasks are checked through the engine, as `evaluate --prepared` will run them: the
   reference three times (it must pass every time) and up to ``mutants`` small mutants
   (``mutate``); a test that kills fewer than ``min_kill`` of them is weak, left out unless
   ``include_weak``;
7. the benchmark directory is written (records.json, projects.toml, benchmark.json,
   checks.jsonl) and the staging folder renamed to ``--out``.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from codereval.benchmarks import read_tasks_file
from codereval.environments.base import Environment, ProjectSpec
from codereval.environments.python import (
    PythonEnvironmentBuilder,
    default_root,
    is_sealed,
    venv_python,
)
from codereval.errors import UserError
from codereval.evaluation import engine
from codereval.families.build.mutate import mutants
from codereval.families.build.select import (
    Candidate,
    changed_since,
    find_candidates,
    parse_since,
)
from codereval.model import Language, Outcome, Sample, Verdict, __version__
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Mount, Sandbox
from codereval.workspace.views import choose_strategy, make_workspace, remove_tree

REFERENCE_RUNS = 3
# What a project's suite needs, by the names projects give these files.
REQUIREMENT_FILES = (
    "requirements.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "testing_requirements.txt",
    "requirements-dev.txt",
)
# The names projects give the dependency group or extra their tests need.
TEST_GROUPS = ("tests", "test", "testing")
FLAKY_SHARE = 0.5


@dataclass(frozen=True, kw_only=True)
class BuildOptions:
    repo: Path
    commit: str
    out: Path
    name: str = ""
    since: str = ""
    python: str = "3.11"
    requirements: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()
    min_statements: int = 3
    max_calls: int = 20
    # "pickle" (nothing installed) or "cloudpickle" (installed; holds lambdas, local functions).
    serializer: str = "pickle"
    max_tasks: int | None = None
    mutants: int = 12
    min_kill: float = 0.5
    include_weak: bool = False
    suite_timeout: float = 900.0
    timeout: float = 20.0
    sandbox: str = "auto"
    jobs: int = 2
    env_root: Path | None = None
    # Keep the recorded calls, replays and validation run in <out>/.work (to see why).
    keep_work: bool = False
    # Progress bars on stderr for the long steps (the suite, the replays, the validation).
    progress: bool = False


@dataclass(kw_only=True)
class TaskCheck:
    task_id: str
    function: str
    file_path: str
    calls: int = 0
    dropped: int = 0
    unstable: int = 0
    mutants: int = 0
    killed: int = 0
    status: str = ""  # ok, weak, flaky, broken, unrecorded, unreached
    detail: str = ""
    # Where the calls come from: the project's suite, or inputs generated for a method the
    # suite never calls (`build java-tests`).
    source: str = "suite"
    project: str = ""

    @property
    def kill_share(self) -> float | None:
        return self.killed / self.mutants if self.mutants else None

    def to_json(self) -> str:
        data = dict(self.__dict__)
        data["kill_share"] = self.kill_share
        return json.dumps(data)


@dataclass(kw_only=True)
class BuildReport:
    out: Path
    project: str
    commit: str
    candidates: int
    suite: dict[str, Any]
    checks: list[TaskCheck] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)

    @property
    def kept(self) -> int:
        return sum(
            1 for c in self.checks if c.status in ("ok", "weak") and "excluded" not in c.detail
        )


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )


def check_inputs(options: BuildOptions) -> tuple[str, dt.datetime, str]:
    """(full commit, its date, project name), or UserError before anything is written."""
    if not options.repo.is_dir():
        raise UserError(f"{options.repo} is not a folder", hint="give a local clone: REPO")
    # A clone or a bare mirror: only the history is read (git archive, git blame).
    inside = _git(options.repo, "rev-parse", "--git-dir")
    if inside.returncode != 0:
        raise UserError(
            f"{options.repo} is not a git repository", hint="give a local clone (git clone URL)"
        )
    found = _git(options.repo, "rev-parse", "--verify", "--quiet", f"{options.commit}^{{commit}}")
    if found.returncode != 0:
        raise UserError(
            f"commit {options.commit!r} does not exist in {options.repo}",
            hint="give a commit, tag or branch of the clone (git log shows them)",
        )
    commit = found.stdout.strip()
    when = _git(options.repo, "show", "-s", "--format=%ct", commit).stdout.strip()
    date = dt.datetime.fromtimestamp(int(when), dt.UTC)
    if options.out.exists():
        raise UserError(
            f"{options.out} already exists", hint="choose a new --out (nothing was written)"
        )
    if options.since:
        parse_since(options.since)
    name = options.name or _name_from_origin(options.repo)
    if name.count("/") != 1 or not all(name.split("/")):
        raise UserError(f"project name {name!r} is not owner/repo", hint="pass --name OWNER/REPO")
    return commit, date, name


def _name_from_origin(repo: Path) -> str:
    url = _git(repo, "remote", "get-url", "origin").stdout.strip()
    if url:
        tail = url.rstrip("/").removesuffix(".git").replace(":", "/").split("/")
        if len(tail) >= 2:
            return f"{tail[-2]}/{tail[-1]}"
    return f"local/{repo.resolve().name}"


def _export(repo: Path, commit: str, into: Path) -> None:
    into.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "tree.tar"
        done = _git(repo, "archive", "--format=tar", "-o", str(archive), commit)
        if done.returncode != 0:
            raise UserError(f"git archive failed: {done.stderr.strip()[:200]}")
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")


def _write_manifest(
    path: Path,
    name: str,
    slug: str,
    python: str,
    requirements: Sequence[str],
    newer: str,
    install_env: dict[str, str],
) -> None:
    text = (
        "# Written by `codereval build`: the project at its commit, with what its suite needs.\n"
        f'[projects."{name}"]\nlanguage = "python"\nsource = "repos/{slug}"\n'
        f'python = "{python}"\nrequirements = {json.dumps(list(requirements))}\n'
        f'exclude_newer = "{newer}"\n'
    )
    if install_env:
        pairs = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in install_env.items())
        text += f"install_env = {{ {pairs} }}\n"
    path.write_text(text, encoding="utf-8")


def _install_env(repo: Path, commit: str, tree: Path) -> tuple[tuple[str, str], ...]:
    """Variables the project's installation needs because its tree has no git history.

    pbr (OpenStack's setuptools plug-in) asks git for the version and fails on an exported
    tree; PBR_VERSION is its documented way round, set to the commit's latest tag.
    """
    setup = "".join(
        (tree / f).read_text(encoding="utf-8", errors="replace")
        for f in ("setup.py", "setup.cfg", "pyproject.toml")
        if (tree / f).is_file()
    )
    if not re.search(r"\bpbr\b", setup):
        return ()
    described = _git(repo, "describe", "--tags", "--abbrev=0", commit).stdout.strip()
    version = re.sub(r"^[^0-9]*", "", described)
    return (("PBR_VERSION", version if re.match(r"^\d+(\.\d+)*$", version) else "0.0.0"),)


def _error_line(error: str) -> str:
    """The line of a failed build's log that says what failed (an exception, uv's error)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    for pattern in (r"^\w*(Error|Exception): ", r"^error: "):
        found = [line for line in lines if re.match(pattern, line)]
        if found:
            return found[-1][:200]
    return (lines[-1] if lines else "unknown error")[:200]


def _requirements(tree: Path, extra: Sequence[str]) -> tuple[str, ...]:
    found: list[str] = []
    if any((tree / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        found.append("-e .")
    for requirement in _pyproject_test_requirements(tree / "pyproject.toml"):
        if requirement.startswith("-e .[") and "-e ." in found:
            found[found.index("-e .")] = requirement  # the project with its test extra
        else:
            found.append(requirement)
    for name in REQUIREMENT_FILES:
        if (tree / name).is_file():
            found.append(f"-r {name}")
    found += [r for r in extra if r not in found]
    if not any(_name(r) == "setuptools" for r in found) and _uses_pkg_resources(tree):
        # uv's venvs hold no setuptools, which python -m venv's did until 3.12: namespace
        # packages declared with pkg_resources (zope's) need it.
        found.append("setuptools")
    if not any(_name(r) == "pytest" for r in found):
        found.append("pytest")
    return tuple(found)


def _why_not_run(output: str) -> str:
    """The line of pytest's output that says why the suite stopped: the first collection
    error's module and its exception, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    where = next((line.strip("_ ") for line in lines if "ERROR collecting" in line), "")
    error = next((line[1:].strip() for line in lines if line.startswith("E ")), "")
    if where and error:
        return f"{where}: {error}"[:300]
    return (error or (lines[-1] if lines else "no output"))[:300]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower()


def _uses_pkg_resources(tree: Path) -> bool:
    for path in tree.rglob("*.py"):
        try:
            if "pkg_resources" in path.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def _pyproject_test_requirements(pyproject: Path) -> list[str]:
    """What pyproject.toml says the tests need: a PEP 735 dependency group (``tests``, ``test``,
    ``testing``, else ``dev``; included groups followed), else an optional-dependencies extra
    of those names (as ``-e .[extra]`` requirements)."""
    if not pyproject.is_file():
        return []
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for name in (*TEST_GROUPS, "dev"):
            if isinstance(groups.get(name), list):
                return _group(groups, name, set())
    poetry = data.get("tool", {}).get("poetry", {})
    if isinstance(poetry, dict):
        groups = poetry.get("group", {})
        for name in (*TEST_GROUPS, "dev"):
            table = groups.get(name, {}).get("dependencies") if isinstance(groups, dict) else None
            if isinstance(table, dict):
                return _poetry_requirements(table)
        if isinstance(poetry.get("dev-dependencies"), dict):
            return _poetry_requirements(poetry["dev-dependencies"])
    extras = data.get("project", {}).get("optional-dependencies")
    if isinstance(extras, dict):
        for name in TEST_GROUPS:
            if isinstance(extras.get(name), list):
                return [f"-e .[{name}]"]
    return []


def _poetry_requirements(table: dict[str, Any]) -> list[str]:
    """Poetry's dependency table as requirement strings (git, path and url ones left out)."""
    out: list[str] = []
    for name, spec in table.items():
        if name == "python":
            continue
        if isinstance(spec, dict):
            if any(key in spec for key in ("git", "path", "url")):
                continue
            extras = spec.get("extras")
            name = f"{name}[{','.join(extras)}]" if isinstance(extras, list) and extras else name
            spec = spec.get("version", "*")
        if isinstance(spec, str):
            out.append(name + _poetry_constraint(spec))
    return out


def _poetry_constraint(spec: str) -> str:
    """``^1.2.3`` -> ``>=1.2.3,<2``; ``~1.2`` -> ``>=1.2,<1.3``; ``1.2`` -> ``==1.2``;
    ``*`` -> nothing; anything with an operator is PEP 440 already."""
    parts = []
    for item in (p.strip() for p in spec.split(",") if p.strip()):
        if item == "*":
            continue
        numbers = [int(n) for n in re.findall(r"\d+", item)]
        if item.startswith("^") and numbers:
            first = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
            upper = [*numbers[:first], numbers[first] + 1]
            parts.append(f">={item[1:]},<{'.'.join(map(str, upper))}")
        elif item.startswith("~") and not item.startswith("~=") and numbers:
            upper = [numbers[0] + 1] if len(numbers) == 1 else [numbers[0], numbers[1] + 1]
            parts.append(f">={item[1:]},<{'.'.join(map(str, upper))}")
        elif re.match(r"^\d", item):
            parts.append(f"=={item}")
        else:
            parts.append(item)
    return ",".join(parts)


def _group(groups: dict[str, Any], name: str, seen: set[str]) -> list[str]:
    seen.add(name)
    out: list[str] = []
    for item in groups.get(name, []):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            included = item["include-group"]
            if included not in seen and isinstance(groups.get(included), list):
                out += _group(groups, included, seen)
    return out


class _Runner:
    """Runs commands with the project's interpreter in the sandbox, in a private copy."""

    def __init__(self, env: Environment, sandbox: Sandbox, scratch_root: Path) -> None:
        self.env, self.sandbox, self.scratch_root = env, sandbox, scratch_root
        self.python = venv_python(env)
        # The samples' own way to a private view: hard links into a sealed base under bwrap.
        self.strategy = choose_strategy(sandbox.isolation, sealed=is_sealed(env))
        real = Path(os.path.realpath(self.python))
        self.mounts = tuple(
            Mount(source=p, target=p)
            for p in {env.path.resolve(), real.parent.parent.resolve()}
        )

    def run(
        self,
        argv: Sequence[str],
        *,
        files: dict[str, str],
        outputs: Path,
        wall: float,
        hash_seed: int = 0,
    ) -> tuple[ExecResult, Path]:
        scratch = Path(tempfile.mkdtemp(prefix="build-", dir=self.scratch_root))
        work = make_workspace(
            self.env.source_dir, scratch / "work", changed=files, strategy=self.strategy
        )
        (scratch / "home").mkdir()
        (scratch / "tmp").mkdir()
        outputs.mkdir(parents=True, exist_ok=True)
        request = ExecRequest(
            argv=(str(self.python), *argv),
            cwd=work,
            scratch=scratch,
            env={
                "PATH": f"{self.python.parent}:/usr/local/bin:/usr/bin:/bin",
                "HOME": str(scratch / "home"),
                "TMPDIR": str(scratch / "tmp"),
                "PYTHONHASHSEED": str(hash_seed),
                "PYTHONDONTWRITEBYTECODE": "1",
            },
            mounts=(*self.mounts, Mount(source=outputs, target=outputs, writable=True)),
            limits=Limits(wall_time=wall, cpu_time=2 * wall, memory_mb=4096, disk_mb=4096),
        )
        return self.sandbox.run(request), scratch


@contextmanager
def _bar(enabled: bool, what: str, total: int | None) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr (a spinner with the time when the total is unknown)."""
    if not enabled:
        yield lambda: None
        return
    columns = (
        SpinnerColumn(),
        TextColumn(f"[bold]{what}"),
        *((BarColumn(), MofNCompleteColumn()) if total is not None else ()),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        bar = progress.add_task(what, total=total)
        yield lambda: progress.update(bar, advance=1)


def _harness(name: str) -> str:
    return resources.files("codereval.data").joinpath(f"build_harness/{name}").read_text("utf-8")


def _read_calls(path: Path) -> list[bytes]:
    """The recorded calls of one function as separate pickles (kept as bytes: the host never
    unpickles what the project's code produced)."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    import pickletools

    calls, start = [], 0
    while start < len(data):
        # Each record is one pickle ending in STOP; genops walks it without running it.
        end = start
        for opcode, _, position in pickletools.genops(data[start:]):
            if opcode.name == "STOP":
                end = start + (position or 0) + 1
                break
        if end <= start:
            break
        calls.append(data[start:end])
        start = end
    return calls


def replay_code(candidate: Candidate, calls: Sequence[bytes]) -> str:
    text = _harness("replay.py")
    roots = [candidate.root] if candidate.root != "." else ["."]
    return (
        text.replace("@@TARGET@@", f"{candidate.module}.{candidate.qualname}")
        .replace("@@MODULE@@", repr(candidate.module))
        .replace("@@QUALNAME@@", repr(candidate.qualname))
        .replace("@@ROOTS@@", repr(roots))
        .replace("@@CALLS@@", repr(base64.b64encode(b"".join(calls)).decode("ascii")))
    )


INLINE = "test_codereval_inline.py"


def _record(
    runner: _Runner, candidates: Sequence[Candidate], options: BuildOptions, work: Path
) -> tuple[dict[str, Any], dict[str, list[bytes]], dict[str, tuple[int, list[str]]]]:
    outputs = work / "recorded"
    spec = {
        "targets": [{"id": f"t{i}", "module": c.module, "qualname": c.qualname}
                    for i, c in enumerate(candidates)],
        "max_calls": options.max_calls,
        "max_bytes": 1 << 16,
        "serializer": options.serializer,
        "roots": sorted({c.root for c in candidates if c.root != "."}),
    }  # fmt: skip
    files = {
        "codereval_record.py": _harness("record.py"),
        "codereval_record_spec.json": json.dumps(spec),
    }
    argv = [
        "codereval_record.py", "codereval_record_spec.json", str(outputs),
        # The copy is private and thrown away: pytest's cache may go in it (plugins need it).
        "-q", "-p", "no:randomly", *options.pytest_args,
    ]  # fmt: skip
    result, scratch = runner.run(argv, files=files, outputs=outputs, wall=options.suite_timeout)
    remove_tree(scratch)
    summary_path = outputs / "suite.json"
    tail = (result.stdout[-1500:] + result.stderr[-1500:]).decode("utf-8", "replace").strip()
    if result.timed_out:
        raise UserError(
            f"the test suite did not finish in {options.suite_timeout:.0f} s",
            hint="raise --suite-timeout or narrow it with --pytest-args",
        )
    if result.sandbox_error:
        raise UserError(f"the sandbox failed to run the suite: {result.sandbox_error[:200]}")
    if not summary_path.is_file():
        last = tail.splitlines()[-1] if tail else "no output"
        raise UserError(f"the test suite did not run: {last[:200]}")
    summary = json.loads(summary_path.read_text())
    exit_code = int(summary.get("exit", 0))
    if exit_code == 5:
        raise UserError(
            "no test suite found: pytest collected no tests",
            hint="give the suite's folder with --pytest-args tests/",
        )
    if exit_code in (2, 3, 4):
        output = (result.stdout + result.stderr).decode("utf-8", "replace")
        raise UserError(
            f"the test suite does not run (pytest exit {exit_code}): {_why_not_run(output)}"
        )
    calls = {c.task_id: _read_calls(outputs / f"t{i}.calls") for i, c in enumerate(candidates)}
    # (how many calls were dropped, the reasons of the first ones)
    dropped: dict[str, tuple[int, list[str]]] = {}
    counts = summary.get("dropped", {})
    for i, c in enumerate(candidates):
        path = outputs / f"t{i}.dropped"
        reasons = path.read_text().splitlines() if path.is_file() else []
        dropped[c.task_id] = (int(counts.get(f"t{i}", len(reasons))), reasons)
    summary["tail"] = tail[-500:]
    return summary, calls, dropped


def _calibrate(
    runner: _Runner, candidate: Candidate, calls: list[bytes], options: BuildOptions, work: Path
) -> tuple[list[bytes], str]:
    """The calls the reference reproduces in every one of REFERENCE_RUNS replays."""
    unstable: set[int] = set()
    detail = ""
    code = replay_code(candidate, calls)
    for attempt in range(REFERENCE_RUNS):
        outputs = work / "calibrate" / f"{candidate.task_id}-{attempt}"
        report = outputs / "failing.json"
        result, scratch = runner.run(
            [INLINE, "--calibrate", str(report)],
            files={INLINE: code},
            outputs=outputs,
            wall=options.timeout * 3,
            # Recorded under seed 0 (as samples run); another seed each time shows the calls
            # whose result hangs on set and dict-of-hash order.
            hash_seed=attempt + 1,
        )
        remove_tree(scratch)
        if not report.is_file():
            err = result.stderr.decode("utf-8", "replace").strip().splitlines()
            return [], f"the replay does not run on the reference: {(err or ['?'])[-1][:200]}"
        for index, problem in json.loads(report.read_text()):
            unstable.add(int(index))
            detail = detail or str(problem)
    kept = [c for i, c in enumerate(calls) if i not in unstable]
    return kept, detail


def build_python(
    options: BuildOptions, *, say: Callable[[str], None] = lambda _: None
) -> BuildReport:
    import time

    started = time.monotonic()
    # Absolute paths from here on: the sandbox mounts them.
    options = dataclasses.replace(options, repo=options.repo.absolute(), out=options.out.absolute())
    commit, date, name = check_inputs(options)
    out = options.out
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        report = _build(options, commit, date, name, staging, say)
        if not options.keep_work:
            shutil.rmtree(staging / ".work", ignore_errors=True)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report.out = out
    report.seconds = time.monotonic() - started
    return report


def _build(
    options: BuildOptions,
    commit: str,
    date: dt.datetime,
    name: str,
    staging: Path,
    say: Callable[[str], None],
) -> BuildReport:
    slug = name.replace("/", "---")
    tree = staging / "repos" / slug
    _export(options.repo, commit, tree)
    candidates = find_candidates(tree, min_statements=options.min_statements)
    if options.since:
        candidates = changed_since(options.repo, commit, candidates, parse_since(options.since))
    if options.max_tasks is not None:
        candidates = candidates[: options.max_tasks]
    if not candidates:
        raise UserError(
            "nothing selected: no function with a docstring and enough statements"
            + (f" changed since {options.since}" if options.since else ""),
            hint="lower --min-statements or move --since earlier",
        )
    say(f"{len(candidates)} functions selected")
    exclude_newer = (date + dt.timedelta(days=1)).strftime("%Y-%m-%dT00:00:00Z")
    extra = options.requirements
    if options.serializer == "cloudpickle":
        extra = (*extra, "cloudpickle")
    requirements = _requirements(tree, extra)
    spec = ProjectSpec(
        name=name,
        language=Language.PYTHON,
        source=f"repos/{slug}",
        python=options.python,
        requirements=requirements,
        exclude_newer=exclude_newer,
        install_env=_install_env(options.repo, commit, tree),
        base_dir=staging,
    )
    env_root = options.env_root or default_root()
    say(f"building the environment (Python {options.python}: {', '.join(requirements)})")
    env = PythonEnvironmentBuilder().build(spec, root=env_root)
    if not env.ready and "-e ." in requirements:
        # Older projects often cannot be installed editable with the tools of their day
        # (setuptools before PEP 660): their folder is on the path for the suite anyway.
        say(f"installing the project failed ({_error_line(env.error)}); trying without it")
        requirements = tuple(r for r in requirements if r != "-e .")
        spec = dataclasses.replace(spec, requirements=requirements)
        env = PythonEnvironmentBuilder().build(spec, root=env_root)
    if not env.ready:
        raise UserError(
            f"the project's environment did not build: {_error_line(env.error)}",
            hint="pass --python X.Y or --requirement to say what the project needs",
        )
    _write_manifest(staging / "projects.toml", name, slug, options.python, requirements,
                    exclude_newer, dict(spec.install_env))  # fmt: skip
    work = staging / ".work"
    work.mkdir()
    runner = _Runner(env, get_sandbox(options.sandbox), work)
    say("recording the calls the test suite makes")
    with _bar(options.progress, "running the suite", None) as _:
        suite, recorded, dropped = _record(runner, candidates, options, work)
    report = BuildReport(
        out=options.out, project=name, commit=commit, candidates=len(candidates), suite=suite
    )
    tests: dict[str, str] = {}
    reached = [c for c in candidates if recorded[c.task_id]]
    with (
        _bar(options.progress, "replaying on the reference", len(reached)) as advance,
        ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool,
    ):

        def calibrate(candidate: Candidate) -> tuple[list[bytes], str]:
            done = _calibrate(runner, candidate, recorded[candidate.task_id], options, work)
            advance()
            return done

        calibrated = dict(
            zip([c.task_id for c in reached], pool.map(calibrate, reached), strict=True)
        )
    for candidate in candidates:
        check = TaskCheck(
            task_id=candidate.task_id,
            function=candidate.qualname,
            file_path=candidate.file_path,
            calls=len(recorded[candidate.task_id]),
            dropped=dropped[candidate.task_id][0],
        )
        report.checks.append(check)
        if not check.calls and check.dropped:
            # Called, but nothing of it could be kept: inputs or results pickle cannot hold
            # (a regex match, a lambda, an open file), or the function could not be wrapped.
            check.status = "unrecorded"
            reasons = dropped[candidate.task_id][1]
            check.detail = f"{check.dropped} calls dropped ({reasons[0] if reasons else '?'})"
            continue
        if not check.calls:
            check.status, check.detail = "unreached", "the suite never called it"
            continue
        kept, detail = calibrated[candidate.task_id]
        check.unstable = check.calls - len(kept)
        if not kept or check.unstable > FLAKY_SHARE * check.calls:
            check.status = "flaky"
            check.detail = detail or "no call replays the same every time"
            continue
        tests[candidate.task_id] = replay_code(candidate, kept)
        check.calls = len(kept)
    if not tests:
        statuses = Counter(c.status for c in report.checks)
        raise UserError(
            f"no function has a test: of the {len(candidates)} selected, "
            + ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
            + f" (pytest exit {suite.get('exit')})",
            hint="widen the suite with --pytest-args, or record more with --serializer "
            "cloudpickle",
        )
    say(f"{len(tests)} functions reached with stable calls; checking them through the engine")
    by_id = {c.task_id: c for c in candidates}
    # Analysed once: every tested function is validated, the chosen ones are kept.
    records = [_record_of(by_id[t], tests[t], name, tree) for t in tests]
    _write_records(staging, records)
    _validate(report, staging, options, env_root, by_id)
    chosen = [
        c.task_id
        for c in report.checks
        if c.status == "ok" or (c.status == "weak" and options.include_weak)
    ]
    for check in report.checks:
        if check.status == "weak" and not options.include_weak:
            check.detail = (check.detail + "; " if check.detail else "") + "excluded"
    kept_ids = set(chosen)
    _write_records(staging, [r for r in records if r["_id"] in kept_ids])
    (staging / "checks.jsonl").write_text(
        "".join(c.to_json() + "\n" for c in report.checks), encoding="utf-8"
    )
    meta = {
        "family": "build-python",
        "created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "codereval_version": __version__,
        "project": name,
        "commit": commit,
        "commit_date": date.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "since": options.since or None,
        "selection": {"min_statements": options.min_statements, "max_calls": options.max_calls,
                      "serializer": options.serializer},
        "validation": {
            "reference_runs": REFERENCE_RUNS,
            "mutants": options.mutants,
            "min_kill": options.min_kill,
            "include_weak": options.include_weak,
        },
        "tasks": len(chosen),
        "suite": {k: v for k, v in suite.items() if k in ("exit",)},
    }
    (staging / "benchmark.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return report


def _record_of(candidate: Candidate, test: str, name: str, tree: Path) -> dict[str, str]:
    """A task's record in CoderEval's format, with its level and contexts from our analysis."""
    from codereval.analysis.formats import format_all_context, format_oracle_context
    from codereval.analysis.python import analyze_python_file

    analysis = analyze_python_file(tree, candidate.file_path, candidate.qualname)
    return {
        "_id": candidate.task_id,
        "name": candidate.name,
        "project": name,
        "file_path": candidate.file_path,
        "package": candidate.module.rpartition(".")[0],
        "docstring": candidate.docstring,
        "human_label": "",
        "code": candidate.code,
        "file_content": (tree / candidate.file_path).read_text(encoding="utf-8"),
        "lineno": str(candidate.lineno),
        "end_lineno": str(candidate.end_lineno),
        "level": analysis.level.value,
        "oracle_context": format_oracle_context(analysis.oracle_context, language=Language.PYTHON),
        "all_context": format_all_context(analysis.all_context, language=Language.PYTHON),
        "dependency": "",
        "test_name": "",
        "test_lineno": "",
        # Beyond CoderEval's 17 keys: the test, a script run after the sample is put into the
        # project file.
        "test_kind": "script",
        "test_code": test,
    }


def _write_records(staging: Path, records: Sequence[dict[str, str]]) -> None:
    text = json.dumps({"RECORDS": list(records)}, indent=1, ensure_ascii=False)
    (staging / "records.json").write_text(text + "\n", encoding="utf-8")


def _validate(
    report: BuildReport,
    staging: Path,
    options: BuildOptions,
    env_root: Path,
    by_id: dict[str, Candidate],
) -> None:
    """Reference ×3 and the mutants, through the engine as `evaluate --prepared` runs them."""
    _, tasks = read_tasks_file(staging / "records.json")
    if not tasks:
        return
    samples: list[Sample] = []
    probes: dict[tuple[str, int], str] = {}
    for task in tasks:
        for index in range(REFERENCE_RUNS):
            samples.append(Sample(task_id=task.task_id, index=index, raw=task.reference,
                                  code=task.reference))  # fmt: skip
            probes[(task.task_id, index)] = "reference"
        made = mutants(by_id[task.task_id].code, task.name, limit=options.mutants)
        for offset, (kind, code) in enumerate(made):
            index = REFERENCE_RUNS + offset
            samples.append(Sample(task_id=task.task_id, index=index, raw=code, code=code))
            probes[(task.task_id, index)] = kind
    run = engine.evaluate(
        benchmark=engine.Benchmark(name="build-validation", tasks=list(tasks)),
        samples=samples,
        run_dir=staging / ".work" / "validation",
        options=engine.EvalOptions(
            jobs=options.jobs,
            timeout=options.timeout,
            sandbox=options.sandbox,
            projects=staging / "projects.toml",
            env_root=env_root,
            mode="gold",
            progress=options.progress,
        ),
        console=Console(stderr=True, quiet=not options.progress),
    )
    checks = {c.task_id: c for c in report.checks}
    for task in tasks:
        check = checks[task.task_id]
        outcomes = [o for o in run.outcomes if o.task_id == task.task_id]
        reference = [o for o in outcomes if probes[(o.task_id, o.sample_index)] == "reference"]
        others = [o for o in outcomes if probes[(o.task_id, o.sample_index)] != "reference"]
        judge(check, reference, others, min_kill=options.min_kill)


def judge(check: TaskCheck, reference: Sequence[Outcome], mutants: Sequence[Outcome], *,
          min_kill: float, trivial: Sequence[Outcome] = ()) -> None:
    """A validated task's status: broken when the reference fails once, else ok or weak by
    the share of ``mutants`` its test kills. A test that a trivial body (``trivial``: the
    method returning its type's default) passes is weak whatever it kills: it cannot tell a
    sample that does nothing from the reference (CoderEval issue #12)."""
    failed = [o for o in reference if o.verdict is not Verdict.PASSED]
    if failed:
        check.status = "broken"
        check.detail = f"reference: {failed[0].verdict.value} ({failed[0].detail[:160]})"
        return
    check.mutants = len(mutants)
    check.killed = sum(1 for o in mutants if o.verdict is not Verdict.PASSED)
    share = check.kill_share
    check.status = "weak" if share is None or share < min_kill else "ok"
    if check.status == "weak":
        check.detail = f"kills {check.killed} of {check.mutants} mutants"
    if any(o.verdict is Verdict.PASSED for o in trivial):
        check.status = "weak"
        check.detail = "; ".join(filter(None, [check.detail, "a trivial body (the default "
                                                             "return) passes"]))


__all__ = ["BuildOptions", "BuildReport", "TaskCheck", "build_python", "check_inputs", "judge"]
