"""The learner's progress through the lab's steps, from checkpoint results (the rules are in
awsview.core.checkpoints' docstring); apart, so that what prints progress (printout) needs not
import what evaluates checkpoints, which reads printout's JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DONE, CURRENT, BROKEN, TODO, UNKNOWN = "done", "current", "broken", "todo", "unknown"
MARKS = {DONE: "✓", CURRENT: "✗", BROKEN: "✗", TODO: "·", UNKNOWN: "?"}


@dataclass(frozen=True)
class Progress:
    """Where the learner is in the lab's steps."""

    steps: tuple[str, ...]  # the lab's steps with checkpoints, in order
    on: str | None  # the step the learner is on; None when every step is done
    done: tuple[str, ...]  # the steps done, in order

    @property
    def number(self) -> int:
        return self.steps.index(self.on) + 1 if self.on in self.steps else len(self.steps)

    @property
    def reached(self) -> str | None:
        """The last step done (the class view's "step reached")."""
        return self.done[-1] if self.done else None

    @property
    def text(self) -> str:
        if not self.steps:
            return ""
        if self.on is None:
            return f"all {len(self.steps)} steps done"
        return f"on step {self.number}/{len(self.steps)} {self.on}"


def progress(results: Sequence[Any]) -> Progress:
    """Where the learner is, from checkpoint results (awsview.core.checkpoints.CheckResult)."""
    steps = tuple(dict.fromkeys(r.checkpoint.step for r in results))
    done = tuple(
        s
        for s in steps
        if all(r.status in (DONE, BROKEN) for r in results if r.checkpoint.step == s)
    )
    done = tuple(
        s for i, s in enumerate(steps) if set(steps[: i + 1]) <= set(done)
    )  # in order only
    on = next((s for s in steps if s not in done), None)
    return Progress(steps, on, done)
