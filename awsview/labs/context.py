"""What a learner's shell has: clients, the account, and the identifiers it looks up."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import cached_property

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from awsview.labs.model import LabError

# Like the lab's loops: poll the service until the thing is done, never forever.
POLL_SECONDS = 0.2
EXECUTION_TIMEOUT = 60.0


def error_code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")


class LabContext:
    """Clients for one target, resolved as the SDK resolves it (profile, region, endpoints), and
    lookups by name. ``endpoint_url`` is the endpoint the lab's data lives on, None for AWS."""

    def __init__(
        self,
        endpoint_url: str | None,
        region: str | None,
        log: Callable[[str], None],
        profile: str | None = None,
    ):
        from awsview.aws.session import EMULATOR_CREDENTIALS, Target, resolve

        self.resolved = resolve(Target(profile=profile, region=region, endpoint_url=endpoint_url))
        self.endpoint_url = self.resolved.endpoint_url
        self.region = self.resolved.region
        self.log = log
        self._clients: dict[str, object] = {}
        self._endpoint = endpoint_url
        botocore_session = self.resolved.session
        if not self.resolved.reaches_aws and botocore_session.get_credentials() is None:
            # An emulator wants some credentials; with none configured, any will do.
            botocore_session.set_credentials(
                EMULATOR_CREDENTIALS["aws_access_key_id"],
                EMULATOR_CREDENTIALS["aws_secret_access_key"],
            )
        self._session = boto3.Session(botocore_session=botocore_session, region_name=self.region)

    def client(self, service: str):
        if service not in self._clients:
            config = Config(
                retries={"max_attempts": 4, "mode": "standard"},
                connect_timeout=5,
                read_timeout=60,
            )
            self._clients[service] = self._session.client(
                service, endpoint_url=self._endpoint, config=config
            )
        return self._clients[service]

    @cached_property
    def _identity(self) -> dict:
        return self.client("sts").get_caller_identity()

    @property
    def account(self) -> str:
        return self._identity["Account"]

    @property
    def partition(self) -> str:
        return self._identity.get("Arn", "arn:aws:").split(":")[1] or "aws"

    def arn(self, service: str, resource: str, region: bool = True) -> str:
        where = self.region if region else ""
        return f"arn:{self.partition}:{service}:{where}:{self.account}:{resource}"

    # --- the learner's shell variables -------------------------------------------------

    def function_arn(self, name: str) -> str:
        """WORKER_ARN=$(aws lambda get-function-configuration ... --query FunctionArn)."""
        return self.client("lambda").get_function_configuration(FunctionName=name)["FunctionArn"]

    def role_arn(self, name: str) -> str:
        """ROLE_ARN from the role the learner created."""
        return self.client("iam").get_role(RoleName=name)["Role"]["Arn"]

    def machine_arn(self, name: str) -> str | None:
        """MACHINE_ARN: the state machine with this name, or None."""
        pages = self.client("stepfunctions").get_paginator("list_state_machines").paginate()
        for page in pages:
            for machine in page["stateMachines"]:
                if machine["name"] == name:
                    return machine["stateMachineArn"]
        return None

    def queue_url(self, name: str) -> str | None:
        """QUEUE_URL, or None when the queue does not exist."""
        try:
            return self.client("sqs").get_queue_url(QueueName=name)["QueueUrl"]
        except ClientError as error:
            if "NonExistentQueue" in error_code(error):
                return None
            raise

    def mapping_ids(self, function: str, source_arn: str) -> list[str]:
        """MAPPING_ID: event source mappings from this source to this function."""
        pages = self.client("lambda").get_paginator("list_event_source_mappings")
        found = []
        for page in pages.paginate(FunctionName=function):
            for mapping in page["EventSourceMappings"]:
                if mapping.get("EventSourceArn") == source_arn:
                    found.append(mapping["UUID"])
        return found

    def log_messages(self, group: str) -> list[str]:
        """Every line the function printed so far; [] when its log group does not exist."""
        logs = self.client("logs")
        lines: list[str] = []
        try:
            for page in logs.get_paginator("filter_log_events").paginate(logGroupName=group):
                for event in page["events"]:
                    lines.extend(event["message"].splitlines())
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                return []
            raise
        return lines

    # --- waiting, bounded ---------------------------------------------------------------

    def wait_until(self, done: Callable[[], object], timeout: float, what: str | Callable[[], str]):
        """Poll done() until it returns something truthy; LabError after timeout seconds.

        what says what did not happen; a callable is asked only then, to tell the last state.
        """
        deadline = time.monotonic() + timeout
        while True:
            result = done()
            if result:
                return result
            if time.monotonic() >= deadline:
                message = what() if callable(what) else what
                raise LabError(f"{message} after {timeout:.0f} s")
            time.sleep(POLL_SECONDS)

    def wait_execution(self, arn: str, timeout: float = EXECUTION_TIMEOUT) -> dict:
        """The lab's loop: describe-execution until the status is no longer RUNNING."""
        sfn = self.client("stepfunctions")
        name = arn.rsplit(":", 1)[-1]

        def finished():
            execution = sfn.describe_execution(executionArn=arn)
            return execution if execution["status"] != "RUNNING" else None

        execution = self.wait_until(
            finished, timeout, f"execution {name} is still RUNNING; inspect it before continuing"
        )
        detail = execution.get("output") or execution.get("error") or ""
        self.log(f"execution {name}: {execution['status']} {_compact(detail)}".rstrip())
        return execution


def _compact(text: str) -> str:
    try:
        return json.dumps(json.loads(text), separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError):
        return text
