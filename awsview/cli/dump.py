"""`awsview dump`: one poll round, printed exactly as the panels show it (or as JSON)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TextIO

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.cli.common import EXIT_FAILURE, EXIT_USAGE, checked_target, fail
from awsview.core.printout import as_json, as_text, graphs_json, graphs_text
from awsview.core.textgrid import cut
from awsview.model import untrusted
from awsview.model.state import LabState
from awsview.polling.bootstrap import detect_lab_spec, preflight
from awsview.polling.scheduler import Scheduler

GRAPH_WIDTH = 60
MAX_STATUS = 300  # a recorded status line is the viewer's one status line


async def collect(
    target: Target, lab: str | None = None, prefix: str = ""
) -> tuple[labspec.LabSpec, LabState, str, str]:
    """One round: (lab profile, model, account id, what was watched as the SDK resolved it)."""
    chosen = labspec.load(lab) if lab else None  # an unknown lab is reported before any call
    async with Connection(target) as conn:
        account = await preflight(conn)
        profile = chosen or await detect_lab_spec(conn, prefix)
        scheduler = Scheduler(conn, profile)
        try:
            await scheduler.run_once()
        finally:
            await scheduler.stop()  # its pollers' own HTTP sessions too, however the round ended
        return profile, scheduler.model, account, conn.describe()


def run(args: argparse.Namespace) -> int:
    if args.source is not None:
        if args.graph:
            return fail(
                "--graph draws live state machines; it does not go with --from FILE", EXIT_USAGE
            )
        return from_recording(args.source, args.at, args.learner, args.json, text_width(args.width))
    if args.at or args.learner:
        return fail("--at and --learner go with --from FILE", EXIT_USAGE)
    if args.width is not None and args.width < 0:
        return fail(f"--width {args.width}: give columns, or 0 for lines of any length", EXIT_USAGE)
    if args.graph and args.width is not None and args.width < 20:
        return fail(f"--width {args.width}: a graph needs at least 20 columns", EXIT_USAGE)
    target = checked_target(args)
    from awsview.polling.store import unusable

    unkept = unusable()
    if unkept is not None:
        fail(unkept)  # said, and the round goes on: the store is a memory, not the view
    return poll_once(
        target,
        args.lab,
        args.prefix,
        args.json,
        graph_width=(args.width or GRAPH_WIDTH) if args.graph else None,
        all_runs=args.all_runs,
        width=text_width(args.width),
    )


def text_width(asked: int | None) -> int:
    """The width the panels are fitted to: ``--width``, else COLUMNS, else the terminal's when
    the output is one; 0 (lines as long as their cells) when written to a pipe or a file, so
    that what scripts read does not depend on a window."""
    if asked is not None:
        return asked
    columns = os.environ.get("COLUMNS", "")
    if columns.strip().isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return 0


def planner(
    labels: tuple[str, ...], rows: list[tuple[str, ...]], available: int
) -> tuple[tuple[int, ...], tuple[int | None, ...], str]:
    """The viewer's column plan for a table of ``available`` cells."""
    from awsview.ui.viewer.cells import plan_columns

    planned = plan_columns(labels, rows, available)
    return planned.shown, planned.limits, planned.caption.replace(" (enter shows a row whole)", "")


def poll_once(
    target: Target,
    lab: str | None,
    prefix: str,
    as_json_output: bool,
    out: TextIO | None = None,
    graph_width: int | None = None,
    all_runs: bool = False,
    width: int = 0,
) -> int:
    """Prints the panels once; with `graph_width`, the state machine graphs at that width
    instead."""
    import asyncio

    out = out or sys.stdout  # looked up now: sys.stdout may have been replaced since import

    profile, model, account, where = asyncio.run(collect(target, lab, prefix))
    now = time.time()
    if graph_width is not None and as_json_output:
        json.dump(
            {
                "lab": profile.name,
                "target": where,
                "account": account,
                "width": graph_width,
                "graphs": graphs_json(model, graph_width),
            },
            out,
            indent=2,
            sort_keys=True,
        )
        out.write("\n")
    elif graph_width is not None:
        out.write(
            f"AWS View — {untrusted.line(profile.name)}: {untrusted.line(profile.title)}\n"
            f"{untrusted.line(where)} · account {untrusted.line(account)}\n"
        )
        out.write(graphs_text(model, graph_width))
    elif as_json_output:
        json.dump(
            as_json(profile, model, where, account, now, all_runs), out, indent=2, sort_keys=True
        )
        out.write("\n")
    else:
        out.write(as_text(profile, model, where, account, now, all_runs, width, planner))
    return 0


def from_recording(
    path: Path,
    at: str | None,
    learner: str | None,
    as_json_output: bool,
    width: int = 0,
    out: TextIO | None = None,
) -> int:
    """`awsview dump --from FILE`: what the viewer showed then, as `dump` prints it live."""
    from awsview.recording.file import Recording
    from awsview.recording.moments import describe, state_at, target_of

    out = out or sys.stdout
    recording = Recording(path)
    player = recording.player(recording.channel_named(learner))
    state, moment, index = state_at(player, at)
    if state.profile is None:
        return fail(f"{path}: no lab was shown yet at that moment", EXIT_FAILURE)
    model = LabState(snapshots=state.snapshots)
    target = target_of(player.info)
    account = state.meta.get("account") or "?"
    if as_json_output:
        document = as_json(state.profile, model, target, account, moment)
        document["recording"] = {
            "file": str(path),
            "frame": index,
            "frames": player.last + 1,
            "at": moment,
            "info": player.info,
            "damage": recording.damage,
        }
        # JSON keeps the recording's values as they are: json.dump's ASCII escaping writes every
        # control, C1 and bidi character as \uXXXX, which no terminal obeys.
        json.dump(document, out, indent=2, sort_keys=True, default=str)
        out.write("\n")
    else:
        level, status = state.status
        status = untrusted.line(status, limit=MAX_STATUS) if status else status
        said = f" · {'error: ' if level == 'error' else ''}{status}" if status else ""
        heading = [
            untrusted.line(describe(recording, player)),
            f"at {datetime.fromtimestamp(moment):%H:%M:%S} (frame {index + 1}){said}",
        ]
        for line in heading:
            out.write(f"{cut(line, width) if width > 0 else line}\n")
        out.write(as_text(state.profile, model, target, account, moment, False, width, planner))
    return 0
