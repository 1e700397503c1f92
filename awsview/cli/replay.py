"""`awsview replay FILE`: the viewer on a recording, with a time line."""

from __future__ import annotations

import argparse

from awsview.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, has_terminal


def run(args: argparse.Namespace) -> int:
    """The viewer on a recording. Needs a terminal, like the live one."""
    from awsview.recording.moments import parse_moment, shown
    from awsview.ui import lifeline
    from awsview.ui.viewer.app import ViewerOptions
    from awsview.ui.viewer.replay import ReplayApp, open_player

    player = open_player(args.source, args.learner)
    first, last = player.marks[0].time, player.marks[player.last].time
    moment = parse_moment(args.at or "start", first, last)
    shown(player, player.index_at(moment))
    shown(player, player.last)
    if not has_terminal():
        return fail(
            "replay needs a terminal; `awsview dump --from FILE --at TIME` prints a moment",
            EXIT_USAGE,
        )
    index = player.index_at(moment)
    from awsview.ui import keymap

    keys, left_out = keymap.load()
    app = ReplayApp(
        player,
        start=index,
        moment=max(moment, player.marks[index].time),
        options=ViewerOptions(theme=args.theme, keymap=keys, notice=left_out),
    )
    lifeline.run(app)  # ends with its terminal or its parent
    if app.broken:
        return fail(app.broken, EXIT_FAILURE)
    return app.return_code or 0
