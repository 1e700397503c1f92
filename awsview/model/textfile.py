"""Reading a configuration file the user wrote (a theme, a lab profile, a class roster): UTF-8,
and when it is not, the line and column of the first byte that is not, so the error is one line
that says where to look."""

from __future__ import annotations

import os
import re
import stat
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
    """A file that cannot be read as UTF-8 text (not UTF-8, not a regular file, or far bigger
    than any text of its kind); the message names the file, and the line where there is one."""


LIMIT = 1 << 20  # a lab's texts and settings, a theme, a roster: kilobytes, never a mebibyte


def read_utf8(path: Path, limit: int = LIMIT) -> str:
    """The file's text; raises NotText (a ValueError) naming the line of the first bad byte, for
    what is not a regular file (a pipe would block, a device never end) and for a file of more
    than ``limit`` bytes; lets OSError through for the caller to say."""
    # O_NONBLOCK: opening a named pipe for reading would otherwise wait for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotText(f"{path}: not a regular file")
        data = file.read(limit + 1)
    if len(data) > limit:
        said = f"{limit / (1 << 20):g} MiB" if limit >= 1 << 20 else f"{limit} bytes"
        raise NotText(f"{path}: more than {said}, far more than such a file holds")
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
