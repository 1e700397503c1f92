"""The age of each queue's oldest message, which GetQueueAttributes does not give: AWS publishes it
only as the CloudWatch metric ApproximateAgeOfOldestMessage, and ReceiveMessage, which would show
it, changes the messages' visibility. Read-only everywhere:

- the AWS View emulator answers it on its read API (``GET /_awsview/queues``) from its own data;
- another endpoint (stock moto, LocalStack) has neither: no age, and it is not asked again;
- on AWS, one GetMetricData for every queue at most once a minute (SQS publishes the metric once
  a minute, so asking more often shows nothing new), its value kept in between.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from awsview.access import TOKEN_HEADER
from awsview.aws.errors import said_as_botocore
from awsview.aws.session import Connection

METRIC_EVERY_S = 60.0
METRIC_QUERIES = 500  # GetMetricData's most queries in one call
METRIC = "ApproximateAgeOfOldestMessage"


class OldestAges:
    """Ages by queue ARN (seconds; None: no message, or not known)."""

    def __init__(self) -> None:
        self._session: Any = None
        self._unanswered = False  # an endpoint without the emulator's route
        self._metric: dict[str, float | None] = {}
        self._metric_at = 0.0

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def ages(
        self, conn: Connection, queues: list[tuple[str, str]]
    ) -> dict[str, float | None]:
        """``queues``: (name, ARN) of the queues read; the age of each one known."""
        if not queues:
            return {}
        endpoint = conn.resolved.endpoint_url if conn.resolved is not None else None
        if endpoint is not None:
            return {} if self._unanswered else await self._emulator(conn, endpoint)
        return await self._cloudwatch(conn, queues)

    async def _emulator(self, conn: Connection, endpoint: str) -> dict[str, float | None]:
        if self._session is None:
            import aiohttp

            from awsview.aws.answers import bounded_session

            key = await conn.access_key_id()  # an emulator off loopback takes it as its token
            self._session = bounded_session(
                timeout=aiohttp.ClientTimeout(total=5), headers={TOKEN_HEADER: key} if key else None
            )
        url = f"{endpoint.rstrip('/')}/_awsview/queues"
        with said_as_botocore(url):
            async with self._session.get(url) as response:
                if response.status == 404:
                    self._unanswered = True
                    return {}
                response.raise_for_status()
                page = await response.json()
        found = page.get("oldest_age_s") if isinstance(page, dict) else None
        if not isinstance(found, dict):
            return {}
        return {
            str(arn): float(age) if isinstance(age, (int, float)) else None
            for arn, age in found.items()
        }

    async def _cloudwatch(
        self, conn: Connection, queues: list[tuple[str, str]]
    ) -> dict[str, float | None]:
        now = time.monotonic()
        missing = [q for q in queues if q[1] not in self._metric]
        if not missing and now - self._metric_at < METRIC_EVERY_S:
            return self._metric
        self._metric_at = now
        wanted = queues[:METRIC_QUERIES]
        try:
            answer = await self._metric_data(conn, wanted)
        except Exception:  # a policy without cloudwatch:GetMetricData: the counts still show
            answer = {}
        by_id = {r.get("Id"): r.get("Values") or [] for r in answer.get("MetricDataResults", [])}
        self._metric = {
            arn: float(by_id[f"q{i}"][0]) if by_id.get(f"q{i}") else None
            for i, (_, arn) in enumerate(wanted)
        }
        return self._metric

    async def _metric_data(self, conn: Connection, wanted: list[tuple[str, str]]) -> Any:
        end = datetime.now(UTC)
        return await conn.call(
            "cloudwatch",
            "get_metric_data",
            MetricDataQueries=[
                {
                    "Id": f"q{i}",
                    "MetricStat": {
                        "Metric": {
                            "Namespace": "AWS/SQS",
                            "MetricName": METRIC,
                            "Dimensions": [{"Name": "QueueName", "Value": name}],
                        },
                        "Period": 60,
                        "Stat": "Maximum",
                    },
                }
                for i, (name, _) in enumerate(wanted)
            ],
            StartTime=end - timedelta(minutes=5),
            EndTime=end,
            ScanBy="TimestampDescending",
        )
