"""What an earlier run found unfit to preload, kept between runs as a hint.

A warm worker imports its preload candidates in place and checks each import afterwards
(``warm_server._import_checked``). A module found to have side effects there (pytest replaces
interpreter hooks, a library starts a thread) taints the server: the worker starts a second
one that probes every later candidate in a forked child first, importing the clean ones
twice. On CoderEval's real projects that made a worker's start 4-20 times longer (infrared
11.7 s, Krake 6.7 s against 0.4-0.9 s for a start without a restart), and every run of the
same prepared benchmark paid it again.

A hint is only ever a list of modules *not* to import: the next worker of the same
environment and candidates skips them and imports the rest in place, each still checked as
before. So a hint can make a worker preload less than it could (a module fixed since is left
out until the hint is rewritten), never something unchecked; and since what a worker preloads
never changes a sample's verdict (docs/executors.md), neither can a stale or a wrong hint.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

log = logging.getLogger("codereval.warm")

# Below the machine's cache root ($CODEREVAL_HOME), beside the environments.
HINTS_FOLDER = "preload-hints"
# A hinted module is never imported again, so a hint is also never found wrong by itself:
# after this long it is ignored once, the modules are checked again, and the hint rewritten.
MAX_AGE_S = 7 * 24 * 3600
# Findings that say more about the machine at the time than about the module (an import still
# running after the server's limit on a loaded machine) are not kept.
_TRANSIENT = ("still importing after",)


def _server_digest() -> str:
    # A server whose checks changed may judge the same module otherwise: its own hints.
    text = resources.files("codereval.sandbox").joinpath("warm_server.py").read_bytes()
    return hashlib.sha256(text).hexdigest()[:16]


class PreloadHints:
    """Hints in one folder (``$CODEREVAL_HOME/preload-hints``), a JSON file per key."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._digest = _server_digest()

    def key(self, *, python: str, stdlib: Sequence[str], imports: Sequence[str],
            project: Mapping[str, Any] | None) -> str:
        """What decides which candidates a worker is offered and what they are: the
        interpreter (an environment's own venv), the candidates and the project's modules.
        The mounts and paths of one run are left out: they differ from run to run, and a
        hint shared too widely costs a preload, nothing else."""
        payload = json.dumps({"server": self._digest, "python": python,
                              "stdlib": list(stdlib), "imports": list(imports),
                              "project": dict(project) if project else None},
                             sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    def read(self, key: str) -> dict[str, str]:
        """The modules to skip, with why an earlier run did not preload them ({} if none)."""
        path = self.folder / f"{key}.json"
        try:
            if time.time() - path.stat().st_mtime > MAX_AGE_S:
                return {}
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        skip = data.get("skip") if isinstance(data, dict) else None
        if not isinstance(skip, dict):
            return {}
        return {str(k): str(v) for k, v in skip.items()}

    def write(self, key: str, skipped: Mapping[str, str]) -> None:
        """Keep what a worker did not preload for the next run (best effort: a hint that
        cannot be written only costs the next run the probing again)."""
        path = self.folder / f"{key}.json"
        kept = {name: why for name, why in skipped.items()
                if not any(mark in why for mark in _TRANSIENT)}
        if self.read(key) == kept:
            return
        temporary = self.folder / f".{key}.{secrets.token_hex(4)}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps({"skip": kept}, sort_keys=True, indent=1),
                                 encoding="utf-8")
            os.replace(temporary, path)
        except OSError as error:
            log.info("preload hint not kept (%s): %s", path, error)
            with contextlib.suppress(OSError):
                temporary.unlink()
