"""How a cell reads at a glance: its tone, the marked attributes, and column widths that fit.

Pure functions; the panel widget turns their answers into styled `Text`.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

GOOD = frozenset({"SUCCEEDED", "Accepted", "Enabled", "ACTIVE", "RESULT", "TaskSucceeded",
                  "ExecutionSucceeded", "unchanged", "ok"})
BAD = frozenset({"FAILED", "TIMED_OUT", "ABORTED", "ERROR", "TaskFailed", "ExecutionFailed",
                 "LambdaFunctionFailed", "TaskTimedOut", "FailStateEntered", "Disabled", "ALARM"})
BUSY = frozenset({"RUNNING", "Creating", "Enabling", "Disabling", "Updating", "Deleting"})
MIN_WIDTH = 4  # a column is never cut narrower than this (or its label, if shorter)
_NEXT_ATTRIBUTE = re.compile(r", (?=[^,=\s]+=)")


def tone(value: str) -> str | None:
    """The meaning of a cell's value at a glance: good, bad, warn, busy or nothing."""
    if value in GOOD:
        return "good"
    if value in BAD:
        return "bad"
    if value in BUSY:
        return "busy"
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


def fit_widths(natural: list[int], labels: tuple[str, ...], available: int,
               padding: int = 2) -> tuple[int | None, ...]:
    """A limit per column (None: no limit) so the row fits ``available`` cells.

    The widest columns give way first: one common cap is lowered until everything fits, but no
    column is cut below its label or `MIN_WIDTH`. If even that does not fit, those floors stand
    (the table then scrolls sideways).
    """
    room = available - padding * len(natural)
    if room <= 0 or sum(natural) <= room:
        return tuple(None for _ in natural)
    floors = [min(w, max(MIN_WIDTH, min(cell_len(label), 12))) for w, label in zip(natural, labels)]
    low, high = 0, max(natural)
    while low < high:  # the largest cap whose total still fits
        cap = (low + high + 1) // 2
        if sum(max(f, min(w, cap)) for w, f in zip(natural, floors)) <= room:
            low = cap
        else:
            high = cap - 1
    return tuple(max(f, min(w, low)) if w > max(f, low) else None for w, f in zip(natural, floors))
