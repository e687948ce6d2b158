"""What the original platform's trees had, repaired as data in the projects manifest.

A project shaped like the CoderEval ones that needed it (cachetools, pysolbase, infrared): its
official tests run as scripts inside the module's folder, and
- one imports a sibling module as a top-level module, which git writes with a relative import
  (the platform's copy was edited: an `edits` entry with old/new);
- one imports the project by its package name, which nothing on its path provides (the
  platform's venv had it installed: `-e .` in the requirements);
- one reads a fixture where the platform's tree had a copy of it (an `edits` entry with copy).
Gold validation through the CLI, in --compat: every reference passes with the repairs, and each
task is broken without them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from codereval_world import _git

from codereval.environments.python import default_root
from codereval.sandbox import sandbox_class

pytestmark = pytest.mark.slow

PROJECT = "acme/cachekit"
SLUG = "acme---cachekit"
ROOT = f"/home/travis/builds/repos/{SLUG}"

SOURCES = {
    "setup.py": "from setuptools import setup\n\nsetup(name='cachekit', version='1.0', "
                "packages=['cachekit'])\n",
    "cachekit/__init__.py": "",
    "cachekit/base.py": "class Base:\n    kind = 'base'\n",
    "cachekit/lru.py": "from .base import Base\n\n\nclass LRU(Base):\n    kind = 'lru'\n",
    "cachekit/func.py": "from .lru import LRU\n\n\ndef lru_kind():\n    return LRU.kind\n",
    "cachekit/names.py": "from cachekit.base import Base\n\n\ndef base_kind():\n"
                         "    return Base.kind\n",
    "cachekit/limits.py": "def read_limit(path):\n    with open(path) as f:\n"
                          "        return f.read().strip()\n",
    "tests/fixtures/limit.txt": "42\n",
}

LRU_KIND = "def lru_kind():\n    return LRU.kind\n"
BASE_KIND = "def base_kind():\n    return Base.kind\n"
READ_LIMIT = "def read_limit(path):\n    with open(path) as f:\n        return f.read().strip()\n"


def _module_test(header: str, reference: str, check: str) -> str:
    """An official `_passk_validte.py`: the module as the platform had it, then its check."""
    return (f"import sys\nsys.path.append(\"..\")\n{header}\n\n{reference}\n\n"
            f"if __name__ == \"__main__\":\n    if not ({check}):\n"
            "        raise Exception(\"Result not True!!!\")\n")


TASKS = {
    # func.py's test imports lru as a top-level module: lru.py's relative import fails there.
    "6500000000000000000000c1": ("cachekit/func.py", "lru_kind", LRU_KIND,
                                 _module_test("from lru import LRU", LRU_KIND,
                                              "lru_kind() == 'lru'")),
    # names.py's test imports cachekit by name: only an installed package gives it.
    "6500000000000000000000c2": ("cachekit/names.py", "base_kind", BASE_KIND,
                                 _module_test("from cachekit.base import Base", BASE_KIND,
                                              "base_kind() == 'base'")),
    # limits.py's test reads a fixture where the platform's tree had a copy of it.
    "6500000000000000000000c3": ("cachekit/limits.py", "read_limit", READ_LIMIT,
                                 _module_test("", READ_LIMIT,
                                              f"read_limit('{ROOT}/cachekit/limit.txt') == '42'")),
}

REPAIRS = '''requirements = ["-e ."]

[[projects."acme/cachekit".edits]]
file = "cachekit/lru.py"
old = "from .base import Base"
new = "from base import Base"
why = "the platform's copy imported base as a top-level module"

[[projects."acme/cachekit".edits]]
file = "cachekit/limit.txt"
copy = "tests/fixtures/limit.txt"
why = "the platform's tree had the fixture where the test reads it"
'''


def _world(root: Path, *, repaired: bool) -> tuple[Path, Path, Path, Path]:
    """(records, test map, manifest, checkouts)."""
    repo = root / "checkouts" / SLUG
    for rel, text in SOURCES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pinned")
    records = [{"_id": tid, "name": name, "project": PROJECT, "file_path": path,
                "code": code, "level": "project_runnable", "docstring": "", "lineno": "1",
                "end_lineno": "2"} for tid, (path, name, code, _test) in TASKS.items()]
    (root / "records.json").write_text(json.dumps({"RECORDS": records}))
    (root / "testmap.json").write_text(json.dumps({tid: t[3] for tid, t in TASKS.items()}))
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    (root / "projects.toml").write_text(
        f'[projects."{PROJECT}"]\nsource = "https://example.invalid/acme/cachekit.git"\n'
        f'commit = "{_git(repo, "rev-parse", "HEAD")}"\npython = "{python}"\n'
        + (REPAIRS if repaired else ""))
    return root / "records.json", root / "testmap.json", root / "projects.toml", root / "checkouts"


@pytest.fixture(autouse=True)
def _isolated_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CODEREVAL_UV_CACHE", str(default_root() / "uv-cache"))
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize("repaired", [True, False], ids=["repaired", "as-in-git"])
def test_the_manifests_repairs_make_the_platforms_tests_run(
    tmp_path: Path, run_cli, repaired: bool  # type: ignore[no-untyped-def]
) -> None:
    reason = sandbox_class("bwrap").unavailable_reason()
    if reason:
        pytest.skip(f"--compat needs bubblewrap: {reason}")
    records, test_map, manifest, checkouts = _world(tmp_path / "world", repaired=repaired)
    bench = tmp_path / "bench"
    prepared = run_cli("prepare", "codereval-python", "--records", records, "--test-map",
                       test_map, "--manifest", manifest, "--checkouts", checkouts, "--out", bench)
    assert prepared.exit_code == 0, prepared
    # The placed project carries the edits; the checkout never does.
    lru = (bench / "repos" / SLUG / "cachekit" / "lru.py").read_text()
    assert ("from base import Base" in lru) is repaired
    assert "from .base import Base" in (checkouts / SLUG / "cachekit" / "lru.py").read_text()
    run = tmp_path / "gold"
    result = run_cli("evaluate", "--prepared", bench, "--reference", "--repeat", "1", "--compat",
                     "--jobs", "2", "--timeout", "60", "--out", run)
    assert result.exit_code == 0, result
    gold = {row["task_id"]: (row["status"], row["detail"])
            for row in map(json.loads, (run / "gold.jsonl").read_text().splitlines())}
    if repaired:
        assert {status for status, _ in gold.values()} == {"ok"}, gold
    else:
        assert {status for status, _ in gold.values()} == {"broken"}, gold
        assert "attempted relative import" in gold["6500000000000000000000c1"][1]
        assert "No module named 'cachekit'" in gold["6500000000000000000000c2"][1]
        assert "limit.txt" in gold["6500000000000000000000c3"][1]
