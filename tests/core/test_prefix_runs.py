"""A view by --prefix alone (no lab profile) is split into runs by the lab rules, and shows only
what is named by its prefix: another lab's write decisions and verdicts on the same endpoint, kept
in the viewer's store, stay out; a lab found on the endpoint does not replace the prefix given."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.emulator import RunningEmulator

pytestmark = pytest.mark.timeout(240)

ONE_WRITE = "1 write · 0 duplicates · 0 overwrites ✓"


def orders(emulator: RunningEmulator, table: str, key: str = "o-1") -> None:
    """A table and one conditional put, as a lab built with the AWS CLI does."""
    ddb = emulator.client("dynamodb")
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.put_item(
        TableName=table, Item={"id": {"S": key}}, ConditionExpression="attribute_not_exists(id)"
    )


def section(out: str, title: str) -> str:
    return out.split(f"== {title}")[1].split("\n== ")[0]


def dump(awsview, emulator: RunningEmulator, state: Path, *extra: str) -> str:
    done = awsview(
        "dump",
        "--endpoint-url",
        emulator.endpoint_url,
        *extra,
        env={"XDG_STATE_HOME": str(state), "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_prefix_only_lab_played_again_after_a_restart_is_a_new_run(
    spawn_emulator, awsview, tmp_path
):
    emulator = spawn_emulator(tmp_path / "emulator")
    state = tmp_path / "state"
    try:
        orders(emulator, "labex-x-orders")
        first = dump(awsview, emulator, state, "--prefix", "labex-x-")
        assert ONE_WRITE in section(first, "Idempotency per business key"), first
        emulator.restart()  # a fresh VM image on the same endpoint: the journal survives
        orders(emulator, "labex-x-orders")
        second = dump(awsview, emulator, state, "--prefix", "labex-x-")
        verdicts = section(second, "Idempotency per business key")
        assert ONE_WRITE in verdicts and "ALARM" not in verdicts, second
        assert "run 2 since" in verdicts and "the emulator restarted" in verdicts
        every = dump(awsview, emulator, state, "--prefix", "labex-x-", "--all-runs")
        assert section(every, "Idempotency per business key").count(ONE_WRITE) == 2, every
    finally:
        emulator.stop()


def test_prefix_keeps_another_labs_decisions_and_verdicts_out(spawn_emulator, awsview, tmp_path):
    emulator = spawn_emulator(tmp_path / "emulator")
    state = tmp_path / "state"
    try:
        orders(emulator, "labex-y-orders", "y-1")
        other = dump(awsview, emulator, state, "--prefix", "labex-y-")  # kept in the store
        assert "y-1" in section(other, "Write decisions"), other
        orders(emulator, "labex-x-orders", "x-1")
        mine = dump(awsview, emulator, state, "--prefix", "labex-x-")
        for title in ("Write decisions", "Idempotency per business key"):
            shown = section(mine, title)
            assert "x-1" in shown and "labex-y-" not in shown and "y-1" not in shown, mine
        # A built-in lab's resources here do not replace the prefix the user gave.
        orders(emulator, "labex-q05-orders", "q-1")
        still = dump(awsview, emulator, state, "--prefix", "labex-x-")
        assert still.splitlines()[0].endswith("resources named labex-x-*"), still
        assert "q-1" not in still
        both = awsview(
            "dump", "--lab", "q05", "--prefix", "labex-x-", "--endpoint-url", emulator.endpoint_url
        )
        assert both.returncode == 2 and both.stdout == ""
        assert both.stderr.strip().endswith(
            "--prefix labex-x- does not go with --lab q05, whose resources are named "
            "labex-q05-*: give one or the other"
        ), both.stderr
    finally:
        emulator.stop()
