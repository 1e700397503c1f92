"""The log file: ``--log-file FILE`` or ``AWSVIEW_LOG=FILE`` records every failed API call (its
service:operation and the reason), every retry and backoff a poller waits out, each throttle and
each recovery, with the time. Nothing is logged anywhere unless asked: the terminal belongs to
the viewer.

Lines look like ``2025-05-02 14:03:11,482 WARNING awsview.calls: sqs:GetQueueAttributes: throttled
(ThrottlingException)``. No credential reaches the log: every reason is the one-line, cleaned text
the panels show.
"""

from __future__ import annotations

import logging
import os

LOGGER = "awsview"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogFileError(Exception):
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
    handler.setFormatter(logging.Formatter(FORMAT))
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    os.environ["AWSVIEW_LOG"] = chosen
    return chosen
