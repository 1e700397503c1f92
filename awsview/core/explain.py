"""Retry/Catch explainer and cross-service trace, both pure.

For each Task state of an execution: the attempts in its history lined up against the
definition's Retry (expected wait IntervalSeconds × BackoffRate^n against the actual gap,
attempts used of the allowed ones) and which Catch sent the failure to which state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from awsview.model import keys
from awsview.model.asl import Catcher, Definition, Retrier

LISTED_WAITS = 5  # retries whose wait a summary spells out; the rest are counted


@dataclass(frozen=True)
class Attempt:
    number: int
    outcome: str  # "succeeded", or the error name
    actual_wait: float | None  # seconds between the previous failure and this attempt's scheduling
    expected_wait: float | None  # what the matching Retrier asks for


@dataclass(frozen=True)
class TaskExplanation:
    state: str
    attempts: tuple[Attempt, ...]
    allowed: int | None  # 1 + MaxAttempts of the retrier that matched the failures
    retry: str | None
    caught: str | None  # e.g. "InvalidOrder → Rejected ($.failure)"
    outcome: str

    @property
    def summary(self) -> str:
        count = len(self.attempts)
        used = (
            f"{count} of {self.allowed} attempt{'s' if self.allowed != 1 else ''}"
            if self.allowed
            else f"{count} attempt{'s' if count != 1 else ''}"
        )
        parts = [f"{self.state}: {used}"]
        waits = [
            a
            for a in self.attempts[1:]
            if a.expected_wait is not None and a.actual_wait is not None
        ]
        for a in waits[:LISTED_WAITS]:
            parts.append(
                f"retry {a.number - 1} waited {a.actual_wait:.1f} s "
                f"(expected {a.expected_wait:g} s)"
            )
        if len(waits) > LISTED_WAITS:
            parts.append(f"{len(waits) - LISTED_WAITS} more retries")
        failed = [a for a in self.attempts if a.outcome not in ("succeeded", "running")]
        if failed and self.retry is None:
            parts.append(f"no Retry covers {failed[-1].outcome}")
        if self.caught:
            parts.append(f"Catch {self.caught}")
        parts.append(self.outcome)
        return " · ".join(parts)


def _matches(error_equals: Iterable[str], error: str | None) -> bool:
    names = set(error_equals)
    if not error:
        return False
    if error in names or "States.ALL" in names:
        return True
    return "States.TaskFailed" in names and error not in (
        "States.Timeout",
        "States.HeartbeatTimeout",
    )


def _retrier(retriers: Iterable[Retrier], error: str | None) -> Retrier | None:
    return next((r for r in retriers if _matches(r.error_equals, error)), None)


def _catcher(catchers: Iterable[Catcher], error: str | None) -> Catcher | None:
    return next((c for c in catchers if _matches(c.error_equals, error)), None)


def explain(definition: Definition, history: Any) -> tuple[TaskExplanation, ...]:
    """One explanation per Task state the execution reached, in order of first entry.

    Linear in the history's length: a history of tens of thousands of events (a long retry
    loop) is explained on every render.
    """
    by_state: dict[str | None, list[Any]] = {}
    order: dict[str, None] = {}  # the states entered, in order, once each
    for event in history.events:
        by_state.setdefault(event.state, []).append(event)
        if event.type == "TaskStateEntered":
            order.setdefault(event.state)
    reached = set(by_state)
    explanations = []
    for name in order:
        state = definition.state(name)
        if state is None:
            continue
        events = by_state[name]
        scheduled = [e for e in events if e.type in ("TaskScheduled", "LambdaFunctionScheduled")]
        failures = [e for e in events if e.is_task_failure]
        failure_of: dict[int, Any] = {}
        for failure in failures:
            failure_of.setdefault(failure.attempt, failure)
        succeeded = {e.attempt for e in events if e.type == "TaskSucceeded"}
        attempts, retry_used = [], None
        for index, event in enumerate(scheduled):
            number = index + 1
            failure = failure_of.get(number)
            outcome = (
                failure.error or "failed"
                if failure
                else ("succeeded" if number in succeeded else "running")
            )
            actual = expected = None
            if index > 0:
                previous = failure_of.get(number - 1)
                retrier = _retrier(state.retry, previous.error if previous else None)
                if previous is not None and previous.timestamp and event.timestamp:
                    try:
                        actual = (event.timestamp - previous.timestamp).total_seconds()
                    except TypeError:  # one naive, one aware timestamp: no gap to show
                        actual = None
                if retrier is not None:
                    retry_used = retrier
                    expected = retrier.delay(number - 1)
            attempts.append(Attempt(number, outcome, actual, expected))
        last_error = (
            failures[-1].error
            if failures and attempts and attempts[-1].outcome != "succeeded"
            else None
        )
        matched = retry_used or _retrier(state.retry, last_error)
        catcher = _catcher(state.catch, last_error) if last_error else None
        caught = None
        if catcher is not None and catcher.next in reached:
            caught = f"{last_error} → {catcher.next}" + (
                f" ({catcher.result_path})" if catcher.result_path else ""
            )
        outcome = attempts[-1].outcome if attempts else "not scheduled"
        if last_error and not caught:
            outcome = f"failed the execution with {last_error}"
        explanations.append(
            TaskExplanation(
                state=name,
                attempts=tuple(attempts),
                allowed=(
                    1 + matched.max_attempts
                    if matched
                    else 1
                    if not state.retry or last_error
                    else None
                ),  # unknown until an error picks a Retrier
                retry=matched.describe() if matched else None,
                caught=caught,
                outcome=outcome,
            )
        )
    return tuple(explanations)


@dataclass(frozen=True)
class Trace:
    """From one decision: its execution's events for that attempt, the Lambda request's log lines
    and the item as it is now."""

    execution_events: tuple[Any, ...]
    log_lines: tuple[Any, ...]
    current_item: dict[str, Any] | None
    item_present: bool | None  # None when the table could not be read


def trace(decision: Any, model: Any) -> Trace:
    actor = decision.actor
    events: tuple[Any, ...] = ()
    if actor.execution_arn:
        snapshot = model.get(keys.history(actor.execution_arn))
        if snapshot is not None and snapshot.data is not None:
            events = tuple(
                e
                for e in snapshot.data.history.events
                if e.state == actor.state and e.attempt == actor.attempt
            )
    lines = []
    if actor.request_id:
        for snapshot in model.with_prefix(keys.LOGS_PREFIX):
            inside: dict[str, bool] = {}
            for entry in snapshot.data.lines if snapshot.data is not None else ():
                if entry.line.kind == "START":
                    inside[entry.stream] = entry.line.request_id == actor.request_id
                if inside.get(entry.stream):
                    lines.append(entry)
                if entry.line.kind == "REPORT" and entry.line.request_id == actor.request_id:
                    inside[entry.stream] = False
    table = model.data(keys.table(decision.table))
    current, present = None, None
    if table is not None:
        for item in table.items:
            if "/".join(str(item.get(k)) for k in table.key_names) == decision.key:
                current = item
        present = current is not None
    return Trace(events, tuple(lines), current, present)


def explanations_for(model: Any) -> list[tuple[str, tuple[TaskExplanation, ...]]]:
    """(execution name, explanations) for every execution whose machine and history are known."""
    machines = {m.arn: m for m in model.data(keys.STATE_MACHINES, ())}
    machine_of = {
        e.arn: e.machine_arn
        for s in model.with_prefix(keys.EXECUTIONS_PREFIX)
        for e in (s.data or ())
    }
    found = []
    for snapshot in model.with_prefix(keys.HISTORY_PREFIX):
        item = snapshot.data
        if item is None or item.unrelated:
            continue  # not read yet, or a backend's example history (no attempts to explain)
        machine = machines.get(machine_of.get(item.execution_arn, ""))
        if machine is not None and machine.definition is not None:
            found.append((item.execution_name, explain(machine.definition, item.history)))
    return found
