"""What a row is, for `y` (copy it), `Y` (copy the `aws …` command that reads it) and `o` (open
it in the AWS console): found in the model by the row's key, as the detail screen finds it.

Pure: the model and the row in, strings out. The values are the resource's own (an ARN, a key,
an item as JSON), uncleaned: what is copied must be what AWS holds. Whoever shows one on a
screen cleans it first (awsview.model.untrusted).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from awsview.core.render import Panel
from awsview.model import keys
from awsview.model.items import item_to_wire, plain_to_json
from awsview.model.resources import Function, LogFeed, Queue, Role, StateMachine, Table
from awsview.model.state import LabState


@dataclass(frozen=True)
class Where:
    """Where the rows were read: the region, and the endpoint when it is not AWS."""

    region: str | None = None
    endpoint_url: str | None = None
    profile: str | None = None  # the AWS configuration profile, when one was named


@dataclass(frozen=True)
class RowRef:
    what: str  # what `value` is, for the line that says what was copied: "ARN", "item as JSON"
    value: str
    # The `aws …` command's words (service, operation and its arguments), without region or
    # endpoint: `command` adds them.
    reads: tuple[str, ...] = ()
    console: str | None = None  # the console page's path and fragment, after the region's host

    def command(self, where: Where) -> str | None:
        if not self.reads:
            return None
        words = ["aws", *self.reads]
        if where.profile:
            words += ["--profile", where.profile]
        if where.region:
            words += ["--region", where.region]
        if where.endpoint_url:
            words += ["--endpoint-url", where.endpoint_url]
        return shlex.join(words)

    def console_url(self, where: Where) -> str | None:
        """The page in the AWS console; None for a row the console has no page for, or an
        endpoint that is not AWS (the emulator has no console)."""
        if self.console is None or where.endpoint_url or not where.region:
            return None
        region = quote(where.region, safe="")
        if self.console.startswith("iam/"):  # IAM is global: one console for every region
            return f"https://console.aws.amazon.com/{self.console}"
        page, _, fragment = self.console.partition("#")
        return f"https://{region}.console.aws.amazon.com/{page}?region={region}#{fragment}"


def _q(value: str) -> str:
    return quote(value, safe="")


def _logs_q(value: str) -> str:
    """CloudWatch's console escapes a log group or stream twice, with `$` for `%`."""
    return quote(quote(value, safe=""), safe="").replace("%", "$")


def _json(value: Any) -> str:
    return json.dumps(plain_to_json(value), ensure_ascii=False, sort_keys=True, default=str)


def refer(model: LabState, panel: Panel, ident: str, key: str) -> RowRef:
    """What the row ``key`` of ``panel`` is; a row nothing more is known of is its cells."""
    finder = _FINDERS.get(panel.name)
    try:
        found = finder(model, ident, key) if finder else None
    except Exception:  # like the detail screen: the core's shapes evolve, a key must not crash
        found = None
    if found is not None:
        return found
    row = next((r for r in panel.rows if r.key == key), None)
    cells = "\t".join(row.cells) if row is not None else key
    return RowRef("row", cells)


def _machine(model: LabState, ident: str, key: str) -> RowRef | None:
    for m in model.data(keys.STATE_MACHINES, ()):
        if isinstance(m, StateMachine) and m.arn == key:
            return RowRef(
                "state machine ARN",
                m.arn,
                ("stepfunctions", "describe-state-machine", "--state-machine-arn", m.arn),
                f"states/home#/statemachines/view/{_q(m.arn)}",
            )
    return None


def _execution(model: LabState, ident: str, key: str) -> RowRef | None:
    if not key.startswith("arn:"):
        return None
    return RowRef(
        "execution ARN",
        key,
        ("stepfunctions", "describe-execution", "--execution-arn", key),
        f"states/home#/v2/executions/details/{_q(key)}",
    )


def _history_event(model: LabState, ident: str, key: str) -> RowRef | None:
    arn, _, event_id = key.rpartition("#")
    if not arn.startswith("arn:"):
        return None
    return RowRef(
        "history event",
        f"{arn} event {event_id}",
        ("stepfunctions", "get-execution-history", "--execution-arn", arn),
        f"states/home#/v2/executions/details/{_q(arn)}",
    )


def _item(model: LabState, ident: str, key: str) -> RowRef | None:
    name = keys.name_of(ident) if ":" in ident else ""
    table = model.data(keys.table(name))
    if not isinstance(table, Table):
        return None
    item = next((i for i in table.items if keys.item_row_key(i, table.key_names) == key), None)
    if item is None:
        return None
    primary = {k: item[k] for k in table.key_names if k in item}
    wire = json.dumps(item_to_wire(primary), ensure_ascii=False, sort_keys=True)
    values = [str(plain_to_json(item[k])) for k in table.key_names if k in item]
    fragment = f"edit-item?itemMode=2&route=ROUTE_ITEM_EXPLORER&table={_q(name)}"
    for field, value in zip(("pk", "sk"), values):
        fragment += f"&{field}={_q(value)}"
    return RowRef(
        "item as JSON",
        _json(item),
        ("dynamodb", "get-item", "--table-name", name, "--key", wire),
        f"dynamodbv2/home#{fragment}",
    )


def _queue(model: LabState, ident: str, key: str) -> RowRef | None:
    for q in model.data(keys.QUEUES, ()):
        if isinstance(q, Queue) and (q.arn or q.url) == key:
            return RowRef(
                "queue URL",
                q.url,
                ("sqs", "get-queue-attributes", "--queue-url", q.url, "--attribute-names", "All"),
                f"sqs/v3/home#/queues/{_q(q.url)}",
            )
    return None


def _function(model: LabState, ident: str, key: str) -> RowRef | None:
    for f in model.data(keys.FUNCTIONS, ()):
        if not isinstance(f, Function):
            continue
        if f.arn == key:
            return RowRef(
                "function ARN",
                f.arn,
                ("lambda", "get-function-configuration", "--function-name", f.name),
                f"lambda/home#/functions/{_q(f.name)}",
            )
        for m in f.mappings:
            if m.uuid == key:
                return RowRef(
                    "event source mapping UUID",
                    m.uuid,
                    ("lambda", "get-event-source-mapping", "--uuid", m.uuid),
                    f"lambda/home#/functions/{_q(f.name)}",
                )
    return None


def _log_line(model: LabState, ident: str, key: str) -> RowRef | None:
    group = ident.split(":", 1)[1] if ":" in ident else ""
    feed = model.data(keys.logs(group))
    event_id, _, after = key.rpartition("#-")
    if not isinstance(feed, LogFeed) or not after.isdigit():
        return None
    lines = [e for e in feed.lines if e.event_id == event_id]
    if int(after) >= len(lines):
        return None
    entry = lines[-1 - int(after)]
    return RowRef(
        "log line",
        entry.line.text,
        ("logs", "get-log-events", "--log-group-name", group, "--log-stream-name", entry.stream),
        f"cloudwatch/home#logsV2:log-groups/log-group/{_logs_q(group)}"
        f"/log-events/{_logs_q(entry.stream)}",
    )


def _role(model: LabState, ident: str, key: str) -> RowRef | None:
    for r in model.data(keys.ROLES, ()):
        if isinstance(r, Role) and key.startswith(r.arn):
            return RowRef(
                "role ARN",
                r.arn,
                ("iam", "get-role", "--role-name", r.name),
                f"iam/home#/roles/details/{_q(r.name)}",
            )
    return None


def _decision(model: LabState, ident: str, key: str) -> RowRef | None:
    built = model.data(keys.TIMELINE)
    decision = next(
        (d for d in (built.decisions(every_run=True) if built else ()) if d.ident == key), None
    )
    if decision is None:
        return None
    from awsview.core.printout import to_jsonable  # printout brings the AWS session module

    value = json.dumps(to_jsonable(decision), ensure_ascii=False, sort_keys=True, default=str)
    table = model.data(keys.table(decision.table))
    item = decision.after if decision.after is not None else decision.before
    reads: tuple[str, ...] = ()
    if isinstance(table, Table) and item is not None:
        primary = {k: item[k] for k in table.key_names if k in item}
        wire = json.dumps(item_to_wire(primary), ensure_ascii=False, sort_keys=True)
        reads = ("dynamodb", "get-item", "--table-name", decision.table, "--key", wire)
    return RowRef("write decision as JSON", value, reads)


_FINDERS: dict[str, Callable[[LabState, str, str], RowRef | None]] = {
    "state_machines": _machine,
    "executions": _execution,
    "history": _history_event,
    "tables": _item,
    "queues": _queue,
    "functions": _function,
    "logs": _log_line,
    "roles": _role,
    "decisions": _decision,
}
