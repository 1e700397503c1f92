"""The write-decision timeline per business key, and a verdict on idempotency.

Pure: evidence in (the emulator's journal, DynamoDB Streams records, the worker's RESULT lines,
execution histories, the lab's runs), a Timeline out. Counting items alone cannot reveal an
unconditional overwrite; the real decisions and the consumer's own results can.

A key's verdict covers its *lifetime*: the writes since the item last stopped existing. A delete
(journal DeleteItem, a stream REMOVE, or the item seen gone between two scans) ends a lifetime;
the next accepted create starts a new one. An alarm is an accepted write over an existing item,
or a second accepted create with no delete seen in between. Earlier lifetimes stay listed with
their own verdicts and count for nothing today. Decisions are grouped by lab run
(`awsview.core.runs`): the timeline's keys are the current run's, earlier runs are kept beside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from awsview.core.runs import LabRun, before_first, closed, run_of
from awsview.model import keys
from awsview.model.items import diff_items, format_value, item_to_plain

ACCEPTED = "Accepted"
REJECTED = "Rejected"


@dataclass(frozen=True)
class Actor:
    """Who made a write: an execution's state attempt, an SQS message, or a plain API caller."""

    kind: str  # execution | sqs | lambda | api | unknown
    text: str
    request_id: str | None = None
    function: str | None = None
    execution_arn: str | None = None
    execution_name: str | None = None
    state: str | None = None
    attempt: int | None = None
    message_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    """One write decision on one business key."""

    ident: str  # stable identity of the evidence (journal id + cursor, stream event id)
    time: float
    table: str
    key: str
    operation: str
    condition: str | None
    outcome: str  # Accepted | Rejected
    reason: str | None  # ConditionalCheckFailedException or another error code
    kind: str  # create | overwrite | duplicate | conflict | rejected | delete | error | gone
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    actor: Actor
    source: str  # journal | stream | scan
    notes: tuple[str, ...] = ()  # what the consumer or the workflow said around this write
    run: int = 0  # the lab run it belongs to (awsview.core.runs); 0 before the first run known

    @property
    def changed(self) -> tuple[str, ...]:
        diff = diff_items(self.before, self.after)
        return tuple([*diff.added, *diff.removed, *(c[0] for c in diff.changed)])


@dataclass(frozen=True)
class Verdict:
    writes: int  # accepted writes that created the item
    overwrites: int  # accepted writes over an existing item
    duplicates: int  # rejected, the old item identical to the intended one
    conflicts: int  # rejected, the old item different
    rejected: int  # other rejected conditional writes (updates, deletes)
    deletes: int
    errors: int

    @property
    def alarm(self) -> bool:
        return self.overwrites > 0 or self.writes > 1

    @property
    def text(self) -> str:
        parts = [
            _count(self.writes, "write"),
            _count(self.duplicates, "duplicate"),
            _count(self.overwrites, "overwrite"),
        ]
        if self.conflicts:
            parts.append(_count(self.conflicts, "conflict"))
        if self.rejected:
            parts.append(f"{self.rejected} rejected")
        if self.deletes:
            parts.append(_count(self.deletes, "delete"))
        if self.errors:
            parts.append(_count(self.errors, "error"))
        return " · ".join(parts) + (" ⚠" if self.alarm else " ✓")


@dataclass(frozen=True)
class Lifetime:
    """The writes on a key between two moments the item did not exist."""

    decisions: tuple[Decision, ...]
    verdict: Verdict
    ended: bool  # a delete (or the item seen gone) closed it

    @property
    def end_text(self) -> str:
        if not self.ended:
            return "current"
        last = self.decisions[-1]
        how = "seen gone" if last.kind == "gone" else "deleted"
        return f"{how} {datetime.fromtimestamp(last.time).strftime('%H:%M:%S')}"


@dataclass(frozen=True)
class KeyTimeline:
    table: str
    key: str
    decisions: tuple[Decision, ...]  # every decision of this run on the key, in order
    verdict: Verdict  # the latest lifetime's: earlier lifetimes count for nothing today
    results: tuple[str, ...] = ()  # the consumer's RESULT lines for this key, in order
    lifetimes: tuple[Lifetime, ...] = ()


@dataclass(frozen=True)
class RunTimeline:
    """One earlier run's keys, with their own verdicts."""

    run: LabRun
    keys: tuple[KeyTimeline, ...]


@dataclass(frozen=True)
class Timeline:
    keys: tuple[KeyTimeline, ...]  # the current run's (every decision when no run is known)
    sources: tuple[str, ...]  # evidence used
    missing: tuple[str, ...] = ()  # evidence that is not available, said plainly
    run: LabRun | None = None  # the current run; None when none is known yet
    earlier: tuple[RunTimeline, ...] = ()  # earlier runs with decisions, oldest first

    def key(self, table: str, key: str) -> KeyTimeline | None:
        return next((k for k in self.keys if k.table == table and k.key == key), None)

    @property
    def by_run(self) -> tuple[tuple[LabRun | None, tuple[KeyTimeline, ...]], ...]:
        """Every run with its keys, oldest first, the current one last."""
        return tuple((r.run, r.keys) for r in self.earlier) + ((self.run, self.keys),)

    def decisions(self, every_run: bool = False) -> list[Decision]:
        groups = self.by_run if every_run else ((self.run, self.keys),)
        return sorted(
            (d for _, keys in groups for k in keys for d in k.decisions),
            key=lambda d: (d.time, d.ident),
        )


@dataclass(frozen=True)
class Evidence:
    """Everything the timeline is built from; the pollers' data, already parsed."""

    business_tables: tuple[str, ...]  # none: every table named prefix*
    business_key: str = "id"
    prefix: str = ""  # the view's: another lab's decisions on the same endpoint stay out
    journal_id: str | None = None
    decisions: tuple[Mapping[str, Any], ...] = ()  # emulator journal rows
    invocations: tuple[Mapping[str, Any], ...] = ()
    journal_note: str | None = None  # why there is no journal, if there is none
    streams: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)  # table -> StreamRecords
    stream_tables: tuple[str, ...] = ()  # business tables with a stream enabled
    results: tuple[tuple[Any, ...], ...] = ()  # (request id, RESULT data[, time printed])
    errors: tuple[tuple[str | None, str], ...] = ()  # (request id, [ERROR] line)
    histories: tuple[Any, ...] = ()  # awsview.model.resources.History
    stored: tuple[Decision, ...] = ()  # decisions kept from earlier sessions
    runs: tuple[LabRun, ...] = ()  # the lab's runs known here, oldest first (awsview.core.runs)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def key_text(key: Mapping[str, Any] | None) -> str:
    plain = (item_to_plain(dict(key)) or {}) if key and _looks_wire(key) else dict(key or {})
    return "/".join(format_value(plain[k]) for k in sorted(plain)) or "?"


def _looks_wire(item: Mapping[str, Any]) -> bool:
    return all(
        isinstance(v, dict)
        and len(v) == 1
        and next(iter(v)) in {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}
        for v in item.values()
    )


def actor_of(
    caller: Mapping[str, Any] | None, invocations: Mapping[str, Mapping[str, Any]]
) -> Actor:
    caller = caller or {}
    if caller.get("kind") != "lambda":
        agent = caller.get("user_agent") or "unknown client"
        return Actor("api", f"API call ({agent})")
    request_id, function = caller.get("request_id"), caller.get("function")
    invoked_by = (invocations.get(request_id or "") or {}).get("caller") or {}
    short = (request_id or "")[:8]
    if invoked_by.get("kind") == "stepfunctions":
        return Actor(
            "execution",
            f"{invoked_by.get('execution_name')} · {invoked_by.get('state')} · "
            f"attempt {invoked_by.get('attempt')}",
            request_id,
            function,
            invoked_by.get("execution_arn"),
            invoked_by.get("execution_name"),
            invoked_by.get("state"),
            invoked_by.get("attempt"),
        )
    if invoked_by.get("kind") == "sqs":
        ids = tuple(invoked_by.get("message_ids") or ())
        return Actor(
            "sqs",
            f"SQS message {', '.join(i[:8] for i in ids)} → {function} {short}",
            request_id,
            function,
            message_ids=ids,
        )
    return Actor("lambda", f"{function} request {short}", request_id, function)


def _classify(operation: str, outcome: str, before: Any, after: Any, intended: Any) -> str:
    op = operation.rsplit(".", 1)[-1]
    if outcome == "accepted":
        if op in ("DeleteItem", "Delete"):
            return "delete"
        return "create" if before is None else "overwrite"
    if outcome == "ConditionalCheckFailedException":
        if op in ("PutItem", "Put") and intended is not None:
            return "duplicate" if before == intended else "conflict"
        return "rejected"
    return "error"


def from_journal(
    row: Mapping[str, Any], journal_id: str | None, invocations: Mapping[str, Mapping[str, Any]]
) -> Decision:
    request = row.get("request") or {}
    before, after = item_to_plain(row.get("before")), item_to_plain(row.get("after"))
    intended = item_to_plain(request.get("Item")) if request.get("Item") else None
    outcome = row.get("outcome", "")
    return Decision(
        ident=f"journal:{journal_id}:{row.get('cursor')}",
        time=float(row.get("time") or 0),
        table=row.get("table_name", ""),
        key=key_text(row.get("key")),
        operation=row.get("operation", ""),
        condition=row.get("condition"),
        outcome=ACCEPTED if outcome == "accepted" else REJECTED,
        reason=None if outcome == "accepted" else outcome,
        kind=_classify(row.get("operation", ""), outcome, before, after, intended),
        before=before,
        after=after,
        actor=actor_of(row.get("caller"), invocations),
        source="journal",
    )


def from_stream(table: str, record: Any) -> Decision:
    event = record.event_name
    operation = {"INSERT": "PutItem (new)", "MODIFY": "write (modify)", "REMOVE": "DeleteItem"}.get(
        event, event
    )
    kind = {"INSERT": "create", "MODIFY": "overwrite", "REMOVE": "delete"}.get(event, "overwrite")
    stamp = record.time.timestamp() if isinstance(record.time, datetime) else 0.0
    return Decision(
        ident=keys.stream(record.event_id),
        time=stamp,
        table=table,
        key=key_text(record.keys),
        operation=operation,
        condition=None,
        outcome=ACCEPTED,
        reason=None,
        kind=kind,
        before=record.old_image,
        after=record.new_image,
        actor=Actor("unknown", "not recorded by DynamoDB Streams"),
        source="stream",
    )


def gone_mark(table: str, key: str, seen_at: float) -> Decision:
    """The item was in one scan and not in the next, with no delete seen: its lifetime ended."""
    return Decision(
        ident=f"scan:{table}:{key}:{seen_at:.3f}",
        time=seen_at,
        table=table,
        key=key,
        operation="item not found by a scan",
        condition=None,
        outcome="Gone",
        reason=None,
        kind="gone",
        before=None,
        after=None,
        actor=Actor("unknown", "a table scan (no delete was seen)"),
        source="scan",
    )


def verdict(decisions: Iterable[Decision]) -> Verdict:
    counts = {
        k: 0
        for k in (
            "create",
            "overwrite",
            "duplicate",
            "conflict",
            "rejected",
            "delete",
            "error",
            "gone",
        )
    }
    for d in decisions:
        counts[d.kind] += 1
    return Verdict(
        writes=counts["create"],
        overwrites=counts["overwrite"],
        duplicates=counts["duplicate"],
        conflicts=counts["conflict"],
        rejected=counts["rejected"],
        deletes=counts["delete"],
        errors=counts["error"],
    )


def lifetimes(decisions: Iterable[Decision]) -> tuple[Lifetime, ...]:
    """A key's decisions (in order) cut where the item stopped existing."""
    found: list[Lifetime] = []
    current: list[Decision] = []
    for decision in decisions:
        if decision.kind == "gone" and not current:
            continue  # seen gone after a delete already ended the lifetime: nothing new
        current.append(decision)
        if decision.kind in ("delete", "gone"):
            found.append(Lifetime(tuple(current), verdict(current), ended=True))
            current = []
    if current:
        found.append(Lifetime(tuple(current), verdict(current), ended=False))
    return tuple(found)


def _annotations(evidence: Evidence) -> dict[str, list[str]]:
    """Per Lambda request id: what the worker printed and how its workflow attempt ended."""
    notes: dict[str, list[str]] = {}
    for request_id, data, *_ in evidence.results:
        if request_id and isinstance(data, Mapping):
            said = ", ".join(f"{k}={data[k]}" for k in ("processed", "duplicate") if k in data)
            notes.setdefault(request_id, []).append(f"worker: RESULT {said}".rstrip())
    for request_id, line in evidence.errors:
        if request_id:
            notes.setdefault(request_id, []).append(f"worker: {line.splitlines()[0][:160]}")
    return notes


def _workflow_note(decision: Decision, histories: Iterable[Any]) -> str | None:
    actor = decision.actor
    if actor.kind != "execution":
        return None
    for item in histories:
        if item.execution_arn != actor.execution_arn:
            continue
        attempt = [
            e for e in item.history.events if e.state == actor.state and e.attempt == actor.attempt
        ]
        for event in attempt:
            if event.is_task_failure:
                return f"workflow: this attempt then failed with {event.error} (after the write)"
            if event.type == "TaskSucceeded":
                payload = event.payload if isinstance(event.payload, Mapping) else {}
                if payload.get("duplicate") is True:
                    return "workflow: this attempt succeeded reporting duplicate: true"
                return "workflow: this attempt succeeded"
    return None


def build(evidence: Evidence) -> Timeline:
    decisions, sources, missing = collect(evidence)
    return assemble(evidence, decisions, sources, missing)


def collect(evidence: Evidence) -> tuple[dict[str, Decision], list[str], list[str]]:
    """Every decision the evidence holds (by identity), the sources used and those missing."""
    invocations = {str(i.get("request_id")): i for i in evidence.invocations if i.get("request_id")}
    business = set(evidence.business_tables)

    def wanted(table: Any) -> bool:
        return (
            table in business
            if business
            else isinstance(table, str) and table.startswith(evidence.prefix)
        )

    decisions: dict[str, Decision] = {d.ident: d for d in evidence.stored if wanted(d.table)}
    sources, missing = [], []
    if evidence.journal_id is not None:
        sources.append("emulator journal (exact)")
        for row in evidence.decisions:
            if wanted(row.get("table_name")):
                decision = from_journal(row, evidence.journal_id, invocations)
                decisions[decision.ident] = decision
    else:
        missing.append(evidence.journal_note or "no write-decision journal")
        for table in evidence.business_tables:
            if table in evidence.stream_tables:
                sources.append(f"DynamoDB stream of {table}")
                for record in evidence.streams.get(table, ()):
                    decision = from_stream(table, record)
                    decisions[decision.ident] = decision
            else:
                missing.append(
                    f"{table} has no DynamoDB stream: accepted writes and overwrites are not "
                    "visible (enable NEW_AND_OLD_IMAGES to see them)"
                )
        if evidence.stream_tables:
            missing.append("streams do not show rejected conditional writes, conditions or callers")
    if evidence.results:
        sources.append("worker RESULT lines")
    if evidence.histories:
        sources.append("execution histories")
    return decisions, sources, missing


def assemble(
    evidence: Evidence, decisions: dict[str, Decision], sources: list[str], missing: list[str]
) -> Timeline:
    """The timeline of collected decisions: annotated, cut into runs, keys and lifetimes."""
    notes = _annotations(evidence)
    runs = closed(evidence.runs)
    by_run: dict[int, dict[tuple[str, str], list[Decision]]] = {}
    for decision in sorted(decisions.values(), key=lambda d: (d.time, d.ident)):
        extra = list(notes.get(decision.actor.request_id or "", []))
        workflow = _workflow_note(decision, evidence.histories)
        if workflow:
            extra.append(workflow)
        if extra and not decision.notes:
            decision = replace(decision, notes=tuple(extra))
        number = run_of(runs, decision.time) if runs else 0
        if decision.run != number:
            decision = replace(decision, run=number)
        by_run.setdefault(number, {}).setdefault((decision.table, decision.key), []).append(
            decision
        )
    results: dict[int, dict[str, list[str]]] = {}
    for _, data, *when in evidence.results:
        if isinstance(data, Mapping) and evidence.business_key in data:
            number = (
                run_of(runs, when[0])
                if runs and when and when[0] is not None
                else (runs[-1].number if runs else 0)
            )
            results.setdefault(number, {}).setdefault(str(data[evidence.business_key]), []).append(
                ", ".join(f"{k}={data[k]}" for k in sorted(data))
            )

    def keys_of(number: int) -> tuple[KeyTimeline, ...]:
        said = results.get(number, {})
        built = (
            _key_timeline(table, key, ds, tuple(said.get(key, ())))
            for (table, key), ds in sorted(by_run.get(number, {}).items())
        )
        return tuple(k for k in built if k.decisions)  # a key only seen gone has nothing to say

    current = runs[-1] if runs else None
    earlier = [
        RunTimeline(run, keys_of(run.number))
        for run in (before_first(runs), *runs[:-1])
        if runs and run.number in by_run
    ]
    return Timeline(
        keys=keys_of(current.number if current else 0),
        sources=tuple(sources),
        missing=tuple(missing),
        run=current,
        earlier=tuple(earlier),
    )


def _key_timeline(
    table: str, key: str, decisions: list[Decision], results: tuple[str, ...]
) -> KeyTimeline:
    lives = lifetimes(decisions)
    kept = tuple(d for life in lives for d in life.decisions)
    return KeyTimeline(
        table, key, kept, lives[-1].verdict if lives else verdict(()), results, lives
    )
