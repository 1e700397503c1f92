"""Lab profiles: what a lab's resources are, which are provided and which the learner creates,
its business key, panel order and checkpoints. A lab is a folder (``awsview.labspec.folder``:
the platform's layout plus ``awsview.toml``; the built-in labs are all folders); a TOML file
in ``panels/`` is still read as a profile.

A ``--lab`` value is a path to a lab folder, or a name looked for in ``$AWSVIEW_LABS``,
``$XDG_DATA_HOME/awsview/labs``, the built-in lab folders, then ``panels/``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from awsview import kinds
from awsview.labspec.folder import is_folder_reference
from awsview.labspec.schema import SchemaError
from awsview.labspec.statements import STATEMENTS, statement_problem  # noqa: F401
from awsview.model.errors import UserError
from awsview.model.textfile import NotText, read_utf8, toml_error

if TYPE_CHECKING:
    from awsview.labspec.folder import LabFolder

RESOURCE_KINDS = ("function", "table", "queue", "state_machine", "role", "log_group", "mapping")
TABLE_ROLES = ("business", "diagnostic", "reference", "other")


SpecError = SchemaError  # a malformed profile or lab folder: ``file:line: the problem``


class UnknownLabSpec(UserError, ValueError):
    """No profile of this name."""


@dataclass(frozen=True)
class Resource:
    kind: str
    name: str
    provided: bool
    role: str = "other"  # for tables: business / diagnostic / reference


@dataclass(frozen=True)
class Checkpoint:
    step: str
    text: str
    check: str = ""  # statements (see awsview.core.checkpoints)
    query: str = ""  # JMESPath over `awsview dump --json`: holds when its value is truthy
    now: str = ""  # JMESPath: what is there, said when the query does not hold


@dataclass(frozen=True)
class LabSpec:
    name: str
    title: str
    prefix: str
    business_key: str = "id"
    panels: tuple[str, ...] = field(default_factory=lambda: kinds.NAMES)  # the registry's order
    resources: tuple[Resource, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    source: str = "<builtin>"
    generic: bool = False
    # The lab folder it was read from; not part of what a recording keeps of the profile.
    folder: LabFolder | None = field(default=None, compare=False)

    def named(self, kind: str) -> tuple[Resource, ...]:
        return tuple(r for r in self.resources if r.kind == kind)

    def tables(self, role: str | None = None) -> tuple[str, ...]:
        return tuple(r.name for r in self.named("table") if role is None or r.role == role)

    @property
    def log_groups(self) -> tuple[str, ...]:
        explicit = tuple(r.name for r in self.named("log_group"))
        return explicit or tuple(f"/aws/lambda/{r.name}" for r in self.named("function"))


def generic_spec(prefix: str = "") -> LabSpec:
    """Everything in the region (optionally under a prefix), for an account that runs no
    known lab."""
    title = f"resources named {prefix}*" if prefix else "all resources in the region"
    return LabSpec(name="generic", title=title, prefix=prefix, generic=True)


SEPARATORS = "-_./"


def common_prefixes(names: list[str], limit: int = 12) -> list[tuple[str, int]]:
    """The name prefixes (up to a ``-``, ``_``, ``.`` or ``/``) that several resources share,
    with how many: what to offer in place of a whole account. Most resources first; a prefix is
    left out when a longer one names the same resources."""
    counts: dict[str, int] = {}
    for name in set(names):
        for i, char in enumerate(name[:-1]):
            if char in SEPARATORS and i > 0:
                counts[name[: i + 1]] = counts.get(name[: i + 1], 0) + 1
    shared = {p: n for p, n in counts.items() if n >= 2}
    kept = [
        (p, n)
        for p, n in shared.items()
        if not any(q != p and q.startswith(p) and m == n for q, m in shared.items())
    ]
    return sorted(kept, key=lambda pair: (-pair[1], pair[0]))[:limit]


def spec_dir() -> Path:
    """``panels/`` beside the package in a checkout, or the copy shipped inside the wheel."""
    checkout = Path(__file__).resolve().parent.parent.parent / "panels"
    if checkout.is_dir():
        return checkout
    return Path(str(resources.files("awsview") / "_data" / "panels"))


def available(directory: Path | None = None) -> list[str]:
    """Every lab name: the lab folders found, then the profiles of ``panels/``."""
    from awsview.labspec.folder import discover

    names = [] if directory else list(discover())
    names += [p.stem for p in (directory or spec_dir()).glob("*.toml")]
    return sorted(set(names))


def load_all(directory: Path | None = None) -> list[LabSpec]:
    """Every lab profile in the folder; SpecError for the first that cannot be used."""
    directory = directory or spec_dir()
    return [load_file(directory / f"{name}.toml") for name in available(directory)]


def load(name: str, directory: Path | None = None, lang: str | None = None) -> LabSpec:
    """The lab ``name`` (a path to a lab folder, or a name: see the module's docstring)."""
    from awsview.labspec.folder import discover

    if directory is None:
        if is_folder_reference(name) or Path(name, "index.json").is_file():
            return load_folder(Path(name), lang)
        found = discover().get(name)
        if found is not None:
            return load_folder(found[0], lang)
    directory = directory or spec_dir()
    path = directory / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(available(None if directory == spec_dir() else directory)) or "none"
        raise UnknownLabSpec(
            f"unknown lab {name!r}; known labs: {known} (or a path to a lab folder)"
        )
    return load_file(path)


def load_folder(path: Path, lang: str | None = None) -> LabSpec:
    """The profile of a lab folder: its ``awsview.toml`` keyed to ``index.json``'s steps, its
    checkpoint texts in ``lang`` where the lab gives them (see ``folder.chosen_language``)."""
    from awsview.labspec.folder import load_folder as read

    folder, own = read(path, lang)
    data = own.data
    return LabSpec(
        name=folder.name,
        title=folder.title,
        prefix=data["prefix"],
        business_key=data.get("business_key", "id"),
        panels=tuple(data.get("panels", kinds.NAMES)),
        resources=tuple(
            Resource(r["kind"], r["name"], r.get("provided", False), r.get("role", "other"))
            for r in data.get("resources", [])
        ),
        checkpoints=tuple(
            Checkpoint(
                step["key"],
                c.get("i18n", {}).get(folder.lang, c["text"]),
                c.get("check", ""),
                c.get("query", ""),
                c.get("now", ""),
            )
            for step in data.get("steps", [])
            for c in step.get("checkpoints", [])
        ),
        source=str(own.path),
        folder=folder,
    )


def load_file(path: Path) -> LabSpec:
    try:
        text = read_utf8(path)
        data = tomllib.loads(text)
    except NotText as exc:
        raise SpecError(str(exc)) from None
    except OSError as exc:
        raise SpecError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(toml_error(path, exc)) from None
    return _Parser(path, text).profile(data)


@dataclass
class _Parser:
    path: Path
    text: str
    lines: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.lines = self.text.splitlines()

    def fail(self, problem: str, near: str | None = None) -> SpecError:
        line = self._line_of(near) if near else None
        where = f"{self.path}:{line}" if line else str(self.path)
        return SpecError(f"{where}: {problem}")

    def _line_of(self, needle: str) -> int | None:
        for number, line in enumerate(self.lines, start=1):
            if needle in line:
                return number
        return None

    def string(self, table: dict, key: str, required: bool = True, default: str = "") -> str:
        value = table.get(key, None)
        if value is None:
            if required:
                raise self.fail(f"missing required key {key!r}")
            return default
        if not isinstance(value, str):
            raise self.fail(f"{key!r} must be a string, not {type(value).__name__}", f"{key} =")
        return value

    def profile(self, data: dict) -> LabSpec:
        known = {"name", "title", "prefix", "business_key", "panels", "resources", "checkpoints"}
        for key in data:
            if key not in known:
                raise self.fail(
                    f"unknown key {key!r} (expected one of {', '.join(sorted(known))})", key
                )
        name = self.string(data, "name")
        if name != self.path.stem:
            raise self.fail(
                f"name {name!r} does not match the file name {self.path.stem!r}", "name ="
            )
        panels = data.get("panels", list(kinds.NAMES))
        if not isinstance(panels, list):
            raise self.fail("'panels' must be a list of panel names", "panels")
        for panel in panels:
            if panel not in kinds.KINDS:
                raise self.fail(
                    f"unknown panel {panel!r} (known: {', '.join(kinds.NAMES)})", f'"{panel}"'
                )
        return LabSpec(
            name=name,
            title=self.string(data, "title"),
            prefix=self.string(data, "prefix"),
            business_key=self.string(data, "business_key", required=False, default="id"),
            panels=tuple(panels),
            resources=tuple(self.resource(r) for r in self.entries(data, "resources")),
            checkpoints=tuple(self.checkpoint(c) for c in self.entries(data, "checkpoints")),
            source=str(self.path),
        )

    def entries(self, data: dict, key: str) -> list[dict]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail(f"{key!r} must be an array of tables ([[{key}]])", key)
        return value

    def resource(self, table: dict) -> Resource:
        kind = self.string(table, "kind")
        name = self.string(table, "name")
        if kind not in RESOURCE_KINDS:
            raise self.fail(
                f"unknown resource kind {kind!r} (known: {', '.join(RESOURCE_KINDS)})", f'"{kind}"'
            )
        provided = table.get("provided", False)
        if not isinstance(provided, bool):
            raise self.fail(f"'provided' of {name!r} must be true or false", f'"{name}"')
        role = self.string(table, "role", required=False, default="other")
        if role not in TABLE_ROLES:
            raise self.fail(
                f"unknown role {role!r} for {name!r} (known: {', '.join(TABLE_ROLES)})", f'"{role}"'
            )
        return Resource(kind=kind, name=name, provided=provided, role=role)

    def checkpoint(self, table: dict) -> Checkpoint:
        problem = statement_problem(str(table.get("check", "")))
        if problem:
            raise self.fail(problem, "check =")
        return Checkpoint(
            step=self.string(table, "step"),
            text=self.string(table, "text"),
            check=self.string(table, "check", required=False),
        )
