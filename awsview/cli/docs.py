"""`awsview docs LAB -o DIR` (a lab played on a fresh emulator) and
`awsview docs --from FILE -o DIR` (a recording): one screenshot per step and an index.md; each
file printed, then the time taken."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from awsview.cli.common import EXIT_FAILURE, EXIT_USAGE, fail
from awsview.model import untrusted


def run(args: argparse.Namespace) -> int:
    if args.source is not None:
        if args.lab:
            return fail("docs: give a lab or --from FILE, not both", EXIT_USAGE)
        return from_recording(
            args.source, args.output, args.size, args.theme, args.format, args.learner
        )
    if not args.lab:
        return fail("docs: which lab? (ev04, ev05, q05), or --from FILE", EXIT_USAGE)
    return from_lab(args.lab, args.output, args.size, args.theme, args.format)


def from_lab(lab: str, output: Path, size: str, theme: str, fmt: str) -> int:
    """The command line: print each file and the time taken; 2 for bad input, 1 for failure."""
    from awsview.capture.docs import generate
    from awsview.capture.docshots import DocsError
    from awsview.capture.screenshot import ScreenshotError, screen_size
    from awsview.labs import UnknownLab

    try:
        width, height = screen_size(size)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    started = time.monotonic()
    try:
        paths = generate(lab, output, (width, height), theme, fmt)
    except (UnknownLab, ValueError) as exc:
        return fail(str(exc), EXIT_USAGE)
    except (DocsError, ScreenshotError) as exc:
        return fail(str(exc), EXIT_FAILURE)
    except OSError as exc:
        return fail(f"cannot write the pages: {exc}", EXIT_FAILURE)
    for path in paths:
        print(untrusted.line(path))
    print(
        f"{untrusted.line(lab)}: {len(paths) - 1} screenshots in {time.monotonic() - started:.1f} s"
    )
    return 0


def from_recording(
    source: Path, output: Path | None, size: str, theme: str, fmt: str, learner: str | None
) -> int:
    from awsview.capture.docsfrom import generate
    from awsview.capture.docshots import DocsError
    from awsview.capture.screenshot import ScreenshotError, screen_size
    from awsview.polling.recording import LearnerError, RecordingError

    try:
        width, height = screen_size(size)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    started = time.monotonic()
    try:
        paths = generate(source, output, (width, height), theme, fmt, learner)
    except LearnerError as exc:
        return fail(str(exc), EXIT_USAGE)
    except RecordingError as exc:
        return fail(str(exc), EXIT_FAILURE)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    except (DocsError, ScreenshotError, OSError) as exc:
        return fail(str(exc), EXIT_FAILURE)
    for path in paths:
        print(untrusted.line(path))
    took = time.monotonic() - started
    print(f"{untrusted.line(Path(source).name)}: {len(paths) - 1} screenshots in {took:.1f} s")
    return 0
