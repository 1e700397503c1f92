"""What a switch of AWS profile or region does before the viewer polls the new target: the
checks `awsview watch` makes at start (the configuration resolves, the credentials are fetched
once, a real account is announced), and stopping the old target's workers for good."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from textual.worker import WorkerError

from awsview.aws.session import ConfigError, Target, check_credentials, resolve
from awsview.model import untrusted

MAX_PROBLEM = 300  # the one line a refused switch shows


def retargeted(target: Target, profile: str | None, region: str | None) -> Target:
    """``target`` with another profile or region; a new profile takes its own region unless
    one was given on the command line."""
    if profile is not None:
        target = replace(target, profile=profile)
    if region is not None:
        target = replace(target, region=region)
    return target


def _checked(target: Target) -> str | None:
    """As `checked_target` does at start; returns the real-account announcement, if any."""
    resolved = resolve(target)
    check_credentials(resolved)
    if resolved.reaches_aws and not resolved.is_local:
        return (
            f"now reading a real AWS account: {resolved.describe()} (read calls only, "
            "which AWS may bill)"
        )
    return None


async def check(target: Target) -> tuple[str | None, str | None]:
    """(why the switch is refused, or None; the announcement to show, or None). Off the event
    loop: resolving makes botocore clients and an SSO or assume-role profile fetches keys."""
    try:
        return None, await asyncio.to_thread(_checked, target)
    except ConfigError as exc:
        return untrusted.line(str(exc), limit=MAX_PROBLEM), None


async def stop_workers(workers: Iterable[Any]) -> None:
    """Cancel ``workers`` and wait until each has ended (its ``finally`` blocks run)."""
    workers = list(workers)
    for worker in workers:
        worker.cancel()
    for worker in workers:
        try:
            await worker.wait()
        except WorkerError:  # cancelled (as asked), failed, or never started: ended all the same
            pass
