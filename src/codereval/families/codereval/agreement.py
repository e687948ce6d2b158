"""Agreement with the official platform: our verdicts next to an official result file's.

The official CoderEval result files record, for every released sample, whether the original
platform passed it (``is_pass``). A run of ours made from the same file (``codereval evaluate
--samples <official file>``) gives our verdict for each of those samples. ``compare`` pairs them
by (task, sample index) — checking that the code is the same — and counts the 2x2 table. Each
disagreement gets a cause: for a sample we fail and the original passed, the first cause of
``agreement.toml`` whose evidence is in our outcome; a task gold validation calls flaky; a run
the original could not start (its ``return_code`` 2: ``python`` could not open the test file);
else it is unexplained, which is ours to explain.

Tasks gold validation calls broken (their reference fails with us) are left out of the
agreement and counted apart: their verdicts say nothing about the samples.
"""

from __future__ import annotations

import re
import tempfile
import tomllib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from codereval.analysis.java import computes_nothing
from codereval.errors import UserError
from codereval.families.codereval.official import OfficialResults, load_official_results
from codereval.model import Language, Outcome, Sample, Stage, Verdict, compiled_untested
from codereval.storage.jsonl import iter_jsonl
from codereval.storage.store import Run, load_run

CAUSES_FILE = "codereval_python/agreement.toml"
# The official Python result files' return_code when `python <test file>` could not even start.
OFFICIAL_NOT_STARTED = 2


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True, kw_only=True)
class CauseRule:
    name: str
    label: str
    explains: str
    patterns: tuple[str, ...]
    verdicts: tuple[str, ...] = ()

    def matches(self, outcome: Outcome) -> str | None:
        """The evidence (a short excerpt) when this cause explains the outcome, else None."""
        if outcome.verdict.value in self.verdicts:
            return f"our verdict {outcome.verdict.value}"
        for text in (outcome.detail, outcome.stderr_tail, outcome.stdout_tail):
            for pattern in self.patterns:
                at = text.find(pattern)
                if at >= 0:
                    return _excerpt(text, at)
        return None


# Causes that need no evidence from our outcome.
NONDETERMINISTIC = CauseRule(
    name="nondeterministic-sample", label="nondeterministic sample",
    explains="re-run, the same sample sometimes gets the official verdict", patterns=())
FLAKY = CauseRule(name="flaky", label="flaky task",
                  explains="gold validation saw the task's reference change verdict", patterns=())
OFFICIAL_ERROR = CauseRule(
    name="official-not-run", label="official run did not start",
    explains="the original's return code 2: python could not open the test file", patterns=())
UNEXPLAINED = CauseRule(name="unexplained", label="unexplained (ours)",
                        explains="no known cause; ours to explain", patterns=())


def _cause_entries(shipped: str, path: Path | None) -> list[dict[str, Any]]:
    """The ``[[cause]]`` tables of a causes file: ``path``, else the one shipped as ``shipped``."""
    if path is None:
        text = resources.files("codereval.data").joinpath(shipped).read_text("utf-8")
    else:
        text = path.read_text(encoding="utf-8")
    entries: list[dict[str, Any]] = tomllib.loads(text).get("cause", [])
    return entries


def load_causes(path: Path | None = None) -> list[CauseRule]:
    """The causes of ``agreement.toml`` (the one shipped with codereval unless ``path``)."""
    rules = []
    for entry in _cause_entries(CAUSES_FILE, path):
        rules.append(
            CauseRule(
                name=str(entry["name"]),
                label=str(entry.get("label", entry["name"])),
                explains=str(entry.get("explains", "")),
                patterns=tuple(str(p) for p in entry.get("patterns", [])),
                verdicts=tuple(str(v) for v in entry.get("verdicts", [])),
            )
        )
    return rules


def _excerpt(text: str, at: int, width: int = 100) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    line = text[line_start : line_end if line_end >= 0 else len(text)].strip()
    return line if len(line) <= width else line[: width - 1] + "…"


class Disagreement(Model):
    task_id: str
    sample_index: int
    ours: Verdict
    official_pass: bool
    official_return_code: int | None
    cause: str
    evidence: str = ""


class Agreement(Model):
    """One model: our run against its official result file."""

    label: str
    run: str
    official: str
    # Samples in both, compared; the 2x2 table over them.
    compared: int
    both_pass: int
    both_fail: int
    ours_only: int  # we pass, the original failed
    official_only: int  # the original passed, we fail
    agreement: float  # percent of compared
    # Samples of the official file the run does not hold, and ours it could not judge.
    not_in_run: int
    infra_errors: int
    # Samples of tasks gold validation calls broken, left out (and those tasks), and the
    # agreement over compared and left-out samples together.
    excluded: int
    excluded_tasks: list[str]
    agreement_with_broken: float
    causes: dict[str, int]
    disagreements: list[Disagreement]


def compare(
    run: Run,
    official: OfficialResults,
    *,
    label: str,
    gold: dict[str, str] | None = None,
    causes: Sequence[CauseRule] | None = None,
    rechecks: Mapping[tuple[str, int], Sequence[Verdict]] | None = None,
) -> Agreement:
    """Pair a run's outcomes with an official file's verdicts and classify the differences.

    ``gold`` maps task ids to gold statuses (ok, broken, flaky, weak). Raises UserError when
    the run's samples are not the official file's (different code for the same sample).
    ``rechecks`` holds, for some samples, the verdicts of re-running them (see ``recheck``).
    """
    rules = list(causes) if causes is not None else load_causes()
    gold = gold or {}
    official_code = {(s.task_id, s.index): s.code_hash() for s in official.samples}
    official_pass = {(o.task_id, o.sample_index): o.passed for o in official.outcomes}
    return_codes = {(o.task_id, o.sample_index): o.exit_code for o in official.outcomes}
    ours_code = {(s.task_id, s.index): s.code_hash() for s in run.samples}
    foreign = [key for key, digest in ours_code.items()
               if key in official_code and official_code[key] != digest]
    if foreign:
        task_id, index = foreign[0]
        raise UserError(
            f"{run.path}: sample {index} of task {task_id} is not the one in {official.path} "
            f"({len(foreign)} sample(s) differ)",
            hint="compare a run made with --samples from that official file",
        )
    outcomes = {(o.task_id, o.sample_index): o for o in run.outcomes}
    counts: Counter[str] = Counter()
    disagreements: list[Disagreement] = []
    excluded_tasks: set[str] = set()
    for key, passed_there in sorted(official_pass.items()):
        outcome = outcomes.get(key)
        if outcome is None:
            counts["not_in_run"] += 1
            continue
        if outcome.verdict is Verdict.INFRA_ERROR:
            counts["infra"] += 1
            continue
        if gold.get(key[0]) == "broken":
            counts["excluded"] += 1
            counts["excluded_agree"] += outcome.passed == passed_there
            excluded_tasks.add(key[0])
            continue
        counts["compared"] += 1
        if outcome.passed == passed_there:
            counts["both_pass" if passed_there else "both_fail"] += 1
            continue
        counts["official_only" if passed_there else "ours_only"] += 1
        rule, evidence = _cause(outcome, passed_there, return_codes.get(key),
                                gold.get(key[0]), rules, (rechecks or {}).get(key, ()))
        disagreements.append(
            Disagreement(
                task_id=key[0],
                sample_index=key[1],
                ours=outcome.verdict,
                official_pass=passed_there,
                official_return_code=return_codes.get(key),
                cause=rule.label,
                evidence=evidence,
            )
        )
    compared = counts["compared"]
    agree = counts["both_pass"] + counts["both_fail"]
    return Agreement(
        label=label,
        run=str(run.path),
        official=str(official.path),
        compared=compared,
        both_pass=counts["both_pass"],
        both_fail=counts["both_fail"],
        ours_only=counts["ours_only"],
        official_only=counts["official_only"],
        agreement=_percent(agree, compared),
        not_in_run=counts["not_in_run"],
        infra_errors=counts["infra"],
        excluded=counts["excluded"],
        excluded_tasks=sorted(excluded_tasks),
        agreement_with_broken=_percent(agree + counts["excluded_agree"],
                                       compared + counts["excluded"]),
        causes=dict(Counter(d.cause for d in disagreements).most_common()),
        disagreements=disagreements,
    )


def _percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def _cause(
    outcome: Outcome,
    passed_there: bool,
    return_code: int | None,
    gold_status: str | None,
    rules: Sequence[CauseRule],
    reruns: Sequence[Verdict] = (),
) -> tuple[CauseRule, str]:
    agreeing = sum((v is Verdict.PASSED) == passed_there for v in reruns)
    if agreeing:
        return NONDETERMINISTIC, f"{agreeing} of {len(reruns)} re-runs got the official verdict"
    if passed_there:
        for rule in rules:
            evidence = rule.matches(outcome)
            if evidence is not None:
                return rule, evidence
    elif return_code == OFFICIAL_NOT_STARTED:
        return OFFICIAL_ERROR, f"official return_code {return_code}"
    if gold_status == "flaky":
        return FLAKY, "gold: flaky"
    evidence = _excerpt(outcome.detail, 0) if outcome.detail else ""
    return UNEXPLAINED, evidence


def load_gold(path: Path) -> dict[str, str]:
    """Task id -> gold status from a gold.jsonl written by `evaluate --reference`."""
    statuses: dict[str, str] = {}
    for lineno, row in iter_jsonl(path):
        if "task_id" not in row or "status" not in row:
            raise UserError(f"{path}:{lineno}: gold line needs task_id and status",
                            hint="pass the gold.jsonl that `codereval evaluate --reference` wrote")
        statuses[str(row["task_id"])] = str(row["status"])
    return statuses


def recheck(
    run: Run, keys: Sequence[tuple[str, int]], *, times: int, jobs: int = 1
) -> dict[tuple[str, int], list[Verdict]]:
    """Re-run these samples of ``run`` ``times`` times each, with the run's own options.

    A sample whose verdict changes between runs (it calls random, reads the clock, races) is
    nondeterministic: one run of it, here or on the original platform, proves little. The
    re-runs go to a scratch run directory that is removed afterwards; ``run`` is not touched.
    """
    from codereval.evaluation.engine import Benchmark, EvalOptions, evaluate

    identity = run.meta.get("identity") or {}
    if not keys or times < 1:
        return {}
    if identity.get("mode", "samples") != "samples":
        raise UserError(f"{run.path} is a gold-validation run", hint="recheck a run of samples")
    by_key = {(s.task_id, s.index): s for s in run.samples}
    copies: list[Sample] = []
    origin: dict[tuple[str, int], tuple[str, int]] = {}
    for n, key in enumerate(keys):
        sample = by_key[key]
        for r in range(times):
            # Distinct indices: the engine keys samples by (task, index, code).
            copy = sample.model_copy(update={"index": n * times + r})
            copies.append(copy)
            origin[(copy.task_id, copy.index)] = key
    used = {s.task_id for s in copies}
    tasks = [t for t in run.tasks if t.task_id in used]
    options = EvalOptions(
        jobs=jobs,
        timeout=float(identity.get("timeout", 10.0)),
        memory_mb=identity.get("memory_mb", 2048),
        sandbox=str(identity.get("sandbox", "auto")),
        compat=bool(identity.get("compat", False)),
        tests_dir=Path(identity["tests_dir"]) if identity.get("tests_dir") else None,
        projects=Path(identity["projects"]) if identity.get("projects") else None,
        progress=False,
        official_name="",
    )
    benchmark = Benchmark(name=str(identity.get("benchmark", "recheck")), tasks=tasks)
    with tempfile.TemporaryDirectory(prefix="codereval-recheck-") as scratch:
        report = evaluate(benchmark=benchmark, samples=copies, run_dir=Path(scratch) / "run",
                          options=options)
    verdicts: dict[tuple[str, int], list[Verdict]] = {}
    for outcome in report.outcomes:
        verdicts.setdefault(origin[(outcome.task_id, outcome.sample_index)], []).append(
            outcome.verdict)
    return verdicts


def compare_paths(
    run_dir: Path,
    official_path: Path,
    *,
    label: str | None = None,
    gold_path: Path | None = None,
    recheck_times: int = 0,
    jobs: int = 1,
) -> Agreement:
    """``compare`` from paths: a run directory and an official ``*_out.jsonl``.

    With ``recheck_times``, every disagreement is re-run that many times first.
    """
    run = load_run(run_dir)
    if not official_path.is_file():
        raise UserError(f"official result file not found: {official_path}",
                        hint="pass an official Raw_Input.jsonl_out.jsonl")
    official = load_official_results(official_path)
    if not run.outcomes:
        raise UserError(f"{run_dir} holds no outcomes yet",
                        hint="run `codereval evaluate --samples OFFICIAL --out RUN` first")
    gold = load_gold(gold_path) if gold_path is not None else None
    if label is None:
        parent = official_path.parent.name
        label = parent if official_path.name.startswith("Raw_Input") and parent else run_dir.name
    first = compare(run, official, label=label, gold=gold)
    if not recheck_times or not first.disagreements:
        return first
    keys = [(d.task_id, d.sample_index) for d in first.disagreements]
    rechecks = recheck(run, keys, times=recheck_times, jobs=jobs)
    return compare(run, official, label=label, gold=gold, rechecks=rechecks)


# ----------------------------------------------------------------------------- Java: compiling

JAVA_CAUSES_FILE = "codereval_java/agreement.toml"
COMPILED = "compiled"
NOT_COMPILED = "compile_error"
# Which side said "compile error" in a disagreement.
OURS_ERROR = "ours"  # we could not compile it, the original did
OFFICIAL_ERROR_SIDE = "official"  # the original could not, we did
NEVER_COMPILED = "never-compiled"


@dataclass(frozen=True, kw_only=True)
class CompileCauseRule:
    """A cause of a compile-verdict disagreement, matched on one side's evidence.

    ``patterns`` are substrings of our outcome (detail, stderr); ``code`` are regular
    expressions searched in the sample's code; ``side`` says which disagreements the rule
    explains (``ours``: we say compile error, ``official``: the original did, ``any``).
    ``official_verdicts`` (verdicts of the official row, e.g. ``failed``: no error message) and
    ``official_task`` (``never-compiled``: every official sample of the task, in every result
    file compared, is a compile error) match on what the official rows say instead.
    """

    name: str
    label: str
    explains: str
    side: str
    patterns: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    official_verdicts: tuple[str, ...] = ()
    official_task: str = ""

    def matches(self, outcome: Outcome, code: str, side: str, *,
                official: Outcome | None = None, task_never_compiled: bool = False) -> str | None:
        if self.side not in ("any", side):
            return None
        if self.official_verdicts:
            if official is not None and official.verdict.value in self.official_verdicts:
                message = official.detail or "no error message"
                return f"official: {official.verdict.value} ({message})"
            return None
        if self.official_task:
            if task_never_compiled:
                return "official: every sample of this task is a compile error, in every file"
            return None
        for text in (outcome.detail, outcome.stderr_tail):
            for pattern in self.patterns:
                at = text.find(pattern)
                if at >= 0:
                    return _excerpt(text, at)
        for expression in self.code:
            found = re.search(expression, code, re.M)
            if found is not None:
                return f"code: {_excerpt(code, found.start())}"
        return None


COMPILE_UNEXPLAINED = CompileCauseRule(
    name="ours", label="ours (unexplained)", explains="no known cause; ours to explain",
    side="any")


def load_compile_causes(path: Path | None = None) -> list[CompileCauseRule]:
    """The causes of the Java ``agreement.toml`` (the shipped one unless ``path``)."""
    rules = []
    for entry in _cause_entries(JAVA_CAUSES_FILE, path):
        side = str(entry.get("side", "any"))
        if side not in ("any", OURS_ERROR, OFFICIAL_ERROR_SIDE):
            raise UserError(f"{JAVA_CAUSES_FILE}: cause {entry.get('name')!r}: side {side!r}",
                            hint="one of any, ours, official")
        for expression in entry.get("code", []):
            try:
                re.compile(str(expression))
            except re.error as exc:
                raise UserError(f"cause {entry.get('name')!r}: bad code pattern ({exc})") \
                    from None
        verdicts = tuple(str(v) for v in entry.get("official_verdicts", []))
        unknown = [v for v in verdicts if v not in {x.value for x in Verdict}]
        if unknown:
            raise UserError(f"{JAVA_CAUSES_FILE}: cause {entry.get('name')!r}: unknown "
                            f"official verdict {unknown[0]!r}",
                            hint="use verdict names such as failed, compile_error")
        task_rule = str(entry.get("official_task", ""))
        if task_rule not in ("", NEVER_COMPILED):
            raise UserError(f"{JAVA_CAUSES_FILE}: cause {entry.get('name')!r}: official_task "
                            f"{task_rule!r}", hint=f"the only one is {NEVER_COMPILED!r}")
        rules.append(CompileCauseRule(
            name=str(entry["name"]), label=str(entry.get("label", entry["name"])),
            explains=str(entry.get("explains", "")), side=side,
            patterns=tuple(str(p) for p in entry.get("patterns", [])),
            code=tuple(str(c) for c in entry.get("code", [])),
            official_verdicts=verdicts, official_task=task_rule,
        ))
    return rules


def compile_state(outcome: Outcome) -> str | None:
    """``compiled``, ``compile_error``, or None when our run says nothing about compiling
    (the environment or the injection failed, compiling timed out)."""
    if outcome.verdict in (Verdict.COMPILE_ERROR, Verdict.NO_CODE, Verdict.SYNTAX_ERROR):
        return NOT_COMPILED
    if outcome.stage in (Stage.RUN, Stage.CHECK, Stage.DONE):
        return COMPILED
    if compiled_untested(outcome):
        return COMPILED
    return None


class CompileDisagreement(Model):
    task_id: str
    sample_index: int
    ours: str  # compiled | compile_error
    official: str
    cause: str
    evidence: str = ""


class CompileAgreement(Model):
    """One model's Java run against its official result file, at the compile stage."""

    label: str
    run: str
    official: str
    compared: int
    both_compiled: int
    both_error: int
    ours_only: int  # we say compile error, the original compiled
    official_only: int  # the original said compile error, we compiled
    agreement: float
    # Samples of tasks whose reference does not compile in place (with --gold), not compared.
    excluded: int = 0
    excluded_tasks: list[str] = []
    agreement_with_broken: float = 0.0
    not_in_run: int
    not_compiled_by_us: int  # our outcome says nothing about compiling (environment, ...)
    not_compiled_reasons: dict[str, int]
    causes: dict[str, int]
    disagreements: list[CompileDisagreement]


def compare_compile(
    run: Run,
    official: OfficialResults,
    *,
    label: str,
    causes: Sequence[CompileCauseRule] | None = None,
    never_compiled: frozenset[str] | None = None,
    broken: frozenset[str] = frozenset(),
) -> CompileAgreement:
    """Pair a Java run's outcomes with an official file's ``errormessage == "compile error"``.

    ``never_compiled``: tasks with no official sample compiled in any result file compared
    (default: in this one; see ``official_never_compiled``). ``broken``: tasks whose reference
    does not compile in place (gold validation), left out of ``agreement`` and counted in
    ``agreement_with_broken``.
    """
    rules = list(causes) if causes is not None else load_compile_causes()
    _same_samples(run, official)
    if never_compiled is None:
        never_compiled = official_never_compiled([official])
    codes = {(s.task_id, s.index): s.code or "" for s in official.samples}
    excluded_tasks: set[str] = set()
    official_rows = {(o.task_id, o.sample_index): o for o in official.outcomes}
    theirs = {key: o.verdict is Verdict.COMPILE_ERROR for key, o in official_rows.items()}
    outcomes = {(o.task_id, o.sample_index): o for o in run.outcomes}
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    disagreements: list[CompileDisagreement] = []
    for key, error_there in sorted(theirs.items()):
        outcome = outcomes.get(key)
        if outcome is None:
            counts["not_in_run"] += 1
            continue
        state = compile_state(outcome)
        if state is None:
            counts["not_compiled"] += 1
            reasons[_reason(outcome)] += 1
            continue
        error_here = state == NOT_COMPILED
        if key[0] in broken:
            excluded_tasks.add(key[0])
            counts["excluded"] += 1
            counts["excluded_agree"] += error_here == error_there
            continue
        counts["compared"] += 1
        if error_here == error_there:
            counts["both_error" if error_here else "both_compiled"] += 1
            continue
        side = OURS_ERROR if error_here else OFFICIAL_ERROR_SIDE
        counts["ours_only" if error_here else "official_only"] += 1
        rule, evidence = COMPILE_UNEXPLAINED, _excerpt(outcome.detail, 0)
        for candidate in rules:
            found = candidate.matches(outcome, codes.get(key, ""), side,
                                      official=official_rows[key],
                                      task_never_compiled=key[0] in never_compiled)
            if found is not None:
                rule, evidence = candidate, found
                break
        disagreements.append(CompileDisagreement(
            task_id=key[0], sample_index=key[1], ours=state,
            official=NOT_COMPILED if error_there else COMPILED, cause=rule.label,
            evidence=evidence))
    compared = counts["compared"]
    return CompileAgreement(
        label=label, run=str(run.path), official=str(official.path), compared=compared,
        both_compiled=counts["both_compiled"], both_error=counts["both_error"],
        ours_only=counts["ours_only"], official_only=counts["official_only"],
        agreement=_percent(counts["both_compiled"] + counts["both_error"], compared),
        excluded=counts["excluded"],
        excluded_tasks=sorted(excluded_tasks),
        agreement_with_broken=_percent(
            counts["both_compiled"] + counts["both_error"] + counts["excluded_agree"],
            compared + counts["excluded"]),
        not_in_run=counts["not_in_run"], not_compiled_by_us=counts["not_compiled"],
        not_compiled_reasons=dict(reasons.most_common()),
        causes=dict(Counter(d.cause for d in disagreements).most_common()),
        disagreements=disagreements,
    )


def official_never_compiled(files: Sequence[OfficialResults]) -> frozenset[str]:
    """Tasks whose every official sample, in every file, is a compile error.

    With several models' files this is strong evidence that the platform could not compile the
    task at all (its file or classpath there differed), whatever the sample.
    """
    seen: dict[str, bool] = {}
    for results in files:
        for outcome in results.outcomes:
            seen[outcome.task_id] = seen.get(outcome.task_id, True) and \
                outcome.verdict is Verdict.COMPILE_ERROR
    return frozenset(task for task, always in seen.items() if always)


def _reason(outcome: Outcome) -> str:
    """A short, groupable reason why an outcome says nothing about compiling."""
    first = outcome.detail.strip().splitlines()[0] if outcome.detail.strip() else ""
    first = re.sub(r"\(log: [^)]*\)", "", first)
    return f"{outcome.verdict.value} at {outcome.stage.value}: {first[:90]}".rstrip(": ")


def _same_samples(run: Run, official: OfficialResults) -> None:
    official_code = {(s.task_id, s.index): s.code_hash() for s in official.samples}
    foreign = [key for key, digest in ((k, s.code_hash()) for k, s in
                                       (((s.task_id, s.index), s) for s in run.samples))
               if key in official_code and official_code[key] != digest]
    if foreign:
        task_id, index = foreign[0]
        raise UserError(
            f"{run.path}: sample {index} of task {task_id} is not the one in {official.path} "
            f"({len(foreign)} sample(s) differ)",
            hint="compare a run made with --samples from that official file",
        )


def compare_compile_paths(
    pairs: Sequence[tuple[Path, Path]], *, gold_path: Path | None = None,
    labels: Sequence[str] | None = None,
) -> list[CompileAgreement]:
    """``compare_compile`` for each (Java run directory, official ``*_out.jsonl``) pair.

    The tasks the official platform never compiled are judged over all the files given (one
    model's ten compile errors may be a hard task; every model's thirty are not).
    """
    loaded: list[tuple[Run, OfficialResults, str]] = []
    for index, (run_dir, official_path) in enumerate(pairs):
        run = load_run(run_dir)
        if not official_path.is_file():
            raise UserError(f"official result file not found: {official_path}",
                            hint="pass an official Raw_Input.jsonl_out.jsonl")
        official = load_official_results(official_path)
        if official.language is not Language.JAVA:
            raise UserError(f"{official_path} is not a Java result file",
                            hint="compile agreement is for CoderEval-Java runs")
        if not run.outcomes:
            raise UserError(f"{run_dir} holds no outcomes yet",
                            hint="run `codereval evaluate --samples OFFICIAL --out RUN` first")
        if labels is not None:
            label = labels[index]
        else:
            parent = official_path.parent.name
            label = parent if official_path.name.startswith("Raw_Input") and parent \
                else run_dir.name
        loaded.append((run, official, label))
    never = official_never_compiled([official for _, official, _ in loaded])
    broken = frozenset(task for task, status in load_gold(gold_path).items()
                       if status == "broken") if gold_path is not None else frozenset()
    return [compare_compile(run, official, label=label, never_compiled=never, broken=broken)
            for run, official, label in loaded]


# ----------------------------------------------------------------------------- Java: passing

# The causes of a pass disagreement on a task with a recorded test (`build java-tests`).
JAVA_PASS_CAUSES = {
    "stronger": "recorded test stronger: ours failed what the official test passed",
    "hollow": "official test weaker: it passed a body that computes nothing (empty, idle "
              "loops, or one literal returned), ours failed it",
    "weaker": "recorded test weaker: ours passed what the official test failed",
    "compile_ours": "compile stage: ours did not compile it, the original ran it",
    "compile_official": "compile stage: the original did not compile it, ours ran it",
    "runtime": "ours: runtime error, timeout or memory while the official test passed",
    "exec": "official: exec error (its test threw), ours passed",
    "never_ran": "official: the task's test never ran to the end (every sample of every model "
                 "a compile or exec error)",
}


class JavaPassDisagreement(Model):
    task_id: str
    sample_index: int
    ours: Verdict
    official_pass: bool
    cause: str
    evidence: str = ""


class JavaPassAgreement(Model):
    """One model's Java run against the official ``is_pass``, on the tasks that have a test
    here (recorded by `build java-tests`: a task whose samples ran a test)."""

    label: str
    run: str
    official: str
    tasks: int  # tasks with a test here
    compared: int
    both_pass: int
    both_fail: int
    ours_only: int  # we pass, the original failed
    official_only: int  # the original passed, we fail
    agreement: float
    # The same, left out the tasks whose official test never ran to its end (see
    # official_never_ran): there the official verdict says nothing of the sample.
    ran_tasks: int = 0
    ran_compared: int = 0
    ran_agreement: float = 0.0
    # The same, left out also the tasks whose official test is blind to the method (see
    # official_blind): there an official pass says nothing of the sample either.
    checked_tasks: int = 0
    checked_compared: int = 0
    checked_agreement: float = 0.0
    infra_errors: int
    causes: dict[str, int]
    disagreements: list[JavaPassDisagreement]


def tested_tasks(run: Run) -> set[str]:
    """Tasks whose samples ran a test in this run (reached the run stage)."""
    return {o.task_id for o in run.outcomes if o.stage in (Stage.RUN, Stage.CHECK, Stage.DONE)}


def official_never_ran(officials: Sequence[OfficialResults]) -> frozenset[str]:
    """Tasks whose every official sample, in every file given, is a compile or exec error: the
    platform's test never ran to its end for them (a correct sample threw too)."""
    verdicts: dict[str, set[Verdict]] = defaultdict(set)
    for official in officials:
        for outcome in official.outcomes:
            verdicts[outcome.task_id].add(outcome.verdict)
    stopped = {Verdict.COMPILE_ERROR, Verdict.RUNTIME_ERROR}
    return frozenset(t for t, seen in verdicts.items()
                     if seen <= stopped and Verdict.RUNTIME_ERROR in seen)


def official_blind(pairs: Sequence[tuple[Run, OfficialResults]]) -> frozenset[str]:
    """Tasks whose official test passed, in any run and official file given, a body that
    computes nothing (see computes_nothing: the sample's method as the run extracted it) while
    the reference computes something: that test does not look at what the method does, so its
    pass is no verdict on a sample."""
    blind: set[str] = set()
    for run, official in pairs:
        references = {t.task_id: (t.name, t.reference) for t in run.tasks}
        codes = {(s.task_id, s.index): s.code or "" for s in run.samples}
        for outcome in official.outcomes:
            task = references.get(outcome.task_id)
            if not outcome.passed or task is None or outcome.task_id in blind:
                continue
            name, reference = task
            code = codes.get((outcome.task_id, outcome.sample_index), "")
            if computes_nothing(code, name=name) and not computes_nothing(reference, name=name):
                blind.add(outcome.task_id)
    return frozenset(blind)


def compare_java_pass(run: Run, official: OfficialResults, *, label: str,
                      never_ran: frozenset[str] = frozenset(),
                      blind: frozenset[str] = frozenset()) -> JavaPassAgreement:
    """Ours ``passed`` against the official ``is_pass``, sample by sample, on the tasks with a
    test; each disagreement's cause from the two verdicts (see JAVA_PASS_CAUSES), judged over
    all the files compared for ``never_ran`` (see official_never_ran)."""
    _same_samples(run, official)
    tasks = tested_tasks(run)
    outcomes = {(o.task_id, o.sample_index): o for o in run.outcomes}
    codes = {(s.task_id, s.index): s.code or "" for s in run.samples}
    names = {t.task_id: t.name for t in run.tasks}
    counts: Counter[str] = Counter()
    disagreements: list[JavaPassDisagreement] = []
    for theirs in sorted(official.outcomes, key=lambda o: (o.task_id, o.sample_index)):
        key = (theirs.task_id, theirs.sample_index)
        outcome = outcomes.get(key)
        if key[0] not in tasks or outcome is None:
            continue
        if outcome.verdict is Verdict.INFRA_ERROR:
            counts["infra"] += 1
            continue
        counts["compared"] += 1
        passed_there = theirs.passed
        ran = key[0] not in never_ran
        checked = ran and key[0] not in blind
        counts["ran_compared"] += ran
        counts["checked_compared"] += checked
        if outcome.passed == passed_there:
            counts["both_pass" if passed_there else "both_fail"] += 1
            counts["ran_agree"] += ran
            counts["checked_agree"] += checked
            continue
        counts["official_only" if passed_there else "ours_only"] += 1
        if passed_there:
            cause = ("compile_ours" if outcome.verdict is Verdict.COMPILE_ERROR
                     else "runtime" if outcome.verdict is not Verdict.FAILED
                     else "hollow" if computes_nothing(codes.get(key, ""),
                                                       name=names.get(key[0], ""))
                     else "stronger")
        else:
            cause = ("compile_official" if theirs.verdict is Verdict.COMPILE_ERROR
                     else "never_ran" if key[0] in never_ran
                     else "exec" if theirs.verdict is Verdict.RUNTIME_ERROR else "weaker")
        evidence = (outcome.detail or outcome.stderr_tail or "").strip().splitlines()
        disagreements.append(JavaPassDisagreement(
            task_id=key[0], sample_index=key[1], ours=outcome.verdict,
            official_pass=passed_there, cause=JAVA_PASS_CAUSES[cause],
            evidence=evidence[0][:200] if evidence else ""))
    compared = counts["compared"]
    return JavaPassAgreement(
        label=label, run=str(run.path), official=str(official.path), tasks=len(tasks),
        compared=compared, both_pass=counts["both_pass"], both_fail=counts["both_fail"],
        ours_only=counts["ours_only"], official_only=counts["official_only"],
        agreement=_percent(counts["both_pass"] + counts["both_fail"], compared),
        ran_tasks=len(tasks - never_ran), ran_compared=counts["ran_compared"],
        ran_agreement=_percent(counts["ran_agree"], counts["ran_compared"]),
        checked_tasks=len(tasks - never_ran - blind), checked_compared=counts["checked_compared"],
        checked_agreement=_percent(counts["checked_agree"], counts["checked_compared"]),
        infra_errors=counts["infra"],
        causes=dict(Counter(d.cause for d in disagreements).most_common()),
        disagreements=disagreements)


def compare_java_pass_paths(pairs: Sequence[tuple[Path, Path]],
                            labels: Sequence[str]) -> list[JavaPassAgreement]:
    loaded = [(load_run(run_dir), load_official_results(official_path), label)
              for (run_dir, official_path), label in zip(pairs, labels, strict=True)]
    officials = [official for _, official, _ in loaded]
    never_ran = official_never_ran(officials)
    blind = official_blind([(run, official) for run, official, _ in loaded])
    return [compare_java_pass(run, official, label=label, never_ran=never_ran, blind=blind)
            for run, official, label in loaded]


def is_java_results(path: Path) -> bool:
    """Does this official result file hold Java rows (``code_level``)?"""
    for _lineno, row in iter_jsonl(path):
        return "code_level" in row
    return False
