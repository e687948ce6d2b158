"""ProgramRunner: HumanEval and HumanEval-X samples as whole programs, in the sandbox.

For each sample: write ``prefix + code + test`` (program_source.py) into a private directory,
compile it in the sandbox when the language needs it (Java by the team's warm compiler, which
never runs the code), run it in the sandbox, and classify. A pass needs exit status 0 *and* the
per-run completion marker printed after the test returned. The marker is in no file, argument
or variable the sample can read: the run gets it on stdin, after any build has ended, and the
program's prologue takes it before the sample's code runs (program_source.py says how, per
language, and what stays possible).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from codereval.errors import UserError
from codereval.model import Outcome, Provenance, Sample, Stage, Task, Verdict
from codereval.runners.base import RunContext, Runner, sample_workdir
from codereval.runners.marker import marker_seen, new_marker
from codereval.runners.program_source import (
    PYTHON_HELPER_MODULES,
    PYTHON_LAUNCHER,
    RUST_TEST_FILE,
    build_program,
    prologue_source,
)
from codereval.runners.program_toolchains import TOOLCHAINS, Toolchain
from codereval.sandbox.base import ExecResult

if TYPE_CHECKING:
    from codereval.java.compiler import JavaCompiler
    from codereval.sandbox.warm import Slot

TAIL = 2000
CACHE_DIR = "toolchains"
WARM_LANGUAGES = ("python", "java", "js")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _tail(text: str) -> str:
    return text[-TAIL:]


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def classify_failure(language: str, *, stdout: str, stderr: str, signal: int | None) -> Verdict:
    """Why a program that ran did not pass: a failed assertion, a crash, or bad syntax."""
    if language == "python":
        last = _last_line(stderr)
        if re.match(r"(SyntaxError|IndentationError|TabError)\b", last):
            return Verdict.SYNTAX_ERROR
        return Verdict.FAILED if last.startswith("AssertionError") else Verdict.RUNTIME_ERROR
    if language == "cpp":
        return Verdict.FAILED if "Assertion `" in stderr else Verdict.RUNTIME_ERROR
    if language == "java":
        return (
            Verdict.FAILED
            if re.search(r"Exception in thread \"main\" java\.lang\.AssertionError", stderr)
            else Verdict.RUNTIME_ERROR
        )
    if language == "js":
        if re.search(r"^SyntaxError\b", stderr, re.M) and "JSON.parse" not in stderr:
            return Verdict.SYNTAX_ERROR
        return Verdict.FAILED if "AssertionError" in stderr else Verdict.RUNTIME_ERROR
    if language == "go":
        output = stdout + stderr
        if re.search(r"^panic: ", output, re.M):
            return Verdict.RUNTIME_ERROR
        return Verdict.FAILED if "--- FAIL" in output else Verdict.RUNTIME_ERROR
    if language == "rust":
        # Only a panic raised in the test file is a failed check; one in the code is a crash.
        test_file = re.escape(RUST_TEST_FILE)
        return (Verdict.FAILED if re.search(rf"panicked at (?:\S*/)?{test_file}:\d+", stderr)
                else Verdict.RUNTIME_ERROR)
    return Verdict.RUNTIME_ERROR


_TELLING_LINE = re.compile(
    r"Error|Exception|panic:|panicked|Assertion|--- FAIL|terminate called|Segmentation", re.I)


def _failure_detail(language: str, verdict: Verdict, stdout: str, stderr: str) -> str:
    """The line that says what went wrong (the exception, the failed assert), then the tail."""
    text = (stderr.strip() or stdout.strip()) if language != "go" else (stdout + stderr).strip()
    if not text:
        return verdict.value
    lines = [line.strip() for line in text.splitlines() if _TELLING_LINE.search(line)]
    # Python names the exception last; the others name it first.
    telling = (lines[-1] if language == "python" else lines[0]) if lines else ""
    tail = text[-400:]
    return f"{verdict.value}: {telling[:300]}" + (f" | {tail}" if telling not in tail else "")


class ProgramRunner(Runner):
    """Thread-safe; one instance serves every language."""

    name = "program"

    def __init__(self, *, toolchains: Mapping[str, Toolchain] | None = None) -> None:
        # ``toolchains`` replaces the default of a language (a variant, in benchmarks and tests).
        self._toolchains: dict[str, Toolchain] = dict(toolchains or {})
        self._lock = threading.Lock()
        self._javac: JavaCompiler | None = None

    # -- preparation -------------------------------------------------------------------------

    def _toolchain(self, language: str, ctx: RunContext) -> Toolchain:
        with self._lock:
            toolchain = self._toolchains.get(language)
            if toolchain is None:
                cls = TOOLCHAINS.get(language)
                if cls is None:
                    raise UserError(
                        f"the program runner does not support {language}",
                        hint=f"supported: {', '.join(TOOLCHAINS)}",
                    )
                toolchain = self._toolchains[language] = cls()
        toolchain.ensure(ctx.env_root / CACHE_DIR)
        return toolchain

    def _java_compiler(self) -> JavaCompiler:
        with self._lock:
            if self._javac is None:
                from codereval.java.compiler import WarmJavac

                self._javac = WarmJavac(pool_size=2)
            return self._javac

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        blocked: dict[str, str] = {}
        for language in sorted({t.language.value for t in tasks}):
            try:
                self._toolchain(language, ctx)
            except UserError as exc:
                reason = exc.one_line()
                blocked.update({t.task_id: reason for t in tasks if t.language.value == language})
        return blocked

    def environment_fingerprint(self, task: Task, ctx: RunContext) -> str:
        return self._toolchain(task.language.value, ctx).fingerprint

    def close(self) -> None:
        with self._lock:
            javac, self._javac = self._javac, None
        if javac is not None:
            javac.close()

    # -- one sample --------------------------------------------------------------------------

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        base = Outcome(task_id=task.task_id, sample_index=sample.index, verdict=Verdict.NO_CODE,
                       stage=Stage.EXTRACT, isolation=ctx.sandbox.isolation)
        if sample.code is None or not sample.code.strip():
            return base.model_copy(update={"detail": "no code was extracted from the generation"})
        try:
            toolchain = self._toolchain(task.language.value, ctx)
        except UserError as exc:
            return base.model_copy(update={"verdict": Verdict.INFRA_ERROR,
                                           "stage": Stage.ENVIRONMENT, "detail": exc.one_line()})
        # Programs that run without a build step in the sandbox (Java compiles outside it)
        # start from a warm worker's fork instead of a sandbox of their own.
        with sample_workdir(ctx, prefix=f"{task.language.value}-", in_memory=True,
                            warm=task.language.value in WARM_LANGUAGES) as (workdir, slot):
            try:
                return self._run_in(workdir, toolchain, task, sample.code, ctx, base, slot)
            except Exception as exc:
                # Our fault, not the sample's: recorded, never counted as the model's failure.
                return base.model_copy(update={"verdict": Verdict.INFRA_ERROR,
                                               "stage": Stage.WORKSPACE,
                                               "detail": f"{type(exc).__name__}: {exc}"})

    def _run_in(self, workdir: Path, toolchain: Toolchain, task: Task, code: str,
                ctx: RunContext, base: Outcome, slot: Slot | None) -> Outcome:
        language = task.language.value
        marker = new_marker()
        program = build_program(task, code)
        for name, text in program.files.items():
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(text, encoding="utf-8")
        compile_time = 0.0
        compile_cpu: float | None = 0.0
        if language == "java":
            result = self._java_compiler().compile(
                program.files, classpath=[], out_dir=workdir / "classes", timeout=60.0)
            compile_time = result.wall_time
            if result.infra_error:
                return base.model_copy(update={"verdict": Verdict.INFRA_ERROR,
                                               "stage": Stage.COMPILE,
                                               "detail": result.infra_error})
            if result.timed_out or not result.ok:
                verdict = Verdict.TIMEOUT if result.timed_out else Verdict.COMPILE_ERROR
                return base.model_copy(update={
                    "verdict": verdict, "stage": Stage.COMPILE, "wall_time": compile_time,
                    "stderr_tail": _tail(result.diagnostics),
                    "detail": f"compile: {result.diagnostics.strip()[-600:]}"})
        request = replace(toolchain.run_request(workdir, program.main, ctx.limits),
                          stdin=(marker + "\n").encode())
        build = (toolchain.compile_request(workdir, program.main, ctx.limits)
                 if language != "java" else None)
        staged: ExecResult | None = None
        if build is not None:
            # One launch where the sandbox can (the build, then the run under its own limits).
            built, staged = ctx.sandbox.run_staged(build, request)
            compile_time = built.wall_time
            compile_cpu = built.cpu_time
            failed = self._compile_failure(built, base)
            if failed is not None:
                return failed
            if staged is None:
                raise RuntimeError("the sandbox skipped the run of a build that succeeded")
        if staged is not None:
            ran, executor = staged, "fresh"
        elif slot is not None:
            ran, executor = slot.run(
                request, stdlib=PYTHON_HELPER_MODULES if language == "python" else (),
                scripts=(prologue_source(PYTHON_LAUNCHER),) if language == "python" else ())
        else:
            ran, executor = ctx.sandbox.run(request), "fresh"
        base = base.model_copy(update={"provenance": Provenance(executor=executor)})
        return self._judge(ran, language=language, marker=marker, base=base,
                           compile_time=compile_time, compile_cpu=compile_cpu)

    @staticmethod
    def _compile_failure(built: ExecResult, base: Outcome) -> Outcome | None:
        stdout, stderr = _text(built.stdout), _text(built.stderr)
        common = {"stage": Stage.COMPILE, "wall_time": built.wall_time,
                  "cpu_time": built.cpu_time, "exit_code": built.exit_code,
                  "signal": built.signal, "stdout_tail": _tail(stdout),
                  "stderr_tail": _tail(stderr), "isolation": built.isolation or base.isolation}
        if built.sandbox_error:
            return base.model_copy(update={**common, "verdict": Verdict.INFRA_ERROR,
                                           "detail": f"sandbox: {built.sandbox_error}"})
        if built.limit_exceeded:
            return base.model_copy(update={**common, "verdict": Verdict.COMPILE_ERROR,
                                           "detail": f"compile: {built.limit_exceeded}"})
        if built.timed_out:
            return base.model_copy(update={**common, "verdict": Verdict.TIMEOUT,
                                           "detail": "compilation timed out"})
        if built.memory_exceeded:
            return base.model_copy(update={**common, "verdict": Verdict.MEMORY_EXCEEDED,
                                           "detail": "compilation ran out of memory"})
        if built.exit_code != 0:
            text = (stderr.strip() or stdout.strip())[-600:]
            return base.model_copy(update={**common, "verdict": Verdict.COMPILE_ERROR,
                                           "detail": f"compile: {text}"})
        return None

    @staticmethod
    def _judge(ran: ExecResult, *, language: str, marker: str, base: Outcome,
               compile_time: float, compile_cpu: float | None) -> Outcome:
        stdout, stderr = _text(ran.stdout), _text(ran.stderr)
        cpu = None if ran.cpu_time is None or compile_cpu is None else ran.cpu_time + compile_cpu
        common = {"stage": Stage.RUN, "wall_time": ran.wall_time + compile_time,
                  "cpu_time": cpu, "exit_code": ran.exit_code, "signal": ran.signal,
                  "stdout_tail": _tail(stdout), "stderr_tail": _tail(stderr),
                  "isolation": ran.isolation or base.isolation}
        if ran.sandbox_error:
            verdict, detail = Verdict.INFRA_ERROR, f"sandbox: {ran.sandbox_error}"
        elif ran.limit_exceeded:
            verdict, detail = Verdict.RUNTIME_ERROR, ran.limit_exceeded
        elif ran.timed_out:
            verdict, detail = Verdict.TIMEOUT, "the program did not finish in time"
        elif ran.memory_exceeded:
            verdict, detail = Verdict.MEMORY_EXCEEDED, "the program ran out of memory"
        elif ran.exit_code == 0 and marker_seen(ran.stdout, marker):
            return base.model_copy(update={**common, "verdict": Verdict.PASSED,
                                           "stage": Stage.DONE, "detail": ""})
        elif ran.exit_code == 0:
            # Ending the program early is abnormal termination, as in the project runners.
            verdict = Verdict.RUNTIME_ERROR
            detail = "exited with status 0 before the test finished (no completion marker)"
        else:
            verdict = classify_failure(language, stdout=stdout, stderr=stderr, signal=ran.signal)
            detail = _failure_detail(language, verdict, stdout, stderr)
        return base.model_copy(update={**common, "verdict": verdict, "stage": Stage.CHECK
                                       if verdict is Verdict.FAILED else Stage.RUN,
                                       "detail": detail})


__all__ = ["ProgramRunner", "classify_failure"]
