"""A structure-aware fuzz of the recording reader: headers, channels, keyframes, frames and
patches drawn around the shapes the writer makes (and wrong in every way hypothesis finds).
Whatever the file, the reader gives a recording it can play to the end or RecordingError —
never another exception. The codec and the patches are fuzzed on their own too.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awsview.model.codec import Codec, CodecError
from awsview.model.patch import PatchError, patch
from awsview.model.snapshot import Snapshot
from awsview.recording.file import FRAME, KEYFRAME, Recording, RecordingError
from awsview.recording.moments import shown
from tests.support import crafted_recordings as crafted
from tests.support.examples import examples

FUZZ = settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SAMPLE = crafted.state()
FIELD_NAMES = [
    "kind",
    "key",
    "health",
    "data",
    "fetched_at",
    "error",
    "note",
    "live",
    "freshness",
    "__dict__",
    "__class__",
    "usable",
]
KEYS = [*SAMPLE["snapshots"], "odd", ""]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),  # plain msgpack's range
    st.floats(),
    st.text(max_size=20),
    st.binary(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)
snapshot_values = st.sampled_from(list(SAMPLE["snapshots"].values()))
counts = st.integers(min_value=-2, max_value=8)
patch_ops = st.recursive(
    st.one_of(
        st.tuples(st.just("="), st.one_of(values, snapshot_values)),
        st.tuples(
            st.sampled_from(["[", "<"]), counts, counts, counts, st.lists(values, max_size=3)
        ),
        st.tuples(st.sampled_from(["?", "", "=", "["]), values),
    ),
    lambda inner: st.one_of(
        st.tuples(
            st.just("."),
            st.lists(st.tuples(st.sampled_from(FIELD_NAMES), inner), max_size=3).map(tuple),
        ),
        st.tuples(
            st.just("<"), counts, counts, counts, st.lists(st.one_of(st.none(), inner), max_size=3)
        ),
    ),
    max_leaves=6,
)
changes = st.one_of(
    st.tuples(st.just("s"), st.sampled_from(KEYS), patch_ops),
    st.tuples(st.just("+"), st.sampled_from(KEYS), st.one_of(snapshot_values, values)),
    st.tuples(st.just("x"), st.one_of(st.sampled_from(KEYS), values)),
    st.tuples(st.just("status"), values, values),
    st.tuples(st.just("meta"), st.one_of(st.dictionaries(st.text(max_size=8), scalars), values)),
    st.lists(values, max_size=4).map(tuple),
)
times = st.one_of(
    st.floats(min_value=crafted.T0, max_value=crafted.T0 + 3600),
    st.floats(),
)


@st.composite
def headers(draw) -> Any:
    if draw(st.booleans()):
        return draw(values)
    fields = crafted.header()
    for name in draw(st.lists(st.sampled_from(list(fields)), max_size=3)):
        fields[name] = draw(values)
    return fields


@st.composite
def keyframes(draw) -> bytes:
    kind = draw(st.sampled_from(["sample", "edited", "value", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=64))
    if kind == "value":
        return Codec().pack(draw(st.one_of(values, st.integers())))  # the codec's big ints too
    whole = dict(SAMPLE)
    if kind == "edited":
        for name in draw(st.lists(st.sampled_from(["profile", "snapshots", "status", "meta"]))):
            whole[name] = draw(values)
    return Codec().pack(whole)


@st.composite
def files(draw) -> bytes:
    """A recording: mostly right, wrong where hypothesis chooses."""
    frames = [
        Codec().pack(draw(st.lists(changes, max_size=4)))
        if draw(st.integers(0, 9))
        else draw(st.binary(max_size=32))
        for _ in range(draw(st.integers(0, 4)))
    ]
    head = draw(headers()) if draw(st.integers(0, 3)) == 0 else None
    info = draw(values) if draw(st.integers(0, 5)) == 0 else None
    at = (draw(times), draw(times))
    data = crafted.recording(draw(keyframes()), frames, head, at, info)
    if draw(st.integers(0, 5)) == 0:  # a raw record after it: any kind, any payload
        kind = draw(st.sampled_from([0, 1, 2, KEYFRAME, FRAME, 9]))
        data += crafted.record(kind, draw(times), draw(st.binary(max_size=48)))
    if draw(st.integers(0, 7)) == 0:  # torn
        data = data[: draw(st.integers(0, len(data)))]
    return data


def read_all(path: Path) -> None:
    recording = Recording(path)
    for channel in recording.channels:
        if recording.marks.get(channel):
            player = recording.player(channel)
            for index in range(player.last + 1):
                state = shown(player, index)  # and printed as dump prints it
                assert all(isinstance(s, Snapshot) for s in state.snapshots.values())
                assert isinstance(state.status, tuple) and isinstance(state.meta, dict)


@FUZZ
@given(files())
def test_any_file_is_a_recording_or_a_recording_error(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.rec"
        path.write_bytes(data)
        try:
            read_all(path)
        except RecordingError as exc:
            assert "\n" not in str(exc)


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_are_a_codec_error(data):
    try:
        Codec().unpack(data)
    except CodecError:
        pass


@FUZZ
@given(snapshot_values, patch_ops)
def test_any_patch_applies_or_is_a_patch_error(snapshot, op):
    try:
        patch(snapshot, Codec().unpack(Codec().pack(op)))
    except PatchError:
        pass
