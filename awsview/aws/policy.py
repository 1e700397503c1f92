"""`awsview iam-policy`: the least-privilege IAM policy the viewer needs for a lab (or for the
resources under a prefix).

Its actions are the calls the pollers make (`CALLS`), each of which must be on the client
guard's allow-list (`readonly.READ_OPERATIONS`): a call the guard would refuse cannot be in the
policy, and a test writes down every operation the pollers send while a lab plays (and a role
is edited after it, which the change feed has read again alone) and finds each granted. Each
action is narrowed to the lab's resources where AWS authorizes it by resource; listings AWS
authorizes only account-wide keep ``"Resource": "*"``.
"""

from __future__ import annotations

import json
from typing import Any

from awsview.aws.readonly import READ_OPERATIONS
from awsview.labspec import LabSpec
from awsview.model.errors import UserError

# The resources the viewer reads, as AWS names them in IAM. {p}: partition, {r}: region,
# {a}: account, {prefix}: the lab's name prefix, {group}: one of its log groups.
MACHINES = ("ReadStateMachines", "arn:{p}:states:{r}:{a}:stateMachine:{prefix}*")
EXECUTIONS = ("ReadExecutions", "arn:{p}:states:{r}:{a}:execution:{prefix}*:*")
TABLES = ("ReadTables", "arn:{p}:dynamodb:{r}:{a}:table/{prefix}*")
STREAMS = ("ReadTableStreams", "arn:{p}:dynamodb:{r}:{a}:table/{prefix}*/stream/*")
QUEUES = ("ReadQueues", "arn:{p}:sqs:{r}:{a}:{prefix}*")
GROUPS = ("ReadLogGroups", "arn:{p}:logs:{r}:{a}:log-group:{group}")
ROLES = ("ReadRoles", "arn:{p}:iam::{a}:role/{prefix}*")
# What IAM reads in a Resource ARN as more than itself: wildcards and a policy variable's start.
NOT_IN_PREFIX = "*?$"
# Listings AWS authorizes only account-wide (no resource type in its Service Authorization
# Reference): "Resource": "*".
ACCOUNT = ("ListAccountWide", None)

# Every call the pollers make, (client service, operation) → (statement, resource).
CALLS: dict[tuple[str, str], tuple[str, str | None]] = {
    ("sts", "GetCallerIdentity"): ACCOUNT,  # needs no permission; listed so that a Deny shows
    ("stepfunctions", "ListStateMachines"): ACCOUNT,
    ("stepfunctions", "DescribeStateMachine"): MACHINES,
    ("stepfunctions", "ListExecutions"): MACHINES,
    ("stepfunctions", "DescribeExecution"): EXECUTIONS,
    ("stepfunctions", "GetExecutionHistory"): EXECUTIONS,
    ("dynamodb", "ListTables"): ACCOUNT,
    ("dynamodb", "DescribeTable"): TABLES,
    ("dynamodb", "Scan"): TABLES,
    ("dynamodbstreams", "DescribeStream"): STREAMS,
    ("dynamodbstreams", "GetShardIterator"): STREAMS,
    ("dynamodbstreams", "GetRecords"): STREAMS,
    ("sqs", "ListQueues"): ACCOUNT,
    ("sqs", "GetQueueAttributes"): QUEUES,
    ("cloudwatch", "GetMetricData"): ACCOUNT,  # a queue's oldest message age
    ("lambda", "ListFunctions"): ACCOUNT,
    ("lambda", "ListEventSourceMappings"): ACCOUNT,
    ("logs", "DescribeLogGroups"): ACCOUNT,
    ("logs", "FilterLogEvents"): GROUPS,
    ("iam", "ListRoles"): ACCOUNT,
    ("iam", "GetRole"): ROLES,  # a role the change feed names is read again alone
    ("iam", "ListRolePolicies"): ROLES,
    ("iam", "GetRolePolicy"): ROLES,
    ("iam", "ListAttachedRolePolicies"): ROLES,
}
# The IAM action prefix of a client service, where the two differ.
IAM_PREFIX = {"stepfunctions": "states", "dynamodbstreams": "dynamodb"}


class PolicyError(UserError, ValueError):
    """A policy that cannot be made as asked (one line)."""


def action(service: str, operation: str) -> str:
    return f"{IAM_PREFIX.get(service, service)}:{operation}"


def policy(
    profile: LabSpec,
    region: str = "*",
    account: str = "*",
    partition: str = "aws",
    without: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The policy document for ``profile``; ``without`` leaves actions out (to see what breaks)."""
    if not profile.prefix:
        raise PolicyError(
            "a policy for every resource of an account is not least privilege: "
            "give a lab (--lab) or a prefix (--prefix)"
        )
    if wild := "".join(sorted({c for c in profile.prefix if c in NOT_IN_PREFIX})):
        raise PolicyError(
            f"--prefix {profile.prefix!r} holds {' '.join(wild)}, which IAM reads as a wildcard "
            "or a policy variable: the policy would reach past the lab's resources; give the "
            "names' literal start (e.g. --prefix labex-q05-)"
        )
    for service, operation in CALLS:
        if operation not in READ_OPERATIONS.get(service, frozenset()):
            raise PolicyError(f"{service}:{operation} is not on the read-only allow-list")  # a bug
    groups = profile.log_groups if not profile.generic else (f"/aws/lambda/{profile.prefix}*",)
    by_resources: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (service, operation), (sid, template) in CALLS.items():
        name = action(service, operation)
        if name in without:
            continue
        if template is None:
            resources: tuple[str, ...] = ("*",)
        elif "{group}" in template:
            # A log group's ARN is written with and without ":*"; both, so either form matches.
            resources = tuple(
                r
                for g in groups
                for r in (
                    template.format(p=partition, r=region, a=account, group=g),
                    template.format(p=partition, r=region, a=account, group=g) + ":*",
                )
            )
        else:
            resources = (template.format(p=partition, r=region, a=account, prefix=profile.prefix),)
        by_resources.setdefault((sid, resources), []).append(name)
    statements = [
        {
            "Sid": sid,
            "Effect": "Allow",
            "Action": sorted(actions),
            "Resource": resources[0] if len(resources) == 1 else list(resources),
        }
        for (sid, resources), actions in by_resources.items()
    ]
    return {"Version": "2012-10-17", "Statement": statements}


def as_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"
