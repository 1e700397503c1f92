"""`awsview docs LAB -o DIR` (a lab played on a fresh emulator) and
`awsview docs --from FILE -o DIR` (a recording): one screenshot per step and an index.md; each
file printed, then the time taken."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from awsview.cli.common import EXIT_FAILURE, EXIT_USAGE, fail
from awsview.model import untrusted
from awsview.model.errors import UserError


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


def from_lab(lab: str, output: Path, size: tuple[int, int], theme: str, fmt: str) -> int:
    """The command line: print each file and the time taken; 2 for bad input, 1 for failure."""
    from awsview.capture.docs import generate

    started = time.monotonic()
    try:
        paths = generate(lab, output, size, theme, fmt)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    except OSError as exc:
        return fail(f"cannot write the pages: {exc}", EXIT_FAILURE)
    for path in paths:
        print(untrusted.line(path))
    print(
        f"{untrusted.line(lab)}: {len(paths) - 1} screenshots in {time.monotonic() - started:.1f} s"
    )
    return 0


def from_recording(
    source: Path,
    output: Path | None,
    size: tuple[int, int],
    theme: str,
    fmt: str,
    learner: str | None,
) -> int:
    from awsview.capture.docsfrom import generate

    started = time.monotonic()
    try:
        paths = generate(source, output, size, theme, fmt, learner)
    except UserError:  # said by the command line, with its own exit status
        raise
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    except OSError as exc:
        return fail(str(exc), EXIT_FAILURE)
    for path in paths:
        print(untrusted.line(path))
    took = time.monotonic() - started
    print(f"{untrusted.line(Path(source).name)}: {len(paths) - 1} screenshots in {took:.1f} s")
    return 0
