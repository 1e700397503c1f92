"""Idempotent creation of a lab's provided resources, and worker deployment."""

from __future__ import annotations

import io
import json
import zipfile
from importlib.resources import files

from botocore.exceptions import ClientError

from awsview.labs.context import LabContext, error_code

LAMBDA_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ],
}

REFERENCE_ITEM = {"id": {"S": "reference"}, "note": {"S": "keep unchanged"}}


def worker_source(name: str) -> str:
    """The text of awsview/labs/workers/<name>."""
    return files("awsview.labs").joinpath("workers").joinpath(name).read_text(encoding="utf-8")


def zip_app(source: str) -> bytes:
    """function.zip with app.py at its root, as `zip -j function.zip app.py` makes it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        # A fixed timestamp keeps CodeSha256 the same for the same source.
        entry = zipfile.ZipInfo("app.py", date_time=(1980, 1, 1, 0, 0, 0))
        entry.external_attr = 0o644 << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(entry, source)
    return buffer.getvalue()


def ensure_table(ctx: LabContext, name: str) -> None:
    """A table keyed by id (S), on demand; an existing one is reused."""
    dynamodb = ctx.client("dynamodb")
    try:
        dynamodb.describe_table(TableName=name)
        ctx.log(f"table {name} exists, reused")
    except ClientError as error:
        if error_code(error) != "ResourceNotFoundException":
            raise
        dynamodb.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        ctx.log(f"table {name} created")

    def active():
        return dynamodb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"

    ctx.wait_until(active, 60, f"table {name} is not ACTIVE")


def ensure_item(ctx: LabContext, table: str, item: dict) -> None:
    """Put the item unless one with its id exists (then it is kept as it is)."""
    try:
        ctx.client("dynamodb").put_item(
            TableName=table, Item=item, ConditionExpression="attribute_not_exists(id)"
        )
        ctx.log(f"item {item['id']['S']} put into {table}")
    except ClientError as error:
        if error_code(error) != "ConditionalCheckFailedException":
            raise
        ctx.log(f"item {item['id']['S']} in {table} exists, kept")


def ensure_role(ctx: LabContext, name: str, trust: dict, policies: dict[str, dict]) -> str:
    """A role with this trust and inline policies; returns its ARN."""
    iam = ctx.client("iam")
    try:
        arn = iam.get_role(RoleName=name)["Role"]["Arn"]
        ctx.log(f"role {name} exists, reused")
    except ClientError as error:
        if error_code(error) != "NoSuchEntity":
            raise
        arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"][
            "Arn"
        ]
        ctx.log(f"role {name} created")
    for policy, document in policies.items():
        iam.put_role_policy(RoleName=name, PolicyName=policy, PolicyDocument=json.dumps(document))
    return arn


def log_statement(ctx: LabContext, function: str) -> list[dict]:
    """What AWSLambdaBasicExecutionRole allows, for this one function's log group."""
    return [
        {"Effect": "Allow", "Action": "logs:CreateLogGroup", "Resource": ctx.arn("logs", "*")},
        {
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": ctx.arn("logs", f"log-group:/aws/lambda/{function}:*"),
        },
    ]


def ensure_function(
    ctx: LabContext, name: str, role_arn: str, source: str, environment: dict[str, str]
) -> None:
    """A python3.12 function with handler app.handler; an existing one is left as it is."""
    lam = ctx.client("lambda")
    try:
        lam.get_function_configuration(FunctionName=name)
        ctx.log(f"function {name} exists, reused")
    except ClientError as error:
        if error_code(error) != "ResourceNotFoundException":
            raise

        def create():
            try:
                return lam.create_function(
                    FunctionName=name,
                    Runtime="python3.12",
                    Role=role_arn,
                    Handler="app.handler",
                    Code={"ZipFile": zip_app(source)},
                    Timeout=10,
                    Environment={"Variables": environment},
                )
            except ClientError as retry:
                # A new role takes a few seconds to become assumable on real AWS.
                if error_code(retry) == "InvalidParameterValueException" and "role" in str(retry):
                    return None
                raise

        ctx.wait_until(create, 30, f"function {name} could not be created with role {role_arn}")
        ctx.log(f"function {name} created")
    wait_function_ready(ctx, name)


def wait_function_ready(ctx: LabContext, name: str) -> dict:
    """Until the function is Active and its last update is no longer in progress."""
    lam = ctx.client("lambda")

    def ready():
        config = lam.get_function_configuration(FunctionName=name)
        if config.get("State", "Active") == "Pending":
            return None
        if config.get("LastUpdateStatus", "Successful") == "InProgress":
            return None
        return config

    return ctx.wait_until(ready, 60, f"function {name} is not ready")


def deploy_code(ctx: LabContext, function: str, source: str) -> str:
    """aws lambda update-function-code ... --zip-file fileb://function.zip; returns CodeSha256."""
    sha = ctx.client("lambda").update_function_code(FunctionName=function, ZipFile=zip_app(source))[
        "CodeSha256"
    ]
    wait_function_ready(ctx, function)
    ctx.log(f"function {function} updated, CodeSha256 {sha}")
    return sha


def delete_quietly(ctx: LabContext, what: str, call, *missing_codes: str) -> None:
    """Run a delete; only a not-found answer counts as already gone (errors never do)."""
    try:
        call()
        ctx.log(f"deleted {what}")
    except ClientError as error:
        if error_code(error) not in missing_codes:
            raise
        ctx.log(f"{what} already gone")
