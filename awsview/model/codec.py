"""A faithful, versioned encoding of the model's values, for recordings (msgpack + extension types).

Rules:
- Every value a snapshot holds comes back equal and of the same type: tuples stay tuples and
  lists lists, dicts keep their order, and Decimal, frozenset, set, bytes, big ints, read-only
  mappings, enums, datetimes (instant and UTC offset) and lone surrogates in text survive.
- Dataclasses are written by field, against a schema: the recording's header lists each type's
  fields as they were when it was written. A field added since decodes as its default (None if
  it has none), a field removed since is dropped. Fields that take no part in equality
  (``compare=False``, e.g. ``ExecutionHistory._track``, a parser's cache) are not written.
- Only dataclasses of the modules in ``MODULES`` are types here: a file never names code to
  import beyond those. Any other object is written as an ``Opaque`` (type name and repr), shown
  as such and never executed.
- Pure: no UI library, no AWS call.
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import importlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import msgpack

from awsview.model.fieldtypes import check_fields, field_checks

FORMAT = 1  # bump when an encoding below changes meaning; readers refuse newer formats
# Where snapshot data lives. Every dataclass defined in these modules can be written and read.
MODULES = (
    "awsview.model.snapshot",
    "awsview.model.resources",
    "awsview.model.asl",
    "awsview.model.history",
    "awsview.model.loglines",
    "awsview.model.items",
    "awsview.polling.pollers.journal",
    "awsview.core.timeline",
    "awsview.core.checkpoints",
    "awsview.labspec",
    "awsview.core.runs",
)
# A recording names each type as the code that wrote it did ("module:Class"); a type that moved or
# was renamed since is read as its current one, not as an opaque value. Keys are a former module
# (its types keep their names) or a former "module:Class"; values say where it is now.
FORMER_NAMES: dict[str, str] = {
    "awsview.core.runs:Run": "awsview.core.runs:LabRun",
    "awsview.polling.journal": "awsview.polling.pollers.journal",
    "awsview.profiles": "awsview.labspec",
    "awsview.profiles:LabProfile": "awsview.labspec:LabSpec",
    "awsview.profiles:UnknownProfile": "awsview.labspec:UnknownLabSpec",
}
OPAQUE_REPR = 2000  # characters of repr kept for an object of no known type
# A number is written as its text: DynamoDB's have 38 digits and an exponent within ±130, so
# longer text, or an exponent far beyond, is not a value the model held (and a 100,000-digit
# one costs seconds to print).
NUMBER_TEXT = 100
DECIMAL_EXPONENT = 400
SCHEMA_TYPES = 10_000  # types in a schema, and fields in a type: far beyond the model's

# A value msgpack would flatten or cannot hold is written as an array whose first element is a
# mark (an empty extension value of one of these codes): [mark, ...]. Marked arrays are rebuilt
# by the unpacker's list hook, in C's loop, with no nested unpacking (a nested payload per
# value would be an unpacking call per value: several times slower on a big model).
_TUPLE, _DATACLASS, _DECIMAL, _FROZENSET, _SET, _DATETIME, _BIGINT, _ENUM, _PROXY, _OPAQUE = range(
    1, 11
)
_MARKS = {code: msgpack.ExtType(code, b"") for code in range(1, 11)}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


class _Mark:
    __slots__ = ("code",)

    def __init__(self, code: int):
        self.code = code


_READ_MARKS = {code: _Mark(code) for code in _MARKS}


class CodecError(ValueError):
    """Encoded data that cannot be read with this schema (damaged, or from a newer format)."""


@dataclasses.dataclass(frozen=True)
class Opaque:
    """A value of a type the codec does not know, as it was written: its type and repr."""

    type: str
    text: str

    def __str__(self) -> str:
        return f"<{self.type}: {self.text}>"


def known_types() -> list[type]:
    """Every dataclass and enum of ``MODULES``, in a stable order."""
    found: dict[str, type] = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and (dataclasses.is_dataclass(value) or issubclass(value, enum.Enum))
            ):
                found[_type_name(value)] = value
    return [found[k] for k in sorted(found)]


def _type_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def current_name(name: str) -> str:
    """The running code's name for a type a recording names."""
    if name in FORMER_NAMES:
        return FORMER_NAMES[name]
    module, colon, qualname = name.partition(":")
    return f"{FORMER_NAMES[module]}{colon}{qualname}" if module in FORMER_NAMES else name


def _written_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.compare)


def current_schema() -> list[list[Any]]:
    """The schema of the running code, as a recording's header keeps it: [name, fields] per
    dataclass, [name, None] per enum."""
    return [
        [_type_name(cls), list(_written_fields(cls)) if dataclasses.is_dataclass(cls) else None]
        for cls in known_types()
    ]


class Codec:
    """Packs and unpacks values against one schema (the writer's, as kept in the file)."""

    def __init__(self, schema: list[list[Any]] | None = None):
        schema = current_schema() if schema is None else schema
        local = {_type_name(cls): cls for cls in known_types()}
        self.schema = schema
        self.last_values = 0
        self._ids: dict[type, int] = {}
        self._fields: dict[type, tuple[str, ...]] = {}
        self._builders: list[Callable[[list[Any]], Any] | None] = []
        for index, (name, fields) in enumerate(_checked_schema(schema)):
            cls = local.get(current_name(name))
            if cls is not None and (fields is None) == dataclasses.is_dataclass(cls):
                cls = None  # the file says another kind of type: its values stay opaque
            if cls is not None:
                self._ids[cls] = index
                if fields is not None:
                    self._fields[cls] = tuple(fields)
            self._builders.append(_builder(name, cls, fields))
        self._packer = msgpack.Packer(
            default=self._default,
            strict_types=True,
            use_bin_type=True,
            unicode_errors="surrogatepass",
        )

    # -- writing ---------------------------------------------------------------------------

    def pack(self, value: Any) -> bytes:
        return self._packer.pack(value)

    def _default(self, value: Any) -> Any:
        kind = type(value)
        if kind is tuple:
            return [_MARKS[_TUPLE], *value]
        fields = self._fields.get(kind)
        if fields is not None:
            return [_MARKS[_DATACLASS], self._ids[kind], *[getattr(value, f) for f in fields]]
        if kind in self._ids:  # an enum of the schema
            return [_MARKS[_ENUM], self._ids[kind], value.value]
        if kind is Decimal:
            return [_MARKS[_DECIMAL], str(value)]
        if kind is frozenset or kind is set:
            return [_MARKS[_FROZENSET if kind is frozenset else _SET], *value]
        if kind is datetime:
            offset = value.utcoffset()
            if offset is None:
                return [_MARKS[_DATETIME], (value - datetime(1970, 1, 1)) // _MICRO, None]
            return [_MARKS[_DATETIME], (value - _EPOCH) // _MICRO, offset // _MICRO]
        if kind is int:  # beyond 64 bits (DynamoDB numbers have 38 digits)
            return [_MARKS[_BIGINT], str(value)]
        if kind is MappingProxyType:
            return [_MARKS[_PROXY], dict(value)]
        if isinstance(value, dict):
            return dict(value)
        if isinstance(value, str):
            return str(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        return [_MARKS[_OPAQUE], _type_name(kind), repr(value)[:OPAQUE_REPR]]

    # -- reading ---------------------------------------------------------------------------

    def unpack(self, data: bytes, max_values: int | None = None) -> Any:
        """The value ``data`` holds; CodecError if it cannot be read. With ``max_values``, at
        most that many values (each element and each array or map counts one) are built:
        an empty array is one byte of input and ~60 of memory, so bytes alone do not bound
        what untrusted input costs. ``last_values`` says how many were built."""
        # Reading creates many objects and no cycles: the collector, run every few hundred
        # allocations over a growing heap, would take most of the time.
        collecting = gc.isenabled()
        gc.disable()
        hooks: dict[str, Any] = {"list_hook": self._rebuild}
        if max_values is not None:
            hooks = self._counting(max_values)
        try:
            return msgpack.unpackb(
                data,
                ext_hook=_read_mark,
                raw=False,
                strict_map_key=False,
                unicode_errors="surrogatepass",
                **hooks,
            )
        except CodecError:
            raise
        except Exception as exc:  # damaged bytes: one clear reason, never a traceback
            raise CodecError(f"unreadable data ({type(exc).__name__}: {exc})") from None
        finally:
            if collecting:
                gc.enable()

    def _counting(self, limit: int) -> dict[str, Any]:
        self.last_values = 0
        rebuild = self._rebuild

        def count(size: int) -> None:
            self.last_values += size + 1
            if self.last_values > limit:
                raise CodecError(f"more than {limit:,} values")

        def on_list(values: list[Any]) -> Any:
            count(len(values))
            return rebuild(values)

        def on_map(pairs: dict[Any, Any]) -> Any:
            count(len(pairs))
            return pairs

        return {"list_hook": on_list, "object_hook": on_map}

    def _rebuild(self, values: list[Any]) -> Any:
        if not values or type(values[0]) is not _Mark:
            return values
        code = values[0].code
        if code == _TUPLE:
            return tuple(values[1:])
        if code == _DATACLASS or code == _ENUM:
            index = values[1]
            if not isinstance(index, int) or not 0 <= index < len(self._builders):
                raise CodecError(f"type number {index!r} is not in the recording's schema")
            build = self._builders[index]
            if build is None:
                raise CodecError(f"type number {index!r} is not in the recording's schema")
            return build(values[2:])
        if code == _DECIMAL:
            return _decimal(values[1])
        if code == _FROZENSET:
            return frozenset(values[1:])
        if code == _SET:
            return set(values[1:])
        if code == _DATETIME:
            micros, offset = values[1], values[2]
            if offset is None:
                return datetime(1970, 1, 1) + micros * _MICRO
            return (_EPOCH + micros * _MICRO).astimezone(timezone(offset * _MICRO))
        if code == _BIGINT:
            return int(_number_text(values[1]))
        if code == _PROXY:
            return MappingProxyType(values[1])
        return Opaque(str(values[1]), str(values[2]))


def _checked_schema(schema: Any) -> list[tuple[str, list[str] | None]]:
    """The schema a header holds, or CodecError: [name, [field, ...] or None] per type."""
    if not isinstance(schema, list) or len(schema) > SCHEMA_TYPES:
        raise CodecError("the schema is not a list of types")
    checked = []
    for entry in schema:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2 and type(entry[0]) is str):
            raise CodecError("a schema entry is not [name, fields]")
        name, fields = entry
        if fields is not None and not (
            isinstance(fields, list)
            and len(fields) <= SCHEMA_TYPES
            and all(type(f) is str for f in fields)
        ):
            raise CodecError(f"the fields of {name[:80]!r} in the schema are not names")
        checked.append((name, fields))
    return checked


def _number_text(text: Any) -> str:
    if type(text) is not str or len(text) > NUMBER_TEXT:
        raise CodecError("a number longer than any the model holds")
    return text


def _decimal(text: Any) -> Decimal:
    number = Decimal(_number_text(text))
    if not number.is_finite() or abs(number.adjusted()) > DECIMAL_EXPONENT:
        raise CodecError(f"a number out of range ({text[:20]}…)")
    return number


def _read_mark(code: int, data: bytes) -> _Mark:
    mark = _READ_MARKS.get(code)
    if mark is None or data:
        raise CodecError(f"unknown extension type {code}")
    return mark


def _builder(name: str, cls: type | None, fields: list[str] | None) -> Callable[[list[Any]], Any]:
    """How to rebuild one recorded type with the running code."""
    if fields is None:  # an enum
        if cls is None:
            return lambda values: Opaque(name, repr(values[:1])[:OPAQUE_REPR])
        return lambda values: cls(*values[:1])
    if cls is None:
        return lambda values: Opaque(name, repr(dict(zip(fields, values)))[:OPAQUE_REPR])
    current = {f.name: f for f in dataclasses.fields(cls)}
    kept = [i for i, f in enumerate(fields) if f in current]  # removed since: dropped
    names = [fields[i] for i in kept]
    # Added since, or never written (compare=False): the default, else None.
    absent = [f for f in current.values() if f.name not in fields]
    if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):

        def construct(values: list[Any]) -> Any:
            if len(values) != len(fields):
                raise CodecError(f"{cls.__name__} with {len(values)} of {len(fields)} fields")
            kwargs = {n: values[i] for n, i in zip(names, kept) if current[n].init}
            check_fields(cls, kwargs)
            kwargs.update({f.name: _default(f) for f in absent if f.init})
            return cls(**kwargs)

        return construct
    whole = len(kept) == len(fields)
    new = object.__new__
    checks = field_checks(cls)
    allowed = [checks[n] for n in fields] if whole else [checks[n] for n in names]

    def build(values: list[Any]) -> Any:
        if len(values) != len(fields):
            raise CodecError(f"{cls.__name__} with {len(values)} of {len(fields)} fields")
        # A recording is untrusted: each field holds what its annotation says (in C's loop).
        if not all(map(isinstance, values if whole else [values[i] for i in kept], allowed)):
            given = zip(fields, values) if whole else zip(names, (values[i] for i in kept))
            check_fields(cls, dict(given))
        # Frozen dataclasses set each field through object.__setattr__ in __init__; filling the
        # instance dict directly reads a 100,000-line feed in half the time. The model's
        # dataclasses have no __post_init__ (checked above), so nothing is skipped.
        obj: Any = new(cls)
        state = obj.__dict__
        state.update(
            zip(fields, values) if whole else ((n, values[i]) for n, i in zip(names, kept))
        )
        for f in absent:
            state[f.name] = _default(f)
        return obj

    return build


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None
