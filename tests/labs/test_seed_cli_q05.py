"""Replays seed 002 (q05) with its own shell commands through the AWS CLI.

The commands below are copied from the lab text; only `cd /home/labex/project` is replaced by
a temporary directory and the worker's hard-coded endpoint is pointed at this emulator.
Each `aws` runs awscli's own code as a lab play runs it: forked from the player's CLI server
(awsview.labs.fastcli), which answers as the `aws` process does (tests/labs/test_fast_cli.py
compares the two); a real `aws` process costs a CPU-second each.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from awsview.labs import fastcli
from tests.support.helpers import journal, wait_for

SETUP = '{python} -m awsview lab setup q05 --endpoint-url "$AWS_ENDPOINT_URL"'

STEP_1 = """
QUEUE_URL=$(aws sqs create-queue --queue-name labex-q05-jobs --attributes VisibilityTimeout=30 --query QueueUrl --output text)
QUEUE_ARN=$(aws sqs get-queue-attributes --queue-url "$QUEUE_URL" --attribute-names QueueArn --query Attributes.QueueArn --output text)
MAPPING_ID=$(aws lambda create-event-source-mapping --function-name labex-q05-worker --event-source-arn "$QUEUE_ARN" --batch-size 1 --enabled --query UUID --output text)
sleep 1
aws lambda get-event-source-mapping --uuid "$MAPPING_ID" --query '{Source:EventSourceArn,Function:FunctionArn,Batch:BatchSize,State:State}'
"""

STEP_2 = """
QUEUE_URL=$(aws sqs get-queue-url --queue-name labex-q05-jobs --query QueueUrl --output text)
zip -q function.zip app.py
aws lambda update-function-code --function-name labex-q05-worker --zip-file fileb://function.zip --query CodeSha256 --output text
aws sqs send-message --queue-url "$QUEUE_URL" --message-body '{"id":"dedup-order","quantity":4}'
"""

STEP_2_READ = """
aws dynamodb get-item --table-name labex-q05-orders --key '{"id":{"S":"dedup-order"}}' --consistent-read --query Item
"""

STEP_3 = """
QUEUE_URL=$(aws sqs get-queue-url --queue-name labex-q05-jobs --query QueueUrl --output text)
aws sqs send-message --queue-url "$QUEUE_URL" --message-body '{"id":"dedup-order","quantity":4}'
aws sqs send-message --queue-url "$QUEUE_URL" --message-body '{"id":"dedup-order","quantity":4}'
aws sqs send-message --queue-url "$QUEUE_URL" --message-body '{"id":"other-order","quantity":1}'
"""

STEP_3_READ = """
QUEUE_URL=$(aws sqs get-queue-url --queue-name labex-q05-jobs --query QueueUrl --output text)
aws dynamodb scan --table-name labex-q05-orders --query Items > scan.json
aws logs filter-log-events --log-group-name /aws/lambda/labex-q05-worker --filter-pattern '"RESULT"' --output json | jq -r '.events[].message | split("\\n")[] | select(startswith("RESULT "))' > results.txt
aws sqs get-queue-attributes --queue-url "$QUEUE_URL" --attribute-names ApproximateNumberOfMessages ApproximateNumberOfMessagesNotVisible
"""

STEP_4 = """
QUEUE_URL=$(aws sqs get-queue-url --queue-name labex-q05-jobs --query QueueUrl --output text)
MAPPING_ID=$(aws lambda list-event-source-mappings --function-name labex-q05-worker --query 'EventSourceMappings[0].UUID' --output text)
aws lambda delete-event-source-mapping --uuid "$MAPPING_ID" --query UUID --output text
aws sqs delete-queue --queue-url "$QUEUE_URL"
aws dynamodb delete-item --table-name labex-q05-orders --key '{"id":{"S":"dedup-order"}}'
aws dynamodb delete-item --table-name labex-q05-orders --key '{"id":{"S":"other-order"}}'
aws logs delete-log-group --log-group-name /aws/lambda/labex-q05-worker
aws lambda list-event-source-mappings --function-name labex-q05-worker --query EventSourceMappings
aws sqs list-queues
aws dynamodb scan --table-name labex-q05-orders --query Items
aws dynamodb scan --table-name labex-q05-reference --query Items
"""

needs_tools = pytest.mark.skipif(
    not (shutil.which("zip") and shutil.which("jq")), reason="the seed's commands use zip and jq"
)


def _aws_on_path(env: dict[str, str], folder: Path) -> dict[str, str]:
    """The venv's `aws` (awscli from the test extra) through the player's fork server: a client
    first on PATH, as a lab play puts it."""
    real = Path(sys.executable).parent / "aws"
    assert fastcli.usable(str(real)), "the venv's aws is this interpreter's awscli"
    folder.mkdir()
    fastcli.write_client(folder / "aws", str(real))
    path = os.pathsep.join([str(folder), str(real.parent), env.get("PATH", "")])
    return {**env, "PATH": path, fastcli.SOCKET_ENV: fastcli.server().socket_path}


# AWS CLI v1 sends SQS calls in us-east-1 to queue.amazonaws.com even when AWS_ENDPOINT_URL is
# set (its legacy SQS endpoint customization); an explicit --endpoint-url wins. CLI v2 needs none.
CLI_V1_SHIM = 'aws() { command aws --endpoint-url "$AWS_ENDPOINT_URL" "$@"; }\n'


GET_QUEUE_URL = (
    "QUEUE_URL=$(aws sqs get-queue-url --queue-name labex-q05-jobs --query QueueUrl --output text)"
)


def _bash(script: str, cwd: Path, env: dict[str, str]) -> str:
    if "QUEUE_URL" in env:
        # Each step of the lab text looks the queue's URL up again. The first lookup went
        # through the CLI; the later ones take its answer from the environment: an `aws` process
        # costs seconds on a busy machine, and the same command proves nothing more.
        assert GET_QUEUE_URL in script
        script = script.replace(GET_QUEUE_URL, "")
    script = CLI_V1_SHIM + textwrap.dedent(script)
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@needs_tools
@pytest.mark.timeout(900)  # two dozen `aws` commands and a Lambda worker, on a busy machine
def test_q05_seed_commands_through_the_aws_cli(starts_processes, emulator, tmp_path):
    env = _aws_on_path(emulator.env, tmp_path / "bin")
    assert shutil.which("aws", path=env["PATH"]) == str(tmp_path / "bin" / "aws")
    _bash(SETUP.format(python=sys.executable), tmp_path, env)

    mapping = json.loads(_bash(STEP_1, tmp_path, env))
    assert mapping["Source"].endswith(":labex-q05-jobs")
    assert mapping["Function"].endswith(":function:labex-q05-worker")
    assert (mapping["Batch"], mapping["State"]) == (1, "Enabled")

    # The protected worker as the lab folder's step 2 writes it (its `cat > app.py` block).
    step2 = (Path(__file__).parents[2] / "labs" / "q05" / "step2.md").read_text()
    seed_code = step2.split("cat > app.py <<'PY'\n", 1)[1].split("\nPY\n", 1)[0] + "\n"
    (tmp_path / "app.py").write_text(
        seed_code.replace("http://127.0.0.1:5000", emulator.endpoint_url)
    )
    _bash(STEP_2, tmp_path, env)  # its queue URL lookup through the CLI
    # The waits poll through boto3 in this process: an `aws` process costs a second or more to
    # start, and each command is run through the CLI once, when its answer is ready.
    ddb = emulator.client("dynamodb")
    wait_for(
        lambda: ddb.get_item(
            TableName="labex-q05-orders", Key={"id": {"S": "dedup-order"}}, ConsistentRead=True
        ).get("Item"),
        timeout=60,
    )
    item = json.loads(_bash(STEP_2_READ, tmp_path, env) or "null")
    assert item == {
        "id": {"S": "dedup-order"},
        "quantity": {"N": "4"},
        "total_cents": {"N": "1100"},
    }

    sqs, logs = emulator.client("sqs"), emulator.client("logs")
    queue_url = sqs.get_queue_url(QueueName="labex-q05-jobs")["QueueUrl"]
    env = {**env, "QUEUE_URL": queue_url}  # the later steps' lookups: see _bash
    _bash(STEP_3, tmp_path, env)
    empty = {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}

    def settled_by_sdk() -> bool:
        events = logs.filter_log_events(
            logGroupName="/aws/lambda/labex-q05-worker", filterPattern='"RESULT"'
        )["events"]
        lines = [
            line
            for event in events
            for line in event["message"].split("\n")
            if line.startswith("RESULT ")
        ]
        counts = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=list(empty))
        return len(lines) == 4 and counts["Attributes"] == empty

    def settled():
        counts = json.loads(_bash(STEP_3_READ, tmp_path, env))["Attributes"]
        lines = (tmp_path / "results.txt").read_text().splitlines()
        return len(lines) == 4 and counts == empty and lines

    wait_for(settled_by_sdk, timeout=60)
    results = [json.loads(line[len("RESULT ") :]) for line in wait_for(settled, timeout=60)]
    assert sorted((r["id"], r["processed"], r["duplicate"]) for r in results) == [
        ("dedup-order", False, True),
        ("dedup-order", False, True),
        ("dedup-order", True, False),
        ("other-order", True, False),
    ]
    assert "receipt" not in (tmp_path / "results.txt").read_text().lower()
    scan = json.loads((tmp_path / "scan.json").read_text())
    assert sorted((i["id"]["S"], i["quantity"]["N"], i["total_cents"]["N"]) for i in scan) == [
        ("dedup-order", "4", "1100"),
        ("other-order", "1", "350"),
    ]
    decisions = [
        d for d in journal(emulator.endpoint_url)["items"] if d["table_name"] == "labex-q05-orders"
    ]
    assert sorted((d["key"]["id"]["S"], d["outcome"]) for d in decisions) == sorted(
        [
            ("dedup-order", "accepted"),
            ("dedup-order", "ConditionalCheckFailedException"),
            ("dedup-order", "ConditionalCheckFailedException"),
            ("other-order", "accepted"),
        ]
    )
    assert all(d["before"] == d["after"] for d in decisions if d["outcome"] != "accepted")

    out = _bash(STEP_4, tmp_path, env)
    assert '"keep unchanged"' in out
    assert "labex-q05-jobs" not in out.split("\n", 3)[-1]  # list-queues shows no queue URL
