"""A lab is a folder its author writes: the LabEx layout (``index.json``, ``stepN.md``,
``verifyN-M.sh``, ``setup.sh``, ``assets/``, ``ja/stepN.md`` …) plus ``awsview.toml``, AWS View's
part (prefix, business key, resources, panels, the checkpoints of each step).

Labs are found by name in ``$AWSVIEW_LABS`` (a path list of folders holding lab folders), then
``$XDG_DATA_HOME/awsview/labs`` (``~/.local/share/awsview/labs``), then the built-in ones; a
path to a lab folder is taken as it is. Both files are validated whole when the lab is loaded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from awsview import kinds
from awsview.labspec.schema import (
    Document,
    Field,
    SchemaError,
    Strings,
    Table,
    Tables,
    matching,
    one_of,
    read_json,
    read_toml,
    validate,
)

INDEX, OWN = "index.json", "awsview.toml"
DEFAULT_ENDPOINT = "http://127.0.0.1:5000"  # what a lab on the platform's VM talks to


@dataclass(frozen=True)
class Verify:
    name: str
    file: str
    hint: str
    timeout: int  # seconds; 0 means the platform's default


@dataclass(frozen=True)
class LabStep:
    number: int
    key: str  # awsview.toml's short name of the step ("authorize")
    title: str
    text: str  # the step's Markdown file, relative to the folder
    verify: tuple[Verify, ...]


@dataclass(frozen=True)
class Asset:
    file: str
    target: str
    chmod: str = ""


@dataclass(frozen=True)
class LabFolder:
    """What AWS View reads of a lab folder."""

    path: Path
    name: str
    title: str
    steps: tuple[LabStep, ...]
    background: str  # setup.sh, or "" when the VM needs nothing
    assets: tuple[Asset, ...]
    languages: tuple[str, ...]
    endpoint: str  # the endpoint the lab's text and files hard-code
    lang: str = "en"  # the language its titles and texts are read in


def _jmespath(value: str) -> str | None:
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        jmespath.compile(value)
    except JMESPathError as exc:
        return f"not a JMESPath expression: {' '.join(str(exc).split())}"
    return None


def _statements(value: str) -> str | None:
    from awsview.labspec.statements import statement_problem

    return statement_problem(value)


def _panel(value: str) -> str | None:
    return None if value in kinds.KINDS else f"unknown panel {value!r}"


def _url(value: str) -> str | None:
    return (
        None if re.fullmatch(r"https?://[^/\s]+/?", value) else f"{value!r} is not http://HOST:PORT"
    )


CHECKPOINT = Table(
    {
        "text": Field(str, required=True),
        "i18n": Field(Table({}, open=True)),  # the text in the lab's other languages: {ja = "…"}
        "check": Field(str, check=_statements),
        "query": Field(str, check=_jmespath),
        "now": Field(str, check=_jmespath),
    }
)
AWSVIEW_TOML = Table(
    {
        "title": Field(str),
        "prefix": Field(str, required=True),
        "business_key": Field(str),
        "panels": Field(Strings(_panel)),
        "endpoint": Field(str, check=_url),
        "resources": Field(
            Tables(
                Table(
                    {
                        "kind": Field(
                            str,
                            required=True,
                            check=one_of(
                                "function",
                                "table",
                                "queue",
                                "state_machine",
                                "role",
                                "log_group",
                                "mapping",
                            ),
                        ),
                        "name": Field(str, required=True),
                        "provided": Field(bool),
                        "role": Field(
                            str, check=one_of("business", "diagnostic", "reference", "other")
                        ),
                    }
                )
            )
        ),
        "steps": Field(
            Tables(
                Table({"key": Field(str, required=True), "checkpoints": Field(Tables(CHECKPOINT))})
            )
        ),
    }
)
_VERIFY = Table(
    {
        "name": Field(str, required=True),
        "file": Field(
            str, required=True, check=matching(r"verify[1-9][0-9]*-[1-9][0-9]*\.sh", "verify1-1.sh")
        ),
        "hint": Field(str, required=True),
        "timeout": Field(int),
        "showstderr": Field(bool),
    }
)
_STEP = Table(
    {
        "title": Field(str, required=True),
        "text": Field(str, required=True, check=matching(r"(en/)?step[1-9][0-9]*\.md", "step1.md")),
        "verify": Field(Tables(_VERIFY)),
        "skills": Field(Strings()),
        "solutions": Field(Strings()),
    }
)
# The parts of the platform's index.json that AWS View reads are closed (a typo there is
# refused); the platform's other top-level keys (meta, backend, contributors …) are kept.
INDEX_JSON = Table(
    {
        "type": Field(str, check=one_of("lab", "challenge")),
        "title": Field(str, required=True),
        "details": Field(
            Table(
                {
                    "steps": Field(Tables(_STEP), required=True),
                    "intro": Field(
                        Table(
                            {
                                "text": Field(str),
                                "title": Field(str),
                                "background": Field(str, check=one_of("setup.sh")),
                            }
                        )
                    ),
                    "finish": Field(Table({"text": Field(str), "title": Field(str)})),
                    "assets": Field(
                        Table(
                            {
                                "host01": Field(
                                    Tables(
                                        Table(
                                            {
                                                "file": Field(str, required=True),
                                                "target": Field(str, required=True),
                                                "chmod": Field(str),
                                            }
                                        )
                                    )
                                )
                            }
                        )
                    ),
                }
            ),
            required=True,
        ),
        "i18n": Field(
            Tables(
                Table(
                    {"lang": Field(str, required=True), "details": Field(Table({}, open=True))},
                    open=True,
                )
            )
        ),
    },
    open=True,
)


def is_folder_reference(name: str) -> bool:
    """``--lab`` names a folder rather than a lab: a path (with a separator) or ``.``."""
    return os.sep in name or "/" in name or name in (".", "..") or name.endswith(OWN)


def builtin_dir() -> Path:
    """``labs/`` beside the package in a checkout, or the copy shipped inside the wheel."""
    checkout = Path(__file__).resolve().parent.parent.parent / "labs"
    if checkout.is_dir():
        return checkout
    return Path(str(resources.files("awsview") / "_data" / "labs"))


def search_path() -> list[tuple[Path, str]]:
    """(folder holding labs, how it was named), in the order labs are looked for."""
    found = [
        (Path(p), "AWSVIEW_LABS") for p in os.environ.get("AWSVIEW_LABS", "").split(os.pathsep) if p
    ]
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    found.append((Path(data_home) / "awsview" / "labs", "XDG_DATA_HOME"))
    found.append((builtin_dir(), "built-in"))
    return found


def discover() -> dict[str, tuple[Path, str]]:
    """Every lab folder on the search path by name: (its folder, where it was found); the
    first one of a name wins."""
    labs: dict[str, tuple[Path, str]] = {}
    for holder, origin in search_path():
        if not holder.is_dir():
            continue
        for child in sorted(holder.iterdir()):
            if (child / OWN).is_file() or (child / INDEX).is_file():
                labs.setdefault(child.name, (child, origin))
    return labs


def chosen_language(languages: tuple[str, ...], wanted: str | None) -> str | None:
    """``wanted`` (``--lang``), else the language of ``$LANG`` (``ja_JP.UTF-8`` is ``ja``) when
    the lab has it, else English; None when ``wanted`` is not one of the lab's languages."""
    if wanted:
        return wanted if wanted in languages else None
    from_env = re.split(r"[_.@]", os.environ.get("LANG", ""))[0].lower()
    return from_env if from_env in languages else "en"


def _translated(index: Document, own: Document, lang: str, languages: tuple[str, ...]) -> dict:
    """The i18n entry of ``lang`` in index.json (empty for English), after checking that every
    checkpoint's ``i18n`` names only the lab's languages and gives them as text."""
    for i, step in enumerate(own.data.get("steps", [])):
        for j, checkpoint in enumerate(step.get("checkpoints", [])):
            for code, text in checkpoint.get("i18n", {}).items():
                where = ("steps", i, "checkpoints", j, "i18n", code)
                if code not in languages[1:]:
                    raise own.error(
                        where, f"{code!r} is not one of the lab's languages in {INDEX}'s i18n"
                    )
                if not isinstance(text, str):
                    raise own.error(where, f"the {code} text must be a string")
    if lang == "en":
        return {}
    return next(e for e in index.data.get("i18n", []) if e["lang"] == lang)


def load_folder(path: Path, lang: str | None = None) -> tuple[LabFolder, Document]:
    """The lab folder and its validated ``awsview.toml``, with titles in ``lang`` (see
    ``chosen_language``); raises SchemaError."""
    path = path.parent if path.name == OWN else path
    if not path.is_dir():
        raise SchemaError(f"{path}: no such lab folder")
    if not (path / INDEX).is_file():
        raise SchemaError(f"{path}: not a lab folder: it has no {INDEX}")
    index = read_json(path / INDEX)
    validate(index, INDEX_JSON)
    if not (path / OWN).is_file():
        raise SchemaError(
            f"{path}: no {OWN} (AWS View's part of the lab: prefix, resources, checkpoints)"
        )
    own = read_toml(path / OWN)
    validate(own, AWSVIEW_TOML)
    details = index.data["details"]
    written = own.data.get("steps", [])
    if len(written) != len(details["steps"]):
        raise own.error(
            ("steps",),
            f"{len(written)} [[steps]] for the {len(details['steps'])} steps of {INDEX}: "
            "one each, in order",
        )
    languages = ("en", *(entry["lang"] for entry in index.data.get("i18n", [])))
    chosen = chosen_language(languages, lang)
    if chosen is None:
        raise SchemaError(f"{path}: no {lang!r} texts; the lab's languages: {', '.join(languages)}")
    translation = _translated(index, own, chosen, languages)
    local_steps = translation.get("details", {}).get("steps", [])
    for k, entry in enumerate(index.data.get("i18n", [])):
        for i, local in enumerate(entry.get("details", {}).get("steps", [])):
            text = local.get("text") if isinstance(local, dict) else None
            if isinstance(text, str) and not (path / text).is_file():
                where = ("i18n", k, "details", "steps", i, "text")
                raise index.error(where, f"{text} is not in the lab folder")
    steps = []
    for number, (step, mine) in enumerate(zip(details["steps"], written, strict=True), start=1):
        for where, name in [(("details", "steps", number - 1, "text"), step["text"])] + [
            (("details", "steps", number - 1, "verify", i, "file"), v["file"])
            for i, v in enumerate(step.get("verify", []))
        ]:
            if not (path / name).is_file():
                raise index.error(where, f"{name} is not in the lab folder")
        local = local_steps[number - 1] if number <= len(local_steps) else {}
        title = local.get("title") if isinstance(local, dict) else None
        steps.append(
            LabStep(
                number,
                mine["key"],
                title if isinstance(title, str) and title else step["title"],
                step["text"],
                tuple(
                    Verify(v["name"], v["file"], v["hint"], v.get("timeout", 0))
                    for v in step.get("verify", [])
                ),
            )
        )
    keys = [s.key for s in steps]
    for i, key in enumerate(keys):
        if key in keys[:i]:
            raise own.error(("steps", i, "key"), f"step key {key!r} is used twice")
    background = details.get("intro", {}).get("background", "")
    if background and not (path / background).is_file():
        raise index.error(
            ("details", "intro", "background"), f"{background} is not in the lab folder"
        )
    assets = tuple(
        Asset(a["file"], a["target"], a.get("chmod", ""))
        for a in details.get("assets", {}).get("host01", [])
    )
    folder = LabFolder(
        path=path,
        name=path.resolve().name,
        title=translation.get("title") or own.data.get("title", index.data["title"]),
        steps=tuple(steps),
        background=background,
        assets=assets,
        languages=languages,
        endpoint=own.data.get("endpoint", DEFAULT_ENDPOINT).rstrip("/"),
        lang=chosen,
    )
    return folder, own
