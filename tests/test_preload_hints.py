"""Preload hints: what one run found unfit to preload, kept for the next (sandbox/preload_hints).

How a worker uses a hint is pinned in test_warm_executor.py (one server the second time, a
stale hint still checked); here, what a hint file keeps and when it is read."""

from __future__ import annotations

import os
import time
from pathlib import Path

from codereval.sandbox.preload_hints import MAX_AGE_S, PreloadHints


def _key(hints: PreloadHints, **changes: object) -> str:
    given: dict[str, object] = {"python": "/envs/a/venv/bin/python", "stdlib": ("json",),
                                "imports": ("yaml", "pytest"), "project": None}
    given.update(changes)
    return hints.key(**given)  # type: ignore[arg-type]


def test_a_hint_is_read_back_as_written(tmp_path: Path) -> None:
    hints = PreloadHints(tmp_path)
    key = _key(hints)
    hints.write(key, {"pytest": "replaced interpreter hooks (excepthook)"})
    assert hints.read(key) == {"pytest": "replaced interpreter hooks (excepthook)"}
    assert PreloadHints(tmp_path).read(key) == hints.read(key)


def test_another_interpreter_or_other_candidates_have_their_own_hint(tmp_path: Path) -> None:
    hints = PreloadHints(tmp_path)
    keys = {_key(hints), _key(hints, python="/envs/b/venv/bin/python"),
            _key(hints, imports=("yaml",)),
            _key(hints, project={"root": "/r", "cwd": "/r", "modules": ["m"], "banned": []})}
    assert len(keys) == 4


def test_an_import_that_ran_out_of_time_is_not_kept(tmp_path: Path) -> None:
    """A loaded machine's slow import says nothing about the module: the next run tries it."""
    hints = PreloadHints(tmp_path)
    key = _key(hints)
    hints.write(key, {"yaml": "import failed: still importing after 60s",
                      "pytest": "replaced interpreter hooks (excepthook)"})
    assert hints.read(key) == {"pytest": "replaced interpreter hooks (excepthook)"}


def test_an_old_hint_is_ignored_once_and_rewritten(tmp_path: Path) -> None:
    hints = PreloadHints(tmp_path)
    key = _key(hints)
    hints.write(key, {"pytest": "replaced interpreter hooks (excepthook)"})
    written = tmp_path / f"{key}.json"
    old = time.time() - MAX_AGE_S - 60
    os.utime(written, (old, old))
    assert hints.read(key) == {}
    # The worker that ignored it found the same again: the file is rewritten, so fresh.
    hints.write(key, {"pytest": "replaced interpreter hooks (excepthook)"})
    assert hints.read(key) == {"pytest": "replaced interpreter hooks (excepthook)"}


def test_an_unwritable_folder_costs_the_hint_not_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    hints = PreloadHints(blocker / "hints")
    hints.write(_key(hints), {"pytest": "x"})
    assert hints.read(_key(hints)) == {}
