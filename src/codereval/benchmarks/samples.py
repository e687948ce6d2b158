"""Samples: the official CoderEval form and our own, from a file or from Python objects.

Official: one line per task, ``{"_id": ..., "generate_results": [code, ...]}``.
Ours: one line per sample, ``{"task_id": ..., "completion" | "code" | "raw": ..., "index": ...}``
(also whatever ``Sample.to_json`` writes). In memory, the same dicts, or ``Sample`` objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.model import Sample
from codereval.storage.jsonl import iter_jsonl, require_file


def load_samples(path: Path) -> list[Sample]:
    require_file(path, what="samples file")
    rows = ((f"{path}:{lineno}", row) for lineno, row in iter_jsonl(path))
    samples, any_row = _collect(rows)
    if not any_row:
        raise UserError(f"{path}: the file is empty", hint="expected one JSON object per line")
    return samples


def samples_from_objects(items: Iterable[Sample | Mapping[str, Any]]) -> list[Sample]:
    """Samples given as Python objects: ``Sample``s, or dicts in either file form.

    Dicts without an ``index`` are numbered per task in order, as lines of a file are; errors
    name the item (``samples[3]: ...``).
    """
    rows: list[tuple[str, Sample | Mapping[str, Any]]] = []
    for position, item in enumerate(items):
        if not isinstance(item, Sample | Mapping):
            raise UserError(
                f"samples[{position}]: expected a dict or a Sample, got {type(item).__name__}",
                hint="give {'task_id': ..., 'completion': ...} dicts or codereval.Sample objects",
            )
        rows.append((f"samples[{position}]", item))
    samples, any_row = _collect(rows)
    if not any_row:
        raise UserError(
            "no samples given", hint="pass a samples file or a non-empty list of samples"
        )
    return samples


def _collect(
    rows: Iterable[tuple[str, Sample | Mapping[str, Any]]],
) -> tuple[list[Sample], bool]:
    samples: list[Sample] = []
    next_index: dict[str, int] = {}
    seen: set[tuple[str, int]] = set()
    any_row = False
    for where, row in rows:
        any_row = True
        if isinstance(row, Sample):
            found = [row]
            next_index[row.task_id] = max(next_index.get(row.task_id, 0), row.index + 1)
        else:
            found = _row_samples(row, where=where, next_index=next_index)
        for sample in found:
            key = (sample.task_id, sample.index)
            if key in seen:
                raise UserError(
                    f"{where}: sample {sample.index} of task {sample.task_id} appears twice"
                )
            seen.add(key)
            samples.append(sample)
    return samples, any_row


def _row_samples(
    row: Mapping[str, Any], *, where: str, next_index: dict[str, int]
) -> list[Sample]:
    if "generate_results" in row:
        task_id = str(row.get("_id", "")).strip()
        if not task_id:
            raise UserError(f"{where}: official sample line without '_id'")
        results = row["generate_results"]
        if not isinstance(results, list):
            raise UserError(f"{where}: 'generate_results' must be a list")
        out = []
        for index, item in enumerate(results):
            code = item.get("generate_code") if isinstance(item, dict) else item
            if not isinstance(code, str):
                raise UserError(f"{where}: generate_results[{index}] is not a string")
            out.append(Sample(task_id=task_id, index=index, raw=code, code=code or None))
        next_index[task_id] = len(results)
        return out
    task_id = str(row.get("task_id", row.get("_id", ""))).strip()
    if not task_id:
        raise UserError(f"{where}: sample without 'task_id'", hint="each line needs task_id")
    if "index" in row:
        try:
            index = int(row["index"])
        except (TypeError, ValueError):
            raise UserError(f"{where}: 'index' must be a whole number") from None
    else:
        index = next_index.get(task_id, 0)
    next_index[task_id] = max(next_index.get(task_id, 0), index + 1)
    if "completion" in row or "raw" in row or "code" in row:
        raw = row.get("raw", row.get("completion", row.get("code")))
        code = row.get("code", row.get("completion"))
    else:
        raise UserError(f"{where}: sample without 'completion', 'code' or 'raw'")
    if raw is not None and not isinstance(raw, str):
        raise UserError(f"{where}: the completion must be a string")
    if code is not None and not isinstance(code, str):
        raise UserError(f"{where}: 'code' must be a string or null")
    return [
        Sample(
            task_id=task_id,
            index=index,
            raw=raw or "",
            code=code if code else None,
            truncated=bool(row.get("truncated", False)),
            model=str(row.get("model", "")),
            prompt_variant=str(row.get("prompt_variant", "")),
        )
    ]
