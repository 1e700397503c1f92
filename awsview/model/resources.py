"""Immutable views of the lab's resources, as the pollers build them and the panels show them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from awsview.model.asl import Definition
from awsview.model.history import ExecutionHistory
from awsview.model.loglines import LogLine


@dataclass(frozen=True)
class StateMachine:
    name: str
    arn: str
    type: str
    created: datetime | None
    role_arn: str | None = None
    definition: Definition | None = None
    definition_text: str | None = None
    definition_error: str | None = None


@dataclass(frozen=True)
class Execution:
    name: str
    arn: str
    machine_arn: str
    status: str
    started: datetime | None
    stopped: datetime | None = None
    input: Any = None
    output: Any = None
    error: str | None = None
    cause: str | None = None
    described: bool = False  # input/output/error fetched with DescribeExecution

    @property
    def running(self) -> bool:
        return self.status == "RUNNING"


_SKEW_S = 300.0


def unrelated_history(history: ExecutionHistory, started: datetime | None) -> str | None:
    """Why a parsed history cannot be that of an execution started at ``started``, or None.

    Stock moto does not run executions: every GetExecutionHistory answers the same example
    (a Pass state "A State", dated 2020-01-01) whatever the definition. Events dated before
    the execution started (beyond any clock skew: one server stamps both) are such a history."""
    events = history.events
    first = events[0].timestamp if events else None
    if first is None or started is None:
        return None
    try:
        early = (started - first).total_seconds()
    except TypeError:  # one of them without a time zone: nothing can be said
        return None
    if early <= _SKEW_S:
        return None
    return (
        f"not this execution's: its events are dated {first:%Y-%m-%d %H:%M}, before the "
        "execution started (the backend answers a fixed example history, as stock moto does)"
    )


@dataclass(frozen=True)
class History:
    execution_arn: str
    execution_name: str
    history: ExecutionHistory
    complete: bool  # the execution has finished and every event was fetched
    started: datetime | None = None  # tells a rerun of the same execution ARN apart

    @property
    def unrelated(self) -> str | None:
        """Why these events cannot be this execution's, or None (see `unrelated_history`)."""
        return unrelated_history(self.history, self.started)


@dataclass(frozen=True)
class Table:
    name: str
    status: str
    key_names: tuple[str, ...]
    items: tuple[dict[str, Any], ...]  # plain values, sorted by key
    stream: str | None = None  # StreamViewType when a stream is enabled
    stream_arn: str | None = None
    baseline: str | None = None  # reference tables: "unchanged" since first seen, or "changed: …"
    created: float | None = None  # CreationDateTime: a table created again is a new lab run
    item_count: int | None = None  # DescribeTable's ItemCount (AWS updates it every ~6 hours)
    paged: bool = False  # too big to read in one poll: read page by page, a pass over several polls
    truncated: bool = (
        False  # a pass stops at the poller's item limit: only the first items are shown
    )


@dataclass(frozen=True)
class Queue:
    name: str
    url: str
    arn: str
    visible: int
    in_flight: int
    delayed: int
    visibility_timeout: int | None
    dlq_arn: str | None = None
    max_receive_count: int | None = None
    # (time, visible, in flight) each time the counts changed, the last few minutes' worth:
    # a message that keeps failing and coming back is a visible/in-flight see-saw.
    depth: tuple[tuple[float, int, int], ...] = ()
    created: float | None = None  # CreatedTimestamp (whole seconds on AWS)
    # Seconds since its oldest message was sent (ApproximateAgeOfOldestMessage); None: no message,
    # or the endpoint does not say.
    oldest_age_s: float | None = None

    @property
    def empty(self) -> bool:
        return self.visible == 0 and self.in_flight == 0 and self.delayed == 0


@dataclass(frozen=True)
class Mapping:
    uuid: str
    source_arn: str
    function_arn: str
    batch_size: int | None
    state: str
    enabled_by: str | None = None  # StateTransitionReason
    last_result: str | None = None


@dataclass(frozen=True)
class Function:
    name: str
    arn: str
    runtime: str | None
    handler: str | None
    role: str | None
    timeout: int | None
    code_sha256: str | None
    last_modified: str | None
    state: str | None = None
    environment_names: tuple[str, ...] = ()  # names only: values may hold secrets
    mappings: tuple[Mapping, ...] = ()
    memory_size: int | None = None  # MB


@dataclass(frozen=True)
class StreamRecord:
    """One DynamoDB Streams record: an accepted write with the images the stream keeps."""

    event_id: str
    event_name: str  # INSERT / MODIFY / REMOVE
    time: datetime | None
    sequence: str
    keys: dict[str, Any]
    old_image: dict[str, Any] | None  # plain values
    new_image: dict[str, Any] | None


@dataclass(frozen=True)
class PolicyGrant:
    policy: str  # inline policy name or managed policy ARN
    effect: str
    action: str
    resource: str


@dataclass(frozen=True)
class Role:
    name: str
    arn: str
    trust_principals: tuple[str, ...]
    grants: tuple[PolicyGrant, ...]
    created: float | None = None  # CreateDate (whole seconds on AWS)


@dataclass(frozen=True)
class LogEntry:
    """One line of one CloudWatch log event (a multi-line event gives several entries)."""

    timestamp_ms: int
    stream: str
    event_id: str
    line: LogLine


@dataclass(frozen=True)
class LogFeed:
    group: str
    lines: tuple[LogEntry, ...]
    events_seen: int
    truncated: int = 0  # lines dropped from the front to stay within the cap
