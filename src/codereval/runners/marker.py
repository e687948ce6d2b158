"""Per-run secret markers: a pass must be earned by the test reaching its end (promise 3).

The harness generates a fresh secret for each run, passes it to the test wrapper through a
channel the sample cannot read before the test finishes (a file descriptor or a file removed on
read), and accepts a pass only when the wrapper prints it after the test returned.
"""

from __future__ import annotations

import secrets

MARKER_PREFIX = "CODEREVAL-DONE-"


def new_marker() -> str:
    return MARKER_PREFIX + secrets.token_hex(16)


def marker_seen(output: bytes | str, marker: str) -> bool:
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    return any(line.strip() == marker for line in text.splitlines())
