"""The lab's checkpoints, evaluated against the latest model (no AWS calls of its own)."""

from __future__ import annotations

from typing import Any

from awsview.aws.session import Connection
from awsview.model import keys
from awsview.model.snapshot import Snapshot
from awsview.model.state import LabState
from awsview.polling.base import Poller
from awsview.polling.runs import RUNS, scope_of
from awsview.polling.store import UNUSABLE, DecisionStore


class CheckpointPoller(Poller):
    """The lab's checkpoints against the latest model (no AWS calls)."""

    kind = keys.CHECKPOINTS
    remembers = True
    fast_interval = 0.25
    slow_interval = 1.0
    after = ("",)  # every checkpoint reads some part of the model

    def __init__(self, profile, store: DecisionStore | None = None):
        super().__init__(profile)
        self._store = store
        self._memory = None

    async def poll(self, conn: Connection, model: LabState) -> list[Snapshot[Any]]:
        from awsview.core.checkpoints import Memory, evaluate

        if self._memory is None:
            scope, lab = scope_of(conn), self.profile.name
            try:
                store = self._store or DecisionStore()
                self._memory = Memory(
                    first=lambda name, value: store.first(scope, name, value),
                    recall=lambda run: {
                        int(name.rsplit(":", 1)[1]): float(value)
                        for name, value in store.recall(scope, f"held:{lab}:{run}:").items()
                    },
                    keep=lambda run, index, moment: store.first(
                        scope, f"held:{lab}:{run}:{index}", str(moment)
                    ),
                )
            except UNUSABLE:  # no usable state dir: remember for this session only
                self._memory = Memory()
        runs = model.data(RUNS, ())
        self._memory.enter_run(runs[-1].number if runs else 0)
        return [
            await self.fetch(
                model, "checkpoints", lambda: _evaluate(evaluate, self.profile, model, self._memory)
            )
        ]


async def _evaluate(evaluate, profile, model, memory):
    return evaluate(profile, model, memory)
