"""Resumable generation: prompts -> backend -> extraction -> samples appended as they arrive.

The samples file is the state: a re-run counts what each task already has and asks only for the
rest. Each batch is appended and fsynced before the next starts, so an interruption loses at
most the batch in flight. Requests that failed (server errors after retries, malformed answers)
are not written as samples, since that would count the server's failure against the model;
they go to ``<out>.errors.jsonl`` and are retried on the next run.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from codereval.errors import UserError
from codereval.generation.base import Backend, SamplingOptions
from codereval.model import Sample, Task
from codereval.prompting.extraction import extract
from codereval.prompting.prompts import Prompt
from codereval.storage.jsonl import iter_jsonl


@dataclass(frozen=True, kw_only=True)
class GenerationReport:
    out: Path
    requested: int  # samples missing when the run started
    written: int
    failed: int
    existing: int
    no_code: int
    truncated: int
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def errors_path(self) -> Path:
        return errors_path(self.out)


def errors_path(out: Path) -> Path:
    return out.with_name(out.name + ".errors.jsonl")


def existing_samples(out: Path) -> list[Sample]:
    """Samples already in ``out``; a torn last line (killed mid-write) is cut off first."""
    if not out.exists():
        return []
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with out.open("r+b") as handle:
            handle.truncate(keep)
    samples = []
    for lineno, row in iter_jsonl(out):
        try:
            samples.append(Sample.model_validate(row))
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            raise UserError(f"{out}:{lineno}: not a sample ({first})") from None
    return samples


def _check_same_run(samples: Sequence[Sample], *, model: str, label: str, out: Path) -> None:
    for sample in samples:
        if sample.model != model or sample.prompt_variant != label:
            raise UserError(
                f"{out} holds samples of model {sample.model!r} with prompt "
                f"{sample.prompt_variant!r}, not {model!r} with {label!r}",
                hint="choose another --out to start a new set of samples",
            )


def generate_samples(
    tasks: Sequence[Task],
    prompts: Sequence[Prompt],
    *,
    backend: Backend,
    options: SamplingOptions,
    out: Path,
    model: str,
    batch_size: int = 8,
    progress: Callable[[int], None] | None = None,
) -> GenerationReport:
    """Fill ``out`` up to ``options.n`` samples per task, appending batch by batch."""
    if len(tasks) != len(prompts):
        raise ValueError("one prompt per task")
    label = prompts[0].label if prompts else ""
    have = existing_samples(out)
    _check_same_run(have, model=model, label=label, out=out)
    count = Counter(s.task_id for s in have)
    next_index: dict[str, int] = {}
    for sample in have:
        next_index[sample.task_id] = max(next_index.get(sample.task_id, 0), sample.index + 1)
    todo = [(t, p, options.n - count[t.task_id]) for t, p in zip(tasks, prompts, strict=True)]
    todo = [item for item in todo if item[2] > 0]
    requested = sum(missing for _, _, missing in todo)
    written = failed = no_code = truncated = 0
    errors: Counter[str] = Counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    # Tasks missing the same number of samples share one backend call.
    by_missing: dict[int, list[tuple[Task, Prompt]]] = {}
    for task, prompt, missing in todo:
        by_missing.setdefault(missing, []).append((task, prompt))
    for missing, items in sorted(by_missing.items(), reverse=True):
        batch_options = replace(options, n=missing)
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            results = backend.generate([p for _, p in batch], batch_options)
            lines: list[str] = []
            error_rows: list[str] = []
            for (task, prompt), completions in zip(batch, results, strict=True):
                for completion in completions:
                    if completion.error:
                        failed += 1
                        errors[completion.error] += 1
                        error_rows.append(_error_row(task.task_id, completion.error, model))
                        continue
                    extraction = extract(
                        completion.text,
                        task=task,
                        prompt=prompt,
                        finish_reason=completion.finish_reason,
                    )
                    index = next_index.get(task.task_id, 0)
                    next_index[task.task_id] = index + 1
                    sample = Sample(
                        task_id=task.task_id,
                        index=index,
                        raw=completion.text,
                        code=extraction.code,
                        truncated=extraction.truncated,
                        model=model,
                        prompt_variant=prompt.label,
                    )
                    no_code += extraction.code is None
                    truncated += extraction.truncated
                    lines.append(sample.to_json())
            _append(out, lines)
            if error_rows:
                _append(errors_path(out), error_rows)
            written += len(lines)
            if progress is not None:
                progress(len(batch))
    return GenerationReport(
        out=out,
        requested=requested,
        written=written,
        failed=failed,
        existing=len(have),
        no_code=no_code,
        truncated=truncated,
        errors=errors,
    )


def _error_row(task_id: str, error: str, model: str) -> str:
    when = datetime.now(UTC).isoformat(timespec="seconds")
    return json.dumps({"task_id": task_id, "model": model, "error": error, "time": when})


def _append(path: Path, lines: Sequence[str]) -> None:
    if not lines:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
        handle.flush()
        os.fsync(handle.fileno())
