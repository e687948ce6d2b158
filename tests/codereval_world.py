"""A small CoderEval-shaped world for the prepare/faithful-mode tests.

It has the real shapes of the official material, written by the tests themselves: records with
the 17 official keys, a test map ``{id: test file text}``, a project in a local git repository
whose pinned commit differs from its newest one, a module test that reads a file through the
original machine's ``/home/travis/builds/repos`` path, a standalone test that never calls its
test function, and a standalone test importing a third-party package.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PROJECT = "acme/ledger"
SLUG = "acme---ledger"
ADD_CENTS = "6400000000000000000000a1"  # module test, plain
READ_RATE = "6400000000000000000000a2"  # module test bound to /home/travis/...
DOUBLE = "6400000000000000000000b1"  # standalone, never calls its test
# standalone, imports six; plib_runnable like the real collection's tests of numpy, rdflib ...
IS_STRING = "6400000000000000000000b2"
NO_TEST = "6400000000000000000000a3"  # in the records, absent from the test map

MONEY_PINNED = '''"""Money helpers."""


def add_cents(a, b):
    """Add two amounts in cents."""
    return a + b


def read_rate(path):
    """The exchange rate written in the file at path."""
    with open(path) as handle:
        return handle.read().strip()


def unused():
    """Tested by nobody."""
    return 0
'''
# The project's newest commit changes the file: a prepared tree must hold the pinned one.
MONEY_LATER = MONEY_PINNED.replace("return a + b", "return int(a) + int(b)  # later")

ADD_CENTS_REF = 'def add_cents(a, b):\n    """Add two amounts in cents."""\n    return a + b\n'
READ_RATE_REF = (
    "def read_rate(path):\n    \"\"\"The exchange rate written in the file at path.\"\"\"\n"
    "    with open(path) as handle:\n        return handle.read().strip()\n"
)
DOUBLE_REF = "def double(x):\n    return x * 2\n"
IS_STRING_REF = "def is_string(value):\n    return isinstance(value, six.string_types)\n"


def _module_test(check: str) -> str:
    """A `_passk_validte.py` module: a copy of the project module plus a __main__ check."""
    return (
        "import sys\nsys.path.append(\"/home/travis/builds/repos/acme---ledger/\")\n"
        "import os\nsys.path.append(os.getcwd())\n" + MONEY_PINNED
        + '\n\nif __name__ == "__main__":\n    isT = True\n    try:\n'
        + "".join(f"        {line}\n" for line in check.splitlines())
        + "    except Exception:\n        isT = False\n"
        + '    if not isT:\n        raise Exception("Result not True!!!")\n'
    )


# A project module the add_cents test imports (a warm worker may preload it): the test
# changes its state, and fails if a sample before it did.
RATES = "RATES = {'eur': 1}\n"

TEST_MAP = {
    ADD_CENTS: _module_test(
        "from ledger import rates\n"
        "if add_cents(2, 3) != 5 or rates.RATES['eur'] != 1:\n    isT = False\n"
        "rates.RATES['eur'] = 2"),
    READ_RATE: _module_test(
        'if read_rate("/home/travis/builds/repos/acme---ledger/data/rate.txt") != "1.5":\n'
        "    isT = False"
    ),
    # The shape the issue describes: the file defines its test and never calls it.
    DOUBLE: DOUBLE_REF + "\n\ndef test_double():\n    assert double(2) == 4\n",
    IS_STRING: (
        "import six\n\n\n" + IS_STRING_REF + "\n\ndef test_is_string():\n"
        "    assert is_string('a') and not is_string(1)\n\n\n"
        'if __name__ == "__main__":\n    test_is_string()\n'
    ),
}


def record(task_id: str, *, name: str, file_path: str, level: str, code: str,
           file_content: str = "") -> dict[str, str]:
    """A record with the 17 official keys, every value a string."""
    return {
        "_id": task_id, "name": name, "project": PROJECT, "file_path": file_path,
        "package": "ledger", "docstring": "", "human_label": "", "code": code,
        "file_content": file_content, "lineno": "1", "end_lineno": "3", "level": level,
        "oracle_context": "{}", "all_context": "{}", "dependency": "{}", "test_name": "",
        "test_lineno": "",
    }


RECORDS = [
    record(ADD_CENTS, name="add_cents", file_path="ledger/money.py", level="self_contained",
           code=ADD_CENTS_REF, file_content=MONEY_PINNED),
    record(READ_RATE, name="read_rate", file_path="ledger/money.py", level="slib_runnable",
           code=READ_RATE_REF, file_content=MONEY_PINNED),
    record(NO_TEST, name="unused", file_path="ledger/money.py", level="file_runnable",
           code="def unused():\n    return 0\n"),
    record(DOUBLE, name="double", file_path="ledger/util.py", level="self_contained",
           code=DOUBLE_REF),
    record(IS_STRING, name="is_string", file_path="ledger/util.py", level="plib_runnable",
           code=IS_STRING_REF),
]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                                          "PATH": "/usr/bin:/bin"})
    return done.stdout.strip()


@dataclass(frozen=True)
class World:
    records: Path
    test_map: Path
    manifest: Path
    checkouts: Path
    pinned: str


def make_world(root: Path, *, standalone_requirements: tuple[str, ...] = ("six==1.16.0",)) \
        -> World:
    checkouts = root / "checkouts"
    repo = checkouts / SLUG
    (repo / "ledger").mkdir(parents=True)
    (repo / "data").mkdir()
    _git(repo, "init", "-q")
    (repo / "ledger" / "__init__.py").write_text("")
    (repo / "ledger" / "money.py").write_text(MONEY_PINNED)
    (repo / "ledger" / "rates.py").write_text(RATES)
    (repo / "data" / "rate.txt").write_text("1.5\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pinned")
    pinned = _git(repo, "rev-parse", "HEAD")
    (repo / "ledger" / "money.py").write_text(MONEY_LATER)
    _git(repo, "commit", "-q", "-am", "later")
    records = root / "CoderEval4Python.json"
    records.write_text(json.dumps({"RECORDS": RECORDS}))
    test_map = root / "record_testcases_map_python.json"
    test_map.write_text(json.dumps(TEST_MAP))
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    requirements = ", ".join(json.dumps(r) for r in standalone_requirements)
    manifest = root / "projects.toml"
    manifest.write_text(
        f'[projects."{PROJECT}"]\nsource = "https://example.invalid/acme/ledger.git"\n'
        f'commit = "{pinned}"\npython = "{python}"\nexclude_newer = "2022-08-01"\n'
        'install_env = { LEDGER_BUILD = "1" }\n\n'
        f'[projects.standalone]\nsource = "repos/standalone"\npython = "{python}"\n'
        f"requirements = [{requirements}]\n"
    )
    return World(records=records, test_map=test_map, manifest=manifest, checkouts=checkouts,
                 pinned=pinned)


def official_samples(path: Path, codes: dict[str, list[str]]) -> Path:
    """An official samples file: one line per task, {"_id", "generate_results": [code...]}."""
    path.write_text("".join(json.dumps({"_id": task_id, "generate_results": list(samples)})
                            + "\n" for task_id, samples in codes.items()))
    return path
