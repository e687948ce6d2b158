"""Where the official CoderEval Python layout keeps each task's test, and which kind it is.

Below ``repos/``: a project's tests are ``<project folder>/<record root>/<file_path without .py>
_<name>_passk_validte.py`` (a copy of the module ending in a ``__main__`` check block); standalone
tests are ``standalone/<file_path without .py, '/' -> '-'>-<name>.py``. What no rule derives
lives in ``data/codereval_python/layout.toml``.
"""

from __future__ import annotations

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

    Standalone tests exist only for the standalone levels; a test text that reaches into its
    project's folder on the original machine is a project module whatever the level says.
    """
    if task.level is None or not task.level.standalone or task.task_id in module_test_ids():
        return False
    return text is None or ORIGINAL_ROOT + project_folder(task.project) not in text


def standalone_folder() -> str:
    return STANDALONE
