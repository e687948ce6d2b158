"""The results store of a run directory, and what is exported from it.

``results.sqlite`` is the truth: outcomes are written as they arrive, one transaction per batch,
keyed by (task id, sample index, code hash) so a finished sample is never run again (promise 4).
``outcomes.jsonl`` and the official CoderEval ``<name>_out.jsonl`` are exports of it, rewritten
atomically; ``load_run`` reads a run directory back.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from codereval.errors import RunDirUnwritable, UserError
from codereval.model import Language, Outcome, Sample, Task, Verdict
from codereval.storage.jsonl import atomic_write_jsonl, atomic_write_text, iter_jsonl

RUN_JSON = "run.json"
TASKS_JSONL = "tasks.jsonl"
SAMPLES_JSONL = "samples.jsonl"
OUTCOMES_JSONL = "outcomes.jsonl"
STORE_FILE = "results.sqlite"
GOLD_JSONL = "gold.jsonl"

# (task id, sample index, code hash): what makes a sample "the same sample" across runs.
SampleKey = tuple[str, int, str]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outcomes (
    task_id TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    code_hash TEXT NOT NULL,
    verdict TEXT NOT NULL,
    outcome TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (task_id, sample_index, code_hash)
);
"""


# What the operating system or SQLite says when a run directory cannot take a write.
_UNWRITABLE_ERRNOS = {
    errno.ENOSPC: "no space left on its device",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "it is on a read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}
_UNWRITABLE_SQLITE = {
    "database or disk is full": "no space left on its device",
    "attempt to write a readonly database": "it is read-only",
    "unable to open database file": "the store cannot be opened for writing",
    "disk i/o error": "a disk I/O error",
}


def unwritable(exc: BaseException, run_dir: Path) -> RunDirUnwritable | None:
    """The one-line error for a write to ``run_dir`` that the machine refused, or None when
    ``exc`` is something else (a bug, a corrupt store), which must not be dressed up as this."""
    reason = None
    if isinstance(exc, OSError) and exc.errno in _UNWRITABLE_ERRNOS:
        reason = _UNWRITABLE_ERRNOS[exc.errno]
    elif isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        reason = next((why for known, why in _UNWRITABLE_SQLITE.items() if known in text), None)
    if reason is None:
        return None
    return RunDirUnwritable(
        f"cannot write the run directory {run_dir}: {reason}",
        hint="free space there or make it writable, then run the same command again: what "
        "was finished is kept and not run again",
    )


def sample_key(sample: Sample) -> SampleKey:
    return (sample.task_id, sample.index, sample.code_hash())


def outcome_key(outcome: Outcome) -> SampleKey:
    return (outcome.task_id, outcome.sample_index, outcome.provenance.code_hash)


class ResultStore:
    """The SQLite store of one run directory. Use from one thread (the engine's main thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Stored text -> its outcome (see outcomes()).
        self._parsed: dict[str, Outcome] = {}
        try:
            self._conn = sqlite3.connect(path, isolation_level=None)
            # WAL: a crash mid-write leaves the last committed batch intact, and readers
            # (`codereval score` on a live run) never block the writer.
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=10000")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            refused = unwritable(exc, path.parent)
            if refused is not None:
                raise refused from None
            raise UserError(
                f"{path}: not a usable results store ({exc})",
                hint="use a new --out directory or pass --rerun",
            ) from None

    @classmethod
    def open(cls, run_dir: Path) -> ResultStore:
        run_dir.mkdir(parents=True, exist_ok=True)
        return cls(run_dir / STORE_FILE)

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def record(self, outcomes: Sequence[Outcome]) -> None:
        """Write a batch in one transaction: all of it is stored, or none of it."""
        if not outcomes:
            return
        now = time.time()
        rows = []
        texts = []
        for outcome in outcomes:
            if not outcome.provenance.code_hash:
                raise ValueError(f"outcome for {outcome.task_id} has no code hash")
            texts.append(outcome.to_json())
            rows.append((*outcome_key(outcome), outcome.verdict.value, texts[-1], now))
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            # The same key again replaces the row: recording is idempotent.
            self._conn.executemany(
                "INSERT OR REPLACE INTO outcomes "
                "(task_id, sample_index, code_hash, verdict, outcome, recorded_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        # Outcomes are frozen: the object written stands for its text when it is read back.
        self._parsed.update(zip(texts, outcomes, strict=True))

    def finished_keys(self) -> set[SampleKey]:
        """Samples a resumed run skips. An infra_error is the harness's failure, not a result:
        it is tried again (and replaced) on the next run."""
        rows = self._conn.execute(
            "SELECT task_id, sample_index, code_hash FROM outcomes WHERE verdict != 'infra_error'"
        )
        return {(str(t), int(i), str(h)) for t, i, h in rows}

    def infra_errors(self) -> list[Outcome]:
        rows = self._conn.execute("SELECT outcome FROM outcomes WHERE verdict = 'infra_error'")
        return [Outcome.from_json(text) for (text,) in rows]

    def outcomes(self) -> list[Outcome]:
        """Every stored outcome, read from the store each time (it is the record; another
        process may have written to it). Only the parsing is remembered, by the exact text:
        the engine exports the whole store every few seconds, and validating each outcome again
        was most of an export's time."""
        rows = self._conn.execute(
            "SELECT outcome FROM outcomes ORDER BY task_id, sample_index, recorded_at"
        )
        known, self._parsed = self._parsed, {}
        found = []
        for (text,) in rows:
            outcome = known.get(text)
            if outcome is None:
                outcome = Outcome.from_json(text)
            self._parsed[text] = outcome
            found.append(outcome)
        return found

    def count(self) -> int:
        (n,) = self._conn.execute("SELECT COUNT(*) FROM outcomes").fetchone()
        return int(n)

    def clear(self) -> None:
        self._conn.execute("DELETE FROM outcomes")


def current_outcomes(samples: Sequence[Sample], outcomes: Iterable[Outcome]) -> list[Outcome]:
    """The outcomes of exactly these samples (same code), in sample order.

    A store may hold outcomes of samples that have since changed: those are not this run's.
    """
    by_key = {outcome_key(o): o for o in outcomes}
    found = []
    for sample in samples:
        outcome = by_key.get(sample_key(sample))
        if outcome is not None:
            found.append(outcome)
    return found


def export_outcomes(run_dir: Path, outcomes: Sequence[Outcome]) -> Path:
    path = run_dir / OUTCOMES_JSONL
    atomic_write_jsonl(path, (o.to_json() for o in outcomes))
    return path


def write_jsonl_models(path: Path, values: Iterable[Task | Sample]) -> None:
    atomic_write_jsonl(path, (v.to_json() for v in values))


def write_run_json(run_dir: Path, meta: dict[str, Any]) -> None:
    atomic_write_text(run_dir / RUN_JSON, json.dumps(meta, indent=2, sort_keys=True) + "\n")


def read_run_json(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / RUN_JSON
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: malformed run metadata ({exc.msg})") from None
    if not isinstance(meta, dict):
        raise UserError(f"{path}: malformed run metadata (expected an object)")
    return meta


# --- the official CoderEval result format --------------------------------------------------


def official_results_name(samples_name: str) -> str:
    """The official platform named its output after its input: ``Raw_Input.jsonl_out.jsonl``."""
    return f"{samples_name}_out.jsonl"


def _java_error_message(outcome: Outcome) -> str:
    if outcome.verdict is Verdict.PASSED:
        return ""
    if outcome.verdict in (Verdict.COMPILE_ERROR, Verdict.SYNTAX_ERROR, Verdict.NO_CODE):
        return "compile error"
    # The original printed nothing when the check ran and printed "false".
    if outcome.verdict is Verdict.FAILED and outcome.exit_code == 0:
        return ""
    return "exec error!"


def _return_code(outcome: Outcome) -> int:
    if outcome.exit_code is not None:
        return outcome.exit_code
    if outcome.signal is not None:
        return 128 + outcome.signal
    return 0 if outcome.passed else 1


def official_rows(
    tasks: Sequence[Task], samples: Sequence[Sample], outcomes: Sequence[Outcome]
) -> list[dict[str, Any]]:
    """Per task with finished samples, the row the original platform wrote (Python or Java).

    Key order and value types follow the published result files, so scripts written for them
    (``is_pass`` a bool, ``return_code`` an int) keep working.
    """
    code_of = {(s.task_id, s.index): (s.code if s.code is not None else s.raw) for s in samples}
    by_task: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_task.setdefault(outcome.task_id, []).append(outcome)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        finished = sorted(by_task.get(task.task_id, ()), key=lambda o: o.sample_index)
        if not finished or task.language not in (Language.PYTHON, Language.JAVA):
            continue
        codes = [code_of.get((task.task_id, o.sample_index), "") for o in finished]
        level = task.level.value if task.level else ""
        location = task.location
        if task.language is Language.PYTHON:
            rows.append(
                {
                    "file_path": location.file_path if location else "",
                    "project": task.project,
                    "name": task.name,
                    "docstring": task.docstring,
                    "_id": task.task_id,
                    "code": codes,
                    "level": level,
                    "generate_results": [
                        {"generate_code": code, "is_pass": o.passed, "return_code": _return_code(o)}
                        for code, o in zip(codes, finished, strict=True)
                    ],
                }
            )
        else:
            results = []
            for code, o in zip(codes, finished, strict=True):
                message = _java_error_message(o)
                results.append(
                    {
                        "generate_code": code,
                        "errormessage": message,
                        "error_detail_message": (o.detail or "null") if message else "",
                        "is_pass": o.passed,
                    }
                )
            rows.append(
                {
                    "generate_results": results,
                    "docstring": task.docstring,
                    "method_name": task.name,
                    "codes": codes,
                    "code_level": level,
                    "_id": task.task_id,
                    "project_name": task.project.rsplit("/", 1)[-1],
                }
            )
    return rows


def export_official(
    path: Path, tasks: Sequence[Task], samples: Sequence[Sample], outcomes: Sequence[Outcome]
) -> Path | None:
    """Write the official ``_out.jsonl``; None when no task is a CoderEval-language task."""
    rows = official_rows(tasks, samples, outcomes)
    if not rows and not any(t.language in (Language.PYTHON, Language.JAVA) for t in tasks):
        return None
    atomic_write_jsonl(path, rows)
    return path


# --- reading a run back -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Run:
    """A run directory read back: what was evaluated, with what, and what came out."""

    path: Path
    tasks: list[Task]
    samples: list[Sample]
    outcomes: list[Outcome]
    meta: dict[str, Any]


def load_run(run_dir: Path) -> Run:
    """Read a run directory written by `codereval evaluate`.

    Outcomes come from the live store when it exists (it may be ahead of outcomes.jsonl after a
    crash), else from outcomes.jsonl; only those of the run's current samples are returned.
    """
    if not run_dir.is_dir():
        raise UserError(f"run directory not found: {run_dir}", hint="pass codereval evaluate --out")
    meta = read_run_json(run_dir)
    if meta is None:
        raise UserError(
            f"{run_dir} is not a run directory (no {RUN_JSON})",
            hint="create one with codereval evaluate --out",
        )
    tasks = [Task.model_validate(obj) for _, obj in _read_optional(run_dir / TASKS_JSONL)]
    samples = [Sample.model_validate(obj) for _, obj in _read_optional(run_dir / SAMPLES_JSONL)]
    store_path = run_dir / STORE_FILE
    if store_path.exists():
        with ResultStore(store_path) as store:
            stored = store.outcomes()
    else:
        rows = _read_optional(run_dir / OUTCOMES_JSONL)
        stored = [Outcome.model_validate(obj) for _, obj in rows]
    return Run(
        path=run_dir,
        tasks=tasks,
        samples=samples,
        outcomes=current_outcomes(samples, stored),
        meta=meta,
    )


def _read_optional(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.exists():
        return []
    return list(iter_jsonl(path))
