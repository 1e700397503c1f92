"""Pure renderers: the model's snapshots → panels of rows of plain strings.

The Textual panels and `awsview dump` both show exactly these rows; nothing here imports a UI
library. Every string that came from AWS is cleaned of control characters here, once.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from awsview import kinds
from awsview.labspec import LabSpec
from awsview.model import keys, untrusted
from awsview.model.items import format_value
from awsview.model.snapshot import Health, Snapshot, age_text
from awsview.model.state import LabState

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
    subject: str = (
        ""  # what the panel is about when its kind shows one per resource (its id: keys.panel_id)
    )

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
    text = " ".join(untrusted.clean(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Cells:
    """The cells already made from an object that has not changed since (the very same object:
    the model keeps unchanged data as such, and pollers reuse equal items). A big table or log
    feed changes a few rows per poll; rendering every shown row again was most of a refresh.
    Bounded; keeps each object it answers for alive, so an id is never mistaken for another's."""

    def __init__(self, size: int = 20_000):
        self._made: dict[int, tuple[Any, Any, tuple[Any, ...]]] = {}
        self._size = size

    def get(self, obj: Any, context: Any, make: Callable[[], tuple[Any, ...]]) -> tuple[Any, ...]:
        hit = self._made.get(id(obj))
        if hit is not None and hit[0] is obj and hit[1] == context:
            return hit[2]
        cells = make()
        if len(self._made) >= self._size:
            del self._made[next(iter(self._made))]
        self._made[id(obj)] = (obj, context, cells)
        return cells


_ITEM_CELLS, _EXECUTION_CELLS, _LINE_CELLS = _Cells(), _Cells(), _Cells()


def _duration(start: datetime | None, stop: datetime | None, now: float | None = None) -> str:
    if start is None:
        return "—"
    # A running execution's age at the rendering moment (a replay's, not the wall clock's).
    end = stop or (
        datetime.fromtimestamp(now, start.tzinfo) if now is not None else datetime.now(start.tzinfo)
    )
    return f"{(end - start).total_seconds():.1f} s" + ("" if stop else "…")


def panel(
    name: str,
    title: str,
    snapshots: list[Snapshot[Any]],
    columns: tuple[str, ...],
    rows: list[Row],
    now: float,
    empty_text: str = "none",
    subject: str = "",
) -> Panel:
    """The panel of ``rows``; its freshness and health are its snapshots' worst (the newest's
    when all are ok). Every renderer makes its panels with it, in this module or outside."""
    order = [Health.ERROR, Health.STALE, Health.ABSENT, Health.OK]
    if not snapshots:
        return Panel(
            name, title, "none yet", "none", columns, tuple(rows), empty_text, subject=subject
        )
    worst = min(snapshots, key=lambda s: order.index(s.health))
    if worst.health is Health.OK:
        newest = max(snapshots, key=lambda s: s.fetched_at or 0)
        worst = newest
    return Panel(
        name,
        title,
        cell(worst.freshness(now), 300),
        worst.health.value,
        columns,
        tuple(rows),
        empty_text,
        subject=subject,
    )


def state_machines(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    snapshot = model.get(keys.STATE_MACHINES)
    rows = []
    for m in (snapshot.data or ()) if snapshot else ():
        summary = (
            "; ".join(m.definition.retry_catch_summary())
            if m.definition
            else (m.definition_error or "")
        )
        rows.append(
            Row(
                m.arn,
                (
                    cell(m.name),
                    cell(m.type),
                    cell(m.role_arn and m.role_arn.rsplit("/", 1)[-1]),
                    cell(summary, 300),
                ),
            )
        )
    return [
        panel(
            "state_machines",
            "State machines",
            [snapshot] if snapshot else [],
            ("NAME", "TYPE", "ROLE", "RETRY / CATCH"),
            rows,
            now,
            "no state machines",
        )
    ]


def executions(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    snapshots = model.with_prefix(keys.EXECUTIONS_PREFIX)
    rows = []
    for snapshot in snapshots:
        for e in snapshot.data or ():
            if e.running:  # its duration grows
                rows.append(Row(e.arn, _execution_cells(e, now)))
            else:
                rows.append(
                    Row(e.arn, _EXECUTION_CELLS.get(e, None, lambda e=e: _execution_cells(e)))
                )
    return [
        panel(
            "executions",
            "Executions",
            snapshots,
            ("NAME", "STATUS", "STARTED", "TOOK", "RESULT"),
            rows,
            now,
            "no executions",
        )
    ]


def _execution_cells(e: Any, now: float | None = None) -> tuple[str, ...]:
    """``now``: a running execution's age is taken at the rendering moment (a replay's clock)."""
    result = e.output if e.status == "SUCCEEDED" else (f"{e.error}: {e.cause}" if e.error else None)
    return (
        cell(e.name),
        cell(e.status),
        cell(e.started),
        _duration(e.started, e.stopped, now),
        cell(result),
    )


def history(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    panels = []
    for snapshot in model.with_prefix(keys.HISTORY_PREFIX):
        if snapshot.data is None:
            if (
                snapshot.health is Health.ERROR
            ):  # never read: the panel says why, it does not vanish
                name = snapshot.key.rsplit(":", 1)[-1]
                panels.append(
                    panel(
                        "history",
                        f"History · {cell(name)}",
                        [snapshot],
                        ("ID", "TIME", "TYPE", "STATE", "TRY", "DETAIL"),
                        [],
                        now,
                        "no events",
                        subject=cell(name),
                    )
                )
            continue
        rows = []
        for event in snapshot.data.history.events:
            what = event.error or (event.payload if event.payload is not None else event.output)
            rows.append(
                Row(
                    f"{snapshot.data.execution_arn}#{event.id}",
                    (
                        str(event.id),
                        cell(event.timestamp),
                        cell(event.type),
                        cell(event.state),
                        str(event.attempt or ""),
                        cell(what),
                    ),
                )
            )
        unrelated = snapshot.data.unrelated
        note = f" · {cell(unrelated, 200)}" if unrelated else ""
        panels.append(
            panel(
                "history",
                f"History · {cell(snapshot.data.execution_name)}{note}",
                [snapshot],
                ("ID", "TIME", "TYPE", "STATE", "TRY", "DETAIL"),
                rows,
                now,
                "no events",
                subject=cell(snapshot.data.execution_name),
            )
        )
    return panels


def tables(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    panels = []
    for snapshot in model.with_prefix(keys.TABLE_PREFIX):
        name = keys.name_of(snapshot.key)
        table = snapshot.data
        rows = []
        if table is not None:
            names = table.key_names
            for item in table.items:
                key, cells = _ITEM_CELLS.get(item, names, lambda i=item, n=names: _item_row(i, n))
                rows.append(Row(key, cells))
        title = f"Table · {cell(name)}"
        if table is not None and table.baseline:
            title += f" · reference {cell(table.baseline)}"
        if table is not None and (table.paged or table.truncated):
            total = f" of ~{table.item_count:,}" if table.item_count else ""
            what = f"first {len(table.items):,}" if table.truncated else f"{len(table.items):,}"
            title += f" · {what}{total} items, read in pages"
        panels.append(
            panel(
                "tables",
                title,
                [snapshot],
                ("KEY", "ATTRIBUTES"),
                rows,
                now,
                "no items",
                subject=cell(name),
            )
        )
    return panels


DEPTH_COLUMN = "5 MIN: VISIBLE / IN FLIGHT"
SPARK_CELLS = 12
SPARKS = "▂▃▄▅▆▇█"  # nonzero levels; zero is "▁", before the first sample a space


def sparklines(
    depth: tuple[tuple[float, int, int], ...],
    now: float,
    cells: int = SPARK_CELLS,
    span: float = 300.0,
) -> str:
    """Visible and in-flight counts over the last ``span`` seconds, ``cells`` buckets each, one
    scale for both; a bucket shows the highest count it saw, so a message in flight for a
    second still shows. E.g. "▁█▁█▁█ / █▁█▁█▁": a message failing and coming back."""
    if not depth:
        return "—"  # not polled by this viewer (a snapshot from elsewhere)
    start = now - span
    width = span / cells
    top = max(
        [max(v, f) for t, v, f in depth if t > start] + [max(v, f) for t, v, f in depth[:1]] + [1]
    )
    lines = []
    for series in (1, 2):
        chars = []
        for i in range(cells):
            low, high = start + i * width, start + (i + 1) * width
            seen = [p[series] for p in depth if low < p[0] < high]
            before = [p[series] for p in depth if p[0] <= low]
            if before:
                seen.append(before[-1])
            if not seen:
                chars.append(" ")  # not watched yet
                continue
            peak = max(seen)
            chars.append(
                "▁"
                if peak <= 0
                else SPARKS[min(len(SPARKS) - 1, round(peak / top * (len(SPARKS) - 1)))]
            )
        lines.append("".join(chars))
    return " / ".join(lines)


def _item_row(item: dict[str, Any], names: tuple[str, ...]) -> tuple[str, tuple[str, str]]:
    """The item's row key and its cells: the same tuple of cells while the item is unchanged."""
    key, attributes = _item_cells(item, names)
    return key, (cell(key), attributes)


def _item_cells(item: dict[str, Any], names: tuple[str, ...]) -> tuple[str, str]:
    """The item's key (its row key too) and its other attributes, as one cell."""
    key = keys.item_row_key(item, names)
    rest = ", ".join(
        f"{cell(k, 40)}={cell(format_value(v), 60)}"
        for k, v in sorted(item.items())
        if k not in names
    )
    return key, cell(rest, 300)


def queues(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    snapshot = model.get(keys.QUEUES)
    rows = [
        Row(
            q.arn or q.url,
            (
                cell(q.name),
                str(q.visible),
                str(q.in_flight),
                sparklines(q.depth, now),
                str(q.delayed),
                _oldest(q.oldest_age_s, snapshot, now),
                cell(q.dlq_arn and f"{q.dlq_arn.rsplit(':', 1)[-1]} after {q.max_receive_count}"),
            ),
        )
        for q in ((snapshot.data or ()) if snapshot else ())
    ]
    return [
        panel(
            "queues",
            "SQS queues",
            [snapshot] if snapshot else [],
            ("QUEUE", "VISIBLE", "IN FLIGHT", DEPTH_COLUMN, "DELAYED", "OLDEST", "DLQ"),
            rows,
            now,
            "no queues",
        )
    ]


def _oldest(age: float | None, snapshot: Snapshot[Any] | None, now: float) -> str:
    """The oldest message's age now: as read, plus the time since the read."""
    if age is None or snapshot is None:
        return ""
    return age_text(age + max(0.0, now - (snapshot.fetched_at or now)))


def functions(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    snapshot = model.get(keys.FUNCTIONS)
    rows = []
    for f in (snapshot.data or ()) if snapshot else ():
        rows.append(
            Row(
                f.arn,
                (
                    cell(f.name),
                    cell(f.runtime),
                    cell(f.handler),
                    cell(f.timeout),
                    cell(f.code_sha256 and f.code_sha256[:12]),
                    cell(f.role and f.role.rsplit("/", 1)[-1]),
                ),
            )
        )
        for m in f.mappings:
            rows.append(
                Row(
                    m.uuid,
                    (
                        cell(f"  ↳ {m.source_arn.rsplit(':', 1)[-1]}"),
                        "SQS" if ":sqs:" in m.source_arn else "",
                        f"batch {m.batch_size}",
                        cell(m.state),
                        "",
                        "",
                    ),
                )
            )
    return [
        panel(
            "functions",
            "Lambda functions",
            [snapshot] if snapshot else [],
            ("FUNCTION", "RUNTIME", "HANDLER", "TIMEOUT", "CODE", "ROLE"),
            rows,
            now,
            "no functions",
        )
    ]


def logs(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    panels = []
    for snapshot in model.with_prefix(keys.LOGS_PREFIX):
        group = keys.name_of(snapshot.key)
        entries = snapshot.data.lines if snapshot.data is not None else ()
        rows = [
            Row(key, _LINE_CELLS.get(e, None, lambda e=e: _line_cells(e)))
            for key, e in zip(line_keys(entries), entries)
        ]
        panels.append(
            panel(
                "logs",
                f"Logs · {cell(group)}",
                [snapshot],
                ("TIME", "KIND", "LINE"),
                rows,
                now,
                "no log lines",
                subject=cell(group),
            )
        )
    return panels


def _line_cells(e: Any) -> tuple[str, ...]:
    return (
        time.strftime("%H:%M:%S", time.localtime(e.timestamp_ms / 1000)),
        e.line.kind,
        cell(e.line.text, 400),
    )


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


def roles(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    snapshot = model.get(keys.ROLES)
    rows = []
    for r in (snapshot.data or ()) if snapshot else ():
        rows.append(Row(r.arn, (cell(r.name), cell(", ".join(r.trust_principals)), "", "")))
        for g in r.grants:
            rows.append(
                Row(
                    f"{r.arn}#{g.policy}#{g.action}#{g.resource}",
                    ("", cell(g.policy), cell(f"{g.effect} {g.action}"), cell(g.resource)),
                )
            )
    return [
        panel(
            "roles",
            "IAM roles",
            [snapshot] if snapshot else [],
            ("ROLE", "TRUST / POLICY", "ACTION", "RESOURCE"),
            rows,
            now,
            "no roles",
        )
    ]


def _item_text(item: Any) -> str:
    if item is None:
        return "none"
    return ", ".join(f"{k}={format_value(v, 40)}" for k, v in sorted(item.items()))


def _failing(snapshots: list[Snapshot[Any] | None]) -> list[Snapshot[Any]]:
    return [s for s in snapshots if s is not None and s.health in (Health.STALE, Health.ERROR)]


def _inputs_failing(snapshots: list[Snapshot[Any] | None]) -> list[Snapshot[Any]]:
    """The inputs of a derived panel that could not be read, each error saying which input it
    is: the border then reads "stale 12 s — executions: connection refused"."""
    return [
        dataclasses.replace(s, error=f"{s.kind.replace('_', ' ')}: {s.error}")
        for s in _failing(snapshots)
    ]


def _timeline_sources(model: LabState, profile: LabSpec) -> list[Snapshot[Any]]:
    """The timeline computes without calls of its own: each evidence that could not be read
    (journal, business tables, streams, log groups, executions and their histories) speaks for
    it, so "no write decisions" is only said after looking."""
    found = [s for s in (model.get(keys.TIMELINE),) if s is not None]
    evidence = [
        model.get(keys.JOURNAL),
        *(model.get(keys.table(t)) for t in profile.tables("business")),
    ]
    for prefix in (
        keys.STREAM_PREFIX,
        keys.LOGS_PREFIX,
        keys.EXECUTIONS_PREFIX,
        keys.HISTORY_PREFIX,
    ):
        evidence += model.with_prefix(prefix)
    return found + _inputs_failing(evidence)


# The write decisions' columns (with --all-runs a RUN column comes first).
DECISION_COLUMNS = (
    "TIME",
    "TABLE",
    "KEY",
    "OPERATION",
    "CONDITION",
    "OUTCOME",
    "KIND",
    "BEFORE → AFTER",
    "BY",
)


def decisions(model: LabState, profile: LabSpec, now: float, all_runs: bool = False) -> list[Panel]:
    """The current run's write decisions; with ``all_runs`` every run's, each saying its run."""
    snapshot = model.get(keys.TIMELINE)
    built = snapshot.data if snapshot else None
    rows = []
    for d in built.decisions(every_run=all_runs) if built else ():
        outcome = d.outcome if d.reason is None else f"{d.outcome}: {d.reason}"
        change = (
            "unchanged"
            if d.before == d.after and d.before is not None
            else f"{_item_text(d.before)} → {_item_text(d.after)}"
        )
        cells = (
            cell(datetime.fromtimestamp(d.time).strftime("%H:%M:%S")),
            cell(d.table),
            cell(d.key),
            cell(d.operation),
            cell(d.condition or "none"),
            cell(outcome),
            cell(d.kind),
            cell(change, 200),
            cell(d.actor.text),
        )
        rows.append(Row(d.ident, (_run_cell(built, d.run), *cells) if all_runs else cells))
    columns = DECISION_COLUMNS
    made = panel(
        "decisions",
        "Write decisions",
        _timeline_sources(model, profile),
        ("RUN", *columns) if all_runs else columns,
        rows,
        now,
        "no write decisions",
    )
    return [dataclasses.replace(made, note=_evidence_note(built, all_runs))]


def verdicts(model: LabState, profile: LabSpec, now: float, all_runs: bool = False) -> list[Panel]:
    """A verdict per business key over its latest lifetime, after a row for each earlier lifetime
    in this run; with ``all_runs`` every run's keys, each run with its own verdicts."""
    snapshot = model.get(keys.TIMELINE)
    built = snapshot.data if snapshot else None
    rows = []
    groups = built.by_run if built and all_runs else ((built.run, built.keys),) if built else ()
    for run, business_keys in groups:
        # "run:1#": no table name has a colon, so the detail screen can tell the run from the table
        prefix = f"run:{run.number}#" if all_runs and run is not None and not run.current else ""
        for k in business_keys:
            lives = k.lifetimes or ()
            for number, life in enumerate(lives[:-1], start=1):
                cells = (
                    cell(k.table),
                    cell(k.key),
                    cell(life.verdict.text),
                    f"earlier lifetime, {life.end_text}",
                    "",
                )
                rows.append(
                    Row(
                        f"{prefix}{k.table}#{k.key}#lifetime{number}",
                        (_run_cell(built, run.number if run else 0), *cells) if all_runs else cells,
                    )
                )
            cells = (
                cell(k.table),
                cell(k.key),
                cell(k.verdict.text),
                "ALARM" if k.verdict.alarm else "ok",
                cell("; ".join(k.results), 200),
            )
            rows.append(
                Row(
                    f"{prefix}{k.table}#{k.key}",
                    (_run_cell(built, run.number if run else 0), *cells) if all_runs else cells,
                )
            )
    columns = ("TABLE", "KEY", "VERDICT", "", "CONSUMER RESULTS")
    made = panel(
        "verdicts",
        "Idempotency per business key",
        _timeline_sources(model, profile),
        ("RUN", *columns) if all_runs else columns,
        rows,
        now,
        "no business keys written",
    )
    return [dataclasses.replace(made, note=_evidence_note(built, all_runs))]


def _run_cell(built: Any, number: int) -> str:
    if number == 0 and (built is None or built.run is None or built.run.number != 0):
        return "earlier"
    current = built is not None and built.run is not None and built.run.number == number
    return f"run {number}" + (" (now)" if current else "")


def _runs_note(built: Any, all_runs: bool) -> str:
    """Which run the panel shows, said once the lab has more than one here."""
    if not several_runs(built):
        return ""
    if all_runs:
        return "every run: " + ", ".join(r.label() for r, _ in built.by_run if r is not None)
    shown = f"{built.run.label()} ({built.run.reason})"
    return f"{shown} · earlier runs: r / --all-runs" if built.earlier else shown


def several_runs(built: Any) -> bool:
    """The timeline knows its run and there was (or may have been) another before it."""
    return (
        built is not None and built.run is not None and bool(built.earlier or built.run.number > 1)
    )


def retries(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    from awsview.core.explain import explanations_for

    rows = []
    for execution, explained in sorted(explanations_for(model), key=lambda pair: pair[0]):
        for task in explained:
            rows.append(
                Row(
                    f"{execution}#{task.state}",
                    (cell(execution), cell(task.state), cell(task.summary, 300)),
                )
            )
    snapshots = model.with_prefix(keys.HISTORY_PREFIX)
    return [
        panel(
            "retries",
            "Retry / Catch, attempt by attempt",
            snapshots,
            ("EXECUTION", "TASK", "ATTEMPTS AGAINST THE DEFINITION"),
            rows,
            now,
            "no task attempts yet",
        )
    ]


def checkpoints(model: LabState, profile: LabSpec, now: float) -> list[Panel]:
    snapshot = model.get(keys.CHECKPOINTS)
    rows = [
        Row(
            f"{r.checkpoint.step}#{i}",
            (r.mark, cell(r.checkpoint.step), cell(r.checkpoint.text), cell(r.detail, 200)),
        )
        for i, r in enumerate((snapshot.data or ()) if snapshot else ())
    ]
    # The panel is as fresh as what its checks read: an input that could not be read says why
    # a mark is "?"; a snapshot no check reads (an execution listing of a machine gone) does not
    # hold the panel stale. Results without their reads (an older recording) count everything.
    results = (snapshot.data or ()) if snapshot else ()
    read = {key for r in results for key in getattr(r, "reads", ())}
    inputs: list[Snapshot[Any] | None] = (
        [model.get(k) for k in sorted(read)] if read else list(model.snapshots.values())
    )
    sources = ([snapshot] + _inputs_failing(inputs)) if snapshot else []
    return [
        panel(
            "checkpoints",
            f"Checkpoints · {cell(profile.name)}",
            sources,
            ("", "STEP", "CHECKPOINT", "NOW"),
            rows,
            now,
            "no checkpoints for this lab",
            subject=cell(profile.name),
        )
    ]


def _evidence_note(built: Any, all_runs: bool = False) -> str:
    if built is None:
        return ""
    text = "evidence: " + (", ".join(built.sources) or "none")
    if built.missing:
        text += " · missing: " + "; ".join(built.missing)
    runs = _runs_note(built, all_runs)
    return cell(f"{runs} · {text}" if runs else text, 400)


def render(
    name: str, model: LabState, profile: LabSpec, now: float, all_runs: bool = False
) -> list[Panel]:
    """One renderer's panels; ``all_runs`` reaches those that group by lab run."""
    renderer = kinds.resolve(kinds.KINDS[name].renderer)
    if all_runs and name in kinds.RUN_AWARE:
        return renderer(model, profile, now, all_runs=True)
    return renderer(model, profile, now)


def panels(
    model: LabState, profile: LabSpec, now: float | None = None, all_runs: bool = False
) -> list[Panel]:
    """Every panel of the profile, in its order."""
    now = time.time() if now is None else now
    return [p for name in profile.panels for p in render(name, model, profile, now, all_runs)]
