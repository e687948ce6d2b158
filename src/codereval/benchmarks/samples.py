"""Samples files: the official CoderEval form and our own JSON Lines.

Official: one line per task, ``{"_id": ..., "generate_results": [code, ...]}``.
Ours: one line per sample, ``{"task_id": ..., "completion" | "code" | "raw": ..., "index": ...}``
(also whatever ``Sample.to_json`` writes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.jsonl import iter_jsonl, require_file
from codereval.model import Sample


def load_samples(path: Path) -> list[Sample]:
    require_file(path, what="samples file")
    samples: list[Sample] = []
    next_index: dict[str, int] = {}
    seen: set[tuple[str, int]] = set()
    any_line = False
    for lineno, row in iter_jsonl(path):
        any_line = True
        for sample in _row_samples(row, where=f"{path}:{lineno}", next_index=next_index):
            key = (sample.task_id, sample.index)
            if key in seen:
                raise UserError(
                    f"{path}:{lineno}: sample {sample.index} of task {sample.task_id} appears twice"
                )
            seen.add(key)
            samples.append(sample)
    if not any_line:
        raise UserError(f"{path}: the file is empty", hint="expected one JSON object per line")
    return samples


def _row_samples(
    row: dict[str, Any], *, where: str, next_index: dict[str, int]
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
