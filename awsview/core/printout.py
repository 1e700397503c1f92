"""What `awsview dump` prints (and `dump --from` of a recording): the panels as plain text or
JSON, the state machine graphs. Pure: the model in, strings and JSON-able values out."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any

from awsview import labspec
from awsview.aws.session import Target
from awsview.core import textgrid
from awsview.core.render import Panel, panels
from awsview.model import keys, untrusted
from awsview.model.state import LabState

# Returned as they are: most of a dump is strings and numbers, so they are recognised first, by
# their exact type (a str- or int-valued Enum's members are not these types: their value is
# taken below).
_PLAIN = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass's public field names


def to_jsonable(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if kind is tuple or kind is list:
        return [to_jsonable(v) for v in value]
    names = _FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(kind):
        names = _FIELDS[kind] = tuple(
            f.name for f in dataclasses.fields(kind) if not f.name.startswith("_")
        )
    if names is not None:
        return {name: to_jsonable(getattr(value, name)) for name in names}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_jsonable(v) for v in value), key=lambda v: json.dumps(v, default=str))
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def as_json(
    profile: labspec.LabSpec,
    model: LabState,
    target: Target | str,
    account: str,
    now: float,
    all_runs: bool = False,
) -> dict[str, Any]:
    """Every panel and every snapshot; the timeline's decisions each say their lab run (``run``),
    the earlier runs' under ``earlier``, the runs themselves under ``runs``. ``target`` is what
    was really used (a Target is described as configured)."""
    from awsview.core.progress import progress

    return {
        "lab": profile.name,
        "title": profile.title,
        "target": _where(target),
        "account": account,
        "step": progress(tuple(model.data(keys.CHECKPOINTS, ()))).text or None,
        "panels": [to_jsonable(p) for p in panels(model, profile, now, all_runs)],
        "snapshots": {
            key: {**s.to_json(now), "data": to_jsonable(s.data)}
            for key, s in sorted(model.snapshots.items())
        },
    }


def _where(target: Target | str) -> str:
    return target if isinstance(target, str) else target.describe()


# (labels, rows, available cells) -> (shown column indexes, a limit per shown column or None,
# what to say instead of the columns left out): the viewer's own column planning, handed down
# by the command so that `dump` leaves out the columns the viewer would.
Planner = Callable[
    [tuple[str, ...], list[tuple[str, ...]], int],
    tuple[tuple[int, ...], tuple[int | None, ...], str],
]
INDENT = "   "


def as_text(
    profile: labspec.LabSpec,
    model: LabState,
    target: Target | str,
    account: str,
    now: float,
    all_runs: bool = False,
    width: int = 0,
    plan: Planner | None = None,
) -> str:
    """The panels as text; with ``width`` > 0 and a ``plan``, each table planned to fit that
    many cells and every line cut to it (0: lines as long as their cells)."""
    from awsview.core.progress import progress
    from awsview.core.render import several_runs

    step = progress(tuple(model.data(keys.CHECKPOINTS, ()))).text
    built = model.data(keys.TIMELINE)
    if several_runs(built):
        step = " · ".join(p for p in (step, built.run.label()) if p)
    out = [
        f"AWS View — {profile.name}: {profile.title}",
        " · ".join(p for p in (f"{_where(target)} · account {account}", step) if p),
    ]  # a recording's profile, target and account are its own words: cleaned below
    for panel in panels(model, profile, now, all_runs):
        out.append("")
        out.append(f"== {panel.title}  [{panel.freshness}]")
        if panel.note:
            out.append(f"   {panel.note}")
        if width > 0 and plan is not None:
            out.extend(_fitted_table(panel, width - len(INDENT), plan))
        else:
            out.extend(_table(panel))
    lines = (untrusted.clean(line) for line in out)
    if width > 0:
        lines = (textgrid.cut(line, width) for line in lines)
    return "\n".join(lines) + "\n"


def _fitted_table(panel: Panel, available: int, plan: Planner) -> list[str]:
    if not panel.rows:
        return [f"{INDENT}({panel.body_text})"]
    rows = [tuple(textgrid.clean(c) for c in row.cells) for row in panel.rows]
    labels = tuple(textgrid.clean(c) for c in panel.columns)
    shown, limits, caption = plan(labels, rows, available)
    texts = [
        [textgrid.cut(cells[i], limit) if limit else cells[i] for i, limit in zip(shown, limits)]
        for cells in [labels, *rows]
    ]
    widths = [max(textgrid.cells(t[k]) for t in texts) for k in range(len(shown))]

    def line(cells: list[str]) -> str:
        padded = (c + " " * (w - textgrid.cells(c)) for c, w in zip(cells, widths))
        return INDENT + "  ".join(padded).rstrip()

    return ([f"{INDENT}{caption}"] if caption else []) + [line(t) for t in texts]


def _table(panel: Panel) -> list[str]:
    if not panel.rows:
        return [f"   ({panel.body_text})"]
    widths = [len(c) for c in panel.columns]
    for row in panel.rows:
        widths = [max(w, min(len(c), 60)) for w, c in zip(widths, row.cells)]

    def line(cells: tuple[str, ...]) -> str:
        return "   " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    return [line(panel.columns)] + [line(row.cells) for row in panel.rows]


def graphs_text(model: LabState, width: int) -> str:
    """`dump --graph`: each state machine drawn, then each of its executions drawn on it."""
    from awsview.core.graph import drawings, text

    out = []
    for drawing in drawings(model):
        out += ["", f"== Graph · {untrusted.line(drawing.title)}", text(drawing.lines(width))]
    return "\n".join(out or ["", "(no state machines)"]) + "\n"


def graphs_json(model: LabState, width: int) -> list[dict[str, Any]]:
    from awsview.core.graph import drawings

    return [
        {
            "machine": d.machine,
            "execution": d.execution,
            "status": d.run.status if d.run is not None else None,
            "states": {name: to_jsonable(s) for name, s in d.run.states.items()} if d.run else {},
            "lines": [line.text for line in d.lines(width)],
        }
        for d in drawings(model)
    ]
