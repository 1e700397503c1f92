"""The panel kinds: one registry entry per kind, everything the rest of the code asks of one.

Each entry says which pollers fill the model for it, which renderer turns the model into its
panels, which finder opens a row's details, which model keys the renderer reads, how a long panel
is cut (tail or head), whether its renderer's input is windowed, and which of its columns say what
a row is (kept whole) or may be left out when narrow. A lab profile names kinds from here.

Pure data, imported by every layer (profiles, core, polling, ui), so it imports none of them:
pollers, renderers and finders are named by import path and resolved on first use by the layer
that calls them (`resolve`). `test_kinds` resolves every path.

Adding a kind: an entry here, its poller (if it reads something new) and its renderer — see
CONTRIBUTING.md, "Add a panel".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from awsview.model import keys

# The timeline's panels also show the health of every evidence it was computed from.
TIMELINE_READS = (
    keys.TIMELINE,
    keys.JOURNAL,
    keys.TABLE_PREFIX,
    keys.STREAM_PREFIX,
    keys.LOGS_PREFIX,
    keys.EXECUTIONS_PREFIX,
    keys.HISTORY_PREFIX,
)


@dataclass(frozen=True)
class Kind:
    name: str  # as a profile's `panels` names it, and the panels' `name`
    renderer: str  # "module:function": (model, profile, now[, all_runs]) -> list[Panel]
    pollers: tuple[str, ...] = ()  # "module:class" of the pollers it needs, besides others'
    finder: str | None = None  # "module:function": (model, panel id, row key) -> Detail | None
    # The model keys (or key prefixes) the renderer reads, and nothing else but the profile and
    # the clock: a screen that renders again only what changed relies on it (core.feed). None:
    # rendered on every refresh (queues: the depth sparklines move with the clock).
    reads: tuple[str, ...] | None = None
    tail: bool = False  # newest last: a long panel keeps its end and cuts its start
    windowed: bool = False  # the renderer's input is cut to what can be shown (core.feed)
    run_aware: bool = False  # can show every lab run instead of the current one (`all_runs`)
    key_columns: frozenset[str] = frozenset()  # say what a row is: kept as whole as possible
    spare_columns: frozenset[str] = (
        frozenset()
    )  # a narrow panel may leave them out, rightmost first


RENDERERS = "awsview.core.render:"
FINDERS = "awsview.core.details:"
POLLERS = "awsview.polling.pollers."

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "state_machines",
            RENDERERS + "state_machines",
            (POLLERS + "stepfunctions:StateMachinePoller",),
            FINDERS + "find_machine",
            (keys.STATE_MACHINES,),
            key_columns=frozenset({"NAME", "TYPE", "ROLE"}),
        ),
        Kind(
            "executions",
            RENDERERS + "executions",
            (POLLERS + "stepfunctions:ExecutionPoller",),
            FINDERS + "find_execution",
            (keys.EXECUTIONS_PREFIX,),
            windowed=True,
            key_columns=frozenset({"NAME", "STATUS"}),
            spare_columns=frozenset({"STARTED", "TOOK"}),
        ),
        Kind(
            "history",
            RENDERERS + "history",
            (POLLERS + "stepfunctions:HistoryPoller",),
            FINDERS + "find_history_event",
            (keys.HISTORY_PREFIX,),
            key_columns=frozenset({"TYPE"}),
            spare_columns=frozenset({"ID", "TIME"}),
        ),
        Kind(
            "tables",
            RENDERERS + "tables",
            (POLLERS + "dynamodb:TablePoller",),
            FINDERS + "find_item",
            (keys.TABLE_PREFIX,),
            windowed=True,
            key_columns=frozenset({"KEY"}),
        ),
        Kind(
            "queues",
            RENDERERS + "queues",
            (POLLERS + "queues:QueuePoller",),
            FINDERS + "find_queue",
            key_columns=frozenset({"QUEUE", "VISIBLE", "IN FLIGHT", "5 MIN: VISIBLE / IN FLIGHT"}),
            spare_columns=frozenset({"DELAYED", "OLDEST", "DLQ"}),
        ),
        Kind(
            "functions",
            RENDERERS + "functions",
            (POLLERS + "functions:FunctionPoller",),
            FINDERS + "find_function",
            (keys.FUNCTIONS,),
            key_columns=frozenset({"FUNCTION", "ROLE"}),
            spare_columns=frozenset({"RUNTIME", "HANDLER", "TIMEOUT", "CODE"}),
        ),
        Kind(
            "logs",
            RENDERERS + "logs",
            (POLLERS + "logs:LogPoller",),
            FINDERS + "find_log_line",
            (keys.LOGS_PREFIX,),
            tail=True,
            windowed=True,
            key_columns=frozenset({"KIND"}),
            spare_columns=frozenset({"TIME"}),
        ),
        Kind(
            "roles",
            RENDERERS + "roles",
            (POLLERS + "iam:RolePoller",),
            FINDERS + "find_role",
            (keys.ROLES,),
            key_columns=frozenset({"ROLE"}),
        ),
        Kind(
            "decisions",
            RENDERERS + "decisions",
            (
                POLLERS + "journal:JournalPoller",
                POLLERS + "streams:StreamPoller",
                POLLERS + "timeline:TimelinePoller",
            ),
            FINDERS + "find_decision",
            TIMELINE_READS,
            tail=True,
            run_aware=True,
            key_columns=frozenset({"KEY", "OUTCOME", "KIND"}),
            spare_columns=frozenset(
                {"TIME", "TABLE", "OPERATION", "CONDITION", "BEFORE → AFTER", "BY"}
            ),
        ),
        Kind(
            "verdicts",
            RENDERERS + "verdicts",
            (POLLERS + "timeline:TimelinePoller",),
            FINDERS + "find_verdict",
            TIMELINE_READS,
            run_aware=True,
            key_columns=frozenset({"", "KEY", "VERDICT"}),
            spare_columns=frozenset({"TABLE", "CONSUMER RESULTS"}),
        ),
        Kind(
            "retries",
            RENDERERS + "retries",
            (),
            FINDERS + "find_retry",
            (keys.HISTORY_PREFIX, keys.STATE_MACHINES, keys.EXECUTIONS_PREFIX),
            key_columns=frozenset({"EXECUTION", "TASK"}),
        ),
        Kind(
            "checkpoints",
            RENDERERS + "checkpoints",
            (POLLERS + "checkpoints:CheckpointPoller",),
            None,
            (keys.CHECKPOINTS,),
            key_columns=frozenset({"", "STEP"}),
        ),
    )
}

# Derived from KINDS (by `_derive`); read them as ``kinds.NAME`` at the time of use, not copied.
NAMES: tuple[str, ...] = ()  # every kind, in the default panel order
TAIL: frozenset[str] = frozenset()
WINDOWED: frozenset[str] = frozenset()
RUN_AWARE: frozenset[str] = frozenset()
READS: dict[str, tuple[str, ...]] = {}
# Column roles across kinds: the column planner sees labels, not kinds.
KEY_COLUMNS: frozenset[str] = frozenset()
SPARE_COLUMNS: frozenset[str] = frozenset()


def _derive() -> None:
    global NAMES, TAIL, WINDOWED, RUN_AWARE, READS, KEY_COLUMNS, SPARE_COLUMNS
    NAMES = tuple(KINDS)
    TAIL = frozenset(k.name for k in KINDS.values() if k.tail)
    WINDOWED = frozenset(k.name for k in KINDS.values() if k.windowed)
    RUN_AWARE = frozenset(k.name for k in KINDS.values() if k.run_aware)
    READS = {k.name: k.reads for k in KINDS.values() if k.reads is not None}
    KEY_COLUMNS = frozenset().union(*(k.key_columns for k in KINDS.values()))
    SPARE_COLUMNS = frozenset().union(*(k.spare_columns for k in KINDS.values()))


_derive()


def register(kind: Kind) -> None:
    """Add (or replace) a kind after import: for a kind defined outside this file (a test)."""
    KINDS[kind.name] = kind
    _derive()


def unregister(name: str) -> None:
    KINDS.pop(name, None)
    _derive()


def poller_paths() -> tuple[str, ...]:
    """Every kind's pollers, each once, in registry order (a poller serving many kinds
    runs once)."""
    return tuple(dict.fromkeys(p for k in KINDS.values() for p in k.pollers))


def poller_classes() -> tuple[Any, ...]:
    return tuple(resolve(path) for path in poller_paths())


_resolved: dict[str, Any] = {}


def resolve(path: str) -> Any:
    """The object an entry names ("package.module:attribute"), imported on first use."""
    found = _resolved.get(path)
    if found is None:
        module, _, attribute = path.partition(":")
        found = _resolved[path] = getattr(importlib.import_module(module), attribute)
    return found
