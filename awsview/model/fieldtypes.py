"""What a dataclass field of the model may hold, as classes ``isinstance`` can check.

A recording is untrusted: the codec fills dataclasses field by field and a patch replaces
fields, so each value is checked against its field's annotation before it reaches a renderer
(a string where a float is expected, an attribute that is not a field, fail later and far from
the file otherwise). The check is shallow — the outer class of each value — because values
inside were checked when they were built, bottom up.

Pure: no UI library, no AWS call.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

_ANY: tuple[type, ...] = (object,)


class FieldTypeError(ValueError):
    """A value that its dataclass field cannot hold."""


@cache
def field_checks(cls: type) -> dict[str, tuple[type, ...]]:
    """Each field of ``cls`` and the classes its values may be (``object``: anything)."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that does not resolve here: nothing to check against
        hints = {}
    return {f.name: _classes(hints.get(f.name, Any)) for f in dataclasses.fields(cls)}


def _classes(annotation: Any) -> tuple[type, ...]:
    if annotation is Any or isinstance(annotation, typing.TypeVar):
        return _ANY
    if annotation is None or annotation is type(None):
        return (type(None),)
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        found: list[type] = []
        for arg in typing.get_args(annotation):
            classes = _classes(arg)
            if classes == _ANY:
                return _ANY
            found += classes
        return tuple(dict.fromkeys(found))
    if origin is typing.Literal:
        return tuple(dict.fromkeys(type(v) for v in typing.get_args(annotation)))
    if origin is not None:
        annotation = origin
    if annotation is float:
        return (float, int)  # an int where a float is annotated is a number all the same
    if annotation is Callable:
        return _ANY
    if isinstance(annotation, type):
        return (annotation,)
    return _ANY


def check_fields(cls: type, values: dict[str, Any]) -> None:
    """Raise FieldTypeError unless every name is a field of ``cls`` holding a value it may."""
    checks = field_checks(cls)
    for name, value in values.items():
        allowed = checks.get(name) if isinstance(name, str) else None
        if allowed is None:
            raise FieldTypeError(f"{cls.__name__} has no field {name!r}")
        if not isinstance(value, allowed):
            raise FieldTypeError(
                f"{cls.__name__}.{name} cannot be {type(value).__name__} "
                f"(it is {' or '.join(c.__name__ for c in allowed)})"
            )
