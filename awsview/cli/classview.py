"""`awsview class FILE`: the class view in the terminal, every learner's progress."""

from __future__ import annotations

import argparse
from pathlib import Path

from awsview.cli.common import EXIT_USAGE, fail, has_terminal


def run(args: argparse.Namespace) -> int:
    return open_class(args.roster, theme=args.theme, presenter=args.presenter, record=args.record)


def open_class(
    roster: Path, theme: str | None = None, presenter: bool = False, record: Path | None = None
) -> int:
    """The class view until q (or, as a presenter screen, until the browser goes)."""
    from awsview.classroom.monitor import load_roster
    from awsview.ui import lifeline
    from awsview.ui.classview.view import ClassApp

    learners = load_roster(roster)  # the theme: checked by the command line's parser
    if not presenter and not has_terminal():
        return fail("the class view needs a terminal", EXIT_USAGE)
    recording = None
    if record is not None:
        from awsview.recording.file import RecordingError
        from awsview.recording.follow import ClassRecorder, open_recording

        try:
            recording = ClassRecorder(open_recording(record, "class"))
        except RecordingError as exc:  # a file that cannot be made: the command line's mistake
            return fail(str(exc), EXIT_USAGE)
    from awsview.ui import keymap

    keys, left_out = keymap.load()
    app = ClassApp(
        learners,
        theme=theme,
        presenter=presenter,
        recording=recording,
        keymap=keys,
        notice=left_out,
    )
    try:
        lifeline.run(app)  # ends with its terminal, its serve session or its parent
    finally:
        if recording is not None:
            recording.close()
    return app.return_code or 0
