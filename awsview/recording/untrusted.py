"""A recording is untrusted input: what the reader accepts from a file, and what it may cost.

A recording comes from anyone (a class's shared folder, a download, an attachment), so reading
one must never run away: only a regular file is opened (a FIFO would block, ``/dev/zero`` never
ends); the header, the channels, every time and every keyframe's and frame's content are
checked for what the writer puts there; and what decoding a moment may produce is bounded by
the file's own size — decompressed bytes, values built, the elements patches build — so that
a few kilobytes crafted to expand (a zstd bomb, millions of empty arrays, patches that rebuild
a long sequence again and again) fail fast with one line instead of taking the machine's
memory. A legitimate recording stays far inside: a moment decodes from its keyframe, which the
writer keeps to a few times the frames after it.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard

from awsview.model.errors import FailedError
from awsview.model.snapshot import Snapshot

# Per moment decoded (from its keyframe): a floor, plus so much per byte of the file. zstd at
# level 3 shrinks the model's msgpack ~13 times; 64 leaves room for very repetitive logs.
FLOOR_BYTES = 16 * 1024 * 1024
BYTES_PER_FILE_BYTE = 64
# Values built (elements, arrays and maps), likewise. Bytes alone do not bound memory: crafted
# input can hold a value per byte, each an empty array of ~60 bytes of memory. The model holds
# a value per ~5 bytes of msgpack, ~2.5 per byte of file: 32 leaves the same room as above.
FLOOR_VALUES = 1_000_000
VALUES_PER_FILE_BYTE = 32
# Elements of sequences that patches build per moment: a capped feed of 100,000 lines rebuilt
# by each of the 3,000 frames a keyframe may have before the next is 3e8, in a file of megabytes.
FLOOR_WORK = 64 * 1024 * 1024
WORK_PER_FILE_BYTE = 1024
# The writer compresses at level 3 (a 2 MiB window at most); a file asking for more is refused
# before zstd allocates it.
MAX_WINDOW = 8 * 1024 * 1024
# Compressed bytes fed to zstd at a time: each call can produce at most ~128 KiB per 3 input
# bytes, so the budget is checked before a bomb has produced more than ~11 MiB past it.
FEED = 256
# Times are wall-clock seconds: from 1970 to 2100, never NaN or infinite.
EARLIEST, LATEST = 0.0, 4_102_444_800.0
MAX_CHANNELS = 10_000
# A header (its schema: ~6 KB) or a channel's description, as plain msgpack: each is decoded
# whole when the file opens, before any budget applies.
MAX_PLAIN_RECORD = 1024 * 1024
MAX_INFO = 64  # keys of a channel's description or of a meta update
MAX_TEXT = 4096  # characters of one of their values


class RecordingError(FailedError):
    """A recording cannot be read or written; one line for the person who asked."""


def read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file; RecordingError (one line) otherwise."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise RecordingError(f"{path}: {kind}; a recording is a file")
        chunks, left = [], info.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def sane_time(when: Any) -> bool:
    return (
        isinstance(when, (int, float))
        and not isinstance(when, bool)
        and math.isfinite(when)
        and EARLIEST <= when <= LATEST
    )


def check_header(header: Any, version: int, codec_format: int) -> str | None:
    """What is wrong with a recording's header, or None."""
    if not isinstance(header, dict):
        return f"its header is a {type(header).__name__}, not a map"
    for name, newest in (("version", version), ("codec", codec_format)):
        value = header.get(name)
        if type(value) is not int or value < 1:
            return f"its header's {name} is {_shown(value)}, not a format number"
        if value > newest:
            return f"written by a newer AWS View (format {value}); this one reads format {newest}"
    if not sane_time(header.get("started")):
        return f"its header's start time is {_shown(header.get('started'))}"
    if not isinstance(header.get("command", ""), str):
        return "its header's command is not text"
    return None


def check_info(info: Any, what: str) -> str | None:
    """What is wrong with a channel's description or a meta update (text and numbers), or None."""
    if not isinstance(info, dict) or len(info) > MAX_INFO:
        return f"{what} is not a map of at most {MAX_INFO} entries"
    for key, value in info.items():
        if not isinstance(key, str) or len(key) > MAX_TEXT:
            return f"{what} has a key that is not a name"
        if not (value is None or isinstance(value, (str, int, float))):
            return f"{what}'s {key[:40]!r} is a {type(value).__name__}"
        if isinstance(value, str) and len(value) > MAX_TEXT:
            return f"{what}'s {key[:40]!r} is longer than {MAX_TEXT} characters"
    return None


def _shown(value: Any) -> str:
    return (
        repr(value)[:40]
        if isinstance(value, (int, float, str, type(None)))
        else type(value).__name__
    )


class Budget:
    """What decoding one moment of a file may produce, in proportion to the file's size."""

    def __init__(self, path: Path, file_size: int):
        self.path = path
        self.file_size = file_size
        self.max_bytes = FLOOR_BYTES + BYTES_PER_FILE_BYTE * file_size
        self.max_work = FLOOR_WORK + WORK_PER_FILE_BYTE * file_size
        self.max_values = FLOOR_VALUES + VALUES_PER_FILE_BYTE * file_size
        self.bytes = self.work = self.values = 0

    def reset(self) -> None:
        self.bytes = self.work = self.values = 0

    def values_left(self) -> int:
        return max(0, self.max_values - self.values)

    def spend_values(self, count: int) -> None:
        self.values += count
        if self.values > self.max_values:
            raise self._exceeded(f"more than {self.max_values:,} values decoded")

    def spend_bytes(self, count: int) -> None:
        self.bytes += count
        if self.bytes > self.max_bytes:
            raise self._exceeded(f"more than {self.max_bytes // (1 << 20)} MiB decompressed")

    def spend_work(self, count: int) -> None:
        self.work += count
        if self.work > self.max_work:
            raise self._exceeded(f"more than {self.max_work:,} elements built by its changes")

    def _exceeded(self, what: str) -> RecordingError:
        return RecordingError(
            f"{self.path}: one moment needs {what}, the limit for a file of "
            f"{self.file_size:,} bytes (a damaged or crafted recording)"
        )


class Inflater:
    """One channel's zstd stream from a keyframe on, decompressed within a budget."""

    def __init__(self, budget: Budget):
        self._stream = zstandard.ZstdDecompressor(max_window_size=MAX_WINDOW).decompressobj()
        self._budget = budget

    def inflate(self, raw: bytes, fail: Callable[[str], Exception]) -> bytes:
        out, view = [], memoryview(raw)
        decompress, spend = self._stream.decompress, self._budget.spend_bytes
        try:
            for at in range(0, len(view), FEED):
                piece = decompress(view[at : at + FEED])
                if piece:
                    spend(len(piece))
                    out.append(piece)
        except zstandard.ZstdError as exc:
            raise fail(f"damaged compressed data ({exc})") from None
        return b"".join(out)


# Each change a frame may hold, and its length: ("s", key, op), ("+", key, snapshot),
# ("x", key), ("status", level, text), ("meta", {name: value}).
OP_SHAPES = {"s": 3, "+": 3, "x": 2, "status": 3, "meta": 2}


def checked_snapshot(value: Any, key: str, fail: Callable[[str], RecordingError]) -> Any:
    if not isinstance(value, Snapshot):
        raise fail(f"{key[:80]!r} is a {type(value).__name__}, not a snapshot")
    return value


def checked_status(value: Any, fail: Callable[[str], RecordingError]) -> tuple[str, str]:
    if not (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, str) for v in value)
    ):
        raise fail("a status line that is not (level, text)")
    return (value[0], value[1])


def checked_whole(
    whole: Any, fail: Callable[[str], RecordingError]
) -> tuple[Any, dict[str, Any], tuple[str, str], dict[str, Any]]:
    """A keyframe's profile, snapshots, status and meta, each of the type the writer puts."""
    from awsview.labspec import LabSpec

    if not isinstance(whole, dict):
        raise fail(f"a keyframe that is a {type(whole).__name__}, not a map")
    profile = whole.get("profile")
    if profile is not None and not isinstance(profile, LabSpec):
        raise fail(f"a lab that is a {type(profile).__name__}")
    snapshots = whole.get("snapshots") or {}
    if not isinstance(snapshots, dict):
        raise fail("snapshots that are not a map")
    for key, value in snapshots.items():
        if not isinstance(key, str):
            raise fail("a snapshot key that is not text")
        checked_snapshot(value, key, fail)
    meta = whole.get("meta") or {}
    wrong = check_info(meta, "its meta")
    if wrong:
        raise fail(wrong)
    status = checked_status(whole.get("status") or ("ok", ""), fail)
    return profile, dict(snapshots), status, dict(meta)
