"""A lab as data: its provided resources and the learner's steps, in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from awsview.model.errors import FailedError, UserError

if TYPE_CHECKING:
    from awsview.labs.context import LabContext


class LabError(FailedError):
    """A lab step could not do what the lab text does; the message is one human line."""


class UnknownLab(UserError, ValueError):
    """No lab has this name."""

    def __init__(self, name: str, known: list[str]):
        super().__init__(f"unknown lab {name!r}; known labs: {', '.join(known)}")
        self.name = name
        self.known = known


@dataclass(frozen=True)
class Step:
    """One learner step of a lab text, e.g. ev04's "executions"."""

    key: str
    title: str
    run: Callable[[LabContext], None]


@dataclass(frozen=True)
class Lab:
    """A lab: its name, the seed text it follows, what exists before and what the learner does."""

    name: str
    title: str
    seed: str
    prefix: str
    provide: Callable[[LabContext], None]
    steps: tuple[Step, ...]

    def step(self, which: int | str) -> Step:
        """The step with this 1-based number or key."""
        for number, step in enumerate(self.steps, start=1):
            if which == number or which == step.key:
                return step
        known = ", ".join(f"{n}={s.key}" for n, s in enumerate(self.steps, start=1))
        raise LabError(f"lab {self.name} has no step {which!r}; its steps are {known}")

    def number(self, step: Step) -> int:
        return self.steps.index(step) + 1
