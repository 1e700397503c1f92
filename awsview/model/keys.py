"""Snapshot keys and panel ids, spelled in one place.

A snapshot key names what one snapshot holds: the kind alone for a kind read as one listing
(``queues``, ``state_machines``, ``timeline``), or ``<kind>:<name>`` for a kind read resource by
resource (``table:labex-q05-orders``, ``logs:/aws/lambda/worker``, ``history:<execution arn>``).

A panel id names one panel on screen: its panel kind alone, or ``<panel kind>:<subject>`` when
a kind shows one panel per resource (``tables:labex-q05-orders``, ``history:retry-order``).
Panel kinds are the registry's (`awsview.kinds`); a panel's subject is set by its renderer,
never read back out of its title.
"""

from __future__ import annotations

from typing import Any

from awsview.model.items import format_value

# Kinds read resource by resource: one snapshot per resource, keyed "<kind>:<name>".
TABLE = "table"  # table:<table name>
LOGS = "logs"  # logs:<log group>
EXECUTIONS = "executions"  # executions:<state machine name>
HISTORY = "history"  # history:<execution arn>
STREAM = "stream"  # stream:<table name>

# Kinds read as one listing: the kind is the key.
STATE_MACHINES = "state_machines"
TABLES = "tables"  # the table names under a generic profile's prefix
QUEUES = "queues"
FUNCTIONS = "functions"
ROLES = "roles"
JOURNAL = "journal"  # the emulator's write-decision journal and invocation log
TIMELINE = "timeline"
RUNS = "runs"
CHECKPOINTS = "checkpoints"

# Prefixes of the per-resource kinds, for `LabState.with_prefix` and a poller's ``after``.
TABLE_PREFIX = TABLE + ":"
LOGS_PREFIX = LOGS + ":"
EXECUTIONS_PREFIX = EXECUTIONS + ":"
HISTORY_PREFIX = HISTORY + ":"
STREAM_PREFIX = STREAM + ":"


def key(kind: str, name: str) -> str:
    """The snapshot key of one resource of a per-resource kind."""
    return f"{kind}:{name}"


def table(name: str) -> str:
    return TABLE_PREFIX + name


def logs(group: str) -> str:
    return LOGS_PREFIX + group


def executions(machine: str) -> str:
    return EXECUTIONS_PREFIX + machine


def history(execution_arn: str) -> str:
    return HISTORY_PREFIX + execution_arn


def stream(table_name: str) -> str:
    return STREAM_PREFIX + table_name


def name_of(snapshot_key: str) -> str:
    """The resource name of a per-resource key (``table:orders`` → ``orders``)."""
    return snapshot_key.split(":", 1)[1]


def panel_id(panel_kind: str, subject: str = "") -> str:
    """A panel's identity across refreshes: its kind, and what it is about when the kind shows
    one panel per resource."""
    return f"{panel_kind}:{subject}" if subject else panel_kind


def item_row_key(item: dict[str, Any], key_names: tuple[str, ...]) -> str:
    """A DynamoDB item's row key in a tables panel (its key values, "/"-joined): the renderer,
    the item change marks and the detail screen all find the item by it."""
    return "/".join(format_value(item.get(k)) for k in key_names)
