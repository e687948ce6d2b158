"""Which compiled test classes make a project's whole suite, by Ant patterns over their paths.

Build tools name a suite by patterns over the test sources (Surefire's includes, Defects4J's
``all.manual.tests`` fileset: ``**/*Test.java`` minus ``**/*Abstract*Test.java``, Joda-Time's
``**/Test*.java`` minus its ``TestAll*`` aggregates). Running every class the tests compiled
instead would run a JUnit 3 aggregate suite's tests a second time, and tests the project keeps
out of its suite (random, performance, known-failing ones).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path


def ant_pattern(pattern: str) -> re.Pattern[str]:
    """An Ant pattern as Surefire reads includes (``**/*Test.java``, ``%regex[...]``), over a
    test source's path below its root, extension dropped on both sides."""
    if pattern.startswith("%regex[") and pattern.endswith("]"):
        return re.compile(pattern[7:-1].replace(".class", "").replace(".java", ""))
    text = re.sub(r"\.(java|class)$", "", pattern.strip().lstrip("/"))
    out = ""
    index = 0
    while index < len(text):
        if text.startswith("**/", index):
            out, index = out + "(?:.*/)?", index + 3
        elif text.startswith("**", index):
            out, index = out + ".*", index + 2
        elif text[index] == "*":
            out, index = out + "[^/]*", index + 1
        elif text[index] == "?":
            out, index = out + "[^/]", index + 1
        else:
            out, index = out + re.escape(text[index]), index + 1
    return re.compile(out)


def selected_test_classes(test_classes: Path, includes: Sequence[str],
                          excludes: Sequence[str] = ()) -> list[str]:
    """The top-level classes under ``test_classes`` whose path (``pkg/FooTest``, as its source
    file ``pkg/FooTest.java`` is named) an include matches and no exclude does, sorted."""
    wanted = [ant_pattern(p) for p in includes]
    unwanted = [ant_pattern(p) for p in excludes]
    found = []
    for path in test_classes.rglob("*.class"):
        if "$" in path.name:
            continue
        relative = path.relative_to(test_classes).with_suffix("").as_posix()
        if any(p.fullmatch(relative) for p in wanted) and not any(
                p.fullmatch(relative) for p in unwanted):
            found.append(relative.replace("/", "."))
    return sorted(found)
