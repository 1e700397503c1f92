"""One rate budget for many processes: `awsview serve` runs a viewer process per browser tab, and
six tabs must not call the account six times as often as one viewer would."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from awsview.aws.ratelimit import RATE_DIR_ENV, RateLimiter, SharedTokenBucket, shared_dir
from awsview.aws.session import Connection, Target

SLOW = {("sqs", "ListQueues"): 0.01}  # one token in the bucket, the next in 100 s


@pytest.mark.process  # starts the CLI in a process of its own
def test_a_token_taken_by_one_process_is_gone_for_the_others(tmp_path):
    folder = shared_dir(tmp_path, "account-a")
    taker = textwrap.dedent(f"""
        import asyncio
        from pathlib import Path
        from awsview.aws.ratelimit import RateLimiter
        limiter = RateLimiter({SLOW!r})
        limiter.share(Path({str(folder)!r}))
        asyncio.run(limiter.acquire("sqs", "ListQueues"))
    """)
    subprocess.run([sys.executable, "-c", taker], check=True, timeout=60)

    here = RateLimiter(SLOW)
    here.share(folder)
    assert here.bucket("sqs", "ListQueues").take() > 50  # waits for the other's refill
    alone = RateLimiter(SLOW)  # not shared: a budget of its own, as before
    assert not isinstance(alone.bucket("sqs", "ListQueues"), SharedTokenBucket)
    other = RateLimiter(SLOW)  # another account's budget is its own
    other.share(shared_dir(tmp_path, "account-b"))
    assert other.bucket("sqs", "ListQueues").take() == 0


async def test_connections_of_a_served_viewer_share_the_budget_of_their_account(
    emulator, tmp_path, monkeypatch
):
    monkeypatch.setenv(RATE_DIR_ENV, str(tmp_path))
    same = Target(endpoint_url=emulator.endpoint_url, region="us-east-1")
    async with Connection(same) as one, Connection(same) as two:
        await one.call("sqs", "list_queues")
        await two.call("sqs", "list_queues")
        paths = {c.limiter.bucket("sqs", "ListQueues").path for c in (one, two)}  # type: ignore[union-attr]
        assert len(paths) == 1 and next(iter(paths)).exists()
    elsewhere = Target(endpoint_url=emulator.endpoint_url, region="eu-west-1")
    async with Connection(elsewhere) as three:
        assert three.limiter.bucket("sqs", "ListQueues").path not in paths  # type: ignore[union-attr]
    monkeypatch.delenv(RATE_DIR_ENV)
    async with Connection(same) as alone:
        assert not isinstance(alone.limiter.bucket("sqs", "ListQueues"), SharedTokenBucket)
