"""Where the official CoderEval Python layout keeps each task's test, and which kind it is.

Below ``repos/``: a project's tests are ``<project folder>/<record root>/<file_path without .py>
_<name>_passk_validte.py`` (a copy of the module ending in a ``__main__`` check block); standalone
tests are ``standalone/<file_path without .py, '/' -> '-'>-<name>.py``. What no rule derives
lives in ``data/codereval_python/layout.toml``.
"""

from __future__ import annotations

import ast
import functools
import posixpath
import tomllib
from importlib import resources

from codereval.model import Task
from codereval.runners.python import (
    STANDALONE,
    official_module_path,
    official_standalone_path,
    project_folder,
)
from codereval.source import pyast

ORIGINAL_ROOT = "/home/travis/builds/repos/"


@functools.cache
def module_test_ids() -> frozenset[str]:
    """Standalone-level tasks whose official test is a project module (layout.toml)."""
    text = resources.files("codereval.data").joinpath("codereval_python/layout.toml")
    data = tomllib.loads(text.read_text(encoding="utf-8"))
    return frozenset(str(item) for item in data.get("module_tests", ()))


def module_test_path(task: Task, *, record_root: str = "") -> str:
    """The test module's path below ``repos/``."""
    rel = official_module_path(task)
    return posixpath.join(project_folder(task.project), record_root, rel)


def standalone_test_path(task: Task) -> str:
    return official_standalone_path(task)


def is_standalone_test(task: Task, text: str | None = None) -> bool:
    """Is this task's official test a standalone file (run without its project)?

    With the test's text: a standalone test defines its own ``test_<name>()`` next to the
    function and never reaches into its project's folder on the original machine; a project
    test is a copy of the module ending in a ``__main__`` check. The level does not decide:
    the benchmark's standalone collection has ``plib_runnable`` tasks too (their tests import
    third-party packages, never the project). Without the text, only standalone levels can be.
    """
    if task.task_id in module_test_ids():
        return False
    if text is None:
        return task.level is not None and task.level.standalone
    if ORIGINAL_ROOT + project_folder(task.project) in text:
        return False
    return defines_function(text, f"test_{task.name}")


def defines_function(text: str, name: str) -> bool:
    """Does the module text define a top-level function ``name``? False if it does not parse."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
        for node in tree.body
    )


def standalone_folder() -> str:
    return STANDALONE
