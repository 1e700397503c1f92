"""Reading a configuration file the user wrote (a theme, a lab profile, a class roster): UTF-8,
and when it is not, the line and column of the first byte that is not, so the error is one line
that says where to look."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from awsview.model.errors import UserError

SHOWN = 120  # how much of a bad value an error line repeats


def shown(text: str) -> str:
    """``text`` safe to repeat in a one-line error: control characters escaped, length bounded."""
    cleaned = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text[: SHOWN + 1])
    return cleaned if len(cleaned) <= SHOWN else cleaned[:SHOWN] + "…"


class BadFile(UserError, ValueError):
    """A file the user wrote or installed (theme, lab profile, class roster) that cannot be used;
    the message is one line naming the file, the line where known, and what is wrong."""


class NotText(BadFile):
    """A file that cannot be read as UTF-8 text; the message names the file and the line."""


def read_utf8(path: Path) -> str:
    """The file's text; raises NotText (a ValueError) naming the line of the first bad byte, and
    lets OSError through for the caller to say."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotText(
            f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at column {column}); "
            "save the file as UTF-8"
        ) from None


def toml_error(path: Path | str, exc: tomllib.TOMLDecodeError) -> str:
    """A TOML syntax error as every file error is said: ``file:N: what``."""
    match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
    said = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
    return f"{path}{f':{match.group(1)}' if match else ''}: {said}"
