"""How often a polled backend (AWS, LocalStack, stock moto: no change feed) is asked again about a
resource that has no cheap way to say it changed.

After each read that found a resource as it was, the next read of it waits longer: ``base``
doubled per unchanged read, up to a ceiling, each wait drawn within ± `JITTER` so that many
resources and many viewers sharing one account do not read in step. The first read that sees a
change brings it back to the poller's pace. The ceiling is low while the lab moves (something
in the model changed lately: at most a naive viewer's 2 s for what shows a lab's progress) and
high when it is idle (a change then shows within `IDLE_CEILING_S`, and wakes everything).

Only inside a scheduler's own polling loops (`paced`): a one-off read (``run_once``: dump, the
step checks, the class view's rounds) reads everything, since what it answers must be the
account's state now.
"""

from __future__ import annotations

import contextvars
import random
import time
from dataclasses import dataclass

from awsview.model.state import LabState

JITTER = 0.2
BASE_S = 0.3
ACTIVE_CEILING_S = 0.35  # what shows the lab's progress: within a quarter of a naive 2 s viewer
LISTING_CEILING_S = 8.0  # what a lab creates now and then (machines, functions, queues)
IDLE_CEILING_S = 24.0

PACED: contextvars.ContextVar[bool] = contextvars.ContextVar("awsview_paced", default=False)


def paced() -> bool:
    """True inside a scheduler's own polling loops, where a quiet resource may wait."""
    return PACED.get()


def paced_context() -> contextvars.Context:
    """A copy of the current context in which reads are paced (for a scheduler's loop tasks)."""
    context = contextvars.copy_context()
    context.run(PACED.set, True)
    return context


@dataclass
class _State:
    quiet: int = 0  # reads in a row that found the resource as it was
    read_at: float = 0.0  # monotonic
    jitter: float = 1.0


class Quiet:
    """Per resource name: whether a paced read should ask about it now."""

    def __init__(self, active_ceiling: float = ACTIVE_CEILING_S, base: float = BASE_S) -> None:
        self.active_ceiling = active_ceiling
        self.base = base
        self._states: dict[str, _State] = {}

    def wait(self, name: str, model: LabState, ceiling: float | None = None) -> float:
        """Seconds ``name`` waits after its last read (0 outside a paced loop, or after a
        change). ``ceiling`` raises the ceiling, to share one budget among many resources; it
        raises the first wait with it, so that they reach it in a few reads."""
        state = self._states.get(name)
        if state is None or not state.quiet or not paced():
            return 0.0
        top = self.active_ceiling if model.recently_changed() else IDLE_CEILING_S
        top = max(top, ceiling or 0.0)
        base = max(self.base, (ceiling or 0.0) / 8)
        return min(top, base * 2 ** (state.quiet - 1)) * state.jitter

    def due(self, name: str, model: LabState, ceiling: float | None = None) -> bool:
        """True when ``name`` should be read now."""
        state = self._states.get(name)
        if state is None:
            return True
        return time.monotonic() >= state.read_at + self.wait(name, model, ceiling)

    def read(self, name: str, changed: bool, failed: bool = False) -> None:
        """``name`` was just read: ``changed`` says whether it differed from the read before,
        ``failed`` that the read got no answer about it. A failure is no news of the resource:
        it must not make it wait longer, or its panel stays stale for up to a ceiling after the
        endpoint answers again (how often a failing poller retries is its backoff's business)."""
        state = self._states.setdefault(name, _State())
        state.quiet = 0 if changed or failed else state.quiet + 1
        state.read_at = time.monotonic()
        state.jitter = random.uniform(1 - JITTER, 1 + JITTER)

    def keep(self, names: set[str] | frozenset[str]) -> None:
        """Forgets every resource but ``names`` (the others are gone)."""
        self._states = {k: v for k, v in self._states.items() if k in names}

    def forget(self, name: str) -> None:
        self._states.pop(name, None)
