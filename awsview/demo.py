"""`awsview demo`: the embedded emulator on a free port, and the labs played on it step by step."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path


def run(lab_names: list[str], out=sys.stdout) -> int:
    from awsview.emulator.server import EmulatorError, start
    from awsview.labs import UnknownLab, get_lab
    from awsview.labs.player import LabError, LabPlayer

    try:
        labs = [get_lab(name) for name in lab_names]
    except UnknownLab as exc:
        print(f"awsview: {exc}", file=sys.stderr)
        return 2
    state_dir = Path(tempfile.mkdtemp(prefix="awsview-demo-"))
    try:
        emulator = start("127.0.0.1", 0, state_dir)
    except EmulatorError as exc:
        print(f"awsview: {exc}", file=sys.stderr)
        return 2
    emulator.start_in_thread()

    def say(line: str) -> None:
        print(line, file=out, flush=True)

    say(f"AWS View demo — embedded emulator at {emulator.endpoint_url} (state in {state_dir})")
    say("The live viewer is not built yet; this plays each lab's steps on the emulator.\n")
    started = time.monotonic()
    try:
        for lab in labs:
            say(f"━━ {lab.name}: {lab.title} ━━")
            player = LabPlayer(lab, endpoint_url=emulator.endpoint_url, log=lambda line: say(f"   {line}"))
            player.setup()
            for number, step in enumerate(lab.steps, start=1):
                say(f"── step {number}/{len(lab.steps)}: {step.title}")
                player.play(only=step.key)
            decisions = emulator.journal.decisions(limit=100000)
            mine = [d for d in decisions if d.table_name.startswith(lab.prefix)]
            accepted = sum(d.outcome == "accepted" for d in mine)
            say(f"   write decisions so far: {len(mine)} ({accepted} accepted, "
                f"{len(mine) - accepted} rejected)\n")
    except LabError as exc:
        print(f"awsview: {exc}", file=sys.stderr)
        return 1
    finally:
        emulator.stop()
    say(f"Played {len(labs)} lab(s) in {time.monotonic() - started:.1f} s.")
    return 0
