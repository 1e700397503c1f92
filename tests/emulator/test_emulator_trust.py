"""The emulator answers only its own clients: web pages of other sites (their Origin), pages that
rebind a DNS name to it (their Host), other machines without the token, services the labs do not
use, and template tags that would run code are all refused. The AWS CLI, boto3, Lambda code,
Step Functions and the viewer keep working, on loopback and, with the token, off it.

Emulators bound to 0.0.0.0 here are only ever reached through 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from awsview.aws.endpoints import identifies_as_emulator
from tests.support import processes
from tests.support.emulator import REGION, RunningEmulator
from tests.support.helpers import ROLE, create_table, ensure_worker_role, wait_for, zip_code

# Every test here starts the CLI or an emulator in a process of its own (tests/support/tiers.py).
pytestmark = pytest.mark.process

TOKEN = "class-token-4f9a2c71"
EVIL = "http://evil.example"
LAB_PAGE = "http://lab.example:8080"
REMOTE = (
    "--host",
    "0.0.0.0",
    "--allow-remote",
    "--cors-origin",
    LAB_PAGE,
    "--enable-service",
    "s3",
)


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningEmulator]:
    """Bound to every address with a token, as for a class; reached through loopback only."""
    running = RunningEmulator(
        state_dir=tmp_path_factory.mktemp("remote"), options=REMOTE, token=TOKEN
    ).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def with_cloudformation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningEmulator]:
    running = RunningEmulator(
        state_dir=tmp_path_factory.mktemp("cfn"), options=("--enable-service", "cloudformation")
    ).start()
    yield running
    running.stop()


def _request(
    emulator: RunningEmulator, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", emulator.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _client(emulator: RunningEmulator, service: str, key: str, host: str | None = None) -> Any:
    client = boto3.client(
        service,
        endpoint_url=emulator.endpoint_url,
        region_name=REGION,
        aws_access_key_id=key,
        aws_secret_access_key="anything",
    )
    if host is not None:  # what a page whose DNS name was rebound to 127.0.0.1 sends

        def rebind(request: Any, **_: Any) -> None:
            request.headers["Host"] = host

        client.meta.events.register("before-send", rebind)
    return client


def _tables(emulator: RunningEmulator) -> list[str]:
    return emulator.client("dynamodb").list_tables()["TableNames"]


def test_a_simple_post_from_another_site_cannot_reset_the_emulator(emulator):
    create_table(emulator.client("dynamodb"), "kept-orders")
    # A form or fetch() without preflight: text/plain, no custom header.
    status, headers, body = _request(
        emulator, "POST", "/moto-api/reset", {"Origin": EVIL, "Content-Type": "text/plain"}
    )
    assert status == 403, body
    assert b"<Code>AccessDenied</Code>" in body and b"--cors-origin" in body
    assert "access-control-allow-origin" not in headers
    status, _, _ = _request(emulator, "GET", "/_awsview/journal", {"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    assert "kept-orders" in _tables(emulator)


def test_a_preflight_from_another_site_gets_no_grant(emulator):
    status, headers, _ = _request(
        emulator,
        "OPTIONS",
        "/",
        {
            "Origin": EVIL,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,x-amz-target",
        },
    )
    assert status == 403
    assert not [h for h in headers if h.startswith("access-control-")], headers


def test_a_rebinding_host_is_refused_and_nothing_is_created(emulator):
    foreign = f"evil.example:{emulator.port}"
    iam = _client(emulator, "iam", "testing", host=foreign)
    trust = {"Version": "2012-10-17", "Statement": []}
    with pytest.raises(ClientError) as refused:
        iam.create_role(RoleName="rebound-role", AssumeRolePolicyDocument=json.dumps(trust))
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 421
    lam = _client(emulator, "lambda", "testing", host=foreign)
    with pytest.raises(ClientError) as refused:
        lam.create_function(
            FunctionName="rebound-fn",
            Runtime="python3.12",
            Role=ROLE,
            Handler="app.handler",
            Code={"ZipFile": zip_code("def handler(e, c):\n    return 1\n")},
        )
    assert refused.value.response["Error"]["Code"] == "MisdirectedRequest"
    status, _, _ = _request(emulator, "GET", "/_awsview/journal", {"Host": foreign})
    assert status == 421
    roles = [r["RoleName"] for r in emulator.client("iam").list_roles()["Roles"]]
    functions = [f["FunctionName"] for f in emulator.client("lambda").list_functions()["Functions"]]
    assert "rebound-role" not in roles and "rebound-fn" not in functions
    # Its own names, with or without a port, still work.
    for host in ("localhost", f"127.0.0.1:{emulator.port}", f"[::1]:{emulator.port}"):
        status, _, _ = _request(emulator, "GET", "/_awsview/health", {"Host": host})
        assert status == 200, host


def test_a_service_the_labs_do_not_use_says_how_to_switch_it_on(emulator):
    with pytest.raises(ClientError) as refused:
        emulator.client("cloudformation").list_stacks()
    error = refused.value.response["Error"]
    assert error["Code"] == "ServiceNotEnabled"
    assert "--enable-service cloudformation" in error["Message"]


def test_a_yaml_python_tag_in_a_template_runs_nothing(with_cloudformation, tmp_path: Path):
    marker = tmp_path / "ran"
    cfn = with_cloudformation.client("cloudformation")
    evil = f"Resources:\n  X: !!python/object/apply:os.system ['touch {marker}']\n"
    try:
        cfn.create_stack(StackName="evil", TemplateBody=evil)
    except ClientError:
        pass  # refused: what matters is that nothing ran
    # Short tags are CloudFormation's own: still understood.
    template = (
        "Resources:\n  Jobs:\n    Type: AWS::SQS::Queue\n    Properties:\n"
        "      QueueName: !Sub '${AWS::StackName}-jobs'\n"
        "Outputs:\n  Url:\n    Value: !Ref Jobs\n  Arn:\n    Value: !GetAtt Jobs.Arn\n"
    )
    cfn.create_stack(StackName="fine", TemplateBody=template)
    outputs = {
        o["OutputKey"]: o["OutputValue"]
        for o in cfn.describe_stacks(StackName="fine")["Stacks"][0]["Outputs"]
    }
    assert outputs["Url"].endswith("/fine-jobs") and outputs["Arn"].endswith(":fine-jobs")
    assert not marker.exists()


def _emulator_command(*options: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "awsview", "emulator", "--port", "0", *options],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_listening_off_loopback_needs_the_flag_and_a_token(tmp_path: Path):
    import os

    env = {k: v for k, v in os.environ.items() if k != "AWSVIEW_TOKEN"}
    state = ("--state-dir", str(tmp_path))
    for options, said in (
        (("--host", "0.0.0.0"), "--allow-remote"),
        (("--host", "0.0.0.0", "--allow-remote"), "AWSVIEW_TOKEN"),
        (("--host", "0.0.0.0", "--allow-remote", "--token", "short"), "12 characters"),
        (("--host", "0.0.0.0", "--allow-remote", "--token", "has/a/slash-in-it"), "access key"),
        (("--cors-origin", "evil"), "not an origin"),
        (("--enable-service", "nosuch"), "nosuch"),
    ):
        done = _emulator_command(*options, *state, env=env)
        assert done.returncode == 2, (options, done.stdout, done.stderr)
        assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("awsview: ") and said in done.stderr, done.stderr


def test_off_loopback_only_the_token_is_answered(remote):
    with pytest.raises(ClientError) as refused:
        _client(remote, "dynamodb", "testing").list_tables()
    assert refused.value.response["Error"]["Code"] == "UnrecognizedClientException"
    with pytest.raises(ClientError) as refused:
        _client(remote, "sts", "testing").get_caller_identity()
    assert refused.value.response["Error"]["Code"] == "InvalidClientTokenId"
    create_table(remote.client("dynamodb"), "class-orders")
    assert "class-orders" in _tables(remote)
    # Presigned URLs carry the key in the query.
    for key, expected in ((TOKEN, 200), ("testing", 403)):
        url = _client(remote, "s3", key).generate_presigned_url("list_buckets")
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        assert status == expected, key
    # The emulator's own read API: the token as a header.
    assert _request(remote, "GET", "/_awsview/journal", {})[0] == 403
    assert (
        _request(remote, "GET", "/_awsview/journal", {"X-AWSView-Token": "wrong-token-xx"})[0]
        == 403
    )
    assert _request(remote, "GET", "/_awsview/journal", {"X-AWSView-Token": TOKEN})[0] == 200
    # Who it is stays open: a lab command asks it before it treats the endpoint as an emulator.
    assert _request(remote, "GET", "/_awsview/health", {})[0] == 200
    assert identifies_as_emulator(remote.endpoint_url)


def test_off_loopback_a_page_allowed_by_cors_origin_is_granted_and_no_other(remote):
    ask = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-amz-target",
    }
    status, headers, _ = _request(remote, "OPTIONS", "/", {"Origin": LAB_PAGE, **ask})
    assert status == 200 and headers["access-control-allow-origin"] == LAB_PAGE
    status, headers, _ = _request(remote, "OPTIONS", "/", {"Origin": EVIL, **ask})
    assert status == 403 and "access-control-allow-origin" not in headers


CALLS_BACK = """
import boto3
def handler(event, context):
    return boto3.client("dynamodb").list_tables()["TableNames"]
"""


def test_off_loopback_lambda_code_and_step_functions_still_reach_the_emulator(remote):
    iam, lam, sfn = remote.client("iam"), remote.client("lambda"), remote.client("stepfunctions")
    ensure_worker_role(iam)
    create_table(remote.client("dynamodb"), "sfn-orders")
    lam.create_function(
        FunctionName="calls-back",
        Runtime="python3.12",
        Role=ROLE,
        Handler="app.handler",
        Code={"ZipFile": zip_code(CALLS_BACK)},
    )
    answer = lam.invoke(FunctionName="calls-back", Payload=b"{}")
    assert "FunctionError" not in answer, answer["Payload"].read()
    assert "sfn-orders" in json.loads(answer["Payload"].read())
    # A DynamoDB integration: the interpreter calls the emulator over HTTP.
    definition = {
        "StartAt": "Put",
        "States": {
            "Put": {
                "Type": "Task",
                "Resource": "arn:aws:states:::dynamodb:putItem",
                "Parameters": {"TableName": "sfn-orders", "Item": {"id": {"S": "from-sfn"}}},
                "End": True,
            }
        },
    }
    machine = sfn.create_state_machine(
        name="puts", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine)["executionArn"]
    status = wait_for(
        lambda: (s := sfn.describe_execution(executionArn=execution)["status"]) != "RUNNING" and s,
        timeout=60,
    )
    assert status == "SUCCEEDED", sfn.get_execution_history(executionArn=execution)["events"]
    item = remote.client("dynamodb").get_item(TableName="sfn-orders", Key={"id": {"S": "from-sfn"}})
    assert "Item" in item


def test_off_loopback_the_aws_cli_and_the_viewer_work_with_the_token(remote):
    aws = Path(sys.executable).with_name("aws")
    done = subprocess.run(
        [str(aws), "dynamodb", "list-tables"], env=remote.env, capture_output=True, text=True
    )
    assert done.returncode == 0 and "TableNames" in done.stdout, done.stderr
    wrong = {**remote.env, "AWS_ACCESS_KEY_ID": "testing"}
    done = subprocess.run(
        [str(aws), "dynamodb", "list-tables"], env=wrong, capture_output=True, text=True
    )
    assert done.returncode != 0 and "UnrecognizedClientException" in done.stderr
    done = processes.awsview(
        "dump", "--lab", "q05", "--json", env={**remote.env, "AWSVIEW_TOKEN": ""}, timeout=120
    )
    assert done.returncode == 0, done.stderr
    journal = json.loads(done.stdout)["snapshots"]["journal"]
    assert journal["error"] is None and journal["data"]["journal_id"], journal
