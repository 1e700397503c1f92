"""Pure renderers: the model's snapshots → panels of rows of plain strings.

The Textual panels and `awsview dump` both show exactly these rows; nothing here imports a UI
library. Every string that came from AWS is cleaned of control characters here, once.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

from awsview.model.items import format_value
from awsview.model.loglines import clean_text
from awsview.model.snapshot import Health, Snapshot
from awsview.pollers.base import LabModel
from awsview.profiles import LabProfile

MAX_CELL = 160


@dataclass(frozen=True)
class Row:
    key: str  # the resource's identity: ARN, item key, event id…
    cells: tuple[str, ...]


@dataclass(frozen=True)
class Panel:
    name: str
    title: str
    freshness: str
    health: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    empty_text: str = "none"
    note: str = ""  # e.g. which evidence the panel stands on, and which is missing

    @property
    def body_text(self) -> str:
        if self.health in (Health.ERROR.value, Health.ABSENT.value) and not self.rows:
            return self.freshness
        return self.empty_text if not self.rows else ""


def cell(value: Any, limit: int = MAX_CELL) -> str:
    """A value as one clean line of at most ``limit`` characters."""
    if value is None:
        return "—"
    if isinstance(value, datetime):
        return value.astimezone().strftime("%H:%M:%S")
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    text = " ".join(clean_text(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Cells:
    """The cells already made from an object that has not changed since (the very same object:
    the model keeps unchanged data as such, and pollers reuse equal items). A big table or log
    feed changes a few rows per poll; rendering every shown row again was most of a refresh.
    Bounded; keeps each object it answers for alive, so an id is never mistaken for another's."""

    def __init__(self, size: int = 20_000):
        self._made: dict[int, tuple[Any, Any, tuple[str, ...]]] = {}
        self._size = size

    def get(self, obj: Any, context: Any, make: Callable[[], tuple[str, ...]]) -> tuple[str, ...]:
        hit = self._made.get(id(obj))
        if hit is not None and hit[0] is obj and hit[1] == context:
            return hit[2]
        cells = make()
        if len(self._made) >= self._size:
            del self._made[next(iter(self._made))]
        self._made[id(obj)] = (obj, context, cells)
        return cells


_ITEM_CELLS, _EXECUTION_CELLS, _LINE_CELLS = _Cells(), _Cells(), _Cells()


def _duration(start: datetime | None, stop: datetime | None) -> str:
    if start is None:
        return "—"
    end = stop or datetime.now(start.tzinfo)
    return f"{(end - start).total_seconds():.1f} s" + ("" if stop else "…")


def _panel(name: str, title: str, snapshots: list[Snapshot[Any]], columns: tuple[str, ...],
           rows: list[Row], now: float, empty_text: str = "none") -> Panel:
    """Freshness of a panel made of several snapshots: the worst one speaks for all."""
    order = [Health.ERROR, Health.STALE, Health.ABSENT, Health.OK]
    if not snapshots:
        return Panel(name, title, "none yet", "none", columns, tuple(rows), empty_text)
    worst = min(snapshots, key=lambda s: order.index(s.health))
    if worst.health is Health.OK:
        newest = max(snapshots, key=lambda s: s.fetched_at or 0)
        worst = newest
    return Panel(name, title, cell(worst.freshness(now), 300), worst.health.value, columns, tuple(rows),
                 empty_text)


def state_machines(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshot = model.get("state_machines")
    rows = []
    for m in (snapshot.data or ()) if snapshot else ():
        summary = "; ".join(m.definition.retry_catch_summary()) if m.definition else (m.definition_error or "")
        rows.append(Row(m.arn, (cell(m.name), cell(m.type), cell(m.role_arn and m.role_arn.rsplit("/", 1)[-1]),
                                cell(summary, 300))))
    return [_panel("state_machines", "State machines", [snapshot] if snapshot else [],
                   ("NAME", "TYPE", "ROLE", "RETRY / CATCH"), rows, now, "no state machines")]


def executions(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshots = model.with_prefix("executions:")
    rows = []
    for snapshot in snapshots:
        for e in snapshot.data or ():
            if e.running:  # its duration grows
                rows.append(Row(e.arn, _execution_cells(e)))
            else:
                rows.append(Row(e.arn, _EXECUTION_CELLS.get(e, None, lambda e=e: _execution_cells(e))))
    return [_panel("executions", "Executions", snapshots, ("NAME", "STATUS", "STARTED", "TOOK", "RESULT"),
                   rows, now, "no executions")]


def _execution_cells(e: Any) -> tuple[str, ...]:
    result = e.output if e.status == "SUCCEEDED" else (f"{e.error}: {e.cause}" if e.error else None)
    return (cell(e.name), cell(e.status), cell(e.started), _duration(e.started, e.stopped), cell(result))


def history(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    panels = []
    for snapshot in model.with_prefix("history:"):
        if snapshot.data is None:
            continue
        rows = []
        for event in snapshot.data.history.events:
            what = event.error or (event.payload if event.payload is not None else event.output)
            rows.append(Row(f"{snapshot.data.execution_arn}#{event.id}", (
                str(event.id), cell(event.timestamp), cell(event.type), cell(event.state),
                str(event.attempt or ""), cell(what))))
        panels.append(_panel("history", f"History · {cell(snapshot.data.execution_name)}", [snapshot],
                             ("ID", "TIME", "TYPE", "STATE", "TRY", "DETAIL"), rows, now, "no events"))
    return panels


def tables(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    panels = []
    for snapshot in model.with_prefix("table:"):
        name = snapshot.key.split(":", 1)[1]
        table = snapshot.data
        rows = []
        if table is not None:
            keys = table.key_names
            for item in table.items:
                key, attributes = _ITEM_CELLS.get(item, keys, lambda i=item: _item_cells(i, keys))
                rows.append(Row(key, (cell(key), attributes)))
        title = f"Table · {cell(name)}"
        if table is not None and table.baseline:
            title += f" · reference {cell(table.baseline)}"
        panels.append(_panel("tables", title, [snapshot], ("KEY", "ATTRIBUTES"), rows, now, "no items"))
    return panels


def _item_cells(item: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, str]:
    """The item's key (its row key too) and its other attributes, as one cell."""
    key = "/".join(format_value(item.get(k)) for k in keys)
    rest = ", ".join(f"{cell(k, 40)}={cell(format_value(v), 60)}" for k, v in sorted(item.items()) if k not in keys)
    return key, cell(rest, 300)


def queues(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshot = model.get("queues")
    rows = [Row(q.arn or q.url, (cell(q.name), str(q.visible), str(q.in_flight), str(q.delayed),
                                 cell(q.dlq_arn and f"{q.dlq_arn.rsplit(':', 1)[-1]} after {q.max_receive_count}")))
            for q in ((snapshot.data or ()) if snapshot else ())]
    return [_panel("queues", "SQS queues", [snapshot] if snapshot else [],
                   ("QUEUE", "VISIBLE", "IN FLIGHT", "DELAYED", "DLQ"), rows, now, "no queues")]


def functions(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshot = model.get("functions")
    rows = []
    for f in (snapshot.data or ()) if snapshot else ():
        rows.append(Row(f.arn, (cell(f.name), cell(f.runtime), cell(f.handler), cell(f.timeout),
                                cell(f.code_sha256 and f.code_sha256[:12]), cell(f.role and f.role.rsplit("/", 1)[-1]))))
        for m in f.mappings:
            rows.append(Row(m.uuid, (cell(f"  ↳ {m.source_arn.rsplit(':', 1)[-1]}"), "SQS" if ":sqs:" in m.source_arn else "",
                                     f"batch {m.batch_size}", cell(m.state), "", "")))
    return [_panel("functions", "Lambda functions", [snapshot] if snapshot else [],
                   ("FUNCTION", "RUNTIME", "HANDLER", "TIMEOUT", "CODE", "ROLE"), rows, now, "no functions")]


def logs(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    panels = []
    for snapshot in model.with_prefix("logs:"):
        group = snapshot.key.split(":", 1)[1]
        entries = snapshot.data.lines if snapshot.data is not None else ()
        rows = [Row(key, _LINE_CELLS.get(e, None, lambda e=e: _line_cells(e)))
                for key, e in zip(line_keys(entries), entries)]
        panels.append(_panel("logs", f"Logs · {cell(group)}", [snapshot], ("TIME", "KIND", "LINE"), rows,
                             now, "no log lines"))
    return panels


def _line_cells(e: Any) -> tuple[str, ...]:
    return (time.strftime("%H:%M:%S", time.localtime(e.timestamp_ms / 1000)), e.line.kind, cell(e.line.text, 400))


def line_keys(entries: Any) -> list[str]:
    """A key per log line that stays the same while the feed drops old lines and gains new ones:
    its event's id and how many lines of that event follow it (an event's lines arrive together
    and stay together, so neither end of the feed moves it)."""
    keys: list[str] = []
    after, following = 0, None
    for entry in reversed(entries):
        after = after + 1 if entry.event_id == following else 0
        following = entry.event_id
        keys.append(f"{entry.event_id}#-{after}")
    keys.reverse()
    return keys


def roles(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshot = model.get("roles")
    rows = []
    for r in (snapshot.data or ()) if snapshot else ():
        rows.append(Row(r.arn, (cell(r.name), cell(", ".join(r.trust_principals)), "", "")))
        for g in r.grants:
            rows.append(Row(f"{r.arn}#{g.policy}#{g.action}#{g.resource}",
                            ("", cell(g.policy), cell(f"{g.effect} {g.action}"), cell(g.resource))))
    return [_panel("roles", "IAM roles", [snapshot] if snapshot else [],
                   ("ROLE", "TRUST / POLICY", "ACTION", "RESOURCE"), rows, now, "no roles")]


def _item_text(item: Any) -> str:
    if item is None:
        return "none"
    return ", ".join(f"{k}={format_value(v, 40)}" for k, v in sorted(item.items()))


def _timeline_sources(model: LabModel) -> list[Snapshot[Any]]:
    """The timeline computes without calls of its own; a failing journal speaks for it."""
    found = [s for s in (model.get("timeline"),) if s is not None]
    journal = model.get("journal")
    if journal is not None and journal.health in (Health.STALE, Health.ERROR):
        found.append(journal)
    return found


def decisions(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshot = model.get("timeline")
    built = snapshot.data if snapshot else None
    rows = []
    flat = sorted((d for k in (built.keys if built else ()) for d in k.decisions), key=lambda d: (d.time, d.ident))
    for d in flat:
        outcome = d.outcome if d.reason is None else f"{d.outcome}: {d.reason}"
        change = "unchanged" if d.before == d.after and d.before is not None else \
            f"{_item_text(d.before)} → {_item_text(d.after)}"
        rows.append(Row(d.ident, (
            cell(datetime.fromtimestamp(d.time).strftime("%H:%M:%S")), cell(d.table), cell(d.key),
            cell(d.operation), cell(d.condition or "none"), cell(outcome), cell(d.kind),
            cell(change, 200), cell(d.actor.text))))
    panel = _panel("decisions", "Write decisions", _timeline_sources(model),
                   ("TIME", "TABLE", "KEY", "OPERATION", "CONDITION", "OUTCOME", "KIND", "BEFORE → AFTER", "BY"),
                   rows, now, "no write decisions")
    return [dataclasses.replace(panel, note=_evidence_note(built))]


def verdicts(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshot = model.get("timeline")
    built = snapshot.data if snapshot else None
    rows = [Row(f"{k.table}#{k.key}", (cell(k.table), cell(k.key), cell(k.verdict.text),
                                       "ALARM" if k.verdict.alarm else "ok",
                                       cell("; ".join(k.results), 200)))
            for k in (built.keys if built else ())]
    panel = _panel("verdicts", "Idempotency per business key", _timeline_sources(model),
                   ("TABLE", "KEY", "VERDICT", "", "CONSUMER RESULTS"), rows, now, "no business keys written")
    return [dataclasses.replace(panel, note=_evidence_note(built))]


def retries(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    from awsview.explain import explanations_for

    rows = []
    for execution, explained in sorted(explanations_for(model), key=lambda pair: pair[0]):
        for task in explained:
            rows.append(Row(f"{execution}#{task.state}", (cell(execution), cell(task.state),
                                                          cell(task.summary, 300))))
    snapshots = model.with_prefix("history:")
    return [_panel("retries", "Retry / Catch, attempt by attempt", snapshots,
                   ("EXECUTION", "TASK", "ATTEMPTS AGAINST THE DEFINITION"), rows, now, "no task attempts yet")]


def checkpoints(model: LabModel, profile: LabProfile, now: float) -> list[Panel]:
    snapshot = model.get("checkpoints")
    rows = [Row(f"{r.checkpoint.step}#{i}", (r.mark, cell(r.checkpoint.step), cell(r.checkpoint.text),
                                            cell(r.detail, 200)))
            for i, r in enumerate((snapshot.data or ()) if snapshot else ())]
    return [_panel("checkpoints", f"Checkpoints · {cell(profile.name)}", [snapshot] if snapshot else [],
                   ("", "STEP", "CHECKPOINT", "NOW"), rows, now, "no checkpoints for this lab")]


def _evidence_note(built: Any) -> str:
    if built is None:
        return ""
    text = "evidence: " + (", ".join(built.sources) or "none")
    if built.missing:
        text += " · missing: " + "; ".join(built.missing)
    return cell(text, 400)


RENDERERS: dict[str, Callable[[LabModel, LabProfile, float], list[Panel]]] = {
    "state_machines": state_machines, "executions": executions, "history": history,
    "tables": tables, "queues": queues, "functions": functions, "logs": logs, "roles": roles,
    "decisions": decisions, "verdicts": verdicts, "retries": retries,
    "checkpoints": checkpoints,
}
# The model keys (or key prefixes) each renderer reads, and nothing else but the profile and the
# clock: a screen that renders again only what changed relies on it (ui.feed).
READS: dict[str, tuple[str, ...]] = {
    "state_machines": ("state_machines",), "executions": ("executions:",), "history": ("history:",),
    "tables": ("table:",), "queues": ("queues",), "functions": ("functions",), "logs": ("logs:",),
    "roles": ("roles",), "decisions": ("timeline", "journal"), "verdicts": ("timeline", "journal"),
    "retries": ("history:", "state_machines", "executions:"), "checkpoints": ("checkpoints",),
}


def panels(model: LabModel, profile: LabProfile, now: float | None = None) -> list[Panel]:
    """Every panel of the profile, in its order."""
    now = time.time() if now is None else now
    return [p for name in profile.panels for p in RENDERERS[name](model, profile, now)]
