"""Recordings without an emulator: the codec round-trips every kind of snapshot, differences
patch back exactly, the file survives a torn end, and the replay viewer's time line works.

The live side (a lab recorded on the emulator, kill -9, dump --from, the command line) is in
test_recording_live.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType

import pytest

from awsview.aws.session import Target
from awsview.core import render
from awsview.core.printout import as_text
from awsview.core.runs import LabRun
from awsview.core.timeline import RunTimeline
from awsview.model.codec import Codec, CodecError, Opaque, current_schema, known_types
from awsview.model.patch import diff, patch
from awsview.model.resources import StreamRecord
from awsview.model.snapshot import Health, Snapshot, failed
from awsview.model.state import LabState
from awsview.recording.file import CHECKPOINTS, DECISION, MAGIC, Recording, RecordingError
from awsview.recording.follow import Recorder, open_recording, target_info
from awsview.recording.moments import MomentError, parse_moment
from tests.support import sample
from tests.support.cli import awsview_here

NOW = sample.NOW
STREAM = StreamRecord(
    "e-1",
    "MODIFY",
    sample.at(3),
    "000001",
    {"id": "a"},
    {"id": "a", "n": 1},
    {"id": "a", "n": Decimal("2.5"), "tags": frozenset({"x", "y"}), "raw": b"\x00\xff"},
)
# Dataclasses of the codec's modules that a snapshot never holds (working objects, not data).
# Progress is computed from the checkpoint results when drawn; Sighting and RunBook are the run
# keeper's own book (the "runs" snapshot holds Run values): none is held in a snapshot.
NOT_SNAPSHOT_DATA = {
    "Evidence",
    "Memory",
    "_Parser",
    "ItemDiff",
    "Opaque",
    "Progress",
    "Sighting",
    "RunBook",
}


def corpus() -> list[tuple[str, object]]:
    """Every kind of snapshot the pollers make, from the hand-built ev04 and q05 models, plus a
    stream, a stale and an absent snapshot, and both lab profiles."""
    values: list[tuple[str, object]] = []
    for lab in ("ev04", "q05"):
        profile, model = sample.sample(lab)
        values.append((f"{lab} profile", profile))
        values += [(f"{lab} {key}", snapshot) for key, snapshot in sorted(model.snapshots.items())]
    values.append(
        (
            "stream",
            Snapshot("stream", "stream:t", Health.OK, (STREAM,), fetched_at=NOW, attempted_at=NOW),
        )
    )
    queues = sample.sample("q05")[1].get("queues")
    values.append(("stale", failed(queues, "queues", "queues", "connection refused", at=NOW + 5)))
    values.append(
        ("absent", Snapshot("table", "table:x", Health.ABSENT, None, fetched_at=NOW, note="gone"))
    )
    built = sample.sample("q05")[1].get("timeline")
    first, second = (
        LabRun(1, NOW - 600, "table created", end=NOW - 300),
        LabRun(2, NOW - 300, "table created again"),
    )
    rerun = replace(built.data, run=second, earlier=(RunTimeline(first, built.data.keys),))
    values.append(("timeline with an earlier run", replace(built, data=rerun)))
    return values


def _types(value: object, found: set[str]) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        found.add(type(value).__name__)
        for f in dataclasses.fields(value):
            _types(getattr(value, f.name), found)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for v in value:
            _types(v, found)
    elif isinstance(value, (dict, MappingProxyType)):
        for v in value.values():
            _types(v, found)


@pytest.mark.parametrize("name, value", corpus(), ids=[n for n, _ in corpus()])
def test_every_kind_of_snapshot_round_trips(name, value):
    codec = Codec()
    back = codec.unpack(codec.pack(value))
    assert back == value
    assert type(back) is type(value)
    if isinstance(value, Snapshot):
        assert type(back.data) is type(value.data) and back.health is value.health


def test_the_corpus_covers_every_type_a_snapshot_can_hold():
    found: set[str] = set()
    for _, value in corpus():
        _types(value, found)
    declared = {cls.__name__ for cls in known_types() if dataclasses.is_dataclass(cls)}
    assert declared - found - NOT_SNAPSHOT_DATA == set()


@pytest.mark.parametrize(
    "value",
    [
        1 << 70,
        -(1 << 80),
        Decimal("-0.000123"),
        Decimal("1E+40"),
        frozenset({1, "a", b"b"}),
        {1, 2},
        {1: "int key", (1, "t"): [1, (2, [3])], "": None},
        "lone \ud800 surrogate",
        b"\x00\xff",
        [],
        (),
        {},
        datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        datetime(2026, 1, 1, 12, 0, 0, 999999),
        True,
        False,
        0,
        1.5,
        float("inf"),
        None,
        Health.STALE,
        MappingProxyType({"a": (1, 2)}),
        [[], ((),)],
        "[/bold] \x1b[31m",
    ],
    # A set's repr follows string hashing, which differs per process: parallel workers must
    # collect the same ids, so sets are named by their sorted members.
    ids=lambda v: f"frozenset({sorted(map(repr, v))})" if isinstance(v, frozenset) else repr(v),
)
def test_awkward_values_keep_their_type(value):
    back = Codec().unpack(Codec().pack(value))
    assert back == value and type(back) is type(value)
    if isinstance(value, datetime):
        assert back.utcoffset() == value.utcoffset()


def test_unknown_objects_are_written_as_opaque_text_never_code():
    class Elsewhere:
        def __repr__(self) -> str:
            return "Elsewhere()"

    back = Codec().unpack(Codec().pack({"x": Elsewhere()}))
    assert back == {
        "x": Opaque(
            f"{__name__}:test_unknown_objects_are_written_as_opaque_text_never_code.<locals>.Elsewhere",
            "Elsewhere()",
        )
    }


def test_a_schema_from_another_version_reads_with_defaults_and_drops_what_is_gone():
    schema = current_schema()
    queue = next(entry for entry in schema if entry[0].endswith(":Queue"))
    fields = list(queue[1])
    older = [
        [
            name,
            ([f for f in fields if f != "dlq_arn"] + ["retired_field"]) if name == queue[0] else f,
        ]
        for name, f in schema
    ]
    writer = Codec(older)
    # Written by "another version": dlq_arn unknown to it, retired_field known.
    _, model = sample.sample("q05")
    q = model.get("queues").data[0]
    values = [getattr(q, f) for f in fields if f != "dlq_arn"] + ["old value"]
    from awsview.model import codec as module

    data = writer.pack([module._MARKS[module._DATACLASS], schema.index(queue), *values])
    back = Codec(older).unpack(data)
    assert back == replace(q, dlq_arn=None)


def test_a_type_moved_or_renamed_since_reads_as_its_current_type(monkeypatch):
    from awsview.model import codec as module

    schema = current_schema()
    queue = next(name for name, _ in schema if name.endswith(":Queue"))
    snapshot = next(name for name, _ in schema if name.endswith(":Snapshot"))
    # Written when Queue's module had another name, and Snapshot another module and name.
    monkeypatch.setitem(module.FORMER_NAMES, "awsview.earlier", queue.split(":")[0])
    monkeypatch.setitem(module.FORMER_NAMES, "awsview.older:Shot", snapshot)
    renamed = {queue: "awsview.earlier:Queue", snapshot: "awsview.older:Shot"}
    older = [[renamed.get(name, name), fields] for name, fields in schema]
    queues = sample.sample("q05")[1].get("queues")
    assert Codec(older).unpack(Codec(older).pack(queues)) == queues


def test_damaged_bytes_are_one_clear_error():
    with pytest.raises(CodecError, match="unreadable data"):
        Codec().unpack(b"\xc1\xc1")
    codec = Codec()
    data = codec.pack([Codec().pack(1)])
    with pytest.raises(CodecError):
        Codec([]).unpack(Codec().pack(sample.sample("q05")[1].get("queues")))
    assert codec.unpack(data)


# -- differences -----------------------------------------------------------------------------


def _changes():
    """Pairs (old, new) the pollers really make, one of each shape."""
    profile, model = sample.sample("ev04")
    logs = next(s for s in model.snapshots.values() if s.key.startswith("logs:"))
    lines = logs.data.lines
    extra = replace(lines[0], event_id="new", timestamp_ms=lines[-1].timestamp_ms + 5)
    executions = next(s for s in model.snapshots.values() if s.key.startswith("executions:"))
    first = executions.data[0]
    history = next(s for s in model.snapshots.values() if s.key.startswith("history:"))
    events = history.data.history.events
    table = next(s for s in model.snapshots.values() if s.key.startswith("table:"))
    items = table.data.items
    return [
        (
            "log line appended",
            logs,
            replace(logs, data=replace(logs.data, lines=lines + (extra,)), fetched_at=NOW + 1),
        ),
        (
            "capped feed",
            logs,
            replace(logs, data=replace(logs.data, lines=lines[2:] + (extra, extra))),
        ),
        (
            "execution prepended",
            executions,
            replace(
                executions, data=(replace(first, name="new", arn="arn:new"),) + executions.data
            ),
        ),
        (
            "execution finished",
            executions,
            replace(executions, data=(replace(first, status="ABORTED"),) + executions.data[1:]),
        ),
        (
            "history grows",
            history,
            replace(
                history,
                data=replace(
                    history.data, history=replace(history.data.history, events=events + events[-1:])
                ),
            ),
        ),
        (
            "item changed",
            table,
            replace(
                table,
                data=replace(
                    table.data,
                    items=items[:-1] + ({**items[-1], "status": "CHANGED", "n": Decimal("1.5")},),
                ),
            ),
        ),
        ("item removed", table, replace(table, data=replace(table.data, items=items[1:]))),
        ("became stale", table, failed(table, "table", table.key, "timeout")),
        ("only the time", table, replace(table, fetched_at=NOW + 9, attempted_at=NOW + 9)),
        ("to nothing", table, replace(table, data=None)),
        ("list in an item", {"a": [1, 2]}, {"a": [1, 2, 3]}),
        ("tuple to list", (1, 2), [1, 2]),
    ]


@pytest.mark.parametrize("name, old, new", _changes(), ids=[c[0] for c in _changes()])
def test_a_difference_patches_back_exactly_after_the_file(name, old, new):
    codec = Codec()
    op = diff(old, new)
    assert op is not None
    back = patch(old, codec.unpack(codec.pack(op)))
    assert back == new and type(back) is type(new)
    assert repr(back) == repr(new)  # lists stay lists, Decimals Decimals


def test_a_difference_costs_the_change_not_the_value():
    name, old, new = _changes()[0]
    codec = Codec()
    assert len(codec.pack(diff(old, new))) < len(codec.pack(new)) / 5
    assert diff(old, old) is None


# -- the file ---------------------------------------------------------------------------------


def _record(path: Path, steps: int = 30) -> tuple[list[dict], list[float]]:
    """A q05 model recorded as it fills in and its queue moves; returns each frame's snapshots."""
    profile, full = sample.sample("q05")
    clock = [sample.T0]
    writer = open_recording(path, "test")
    recorder = Recorder(
        writer.channel("", target_info(Target(endpoint_url="http://127.0.0.1:5000")), clock[0]),
        clock=lambda: clock[0],
    )
    model = LabState()
    recorder.attach(profile, model)
    states, times = [dict(model.snapshots)], [clock[0]]

    def step(snapshots):
        clock[0] += 1.5
        if model.apply(snapshots):
            states.append(dict(model.snapshots))
            times.append(clock[0])

    checkpoints = full.get("checkpoints")
    for key, snapshot in sorted(full.snapshots.items()):
        if key != "checkpoints":
            step([replace(snapshot, fetched_at=clock[0] + 1.5)])
    queues = model.get("queues")
    for n in range(steps):
        counts = tuple(replace(q, visible=n % 2, in_flight=(n + 1) % 2) for q in queues.data)
        step([replace(queues, data=counts, fetched_at=clock[0] + 1.5)])
        if n == steps // 2:
            step([replace(checkpoints, fetched_at=clock[0] + 1.5)])
    recorder.close()
    writer.close()
    return states, times


def test_a_recording_replays_every_frame(tmp_path):
    path = tmp_path / "q05.rec"
    states, times = _record(path)
    recording = Recording(path)
    player = recording.player(0)
    assert recording.damage is None and player.last + 1 == len(states)
    assert player.info["endpoint_url"] == "http://127.0.0.1:5000" and player.info["region"] is None
    for index in [*range(len(states)), 3, 0, len(states) - 1, 5]:  # forwards, then jumps both ways
        state = player.state(index)
        assert state.snapshots == states[index] and state.time == times[index]
    flagged = [m.index for m in player.marks if m.flags & CHECKPOINTS]
    assert len(flagged) == 1 and "checkpoints" in player.state(flagged[0]).snapshots


def test_a_torn_end_reads_up_to_the_last_complete_frame(tmp_path):
    path = tmp_path / "torn.rec"
    states, _ = _record(path)
    whole = path.read_bytes()
    for cut in (1, 7, 30):
        torn = tmp_path / f"torn-{cut}.rec"
        torn.write_bytes(whole[:-cut])
        recording = Recording(torn)
        player = recording.player(0)
        assert "incomplete frame" in recording.damage
        assert player.last + 1 == len(states) - 1
        assert player.state(player.last).snapshots == states[-2]
    garbled = bytearray(whole)
    garbled[Recording(path).marks[0][10].offset] ^= 0xFF  # inside the 11th frame
    (tmp_path / "garbled.rec").write_bytes(bytes(garbled))
    recording = Recording(tmp_path / "garbled.rec")
    assert "damaged frame" in recording.damage
    player = recording.player(0)
    assert player.last == 9 and player.state(player.last).snapshots == states[9]


def test_files_that_are_not_recordings_are_one_clear_line(tmp_path):
    (tmp_path / "text.rec").write_text("hello")
    (tmp_path / "empty.rec").write_bytes(MAGIC)
    with pytest.raises(RecordingError, match="not an AWS View recording"):
        Recording(tmp_path / "text.rec")
    with pytest.raises(RecordingError, match="no header"):
        Recording(tmp_path / "empty.rec")
    with pytest.raises(RecordingError, match="cannot read"):
        Recording(tmp_path / "missing.rec")
    _record(tmp_path / "there.rec", steps=2)
    with pytest.raises(RecordingError, match="already exists"):
        open_recording(tmp_path / "there.rec", "test")
    # A file that cannot be read is a failure (1); a command line that cannot work is usage (2).
    for args, status in (
        (["dump", "--from", str(tmp_path / "text.rec")], 1),
        (["replay", str(tmp_path / "missing.rec")], 1),
        (["dump", "--from", str(tmp_path / "there.rec"), "--at", "yesterday"], 2),
        (["watch", "--record", str(tmp_path / "there.rec")], 2),
    ):
        done = awsview_here(*args)
        assert done.returncode == status, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_moments():
    first, last = 1_000_000.0, 1_003_600.0
    assert parse_moment(None, first, last) == last and parse_moment("start", first, last) == first
    assert parse_moment("+90", first, last) == first + 90
    assert parse_moment("+1:30", first, last) == first + 90
    assert parse_moment("-1:00:00", first, last) == first
    clock = datetime.fromtimestamp(first + 61).strftime("%H:%M:%S")
    assert parse_moment(clock, first, last) == pytest.approx(first + 61, abs=1)
    for bad in ("yesterday", "25:00", "+x"):
        with pytest.raises(MomentError):
            parse_moment(bad, first, last)


def test_dump_from_prints_a_moment_as_dump_does(tmp_path, utc):
    path = tmp_path / "q05.rec"
    states, times = _record(path)
    profile, _ = sample.sample("q05")
    for at, index in (("end", len(states) - 1), ("+3", 2), ("start", 0)):
        done = awsview_here("dump", "--from", str(path), "--at", at)
        assert done.returncode == 0, done.stderr
        header, moment, shown = done.stdout.split("\n", 2)
        assert header.startswith(
            "recording q05.rec · http://127.0.0.1:5000 · account unknown account"
        )
        if index == 0:
            assert "no lab" not in shown
        moment_time = max(times[index], parse_moment(at, times[0], times[-1]))
        target = Target(endpoint_url="http://127.0.0.1:5000")
        assert shown == as_text(
            profile, LabState(snapshots=states[index]), target, "?", moment_time
        )


# -- the replay viewer ------------------------------------------------------------------------


async def test_replay_controls(tmp_path):
    from awsview.ui.viewer.app import ViewerOptions
    from awsview.ui.viewer.replay import ReplayApp, open_player
    from tests.support.probe import full_rows

    path = tmp_path / "q05.rec"
    states, times = _record(path)
    player = open_player(path)
    app = ReplayApp(player, options=ViewerOptions(highlight_seconds=0.01))
    last = len(states) - 1

    def queue_counts():
        return [(r[1], r[2]) for r in full_rows(app, "queues")]

    def expected(index):
        queues = states[index].get("queues")
        return [(str(q.visible), str(q.in_flight)) for q in queues.data] if queues else []

    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.index == 0 and not app.playing
        timeline = app.query_one("#timeline")
        assert f"frame 1/{last + 1}" in str(timeline.render())
        await pilot.press("G")
        await pilot.pause()
        assert app.index == last and queue_counts() == expected(last)
        await pilot.press("comma", "comma")
        await pilot.pause()
        assert app.index == last - 2 and queue_counts() == expected(last - 2)
        await pilot.press("full_stop")
        await pilot.pause()
        assert app.index == last - 1 and queue_counts() == expected(last - 1)
        await pilot.press("g")
        await pilot.pause()
        assert app.index == 0
        marked = [m.index for m in player.marks if m.flags & (CHECKPOINTS | DECISION)]
        assert len(marked) >= 2  # the write decisions arriving, then the checkpoint change
        stops = []
        for _ in range(len(marked) + 1):  # one more: nothing further, it stays and says so
            await pilot.press("n")
            await pilot.pause()
            stops.append(app.index)
        assert stops == marked + marked[-1:]
        assert player.marks[app.index].flags & CHECKPOINTS and "checkpoints" in app.model.snapshots
        await pilot.press("N")
        await pilot.pause()
        assert app.index == marked[-2]
        await pilot.press("plus", "plus", "plus", "plus", "plus", "plus")
        assert app.speed == 64.0
        await pilot.press("minus")
        assert app.speed == 32.0
        # Playing at 32× lasts about a second and a half, which a busy machine can spend before
        # the next line runs: whether space started it is read as the key is handled.
        toggle, started = app.action_replay_toggle, []

        def toggled() -> None:
            toggle()
            started.append(app.playing)

        app.action_replay_toggle = toggled  # type: ignore[method-assign]
        await pilot.press("g", "space")
        assert started == [True]
        # 1.5 s between frames at 32×: the end comes within a few seconds; wait for it generously.
        for _ in range(300):
            await pilot.pause(0.1)
            if not app.playing:
                break
        assert app.index == last and not app.playing and queue_counts() == expected(last)
        assert "‖ 32×" in str(timeline.render())
        # Ages are the recording's: the queue panel's freshness reads as it did then.
        view = app.board.views["queues"]
        assert (
            view.shown.panel.freshness
            == render.queues(LabState(snapshots=states[last]), None, times[last])[0].freshness
        )
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("g")  # under the help screen the time line does not move
        assert app.index == last


async def test_replay_help_says_the_keys(tmp_path):
    from awsview.ui.viewer.replay import ReplayApp, open_player
    from awsview.ui.viewer.screens import HelpScreen

    path = tmp_path / "q05.rec"
    _record(path, steps=2)
    app = ReplayApp(open_player(path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        # The replay's own keys, from its bindings; the viewer's below them.
        assert "| `.` | Step | `replay-step` |" in app.screen.backend
        assert "| `y` | Copy row | `copy` |" in app.screen.text()


def test_a_recorder_that_cannot_write_stops_and_says_so_once(tmp_path):
    path = tmp_path / "gone.rec"
    writer = open_recording(path, "test")
    said = []
    recorder = Recorder(writer.channel("", target_info(Target()), 0.0), on_stop=said.append)
    profile, full = sample.sample("q05")
    model = LabState()
    recorder.attach(profile, model)
    writer.close()  # the file descriptor is gone: every later write fails
    model.apply([full.get("queues")])
    model.apply([full.get("functions")])
    assert len(said) == 1 and said[0].startswith("recording stopped:")
    assert recorder.stopped == said[0]
