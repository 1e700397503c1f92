"""What Enter on a row opens: the object behind the row, found in the model by the row's key.

Pure functions over the model (no AWS calls, no widgets): a `Detail` is a title, a few labelled
fields and sections of JSON or text. Every string in it is cleaned of control characters.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from awsview import kinds
from awsview.core.graph import execution_drawing, machine_drawing
from awsview.core.render import Panel
from awsview.model import keys, untrusted
from awsview.model.items import diff_items, format_value, plain_to_json
from awsview.model.resources import Execution, Function, LogFeed, Role, StateMachine, Table
from awsview.model.state import LabState


@dataclass(frozen=True)
class Section:
    title: str
    # JSON-able data when kind is "json", an awsview.core.graph.Drawing for "graph", else text
    body: Any
    kind: str = "json"  # "json", "text" or "graph"


@dataclass(frozen=True)
class Detail:
    title: str
    fields: tuple[tuple[str, str], ...] = ()
    sections: tuple[Section, ...] = field(default_factory=tuple)


def clean(value: Any) -> Any:
    """JSON-able data with every string (keys too) cleaned of terminal control characters."""
    value = plain_to_json(value)
    if isinstance(value, dict):
        return {untrusted.clean(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, str):
        return untrusted.clean(value, keep_newlines=True)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, datetime):
        return value.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    if not isinstance(value, str):
        value = json.dumps(clean(value), ensure_ascii=False, default=str)
    return untrusted.clean(value)


def _fields(*pairs: tuple[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((name, _text(value)) for name, value in pairs)


def _json_or_text(title: str, value: Any) -> Section:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return Section(title, untrusted.clean(value, keep_newlines=True), "text")
    return Section(title, clean(value))


def describe(model: LabState, panel: Panel, panel_ident: str, key: str) -> Detail:
    """The full content of the row ``key`` of ``panel``; a generic listing if nothing richer is
    known."""
    path = kinds.KINDS[panel.name].finder if panel.name in kinds.KINDS else None
    finder = kinds.resolve(path) if path else None
    try:
        found = finder(model, panel_ident, key) if finder else None
    except Exception:  # the core's shapes evolve; a detail view must never take the viewer down
        found = None
    return _cleaned(found) if found else generic(panel, key)


def _cleaned(detail: Detail) -> Detail:
    """Text sections cleaned once here, so finders need not remember to."""
    sections = tuple(
        s
        if s.kind != "text"
        else Section(s.title, untrusted.clean(str(s.body), keep_newlines=True), s.kind)
        for s in detail.sections
    )
    return Detail(untrusted.clean(detail.title), detail.fields, sections)


def generic(panel: Panel, key: str) -> Detail:
    row = next((r for r in panel.rows if r.key == key), None)
    cells = row.cells if row else ()
    return Detail(f"{panel.title} · {untrusted.clean(key)}", tuple(zip(panel.columns, cells)))


# -- one finder per panel kind ----------------------------------------------------------------


def find_machine(model: LabState, ident: str, key: str) -> Detail | None:
    machine = next((m for m in model.data(keys.STATE_MACHINES, ()) if m.arn == key), None)
    if not isinstance(machine, StateMachine):
        return None
    sections = []
    if machine.definition is not None:
        summary = machine.definition.retry_catch_summary()
        sections.append(Section("Retry / Catch", "\n".join(summary) or "none", "text"))
    elif machine.definition_error:
        sections.append(
            Section("Definition problem", untrusted.clean(machine.definition_error), "text")
        )
    sections += [
        Section("Graph", d, "graph") for d in (machine_drawing(model, key),) if d is not None
    ]
    if machine.definition_text:
        sections.append(_json_or_text("Definition", machine.definition_text))
    return Detail(
        f"State machine {machine.name}",
        _fields(
            ("ARN", machine.arn),
            ("Type", machine.type),
            ("Role", machine.role_arn),
            ("Created", machine.created),
        ),
        tuple(sections),
    )


def find_execution(model: LabState, ident: str, key: str) -> Detail | None:
    execution = next(
        (
            e
            for s in model.with_prefix(keys.EXECUTIONS_PREFIX)
            for e in s.data or ()
            if e.arn == key
        ),
        None,
    )
    if not isinstance(execution, Execution):
        return None
    sections = [_json_or_text("Input", execution.input)]
    if execution.status == "SUCCEEDED":
        sections.append(_json_or_text("Output", execution.output))
    if execution.error or execution.cause:
        sections.append(Section("Error", execution.error or "", "text"))
        sections.append(_json_or_text("Cause", execution.cause))
    sections += [
        Section("Graph of this execution", d, "graph")
        for d in (execution_drawing(model, key),)
        if d is not None
    ]
    history = model.data(keys.history(execution.arn))
    if history is not None:
        attempts = dict(history.history.attempts)
        failures = [
            f"{e.state}: {e.type} {e.error or ''}".strip() for e in history.history.task_failures
        ]
        sections.append(Section("Attempts per state", attempts))
        sections.append(Section("Task failures", "\n".join(failures) or "none", "text"))
    built = model.data(keys.TIMELINE)
    # This run's only: a rerun of the lab gives an execution of the same name the same ARN.
    made = [
        d for d in (built.decisions() if built else ()) if d.actor.execution_arn == execution.arn
    ]
    if made:  # the cross-service trace, from the execution's side
        sections.append(
            Section(
                "Write decisions made by this execution",
                "\n".join(
                    f"{d.actor.state} attempt {d.actor.attempt}: {d.operation} {d.table} {d.key} → "
                    f"{d.outcome}{': ' + d.reason if d.reason else ''} ({d.kind})"
                    for d in made
                ),
                "text",
            )
        )
    return Detail(
        f"Execution {execution.name}",
        _fields(
            ("Status", execution.status),
            ("Started", execution.started),
            ("Stopped", execution.stopped),
            ("ARN", execution.arn),
            ("State machine", execution.machine_arn),
        ),
        tuple(sections),
    )


def find_history_event(model: LabState, ident: str, key: str) -> Detail | None:
    arn, _, event_id = key.rpartition("#")
    history = model.data(keys.history(arn))
    if history is None:
        return None
    event = next((e for e in history.history.events if str(e.id) == event_id), None)
    if event is None:
        return None
    sections = []
    for title, value in (
        ("Input", event.input),
        ("Output", event.output),
        ("Payload", event.payload),
    ):
        if value is not None:
            sections.append(_json_or_text(title, value))
    if event.cause:
        sections.append(_json_or_text("Cause", event.cause))
    sections.append(Section("Event details", clean(dict(event.details))))
    return Detail(
        f"{history.execution_name} · event {event.id} {event.type}",
        _fields(
            ("Type", event.type),
            ("State", event.state),
            ("Attempt", event.attempt),
            ("Time", event.timestamp),
            ("Error", event.error),
            ("Resource", event.resource),
            ("Previous event", event.previous_id),
        ),
        tuple(sections),
    )


def find_item(model: LabState, ident: str, key: str) -> Detail | None:
    name = keys.name_of(ident) if ":" in ident else ""
    table = model.data(keys.table(name))
    if not isinstance(table, Table):
        return None
    item = next((i for i in table.items if keys.item_row_key(i, table.key_names) == key), None)
    if item is None:
        return None
    sections = [Section("Item", clean(item))]
    built = model.data(keys.TIMELINE)
    timeline = built.key(name, key) if built is not None else None
    if timeline is not None:
        lines = [
            f"{datetime.fromtimestamp(d.time).strftime('%H:%M:%S')}  {d.operation}  {d.outcome}"
            f"{': ' + d.reason if d.reason else ''}  condition: {d.condition or 'none'}"
            for d in timeline.decisions
        ]
        sections.append(Section("Write decisions for this key", "\n".join(lines), "text"))
        sections.append(Section("Verdict", timeline.verdict.text, "text"))
    fields = [("Table", name), ("Key", key)]
    if table.baseline:
        fields.append(("Reference", table.baseline))
    return Detail(f"Item {key} in {name}", _fields(*fields), tuple(sections))


def find_log_line(model: LabState, ident: str, key: str) -> Detail | None:
    group = ident.split(":", 1)[1] if ":" in ident else ""
    feed = model.data(keys.logs(group))
    event_id, _, after = key.rpartition("#-")  # awsview.core.feed keys a line by its event and
    if not isinstance(feed, LogFeed) or not after.isdigit():  # the lines of it that follow
        return None
    lines = [e for e in feed.lines if e.event_id == event_id]
    if int(after) >= len(lines):
        return None
    entry = lines[-1 - int(after)]
    line = entry.line
    sections = [Section("Line", line.text, "text")]
    if line.data is not None:
        sections.append(Section("Parsed", clean(line.data)))
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.timestamp_ms / 1000))
    return Detail(
        f"Log line · {line.kind}",
        _fields(
            ("Kind", line.kind),
            ("Time", when),
            ("Request", line.request_id),
            ("Stream", entry.stream),
            ("Group", group),
        ),
        tuple(sections),
    )


def find_queue(model: LabState, ident: str, key: str) -> Detail | None:
    queue = next((q for q in model.data(keys.QUEUES, ()) if (q.arn or q.url) == key), None)
    if queue is None:
        return None
    return Detail(
        f"Queue {queue.name}",
        _fields(
            ("Visible", queue.visible),
            ("In flight", queue.in_flight),
            ("Delayed", queue.delayed),
            ("Oldest message, s", queue.oldest_age_s),
            ("Visibility timeout", queue.visibility_timeout),
            ("URL", queue.url),
            ("ARN", queue.arn),
            ("Dead-letter queue", queue.dlq_arn),
            ("Max receives", queue.max_receive_count),
        ),
    )


def find_function(model: LabState, ident: str, key: str) -> Detail | None:
    for function in model.data(keys.FUNCTIONS, ()):
        if not isinstance(function, Function):
            continue
        if function.arn == key:
            mappings = [
                f"{m.source_arn}  batch {m.batch_size}  {m.state}" for m in function.mappings
            ]
            return Detail(
                f"Function {function.name}",
                _fields(
                    ("Runtime", function.runtime),
                    ("Handler", function.handler),
                    ("Timeout", function.timeout),
                    ("Memory (MB)", function.memory_size),
                    ("CodeSha256", function.code_sha256),
                    ("Last modified", function.last_modified),
                    ("State", function.state),
                    ("Role", function.role),
                    ("Environment names", ", ".join(function.environment_names)),
                ),
                (Section("Event source mappings", "\n".join(mappings) or "none", "text"),),
            )
        for m in function.mappings:
            if m.uuid == key:
                return Detail(
                    f"Event source mapping {m.uuid}",
                    _fields(
                        ("Source", m.source_arn),
                        ("Function", m.function_arn),
                        ("Batch size", m.batch_size),
                        ("State", m.state),
                        ("Why", m.enabled_by),
                        ("Last result", m.last_result),
                    ),
                )
    return None


def find_role(model: LabState, ident: str, key: str) -> Detail | None:
    for role in model.data(keys.ROLES, ()):
        if not isinstance(role, Role) or not key.startswith(role.arn):
            continue
        grants = [
            {"policy": g.policy, "effect": g.effect, "action": g.action, "resource": g.resource}
            for g in role.grants
        ]
        return Detail(
            f"Role {role.name}",
            _fields(("ARN", role.arn), ("Trusts", ", ".join(role.trust_principals))),
            (Section("Grants", clean(grants)),),
        )
    return None


def find_decision(model: LabState, ident: str, key: str) -> Detail | None:
    built = model.data(keys.TIMELINE)
    decision = next(
        (d for d in (built.decisions(every_run=True) if built else ()) if d.ident == key), None
    )
    if decision is None:
        return None
    before, after = decision.before, decision.after
    diff = diff_items(before, after)
    changed = [
        *(f"+ {n}" for n in diff.added),
        *(f"- {n}" for n in diff.removed),
        *(f"~ {n}: {format_value(o)} → {format_value(v)}" for n, o, v in diff.changed),
    ]
    outcome = (
        decision.outcome if decision.reason is None else f"{decision.outcome}: {decision.reason}"
    )
    sections = [
        Section(
            "Before the write",
            clean(before) if before is not None else "no previous item",
            "json" if before is not None else "text",
        ),
        Section(
            "After the write",
            clean(after) if after is not None else "no item",
            "json" if after is not None else "text",
        ),
        Section("Changed attributes", "\n".join(changed) or "none (the item is unchanged)", "text"),
        Section(
            "Who wrote",
            clean(
                {
                    k: v
                    for k, v in dataclasses.asdict(decision.actor).items()
                    if v not in (None, (), [], "")
                }
            ),
        ),
    ]
    if decision.notes:
        sections.append(
            Section("What the consumer and the workflow said", "\n".join(decision.notes), "text")
        )
    sections += _trace(decision, model)
    return Detail(
        f"Write decision · {decision.table} {decision.key}",
        _fields(
            ("Time", datetime.fromtimestamp(decision.time)),
            ("Table", decision.table),
            ("Key", decision.key),
            ("Operation", decision.operation),
            ("Condition", decision.condition or "none"),
            ("Outcome", outcome),
            ("Kind", decision.kind),
            ("Evidence", decision.source),
        ),
        tuple(sections),
    )


def _trace(decision: Any, model: LabState) -> list[Section]:
    from awsview.core.explain import trace

    found = trace(decision, model)
    sections = []
    if found.execution_events:
        sections.append(
            Section(
                "That attempt in the execution history",
                "\n".join(
                    f"{e.id} {e.type} {e.state or ''} {e.error or ''}".rstrip()
                    for e in found.execution_events
                ),
                "text",
            )
        )
    if found.log_lines:
        sections.append(
            Section(
                "The worker's log lines for that request",
                "\n".join(e.line.text for e in found.log_lines),
                "text",
            )
        )
    if found.item_present is not None:
        sections.append(
            Section(
                "The item now",
                clean(found.current_item) if found.item_present else "no item",
                "json" if found.item_present else "text",
            )
        )
    return sections


def find_verdict(model: LabState, ident: str, key: str) -> Detail | None:
    """A verdict row: ``[run:<n>#]table#key[#lifetime<i>]`` (render.verdicts' row keys)."""
    built = model.data(keys.TIMELINE)
    if built is None:
        return None
    run, rest = key.split("#", 1) if key.startswith("run:") else (None, key)
    rest, _, lifetime = rest.partition("#lifetime")
    business_keys = (
        next((ks for r, ks in built.by_run if r is not None and f"run:{r.number}" == run), None)
        if run
        else built.keys
    )
    found = next((k for k in business_keys or () if f"{k.table}#{k.key}" == rest), None)
    if found is None:
        return None
    life = (
        found.lifetimes[int(lifetime) - 1]
        if lifetime.isdigit() and int(lifetime) <= len(found.lifetimes)
        else (found.lifetimes[-1] if found.lifetimes else None)
    )
    decisions = life.decisions if life is not None else found.decisions
    shown = life.verdict if life is not None else found.verdict
    lines = [
        f"{datetime.fromtimestamp(d.time).strftime('%H:%M:%S')}  {d.operation}  {d.outcome}"
        f"{': ' + d.reason if d.reason else ''}  ({d.kind})  by {d.actor.text}"
        for d in decisions
    ]
    which = "lifetime " + (
        f"{lifetime} of {len(found.lifetimes)}, {life.end_text if life else ''}"
        if lifetime
        else f"{len(found.lifetimes)} (the latest; earlier ones count for nothing today)"
    )
    return Detail(
        f"Business key {found.key} in {found.table}",
        _fields(
            ("Verdict", shown.text),
            ("Alarm", "yes" if shown.alarm else "no"),
            ("Lifetime", which),
            ("Run", _run_name(built, decisions[0].run if decisions else 0)),
        ),
        (
            Section("Write decisions", "\n".join(lines) or "none", "text"),
            Section("Consumer results", "\n".join(found.results) or "none", "text"),
            Section("Counts", clean(dataclasses.asdict(shown))),
        ),
    )


def _run_name(built: Any, number: int) -> str:
    run = next((r for r, _ in built.by_run if r is not None and r.number == number), None)
    return f"{run.label()} ({run.reason})" if run is not None else "not known yet"


def find_retry(model: LabState, ident: str, key: str) -> Detail | None:
    from awsview.core.explain import explanations_for

    for execution, explained in explanations_for(model):
        for task in explained:
            if f"{execution}#{task.state}" == key:
                return Detail(
                    f"{execution} · {task.state}: Retry / Catch attempt by attempt",
                    _fields(("Execution", execution), ("Task", task.state)),
                    (
                        Section("Summary", task.summary, "text"),
                        Section("Attempts", clean(dataclasses.asdict(task))),
                    ),
                )
    return None
