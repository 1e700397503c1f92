"""The connection: long-lived, read-only aiobotocore clients on the standard credential chain."""

from __future__ import annotations

import os
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from awsview.aws.ratelimit import RateLimiter
from awsview.aws.readonly import guard

DEFAULT_REGION = "us-east-1"
LOCAL_RATE_SCALE = 10.0
# Local emulators accept any credentials; these are used only when the chain has none.
EMULATOR_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


@dataclass(frozen=True)
class Target:
    """Where to look: a profile and region from the chain, optionally a local endpoint."""

    profile: str | None = None
    region: str | None = None
    endpoint_url: str | None = None

    @classmethod
    def from_env(cls, profile: str | None = None, region: str | None = None,
                 endpoint_url: str | None = None) -> Target:
        return cls(profile=profile or os.environ.get("AWS_PROFILE") or None,
                   region=region, endpoint_url=endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or None)

    @property
    def is_local(self) -> bool:
        return bool(self.endpoint_url)

    def describe(self) -> str:
        where = self.endpoint_url or "AWS"
        return f"{where} ({self.region or DEFAULT_REGION}{', profile ' + self.profile if self.profile else ''})"


class Connection:
    """Opens one guarded client per service on first use; all close together.

    Use as ``async with Connection(target) as conn: await conn.call("sqs", "list_queues")``.
    """

    def __init__(self, target: Target, limiter: RateLimiter | None = None,
                 connect_timeout: float = 3.0, read_timeout: float = 15.0, session: Any = None):
        """``session``: an aiobotocore session to share (its loaded service models are ~10 MB;
        the class view opens one connection per learner); by default a fresh one."""
        self.target = target
        self._shared_session = session
        # AWS quotas do not apply to a local emulator; its buckets are ten times wider.
        self.limiter = limiter or RateLimiter(scale=LOCAL_RATE_SCALE if target.is_local else 1.0)
        self._timeouts = (connect_timeout, read_timeout)
        self._stack: AsyncExitStack | None = None
        self._clients: dict[str, Any] = {}
        self._session: Any = None
        self._credentials: dict[str, str] = {}
        self.region = target.region or DEFAULT_REGION

    async def __aenter__(self) -> Connection:
        from aiobotocore.session import get_session

        self._stack = AsyncExitStack()
        self._session = self._shared_session or get_session()
        if self.target.profile and self._shared_session is None:
            self._session.set_config_variable("profile", self.target.profile)
        self.region = self.target.region or self._session.get_config_variable("region") or DEFAULT_REGION
        if self.target.is_local and await self._session.get_credentials() is None:
            self._credentials = dict(EMULATOR_CREDENTIALS)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()
        self._clients.clear()

    async def client(self, service: str) -> Any:
        if service not in self._clients:
            from aiobotocore.config import AioConfig

            config = AioConfig(
                connect_timeout=self._timeouts[0], read_timeout=self._timeouts[1],
                retries={"max_attempts": 1, "mode": "standard"},  # the scheduler retries, not botocore
                max_pool_connections=20,
            )
            client = await self._stack.enter_async_context(self._session.create_client(
                service, region_name=self.region, endpoint_url=self.target.endpoint_url,
                config=config, **self._credentials,
            ))
            self._clients[service] = guard(client)
        return self._clients[service]

    async def call(self, service: str, method: str, **params: Any) -> dict[str, Any]:
        """One rate-limited, read-only API call, e.g. call("stepfunctions", "list_executions")."""
        client = await self.client(service)
        operation = client.meta.method_to_api_mapping.get(method, method)
        await self.limiter.acquire(service, operation)
        return await getattr(client, method)(**params)

    async def pages(self, service: str, method: str, key: str, token_in: str = "nextToken",
                    token_out: str = "nextToken", limit: int | None = None, **params: Any) -> list[Any]:
        """All pages of a listing, concatenated under ``key``; stops at ``limit`` entries."""
        results: list[Any] = []
        while True:
            page = await self.call(service, method, **params)
            results.extend(page.get(key) or [])
            token = page.get(token_out)
            if not token or (limit is not None and len(results) >= limit):
                return results if limit is None else results[:limit]
            params[token_in] = token
