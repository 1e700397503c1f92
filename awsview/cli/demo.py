"""`awsview demo`: the embedded emulator on a free port, the viewer on it, and the labs played
step by step inside the viewer (a step banner on top; space pauses, n plays the next step)."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from awsview.cli.common import EXIT_FAILURE, EXIT_USAGE, fail, has_terminal


def run(args: argparse.Namespace) -> int:
    from awsview.labs import BUILTIN

    return play(args.lab or list(BUILTIN), theme=args.theme, step_seconds=args.step_seconds)


def play(lab_names: list[str], theme: str | None = None, step_seconds: float = 8.0) -> int:
    """Open the viewer on a fresh in-process emulator and play these labs in it."""
    from awsview.aws.session import Target, isolate_from_shell
    from awsview.emulator.server import start
    from awsview.labs import get_lab

    labs = [get_lab(name) for name in lab_names]
    if not has_terminal():
        return fail(
            "the demo opens the viewer and needs a terminal "
            "(to play the labs without one: awsview lab play <lab> --endpoint-url URL)",
            EXIT_USAGE,
        )
    from awsview.labs.demo import DemoDriver
    from awsview.ui import lifeline
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions

    # The demo talks only to its own emulator: never hand it a real account's configuration.
    isolate_from_shell()
    state_dir = Path(tempfile.mkdtemp(prefix="awsview-demo-"))
    from awsview.labs.script import forget_all

    def forget() -> None:  # also what must not outlive the demo even if it ends with os._exit
        shutil.rmtree(state_dir, ignore_errors=True)
        forget_all()

    emulator = start("127.0.0.1", 0, state_dir)
    emulator.start_in_thread()
    try:
        driver = DemoDriver(labs, emulator.endpoint_url, step_seconds=step_seconds)
        target = Target(endpoint_url=emulator.endpoint_url, region="us-east-1")
        from awsview.ui import keymap

        keys, left_out = keymap.load()
        app = AWSViewApp(
            target=target,
            lab=labs[0].name,
            demo=driver,
            options=ViewerOptions(theme=theme, keymap=keys, notice=left_out),
        )
        lifeline.run(app, before_exit=forget)  # ends with its terminal or its parent (`make demo`)
    finally:
        emulator.stop()
        forget()  # the demo's emulator state is its own: nothing of it outlives the demo
    if driver.failed:
        return fail(driver.failed, EXIT_FAILURE)
    return 0
