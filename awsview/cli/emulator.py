"""`awsview emulator`: the embedded lab emulator in the foreground, until Ctrl+C or SIGTERM."""

from __future__ import annotations

import argparse
import signal

from awsview.cli.common import EXIT_USAGE, fail


def run(args: argparse.Namespace) -> int:
    from awsview.emulator.server import EmulatorError, start

    try:
        emulator = start(args.host, args.port, args.state_dir)
    except EmulatorError as exc:
        return fail(str(exc), EXIT_USAGE)

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"AWS View emulator listening on {emulator.endpoint_url}", flush=True)
    print(f"  write-decision journal: {emulator.endpoint_url}/_awsview/journal", flush=True)
    print(f"  state and logs:         {emulator.state_dir}", flush=True)
    print(
        f"  use it: export AWS_ENDPOINT_URL={emulator.endpoint_url} AWS_DEFAULT_REGION=us-east-1 "
        "AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing",
        flush=True,
    )
    try:
        emulator.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0
