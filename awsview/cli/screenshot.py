"""`awsview screenshot -o FILE`: the viewer on an endpoint, headless, saved once every panel has
data."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from awsview.cli.common import EXIT_USAGE, checked_target, fail


def run(args: argparse.Namespace) -> int:
    return shoot(checked_target(args), args.lab, args.prefix, args.size, args.theme, args.output)


def shoot(
    target: Any, lab: str | None, prefix: str, size: tuple[int, int], theme: str, output: Path
) -> int:
    from awsview.capture.shot import take

    if output.suffix.lower() not in (".svg", ".png"):
        return fail(f"{output.name}: the file name must end in .svg or .png", EXIT_USAGE)
    path, missing = asyncio.run(take(target, lab, prefix, size, theme, output))
    if missing:
        print(
            f"awsview screenshot: saved what there was; still waiting for {', '.join(missing)}",
            file=sys.stderr,
        )
    print(path)
    return 0
