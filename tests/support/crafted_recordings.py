"""Crafted recordings: each breaks one thing a reader must not trust (tests/corpus/recordings).

Every file is whole (right checksums) and small; what it holds is wrong in one way. The reader
must refuse each with one line, never a traceback, a hang or the machine's memory.

    python -m tests.support.crafted_recordings [DIR]   # rewrites the corpus (default below)
"""

from __future__ import annotations

import dataclasses
import struct
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import zstandard

from awsview.model.codec import FORMAT, Codec, current_schema
from awsview.recording.file import (
    BODY,
    CHANNEL,
    FRAME,
    HEADER,
    KEYFRAME,
    MAGIC,
    PREFIX,
    VERSION,
)
from tests.support import sample

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "recordings"
T0 = sample.T0
EXT = 0xC7  # msgpack ext 8: the codec's marks are empty extension values
QUEUES = "queues"


def record(kind: int, at: float, payload: bytes, channel: int = 0) -> bytes:
    body = BODY.pack(kind, 0, channel, at) + payload
    return PREFIX.pack(len(body), zlib.crc32(body)) + body


def header(**changes: Any) -> dict[str, Any]:
    fields = {
        "format": "awsview recording",
        "version": VERSION,
        "codec": FORMAT,
        "schema": current_schema(),
        "started": T0,
        "command": "crafted",
    }
    return {**fields, **changes}


def plain(value: Any) -> bytes:
    return msgpack.packb(value)


class Stream:
    """One channel's zstd stream, as the writer makes it."""

    def __init__(self) -> None:
        self.squeeze: Any = None

    def keyframe(self, plain_bytes: bytes) -> bytes:
        self.squeeze = zstandard.ZstdCompressor(level=3).compressobj()
        return self.more(plain_bytes)

    def more(self, plain_bytes: bytes) -> bytes:
        return self.squeeze.compress(plain_bytes) + self.squeeze.flush(
            zstandard.COMPRESSOBJ_FLUSH_BLOCK
        )


def state() -> dict[str, Any]:
    profile, model = sample.sample("q05")
    return {
        # The profile's file, as a path that is the same in every checkout: the corpus is bytes.
        "profile": dataclasses.replace(profile, source="labs/q05/awsview.toml"),
        "snapshots": dict(model.snapshots),
        "status": ["ok", ""],
        "meta": {"account": sample.ACCOUNT},
    }


def recording(
    keyframe: bytes | None = None,
    frames: Sequence[bytes] = (),
    head: Any = None,
    times: tuple[float, float] = (T0, T0 + 1),
    info: Any = None,
) -> bytes:
    """A file: header, one channel, a keyframe (q05's sample unless given, already packed by
    the codec) and frames (packed changes), compressed as the writer does."""
    codec, stream = Codec(), Stream()
    keyframe = codec.pack(state()) if keyframe is None else keyframe
    parts = [
        MAGIC,
        record(HEADER, T0, plain(header() if head is None else head)),
        record(CHANNEL, T0, plain({"name": "", "region": "us-east-1"} if info is None else info)),
        record(KEYFRAME, times[0], stream.keyframe(keyframe)),
    ]
    parts += [record(FRAME, times[1] + n, stream.more(f)) for n, f in enumerate(frames)]
    return b"".join(parts)


def ops(*changes: Any) -> bytes:
    return Codec().pack(list(changes))


def mark(code: int) -> bytes:
    return bytes([EXT, 0, code])


def _bigint_keyframe() -> bytes:
    whole = state()
    whole["meta"] = {"account": "__BIG__"}
    packed = Codec().pack(whole)
    big = b"\x92" + mark(7) + msgpack.packb("1" * 100_000)  # [BIGINT mark, digits]
    return packed.replace(msgpack.packb("__BIG__"), big)


def _nan_decimal_keyframe() -> bytes:
    whole = state()
    whole["meta"] = {"account": "__NAN__"}
    packed = Codec().pack(whole)
    return packed.replace(msgpack.packb("__NAN__"), b"\x92" + mark(3) + msgpack.packb("NaN"))


def _data_of_another_kind(key: str, data: Any) -> bytes:
    """Every value of its field's type, but a snapshot holding what no poller of its kind makes."""
    whole = state()
    whole["snapshots"][key] = replace(whole["snapshots"][key], data=data)
    return Codec().pack(whole)


def _set_field(name: str, value: Any) -> bytes:
    return ops(("s", QUEUES, (".", ((name, ("=", value)),))))


def _bad_snapshot_field() -> bytes:
    """A Snapshot whose fetched_at is text, written by hand the way the codec writes one."""
    codec = Codec()
    snapshot = replace(state()["snapshots"][QUEUES], fetched_at=1234567.875)
    packed = codec.pack(snapshot)
    fetched = codec.pack(snapshot.fetched_at)
    assert packed.count(fetched) == 1
    return ops(("+", "odd", "__X__")).replace(
        msgpack.packb("__X__"), packed.replace(fetched, msgpack.packb("an hour ago"))
    )


def _zstd_bomb() -> bytes:
    """64 MiB of zeros in about 2 KB: more than a file this size may decompress."""
    return b"".join(
        [
            MAGIC,
            record(HEADER, T0, plain(header())),
            record(CHANNEL, T0, plain({"name": ""})),
            record(KEYFRAME, T0, zstandard.ZstdCompressor(level=19).compress(bytes(64 << 20))),
        ]
    )


def _empty_containers(empty: bytes) -> bytes:
    """15 million empty arrays (or maps) in a few KB: within the bytes a file this size may
    decompress, but each is ~60 bytes of memory: the count of values built stops it."""
    count = 15_000_000
    many = b"\xdd" + struct.pack(">I", count) + empty * count
    return b"".join(
        [
            MAGIC,
            record(HEADER, T0, plain(header())),
            record(CHANNEL, T0, plain({"name": ""})),
            record(KEYFRAME, T0, zstandard.ZstdCompressor(level=3).compress(many)),
        ]
    )


def _long_sequence_keyframe(length: int) -> bytes:
    """q05 with a queues snapshot whose data is ``length`` zeros (a few bytes once compressed)."""
    whole = state()
    queues = whole["snapshots"][QUEUES]
    whole["snapshots"][QUEUES] = replace(queues, data=("__SEQ__",))
    packed = Codec().pack(whole)
    # A tuple is [TUPLE mark, elements...]: array 32 header, the mark, then zeros.
    seq = b"\xdd" + struct.pack(">I", length + 1) + mark(1) + bytes(length)
    return packed.replace(b"\x92" + mark(1) + msgpack.packb("__SEQ__"), seq)


def _splice_work() -> bytes:
    """Each change rebuilds a million-element tuple: within its bounds, beyond the file's work."""
    length = 1_000_000
    rebuild = ops(*[("s", QUEUES, (".", (("data", ("[", 0, length - 1, 0, (0,))),)))] * 50)
    return recording(_long_sequence_keyframe(length), [rebuild] * 40)


def _splice_doubling() -> bytes:
    """Head and tail that overlap would copy the sequence onto itself: twice as long each time."""
    double = ("s", QUEUES, (".", (("data", ("[", 0, 3, 3, ())),)))
    return recording(frames=[ops(*[double] * 200)])


def _deep_keyframe() -> bytes:
    return b"\x91" * 100_000 + b"\xc0"


CASES: dict[str, Callable[[], bytes]] = {
    "header-list.rec": lambda: recording(head=[1, 2, 3]),
    "header-version-text.rec": lambda: recording(head=header(version="1")),
    "header-version-newer.rec": lambda: recording(head=header(version=VERSION + 1)),
    "header-started-nan.rec": lambda: recording(head=header(started=float("nan"))),
    "header-schema-text.rec": lambda: recording(head=header(schema="everything")),
    "header-schema-entry.rec": lambda: recording(head=header(schema=[[1, 2, 3]])),
    "header-not-msgpack.rec": lambda: MAGIC + record(HEADER, T0, b"\xc1\xc1"),
    "channel-list.rec": lambda: recording(info=["endpoint", "http://x"]),
    "channel-nested.rec": lambda: recording(info={"region": {"deep": [1]}}),
    "time-nan.rec": lambda: recording(times=(float("nan"), T0)),
    "time-1e20.rec": lambda: recording(times=(1e20, 1e20)),
    "time-negative-frame.rec": lambda: recording(times=(T0, -5.0), frames=[ops()]),
    "keyframe-not-zstd.rec": lambda: b"".join(
        [
            MAGIC,
            record(HEADER, T0, plain(header())),
            record(CHANNEL, T0, plain({"name": ""})),
            record(KEYFRAME, T0, b"this is not zstd at all"),
        ]
    ),
    "keyframe-list.rec": lambda: recording(Codec().pack([1, 2])),
    "keyframe-deep.rec": lambda: recording(_deep_keyframe()),
    "keyframe-bigint.rec": lambda: recording(_bigint_keyframe()),
    "keyframe-decimal-nan.rec": lambda: recording(_nan_decimal_keyframe()),
    "keyframe-type-number.rec": lambda: recording(
        Codec()
        .pack({"profile": None, "snapshots": {}, "status": ["ok", ""], "meta": {}})
        .replace(b"\xc0", b"\x93" + mark(2) + b"\xcd\xff\xff\x00", 1)
    ),
    "zstd-bomb.rec": _zstd_bomb,
    "keyframe-empty-arrays.rec": lambda: _empty_containers(b"\x90"),
    "keyframe-empty-maps.rec": lambda: _empty_containers(b"\x80"),
    "keyframe-queues-number.rec": lambda: recording(_data_of_another_kind(QUEUES, 42)),
    "keyframe-checkpoints-text.rec": lambda: recording(
        _data_of_another_kind("checkpoints", ("passed",))
    ),
    "patch-data-kind.rec": lambda: recording(frames=[_set_field("data", {"not": "queues"})]),
    "frame-before-keyframe.rec": lambda: b"".join(
        [
            MAGIC,
            record(HEADER, T0, plain(header())),
            record(CHANNEL, T0, plain({"name": ""})),
            record(FRAME, T0, Stream().keyframe(ops())),
        ]
    ),
    "frame-not-a-list.rec": lambda: recording(frames=[Codec().pack({"s": 1})]),
    "frame-unknown-change.rec": lambda: recording(frames=[ops(("rm -rf", "/"))]),
    "frame-status-number.rec": lambda: recording(frames=[ops(("status", 1, 2))]),
    "frame-meta-list.rec": lambda: recording(frames=[ops(("meta", [1, 2]))]),
    "frame-missing-snapshot.rec": lambda: recording(frames=[ops(("s", "nothing", ("=", 1)))]),
    "frame-add-not-snapshot.rec": lambda: recording(frames=[ops(("+", "odd", "text"))]),
    "frame-add-bad-field.rec": lambda: recording(frames=[_bad_snapshot_field()]),
    "patch-freshness.rec": lambda: recording(frames=[_set_field("freshness", "live")]),
    "patch-dict.rec": lambda: recording(frames=[_set_field("__dict__", {"health": "x"})]),
    "patch-field-type.rec": lambda: recording(frames=[_set_field("fetched_at", "soon")]),
    "patch-replace-snapshot.rec": lambda: recording(frames=[ops(("s", QUEUES, ("=", 42)))]),
    "patch-unknown-op.rec": lambda: recording(frames=[ops(("s", QUEUES, ("!", 1)))]),
    "patch-splice-doubling.rec": _splice_doubling,
    "patch-splice-negative.rec": lambda: recording(
        frames=[ops(("s", QUEUES, (".", (("data", ("[", -2, 0, 0, ())),))))]
    ),
    "patch-splice-work.rec": _splice_work,
}


def write(directory: Path = CORPUS) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in CASES.items():
        path = directory / name
        path.write_bytes(make())
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write(Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS):
        print(f"{written.stat().st_size:>8}  {written}")
