"""The house's shape is a contract: layers, independent families, no import cycles.

`make test` runs lint-imports on pyproject's contracts; these tests check what it does not (no
cycles at all, a root that holds only the face and the vocabulary, a registry that matches the
family folders) and that the contracts themselves catch what they are meant to.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

import grimp
import pytest

import codereval
from codereval.benchmarks import (
    FAMILIES,
    benchmarks_help,
    families,
    family,
    family_of,
    load_benchmark,
)
from codereval.benchmarks.family import Family
from codereval.errors import UserError
from codereval.model import Language, Task
from codereval.prompting.prompts import Prompt, PromptStyle, PromptVariant

PACKAGE = Path(codereval.__file__).parent
ROOT = PACKAGE.parent.parent


def _cycles(package: str, *, search_path: Path | None = None) -> list[list[str]]:
    """Strongly connected groups of modules (more than one module each) in a package's graph,
    type-checking imports left out, every other import (a function's own too) counted."""
    if search_path is not None:
        sys.path.insert(0, str(search_path))
    try:
        graph = grimp.build_graph(
            package, include_external_packages=False, exclude_type_checking_imports=True
        )
    finally:
        if search_path is not None:
            sys.path.remove(str(search_path))
    shipped_data = f"{package}.data"
    modules = sorted(m for m in graph.modules if not m.startswith(shipped_data))
    edges = {
        m: sorted(
            i for i in graph.find_modules_directly_imported_by(m) if not i.startswith(shipped_data)
        )
        for m in modules
    }
    # Tarjan's algorithm, iterative (the graph has hundreds of modules).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in modules:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, [])
            if child < len(targets):
                work.append((node, child + 1))
                target = targets[child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return groups


def test_no_two_modules_of_the_package_import_each_other_even_around_a_loop() -> None:
    assert _cycles("codereval") == []


def test_the_cycle_check_finds_a_loop_through_a_function_level_import(tmp_path: Path) -> None:
    package = tmp_path / "loopy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from loopy import b\n")
    (package / "b.py").write_text("def f():\n    from loopy import c\n")
    (package / "c.py").write_text("import loopy.a\n")
    (package / "d.py").write_text("import loopy.a\n")
    assert _cycles("loopy", search_path=tmp_path) == [["loopy.a", "loopy.b", "loopy.c"]]


def test_the_package_root_holds_only_the_face_and_the_shared_vocabulary() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "api.py", "errors.py", "model.py"]


def test_every_family_folder_is_registered_and_every_registered_family_has_a_folder() -> None:
    folders = sorted(
        p.name for p in (PACKAGE / "families").iterdir() if (p / "__init__.py").is_file()
    )
    assert sorted(FAMILIES) == folders
    for name in FAMILIES:
        found = family(name)
        assert isinstance(found, Family) and found.name == name


def test_each_family_claims_its_own_benchmarks_and_tasks() -> None:
    python = load_benchmark("mini-python")
    ujb = load_benchmark("mini-coderujb")
    claimed = {t.task_id: family_of(t) for t in [*python, *ujb]}
    assert {f.name for t in python if (f := claimed[t.task_id])} == {"codereval"}
    assert {f.name for t in ujb if (f := claimed[t.task_id])} == {"coderujb"}
    with pytest.raises(UserError, match="unknown benchmark 'nope'"):
        load_benchmark("nope")
    # Every family that loads benchmarks by name says which names in --help.
    assert all(f.names_help for f in families() if type(f).load is not Family.load)


def _contracts_on(tmp_path: Path, modules: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """lint-imports with this project's contracts on a copy of the package with some modules
    added (name relative to the package -> text)."""
    copy = tmp_path / "src"
    shutil.copytree(PACKAGE, copy / "codereval", ignore=shutil.ignore_patterns("data"))
    (copy / "codereval" / "data").mkdir()
    (copy / "codereval" / "data" / "__init__.py").write_text("")
    for name, text in modules.items():
        (copy / "codereval" / name).write_text(textwrap.dedent(text))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--config", str(tmp_path / "pyproject.toml"), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"},
        check=False,
    )


@pytest.mark.slow
def test_the_contracts_hold_on_the_package_and_break_on_an_upward_or_a_family_import(
    tmp_path: Path,
) -> None:
    clean = _contracts_on(tmp_path / "clean", {})
    assert clean.returncode == 0, clean.stdout[-2000:]
    upward = _contracts_on(
        tmp_path / "upward", {"sandbox/leak.py": "from codereval.report import html\n"}
    )
    assert upward.returncode != 0
    assert "layers, top to bottom BROKEN" in upward.stdout
    knows = _contracts_on(
        tmp_path / "knows",
        {"scoring/leak.py": "from codereval.families.coderujb import metrics\n"},
    )
    assert "(they ask codereval.benchmarks' registry) BROKEN" in knows.stdout
    assert knows.returncode != 0
    crossing = _contracts_on(
        tmp_path / "crossing",
        {"families/humaneval/leak.py": "from codereval.families.codereval import records\n"},
    )
    assert "families are independent of each other BROKEN" in crossing.stdout
    runs = _contracts_on(
        tmp_path / "runs", {"scoring/leak.py": "from codereval.runners import java\n"}
    )
    assert "knows no language's runner BROKEN" in runs.stdout
    assert runs.returncode != 0


def test_python_dash_m_codereval_is_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codereval", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "prepare" in done.stdout and "compare" in done.stdout  # a family's commands


class _ToyFamily(Family):
    """A family from outside the package: one benchmark, its own runner and prompt."""

    name = "toy"
    names_help = "toy-one"
    runners: ClassVar[Mapping[str, str]] = {
        "toy-runner": "codereval.runners.program:ProgramRunner"
    }

    def load(
        self, name: str, *, data_dir: Path | None, tasks_path: Path | None
    ) -> list[Task] | None:
        if name != "toy-one":
            return None
        return [Task(task_id="toy/0", benchmark="toy", language=Language.PYTHON, name="f")]

    def owns(self, task: Task) -> bool:
        return task.benchmark == "toy"

    def runner_for(self, task: Task) -> str | None:
        return "toy-runner"

    def build_prompt(self, task: Task, *, variant: PromptVariant, style: PromptStyle) -> Prompt:
        return Prompt(task_id=task.task_id, variant=variant, style=style, text="write f")


TOY = _ToyFamily()


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(FAMILIES, "toy", "test_architecture:TOY")
    family.cache_clear()
    yield
    family.cache_clear()


@pytest.mark.usefixtures("toy_registered")
def test_a_family_plugs_in_with_one_registry_line() -> None:
    from codereval.prompting.prompts import build_prompt
    from codereval.runners import all_runners, runner_name_for

    (task,) = load_benchmark("toy-one")
    assert family_of(task) is TOY
    assert runner_name_for(task) == "toy-runner" and "toy-runner" in all_runners()
    assert build_prompt(task).text == "write f"
    assert "toy-one" in benchmarks_help()
    # The other families' tasks are still theirs.
    assert runner_name_for(load_benchmark("mini-coderujb")[0]).startswith("coderujb")
