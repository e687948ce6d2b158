"""Run the ```python blocks of a Markdown page in order, in one namespace, as a reader would.

    python scripts/doc_blocks.py docs/api.md

Only fences whose info string is exactly ``python`` run; other fences (plain ```, ```text) are
output or reference. Used by tests/test_api.py and scripts/wheel-smoke.sh; standard library only,
so it runs in any virtual environment.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(text: str) -> list[str]:
    """The code of each ```python block, in page order."""
    return [match.group(1) for match in _FENCE.finditer(text)]


def run_blocks(path: Path, namespace: dict[str, object] | None = None) -> dict[str, object]:
    """Execute every ```python block of ``path``; a failing block names its number."""
    scope: dict[str, object] = namespace if namespace is not None else {"__name__": "__main__"}
    for number, code in enumerate(python_blocks(path.read_text(encoding="utf-8")), start=1):
        exec(compile(code, f"{path}[python block {number}]", "exec"), scope)
    return scope


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/doc_blocks.py PAGE.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    if not blocks:
        print(f"{path}: no ```python blocks", file=sys.stderr)
        return 1
    run_blocks(path)
    print(f"{path}: {len(blocks)} python block(s) ran")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
