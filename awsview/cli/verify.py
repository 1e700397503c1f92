"""`awsview verify STEP`: whether AWS View's checkpoints of a lab step hold on the endpoint, read
as the viewer reads it (read-only), so a lab's verify script can be one line and agree with the
checkpoints panel: exit 0, or 1 with what is there (NOW) as the hint."""

from __future__ import annotations

import argparse
import asyncio

from awsview.cli.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, checked_target, fail


def step_key(profile, which: str) -> str | None:
    """The key of the step numbered or named ``which`` (a lab folder's steps, or the order of a
    profile's checkpoints)."""
    keys = (
        [s.key for s in profile.folder.steps]
        if profile.folder is not None
        else list(dict.fromkeys(c.step for c in profile.checkpoints))
    )
    if which in keys:
        return which
    if which.isdigit() and 1 <= int(which) <= len(keys):
        return keys[int(which) - 1]
    return None


def run(args: argparse.Namespace) -> int:
    from awsview import labspec
    from awsview.aws.session import ConfigError
    from awsview.labs.script import clean
    from awsview.polling.bootstrap import PreflightError, detect_lab_spec
    from awsview.polling.stepcheck import StepChecker

    try:
        target = checked_target(args)
        chosen = labspec.load(args.lab, lang=args.lang) if args.lab else None
    except (labspec.SpecError, labspec.UnknownLabSpec, ConfigError) as exc:
        return fail(str(exc), EXIT_USAGE)

    async def verify() -> tuple[str | None, list]:
        profile = chosen
        if profile is None:
            from awsview.aws.session import Connection

            async with Connection(target) as conn:
                profile = await detect_lab_spec(conn, args.prefix)
        key = step_key(profile, args.step)
        if key is None:
            return None, [profile]
        async with StepChecker(target, profile) as checker:
            return key, await checker.now(key)

    try:
        key, results = asyncio.run(verify())
    except PreflightError as exc:
        return fail(str(exc), EXIT_USAGE if exc.kind in ("auth", "usage") else EXIT_FAILURE)
    if key is None:
        return fail(f"lab {results[0].name} has no step {args.step!r}", EXIT_USAGE)
    if not results:
        return fail(f"step {key} has no checkpoints", EXIT_USAGE)
    failing = [r for r in results if r.passed is not True]
    for result in results:
        mark = "✓" if result.passed else ("?" if result.passed is None else "✗")
        print(f"{mark} {clean(result.checkpoint.text)} — NOW {clean(result.now)}")
    return EXIT_OK if not failing else EXIT_FAILURE
