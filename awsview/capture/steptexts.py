"""Where `awsview docs DIR` writes in a lab folder: its images under ``assets/``, and in each
step text of every language a block of image links between two marker comments, after the
step's commands.

A block is found again by its markers and replaced whole; the text around it is the author's
and kept as it is, so a second run writes the same bytes. A text with no block gets one after
its last runnable fenced block (or at its end). Nothing is written through a symbolic link, nor
outside the folder; each file is written to a temporary file beside it and renamed into place.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from awsview.capture.docshots import DocsError
from awsview.model.textfile import NotText, read_utf8
from awsview.model.untrusted import markdown, markdown_target

MAX_TEXT = 1_000_000  # bytes: a step text larger than this is not a step text
RUNNABLE = ("bash", "sh", "shell", "console")  # as awsview.labs.script counts a block runnable
END = "<!-- /awsview:shot -->"


class BadFolder(DocsError):
    """The lab folder cannot be written as asked: bad input, exit status 2."""

    exit_status = 2


@dataclass(frozen=True)
class StepText:
    """One step's text in one language."""

    number: int
    lang: str
    title: str
    path: Path  # inside the folder


def begin(number: int) -> str:
    return f"<!-- awsview:shot step={number} -->"


def step_texts(folder: Path) -> list[StepText]:
    """Each step's text in each language ``index.json`` gives (already validated by the
    folder's loader), with its title in that language where the lab gives one."""
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    steps = index["details"]["steps"]
    found = [
        StepText(n, "en", step["title"], folder / step["text"])
        for n, step in enumerate(steps, start=1)
    ]
    for entry in index.get("i18n", []):
        local = entry.get("details", {}).get("steps", [])
        for n, step in enumerate(steps, start=1):
            mine = local[n - 1] if n <= len(local) and isinstance(local[n - 1], dict) else {}
            text, title = mine.get("text"), mine.get("title")
            if isinstance(text, str) and text:
                title = title if isinstance(title, str) and title else step["title"]
                found.append(StepText(n, entry["lang"], title, folder / text))
    return found


def inside(folder: Path, path: Path, what: str) -> None:
    """Refuse ``path`` when it, or a folder on the way to it, is a symbolic link, or when it
    is not inside ``folder``."""
    relative = path.relative_to(folder) if path.is_relative_to(folder) else None
    here = folder
    for part in relative.parts if relative is not None else ():
        here = here / part
        if here.is_symlink():
            raise BadFolder(f"{here}: {what} is a symbolic link; docs does not write through one")
    if relative is None or not path.resolve().is_relative_to(folder.resolve()):
        raise BadFolder(f"{path}: {what} is outside the lab folder {folder}")


def read_text(text: StepText, folder: Path) -> str:
    """The step text, checked: inside the folder, no link, bounded, UTF-8, its block whole."""
    inside(folder, text.path, "a step text")
    try:
        body = read_utf8(text.path, MAX_TEXT)
    except NotText as exc:
        raise BadFolder(str(exc)) from None
    except OSError as exc:
        raise BadFolder(f"{text.path}: {exc.strerror or exc}") from None
    start = body.find(begin(text.number))
    if start >= 0 and body.find(END, start) < 0:
        raise BadFolder(f"{text.path}: {begin(text.number)} has no {END} after it")
    return body


def link(text: StepText, image: Path) -> str:
    """``image`` as a Markdown link destination relative to the step text."""
    relative = PurePosixPath(Path(os.path.relpath(image, text.path.parent)).as_posix())
    return "/".join(markdown_target(part) if part != ".." else ".." for part in relative.parts)


def block(text: StepText, images: list[tuple[str, Path]]) -> str:
    """The marker block: each image with its alt text (the step's title in the text's
    language, or what the image shows)."""
    lines = [begin(text.number)]
    lines += [f"![{markdown(alt, 200)}]({link(text, image)})" for alt, image in images]
    return "\n".join([*lines, END])


def placed(body: str, number: int, new: str) -> str:
    """``body`` with ``new`` in place of its block, or inserted after the commands."""
    start = body.find(begin(number))
    if start >= 0:
        end = body.index(END, start) + len(END)
        return body[:start] + new + body[end:]
    lines = body.split("\n")
    after = _after_commands(lines)
    if after is None:
        return body.rstrip("\n") + "\n\n" + new + "\n"
    rest = lines[after:]
    gap = [""] if rest and rest[0].strip() else []
    return "\n".join([*lines[:after], "", new, *gap, *rest])


def _after_commands(lines: list[str]) -> int | None:
    """The index of the line after the last runnable fenced block's closing fence."""
    fence: str | None = None
    runnable, last = False, None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if fence is None:
            opened = re.match(r"(`{3,}|~{3,})\s*(.*)$", stripped)
            if opened:
                words = opened.group(2).split()
                fence = opened.group(1)
                runnable = bool(words) and words[0].lower() in RUNNABLE
            continue
        if stripped.startswith(fence) and not stripped[len(fence) :].strip():
            if runnable:
                last = i + 1
            fence = None
    return last


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` in a temporary file beside ``path``, then renamed over it: a reader sees the
    old file or the new one, never half of one; the mode of the old file is kept."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
