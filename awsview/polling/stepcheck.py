"""The checkpoints of one lab step, read as the viewer reads them (read-only): what
``awsview verify`` answers and what ``awsview lab check`` checks after each step.

One ``StepChecker`` keeps one connection, one scheduler and one checkpoint memory for its whole
life, so a check that spans a lab's steps remembers what a viewer watching them would.

A check reads only what its checkpoints look at (the kinds whose keys they read, and the kinds
those derive from), not every panel: a step about a queue sends no DynamoDB or Step Functions
call. What that is can depend on what is there (a check may look further once a resource
exists), so the checkpoints are tried on the model, the kinds they looked at and are not read
yet are read, and again, until they look at nothing new. A checkpoint with a JMESPath query
reads the whole dump, so everything is read for it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from awsview.aws.session import Connection, Target
from awsview.core.checkpoints import Memory, live
from awsview.labspec import Checkpoint, LabSpec
from awsview.model.state import LabState
from awsview.polling.bootstrap import preflight
from awsview.polling.scheduler import Scheduler

POLL_GAP = 0.5  # seconds between two reads while waiting for a step's resources to settle


@dataclass(frozen=True)
class StepResult:
    checkpoint: Checkpoint
    passed: bool | None  # None: not knowable (a read failed)
    now: str


class StepChecker:
    """``async with StepChecker(target, profile) as checker:``
    ``results = await checker.settle("cleanup", 20)``"""

    def __init__(self, target: Target, profile: LabSpec):
        self.target = target
        self.profile = profile
        self.memory = Memory()
        self._conn: Connection | None = None
        self._scheduler: Scheduler | None = None
        self.account = ""

    async def __aenter__(self) -> StepChecker:
        self._conn = Connection(self.target)
        await self._conn.__aenter__()
        try:
            self.account = await preflight(self._conn)
        except BaseException:
            await self._conn.__aexit__(None, None, None)
            raise
        self._scheduler = Scheduler(self._conn, self.profile)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._scheduler is not None:
            await self._scheduler.stop()
        if self._conn is not None:
            await self._conn.__aexit__(*exc)

    def checkpoints(self, step: str) -> tuple[Checkpoint, ...]:
        return tuple(c for c in self.profile.checkpoints if c.step == step)

    async def _read_for(self, checkpoints: tuple[Checkpoint, ...]) -> LabState:
        """One read of what ``checkpoints`` look at (see the module's docstring)."""
        scheduler = self._scheduler
        assert scheduler is not None, "use StepChecker as an async context manager"
        if any(c.query for c in checkpoints):
            return await scheduler.run_once()
        done: set[str] = set()
        while True:
            # Tried on a copy of the memory: the real one learns only from the final reads.
            trial = Memory(first_code=dict(self.memory.first_code), held=dict(self.memory.held))
            looked: set[str] = set()
            for checkpoint in checkpoints:
                live(checkpoint, scheduler.model, self.profile, trial, None, looked, looked)
            due = [p for p in scheduler.writers(looked) if p.kind not in done]
            if not due:
                return scheduler.model
            await scheduler.run_these(due)
            done.update(p.kind for p in due)

    async def now(self, step: str) -> list[StepResult]:
        """One read of what the step's checkpoints look at, then the checkpoints on it."""
        model = await self._read_for(self.checkpoints(step))
        results = []
        for checkpoint in self.checkpoints(step):
            passed, said, _ = live(checkpoint, model, self.profile, self.memory)
            results.append(StepResult(checkpoint, passed, said))
        return results

    async def look(self) -> None:
        """One read with every checkpoint evaluated and nothing reported: what a viewer open
        since setup would remember (a function's code before the learner deployed another)."""
        model = await self._read_for(self.profile.checkpoints)
        for checkpoint in self.profile.checkpoints:
            live(checkpoint, model, self.profile, self.memory)

    async def settle(self, step: str, seconds: float) -> list[StepResult]:
        """Read again until every checkpoint of the step holds, or ``seconds`` have passed."""
        deadline = time.monotonic() + seconds
        while True:
            results = await self.now(step)
            if all(r.passed for r in results) or time.monotonic() >= deadline:
                return results
            await asyncio.sleep(POLL_GAP)
