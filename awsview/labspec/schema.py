"""One schema language for every file a lab author or a teacher writes (``awsview.toml``,
``index.json``, the class roster): each key is declared with its type, so an unknown key, a typo
or a wrong type is refused when the file is loaded, as ``file:line: what is wrong``.

A schema is a ``Table`` of ``Field``s; a field's type is ``str``, ``int``, ``bool``, ``Strings``
(a list of strings), another ``Table``, or ``Tables`` (an array of tables). ``check`` refines a
value (an enum, a file name pattern, a JMESPath expression that must compile) and says what is
wrong in a sentence, or None.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from awsview.model.textfile import BadFile, NotText, read_utf8, toml_error

Path_ = tuple[str | int, ...]


class SchemaError(BadFile):
    """``file:line: what is wrong`` (the line when it can be found)."""


@dataclass(frozen=True)
class Field:
    type: Any  # str, int, bool, Strings, Table, Tables
    required: bool = False
    check: Callable[[Any], str | None] | None = None


@dataclass(frozen=True)
class Table:
    fields: dict[str, Field]
    open: bool = False  # keys this schema does not know are kept (a platform's own keys)


@dataclass(frozen=True)
class Tables:
    table: Table


@dataclass(frozen=True)
class Strings:
    check: Callable[[str], str | None] | None = None


_NAMES = {str: "a string", int: "an integer", bool: "true or false"}


def one_of(*choices: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"{value!r} is not one of {', '.join(choices)}"

    return check


def matching(pattern: str, example: str) -> Callable[[Any], str | None]:
    compiled = re.compile(pattern)

    def check(value: Any) -> str | None:
        return None if compiled.fullmatch(value) else f"{value!r} is not a name like {example}"

    return check


@dataclass
class Document:
    """A parsed file, its text (to find lines) and where it came from."""

    path: Path
    text: str
    data: Any
    lines: Callable[[Path_], int | None] = field(repr=False, default=lambda _: None)

    def error(self, where: Path_, problem: str) -> SchemaError:
        line = self.lines(where)
        return SchemaError(f"{self.path}{f':{line}' if line else ''}: {problem}")


def read_toml(path: Path) -> Document:
    import tomllib

    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(toml_error(path, exc)) from None
    located = _toml_lines(text)
    return Document(path, text, data, lambda where: _nearest(located, where))


def read_json(path: Path) -> Document:
    text = _read(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{path}:{exc.lineno}: {exc.msg}") from None
    located = _json_lines(text)
    return Document(path, text, data, lambda where: _nearest(located, where))


def _read(path: Path) -> str:
    try:
        return read_utf8(path)
    except NotText as exc:
        raise SchemaError(str(exc)) from None
    except OSError as exc:
        raise SchemaError(f"{path}: {exc.strerror or exc}") from None


def validate(document: Document, schema: Table) -> None:
    """Raises SchemaError at the first thing the schema does not allow."""
    _table(document, document.data, schema, ())


def _table(doc: Document, value: Any, schema: Table, where: Path_) -> None:
    if not isinstance(value, dict):
        raise doc.error(where, f"{_said(where)} must be a table")
    for key, item in value.items():
        spec = schema.fields.get(key)
        if spec is None:
            if schema.open:
                continue
            close = _close_to(key, schema.fields)
            hint = f" (did you mean {close!r}?)" if close else ""
            known = ", ".join(schema.fields)
            raise doc.error(
                (*where, key), f"unknown key {_said((*where, key))}{hint}; known: {known}"
            )
        _value(doc, item, spec, (*where, key))
    for key, spec in schema.fields.items():
        if spec.required and key not in value:
            raise doc.error(where, f"{_said(where) or 'the file'} needs {key!r}")


def _value(doc: Document, value: Any, spec: Field, where: Path_) -> None:
    kind = spec.type
    if isinstance(kind, Table):
        _table(doc, value, kind, where)
    elif isinstance(kind, Tables):
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise doc.error(where, f"{_said(where)} must be an array of tables")
        for index, item in enumerate(value):
            _table(doc, item, kind.table, (*where, index))
    elif isinstance(kind, Strings):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise doc.error(where, f"{_said(where)} must be a list of strings")
        for item in value:
            problem = kind.check(item) if kind.check else None
            if problem:
                raise doc.error(where, f"{_said(where)}: {problem}")
    else:
        # bool is an int in Python: an integer field refuses true and false.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            got = _NAMES.get(type(value), type(value).__name__)
            raise doc.error(where, f"{_said(where)} must be {_NAMES[kind]}, not {got}")
    problem = spec.check(value) if spec.check and not isinstance(kind, Strings) else None
    if problem:
        raise doc.error(where, f"{_said(where)}: {problem}")


def _said(where: Path_) -> str:
    text = ""
    for part in where:
        text += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if text else part)
    return repr(text) if text else ""


def _close_to(key: str, known: dict[str, Field]) -> str | None:
    import difflib

    found = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def _nearest(located: dict[Path_, int], where: Path_) -> int | None:
    """The line of ``where``, or of the nearest enclosing thing that has one."""
    for end in range(len(where), -1, -1):
        if where[:end] in located:
            return located[where[:end]]
    return None


_HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")


def _toml_lines(text: str) -> dict[Path_, int]:
    """Path → line of each table header and key (enough for files a person writes: headers,
    ``[[arrays]]`` of tables nested one in another, ``key = value`` lines)."""
    located: dict[Path_, int] = {(): 1}  # what the whole file lacks is said at its top
    counts: dict[Path_, int] = {}
    current: Path_ = ()
    opened = 0  # brackets still open: the lines of a multi-line array are not keys
    for number, line in enumerate(text.splitlines(), start=1):
        if opened <= 0:
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                names = [n.strip().strip("\"'") for n in header.group(2).split(".")]
                path: list[str | int] = []
                for depth, name in enumerate(names, start=1):
                    path.append(name)
                    if tuple(path) in counts and depth < len(names):  # inside the last one
                        path.append(counts[tuple(path)] - 1)
                if header.group(1) == "[[":
                    parent = tuple(path)
                    located.setdefault(parent, number)
                    counts[parent] = counts.get(parent, 0) + 1
                    path.append(counts[parent] - 1)
                current = tuple(path)
                located.setdefault(current, number)
                continue
            key = _KEY.match(line)
            if key and not line.lstrip().startswith("#"):
                names = [n.strip().strip("\"'") for n in key.group(1).split(".")]
                located.setdefault((*current, *names), number)
        opened += line.count("[") - line.count("]") if "=" in line or opened > 0 else 0
    return located


def _json_lines(text: str) -> dict[Path_, int]:
    """Path → line of each key and array item of a JSON text already known to be valid."""
    located: dict[Path_, int] = {}
    decoder = json.JSONDecoder()
    space = re.compile(r"\s*")

    def line(at: int) -> int:
        return text.count("\n", 0, at) + 1

    def value(at: int, where: Path_) -> int:
        at = space.match(text, at).end()  # type: ignore[union-attr]
        if text[at] == "{":
            at = space.match(text, at + 1).end()  # type: ignore[union-attr]
            if text[at] == "}":
                return at + 1
            while True:
                at = space.match(text, at).end()  # type: ignore[union-attr]
                key, end = scanstring(text, at + 1)
                located[(*where, key)] = line(at)
                at = space.match(text, end).end() + 1  # type: ignore[union-attr]
                at = space.match(text, value(at, (*where, key))).end()  # type: ignore[union-attr]
                if text[at] == "}":
                    return at + 1
                at += 1
        if text[at] == "[":
            at = space.match(text, at + 1).end()  # type: ignore[union-attr]
            if text[at] == "]":
                return at + 1
            index = 0
            while True:
                at = space.match(text, at).end()  # type: ignore[union-attr]
                located[(*where, index)] = line(at)
                at = space.match(text, value(at, (*where, index))).end()  # type: ignore[union-attr]
                if text[at] == "]":
                    return at + 1
                at, index = at + 1, index + 1
        return decoder.raw_decode(text, at)[1]

    value(0, ())
    located[()] = 1  # what the whole file lacks is said at its top
    return located
