"""When the emulator's state directory cannot be written: a full disk, a file size limit, a
read-only mount.

The person running the emulator hears it once, in one line on stderr, and once more when the
directory can be written again — never a traceback per request or per log line: a terminal
flooded with tracebacks hides the one line that says what to do.
"""

from __future__ import annotations

import logging
import os
import resource
import sys
import threading
from collections.abc import Callable
from pathlib import Path

Say = Callable[[str], None]
log = logging.getLogger(__name__)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def what_failed(exc: BaseException, where: Path) -> str:
    """Why ``where`` could not be written, in a few words ("full (No space left on device)")."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    number = getattr(exc, "errno", None)
    if name == "SQLITE_FULL" or number == 28:  # ENOSPC
        return f"full ({detail})"
    if name.startswith("SQLITE_READONLY") or number == 30:  # EROFS
        return f"read-only ({detail})"
    if number == 27 or (name.startswith("SQLITE_IOERR") and _size_limited()):  # EFBIG
        return f"full: a file reached the size limit (ulimit -f; {detail})"
    try:
        if os.statvfs(where).f_bavail == 0:
            return f"full ({detail})"
    except OSError:
        pass
    return f"not writable ({detail})"


def _size_limited() -> bool:
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return soft != resource.RLIM_INFINITY


class Notice:
    """Says, once per change, whether the state directory can be written."""

    def __init__(self, state_dir: Path, say: Say | None = None):
        self.state_dir = state_dir
        self._say = say or _stderr
        self._lock = threading.Lock()
        self.failing: str | None = None

    def failed(self, why: str) -> None:
        with self._lock:
            if self.failing is not None:
                return
            self.failing = why
        self._tell(
            f"the state directory {self.state_dir} is {why}: "
            "DynamoDB writes are refused until it can be written again; reads go on"
        )

    def mended(self) -> None:
        with self._lock:
            if self.failing is None:
                return
            self.failing = None
        self._tell(
            f"the state directory {self.state_dir} can be written again: "
            "DynamoDB writes are accepted"
        )

    def _tell(self, line: str) -> None:
        self._say(f"awsview: emulator: {line}")
        log.warning("%s", line)  # the log too, if it has room


class QuietFileHandler(logging.FileHandler):
    """A log file that, when it cannot be written, says so once and drops lines until it can
    (logging.Handler.handleError prints a traceback to stderr for every record that fails)."""

    def __init__(self, path: Path, say: Say | None = None):
        super().__init__(path, encoding="utf-8")
        self._say = say or _stderr
        self._failing = False
        self._written = True

    def emit(self, record: logging.LogRecord) -> None:
        self._written = True
        super().emit(record)  # calls handleError when the line cannot be written
        if self._written:
            self._failing = False  # said again if it fails again

    def handleError(self, record: logging.LogRecord) -> None:
        self._written = False
        if self._failing:
            return
        self._failing = True
        exc = sys.exc_info()[1]
        why = what_failed(exc, Path(self.baseFilename).parent) if exc else "not writable"
        self._say(
            f"awsview: emulator: its log {self.baseFilename} is {why}: "
            "log lines are dropped until it can be written"
        )
