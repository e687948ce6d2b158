"""Which sample a thread of the local executor takes next: its own group's, while it has one.

Samples of one group (a runner's ``affinity``: one environment's warm worker, one project's
compiled classes) are cheapest on the thread that already holds that group's warm state, and
each thread keeps its own warm slot. Taken in file order, two threads would work through the
same project together and each start that project's worker; here a thread keeps to its group
until the group is done, then claims the largest group no thread has begun (largest first, so
the last one to finish is small), and only when every group is claimed joins the one with the
most left, where a second worker pays for its start.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

from codereval.model import Sample

# A thread joins a group another thread works on only if at least this many samples are left
# in it: fewer than that would not repay starting a second worker (a few hundred ms).
JOIN_AT_LEAST = 4


class AffinityQueue:
    """Samples grouped by ``key``; ``take(thread)`` is thread-safe."""

    def __init__(self, samples: Iterable[Sample], key: Callable[[Sample], str]) -> None:
        self._groups: dict[str, deque[Sample]] = {}
        for sample in samples:
            self._groups.setdefault(key(sample), deque()).append(sample)
        # Unclaimed groups, the largest last (popped first); of equal ones, the first to come.
        order = {group: i for i, group in enumerate(self._groups)}
        self._unclaimed = sorted(self._groups, key=lambda g: (len(self._groups[g]), -order[g]))
        self._held: dict[int, str] = {}
        self._lock = threading.Lock()

    def take(self, thread: int) -> Sample | None:
        """The next sample for ``thread``, None when every sample has been taken."""
        with self._lock:
            group = self._held.get(thread)
            if group is None or not self._groups[group]:
                group = self._next_group()
                if group is None:
                    self._held.pop(thread, None)
                    return None
                self._held[thread] = group
            return self._groups[group].popleft()

    def release(self, thread: int) -> None:
        """``thread`` stops taking samples for a while: what is left of its group goes back to
        be claimed first, by whichever thread asks next."""
        with self._lock:
            group = self._held.pop(thread, None)
            if group is not None and self._groups[group] and group not in self._unclaimed:
                self._unclaimed.append(group)

    def _next_group(self) -> str | None:
        while self._unclaimed:
            group = self._unclaimed.pop()
            if self._groups[group]:
                return group
        busiest = max(self._groups, key=lambda g: len(self._groups[g]), default=None)
        if busiest is None or not self._groups[busiest]:
            return None
        if len(self._groups[busiest]) < JOIN_AT_LEAST and busiest in self._held.values():
            # Left to the thread that holds it, unless nothing else is left for anyone: the
            # last few samples of a group go on its own thread, this one is done.
            return None
        return busiest

    def __len__(self) -> int:
        with self._lock:
            return sum(len(group) for group in self._groups.values())
