"""Per-API token buckets that stay well inside AWS's request quotas; the calls made and the
DynamoDB read units consumed, counted.

A limiter's buckets live in its process, unless it shares them (`RateLimiter.share`): then each
bucket is a small file in a directory, read and written under an exclusive lock, so every
process pointed at that directory draws on one budget. `awsview serve` runs one viewer process
per browser tab and points them all at one directory (`RATE_DIR_ENV`), so six tabs still make
the calls of one viewer, not six times as many.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from awsview.aws.quotas import SHARE, quota

# Sustained requests per second AWS View would like per API; each is cut to `quotas.SHARE` of
# AWS's refill rate for it (`budget`), so the learner's own CLI calls keep their share.
# (service, operation) -> rate.
RATES: dict[tuple[str, str], float] = {
    ("logs", "FilterLogEvents"): 1.0,
    ("logs", "DescribeLogGroups"): 2.0,
    ("stepfunctions", "ListStateMachines"): 1.0,
    ("stepfunctions", "DescribeStateMachine"): 1.0,
    ("stepfunctions", "ListExecutions"): 1.0,
    ("stepfunctions", "DescribeExecution"): 7.0,
    ("stepfunctions", "GetExecutionHistory"): 2.5,
    ("iam", "ListRoles"): 1.0,
    ("iam", "GetRole"): 2.0,
    ("iam", "GetRolePolicy"): 2.0,
    ("iam", "ListRolePolicies"): 2.0,
    ("iam", "ListAttachedRolePolicies"): 2.0,
}
DEFAULT_RATE = 5.0
BURST_SECONDS = 2.0  # a bucket holds this many seconds' worth of tokens
# A directory of shared buckets, set by `awsview serve` for its sessions (and its recorder).
RATE_DIR_ENV = "AWSVIEW_RATE_DIR"


def budget(service: str, operation: str, wanted: float) -> tuple[float, float]:
    """The rate (per second) and bucket size AWS View allows itself for one API: ``wanted``,
    at most `SHARE` of AWS's refill rate and bucket for it (`quotas.quota`)."""
    rate, capacity = wanted, wanted * BURST_SECONDS
    limit = quota(service, operation)
    if limit is not None:
        rate = min(rate, SHARE * limit.refill)
        capacity = min(rate * BURST_SECONDS, SHARE * limit.bucket)
    return rate, max(1.0, capacity)


@dataclass
class TokenBucket:
    rate: float
    capacity: float
    tokens: float = field(init=False)
    updated: float = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = self.capacity
        self.updated = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    async def acquire(self) -> None:
        while True:
            self._refill()
            if self.tokens >= 1:
                self.tokens -= 1
                return
            await asyncio.sleep((1 - self.tokens) / self.rate)


@dataclass
class SharedTokenBucket:
    """A token bucket kept in a file: every process that opens the same path shares it.

    The file holds the tokens left and when that was counted (CLOCK_MONOTONIC, one clock for
    every process of the machine). The lock is held only to read and rewrite two numbers, never
    while waiting for a token."""

    path: Path
    rate: float
    capacity: float

    def take(self) -> float:
        """Take a token: 0.0; or, when there is none yet, the seconds until there is one."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now = time.monotonic()
            try:
                tokens, updated = (float(v) for v in os.pread(fd, 64, 0).split())
                tokens = min(self.capacity, tokens + max(0.0, now - updated) * self.rate)
            except ValueError:  # a new (empty) bucket: full
                tokens = self.capacity
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            if not wait:
                tokens -= 1
            state = f"{tokens!r} {now!r}".encode()
            os.pwrite(fd, state, 0)
            os.ftruncate(fd, len(state))
            return wait
        finally:
            os.close(fd)  # and with it the lock

    async def acquire(self) -> None:
        while (wait := self.take()) > 0:
            await asyncio.sleep(wait)


def shared_dir(base: str | os.PathLike[str], account: object) -> Path:
    """The folder of shared buckets for one account (any value naming it) under ``base``."""
    digest = hashlib.sha256(repr(account).encode()).hexdigest()[:16]
    folder = Path(base) / digest
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


class RateLimiter:
    """Hands out permission to call an API and counts every call made."""

    def __init__(self, rates: dict[tuple[str, str], float] | None = None, scale: float = 1.0):
        self._rates = {**RATES, **(rates or {})}
        self.scale = scale  # 10 for a local emulator, whose buckets are wider
        self._buckets: dict[tuple[str, str], TokenBucket | SharedTokenBucket] = {}
        self._shared: Path | None = None
        self.calls: Counter[tuple[str, str]] = Counter()
        self.read_units: Counter[str] = Counter()  # DynamoDB read units consumed, per table

    def share(self, folder: Path) -> None:
        """Draw from the buckets kept in ``folder`` (see `shared_dir`) from now on."""
        self._shared = folder
        self._buckets.clear()

    def bucket(self, service: str, operation: str) -> TokenBucket | SharedTokenBucket:
        """The bucket ``service:operation`` draws from: its own, or its quota pool's."""
        limit = quota(service, operation)
        key = (service, limit.pool if limit is not None and limit.pool else operation)
        if key not in self._buckets:
            wanted = self._rates.get((service, operation), DEFAULT_RATE)
            rate, capacity = budget(service, operation, wanted)
            rate, capacity = rate * self.scale, max(1.0, capacity * self.scale)
            self._buckets[key] = (
                TokenBucket(rate, capacity)
                if self._shared is None
                else SharedTokenBucket(self._shared / f"{service}.{key[1]}", rate, capacity)
            )
        return self._buckets[key]

    async def acquire(self, service: str, operation: str) -> None:
        await self.bucket(service, operation).acquire()
        self.calls[(service, operation)] += 1

    def consumed(self, table: str, units: float) -> None:
        """Count the read units a call consumed (its ReturnConsumedCapacity answer)."""
        self.read_units[table] += units

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    @property
    def total_read_units(self) -> float:
        return sum(self.read_units.values())
