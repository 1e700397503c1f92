"""Per-API token buckets that stay well inside AWS's request quotas; the calls made and the
DynamoDB read units consumed, counted."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

# Sustained requests per second AWS View allows itself per API, at most half of the account's
# refill rate so the learner's own CLI calls keep their share. (service, operation) -> rate.
RATES: dict[tuple[str, str], float] = {
    ("logs", "FilterLogEvents"): 1.0,  # quota: 5 TPS per account and region
    ("logs", "DescribeLogGroups"): 2.0,
    ("stepfunctions", "ListStateMachines"): 1.0,
    ("stepfunctions", "DescribeStateMachine"): 1.0,
    ("stepfunctions", "ListExecutions"): 1.0,  # refill 2/s
    ("stepfunctions", "DescribeExecution"): 7.0,  # refill 15/s
    ("stepfunctions", "GetExecutionHistory"): 2.5,  # refill 5/s
    ("iam", "ListRoles"): 1.0,
    ("iam", "GetRole"): 2.0,
    ("iam", "GetRolePolicy"): 2.0,
    ("iam", "ListRolePolicies"): 2.0,
    ("iam", "ListAttachedRolePolicies"): 2.0,
}
DEFAULT_RATE = 5.0
BURST_SECONDS = 2.0  # a bucket holds this many seconds' worth of tokens


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


class RateLimiter:
    """Hands out permission to call an API and counts every call made."""

    def __init__(self, rates: dict[tuple[str, str], float] | None = None, scale: float = 1.0):
        self._rates = {**RATES, **(rates or {})}
        self.scale = scale  # 10 for a local emulator, whose buckets are wider
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self.calls: Counter[tuple[str, str]] = Counter()
        self.read_units: Counter[str] = Counter()  # DynamoDB read units consumed, per table

    def bucket(self, service: str, operation: str) -> TokenBucket:
        key = (service, operation)
        if key not in self._buckets:
            rate = self._rates.get(key, DEFAULT_RATE) * self.scale
            self._buckets[key] = TokenBucket(rate, max(1.0, rate * BURST_SECONDS))
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
