"""Recordings: every snapshot change of a viewer, with its time, in one append-only file.

Layout: ``MAGIC``, then records. Each record is ``<u32 length><u32 crc32>`` and a body of
``<u8 kind><u8 flags><u16 channel><f64 time>`` followed by its payload. A record is written with
one ``write`` call, so a recorder stopped at any moment (kill -9 included) leaves whole records
and at most one torn one at the end, which the reader recognises (length or checksum) and leaves
out: a recording reads up to its last complete frame.

- ``HEADER`` (first): plain msgpack — format, codec schema, when, which command.
- ``CHANNEL``: plain msgpack — one followed viewer (a learner in a class recording): its
  backend, endpoint, region; its account when known (``META`` frames may say it later).
- ``KEYFRAME``: a channel's whole state (lab profile, snapshots, status line, meta).
- ``FRAME``: what changed since the previous record of the channel: snapshot differences
  (``awsview.model.patch``), snapshots gone, the status line, meta.

Keyframe and frame payloads are a zstd stream per channel, flushed block by block: each
frame compresses against everything before it since its keyframe (a queue count that changed
costs ~20 bytes), and each keyframe starts a new zstd frame, so reading any moment decodes
one keyframe and the frames after it, never the whole file. Why this and not SQLite, with
the figures: docs/performance.md.

Credentials are never written: snapshots hold what the panels show (redacted log lines, an
environment's variable names only), and the channel's target is the endpoint, region and
profile *name* — never a key, secret or token.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import msgpack
import zstandard

from awsview.model.codec import FORMAT, Codec, CodecError, current_schema
from awsview.model.patch import PatchError, patch
from awsview.recording.untrusted import (
    MAX_CHANNELS,
    MAX_PLAIN_RECORD,
    OP_SHAPES,
    Budget,
    Inflater,
    RecordingError,
    check_header,
    check_info,
    checked_snapshot,
    checked_status,
    checked_whole,
    read_regular,
    sane_time,
)

MAGIC = b"AWSVIEW-RECORDING\n\x00\x01"
VERSION = 1
PREFIX = struct.Struct("<II")  # length of the body, crc32 of the body
BODY = struct.Struct("<BBHd")  # kind, flags, channel, time
MAX_RECORD = 256 * 1024 * 1024  # a length beyond this is damage, not a frame
ZSTD_LEVEL = 3  # fast on small frames; higher levels save a few per cent for several times the time

HEADER, CHANNEL, KEYFRAME, FRAME = 1, 2, 3, 4
# Frame flags: what a frame did, so the time line can jump to it without decoding it.
CHECKPOINTS = 1  # a checkpoint mark changed
DECISION = 2  # a new write decision
PROFILE = 4  # the lab (profile) changed: a new model
STATUS = 8  # the status line changed


class LearnerError(RecordingError):
    """A --learner the recording does not have: the command line's mistake, not the file's."""

    exit_status = 2


def _read_plain(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


# -- writing -------------------------------------------------------------------------------


class RecordingWriter:
    """A new recording file; refuses to overwrite one."""

    def __init__(self, path: Path, command: str, started: float):
        self.path = Path(path)
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        except FileExistsError:
            raise RecordingError(f"{self.path} already exists; record into a new file") from None
        except OSError as exc:
            raise RecordingError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self.codec = Codec()
        self.channels = 0
        self.bytes = 0
        os.write(self._fd, MAGIC)
        self._record(
            HEADER,
            0,
            0,
            started,
            msgpack.packb(
                {
                    "format": "awsview recording",
                    "version": VERSION,
                    "codec": FORMAT,
                    "schema": current_schema(),
                    "started": started,
                    "command": command,
                }
            ),
        )

    def channel(self, name: str, info: dict[str, Any], at: float) -> ChannelWriter:
        number = self.channels
        self.channels += 1
        self._record(CHANNEL, 0, number, at, msgpack.packb({"name": name, **info}))
        return ChannelWriter(self, number)

    def _record(self, kind: int, flags: int, channel: int, at: float, payload: bytes) -> None:
        body = BODY.pack(kind, flags, channel, at) + payload
        data = PREFIX.pack(len(body), zlib.crc32(body)) + body
        written = os.write(self._fd, data)  # one call: a frame is whole or (at the end) torn
        if written != len(data):
            raise OSError(f"short write ({written} of {len(data)} bytes)")
        self.bytes += len(data)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class ChannelWriter:
    """One channel's compressed stream: keyframes start a zstd frame, frames continue it."""

    def __init__(self, writer: RecordingWriter, number: int):
        self.writer = writer
        self.number = number
        self._compressor: Any = None
        self.plain_since_keyframe = 0  # bytes of frames since the last keyframe, before zstd
        self.frames_since_keyframe = 0
        self.keyframe_bytes = 0

    def keyframe(self, at: float, state: dict[str, Any], flags: int = 0) -> None:
        plain = self.writer.codec.pack(state)
        self._compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compressobj()
        self.keyframe_bytes, self.plain_since_keyframe, self.frames_since_keyframe = (
            len(plain),
            0,
            0,
        )
        self.writer._record(KEYFRAME, flags, self.number, at, self._squeeze(plain))

    def frame(self, at: float, ops: list[tuple], flags: int = 0) -> None:
        plain = self.writer.codec.pack(ops)
        self.plain_since_keyframe += len(plain)
        self.frames_since_keyframe += 1
        self.writer._record(FRAME, flags, self.number, at, self._squeeze(plain))

    def _squeeze(self, plain: bytes) -> bytes:
        return self._compressor.compress(plain) + self._compressor.flush(
            zstandard.COMPRESSOBJ_FLUSH_BLOCK
        )


# -- reading -------------------------------------------------------------------------------


class Mark(NamedTuple):
    """One record of a channel as the index knows it, without decoding it. A named tuple, not a
    frozen dataclass: an hour's index holds tens of thousands, and a tuple is built in half the
    time."""

    index: int  # position in the channel's records
    kind: int
    flags: int
    time: float
    offset: int  # where its payload starts in the file
    size: int


@dataclass
class ChannelState:
    """What a followed viewer showed at one moment."""

    time: float
    profile: Any = None  # awsview.labspec.LabSpec
    snapshots: dict[str, Any] = field(default_factory=dict)
    status: tuple[str, str] = ("ok", "")
    meta: dict[str, Any] = field(default_factory=dict)


class Recording:
    """A recording opened for reading: the header, the channels and an index of every frame."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._data = read_regular(self.path)
        if not self._data.startswith(MAGIC):
            raise RecordingError(f"{self.path}: not an AWS View recording")
        self.header: dict[str, Any] = {}
        self.channels: dict[int, dict[str, Any]] = {}
        self.marks: dict[int, list[Mark]] = {}
        self.damage: str | None = None  # why reading stopped before the end of the file
        self.budget = Budget(self.path, len(self._data))
        self._index()
        if not self.header:
            raise RecordingError(f"{self.path}: no header (stopped before it was written?)")
        try:
            self.codec = Codec(self.header.get("schema") or [])
        except CodecError as exc:
            raise self.malformed(f"its header's schema cannot be read ({exc})") from None

    def malformed(self, what: str) -> RecordingError:
        """A record whose checksum is right and whose content is not: a crafted or broken file."""
        return RecordingError(f"{self.path}: {what}")

    def _index(self) -> None:
        data, at = self._data, len(MAGIC)
        view, crc32, size = (
            memoryview(data),
            zlib.crc32,
            len(data),
        )  # locals: ~40,000 frames an hour
        while at < size:
            if len(data) - at < PREFIX.size + BODY.size:
                self.damage = f"the last {len(data) - at} bytes are an incomplete frame"
                return
            length, crc = PREFIX.unpack_from(data, at)
            start = at + PREFIX.size
            if length < BODY.size or length > MAX_RECORD or start + length > len(data):
                self.damage = f"the last {len(data) - at} bytes are an incomplete frame"
                return
            body = view[start : start + length]
            if crc32(body) != crc:
                self.damage = f"damaged frame at byte {at}; {len(data) - at} bytes left unread"
                return
            kind, flags, channel, when = BODY.unpack_from(body)
            if not sane_time(when):
                raise self.malformed(f"the record at byte {at} has the time {when!r}")
            payload = bytes(body[BODY.size :]) if kind in (HEADER, CHANNEL) else None
            if kind == HEADER and not self.header:
                self.header = self._plain(payload, at, "header")
                wrong = check_header(self.header, VERSION, FORMAT)
                if wrong:
                    raise self.malformed(wrong)
            elif kind == CHANNEL:
                info = self._plain(payload, at, "channel")
                wrong = check_info(info, f"channel {channel}'s description")
                if wrong:
                    raise self.malformed(wrong)
                if channel not in self.channels and len(self.channels) >= MAX_CHANNELS:
                    raise self.malformed(f"more than {MAX_CHANNELS} channels")
                self.channels[channel] = info
                self.marks.setdefault(channel, [])
            elif kind in (KEYFRAME, FRAME) and channel in self.channels:
                marks = self.marks[channel]
                if kind == FRAME and not marks:
                    raise self.malformed(f"a frame before its channel's first keyframe (byte {at})")
                marks.append(
                    Mark(len(marks), kind, flags, when, start + BODY.size, length - BODY.size)
                )
            at = start + length

    def _plain(self, payload: Any, at: int, what: str) -> Any:
        if len(payload) > MAX_PLAIN_RECORD:
            raise self.malformed(f"a {what} of {len(payload):,} bytes at byte {at}")
        try:
            return _read_plain(payload)
        except (ValueError, TypeError, msgpack.ExtraData, msgpack.StackError) as exc:
            raise self.malformed(f"unreadable {what} at byte {at} ({exc})") from None

    @property
    def started(self) -> float:
        return float(self.header.get("started", 0.0))

    def player(self, channel: int = 0) -> ChannelPlayer:
        if channel not in self.channels or not self.marks.get(channel):
            raise RecordingError(
                f"{self.path}: no frames" + (f" for channel {channel}" if channel else "")
            )
        return ChannelPlayer(self, channel)

    def channel_named(self, name: str | None) -> int:
        """The channel of a learner (class recordings), or the only/first one."""
        if name is None:
            return min(self.channels, default=0)
        for number, info in self.channels.items():
            if info.get("name") == name:
                return number
        names = ", ".join(str(i.get("name")) for i in self.channels.values())
        raise LearnerError(f"{self.path}: no learner {name!r} (it has: {names})")


class ChannelPlayer:
    """Any moment of one channel, by frame: a keyframe and the frames after it."""

    def __init__(self, recording: Recording, channel: int):
        self.recording = recording
        self.channel = channel
        self.marks = recording.marks[channel]
        self.info = recording.channels[channel]
        self._keyframes = [m.index for m in self.marks if m.kind == KEYFRAME]
        self._at: int = -1
        self._state: ChannelState | None = None
        self._inflater: Inflater | None = None
        self.last = len(self.marks) - 1

    @property
    def times(self) -> list[float]:
        return [m.time for m in self.marks]

    def index_at(self, moment: float) -> int:
        """The last frame at or before ``moment`` (the first one if ``moment`` is earlier)."""
        low, high = 0, self.last
        while low < high:
            middle = (low + high + 1) // 2
            if self.marks[middle].time <= moment:
                low = middle
            else:
                high = middle - 1
        return low

    def state(self, index: int) -> ChannelState:
        """The channel as it was right after frame ``index``; RecordingError (one line) when a
        frame on the way is malformed or would cost more than the file's budget."""
        index = max(0, min(index, self.last))
        try:
            if self._state is None or index < self._at or self._keyframe_of(index) > self._at:
                self._start(self._keyframe_of(index))
            while self._at < index:
                self._advance()
        except RecordingError:
            self._state = None  # the stream stopped mid-frame: a next moment starts afresh
            raise
        return self._snapshot()

    def _keyframe_of(self, index: int) -> int:
        found = 0
        for k in self._keyframes:
            if k > index:
                break
            found = k
        return found

    def _decoded(self, mark: Mark) -> Any:
        raw = self.recording._data[mark.offset : mark.offset + mark.size]
        budget, codec = self.recording.budget, self.recording.codec
        try:
            plain = self._inflater.inflate(raw, CodecError)
            value = codec.unpack(plain, max_values=budget.values_left())
        except CodecError as exc:
            if budget.values + codec.last_values > budget.max_values:
                budget.spend_values(codec.last_values)  # says which limit, as the others do
            raise self._malformed(mark, str(exc)) from None
        budget.spend_values(codec.last_values)
        return value

    def _malformed(self, mark: Mark, what: str) -> RecordingError:
        return self.recording.malformed(f"frame {mark.index + 1} of channel {self.channel}: {what}")

    def _start(self, keyframe: int) -> None:
        self._state = None
        self.recording.budget.reset()
        self._inflater = Inflater(self.recording.budget)
        mark = self.marks[keyframe]
        whole = self._decoded(mark)
        self._state = ChannelState(mark.time, *checked_whole(whole, self._fail(mark)))
        self._at = keyframe

    def _fail(self, mark: Mark) -> Callable[[str], RecordingError]:
        return lambda what: self._malformed(mark, what)

    def _advance(self) -> None:
        mark = self.marks[self._at + 1]
        if mark.kind == KEYFRAME:
            self._start(mark.index)
            return
        ops = self._decoded(mark)
        fail = self._fail(mark)
        state = self._state
        assert state is not None
        snapshots = dict(state.snapshots)
        status, meta = state.status, state.meta
        if not isinstance(ops, (list, tuple)):
            raise fail("its changes are not a list")
        for op in ops:
            if not isinstance(op, (list, tuple)) or not op:
                raise fail("a change that is not one")
            code, shape = op[0], OP_SHAPES.get(op[0]) if isinstance(op[0], str) else None
            if shape is None or len(op) != shape:
                raise fail(f"an unknown change {str(code)[:40]!r}")
            if code in ("s", "+", "x") and not isinstance(op[1], str):
                raise fail("a snapshot key that is not text")
            if code == "s":
                if op[1] not in snapshots:
                    raise fail(f"a change to {op[1][:80]!r}, which it does not have")
                try:
                    changed = patch(snapshots[op[1]], op[2], self.recording.budget.spend_work)
                except (PatchError, RecursionError) as exc:
                    raise fail(f"{op[1][:80]!r}: {exc}") from None
                snapshots[op[1]] = checked_snapshot(changed, op[1], fail)
            elif code == "+":
                snapshots[op[1]] = checked_snapshot(op[2], op[1], fail)
            elif code == "x":
                snapshots.pop(op[1], None)
            elif code == "status":
                status = checked_status(op[1:], fail)
            else:  # meta
                wrong = check_info(op[1], "a meta change")
                if wrong:
                    raise fail(wrong)
                meta = {**meta, **op[1]}
        self._state = ChannelState(mark.time, state.profile, snapshots, status, meta)
        self._at += 1

    def _snapshot(self) -> ChannelState:
        state = self._state
        return ChannelState(
            state.time, state.profile, dict(state.snapshots), state.status, dict(state.meta)
        )
