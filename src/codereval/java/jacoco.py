"""JaCoCo: the coverage a test gives the classes under test (CoderUJB's CTG and ITG).

The test's JVM runs with JaCoCo's agent (``-javaagent``), which records which probes of the
included classes ran; the harness dumps them to an ``.exec`` file before it halts. JaCoCo's
command line then reads that file against the environment's compiled classes and writes an XML
report whose class-level ``LINE`` and ``BRANCH`` counters are what we record (the counters
Defects4J's ``coverage`` reports as "Line coverage" and "Condition coverage" come from the same
instrumentation idea, through Cobertura).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass

from codereval.java.artifacts import Artifact

JACOCO_VERSION = "0.8.12"
JACOCO_AGENT = Artifact(group="org.jacoco", artifact="org.jacoco.agent", version=JACOCO_VERSION,
                        classifier="runtime",
                        sha256="115e8e6e6593ca3a9892dfef695df4d487c706e59e71e64dc0ab95716ee02622")
JACOCO_CLI = Artifact(group="org.jacoco", artifact="org.jacoco.cli", version=JACOCO_VERSION,
                      classifier="nodeps",
                      sha256="594c01125b84864a7fc5a9efab19b71b7de36b27346863f6d7cd0cd45400ceb0")


class CoverageReportError(Exception):
    """The XML report cannot be read, or misses a class it must cover."""


@dataclass(frozen=True, kw_only=True)
class Coverage:
    lines_covered: int
    lines_total: int
    branches_covered: int
    branches_total: int


def agent_option(agent: str, *, destfile: str, classes: Iterable[str]) -> str:
    """The ``-javaagent:`` flag recording only ``classes`` (fully qualified; their nested
    classes too), into ``destfile``, without the agent's own exit-time dump."""
    includes = ":".join(sorted({p for c in classes for p in (c, f"{c}$*")}))
    return (f"-javaagent:{agent}=destfile={destfile},includes={includes},dumponexit=false,"
            "output=file")


def class_coverage(report_xml: str, classes: Iterable[str]) -> Coverage:
    """Sum of the LINE and BRANCH counters of ``classes`` (and their nested classes) in a
    JaCoCo XML report. A class the report lacks is an error: its classes were not analysed."""
    try:
        root = ET.fromstring(report_xml)
    except ET.ParseError as exc:
        raise CoverageReportError(f"JaCoCo XML report unreadable: {exc}") from None
    wanted = {c.replace(".", "/") for c in classes}
    totals = {"LINE": [0, 0], "BRANCH": [0, 0]}
    seen: set[str] = set()
    for element in root.iter("class"):
        name = element.get("name", "")
        outer = name.split("$", 1)[0]
        if outer not in wanted:
            continue
        seen.add(outer)
        for counter in element.findall("counter"):
            kind = counter.get("type", "")
            if kind in totals:
                covered, missed = int(counter.get("covered", "0")), int(counter.get("missed", "0"))
                totals[kind][0] += covered
                totals[kind][1] += covered + missed
    missing = sorted(wanted - seen)
    if missing:
        raise CoverageReportError(
            f"the coverage report has no class {missing[0].replace('/', '.')} "
            "(is it in classes_under_test by its fully qualified name?)")
    return Coverage(lines_covered=totals["LINE"][0], lines_total=totals["LINE"][1],
                    branches_covered=totals["BRANCH"][0], branches_total=totals["BRANCH"][1])
