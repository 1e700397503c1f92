"""`awsview screenshot -o FILE`: the viewer on an endpoint, headless, saved once every panel has
data."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from awsview.cli.common import EXIT_FAILURE, EXIT_USAGE, checked_target, fail


def run(args: argparse.Namespace) -> int:
    return shoot(checked_target(args), args.lab, args.prefix, args.size, args.theme, args.output)


def shoot(target: Any, lab: str | None, prefix: str, size: str, theme: str, output: Path) -> int:
    from awsview.capture.screenshot import ScreenshotError, screen_size
    from awsview.capture.shot import take

    try:
        width, height = screen_size(size)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    if output.suffix.lower() not in (".svg", ".png"):
        return fail(f"{output.name}: the file name must end in .svg or .png", EXIT_USAGE)
    try:
        path = asyncio.run(take(target, lab, prefix, (width, height), theme, output))
    except ScreenshotError as exc:
        return fail(str(exc), EXIT_FAILURE)
    print(path)
    return 0
