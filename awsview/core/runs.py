"""Lab runs: which run of a lab the viewer is looking at.

Labs are rerun all the time: a learner repeats the lab, an instructor replays it, an emulator
is restarted and the lab set up again. The timeline, the verdicts and the checkpoints are about
the current run; earlier runs are kept and shown apart.

A run is told from what every backend reports — the embedded emulator, stock moto and real AWS
alike: the creation times of the lab's resources (a table's CreationDateTime, a queue's
CreatedTimestamp, a state machine's creationDate, a role's CreateDate). They change when a
resource is created again, which is what setting a lab up again or replaying it does.

- A lab seen for the first time here (nothing stored for this endpoint and lab) is in a run that
  began when its latest provided resource was created, or when the earliest resource the learner
  creates was, whichever is later; on the emulator, not before the emulator started.
- A new run starts, at the resource's creation time, when a resource seen during the current
  run is created again (its creation time is newer than the one stored), or when a resource the
  learner creates first appears with a creation time after the current run's first write
  decision (the run had gone as far as writing, then its resources were removed: a viewer that
  looked only after a cleanup sees the next run begin); and, on the emulator, when it restarted
  (moto's resources live in memory, so none of the old run's are left), at its start.
- A time reported in whole seconds (SQS and IAM on AWS) counts from the end of its second: a run
  starts once its resource is known to exist, so an earlier run's last writes never fall into it.
  Which times are whole seconds is the service's property, not the number's: a DynamoDB or Step
  Functions time is in milliseconds everywhere, and one that falls on a whole second is exact.
- A write decision belongs to the last run that started before it; run 0 holds what happened
  before the first run known here.

Pure: `awsview.polling.runs` gives sightings and keeps the book in the viewer's store.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

SAME_TIME_S = 0.001  # creation times read twice may differ by float noise, never by more


@dataclass(frozen=True)
class Sighting:
    """A lab resource that exists, with the creation time its service reports."""

    resource: str  # e.g. "queue labex-q05-jobs"
    created: float
    provided: bool  # the lab's setup makes it (the learner makes the others)
    whole_seconds: bool = False  # its service said a whole second (SQS and IAM on AWS)

    @property
    def known_from(self) -> float:
        """From when the resource surely existed: whole seconds count from the end of the second."""
        return self.created + 1.0 if self.whole_seconds else self.created


@dataclass(frozen=True)
class LabRun:
    number: int  # 1, 2, … in order; 0 holds everything before the first run known here
    start: float | None  # None for run 0
    reason: str
    end: float | None = None  # the next run's start; None while it is the current run

    @property
    def current(self) -> bool:
        return self.end is None

    def label(self) -> str:
        """``run 2 since 12:03:05`` / ``run 1 11:58:40–12:03:05`` / ``before 11:58:40``."""
        if self.number == 0:
            return f"before {_clock(self.end)}" if self.end is not None else "earlier"
        if self.end is None:
            return f"run {self.number} since {_clock(self.start)}"
        return f"run {self.number} {_clock(self.start)}–{_clock(self.end)}"


def _clock(moment: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(moment)) if moment is not None else "?"


@dataclass
class RunBook:
    """The runs of one lab on one endpoint, and the creation time of each resource seen."""

    runs: list[LabRun] = field(default_factory=list)
    seen: dict[str, tuple[float, int]] = field(
        default_factory=dict
    )  # resource -> (created, run seen in)

    @property
    def current(self) -> LabRun | None:
        return self.runs[-1] if self.runs else None

    def observe(
        self,
        sightings: Iterable[Sighting],
        complete: bool,
        emulator_started: float | None = None,
        writes: Callable[[], Iterable[float]] = tuple,
    ) -> tuple[list[LabRun], dict[str, tuple[float, int]]]:
        """Take one round of sightings; returns the runs that began and the resources to store.

        ``complete``: every kind of resource that tells runs apart answered this round. The first
        run is only inferred from a complete round: one failed listing would misplace it.
        ``writes``: when each write decision known here was made (asked only when a resource the
        learner creates appears).
        """
        sightings = sorted(sightings, key=lambda s: s.known_from)
        began: list[LabRun] = []
        if not self.runs:
            if not complete:
                return [], {}
            first = _first_run(sightings, emulator_started)
            if first is None:
                return [], {}
            self.runs.append(first)
            began.append(first)
        elif (
            emulator_started is not None
            and emulator_started > (self.runs[-1].start or 0) + SAME_TIME_S
        ):
            began.append(
                self._begin(
                    emulator_started,
                    "the emulator restarted: none of the earlier run's resources are left",
                )
            )
        changed: dict[str, tuple[float, int]] = {}
        for sighting in sightings:
            number = self.runs[-1].number
            before = self.seen.get(sighting.resource)
            if before is not None and abs(before[0] - sighting.created) <= SAME_TIME_S:
                continue
            newer = before is None or sighting.created > before[0]
            if newer and sighting.known_from > (self.runs[-1].start or 0) and not began:
                if before is not None and before[1] == number:
                    began.append(
                        self._begin(sighting.known_from, f"{sighting.resource} created again")
                    )
                elif not sighting.provided and _wrote_between(
                    writes, self.runs[-1].start, sighting.created
                ):
                    began.append(
                        self._begin(
                            sighting.known_from,
                            f"{sighting.resource} created after run {number}'s writes",
                        )
                    )
            changed[sighting.resource] = self.seen[sighting.resource] = (
                sighting.created,
                self.runs[-1].number,
            )
        return began, changed

    def _begin(self, start: float, reason: str) -> LabRun:
        run = LabRun(self.runs[-1].number + 1, start, reason)
        self.runs.append(run)
        return run


def _wrote_between(
    writes: Callable[[], Iterable[float]], start: float | None, moment: float
) -> bool:
    """A write decision was made in the current run (from ``start``) before ``moment``."""
    return any((start or 0.0) <= t < moment for t in writes())


def _first_run(sightings: list[Sighting], emulator_started: float | None) -> LabRun | None:
    candidates: list[tuple[float, str]] = []
    if emulator_started is not None:
        candidates.append((emulator_started, "the emulator started"))
    provided = [s for s in sightings if s.provided]
    if provided:
        latest = provided[-1]
        candidates.append((latest.known_from, f"{latest.resource} created (set up)"))
    made = [s for s in sightings if not s.provided]
    if made:
        candidates.append((made[0].known_from, f"{made[0].resource} created"))
    if not candidates:
        return None  # nothing of the lab exists yet: no run has begun
    start, reason = max(candidates)
    return LabRun(1, start, reason)


def closed(runs: Iterable[LabRun]) -> tuple[LabRun, ...]:
    """The runs in order, each ending where the next begins."""
    ordered = sorted(runs, key=lambda r: r.number)
    return tuple(
        replace(run, end=ordered[i + 1].start if i + 1 < len(ordered) else None)
        for i, run in enumerate(ordered)
    )


def run_of(runs: tuple[LabRun, ...], moment: float) -> int:
    """The number of the run a moment belongs to: the last that started at or before it (0 if
    none did)."""
    starts = [r.start or 0.0 for r in runs]
    index = bisect.bisect_right(starts, moment)
    return runs[index - 1].number if index else 0


def before_first(runs: tuple[LabRun, ...]) -> LabRun:
    """Run 0: what happened before the first run known here."""
    return LabRun(0, None, "before the first run seen here", end=runs[0].start if runs else None)
