"""A recording is untrusted input: every crafted file of tests/corpus/recordings, and every
path that is not a regular file, is one line and exit 1 from `dump --from`, `docs --from` and
`replay` — never a traceback, a hang or the machine's memory.

In-process through the command line's own entry point (awsview.cli.main.main): a subprocess per
file and command would start Python a hundred times.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from awsview.cli.main import main
from awsview.recording.file import Recording, RecordingError
from awsview.recording.untrusted import FLOOR_BYTES
from tests.support import crafted_recordings

COMMANDS = {
    "dump": lambda path, out: ["dump", "--from", str(path)],
    "docs": lambda path, out: ["docs", "--from", str(path), "-o", str(out)],
    "replay": lambda path, out: ["replay", str(path)],  # loads, then would need a terminal
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    return {p.name: p for p in crafted_recordings.write(tmp_path_factory.mktemp("corpus"))}


def refused(capsys, args: list[str]) -> str:
    """The one line a command said on stderr, having checked its status and its output."""
    code = main(args)
    said = capsys.readouterr()
    assert code == 1, (args, code, said.err)
    assert "Traceback" not in said.err and said.err.count("\n") == 1, said.err
    assert said.err.startswith("awsview: "), said.err
    return said.err


def test_the_committed_corpus_is_what_the_script_writes(corpus):
    for name, path in corpus.items():
        committed = crafted_recordings.CORPUS / name
        assert committed.read_bytes() == path.read_bytes(), f"rerun {crafted_recordings.__name__}"


@pytest.mark.parametrize("name", sorted(crafted_recordings.CASES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_crafted_recording_is_one_line_and_exit_1(corpus, capsys, tmp_path, command, name):
    said = refused(capsys, COMMANDS[command](corpus[name], tmp_path / "docs"))
    assert str(corpus[name]) in said
    assert not (tmp_path / "docs").exists() or not any((tmp_path / "docs").iterdir())


@pytest.mark.parametrize(
    "name",
    [
        "zstd-bomb.rec",
        "keyframe-empty-arrays.rec",
        "keyframe-empty-maps.rec",
        "patch-splice-work.rec",
    ],
)
def test_what_a_file_may_expand_to_is_capped_by_its_size(corpus, name):
    """The bomb (64 MiB of zeros in a few KB), 15 million empty arrays or maps (~60 bytes of
    memory each) and the million-element rebuilds stop at a cap, not at the machine's memory:
    the error names the limit."""
    recording = Recording(corpus[name])
    assert recording.budget.max_bytes < 2 * FLOOR_BYTES
    with pytest.raises(RecordingError, match="the limit for a file of"):
        recording.player(0).state(10**9)


def test_a_header_of_a_megabyte_is_refused_before_it_is_decoded(capsys, tmp_path):
    """Written here, not kept in the corpus: a megabyte of empty arrays (~60 MB decoded)."""
    path = tmp_path / "huge-header.rec"
    padding = [[]] * (1 << 20)  # one byte each in the file, a new list each once decoded
    path.write_bytes(crafted_recordings.recording(head=crafted_recordings.header(pad=padding)))
    for command in COMMANDS.values():
        assert "a header of 1,0" in refused(capsys, command(path, tmp_path / "o"))


def test_paths_that_are_not_regular_files_are_one_line(capsys, tmp_path):
    fifo = tmp_path / "pipe.rec"
    os.mkfifo(fifo)
    for path, said in (
        (fifo, "not a regular file"),
        ("/dev/zero", "not a regular file"),
        (tmp_path, "a directory"),
        (tmp_path / "missing.rec", "cannot read"),
    ):
        for command in COMMANDS.values():
            # A thread, so that a reader blocked on the FIFO fails the test instead of hanging it.
            result: list[str] = []
            args = command(path, tmp_path / "o")
            worker = threading.Thread(
                target=lambda args=args, result=result: result.append(refused(capsys, args)),
                daemon=True,
            )
            worker.start()
            worker.join(60)
            assert result and said in result[0], (path, command, result)


def test_an_at_out_of_range_is_refused(capsys, tmp_path):
    from tests.recording.test_recording import _record

    path = tmp_path / "ok.rec"
    _record(path, steps=2)
    for at in ("+99999999999999", "-99999999999999", "+1" + "0" * 400, "9999-12-31T00:00:00"):
        code = main(["dump", "--from", str(path), "--at", at])
        said = capsys.readouterr().err
        assert code == 2 and said.count("\n") == 1 and "outside the recording" in said, said


def test_dump_from_a_crafted_file_in_a_process_is_one_line(awsview, corpus):
    """The same refusal from the command in a process of its own, as a person sees it."""
    done = awsview("dump", "--from", str(corpus["patch-dict.rec"]), timeout=60)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "__dict__" in done.stderr and "Traceback" not in done.stderr


def _queues_holding_a_number() -> bytes:
    from dataclasses import replace

    queues = crafted_recordings.state()["snapshots"]["queues"]
    return crafted_recordings.ops(("+", "queues", replace(queues, data=42)))


@pytest.mark.parametrize(
    "bad, said",
    [
        (lambda: crafted_recordings._set_field("__dict__", {}), "__dict__"),
        (_queues_holding_a_number, "cannot show (TypeError"),
    ],
    ids=["malformed", "another-kinds-data"],
)
async def test_replay_reaching_a_malformed_frame_ends_with_the_line(tmp_path, bad, said):
    """A bad frame between two good keyframes: the replay opens (its start and end are fine),
    and stepping onto that frame closes it with the reason, for the command to say."""
    from awsview.model.codec import Codec
    from awsview.recording.file import CHANNEL, FRAME, HEADER, KEYFRAME, MAGIC
    from awsview.ui.viewer.replay import ReplayApp, open_player

    c, stream = crafted_recordings, crafted_recordings.Stream()
    whole = Codec().pack(c.state())
    records = [
        (KEYFRAME, stream.keyframe(whole)),
        (FRAME, stream.more(bad())),
        (KEYFRAME, stream.keyframe(whole)),
        (FRAME, stream.more(c.ops())),
    ]
    path = tmp_path / "middle.rec"
    path.write_bytes(
        MAGIC
        + c.record(HEADER, c.T0, c.plain(c.header()))
        + c.record(CHANNEL, c.T0, c.plain({"name": ""}))
        + b"".join(c.record(kind, c.T0 + n, data) for n, (kind, data) in enumerate(records))
    )
    app = ReplayApp(open_player(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.index == 0
        await pilot.press("full_stop")
        await pilot.pause()
    assert app.return_code == 1
    assert app.broken and "frame 2 of channel 0" in app.broken and said in app.broken
