"""`awsview watch` (and `awsview` alone): the viewer, live."""

from __future__ import annotations

import argparse

from awsview.cli.common import (
    EXIT_FAILURE,
    EXIT_USAGE,
    MAX_MESSAGE,
    checked_target,
    fail,
    has_terminal,
    record_taken,
)
from awsview.model import untrusted


def run(args: argparse.Namespace) -> int:
    """The viewer. A configuration that cannot work is one line; a failed preflight (endpoint
    down, credentials refused) still opens it: the panels show the error, never "empty"."""
    if record_taken(args):
        return fail(f"{args.record} already exists; record into a new file", EXIT_USAGE)
    from awsview import labspec

    if args.lab:
        labspec.load(args.lab)
    from awsview.ui import preferences, themes

    saved, notice = preferences.load()
    from awsview.ui import keymap

    keys, left_out = keymap.load()
    if left_out:
        notice = f"{notice}; {left_out}" if notice else left_out
    theme = args.theme or saved.get("theme")
    try:
        themes.check(theme)
    except themes.ThemeError as exc:  # a theme saved once and since removed
        theme, notice = None, f"{preferences.path()}: {exc} (ignored)"
    target = checked_target(args)
    from awsview.polling.store import unusable

    unkept = unusable()
    if unkept is not None:  # the viewer goes on, remembering for this session only
        notice = f"{notice}; {unkept}" if notice else unkept
    presenter = getattr(args, "presenter", False)
    record = getattr(args, "record", None)
    # A presenter screen may be driven by `awsview serve` (textual-serve), through pipes.
    if not presenter and not has_terminal():
        return fail(
            "the viewer needs a terminal; `awsview dump` prints the same panels once", EXIT_USAGE
        )
    from awsview.ui import lifeline
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
    from awsview.ui.viewer.presenter import Presenter

    writer = recorder = None
    if record is not None:
        from awsview.recording.file import RecordingError
        from awsview.recording.follow import RecordingUnwritable, open_channel, open_recording

        try:
            writer = open_recording(record, "watch")
            recorder = open_channel(writer, target)
        except RecordingUnwritable as exc:  # a full disk: a failure now, not a usage error
            return fail(str(exc), EXIT_FAILURE)
        except RecordingError as exc:
            return fail(str(exc), EXIT_USAGE)
    app = AWSViewApp(
        target=target,
        lab=args.lab,
        prefix=args.prefix,
        presenter=Presenter() if presenter else None,
        recorder=recorder,
        options=ViewerOptions(
            theme=theme,
            remember=not presenter,
            show_usage=bool(saved.get("usage")) and not presenter,
            notice=notice,
            keymap=keys,
        ),
    )
    if recorder is not None:
        # The reason quotes an exception (a path, a value the codec refused): text, never markup.
        recorder.on_stop = lambda reason: app.notify(
            untrusted.line(reason, limit=MAX_MESSAGE), severity="error", timeout=10, markup=False
        )
    stopped = None
    try:
        lifeline.run(app)  # ends with its terminal, its serve session or its parent
    finally:
        if writer is not None and recorder is not None:
            from awsview.recording.follow import finish

            stopped = finish(writer, recorder)
    if stopped is not None:  # the viewer went on; the recording did not
        return fail(stopped, EXIT_FAILURE)
    return app.return_code or 0
