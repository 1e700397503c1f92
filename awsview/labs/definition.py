"""A lab as AWS View plays it: a lab folder's name, title and steps, in order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from awsview.labspec.folder import LabFolder
from awsview.model.errors import FailedError, UserError


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
    """One learner step of a lab folder, e.g. ev04's "executions" (step3.md)."""

    key: str
    title: str
    number: int


@dataclass(frozen=True)
class Lab:
    """A lab folder: its name, title and the learner's steps."""

    folder: LabFolder

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def title(self) -> str:
        return self.folder.title

    @property
    def path(self) -> Path:
        return self.folder.path

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(Step(s.key, s.title, s.number) for s in self.folder.steps)

    def step(self, which: int | str) -> Step:
        """The step with this 1-based number (or its digits) or key."""
        for step in self.steps:
            if which in (step.number, str(step.number), step.key):
                return step
        known = ", ".join(f"{s.number}={s.key}" for s in self.steps)
        raise LabError(f"lab {self.name} has no step {which!r}; its steps are {known}")

    def number(self, step: Step) -> int:
        return step.number
