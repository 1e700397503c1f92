"""The order workflow shared by ev04 and ev05: worker, workflow role, state machine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files

from botocore.exceptions import ClientError

from awsview.labs import provision
from awsview.labs.context import LabContext, error_code
from awsview.labs.model import LabError

STATES_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "states.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ],
}


def workflow_template() -> str:
    """workflow-template.json exactly as the lab's here-document writes it."""
    return files("awsview.labs").joinpath("workflow-template.json").read_text(encoding="utf-8")


def workflow_definition(worker: str) -> str:
    """workflow.json: what `jq --arg worker ... .FunctionName=$worker` makes of the template."""
    definition = json.loads(workflow_template())
    definition["States"]["StoreOrder"]["Parameters"]["FunctionName"] = worker
    definition["States"]["ReadSummary"]["Parameters"]["FunctionName"] = worker
    return json.dumps(definition, indent=2)


def invoke_policy(worker_arn: str) -> dict:
    """workflow-invoke.json: lambda:InvokeFunction on exactly this worker."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": worker_arn}
        ],
    }


@dataclass(frozen=True)
class OrderWorkflow:
    """The names one lab uses, from its prefix (labex-ev04-, labex-ev05-)."""

    prefix: str

    @property
    def worker(self) -> str:
        return f"{self.prefix}worker"

    @property
    def worker_role(self) -> str:
        return f"{self.prefix}worker-role"

    @property
    def orders(self) -> str:
        return f"{self.prefix}orders"

    @property
    def attempts(self) -> str:
        return f"{self.prefix}attempts"

    @property
    def reference(self) -> str:
        return f"{self.prefix}reference"

    @property
    def workflow_role(self) -> str:
        return f"{self.prefix}workflow-role"

    @property
    def machine(self) -> str:
        return f"{self.prefix}orders"

    @property
    def log_group(self) -> str:
        return f"/aws/lambda/{self.worker}"

    # --- provided before the learner starts ---------------------------------------------

    def provide(self, ctx: LabContext, source: str) -> None:
        """Tables, reference item, the worker's own role and the worker itself."""
        for table in (self.orders, self.attempts, self.reference):
            provision.ensure_table(ctx, table)
        provision.ensure_item(ctx, self.reference, provision.REFERENCE_ITEM)
        tables = [ctx.arn("dynamodb", f"table/{t}") for t in (self.orders, self.attempts)]
        policy = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
                    "Resource": tables,
                },
                *provision.log_statement(ctx, self.worker),
            ],
        }
        role_arn = provision.ensure_role(
            ctx, self.worker_role, provision.LAMBDA_TRUST, {"OrdersAndAttempts": policy}
        )
        environment = {"ORDERS_TABLE": self.orders, "ATTEMPTS_TABLE": self.attempts}
        provision.ensure_function(ctx, self.worker, role_arn, source, environment)

    # --- learner steps -------------------------------------------------------------------

    def authorize(self, ctx: LabContext) -> None:
        """create-role with the states trust, put-role-policy InvokeWorker on the worker ARN."""
        worker_arn = ctx.function_arn(self.worker)
        ctx.log(f"WORKER_ARN={worker_arn}")
        iam = ctx.client("iam")
        try:
            role_arn = iam.create_role(
                RoleName=self.workflow_role,
                AssumeRolePolicyDocument=json.dumps(STATES_TRUST, indent=2),
            )["Role"]["Arn"]
            ctx.log(f"ROLE_ARN={role_arn}")
        except ClientError as error:
            if error_code(error) != "EntityAlreadyExists":
                raise
            ctx.log(f"role {self.workflow_role} exists, reused")
        self.put_invoke_policy(ctx, worker_arn)

    def put_invoke_policy(self, ctx: LabContext, worker_arn: str | None = None) -> None:
        worker_arn = worker_arn or ctx.function_arn(self.worker)
        ctx.client("iam").put_role_policy(
            RoleName=self.workflow_role,
            PolicyName="InvokeWorker",
            PolicyDocument=json.dumps(invoke_policy(worker_arn), indent=2),
        )
        ctx.log(f"policy InvokeWorker put on {self.workflow_role}")

    def delete_invoke_policy(self, ctx: LabContext) -> None:
        ctx.client("iam").delete_role_policy(RoleName=self.workflow_role, PolicyName="InvokeWorker")
        ctx.log(f"policy InvokeWorker deleted from {self.workflow_role}")

    def create_machine(self, ctx: LabContext) -> str:
        """create-state-machine --type STANDARD with workflow.json; returns MACHINE_ARN."""
        role_arn = ctx.role_arn(self.workflow_role)
        sfn = ctx.client("stepfunctions")

        def create():
            try:
                return sfn.create_state_machine(
                    name=self.machine,
                    type="STANDARD",
                    roleArn=role_arn,
                    definition=workflow_definition(self.worker),
                )["stateMachineArn"]
            except ClientError as error:
                # On real AWS a new role takes a few seconds before states can assume it.
                if error_code(error) == "AccessDeniedException" and "assume" in str(error):
                    return None
                if error_code(error) == "StateMachineAlreadyExists":
                    ctx.log(f"state machine {self.machine} exists, reused")
                    return ctx.machine_arn(self.machine)
                raise

        arn = ctx.wait_until(create, 30, f"state machine {self.machine} could not be created")
        ctx.log(f"MACHINE_ARN={arn}")
        return arn

    def execute(self, ctx: LabContext, name: str, payload: str) -> dict:
        """start-execution --name NAME --input PAYLOAD, then the lab's wait loop."""
        machine_arn = self.require_machine(ctx)
        arn = ctx.client("stepfunctions").start_execution(
            stateMachineArn=machine_arn, name=name, input=payload
        )["executionArn"]
        ctx.log(f"execution {name} started with {payload}")
        return ctx.wait_execution(arn)

    def require_machine(self, ctx: LabContext) -> str:
        arn = ctx.machine_arn(self.machine)
        if arn is None:
            raise LabError(f"state machine {self.machine} does not exist; run the workflow step")
        return arn

    def cleanup(self, ctx: LabContext, order_ids: list[str]) -> None:
        """Machine, InvokeWorker, workflow role, the lab's items and the worker log group."""
        iam = ctx.client("iam")
        dynamodb = ctx.client("dynamodb")
        machine_arn = ctx.machine_arn(self.machine)
        if machine_arn:
            ctx.client("stepfunctions").delete_state_machine(stateMachineArn=machine_arn)
            ctx.log(f"deleted state machine {self.machine}")
        else:
            ctx.log(f"state machine {self.machine} already gone")
        provision.delete_quietly(
            ctx,
            "policy InvokeWorker",
            lambda: iam.delete_role_policy(RoleName=self.workflow_role, PolicyName="InvokeWorker"),
            "NoSuchEntity",
        )
        provision.delete_quietly(
            ctx,
            f"role {self.workflow_role}",
            lambda: iam.delete_role(RoleName=self.workflow_role),
            "NoSuchEntity",
        )
        for order_id in order_ids:
            for table in (self.orders, self.attempts):
                dynamodb.delete_item(TableName=table, Key={"id": {"S": order_id}})
                ctx.log(f"deleted item {order_id} from {table}")
        logs = ctx.client("logs")
        provision.delete_quietly(
            ctx,
            f"log group {self.log_group}",
            lambda: logs.delete_log_group(logGroupName=self.log_group),
            "ResourceNotFoundException",
        )
