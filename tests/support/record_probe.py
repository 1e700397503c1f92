"""A recording viewer that also writes down what it showed, for the kill -9 test.

``python -m tests.support.record_probe ENDPOINT LAB RECORDING SHOWN``: the real app (headless)
polls the endpoint with a recorder, exactly as ``awsview watch --record`` wires it; after each
record the recorder writes, one JSON line goes to SHOWN: the record's number and what the panels
showed at that moment (``dump``'s text of the live model, aged to the record's time). Runs until
killed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path


async def main(endpoint: str, lab: str, recording: Path, shown: Path) -> None:
    from awsview.aws.session import Target
    from awsview.core.printout import as_text
    from awsview.recording.follow import Recorder, open_recording, target_info
    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions

    target = Target(endpoint_url=endpoint)
    writer = open_recording(recording, "watch")
    channel = writer.channel("", target_info(target), time.time())
    recorder = Recorder(channel)
    app = AWSViewApp(
        target=target, lab=lab, recorder=recorder, options=ViewerOptions(poll_speed=0.5)
    )
    log = os.open(shown, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def logged(write):
        def wrapper(at, *args, **kwargs):
            write(at, *args, **kwargs)
            account = app.live.account if app.live is not None else None
            text = (
                as_text(app.profile, app.model, target, account or "?", at) if app.profile else ""
            )
            line = json.dumps({"record": recorder.frames + 1, "time": at, "text": text}) + "\n"
            os.write(log, line.encode())

        return wrapper

    channel.keyframe = logged(channel.keyframe)
    channel.frame = logged(channel.frame)
    async with app.run_test(size=(160, 60)) as pilot:
        print("recording", flush=True)
        while True:
            await pilot.pause(0.5)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])))
