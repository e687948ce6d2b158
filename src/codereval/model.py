"""The shared vocabulary: Task, Sample, Outcome, Verdict.

Every stage of codereval reads and writes these values, and each of them round-trips through
JSON Lines (``to_json`` / ``from_json``), so any stage can be run alone, resumed or replaced.
"""

from __future__ import annotations

import functools
import hashlib
import json
import typing
from enum import StrEnum
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

__version__ = "0.1.0"
# Bumped whenever a change to the harness could change a verdict; recorded with every outcome.
HARNESS_VERSION = "codereval-harness/2"


class Frozen(BaseModel):
    """Base of every value type: immutable, strict about unknown fields, JSON-friendly."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    # Fields added after values of this type were first written: left out of the JSON while
    # unset, so everything written before them (and the hashes taken of it: task fingerprints,
    # run identities) stays byte for byte the same.
    _omit_when_none: ClassVar[frozenset[str]] = frozenset()

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, exclude=self._unset_late_fields() or None)

    def _unset_late_fields(self) -> dict[str, Any]:
        """What ``to_json`` leaves out, at any depth: a value nested in another (a UjbSpec in a
        Task) keeps its own late fields out of its parent's JSON too."""
        exclude: dict[str, Any] = {
            name: True for name in self._omit_when_none if getattr(self, name) is None
        }
        for name in _nestable_fields(type(self)):
            value = getattr(self, name)
            if name not in exclude and isinstance(value, Frozen):
                inner = value._unset_late_fields()
                if inner:
                    exclude[name] = inner
        return exclude

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        return cls.model_validate_json(text)


@functools.cache
def _nestable_fields(cls: type[Frozen]) -> tuple[str, ...]:
    """The fields of ``cls`` that may hold a Frozen value: every outcome written looks at them
    (a Verdict, a str or a list never has late fields of its own)."""
    return tuple(
        name for name, info in cls.model_fields.items()
        if _may_hold_frozen(info.annotation)
    )


def _may_hold_frozen(annotation: Any) -> bool:
    if isinstance(annotation, type):
        return issubclass(annotation, Frozen)
    # Unions, Optional, Annotated: look inside; anything unknown counts as possible.
    args = typing.get_args(annotation)
    return not args or any(_may_hold_frozen(a) for a in args if a is not type(None))


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


class UjbKind(StrEnum):
    """CoderUJB's five task kinds (ISSTA 2024)."""

    FCG = "fcg"  # functional code generation: write a method, run the project's tests
    CTG = "ctg"  # code-based test generation: write a test for given code, scored by coverage
    ITG = "itg"  # issue-based test generation: a test that fails on the bug and passes fixed
    APR = "apr"  # automated program repair: fix the buggy method
    DD = "dd"  # defect detection: say whether the method is defective


class IssueReport(Frozen):
    """The issue an ITG test is written from."""

    title: str = ""
    body: str = ""
    url: str = ""


class UjbSpec(Frozen):
    """What a CoderUJB task needs beyond the common slots of ``Task``.

    A CoderUJB task lives in one bug of one project (Defects4J's ids: ``Lang`` / ``1``), which
    comes in two versions, buggy and fixed. Paths are relative to a version's checkout; line
    numbers are 1-based and inclusive, in the version the task edits (fixed for FCG, CTG and ITG,
    buggy for APR and DD). Test methods are written ``pkg.Class::method``, as Defects4J does.
    """

    kind: UjbKind
    project: str
    bug_id: str
    source_dir: str = ""
    test_dir: str = ""
    # The file and lines of the method the task is about (generated, tested or repaired).
    location: str = ""
    start: int = 0
    end: int = 0
    function_name: str = ""
    function_signature: str = ""
    indent: str = ""
    # FCG: the tests that exercise the method; APR: the tests the bug fails; ITG: the
    # developer's own test for the issue.
    test_methods: tuple[str, ...] = ()
    # CTG / ITG: the test class a generated test method joins (fully qualified) and its file.
    test_class: str = ""
    test_file: str = ""
    # CTG / ITG: whose coverage is measured (fully qualified class names).
    classes_under_test: tuple[str, ...] = ()
    issue: IssueReport | None = None
    buggy_function: str = ""
    fixed_function: str = ""
    # DD: the truth (True = the method is the defective one).
    defective: bool | None = None
    # ITG: where the test method sits in the buggy version's test file, when its lines differ
    # from the fixed version's (the published ITG rows give both).
    start_buggy: int | None = None
    end_buggy: int | None = None

    _omit_when_none = frozenset({"start_buggy", "end_buggy"})


class UjbMeasures(Frozen):
    """What a CoderUJB sample gave beyond its verdict. ``None`` means not measured."""

    syntax_ok: bool | None = None
    compiled: bool | None = None
    # The generated test (CTG / ITG) or the named tests (FCG / APR) on the fixed / buggy version.
    passed_fixed: bool | None = None
    failed_buggy: bool | None = None
    # Coverage of classes_under_test by the generated test when it passes (JaCoCo counters).
    lines_covered: int | None = None
    lines_total: int | None = None
    branches_covered: int | None = None
    branches_total: int | None = None
    # APR: the suite's failing tests before (buggy) and after (patched) the sample.
    tests_failed_before: tuple[str, ...] | None = None
    tests_failed_after: tuple[str, ...] | None = None
    # DD: the model's answer, parsed (True = defective); None when it gave no clear answer.
    prediction: bool | None = None

    @property
    def line_coverage(self) -> float | None:
        if self.lines_covered is None or not self.lines_total:
            return None
        return self.lines_covered / self.lines_total

    @property
    def branch_coverage(self) -> float | None:
        if self.branches_covered is None or not self.branches_total:
            return None
        return self.branches_covered / self.branches_total

    @property
    def triggers(self) -> bool | None:
        """ITG's success: the test fails on the buggy version and passes on the fixed one."""
        if self.passed_fixed is None or self.failed_buggy is None:
            return None
        return self.passed_fixed and self.failed_buggy


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
    # CoderUJB tasks only.
    ujb: UjbSpec | None = None

    _omit_when_none = frozenset({"ujb"})

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
    # a Ray cluster's node), "none" (it ended before any process ran: unparsable, not
    # injectable, no environment). Empty in outcomes recorded before executors existed, and
    # imports.
    executor: str = ""
    # How a Java test JVM started: "cds" (with the environment's class-data sharing archive,
    # codereval.java.cds) or "no cds: <why>". None where no JVM ran a test.
    jvm: str | None = None

    _omit_when_none = frozenset({"jvm"})


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
    # CoderUJB samples only: coverage, trigger, failing tests, the parsed answer.
    ujb: UjbMeasures | None = None

    _omit_when_none = frozenset({"ujb"})

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces, for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

# The detail of a sample that compiled but whose task has no test to run (stage compile, not
# judged): CoderEval-Java's tasks without a recorded test. Scoring, gold and compare leave such
# tasks out; the Java runner writes it.
NO_TEST = ("compiled; no official test available (no <Class>_<method> test in the project's "
           "test roots or --tests-dir)")


def compiled_untested(outcome: Outcome) -> bool:
    """Did this outcome compile and stop there because the task has no test (``NO_TEST``)?"""
    return (outcome.verdict is Verdict.INFRA_ERROR and outcome.stage is Stage.COMPILE
            and outcome.detail.startswith(NO_TEST))
