"""`awsview docs DIR|NAME` (a lab folder played on a fresh emulator: its screenshots into its
``assets/``, links into its step texts; ``-o DIR`` shoots a copy) and
`awsview docs --from FILE -o DIR` (a recording): each file printed, then the time taken."""

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
        if args.output is None:
            return fail("docs --from: where to? give -o DIR", EXIT_USAGE)
        if args.endpoint_url is not None or args.lang is not None:
            return fail("docs --from: --endpoint-url and --lang go with a lab", EXIT_USAGE)
        return from_recording(
            args.source, args.output, args.size, args.theme, args.format, args.learner
        )
    if not args.lab:
        return fail(
            "docs: which lab? a lab folder or a name (awsview lab list), or --from FILE", EXIT_USAGE
        )
    if args.learner is not None:
        return fail("docs: --learner goes with --from", EXIT_USAGE)
    return from_lab(args)


def from_lab(args: argparse.Namespace) -> int:
    """The command line: print each file and the time taken; 2 for bad input, 1 for failure
    (said by main() for the errors that carry their exit status)."""
    from awsview.capture.docs import generate

    endpoint, region = None, args.region or "us-east-1"
    if args.endpoint_url is not None:
        import os

        from awsview.aws.session import Target, identified, isolate_from_shell, resolve

        saved = dict(os.environ)
        isolate_from_shell()  # the lab plays with the emulator's keys: the shell's never count
        try:
            where = identified(resolve(Target(None, region, args.endpoint_url)))
        finally:
            os.environ.clear()
            os.environ.update(saved)
        if not where.is_local:
            return fail(
                f"docs {untrusted.line(args.lab)} would create and delete resources on "
                f"{where.describe()}, which is not a local endpoint (loopback or an AWS View "
                "emulator): docs plays a lab only on an emulator",
                EXIT_USAGE,
            )
        endpoint, region = where.endpoint_url, where.region
    started = time.monotonic()
    lab = args.lab
    try:
        paths = generate(
            lab, args.output, args.size, args.theme, args.format, args.lang, endpoint, region
        )
    except UserError:  # said by the command line, with its own exit status
        raise
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    except OSError as exc:
        return fail(f"cannot write the pages: {exc}", EXIT_FAILURE)
    for path in paths:
        print(untrusted.line(path))
    shots = sum(path.parent.name == "assets" for path in paths)
    print(f"{untrusted.line(lab)}: {shots} screenshots in {time.monotonic() - started:.1f} s")
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
