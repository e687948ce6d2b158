"""Finding the processes a sample left behind, from the host."""

from __future__ import annotations

import os
from pathlib import Path


def live_pids_with(token: str, *, exact: bool = False) -> list[int]:
    """Host pids of live (not zombie) processes whose command line holds ``token`` (with
    ``exact``: is exactly ``token``'s words, e.g. "sleep 6071", not merely contains them)."""
    wanted = b"".join(word.encode() + b"\0" for word in token.split()) if exact else b""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry.name}/stat").read_bytes()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :].split()[0]
        matches = cmdline == wanted if exact else token.encode() in cmdline
        if matches and state != b"Z":
            found.append(int(entry.name))
    return found
