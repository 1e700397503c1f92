"""AWS's request quotas for every operation the viewer may send (`readonly.READ_OPERATIONS`),
per account and region: a token bucket of ``bucket`` requests refilled at ``refill`` per second.

The rate limiter (`awsview.aws.ratelimit`) allows itself at most `SHARE` of each refill, so the
learner's own CLI and the lab's workers keep the rest of the account's budget. Where a page gives
figures per Region, the lowest is kept: a budget safe there is safe everywhere. Where AWS
publishes no figure for an operation, the entry says so and holds a conservative guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from awsview.aws.readonly import is_read_operation

SHARE = 0.5  # of each API's refill rate, at most, for everything AWS View runs against an account


@dataclass(frozen=True)
class Quota:
    bucket: float  # requests that may come at once (the bucket's size)
    refill: float  # requests per second, sustained
    documented: bool = True  # False: AWS publishes no figure; a conservative guess
    pool: str = ""  # operations of one service with the same pool share this one quota


def _each(names: str, quota: Quota) -> dict[str, Quota]:
    return {name: quota for name in names.split()}


# https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html
# ("Quotas related to API action throttling", Standard workflows; the lower column of the
# Regions it lists).
_STEPFUNCTIONS = {
    "DescribeExecution": Quota(250, 15),
    "DescribeStateMachine": Quota(200, 20),
    "GetExecutionHistory": Quota(250, 5),
    "ListExecutions": Quota(100, 2),
    "ListStateMachines": Quota(100, 5),
    "ListActivities": Quota(100, 5),
    **_each(
        "DescribeActivity DescribeStateMachineForExecution DescribeMapRun ListMapRuns "
        "DescribeStateMachineAlias ListStateMachineAliases ListStateMachineVersions "
        "ListTagsForResource",
        Quota(100, 1),
    ),
}

# https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html
# (transactions per second per account and Region; each is its own bucket of one second).
_LOGS = {
    "FilterLogEvents": Quota(5, 5),
    "DescribeLogGroups": Quota(10, 10),
    "DescribeLogStreams": Quota(25, 25),
    "GetLogEvents": Quota(25, 25),
    "GetQueryResults": Quota(5, 5),
    "DescribeQueries": Quota(5, 5),
    "ListTagsLogGroup": Quota(5, 5),
    "ListTagsForResource": Quota(5, 5),
}
# The page gives 5 TPS for most other reads of the service; those it does not name get that.
_LOGS_OTHER = Quota(5, 5, documented=False)

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
# Reads of items are limited by the table's read capacity (counted by the limiter in read units),
# not by a request rate; control-plane reads have no per-operation figure but DescribeLimits
# (about once a minute). The request rates below are conservative guesses.
_DYNAMODB_ITEMS = Quota(50, 50, documented=False)  # BatchGetItem GetItem Query Scan
_DYNAMODB_CONTROL = Quota(10, 10, documented=False)
_DYNAMODB = {
    **_each("BatchGetItem GetItem Query Scan", _DYNAMODB_ITEMS),
    "DescribeLimits": Quota(1, 1 / 60),
}

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
# (DynamoDB Streams: GetRecords at most 5 per second per shard; no more than two readers).
_DYNAMODBSTREAMS = {
    "GetRecords": Quota(5, 5),
    "GetShardIterator": Quota(5, 5, documented=False),
    "DescribeStream": Quota(10, 10, documented=False),
    "ListStreams": Quota(5, 5, documented=False),
}

# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html
# SQS publishes no request rate for its queue-attribute and listing reads; a conservative guess.
_SQS = Quota(20, 20, documented=False)

# https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html ("API requests":
# GetFunction 100 per second, GetPolicy 15, the rest of the control plane 15 together).
_LAMBDA = {
    "GetFunction": Quota(100, 100),
    "GetPolicy": Quota(15, 15),
}
_LAMBDA_OTHER = Quota(15, 15, pool="control-plane")

# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html
# IAM is global and throttles reads per account without publishing a rate: a conservative guess.
_IAM = Quota(10, 10, documented=False)

# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_limits.html
# (GetMetricData: 50 transactions per second per account and Region; up to 500 metrics a call).
_CLOUDWATCH = Quota(50, 50)

# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html
# ("AWS STS request quotas": 600 requests per second per account and Region).
_STS = Quota(600, 600)


def quota(service: str, operation: str) -> Quota | None:
    """AWS's quota for ``service:operation``; None for an operation the viewer never sends."""
    if not is_read_operation(service, operation):
        return None
    if service == "stepfunctions":
        return _STEPFUNCTIONS.get(operation)
    if service == "logs":
        return _LOGS.get(operation, _LOGS_OTHER)
    if service == "dynamodb":
        return _DYNAMODB.get(operation, _DYNAMODB_CONTROL)
    if service == "dynamodbstreams":
        return _DYNAMODBSTREAMS.get(operation)
    if service == "lambda":
        return _LAMBDA.get(operation, _LAMBDA_OTHER)
    return {"sqs": _SQS, "iam": _IAM, "sts": _STS, "cloudwatch": _CLOUDWATCH}.get(service)
