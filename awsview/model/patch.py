"""Structural differences between two versions of a model value, and applying them.

A recording keeps each snapshot change as such a difference, so a log feed that gained a line
costs that line, not the feed. Pure and immutable: ``patch(old, diff(old, new)) == new``, with
the same types, for every value the codec can hold.

Operations (tuples, packed by the codec):
- ``("=", value)``: the new value whole;
- ``(".", ((field, op), ...))``: a dataclass of the same type, the fields that changed;
- ``("[", drop, head, tail, items)``: a tuple or list: drop ``drop`` elements from the front
  (a capped feed losing its oldest lines), keep ``head`` elements and ``tail`` elements of
  what is left and put ``items`` between them;
- ``("<", drop, head, tail, ops)``: the same, when as many elements replace as were there and
  each is a dataclass of the same type: one operation per element instead of the element.
"""

from __future__ import annotations

import dataclasses
from typing import Any

WINDOW_SEARCH = 1024  # how far into the old sequence a dropped front is looked for
REPLACE = "="
FIELDS = "."
SPLICE = "["
EACH = "<"


def same(a: Any, b: Any) -> bool:
    """Equal and of the same type (1 and True, or 1 and 1.0, are different values here)."""
    return a is b or (type(a) is type(b) and a == b)


def diff(old: Any, new: Any) -> tuple | None:
    """The operation that turns ``old`` into ``new``; None when they are the same value."""
    if same(old, new):
        return None
    kind = type(new)
    if kind is type(old):
        if dataclasses.is_dataclass(new) and not isinstance(new, type):
            changed = []
            for f in dataclasses.fields(new):
                if not f.compare:
                    continue
                op = diff(getattr(old, f.name), getattr(new, f.name))
                if op is not None:
                    changed.append((f.name, op))
            return (FIELDS, tuple(changed)) if changed else (REPLACE, new)
        if kind is tuple or kind is list:
            return _sequence(old, new)
    return (REPLACE, new)


def _sequence(old: Any, new: Any) -> tuple:
    drop = 0
    if old and new and new[0] is not old[0]:
        # A capped feed drops its oldest entries as new ones arrive: find where it now starts.
        first = new[0]
        for k in range(1, min(len(old), WINDOW_SEARCH)):
            if old[k] is first:
                drop = k
                break
    base = old[drop:] if drop else old
    n_old, n_new = len(base), len(new)
    head = 0
    limit = min(n_old, n_new)
    while head < limit and same(base[head], new[head]):
        head += 1
    tail = 0
    while tail < limit - head and same(base[n_old - 1 - tail], new[n_new - 1 - tail]):
        tail += 1
    gone = base[head : n_old - tail]
    came = new[head : n_new - tail]
    if (
        gone
        and len(gone) == len(came)
        and all(dataclasses.is_dataclass(a) and type(a) is type(b) for a, b in zip(gone, came))
    ):
        return (EACH, drop, head, tail, tuple(diff(a, b) for a, b in zip(gone, came)))
    return (SPLICE, drop, head, tail, tuple(came))


def patch(old: Any, op: Any) -> Any:
    """Apply one operation (as ``diff`` made it, or as the codec read it back)."""
    code = op[0]
    if code == REPLACE:
        return op[1]
    if code == FIELDS:
        changes = {name: patch(getattr(old, name), inner) for name, inner in op[1]}
        return (
            dataclasses.replace(old, **changes)
            if _replaceable(old, changes)
            else _rebuilt(old, changes)
        )
    if code == SPLICE or code == EACH:
        _, drop, head, tail, body = op
        base = old[drop:] if drop else old
        end = len(base) - tail
        if code == EACH:
            body = [
                base[head + i] if inner is None else patch(base[head + i], inner)
                for i, inner in enumerate(body)
            ]
        middle = tuple(body) if type(old) is tuple else list(body)
        return base[:head] + middle + base[end:]
    raise ValueError(f"unknown operation {code!r}")


def _replaceable(old: Any, changes: dict[str, Any]) -> bool:
    fields = {f.name: f for f in dataclasses.fields(old)}
    return all(name in fields and fields[name].init for name in changes)


def _rebuilt(old: Any, changes: dict[str, Any]) -> Any:
    """A dataclass whose changed fields are not all init fields (never in the model today)."""
    copy = dataclasses.replace(old)
    for name, value in changes.items():
        object.__setattr__(copy, name, value)
    return copy
