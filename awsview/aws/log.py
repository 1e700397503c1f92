"""The log file: ``--log-file FILE`` or ``AWSVIEW_LOG=FILE`` records every failed API call (its
service:operation and the reason), every retry and backoff a poller waits out, each throttle and
each recovery, with the time. Nothing is logged anywhere unless asked — not to the terminal (it
belongs to the viewer), not to the emulator's log when the emulator runs in the same process —
and, unasked, nothing is even formatted: the loggers are off.

Lines look like ``2025-05-02 14:03:11,482 WARNING call sqs:GetQueueAttributes: throttled
(ThrottlingException)`` and ``… INFO poll queues: retry in 4.0 s after throttled
(ThrottlingException)``. No credential reaches the log: every reason is the one-line, cleaned
text the panels show.
"""

from __future__ import annotations

import logging
import os

from awsview.model import untrusted
from awsview.model.errors import UserError

FORMAT = "%(asctime)s %(levelname)s %(message)s"
OFF = logging.CRITICAL + 1

_root = logging.getLogger("awsview.log")
_root.propagate = False  # never the root logger's handlers (the emulator's log file, a terminal)
_root.setLevel(OFF)
calls = logging.getLogger("awsview.log.call")  # one line per failed call
polls = logging.getLogger("awsview.log.poll")  # retries, backoffs, recoveries


class _Cleaned(logging.Formatter):
    """Each record one clean line: a reason, a key or a name quoted from AWS acts on no terminal
    that shows the file (`tail -f`)."""

    def format(self, record: logging.LogRecord) -> str:
        return untrusted.line(super().format(record))


class LogFileError(UserError):
    """The log file cannot be opened (one line)."""


def configure(path: str | os.PathLike[str] | None = None) -> str | None:
    """Start logging to ``path`` (else $AWSVIEW_LOG, else nowhere); returns the file used.
    Child processes (`awsview serve`'s sessions) inherit it through AWSVIEW_LOG."""
    chosen = str(path) if path else os.environ.get("AWSVIEW_LOG") or None
    if not chosen:
        return None
    try:
        handler = logging.FileHandler(chosen, encoding="utf-8")
    except OSError as exc:
        raise LogFileError(f"cannot write the log file {chosen}: {exc.strerror or exc}") from None
    handler.setFormatter(_Cleaned(FORMAT))
    _root.addHandler(handler)
    _root.setLevel(logging.INFO)
    os.environ["AWSVIEW_LOG"] = chosen
    return chosen


def stop() -> None:
    """Stop logging (tests): close the files, turn the loggers off again."""
    for handler in list(_root.handlers):
        _root.removeHandler(handler)
        handler.close()
    _root.setLevel(OFF)
