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
from collections.abc import Callable
from typing import Any

from awsview.model.fieldtypes import FieldTypeError, check_fields, field_checks

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


class PatchError(ValueError):
    """An operation that does not apply to the value it is given (a damaged or crafted file)."""


def patch(old: Any, op: Any, work: Callable[[int], None] | None = None) -> Any:
    """Apply one operation (as ``diff`` made it, or as the codec read it back).

    An operation read from a file is checked before it applies: fields that exist and values
    they may hold, splices within the sequence they cut. ``work`` is told the length of each
    sequence built, so that a reader can bound what a file makes it do.
    """
    if not isinstance(op, (tuple, list)) or not op:
        raise PatchError(f"an operation that is not one: {type(op).__name__}")
    code = op[0]
    if code == REPLACE and len(op) == 2:
        return op[1]
    if code == FIELDS and len(op) == 2:
        if not dataclasses.is_dataclass(old) or isinstance(old, type):
            raise PatchError(f"fields changed on a {type(old).__name__}, not a dataclass")
        changes = {}
        for pair in _sequence_of(op[1]):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise PatchError("a field change that is not (field, operation)")
            name, inner = pair
            checks = field_checks(type(old))
            if not isinstance(name, str) or name not in checks:
                raise PatchError(f"{type(old).__name__} has no field {str(name)[:80]!r}")
            changes[name] = patch(getattr(old, name), inner, work)
        try:
            check_fields(type(old), changes)
        except FieldTypeError as exc:
            raise PatchError(str(exc)) from None
        return (
            dataclasses.replace(old, **changes)
            if _replaceable(old, changes)
            else _rebuilt(old, changes)
        )
    if (code == SPLICE or code == EACH) and len(op) == 5:
        _, drop, head, tail, body = op
        if type(old) is not tuple and type(old) is not list:
            raise PatchError(f"a splice of a {type(old).__name__}, not a sequence")
        body = _sequence_of(body)
        if not all(type(n) is int and n >= 0 for n in (drop, head, tail)):
            raise PatchError("a splice whose bounds are not counts")
        base: Any = old[drop:] if drop else old
        end = len(base) - tail
        if drop > len(old) or head > end or (code == EACH and head + len(body) != end):
            raise PatchError(f"a splice beyond its sequence of {len(old)}")
        if work is not None:
            work(head + len(body) + tail)
        if code == EACH:
            body = [
                base[head + i] if inner is None else patch(base[head + i], inner, work)
                for i, inner in enumerate(body)
            ]
        middle: Any = tuple(body) if type(old) is tuple else list(body)
        return base[:head] + middle + base[end:]
    raise PatchError(f"unknown operation {str(code)[:80]!r}")


def _sequence_of(value: Any) -> tuple | list:
    if not isinstance(value, (tuple, list)):
        raise PatchError(f"a {type(value).__name__} where a sequence of changes belongs")
    return value


def _replaceable(old: Any, changes: dict[str, Any]) -> bool:
    fields = {f.name: f for f in dataclasses.fields(old)}
    return all(name in fields and fields[name].init for name in changes)


def _rebuilt(old: Any, changes: dict[str, Any]) -> Any:
    """A dataclass whose changed fields are not all init fields (never in the model today)."""
    copy = dataclasses.replace(old)
    for name, value in changes.items():
        object.__setattr__(copy, name, value)
    return copy
