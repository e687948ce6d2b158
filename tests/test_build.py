"""`codereval build python`: a benchmark from a repository, tested with calls its own suite made.

A fixture repository (written by these tests, one package and a pytest suite) goes through the
command end to end: a function tested well, one tested weakly, one that is not deterministic,
one the suite never calls and a method; then `evaluate --prepared` runs what was written.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from codereval.families.build.mutate import mutants
from codereval.families.build.select import find_candidates

CORE = '''
"""Core functions."""
import random


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("no values")
    total = 0
    for value in values:
        total = total + value
    return total / len(values)


def describe(n):
    """A word for the size of n."""
    if n < 0:
        return "negative"
    if n == 0:
        return "zero"
    if n > 1000:
        return "large"
    if n > 100:
        return "medium"
    return "small"


def token(prefix):
    """A fresh token that starts with prefix."""
    number = random.random()
    text = "%s-%f" % (prefix, number)
    return text


def apply_all(func, values):
    """func applied to each value (the suite passes a lambda: pickle cannot hold it)."""
    out = []
    for value in values:
        out.append(func(value))
    return out


def evens(values):
    """Yield the even values, in order."""
    for value in values:
        if value % 2 == 0:
            yield value


def unique_words(text):
    """The distinct words of text (in set order, which the hash seed decides)."""
    words = text.split()
    distinct = set(words)
    return list(distinct)


def unused(x):
    """Never called by the suite."""
    y = x * 2
    z = y + 1
    return z


def short(x):
    """Too short to be a task."""
    return x


class Stack:
    """A stack of numbers."""

    def __init__(self):
        self.items = []

    def push_all(self, items):
        """Push every item but None, and return how many the stack holds."""
        for item in items:
            if item is None:
                continue
            self.items.append(item)
        return len(self.items)
'''

SUITE = '''
import pytest

from calc import mean
from calc.core import Stack, apply_all, describe, evens, token, unique_words


def test_mean():
    assert mean([1, 2, 3]) == 2
    assert mean([2.5]) == 2.5
    with pytest.raises(ValueError):
        mean([])


def test_describe():
    assert describe(5) == "small"


def test_token():
    assert token("a").startswith("a-")


def test_apply_all():
    assert apply_all(lambda x: x + 1, [1, 2]) == [2, 3]


def test_evens():
    assert list(evens([1, 2, 3, 4])) == [2, 4]
    first = evens([6, 7, 8])
    assert next(first) == 6  # consumed in part: the item seen is what is recorded


def test_unique_words():
    text = "the quick brown fox jumps over the lazy dog while seven owls watch"
    assert sorted(unique_words(text)) == sorted(set(text.split()))


def test_stack():
    s = Stack()
    assert s.push_all([1, None, 2]) == 2
    assert s.push_all([3]) == 3
'''


def _git(repo: Path, *args: str, date: str = "2026-01-05T10:00:00Z") -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def make_repo(root: Path, *, suite: str | None = SUITE, core: str = CORE) -> Path:
    repo = root / "calc-repo"
    (repo / "calc").mkdir(parents=True)
    (repo / "calc" / "__init__.py").write_text('"""Calc."""\nfrom calc.core import mean\n')
    (repo / "calc" / "core.py").write_text(core.lstrip())
    if suite is not None:
        (repo / "tests").mkdir()
        (repo / "tests" / "test_calc.py").write_text(suite.lstrip())
    (repo / "setup.py").write_text(
        'from setuptools import setup\nsetup(name="calc", version="0.1", packages=["calc"])\n'
    )
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first")
    return repo


@pytest.fixture(scope="module")
def env_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One environment cache for the module, for build and evaluate alike."""
    root = tmp_path_factory.mktemp("build-envs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CODEREVAL_HOME", str(root))
        yield root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_root: Path) -> tuple[Path, Path, str]:
    """The fixture repository built once: (repository, benchmark directory, command output)."""
    from codereval.cli.app import main

    root = tmp_path_factory.mktemp("build")
    repo = make_repo(root)
    out = root / "bench"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        main([
            "build", "python", str(repo), "--commit", "HEAD", "--out", str(out),
            "--name", "example/calc", "--min-kill", "0.6",
        ])  # fmt: skip
    return repo, out, buffer.getvalue()


def _checks(out: Path) -> dict[str, dict[str, object]]:
    return {
        row["task_id"]: row
        for row in map(json.loads, (out / "checks.jsonl").read_text().splitlines())
    }


@pytest.mark.slow
def test_build_writes_a_benchmark_of_the_functions_the_suite_tests_well(
    built: tuple[Path, Path, str],
) -> None:
    _, out, printed = built
    assert "8 functions selected, 7 reached by the suite" in printed, printed
    checks = _checks(out)
    assert {k: v["status"] for k, v in checks.items()} == {
        "calc.core.mean": "ok",
        "calc.core.describe": "weak",  # one call, small: half its mutants survive
        "calc.core.token": "flaky",  # random: the reference never replays the same
        "calc.core.apply_all": "unrecorded",  # its argument is a lambda
        "calc.core.evens": "ok",  # a generator: its items are what is compared
        "calc.core.unique_words": "flaky",  # another hash seed, another order
        "calc.core.unused": "unreached",
        "calc.core.Stack.push_all": "ok",
    }
    assert checks["calc.core.mean"]["calls"] == 3  # the raise is a recorded call too
    assert "arguments: " in str(checks["calc.core.apply_all"]["detail"])
    assert "excluded" in str(checks["calc.core.describe"]["detail"])
    records = json.loads((out / "records.json").read_text())["RECORDS"]
    assert [r["_id"] for r in records] == [
        "calc.core.mean",
        "calc.core.evens",
        "calc.core.Stack.push_all",
    ]
    assert checks["calc.core.evens"]["calls"] == 2
    for record in records:
        assert all(isinstance(v, str) for v in record.values())
        assert {
            "_id", "name", "project", "file_path", "package", "docstring", "human_label",
            "code", "file_content", "lineno", "end_lineno", "level", "oracle_context",
            "all_context", "dependency", "test_name", "test_lineno",
        } <= set(record)  # fmt: skip
    push_all = records[2]
    assert push_all["level"] == "class_runnable" and push_all["project"] == "example/calc"
    assert push_all["code"].lstrip().startswith("def push_all(self, items):")
    meta = json.loads((out / "benchmark.json").read_text())
    assert meta["family"] == "build-python" and meta["tasks"] == 3
    assert (out / "repos" / "example---calc" / "calc" / "core.py").is_file()
    assert not list(out.parent.glob(".bench.partial-*"))


@pytest.mark.slow
def test_evaluate_prepared_passes_the_references_and_fails_wrong_samples(
    built: tuple[Path, Path, str], env_root: Path, tmp_path: Path, run_cli
) -> None:
    _, out, _ = built
    gold = run_cli(
        "evaluate", "--prepared", out, "--reference", "--out", tmp_path / "gold"
    )  # fmt: skip
    assert gold.exit_code == 0, gold.stderr
    assert "gold validation: 3 ok, 0 broken" in gold.stdout + gold.stderr
    wrong = {
        "calc.core.mean": [
            # Sums instead of averaging; averages but forgets the empty list.
            "def mean(values):\n    return sum(values)\n",
            "def mean(values):\n    return sum(values) / len(values)\n",
        ],
        "calc.core.evens": [
            # Returns a list instead of yielding; yields the odd ones.
            "def evens(values):\n    return [v for v in values if v % 2 == 0]\n",
            "def evens(values):\n    for v in values:\n        if v % 2:\n            yield v\n",
        ],
        "calc.core.Stack.push_all": [
            # Keeps None; returns the count pushed now instead of the total.
            "def push_all(self, items):\n    self.items.extend(items)\n"
            "    return len(self.items)\n",
            "def push_all(self, items):\n    new = [i for i in items if i is not None]\n"
            "    self.items.extend(new)\n    return len(new)\n",
        ],
    }
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"_id": k, "generate_results": v}) + "\n" for k, v in wrong.items())
    )
    run = run_cli(
        "evaluate", "--prepared", out, "--samples", samples, "--out", tmp_path / "wrong"
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    lines = (tmp_path / "wrong" / "outcomes.jsonl").read_text().splitlines()
    outcomes = [json.loads(line) for line in lines if line]
    assert len(outcomes) == 6
    assert all(o["verdict"] in ("failed", "runtime_error") for o in outcomes), outcomes
    # The empty list raised ValueError in the original; ZeroDivisionError is a different call.
    assert any("expected builtins.ValueError" in o["detail"] for o in outcomes), outcomes


@pytest.mark.slow
def test_since_keeps_only_functions_changed_after_the_date_and_weak_ones_on_request(
    tmp_path: Path, env_root: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path)
    core = repo / "calc" / "core.py"
    core.write_text(core.read_text().replace('return "small"', 'return "small number"'))
    (repo / "tests" / "test_calc.py").write_text(
        SUITE.replace('describe(5) == "small"', 'describe(5) == "small number"')
    )
    _git(repo, "commit", "-qam", "second", date="2026-03-01T10:00:00Z")
    # A bare mirror will do: only the history is read.
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    monkeypatch.chdir(tmp_path)  # a relative --out (the sandbox mounts it: made absolute)
    done = run_cli(
        "build", "python", bare, "--commit", "HEAD", "--out", "fresh",
        "--since", "2026-02-01", "--include-weak", "--min-kill", "0.6",
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert "1 functions selected" in done.stdout
    records = json.loads((tmp_path / "fresh" / "records.json").read_text())["RECORDS"]
    assert [r["_id"] for r in records] == ["calc.core.describe"]  # weak, kept on request
    assert _checks(tmp_path / "fresh")["calc.core.describe"]["status"] == "weak"


def _one_line_error(result, out: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: ") and text in lines[-1], result.stderr
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}.partial-*"))


def test_a_folder_that_is_not_a_repository_is_refused(tmp_path: Path, run_cli) -> None:
    (tmp_path / "plain").mkdir()
    out = tmp_path / "out"
    done = run_cli("build", "python", tmp_path / "plain", "--commit", "HEAD", "--out", out)
    _one_line_error(done, out, "is not a git repository")


def test_a_commit_that_does_not_exist_is_refused(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path)
    out = tmp_path / "out"
    done = run_cli("build", "python", repo, "--commit", "deadbeef", "--out", out)
    _one_line_error(done, out, "commit 'deadbeef' does not exist")


def test_an_existing_out_and_a_bad_since_are_refused_before_anything_runs(
    tmp_path: Path, run_cli
) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "taken").mkdir()
    done = run_cli("build", "python", repo, "--commit", "HEAD", "--out", tmp_path / "taken")
    assert done.exit_code != 0 and "already exists" in done.stderr
    out = tmp_path / "out"
    done = run_cli("build", "python", repo, "--commit", "HEAD", "--out", out, "--since", "May")
    _one_line_error(done, out, "is not a date")


def test_a_repository_with_nothing_to_select_is_refused(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path, core='def f(x):\n    return x\n')
    out = tmp_path / "out"
    done = run_cli("build", "python", repo, "--commit", "HEAD", "--out", out)
    _one_line_error(done, out, "nothing selected")


@pytest.mark.slow
def test_no_suite_a_suite_that_does_not_run_and_one_that_reaches_nothing_are_one_line_each(
    tmp_path: Path, env_root: Path, run_cli
) -> None:
    bare = make_repo(tmp_path / "a", suite=None)
    out = tmp_path / "out-a"
    done = run_cli("build", "python", bare, "--commit", "HEAD", "--out", out)
    _one_line_error(done, out, "no test suite found")
    broken = make_repo(tmp_path / "b")
    (broken / "tests" / "conftest.py").write_text("raise RuntimeError('broken conftest')\n")
    _git(broken, "add", "-A")
    _git(broken, "commit", "-qm", "break")
    out = tmp_path / "out-b"
    done = run_cli("build", "python", broken, "--commit", "HEAD", "--out", out)
    _one_line_error(done, out, "the test suite does not run")
    assert "RuntimeError: broken conftest" in done.stderr  # the cause, not pytest's last line
    idle = make_repo(tmp_path / "c", suite="def test_nothing():\n    assert True\n")
    out = tmp_path / "out-c"
    done = run_cli("build", "python", idle, "--commit", "HEAD", "--out", out)
    _one_line_error(done, out, "no function has a test: of the 8 selected, 8 unreached")


def test_selection_skips_tests_dunders_short_and_nested_functions(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(
        textwrap.dedent(
            '''
            def kept(x):
                """Doc."""
                a = x
                b = a + 1
                return b


            def no_doc(x):
                a = x
                b = a + 1
                return b


            def short(x):
                """Doc."""
                return x


            def outer(x):
                """Doc."""
                def inner(y):
                    """Nested: not a task of its own."""
                    a = y
                    b = a + 1
                    return b
                return inner(x)


            class C:
                def __eq__(self, other):
                    """Doc."""
                    a = 1
                    b = a + 1
                    return b == other

                def method(self):
                    """Doc."""
                    a = 1
                    b = a + 1
                    return b
            '''
        )
    )
    body = '    """Doc."""\n    a = 1\n    b = a + 1\n    return b\n'
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helpers.py").write_text(f"def in_tests(x):\n{body}")
    (tmp_path / "pkg" / "test_helpers.py").write_text(f"def helper(x):\n{body}")
    found = {c.task_id: c for c in find_candidates(tmp_path)}
    assert set(found) == {"pkg.mod.kept", "pkg.mod.outer", "pkg.mod.C.method"}
    assert found["pkg.mod.C.method"].class_name == "C" and found["pkg.mod.kept"].root == "."


def test_mutants_change_one_site_each_and_never_the_docstring() -> None:
    code = textwrap.dedent(
        '''
        def clamp(x, low, high):
            """Keep x within [low, high]."""
            if x < low and not high < low:
                return low
            if x > high:
                return high
            return x + 0
        '''
    )
    made = mutants(code, "clamp", limit=30)
    kinds = {kind for kind, _ in made}
    assert {"comparison", "condition", "return", "constant", "boolean", "not", "operator"} <= kinds
    texts = [text for _, text in made]
    assert len(set(texts)) == len(texts)
    assert all('"""Keep x within [low, high]."""' in text for text in texts)
    assert len(mutants(code, "clamp", limit=3)) == 3
    assert mutants(code, "missing") == []


def test_mutants_of_a_method_whose_docstring_has_a_line_at_column_0() -> None:
    # As real projects write them (py-seed's `_construct_payload`): textwrap.dedent gives up
    # on such a method and its source does not parse.
    method = (
        "    def payload(self, params):\n"
        '        """Construct parameters.\n'
        ".\n"
        '        """\n'
        "        if params is None:\n"
        "            return {}\n"
        "        return dict(params)\n"
    )
    made = mutants(method, "payload")
    assert made
    assert all(ast.parse(text) for _, text in made)


def test_a_pbr_project_gets_its_version_from_the_tags_since_its_exported_tree_has_no_git(
    tmp_path: Path,
) -> None:
    # pbr asks git for the version and fails on the tree `build` exports; PBR_VERSION is its
    # documented way round, and it must reach the benchmark's manifest for `evaluate`.
    from codereval.environments.base import load_manifest
    from codereval.families.build.pipeline import _install_env, _write_manifest

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "setup.py").write_text("import setuptools\nsetuptools.setup(pbr=True)\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    assert _install_env(repo, "HEAD", repo) == (("PBR_VERSION", "0.0.0"),)
    _git(repo, "tag", "v2.4.1")
    assert _install_env(repo, "HEAD", repo) == (("PBR_VERSION", "2.4.1"),)

    manifest = tmp_path / "projects.toml"
    _write_manifest(manifest, "acme/p", "acme---p", "3.11", ["-e ."], "2026-01-06T00:00:00Z",
                    {"PBR_VERSION": "2.4.1"})  # fmt: skip
    (spec,) = load_manifest(manifest)
    assert dict(spec.install_env) == {"PBR_VERSION": "2.4.1"}

    (repo / "setup.py").write_text("import setuptools\nsetuptools.setup()\n")
    assert _install_env(repo, "HEAD", repo) == ()


@pytest.mark.slow
def test_cloudpickle_records_the_calls_whose_argument_is_a_lambda(
    tmp_path: Path, env_root: Path, run_cli
) -> None:
    # With plain pickle (the default) apply_all is unrecorded: its argument is a lambda.
    repo = make_repo(tmp_path)
    done = run_cli(
        "build", "python", repo, "--commit", "HEAD", "--out", tmp_path / "cp",
        "--serializer", "cloudpickle", "--max-tasks", "4", "--include-weak",
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    apply_all = _checks(tmp_path / "cp")["calc.core.apply_all"]
    assert apply_all["status"] in ("ok", "weak") and apply_all["calls"] == 1, apply_all
    assert "cloudpickle" in (tmp_path / "cp" / "projects.toml").read_text()
    meta = json.loads((tmp_path / "cp" / "benchmark.json").read_text())
    assert meta["selection"]["serializer"] == "cloudpickle"


def test_what_pyproject_says_the_tests_need_is_installed(tmp_path: Path) -> None:
    from codereval.families.build.pipeline import _requirements

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(textwrap.dedent(
        """
        [project]
        name = "p"
        optional-dependencies = { test = ["hypothesis"] }
        [dependency-groups]
        lint = ["ruff"]
        tests = ["pytest >=8", { include-group = "lint" }, "freezegun"]
        dev = [{ include-group = "tests" }, "sphinx"]
        """
    ))  # fmt: skip
    # A PEP 735 group first (its included groups followed), then pytest is already there.
    assert _requirements(tmp_path, ()) == ("-e .", "pytest >=8", "ruff", "freezegun")
    pyproject.write_text('[project]\nname = "p"\n[project.optional-dependencies]\ntest = ["h"]\n')
    assert _requirements(tmp_path, ()) == ("-e .[test]", "pytest")
    pyproject.write_text('[project]\nname = "p"\n')
    assert _requirements(tmp_path, ("attrs",)) == ("-e .", "attrs", "pytest")
    # Poetry's groups (and its older dev-dependencies), its constraints made PEP 440.
    pyproject.write_text(textwrap.dedent(
        """
        [tool.poetry.dependencies]
        python = "^3.8"
        pygments = "^2.13.0"
        [tool.poetry.group.test.dependencies]
        pytest = "^7.0.0"
        attrs = { version = "~21.4", extras = ["tests"] }
        mock = "4.0.3"
        local = { path = "../local" }
        """
    ))  # fmt: skip
    assert _requirements(tmp_path, ()) == (
        "-e .", "pytest>=7.0.0,<8", "attrs[tests]>=21.4,<21.5", "mock==4.0.3",
    )  # fmt: skip
    pyproject.write_text('[tool.poetry.dev-dependencies]\nattrs = "^0.2"\nflake8 = "*"\n')
    assert _requirements(tmp_path, ()) == ("-e .", "attrs>=0.2,<0.3", "flake8", "pytest")
    pyproject.write_text('[project]\nname = "p"\n')
    # A namespace package declared with pkg_resources needs setuptools, which uv's venvs lack.
    (tmp_path / "ns").mkdir()
    (tmp_path / "ns" / "__init__.py").write_text(
        "__import__('pkg_resources').declare_namespace(__name__)\n"
    )
    assert _requirements(tmp_path, ()) == ("-e .", "setuptools", "pytest")
    assert _requirements(tmp_path, ("setuptools<60",)) == ("-e .", "setuptools<60", "pytest")


def test_a_module_that_exits_when_imported_leaves_its_function_unrecorded_not_the_suite(
    tmp_path: Path, env_root: Path, run_cli
) -> None:
    repo = make_repo(tmp_path)
    (repo / "calc" / "script.py").write_text(textwrap.dedent(
        '''
        import sys


        def total(values):
            """Sum of the values."""
            out = 0
            for value in values:
                out += value
            return out


        sys.exit(2)  # a script run on import, as some projects' tools are
        '''
    ))  # fmt: skip
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "script")
    done = run_cli("build", "python", repo, "--commit", "HEAD", "--out", tmp_path / "out")
    assert done.exit_code == 0, done.stderr
    checks = _checks(tmp_path / "out")
    assert checks["calc.script.total"]["status"] == "unrecorded"
    assert "SystemExit" in str(checks["calc.script.total"]["detail"])
    assert checks["calc.core.mean"]["status"] == "ok"


def test_a_function_whose_calls_never_pickle_is_not_tried_for_ever(
    tmp_path: Path, env_root: Path, run_cli
) -> None:
    # Each try pickles the arguments: on a suite's million calls that made builds run for hours.
    many = SUITE + textwrap.dedent(
        """

        def test_many():
            for i in range(500):
                apply_all(lambda x: x, [i])
        """
    )
    repo = make_repo(tmp_path, suite=many)
    done = run_cli(
        "build", "python", repo, "--commit", "HEAD", "--out", tmp_path / "out",
        "--max-calls", "2", "--max-tasks", "4",
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    apply_all = _checks(tmp_path / "out")["calc.core.apply_all"]
    assert apply_all["status"] == "unrecorded"
    assert apply_all["dropped"] == 20  # ten times --max-calls, then no more tries
    assert str(apply_all["detail"]).startswith("20 calls dropped (arguments: ")
