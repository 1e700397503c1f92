"""`awsview iam-policy`: the viewer, run with an access key that has only the policy printed for
a lab, reads every panel of the lab; with one action taken out of it, the panel that needs that
action says `error — AccessDenied …`, never empty. Against the emulator with moto's IAM
authorization switched on (``/moto-api/reset-auth``), which checks the resource AWS checks."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request

import boto3
import pytest

from awsview import labspec
from awsview.aws.policy import CALLS, action, policy
from awsview.aws.readonly import READ_OPERATIONS
from awsview.labs import get_lab
from awsview.labs.player import LabPlayer
from tests.support import processes
from tests.support.cli import awsview_here
from tests.support.emulator import REGION, RunningEmulator

# Its fixture plays every lab up to its cleanup.
pytestmark = pytest.mark.slow

ACCOUNT = "123456789012"
LABS = ("ev04", "ev05", "q05")


def set_auth(emulator: RunningEmulator, free_calls: str) -> None:
    """moto authorizes every request after ``free_calls`` more ("inf": none)."""
    request = urllib.request.Request(
        f"{emulator.endpoint_url}/moto-api/reset-auth",
        data=free_calls.encode(),
        method="POST",
        headers={"Content-Type": "text/plain"},
    )
    urllib.request.urlopen(request, timeout=10).read()


@pytest.fixture(scope="module")
def authorized(spawn_emulator, tmp_path_factory):
    """Each lab played up to its cleanup; an admin and one viewer user per lab holding only that
    lab's policy; then IAM authorization on for every request."""
    emulator = spawn_emulator(tmp_path_factory.mktemp("iam"))
    try:
        for name in LABS:
            lab = get_lab(name)
            player = LabPlayer(lab, endpoint_url=emulator.endpoint_url, log=lambda line: None)
            player.setup()
            player.play(until=len(lab.steps) - 1)
        iam = emulator.client("iam")
        keys = {}
        for user, document in [
            (
                "admin",
                {
                    "Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
                },
            )
        ] + [(f"viewer-{name}", policy(labspec.load(name), REGION, ACCOUNT)) for name in LABS]:
            iam.create_user(UserName=user)
            iam.put_user_policy(
                UserName=user, PolicyName="awsview", PolicyDocument=json.dumps(document)
            )
            key = iam.create_access_key(UserName=user)["AccessKey"]
            keys[user] = {
                "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
            }
        set_auth(emulator, "0")
        yield emulator, keys
    finally:
        emulator.stop()


def dump(emulator: RunningEmulator, lab: str, credentials: dict[str, str]) -> dict:
    result = processes.awsview(
        "dump",
        "--lab",
        lab,
        "--json",
        "--endpoint-url",
        emulator.endpoint_url,
        timeout=120,
        env=credentials,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_every_call_of_the_policy_is_a_guarded_read():
    for service, operation in CALLS:
        assert operation in READ_OPERATIONS[service], (service, operation)


@pytest.mark.parametrize("lab", LABS)
def test_the_printed_policy_is_enough_for_every_panel(starts_processes, authorized, lab):
    emulator, keys = authorized
    printed = awsview_here("iam-policy", "--lab", lab, "--region", REGION, "--account", ACCOUNT)
    assert json.loads(printed.stdout) == policy(labspec.load(lab), REGION, ACCOUNT)
    dumped = dump(emulator, lab, keys[f"viewer-{lab}"])
    for key, snapshot in dumped["snapshots"].items():
        assert snapshot["health"] in ("ok", "absent"), (key, snapshot["freshness"])
    for panel in dumped["panels"]:
        assert panel["health"] in ("ok", "absent"), (panel["title"], panel["freshness"])
    names = {p["name"] for p in dumped["panels"]}
    assert set(labspec.load(lab).panels) <= names
    # and the key really is held to the policy: the admin can do what the viewer cannot
    with pytest.raises(Exception, match="AccessDenied"):
        emulator_client(emulator, "dynamodb", keys[f"viewer-{lab}"]).list_backups()


def emulator_client(emulator: RunningEmulator, service: str, credentials: dict[str, str]):
    return boto3.client(
        service,
        endpoint_url=emulator.endpoint_url,
        region_name=REGION,
        aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
    )


@pytest.mark.parametrize(
    "lab,taken,panel",
    [
        ("q05", "sqs:GetQueueAttributes", "queues"),
        ("q05", "dynamodb:Scan", "tables"),
        ("ev04", "states:GetExecutionHistory", "history"),
        ("ev04", "logs:FilterLogEvents", "logs"),
        ("ev05", "iam:ListRolePolicies", "roles"),
    ],
)
def test_one_action_less_and_its_panel_says_access_denied(
    starts_processes, authorized, lab, taken, panel
):
    emulator, keys = authorized
    iam = emulator_client(emulator, "iam", keys["admin"])
    user = f"viewer-{lab}"
    narrower = policy(labspec.load(lab), REGION, ACCOUNT, without=frozenset({taken}))
    iam.put_user_policy(UserName=user, PolicyName="awsview", PolicyDocument=json.dumps(narrower))
    try:
        dumped = dump(emulator, lab, keys[user])
    finally:
        iam.put_user_policy(
            UserName=user,
            PolicyName="awsview",
            PolicyDocument=json.dumps(policy(labspec.load(lab), REGION, ACCOUNT)),
        )
    denied = [p for p in dumped["panels"] if p["name"] == panel]
    assert denied, [p["name"] for p in dumped["panels"]]
    for shown in denied:
        assert shown["health"] == "error" and shown["freshness"].startswith(
            "error — AccessDenied"
        ), shown
        assert taken.split(":")[1] in shown["freshness"] or taken in shown["freshness"]
        assert shown["rows"] == []


@pytest.mark.parametrize("lab", [*LABS, "generic"])
async def test_every_call_the_viewer_makes_is_in_the_policy(authorized, lab, monkeypatch):
    from awsview.aws.session import Connection, Target
    from awsview.polling.bootstrap import detect_lab_spec, preflight
    from awsview.polling.scheduler import Scheduler

    emulator, keys = authorized
    for name, value in keys["admin"].items():
        monkeypatch.setenv(name, value)
    profile = labspec.generic_spec("labex-") if lab == "generic" else labspec.load(lab)
    async with Connection(Target(endpoint_url=emulator.endpoint_url)) as conn:
        await preflight(conn)
        await detect_lab_spec(conn, "labex-")
        scheduler = Scheduler(conn, profile)
        await scheduler.run_once()
        await scheduler.run_once()
        await scheduler.stop()
        made = set(conn.limiter.calls)
    assert made <= set(CALLS), made - set(CALLS)
    assert {action(*call) for call in made} <= {
        a for s in policy(profile, REGION, ACCOUNT)["Statement"] for a in s["Action"]
    }


def test_the_allow_list_maps_into_iam_actions():
    """Each service of the allow-list names its actions with its IAM prefix (botocore's signing
    name: `states`, not `stepfunctions`), so any read the pollers take from it can be granted.
    CloudWatch is the one service whose IAM prefix is not its signing name (`monitoring`)."""
    import botocore.session

    loader = botocore.session.get_session()
    for service, operations in READ_OPERATIONS.items():
        signing = loader.get_service_model(service).signing_name
        signing = {"monitoring": "cloudwatch"}.get(signing, signing)
        for operation in operations:
            assert action(service, operation) == f"{signing}:{operation}", (service, operation)


# Each lab plays on a worker of its own, beside the `authorized` tests: no play waits for another.
@pytest.mark.slow
@pytest.mark.parametrize(
    "lab",
    [pytest.param(lab, marks=pytest.mark.xdist_group(f"iam-policy-play-{lab}")) for lab in LABS],
)
async def test_every_operation_the_pollers_send_while_a_lab_plays_is_granted(
    emulator, lab, monkeypatch
):
    """The pollers follow the change feed while the lab plays, and the learner edits a lab role
    afterwards (a role the feed names is read again alone). Every operation a guarded client of
    the connection sends is written down as it is sent; the policy must grant each one."""
    from awsview.aws.session import Connection, Target
    from awsview.polling.scheduler import Scheduler
    from tests.polling.test_change_feed import _ready, _rows, until
    from tests.support.helpers import operations_sent

    sent = operations_sent(monkeypatch)
    profile = labspec.load(lab)
    player = LabPlayer(get_lab(lab), endpoint_url=emulator.endpoint_url, log=lambda line: None)
    iam = emulator.client("iam")
    async with Connection(Target(endpoint_url=emulator.endpoint_url, region=REGION)) as conn:
        scheduler = Scheduler(conn, profile)
        scheduler.start()
        try:
            await asyncio.to_thread(player.setup)
            await _ready(scheduler)
            await asyncio.to_thread(player.play, until=len(get_lab(lab).steps) - 1)
            roles = await until(
                lambda: [r for r in _rows(scheduler, "roles") or () if r.grants],
                timeout=60,
                what="the lab's roles",
            )
            edited = roles[0].name
            await asyncio.to_thread(
                iam.put_role_policy,
                RoleName=edited,
                PolicyName="learner-edit",
                PolicyDocument=json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}
                        ],
                    }
                ),
            )
            await until(
                lambda: any(
                    g.policy == "learner-edit"
                    for r in _rows(scheduler, "roles") or ()
                    if r.name == edited
                    for g in r.grants
                ),
                timeout=60,
                what="the edited role",
            )
        finally:
            await scheduler.stop()
    granted = {a for s in policy(profile, REGION, ACCOUNT)["Statement"] for a in s["Action"]}
    assert ("iam", "GetRole") in sent  # the role was read again alone, as the feed named it
    assert {action(*call) for call in sent} <= granted, {action(*c) for c in sent} - granted


@pytest.mark.parametrize(
    "args,message",
    [
        (["--prefix", "*"], "--prefix '*' holds *"),
        (["--prefix", "labex-*"], "holds *"),
        (["--prefix", "lab?x-"], "holds ?"),
        (["--prefix", "${aws:username}"], "holds $"),
        (["--prefix", ""], "not least privilege"),
        (["--lab", "q05", "--region", "eu-wst-1"], "unknown AWS region 'eu-wst-1'"),
        (["--prefix", "labex-", "--region", "us-eest-1"], "did you mean"),
    ],
)
def test_a_policy_that_would_reach_further_or_nowhere_is_one_line(args, message, monkeypatch):
    """A wildcard in the prefix would become a wildcard in every ARN (`table/**`), and a region
    AWS does not have would print a policy that matches nothing."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    result = awsview_here("iam-policy", *args)
    assert result.returncode == 2, result.stdout[:200]
    assert result.stdout == "" and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_literal_prefix_and_a_known_region_still_print_the_policy():
    result = awsview_here("iam-policy", "--prefix", "labex-", "--region", REGION)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert "iam:GetRole" in {a for s in document["Statement"] for a in s["Action"]}
    tables = next(s for s in document["Statement"] if s["Sid"] == "ReadTables")
    assert tables["Resource"] == f"arn:aws:dynamodb:{REGION}:*:table/labex-*"
