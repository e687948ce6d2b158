"""Line two sets of tasks up: which are in both, which in one only, how the shared ones differ.

The use is checking a rebuilt benchmark against a published one (CoderUJB's rows made by
``prepare defects4j`` against the hub's parquet files, a ``build`` benchmark against CoderEval's
records). Tasks pair by id first; the ones left pair by what they are about, a *natural key*
that does not depend on how an id was made: for CoderUJB the kind, the bug, the file or test
class and the function's name; for the others the project, the file and the name. A pair is
then compared slot by slot (function, tests, lines, prompt), so that a difference shows where
it comes from rather than as a missing task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from codereval.model import Frozen, Task, UjbKind


def group_of(task: Task) -> str:
    """What a task is compared within: its CoderUJB kind, else its benchmark."""
    return task.ujb.kind.value if task.ujb is not None else task.benchmark


def natural_key(task: Task) -> tuple[str, ...]:
    """What the task is about, independent of its id.

    FCG and CTG come from one bug per project, and which one is "the latest" may differ
    between two constructions of the same benchmark, so their key leaves the bug out.
    """
    spec = task.ujb
    if spec is None:
        location = task.location
        return (task.project, location.file_path if location else "", task.name)
    match spec.kind:
        case UjbKind.APR:
            return (spec.project, spec.bug_id, spec.location, spec.function_name)
        case UjbKind.DD:
            return (spec.project, spec.bug_id, spec.function_name, str(spec.defective))
        case UjbKind.ITG:
            return (spec.project, spec.bug_id, spec.test_class, spec.function_name)
        case UjbKind.FCG:
            return (spec.project, spec.location, spec.function_name)
        case UjbKind.CTG:
            return (spec.project, spec.test_class, spec.function_name)


def describe(task: Task) -> str:
    """The natural key as a person reads it: ``Lang-1 StringUtils.java isBlank``."""
    spec = task.ujb
    if spec is None:
        location = task.location
        where = location.file_path.rsplit("/", 1)[-1] if location else ""
        return " ".join(part for part in (task.project, where, task.name) if part)
    if spec.test_class:
        place = spec.test_class.rsplit(".", 1)[-1]
    else:
        place = spec.location.rsplit("/", 1)[-1]
    bug = f"{spec.project}-{spec.bug_id}" if spec.kind not in (UjbKind.FCG, UjbKind.CTG) else ""
    name = spec.function_name or task.name
    if spec.kind is UjbKind.DD:
        name += " (defective)" if spec.defective else " (fixed)"
    return " ".join(part for part in (bug or spec.project, place, name) if part)


# The slots a pair is compared on, in the order a report shows them.
ASPECTS = ("function", "tests", "lines", "prompt")


def _differences(ours: Task, theirs: Task) -> tuple[str, ...]:
    differs: list[str] = []
    if ours.reference.strip() != theirs.reference.strip():
        differs.append("function")
    if _tests(ours) != _tests(theirs):
        differs.append("tests")
    if _lines(ours) != _lines(theirs):
        differs.append("lines")
    if ours.prompt.strip() != theirs.prompt.strip():
        differs.append("prompt")
    return tuple(differs)


def _tests(task: Task) -> frozenset[str]:
    return frozenset(task.ujb.test_methods) if task.ujb is not None else frozenset()


def _lines(task: Task) -> tuple[int, int]:
    if task.ujb is not None:
        return task.ujb.start, task.ujb.end
    location = task.location
    if location is None:
        return 0, 0
    return location.lineno or 0, location.end_lineno or 0


class Pair(Frozen):
    """A task of ours and its counterpart, with the slots in which they differ."""

    task: str
    ours: str
    theirs: str
    same_id: bool
    differs: tuple[str, ...] = ()


class GroupLineUp(Frozen):
    """The line-up of one kind (or benchmark)."""

    group: str
    ours: int
    theirs: int
    pairs: tuple[Pair, ...] = ()
    only_ours: tuple[str, ...] = ()
    only_theirs: tuple[str, ...] = ()

    def same(self, aspect: str) -> int:
        """How many pairs agree on one of ``ASPECTS``."""
        return sum(aspect not in pair.differs for pair in self.pairs)


class LineUp(Frozen):
    """Every group's line-up, and what was left out of the comparison and why."""

    groups: tuple[GroupLineUp, ...]
    # Groups only one side has are not compared (the other side was never meant to hold them).
    not_compared: tuple[str, ...] = ()
    # Projects only one side has (a rebuild of some projects against a full dataset).
    projects_left_out: tuple[str, ...] = ()


def line_up(ours: Sequence[Task], theirs: Sequence[Task], *, same_projects: bool = True) -> LineUp:
    """Pair ``ours`` with ``theirs`` group by group.

    With ``same_projects``, only projects both sides hold are compared: a rebuild of three
    projects against the whole published set is about those three.
    """
    projects_left_out: list[str] = []
    if same_projects:
        ours_projects = {t.project for t in ours}
        theirs_projects = {t.project for t in theirs}
        shared = ours_projects & theirs_projects
        projects_left_out = sorted((ours_projects | theirs_projects) - shared)
        ours = [t for t in ours if t.project in shared]
        theirs = [t for t in theirs if t.project in shared]
    ours_by = _by_group(ours)
    theirs_by = _by_group(theirs)
    compared = sorted(ours_by.keys() & theirs_by.keys())
    return LineUp(
        groups=tuple(_line_up_group(g, ours_by[g], theirs_by[g]) for g in compared),
        not_compared=tuple(sorted(ours_by.keys() ^ theirs_by.keys())),
        projects_left_out=tuple(projects_left_out),
    )


def _by_group(tasks: Iterable[Task]) -> dict[str, list[Task]]:
    groups: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        groups[group_of(task)].append(task)
    return groups


def _line_up_group(group: str, ours: list[Task], theirs: list[Task]) -> GroupLineUp:
    pairs: list[Pair] = []
    theirs_by_id: dict[str, list[Task]] = defaultdict(list)
    for task in theirs:
        theirs_by_id[task.task_id].append(task)
    left_ours: list[Task] = []
    taken: set[int] = set()
    for task in ours:
        match = theirs_by_id.get(task.task_id)
        if match:
            counterpart = match.pop(0)
            taken.add(id(counterpart))
            pairs.append(_pair(task, counterpart, same_id=True))
        else:
            left_ours.append(task)
    theirs_by_key: dict[tuple[str, ...], list[Task]] = defaultdict(list)
    for task in theirs:
        if id(task) not in taken:
            theirs_by_key[natural_key(task)].append(task)
    only_ours: list[str] = []
    for task in left_ours:
        match = theirs_by_key.get(natural_key(task))
        if match:
            pairs.append(_pair(task, match.pop(0), same_id=False))
        else:
            only_ours.append(describe(task))
    only_theirs = [describe(t) for left in theirs_by_key.values() for t in left]
    return GroupLineUp(
        group=group,
        ours=len(ours),
        theirs=len(theirs),
        pairs=tuple(sorted(pairs, key=lambda p: p.task)),
        only_ours=tuple(sorted(only_ours)),
        only_theirs=tuple(sorted(only_theirs)),
    )


def _pair(ours: Task, theirs: Task, *, same_id: bool) -> Pair:
    return Pair(
        task=describe(ours),
        ours=ours.task_id,
        theirs=theirs.task_id,
        same_id=same_id,
        differs=_differences(ours, theirs),
    )
