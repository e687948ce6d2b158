"""Built-in data shipped with codereval: the mini benchmarks.

Each mini benchmark folder holds ``records.json`` (CoderEval format), ``projects.toml`` (an
environments manifest whose sources are relative to it), ``samples.jsonl`` and ``projects/``.
The Python one also holds ``official/repos/...``, a test tree in the official tarball layout.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_root() -> Path:
    return Path(str(resources.files("codereval.data")))


def mini_python_root() -> Path:
    """The folder of the built-in Python mini benchmark."""
    return data_root() / "mini_python"


def mini_python_records() -> Path:
    return mini_python_root() / "records.json"


def mini_python_manifest() -> Path:
    return mini_python_root() / "projects.toml"


def mini_python_samples() -> Path:
    return mini_python_root() / "samples.jsonl"


def mini_python_tests_dir() -> Path:
    """The official-layout test tree (pass as --tests-dir) for the mini tasks that use it."""
    return mini_python_root() / "official"


def mini_java_root() -> Path:
    """The folder of the built-in Java mini benchmark."""
    return data_root() / "mini_java"
