"""A state directory that cannot be written: every write the SDK saw acknowledged has its
decision, no decision lacks its write, the terminal hears it in a line or two, reads go on, and
writes are accepted again once there is room. The disk is "full" through RLIMIT_FSIZE on the
emulator's process (its writes then fail with EFBIG), which needs neither root nor a mount."""

from __future__ import annotations

import resource
import shutil
import signal
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.support.emulator import CREDENTIALS, REGION, RunningEmulator
from tests.support.helpers import create_table, journal, wait_for

# Every test here starts the CLI or an emulator in a process of its own (tests/support/tiers.py).
pytestmark = pytest.mark.process

WRITES = 700
PAIRED = 10
LIMIT_BYTES = 256 * 1024  # room for the journal's schema and a few dozen decisions
LOG_ROOM = 30 * 1024  # the log is nearly full already: it fills up too


def _limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, not kills
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]  # kept: the test lifts the soft one
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT_BYTES, hard))


def _put(ddb, key: str) -> str:
    """One conditional write: "accepted", or the error code the SDK saw, after its retries."""
    try:
        response = ddb.put_item(
            TableName="disk-orders",
            Item={"id": {"S": key}, "note": {"S": "x" * 200}},
            ConditionExpression="attribute_not_exists(id)",
        )
    except ClientError as error:
        attempts = error.response["ResponseMetadata"].get("RetryAttempts", 0)
        return f"{error.response['Error']['Code']}/{attempts}"
    return f"accepted/{response['ResponseMetadata'].get('RetryAttempts', 0)}"


def test_full_state_dir_refuses_what_it_cannot_record_then_recovers(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "emulator.log").write_text("earlier\n" * ((LIMIT_BYTES - LOG_ROOM) // 8))
    emulator = RunningEmulator(state_dir=state, preexec=_limited).start()
    try:
        ddb = boto3.client(
            "dynamodb",
            endpoint_url=emulator.endpoint_url,
            region_name=REGION,
            # Three attempts, as the SDKs' standard mode: a retry of a write that was applied
            # and then answered 500 writes it twice.
            config=Config(max_pool_connections=16, retries={"mode": "standard", "max_attempts": 3}),
            **CREDENTIALS,
        )
        sqs = emulator.client("sqs")
        create_table(ddb, "disk-orders")
        # The first keys are written twice (the second write is refused by its condition), the
        # rest once: the write that meets the full disk is then one that changed an item.
        keys = [f"k{n // 2}" if n < PAIRED else f"k{n}" for n in range(WRITES)]
        with ThreadPoolExecutor(16) as pool:
            seen = list(pool.map(lambda key: _put(ddb, key), keys))
        outcomes = Counter(s.split("/")[0] for s in seen)
        assert outcomes["InternalServerError"] > 0, outcomes  # the disk did fill up
        assert outcomes["accepted"] > 0, outcomes
        assert all(s.endswith("/0") for s in seen), Counter(seen)  # no retry wrote twice

        # A transaction is refused whole: neither of its items is stored.
        with pytest.raises(ClientError, match="InternalServerError"):
            ddb.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": "disk-orders", "Item": {"id": {"S": f"t{n}"}}}}
                    for n in range(2)
                ]
            )

        decisions = journal(emulator.endpoint_url)["items"]
        accepted = Counter(d["key"]["id"]["S"] for d in decisions if d["outcome"] == "accepted")
        acknowledged = Counter(k for k, s in zip(keys, seen) if s.startswith("accepted/"))
        assert accepted == acknowledged  # each acknowledged write has exactly its decision
        rejected = [d for d in decisions if d["outcome"] == "ConditionalCheckFailedException"]
        assert len(rejected) == outcomes["ConditionalCheckFailedException"]
        stored = {i["id"]["S"] for i in ddb.scan(TableName="disk-orders")["Items"]}
        assert stored == set(acknowledged)  # no item without its decision: undone writes

        # Reads and SQS go on while the state directory is full.
        queue = sqs.create_queue(QueueName="disk-queue")["QueueUrl"]
        sqs.send_message(QueueUrl=queue, MessageBody="still here")
        messages = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1)["Messages"]
        assert messages[0]["Body"] == "still here"

        # Room again: writes are accepted and recorded.
        hard = resource.prlimit(emulator.process.pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(emulator.process.pid, resource.RLIMIT_FSIZE, (hard, hard))
        wait_for(lambda: _put(ddb, "after").startswith("accepted/"), timeout=30)
        after = [
            d for d in journal(emulator.endpoint_url)["items"] if d["key"]["id"]["S"] == "after"
        ]
        assert [d["outcome"] for d in after] == ["accepted"]
    finally:
        emulator.stop()
    stderr = emulator.process.stderr.read()
    assert "Logging error" not in stderr and "Traceback" not in stderr, stderr[:2000]
    lines = stderr.splitlines()
    assert 1 <= len(lines) <= 4, lines
    assert any("is full" in line and "DynamoDB writes are refused" in line for line in lines)
    assert any("emulator.log is full" in line and "dropped" in line for line in lines)
    assert "can be written again" in lines[-1] or any("written again" in x for x in lines)


def _start(state_dir: Path, *prefix: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "awsview", "emulator", "--port", "0"]
    return subprocess.run(
        [*prefix, *command, "--state-dir", str(state_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_state_dir_in_the_way_of_a_file_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "file").write_text("")
    done = _start(tmp_path / "file" / "state")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"awsview: cannot use the state directory {tmp_path / 'file' / 'state'}: it is not a "
        "directory (a file is in the way); choose another with --state-dir"
    ]


def _read_only_mount_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _read_only_mount_works(), reason="needs a private read-only mount")
def test_read_only_state_dir_is_one_line_and_exit_2(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    # A private mount namespace: the read-only mount ends with the process, nothing to clean.
    script = f'mount -t tmpfs -o ro tmpfs "{state}" && exec "$@"'
    done = _start(state, "unshare", "-m", "sh", "-c", script, "sh")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"awsview: cannot use the state directory {state}: it is read-only (Read-only file "
        "system); choose another with --state-dir"
    ]
