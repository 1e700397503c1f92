"""How a cell reads at a glance: its tone, the marked attributes, and column widths that fit.

Pure functions; the panel widget turns their answers into styled `Text`. `plain` is how every
other string from AWS (titles, freshness, errors, banners) reaches the screen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.cells import cell_len
from textual.content import Content

from awsview import kinds
from awsview.model import untrusted
from awsview.ui.compat import alive  # noqa: F401  (the widgets import it from here)

GOOD = frozenset(
    {
        "SUCCEEDED",
        "Accepted",
        "Enabled",
        "ACTIVE",
        "RESULT",
        "TaskSucceeded",
        "ExecutionSucceeded",
        "unchanged",
        "ok",
        "✓",
    }
)
BAD = frozenset(
    {
        "FAILED",
        "TIMED_OUT",
        "ABORTED",
        "ERROR",
        "TaskFailed",
        "ExecutionFailed",
        "LambdaFunctionFailed",
        "TaskTimedOut",
        "FailStateEntered",
        "Disabled",
        "ALARM",
        "✗",
    }
)
BUSY = frozenset({"RUNNING", "Creating", "Enabling", "Disabling", "Updating", "Deleting"})
DIM = frozenset({"·"})  # a checkpoint not reached yet: nothing is wrong with it
# A column is never cut narrower than this (or its natural width): "19:29…" still says when,
# "19:2…" does not.
MIN_WIDTH = 6
KEY_WIDTH = (
    42  # a key column is cut no narrower than this: "Rejected: ConditionalCheckFailedException"
)
# Columns that say what a row *is* (kept as whole as possible when a panel is narrow) and columns
# a narrow panel may leave out (the detail screen still shows them): each kind's, in the registry
# (kinds.KEY_COLUMNS, kinds.SPARE_COLUMNS).
_NEXT_ATTRIBUTE = re.compile(r", (?=[^,=\s]+=)")


def plain(text: str, keep_newlines: bool = False) -> Content:
    """Text to show as written: no markup parsed, no terminal control characters left."""
    return Content(untrusted.clean(text, keep_newlines=keep_newlines))


def tone(value: str) -> str | None:
    """The meaning of a cell's value at a glance: good, bad, warn, busy, dim or nothing."""
    if value in GOOD:
        return "good"
    if value in BAD:
        return "bad"
    if value in BUSY:
        return "busy"
    if value in DIM:
        return "dim"
    if value.startswith(("Rejected", "stale", "changed")):
        return "warn"
    return None


def attribute_spans(text: str, names: frozenset[str]) -> list[tuple[int, int]]:
    """Where ``name=value`` of each named attribute sits in an ``a=1, b=2`` cell."""
    spans = []
    for name in names:
        for match in re.finditer(rf"(?:^|, ){re.escape(name)}=", text):
            start = match.start() + (2 if match.group().startswith(", ") else 0)
            following = _NEXT_ATTRIBUTE.search(text, match.end())
            spans.append((start, following.start() if following else len(text)))
    return spans


def natural_widths(labels: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[int]:
    """The width each column would take to show every cell whole."""
    widths = [cell_len(label) for label in labels]
    for cells in rows:
        for i, value in enumerate(cells[: len(widths)]):
            width = cell_len(value)
            if width > widths[i]:
                widths[i] = width
    return widths


@dataclass(frozen=True)
class ColumnPlan:
    """Which columns a table shows, cut to which width, and what it says instead of the rest."""

    shown: tuple[int, ...]  # indexes into the panel's columns
    limits: tuple[int | None, ...]  # per shown column
    same: tuple[tuple[str, str], ...] = ()  # (label, value) of columns equal on every row
    left_out: tuple[str, ...] = ()  # labels of columns left out for room

    @property
    def caption(self) -> str:
        parts = [f"{label or '·'} {value}" for label, value in self.same]
        if self.left_out:
            parts.append(f"not shown: {', '.join(self.left_out)} (enter shows a row whole)")
        return " · ".join(parts)


def plan_columns(
    labels: tuple[str, ...],
    rows: list[tuple[str, ...]],
    available: int,
    natural: list[int] | None = None,
    padding: int = 2,
) -> ColumnPlan:
    """Fit a table into ``available`` cells.

    All columns whole if they fit. Otherwise, in turn: columns with one value on every row say
    it once in the caption; spare columns (`kinds.SPARE_COLUMNS`) are left out, rightmost first,
    while the rest cannot fit at their floors; the widest columns are cut to fit, key columns
    (`kinds.KEY_COLUMNS`) no narrower than `KEY_WIDTH`.
    """
    natural = natural if natural is not None else natural_widths(labels, rows)
    everything = tuple(range(len(labels)))
    if available <= 0 or sum(natural) + padding * len(natural) <= available:
        return ColumnPlan(everything, tuple(None for _ in labels))
    shown = list(everything)
    same = []
    if len(rows) >= 2:
        for i in everything:
            values = {cells[i] for cells in rows if i < len(cells)}
            if len(values) == 1 and len(shown) > 1 and labels[i] not in kinds.KEY_COLUMNS:
                same.append((labels[i], values.pop()))
                shown.remove(i)
    floors = {i: _floor(labels[i], natural[i]) for i in shown}
    left_out = []
    for i in reversed(list(shown)):
        if sum(floors[j] + padding for j in shown) <= available:
            break
        if labels[i] in kinds.SPARE_COLUMNS and len(shown) > 1:
            shown.remove(i)
            left_out.insert(0, labels[i])
    limits = fit_widths([natural[i] for i in shown], [floors[i] for i in shown], available, padding)
    return ColumnPlan(tuple(shown), limits, tuple(same), tuple(left_out))


def still_fits(
    plan: ColumnPlan,
    labels: tuple[str, ...],
    rows: list[tuple[str, ...]],
    available: int,
    natural: list[int],
    padding: int = 2,
) -> bool:
    """Whether ``plan`` still holds for these rows: the same columns say one value, and the rows
    fit. Keeping a plan that holds spares the table a rebuild whenever a cell grows or shrinks."""
    if len(plan.shown) + len(plan.same) + len(plan.left_out) != len(labels) or available <= 0:
        return False
    for label, value in plan.same:
        i = labels.index(label)
        if len(rows) < 2 or any(cells[i] != value for cells in rows if i < len(cells)):
            return False
    used = sum(
        min(natural[i], limit) if limit else natural[i] for i, limit in zip(plan.shown, plan.limits)
    )
    return used + padding * len(plan.shown) <= available


def _floor(label: str, natural: int) -> int:
    if label in kinds.KEY_COLUMNS:
        return min(natural, KEY_WIDTH)
    return min(natural, max(MIN_WIDTH, min(cell_len(label), 12)))


def fit_widths(
    natural: list[int], floors: list[int], available: int, padding: int = 2
) -> tuple[int | None, ...]:
    """A limit per column (None: no limit) so the row fits ``available`` cells.

    The widest columns give way first: one common cap is lowered until everything fits, but no
    column is cut below its floor. If even that does not fit, the floors stand (the table then
    scrolls sideways).
    """
    room = available - padding * len(natural)
    if sum(natural) <= room:
        return tuple(None for _ in natural)
    low, high = 0, max(natural)
    while low < high:  # the largest cap whose total still fits
        cap = (low + high + 1) // 2
        if sum(max(f, min(w, cap)) for w, f in zip(natural, floors)) <= room:
            low = cap
        else:
            high = cap - 1
    return tuple(max(f, min(w, low)) if w > max(f, low) else None for w, f in zip(natural, floors))
