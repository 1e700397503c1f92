"""What one execution did to each state of its machine, read from its history; pure.

A state is `not run` until its StateEntered, `entered` while the execution is inside it,
`succeeded` when it exits normally, `caught` when it exits after a failure (only a Catch takes
a failed state anywhere), and `failed` when the execution stopped inside it (a Fail state, an
uncaught error, a timeout or an abort). Attempts are the history's TaskScheduled count; a
failure followed by another attempt of the same entry was retried.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from awsview.model.history import SCHEDULED_TYPES, ExecutionHistory

_SUCCESS_TYPES = frozenset({"TaskSucceeded", "LambdaFunctionSucceeded", "ActivitySucceeded"})


@dataclass(frozen=True)
class StateRun:
    status: str = "not run"  # not run, entered, succeeded, caught, failed
    visits: int = 0
    attempts: int = 0
    error: str | None = None  # the last failure's error name
    denied: bool = False  # the last failure: the service was not allowed to invoke the target
    retried: tuple[str, ...] = ()  # the error of each failure that was retried
    caught_to: str | None = None  # the state entered after a caught failure


NOT_RUN = StateRun()


@dataclass(frozen=True)
class ExecutionRun:
    status: str | None  # the execution's: RUNNING, SUCCEEDED, FAILED, …
    # A plain dict, never changed after run_of: dataclasses.asdict and copy cannot take a proxy.
    states: Mapping[str, StateRun] = field(default_factory=dict)
    taken: frozenset[tuple[str, str]] = frozenset()  # (from, to) transitions the execution made
    error: str | None = None  # the execution's error, when it failed

    def state(self, name: str) -> StateRun:
        return self.states.get(name, NOT_RUN)


@dataclass
class _Entry:
    status: str = "entered"
    visits: int = 0
    attempts: int = 0
    failed: bool = False
    error: str | None = None
    denied: bool = False
    retried: list[str] = field(default_factory=list)
    caught_to: str | None = None


def run_of(history: ExecutionHistory) -> ExecutionRun:
    """Each state's outcome in this execution, and the transitions it took."""
    entries: dict[str, _Entry] = {}
    taken: set[tuple[str, str]] = set()
    exited: str | None = None  # the state exited last, waiting for the next StateEntered
    for event in history.events:
        kind, name = event.type, event.state
        if kind.endswith("StateEntered") and name is not None:
            entry = entries.setdefault(name, _Entry())
            entry.status, entry.visits, entry.failed = "entered", entry.visits + 1, False
            if exited is not None:
                taken.add((exited, name))
                before = entries.get(exited)
                if before is not None and before.status == "caught":
                    before.caught_to = name
            exited = None
        elif kind.endswith("StateExited") and name is not None:
            entry = entries.setdefault(name, _Entry())
            entry.status = "caught" if entry.failed else "succeeded"
            exited = name
        elif name is not None and name in entries:
            entry = entries[name]
            if kind in SCHEDULED_TYPES:
                if entry.failed and entry.error is not None:
                    entry.retried.append(entry.error)
                entry.attempts += 1
                entry.failed = False
            elif event.is_task_failure or (
                kind.endswith("Failed") and not kind.startswith("Execution")
            ):
                entry.failed, entry.error, entry.denied = True, event.error, event.is_access_denied
            elif kind in _SUCCESS_TYPES:
                entry.failed = False
    failure = history.failure
    states = {}
    for name, entry in entries.items():
        status = entry.status
        if status == "entered" and history.is_finished:
            status = "failed" if history.status != "SUCCEEDED" else "succeeded"
        states[name] = StateRun(
            status,
            entry.visits,
            entry.attempts,
            entry.error,
            entry.denied,
            tuple(entry.retried),
            entry.caught_to,
        )
    return ExecutionRun(
        history.status, states, frozenset(taken), failure.error if failure is not None else None
    )
