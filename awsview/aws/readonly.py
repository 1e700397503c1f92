"""Read-only by construction: a guarded client cannot send a request that changes anything.

AWS View watches a learner's lab while the lab runs. It must never change what it watches. A
viewer that "only calls Describe" by convention can still call the wrong method one day, so
every client is passed through `guard()`, which refuses any operation not in `READ_OPERATIONS`
before the request is built, signed or sent. Unknown services have no entry and so refuse
everything.

The allow-list is hand-written and reviewed, never derived from name prefixes: several names
that look like reads are not (`sqs:ReceiveMessage` hides messages from the lab's consumer,
`stepfunctions:GetActivityTask` takes a task away from the lab's worker, `logs:StartQuery` starts
server-side work). Each service block lists what was left out on purpose and why.
"""

from __future__ import annotations

from typing import Any, TypeVar

Client = TypeVar("Client")

# Registered under this id so guarding the same client twice adds one handler, not two.
_HANDLER_ID = "awsview-readonly-guard"

READ_OPERATIONS: dict[str, frozenset[str]] = {
    # Left out: StartExecution, StartSyncExecution, RedriveExecution, StopExecution, TestState
    # (runs a state with a real role), SendTask* (completes the lab's task tokens),
    # GetActivityTask (a long poll that takes a task away from the lab's activity worker),
    # ValidateStateMachineDefinition (reads nothing of the lab), Create*/Update*/Delete*/Tag*.
    "stepfunctions": frozenset(
        {
            "DescribeActivity",
            "DescribeExecution",
            "DescribeMapRun",
            "DescribeStateMachine",
            "DescribeStateMachineAlias",
            "DescribeStateMachineForExecution",
            "GetExecutionHistory",
            "ListActivities",
            "ListExecutions",
            "ListMapRuns",
            "ListStateMachineAliases",
            "ListStateMachineVersions",
            "ListStateMachines",
            "ListTagsForResource",
        }
    ),
    # Left out: ExecuteStatement, BatchExecuteStatement, ExecuteTransaction (PartiQL can write),
    # TransactGetItems (takes part in transaction-conflict detection, so it can perturb the
    # lab's concurrent TransactWriteItems — exactly what some labs are about), SearchVectors
    # (not needed), every write, backup, export, import and Kinesis-destination operation.
    # Query and Scan consume read capacity; the pollers' rate limits keep that small.
    "dynamodb": frozenset(
        {
            "BatchGetItem",
            "DescribeBackup",
            "DescribeContinuousBackups",
            "DescribeContributorInsights",
            "DescribeEndpoints",
            "DescribeExport",
            "DescribeGlobalTable",
            "DescribeGlobalTableSettings",
            "DescribeImport",
            "DescribeKinesisStreamingDestination",
            "DescribeLimits",
            "DescribeTable",
            "DescribeTableReplicaAutoScaling",
            "DescribeTimeToLive",
            "GetItem",
            "GetResourcePolicy",
            "ListBackups",
            "ListContributorInsights",
            "ListExports",
            "ListGlobalTables",
            "ListImports",
            "ListTables",
            "ListTagsOfResource",
            "Query",
            "Scan",
        }
    ),
    # Stream records are not consumed by reading them, but AWS advises at most two readers per
    # shard: a viewer polling GetRecords competes with the lab's Lambda trigger for that share.
    "dynamodbstreams": frozenset(
        {
            "DescribeStream",
            "GetRecords",
            "GetShardIterator",
            "ListStreams",
        }
    ),
    # Left out: ReceiveMessage (makes messages invisible to the lab's consumer and counts
    # toward maxReceiveCount — it would push messages to the DLQ), every send, delete,
    # visibility, purge, permission, tag and message-move operation.
    "sqs": frozenset(
        {
            "GetQueueAttributes",
            "GetQueueUrl",
            "ListDeadLetterSourceQueues",
            "ListMessageMoveTasks",
            "ListQueueTags",
            "ListQueues",
        }
    ),
    # Left out: Invoke, InvokeAsync, InvokeWithResponseStream, CheckpointDurableExecution,
    # SendDurableExecutionCallback*, StopDurableExecution, GetDurableExecutionState (the
    # durable-functions SDK's replay call, made with the running function's checkpoint token),
    # every Create/Update/Delete/Put/Publish/Add/Remove/Tag operation.
    # GetFunction and GetLayerVersion answer with a presigned URL to the code; prefer
    # GetFunctionConfiguration, which says the same about the function without it.
    "lambda": frozenset(
        {
            "GetAccountSettings",
            "GetAlias",
            "GetCapacityProvider",
            "GetCodeSigningConfig",
            "GetDurableExecution",
            "GetDurableExecutionHistory",
            "GetEventSourceMapping",
            "GetFunction",
            "GetFunctionCodeSigningConfig",
            "GetFunctionConcurrency",
            "GetFunctionConfiguration",
            "GetFunctionEventInvokeConfig",
            "GetFunctionRecursionConfig",
            "GetFunctionScalingConfig",
            "GetFunctionUrlConfig",
            "GetLayerVersion",
            "GetLayerVersionByArn",
            "GetLayerVersionPolicy",
            "GetPolicy",
            "GetProvisionedConcurrencyConfig",
            "GetResourcePolicy",
            "GetRuntimeManagementConfig",
            "ListAliases",
            "ListCapacityProviders",
            "ListCodeSigningConfigs",
            "ListDurableExecutionsByFunction",
            "ListEventSourceMappings",
            "ListFunctionEventInvokeConfigs",
            "ListFunctionUrlConfigs",
            "ListFunctionVersionsByCapacityProvider",
            "ListFunctions",
            "ListFunctionsByCodeSigningConfig",
            "ListLayerVersions",
            "ListLayers",
            "ListProvisionedConcurrencyConfigs",
            "ListTags",
            "ListVersionsByFunction",
        }
    ),
    # Left out: StartQuery and StartLiveTail (start server-side work and bill for it),
    # StopQuery (stops someone else's query), TestMetricFilter and TestTransformer (compute,
    # read nothing of the lab), every Create/Put/Delete/Associate/Cancel/Tag/Update operation.
    "logs": frozenset(
        {
            "DescribeAccountPolicies",
            "DescribeConfigurationTemplates",
            "DescribeDeliveries",
            "DescribeDeliveryDestinations",
            "DescribeDeliverySources",
            "DescribeDestinations",
            "DescribeExportTasks",
            "DescribeFieldIndexes",
            "DescribeImportTaskBatches",
            "DescribeImportTasks",
            "DescribeIndexPolicies",
            "DescribeLogGroups",
            "DescribeLogStreams",
            "DescribeLookupTables",
            "DescribeMetricFilters",
            "DescribeQueries",
            "DescribeQueryDefinitions",
            "DescribeResourcePolicies",
            "DescribeSubscriptionFilters",
            "FilterLogEvents",
            "GetDataProtectionPolicy",
            "GetDelivery",
            "GetDeliveryDestination",
            "GetDeliveryDestinationPolicy",
            "GetDeliverySource",
            "GetIntegration",
            "GetLogAnomalyDetector",
            "GetLogEvents",
            "GetLogFields",
            "GetLogGroupFields",
            "GetLogObject",
            "GetLogRecord",
            "GetLookupTable",
            "GetQueryResults",
            "GetScheduledQuery",
            "GetScheduledQueryHistory",
            "GetStorageTierPolicy",
            "GetTransformer",
            "ListAggregateLogGroupSummaries",
            "ListAnomalies",
            "ListIntegrations",
            "ListLogAnomalyDetectors",
            "ListLogGroups",
            "ListLogGroupsForQuery",
            "ListScheduledQueries",
            "ListSourcesForS3TableIntegration",
            "ListSyslogConfigurations",
            "ListTagsForResource",
            "ListTagsLogGroup",
        }
    ),
    # Left out: GenerateCredentialReport, GenerateServiceLastAccessedDetails,
    # GenerateOrganizationsAccessReport (start report jobs), SimulatePrincipalPolicy,
    # SimulateCustomPolicy, GetHumanReadableSummary (has an LLM write a summary),
    # AcquireRole (creates a role despite its name), SendDelegationToken, and every
    # Create/Update/Delete/Put/Attach/Detach/Add/Remove/Tag/Upload/Enable/... operation.
    # The Get* of generated reports only read a report someone else generated.
    "iam": frozenset(
        {
            "GetAccessKeyLastUsed",
            "GetAccountAuthorizationDetails",
            "GetAccountPasswordPolicy",
            "GetAccountProperties",
            "GetAccountSummary",
            "GetContextKeysForCustomPolicy",
            "GetContextKeysForPrincipalPolicy",
            "GetCredentialReport",
            "GetDelegationRequest",
            "GetGroup",
            "GetGroupPolicy",
            "GetInstanceProfile",
            "GetLoginProfile",
            "GetMFADevice",
            "GetOpenIDConnectProvider",
            "GetOrganizationsAccessReport",
            "GetOutboundWebIdentityFederationInfo",
            "GetPolicy",
            "GetPolicyVersion",
            "GetRole",
            "GetRolePolicy",
            "GetRoleTemplateVersion",
            "GetSAMLProvider",
            "GetSSHPublicKey",
            "GetServerCertificate",
            "GetServiceLastAccessedDetails",
            "GetServiceLastAccessedDetailsWithEntities",
            "GetServiceLinkedRoleDeletionStatus",
            "GetUser",
            "GetUserPolicy",
            "ListAccessKeys",
            "ListAccountAliases",
            "ListAttachedGroupPolicies",
            "ListAttachedRolePolicies",
            "ListAttachedUserPolicies",
            "ListDelegationRequests",
            "ListEntitiesForPolicy",
            "ListGroupPolicies",
            "ListGroups",
            "ListGroupsForUser",
            "ListInstanceProfileTags",
            "ListInstanceProfiles",
            "ListInstanceProfilesForRole",
            "ListMFADeviceTags",
            "ListMFADevices",
            "ListOpenIDConnectProviderTags",
            "ListOpenIDConnectProviders",
            "ListOrganizationsFeatures",
            "ListPolicies",
            "ListPoliciesGrantingServiceAccess",
            "ListPolicyTags",
            "ListPolicyVersions",
            "ListRolePolicies",
            "ListRoleTags",
            "ListRoles",
            "ListSAMLProviderTags",
            "ListSAMLProviders",
            "ListSSHPublicKeys",
            "ListServerCertificateTags",
            "ListServerCertificates",
            "ListServiceSpecificCredentials",
            "ListSigningCertificates",
            "ListUserPolicies",
            "ListUserTags",
            "ListUsers",
            "ListVirtualMFADevices",
        }
    ),
    # Only the metric SQS publishes and nothing else does: the age of a queue's oldest message
    # (ApproximateAgeOfOldestMessage). Left out: every Put*, alarm, dashboard, stream and
    # insight-rule operation, and GetMetricWidgetImage (renders server-side, reads no lab fact).
    "cloudwatch": frozenset({"GetMetricData"}),
    # Left out: AssumeRole, AssumeRoleWithSAML, AssumeRoleWithWebIdentity, AssumeRoot,
    # GetSessionToken, GetFederationToken, GetDelegatedAccessToken, GetWebIdentityToken (all
    # mint credentials or tokens), DecodeAuthorizationMessage (reads nothing of the lab).
    "sts": frozenset(
        {
            "GetAccessKeyInfo",
            "GetCallerIdentity",
        }
    ),
}


class ReadOnlyViolation(Exception):
    """A guarded client was asked for an operation that is not a reviewed read."""

    def __init__(self, service: str, operation: str) -> None:
        super().__init__(f"refused {service}:{operation} — AWS View only reads")
        self.service = service
        self.operation = operation


def is_read_operation(service: str, operation: str) -> bool:
    """True when `service:operation` is on the reviewed allow-list."""
    return operation in READ_OPERATIONS.get(service, frozenset())


def guard(client: Client) -> Client:
    """Make `client` refuse every operation outside `READ_OPERATIONS`; return the same client.

    Works for botocore and aiobotocore clients alike: the handler is synchronous, and
    aiobotocore's emitter calls it and only awaits what it returns, so the raise propagates out
    of `await client.some_call()`.
    """
    meta: Any = client.meta  # type: ignore[attr-defined]
    service = meta.service_model.service_name

    def refuse_writes(model: Any, **_: Any) -> None:
        if not is_read_operation(service, model.name):
            raise ReadOnlyViolation(service, model.name)

    # provide-client-params is the first event of every operation call (and of presigning):
    # it fires before parameters are validated or serialised, the endpoint is resolved,
    # credentials are loaded, the request is signed or anything is sent. Registered first, so no
    # other handler sees a refused call. The client's emitter is its own copy of the session's,
    # so this guards this client only.
    meta.events.register_first("provide-client-params", refuse_writes, unique_id=_HANDLER_ID)
    return client
