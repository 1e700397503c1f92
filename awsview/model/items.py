"""DynamoDB items: wire format (`{"N": "4"}`) to plain Python values, display, diff and JSON.

Numbers never become floats: integral N values are ints, the rest `decimal.Decimal`, so
`total_cents` 600 stays exactly 600. Sets become frozensets, binary becomes bytes, and a type
tag this module does not know is kept as `{tag: value}` rather than raising.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from awsview.model import untrusted

BINARY_PREVIEW = 24  # base64 characters shown for a binary value
DISPLAY_LIMIT = 200  # characters of format_value output by default


@dataclass(frozen=True)
class ItemDiff:
    """What changed between two versions of an item, attribute names sorted."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[tuple[str, Any, Any], ...] = ()  # (name, old, new)

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed or self.changed)


def to_plain(value: Any) -> Any:
    """One attribute value from wire format to a plain value."""
    if not isinstance(value, Mapping) or len(value) != 1:
        return dict(value) if isinstance(value, Mapping) else value
    ((tag, raw),) = value.items()
    try:
        if tag == "S":
            return _text(raw)
        if tag == "N":
            return _number(raw)
        if tag == "BOOL" and isinstance(raw, bool):
            return raw
        if tag == "NULL":
            return None
        if tag == "M" and isinstance(raw, Mapping):
            return {str(k): to_plain(v) for k, v in raw.items()}
        if tag == "L" and isinstance(raw, (list, tuple)):
            return [to_plain(v) for v in raw]
        if tag == "B":
            return _binary(raw)
        if tag == "SS" and isinstance(raw, (list, tuple)):
            return frozenset(_text(v) for v in raw)
        if tag == "NS" and isinstance(raw, (list, tuple)):
            return frozenset(_number(v) for v in raw)
        if tag == "BS" and isinstance(raw, (list, tuple)):
            return frozenset(_binary(v) for v in raw)
    except (ValueError, TypeError):
        pass
    return {tag: raw}


def item_to_plain(item: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A whole wire-format item (attribute name → value) as plain values."""
    if item is None:
        return None
    return {str(name): to_plain(value) for name, value in item.items()}


def to_wire(value: Any) -> dict[str, Any]:
    """A plain value in wire format, e.g. to build a GetItem key; bool is never taken for N."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, (int, Decimal)):
        return {"N": _number_text(Decimal(value))}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, (bytes, bytearray)):
        return {"B": bytes(value)}
    if isinstance(value, Mapping):
        return {"M": {str(k): to_wire(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return {"L": [to_wire(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        members = list(value)
        if all(isinstance(m, str) for m in members):
            return {"SS": sorted(members)}
        if all(isinstance(m, (bytes, bytearray)) for m in members):
            return {"BS": sorted(bytes(m) for m in members)}
        if all(isinstance(m, (int, Decimal)) and not isinstance(m, bool) for m in members):
            return {"NS": [_number_text(Decimal(m)) for m in sorted(members)]}
    raise TypeError(f"no DynamoDB type for {type(value).__name__}")


def item_to_wire(item: Mapping[str, Any]) -> dict[str, Any]:
    return {str(name): to_wire(value) for name, value in item.items()}


def item_key(item: Mapping[str, Any] | None, key_names: Iterable[str]) -> tuple:
    """The item's key values in `key_names` order (None where missing); wire or plain items."""
    if item is None:
        return tuple(None for _ in key_names)
    return tuple(_plain_key_part(item.get(name)) for name in key_names)


def diff_items(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> ItemDiff:
    """Attribute-level difference of two plain items; either may be None (no item)."""
    before, after = before or {}, after or {}
    added = tuple(sorted(n for n in after if n not in before))
    removed = tuple(sorted(n for n in before if n not in after))
    changed = tuple(
        (n, before[n], after[n])
        for n in sorted(n for n in before if n in after)
        if _canonical(before[n]) != _canonical(after[n])
    )
    return ItemDiff(added, removed, changed)


def format_value(value: Any, limit: int | None = DISPLAY_LIMIT) -> str:
    """Compact one-line text for a plain value, cleaned of control characters and cut at limit."""
    text = _format(value)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


def plain_to_json(value: Any) -> Any:
    """JSON-ready data: sets → sorted lists, bytes → base64, Decimal → int or exact str."""
    if isinstance(value, Mapping):
        return {str(k): plain_to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_to_json(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [plain_to_json(v) for v in _sorted(value)]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Decimal):
        return int(value) if _is_integral(value) else _number_text(value)
    return value


def _format(value: Any) -> str:
    kind = type(value)  # the common cases first: an isinstance against typing's Mapping is slow
    if kind is str:
        return _one_line(value)
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return _number_text(value)
    if isinstance(value, (bytes, bytearray)):
        shown = bytes(value[: BINARY_PREVIEW * 3 // 4])  # 3 bytes make 4 base64 characters
        more = "…" if len(value) > len(shown) else ""
        return f"b64:{base64.b64encode(shown).decode('ascii')}{more}"
    if isinstance(value, str):
        return _one_line(value)
    if kind is dict or isinstance(value, Mapping):
        return "{" + ", ".join(f"{_one_line(str(k))}: {_format(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(_format(v) for v in _sorted(value)) + "}"
    return _one_line(str(value))


def _one_line(text: str) -> str:
    return untrusted.clean(text.replace("\r\n", " ").replace("\n", " ").replace("\r", " "))


def _text(raw: Any) -> str:
    if not isinstance(raw, str):
        raise TypeError("S must be text")
    return raw


def _number(raw: Any) -> int | Decimal:
    if not isinstance(raw, str):
        raise TypeError("N must be text")
    try:
        number = Decimal(raw.strip())
    except InvalidOperation:
        raise ValueError(f"not a number: {raw[:40]!r}") from None
    if not number.is_finite():
        raise ValueError("DynamoDB numbers are finite")
    return int(number) if _is_integral(number) else number


def _binary(raw: Any) -> bytes:
    if isinstance(raw, (bytes, bytearray, memoryview)):
        return bytes(raw)
    if isinstance(raw, str):  # JSON wire format (e.g. the CLI) carries base64 text
        try:
            return base64.b64decode(raw, validate=True)
        except binascii.Error:
            raise ValueError("B must be base64") from None
    raise TypeError("B must be bytes")


def _is_integral(number: Decimal) -> bool:
    # Exponents beyond DynamoDB's 38 digits of precision would make huge ints; keep those Decimal.
    return number == number.to_integral_value() and abs(number.adjusted()) <= 40


def _number_text(number: Decimal) -> str:
    if _is_integral(number):
        return str(int(number))
    return format(number.normalize(), "f")


def _plain_key_part(value: Any) -> Any:
    if isinstance(value, Mapping):
        value = to_plain(value)
    if isinstance(value, (dict, list)):
        return json.dumps(plain_to_json(value), sort_keys=True)  # keys are S/N/B; keep hashable
    return value


def _sorted(values: Iterable[Any]) -> list[Any]:
    values = list(values)
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=lambda v: (type(v).__name__, repr(v)))


def _canonical(value: Any) -> Any:
    """A comparable form that keeps true apart from 1 and a string apart from its bytes."""
    if value is None:
        return ("NULL",)
    if isinstance(value, bool):
        return ("BOOL", value)
    if isinstance(value, (int, Decimal)):
        return ("N", Decimal(value))
    if isinstance(value, Mapping):
        return ("M", frozenset((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("L", tuple(_canonical(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("SET", frozenset(_canonical(v) for v in value))
    if isinstance(value, (bytes, bytearray)):
        return ("B", bytes(value))
    return (type(value).__name__, value)
