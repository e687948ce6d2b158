"""The shared vocabulary: Task, Sample, Outcome, Verdict.

Every stage of codereval reads and writes these values, and each of them round-trips through
JSON Lines (``to_json`` / ``from_json``), so any stage can be run alone, resumed or replaced.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field


class Frozen(BaseModel):
    """Base of every value type: immutable, strict about unknown fields, JSON-friendly."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        return cls.model_validate_json(text)


class Language(StrEnum):
    PYTHON = "python"
    JAVA = "java"
    CPP = "cpp"
    JS = "js"
    GO = "go"
    RUST = "rust"


class Level(StrEnum):
    """CoderEval's runnable levels, from the narrowest scope a function needs to the widest."""

    SELF_CONTAINED = "self_contained"
    SLIB_RUNNABLE = "slib_runnable"
    PLIB_RUNNABLE = "plib_runnable"
    CLASS_RUNNABLE = "class_runnable"
    FILE_RUNNABLE = "file_runnable"
    PROJECT_RUNNABLE = "project_runnable"

    @property
    def standalone(self) -> bool:
        """The paper's split: standalone functions need nothing beyond built-ins and stdlib."""
        return self in (Level.SELF_CONTAINED, Level.SLIB_RUNNABLE)


LEVELS: tuple[Level, ...] = tuple(Level)


class Verdict(StrEnum):
    """Exactly one per outcome. ``infra_error`` is our fault, never silently the model's."""

    PASSED = "passed"
    FAILED = "failed"
    RUNTIME_ERROR = "runtime_error"
    COMPILE_ERROR = "compile_error"
    SYNTAX_ERROR = "syntax_error"
    TIMEOUT = "timeout"
    MEMORY_EXCEEDED = "memory_exceeded"
    NO_CODE = "no_code"
    INFRA_ERROR = "infra_error"


class Stage(StrEnum):
    """Where the evaluation of one sample stopped."""

    EXTRACT = "extract"
    ENVIRONMENT = "environment"
    WORKSPACE = "workspace"
    INJECT = "inject"
    COMPILE = "compile"
    RUN = "run"
    CHECK = "check"
    DONE = "done"
    # Outcomes imported from someone else's result file: the stage was never recorded.
    UNKNOWN = "unknown"


class OracleContext(Frozen):
    """The context tokens the reference solution uses (CoderEval's ``oracle_context``)."""

    apis: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    vars: tuple[str, ...] = ()

    def tokens(self) -> dict[str, tuple[str, ...]]:
        """Tokens by the paper's token types."""
        return {
            "APIInvocation": self.apis,
            "TypeReference": self.classes,
            "VarReference": self.vars,
        }

    @property
    def empty(self) -> bool:
        return not (self.apis or self.classes or self.vars)


class AllContext(Frozen):
    """What the target's file makes available (CoderEval's ``all_context``)."""

    imports: tuple[str, ...] = ()
    file: tuple[str, ...] = ()
    class_: tuple[str, ...] = Field(default=(), alias="class")
    # Java records add the class-level members separately.
    class_level: tuple[str, ...] = ()


class Location(Frozen):
    """Where the target function lives in its project. Line numbers are 1-based, inclusive."""

    project: str
    file_path: str = ""
    lineno: int = 0
    end_lineno: int = 0
    class_name: str = ""
    package: str = ""


class TestKind(StrEnum):
    __test__ = False  # not a pytest class

    # The official CoderEval tarball layout: a copy of the module with a __main__ check block.
    CODEREVAL_MODULE = "codereval_module"
    # The official layout's standalone tasks: repos/standalone/<path>-<name>.py.
    CODEREVAL_STANDALONE = "codereval_standalone"
    # A script run after injecting the sample into the project file (our own tasks).
    SCRIPT = "script"
    PYTEST = "pytest"
    # CoderEval Java: a <Class>_<method> class whose main prints booleans.
    JAVA_MAIN = "java_main"
    JUNIT4 = "junit4"
    JUNIT5 = "junit5"
    # HumanEval / HumanEval-X: prompt + completion + test program.
    PROGRAM = "program"


class TestSpec(Frozen):
    """How a task is tested. ``code`` holds inline test text; ``path`` a file in the project."""

    __test__ = False  # not a pytest class

    kind: TestKind
    path: str = ""
    code: str = ""
    name: str = ""
    lineno: int = 0
    entry_point: str = ""


class Task(Frozen):
    """One function to generate."""

    task_id: str
    benchmark: str
    language: Language
    name: str
    signature: str = ""
    docstring: str = ""
    human_label: str = ""
    reference: str = ""
    level: Level | None = None
    oracle_context: OracleContext | None = None
    all_context: AllContext | None = None
    location: Location | None = None
    file_content: str = ""
    test: TestSpec | None = None
    # A ready prompt when the benchmark ships one (HumanEval, HumanEval-X).
    prompt: str = ""
    # Benchmark-specific text that has no common slot (declaration, example_test, imports ...).
    extra: dict[str, str] = Field(default_factory=dict)

    @property
    def project(self) -> str:
        return self.location.project if self.location else ""

    def content_hash(self) -> str:
        """A stable hash of everything that defines the task (its identity for caches)."""
        return sha256_text(self.to_json())


class Sample(Frozen):
    """One generation for a task: the model's raw output and the code extracted from it."""

    task_id: str
    index: int = 0
    raw: str = ""
    # None means nothing usable could be extracted (verdict no_code).
    code: str | None = None
    truncated: bool = False
    model: str = ""
    prompt_variant: str = ""

    def code_hash(self) -> str:
        return sha256_text(self.code or "")


class Provenance(Frozen):
    """What makes a result reproducible: the same inputs give the same verdict."""

    benchmark_version: str = ""
    task_hash: str = ""
    code_hash: str = ""
    environment: str = ""
    harness_version: str = ""
    # How and where the sample ran: "fresh" (a new sandbox and process on this machine),
    # "warm" (forked from a sandboxed worker, codereval.sandbox.warm), "ray" (a fresh process on
    # a Ray cluster's node). Empty in outcomes recorded before executors existed, and imports.
    executor: str = ""


class Outcome(Frozen):
    """What running one sample gave."""

    task_id: str
    sample_index: int = 0
    verdict: Verdict
    stage: Stage = Stage.UNKNOWN
    exit_code: int | None = None
    signal: int | None = None
    wall_time: float | None = None
    cpu_time: float | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    # A one-paragraph reason: compiler diagnostics, the exception line, why infra failed.
    detail: str = ""
    # The isolation that was really used (e.g. "bwrap+cgroup", "rlimit", "none", "imported").
    isolation: str = ""
    provenance: Provenance = Provenance()

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces, for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
