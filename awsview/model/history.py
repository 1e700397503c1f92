"""Step Functions execution histories as typed events, with the state and attempt each belongs to.

`parse_history` takes the botocore dicts of `get_execution_history` (oldest first). A poller that
fetches again passes the previous result: tracking continues where it stopped, and events it has
already seen (id not above the last one) are skipped, so overlapping pages are harmless.

An attempt is one TaskScheduled (or LambdaFunctionScheduled / ActivityScheduled) of a state. It
is counted even when the service then could not invoke anything (ev04's denied-order: one
attempt, no worker invocation) — attempts, invocations and business writes are different counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

_EMPTY: Mapping[Any, Any] = MappingProxyType({})

TERMINAL_STATUS = MappingProxyType(
    {
        "ExecutionSucceeded": "SUCCEEDED",
        "ExecutionFailed": "FAILED",
        "ExecutionAborted": "ABORTED",
        "ExecutionTimedOut": "TIMED_OUT",
    }
)
SCHEDULED_TYPES = frozenset({"TaskScheduled", "LambdaFunctionScheduled", "ActivityScheduled"})
TASK_FAILURE_TYPES = frozenset(
    {
        "TaskFailed",
        "TaskTimedOut",
        "TaskStartFailed",
        "TaskSubmitFailed",
        "LambdaFunctionFailed",
        "LambdaFunctionTimedOut",
        "LambdaFunctionStartFailed",
        "LambdaFunctionScheduleFailed",
        "ActivityFailed",
        "ActivityTimedOut",
        "ActivityScheduleFailed",
    }
)
_TASK_PREFIXES = ("Task", "LambdaFunction", "Activity")
_DENIED_MARKERS = ("is not authorized to perform", "AccessDenied")


@dataclass(frozen=True)
class HistoryEvent:
    """One history event. Decoded JSON fields (`input`, `output`, `payload`) are read-only."""

    id: int
    previous_id: int | None
    timestamp: datetime | None
    type: str
    state: str | None = None
    attempt: int | None = None  # 1-based, per state entry; only on Task/Lambda/Activity events
    error: str | None = None
    cause: str | None = None
    output: Any = field(default=None, hash=False)
    payload: Any = field(default=None, hash=False)  # a Lambda result, decoded if it was JSON text
    input: Any = field(default=None, hash=False)  # input, or a TaskScheduled's parameters
    resource: str | None = None
    resource_type: str | None = None
    # The raw *EventDetails dict, for event types this module has no field for.
    details: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, hash=False)

    @property
    def is_task_failure(self) -> bool:
        return self.type in TASK_FAILURE_TYPES

    @property
    def is_access_denied(self) -> bool:
        """A failure caused by missing permission (the service could not invoke the target)."""
        text = f"{self.error or ''} {self.cause or ''}"
        return any(marker in text for marker in _DENIED_MARKERS)


@dataclass(frozen=True)
class ExecutionHistory:
    """Everything known about one execution's history so far."""

    events: tuple[HistoryEvent, ...] = ()
    # State name → TaskScheduled count over all its entries (a Map iteration is an entry).
    attempts: Mapping[str, int] = field(default_factory=lambda: _EMPTY, hash=False)
    task_failures: tuple[HistoryEvent, ...] = ()
    is_finished: bool = False
    status: str | None = None  # RUNNING, SUCCEEDED, FAILED, ABORTED, TIMED_OUT; None before start
    # Tracking carried into the next parse_history(previous=...), never shown.
    _track: _Tracking | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def last_id(self) -> int:
        return self.events[-1].id if self.events else 0

    @property
    def failure(self) -> HistoryEvent | None:
        """The ExecutionFailed/TimedOut/Aborted event, if the execution ended that way."""
        last = self.events[-1] if self.events else None
        if last is not None and last.type in TERMINAL_STATUS and last.type != "ExecutionSucceeded":
            return last
        return None


@dataclass(frozen=True)
class _Tracking:
    state_of: Mapping[int, str | None]  # event id → state name
    entry_of: Mapping[int, int | None]  # event id → id of the StateEntered it belongs to
    entry_attempts: Mapping[int, int]  # StateEntered id → attempts within that entry


def parse_history(
    events: Iterable[Mapping[str, Any]], previous: ExecutionHistory | None = None
) -> ExecutionHistory:
    """Typed history from botocore event dicts, continuing from `previous` when given."""
    previous = previous or ExecutionHistory()
    track = previous._track or _Tracking(_EMPTY, _EMPTY, _EMPTY)
    state_of = dict(track.state_of)
    entry_of = dict(track.entry_of)
    entry_attempts = dict(track.entry_attempts)
    attempts = dict(previous.attempts)
    parsed = list(previous.events)
    failures = list(previous.task_failures)
    status = previous.status
    last_id = previous.last_id

    batch = list(events)
    if all(_int(raw.get("id")) is not None for raw in batch):
        batch.sort(key=lambda raw: _int(raw.get("id")) or 0)  # none is None (checked above)
    for raw in batch:
        event_id = _int(raw.get("id"))
        if event_id is None:  # malformed; keep it, in arrival order
            event_id = last_id + 1
        elif event_id <= last_id:
            continue
        last_id = event_id
        kind = str(raw.get("type") or "Unknown")
        details = _details(raw)
        previous_id = _int(raw.get("previousEventId"))
        if previous_id in state_of:
            state, entry = state_of[previous_id], entry_of[previous_id]
        else:  # no usable link: the event follows the one before it
            state, entry = (parsed[-1].state, entry_of[parsed[-1].id]) if parsed else (None, None)

        if kind.startswith("Execution"):
            state, entry = None, None
        elif kind.endswith("StateEntered"):
            state, entry = _str(details.get("name")) or state, event_id
            entry_attempts[event_id] = 0
        elif kind.endswith("StateExited"):
            state = _str(details.get("name")) or state

        attempt = None
        is_task_event = kind.startswith(_TASK_PREFIXES) and "State" not in kind
        if is_task_event and kind in SCHEDULED_TYPES:
            key = entry if entry is not None else -1
            entry_attempts[key] = entry_attempts.get(key, 0) + 1
            attempts[state or "?"] = attempts.get(state or "?", 0) + 1
        if is_task_event:
            attempt = entry_attempts.get(entry if entry is not None else -1) or None

        state_of[event_id], entry_of[event_id] = state, entry
        event = _event(raw, event_id, previous_id, kind, details, state, attempt)
        parsed.append(event)
        if event.is_task_failure:
            failures.append(event)
        if kind == "ExecutionStarted" or kind == "ExecutionRedriven":
            status = "RUNNING"
        elif kind in TERMINAL_STATUS:
            status = TERMINAL_STATUS[kind]
        elif status is None:
            status = "RUNNING"

    return ExecutionHistory(
        events=tuple(parsed),
        attempts=MappingProxyType(attempts),
        task_failures=tuple(failures),
        is_finished=status in TERMINAL_STATUS.values(),
        status=status,
        _track=_Tracking(
            MappingProxyType(state_of), MappingProxyType(entry_of), MappingProxyType(entry_attempts)
        ),
    )


def _event(
    raw: Mapping[str, Any],
    event_id: int,
    previous_id: int | None,
    kind: str,
    details: Mapping[str, Any],
    state: str | None,
    attempt: int | None,
) -> HistoryEvent:
    output = decode_json(details.get("output"))
    if kind == "LambdaFunctionSucceeded":
        payload = output
    elif isinstance(output, dict) and "Payload" in output:
        payload = decode_json(output["Payload"])
    else:
        payload = None
    raw_input = details.get("input", details.get("parameters"))
    return HistoryEvent(
        id=event_id,
        previous_id=previous_id,
        timestamp=_timestamp(raw.get("timestamp")),
        type=kind,
        state=state,
        attempt=attempt,
        error=_str(details.get("error")),
        cause=_str(details.get("cause")),
        output=output,
        payload=payload,
        input=decode_json(raw_input),
        resource=_str(details.get("resource")),
        resource_type=_str(details.get("resourceType")),
        details=MappingProxyType(dict(details)),
    )


def decode_json(value: Any) -> Any:
    """JSON text decoded; anything else (or text that is not JSON) returned unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _details(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    for key, value in raw.items():
        if isinstance(key, str) and key.endswith("EventDetails") and isinstance(value, Mapping):
            return value
    return _EMPTY


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _timestamp(value: Any) -> datetime | None:
    if isinstance(value, datetime) or value is None:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, ValueError, OSError):
            return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None
