"""`Admission`: how many background responses run at once, and who waits.

Pure bookkeeping, no I/O and no clock of its own: `BackgroundRuns` asks it whether a new job may
wait (`admit`), which waiting jobs may start now (`ready`), and tells it when one ends (`done`).

- At most `max_running` jobs run at once, and at most `max_running_per_credential` of one
  credential, so background work never takes the whole upstream connection pool: interactive
  requests keep the rest.
- Past those, a job waits in a queue (`queued`, as the API says) of at most `max_queued` jobs, at
  most `max_queued_per_credential` of one credential. Past the queue a job is refused up front
  (`Refused`, a 429 with `retry-after`), never accepted to fail later.
- Waiting jobs start in turn across credentials (round robin), so one tenant's thousand jobs do
  not hold back another's first.
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from dataclasses import dataclass, field


class Refused(Exception):
    """The queue is full: the job is refused; `retry_after` is the seconds to wait."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Admission:
    max_running: int
    max_running_per_credential: int
    max_queued: int
    max_queued_per_credential: int
    running: dict[str, int] = field(default_factory=dict)  # credential -> jobs running
    waiting: OrderedDict[str, deque[str]] = field(default_factory=OrderedDict)  # credential -> job keys, in turn
    reserved: dict[str, int] = field(default_factory=dict)  # credential -> places held for jobs being stored
    mean_seconds: float = 1.0  # a job's running time, smoothed over the last ones (for `retry-after`)

    @property
    def running_count(self) -> int:
        return sum(self.running.values())

    @property
    def queued_count(self) -> int:
        return sum(len(keys) for keys in self.waiting.values()) + sum(self.reserved.values())

    def admit(self, credential: str, key: str) -> None:
        """Queue job `key` (in the place `reserve` held for it, if any), or raise `Refused` when the
        queue (or this credential's share) is full."""
        if self.reserved.get(credential, 0) > 0:
            self.unreserve(credential)
        else:
            self.check(credential)
        self.waiting.setdefault(credential, deque()).append(key)

    def reserve(self, credential: str) -> None:
        """Hold a place in the queue for a job of `credential` while it is stored (`Refused` when
        there is none), so that jobs arriving together cannot overfill the queue."""
        self.check(credential)
        self.reserved[credential] = self.reserved.get(credential, 0) + 1

    def unreserve(self, credential: str) -> None:
        left = self.reserved.get(credential, 0) - 1
        if left > 0:
            self.reserved[credential] = left
        else:
            self.reserved.pop(credential, None)

    def check(self, credential: str) -> None:
        """Raise `Refused` when a job of `credential` would be refused now."""
        mine = len(self.waiting.get(credential, ())) + self.reserved.get(credential, 0)
        if mine >= self.max_queued_per_credential:
            raise Refused(
                f"Too many background responses queued for this credential ({mine}); retry later.",
                self._retry_after(mine, self.max_running_per_credential),
            )
        total = self.queued_count
        if total >= self.max_queued:
            raise Refused(
                f"Too many background responses queued ({total}); retry later.",
                self._retry_after(total, self.max_running),
            )

    def ready(self) -> list[tuple[str, str]]:
        """The `(credential, key)` of each waiting job that may start now (counted as running)."""
        started: list[tuple[str, str]] = []
        while self.running_count < self.max_running:
            turn = next((c for c in self.waiting if self.running.get(c, 0) < self.max_running_per_credential), None)
            if turn is None:
                break
            keys = self.waiting.pop(turn)
            started.append((turn, keys.popleft()))
            self.running[turn] = self.running.get(turn, 0) + 1
            if keys:
                self.waiting[turn] = keys  # (to the back: the next credential goes first)
        return started

    def withdraw(self, credential: str, key: str) -> bool:
        """Take a job that has not started out of the queue (cancelled); whether it was there."""
        keys = self.waiting.get(credential)
        if keys is None or key not in keys:
            return False
        keys.remove(key)
        if not keys:
            del self.waiting[credential]
        return True

    def done(self, credential: str, seconds: float) -> None:
        """A running job ended after `seconds`."""
        left = self.running.get(credential, 0) - 1
        if left > 0:
            self.running[credential] = left
        else:
            self.running.pop(credential, None)
        self.mean_seconds = 0.8 * self.mean_seconds + 0.2 * max(seconds, 0.0)

    def _retry_after(self, ahead: int, slots: int) -> int:
        """Seconds until the queue ahead has likely drained: between 1 and 60."""
        return max(1, min(60, math.ceil(self.mean_seconds * (ahead + 1) / max(slots, 1))))


__all__ = [
    "Admission",
    "Refused",
]
