"""q05: an idempotent SQS consumer (seed 002, Japanese).

The lab's worker hard-codes ``endpoint_url='http://127.0.0.1:5000'`` (a moto server's default
port). At deploy time that exact string is replaced by the player's endpoint when it differs;
against real AWS (no endpoint) ``endpoint_url='http://127.0.0.1:5000',`` is removed so boto3
uses its default chain. Likewise ``region_name='us-east-1'`` becomes the player's region when
that differs, so the worker writes to the table the lab created. Nothing else is changed.
"""

from __future__ import annotations

from awsview.labs import provision
from awsview.labs.context import LabContext
from awsview.labs.model import Lab, LabError, Step

WORKER = "labex-q05-worker"
WORKER_ROLE = "labex-q05-worker-role"
ORDERS = "labex-q05-orders"
REFERENCE = "labex-q05-reference"
QUEUE = "labex-q05-jobs"
LOG_GROUP = f"/aws/lambda/{WORKER}"

SEED_ENDPOINT = "http://127.0.0.1:5000"
SEED_REGION = "us-east-1"

FIRST_ORDER = '{"id":"dedup-order","quantity":4}'
OTHER_ORDER = '{"id":"other-order","quantity":1}'


def worker_for(ctx: LabContext, name: str) -> str:
    """The worker source, pointed at the endpoint and region this lab runs against."""
    source = provision.worker_source(name)
    marker = f"endpoint_url='{SEED_ENDPOINT}',"
    if marker not in source:
        raise LabError(f"worker {name} no longer names {SEED_ENDPOINT}; cannot point it elsewhere")
    if ctx.endpoint_url is None:
        source = source.replace(marker, "")
    elif ctx.endpoint_url != SEED_ENDPOINT:
        source = source.replace(SEED_ENDPOINT, ctx.endpoint_url)
    if ctx.region != SEED_REGION:
        source = source.replace(f"region_name='{SEED_REGION}'", f"region_name='{ctx.region}'")
    return source


def watch_timeout(ctx: LabContext) -> float:
    # Real AWS delivers log lines and queue counts seconds late; the emulator does not.
    return 30.0 if ctx.endpoint_url else 120.0


def provide(ctx: LabContext) -> None:
    """The fresh VM: the initial (unconditional) worker, its role, empty orders, reference."""
    for table in (ORDERS, REFERENCE):
        provision.ensure_table(ctx, table)
    provision.ensure_item(ctx, REFERENCE, provision.REFERENCE_ITEM)
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
                "Resource": ctx.arn("sqs", QUEUE),
            },
            {
                "Effect": "Allow",
                "Action": "dynamodb:PutItem",
                "Resource": ctx.arn("dynamodb", f"table/{ORDERS}"),
            },
            *provision.log_statement(ctx, WORKER),
        ],
    }
    role_arn = provision.ensure_role(
        ctx, WORKER_ROLE, provision.LAMBDA_TRUST, {"QueueAndOrders": policy}
    )
    source = worker_for(ctx, "q05_initial.py")
    provision.ensure_function(ctx, WORKER, role_arn, source, {"TABLE_NAME": ORDERS})


def connect(ctx: LabContext) -> None:
    """create-queue (VisibilityTimeout 30) and an enabled mapping with batch size 1."""
    sqs = ctx.client("sqs")
    lam = ctx.client("lambda")
    url = sqs.create_queue(QueueName=QUEUE, Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    ctx.log(f"QUEUE_URL={url}")
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    existing = ctx.mapping_ids(WORKER, arn)
    if existing:
        mapping_id = existing[0]
        ctx.log(f"mapping {mapping_id} exists, reused")
    else:
        mapping_id = lam.create_event_source_mapping(
            FunctionName=WORKER, EventSourceArn=arn, BatchSize=1, Enabled=True
        )["UUID"]
    ctx.log(f"MAPPING_ID={mapping_id}")

    def settled():
        mapping = lam.get_event_source_mapping(UUID=mapping_id)
        return mapping if mapping["State"] not in ("Creating", "Enabling") else None

    mapping = ctx.wait_until(settled, 90, f"mapping {mapping_id} is still being created")
    ctx.log(
        f"mapping {mapping['EventSourceArn'].rsplit(':', 1)[-1]} -> "
        f"{mapping['FunctionArn'].rsplit(':', 1)[-1]} batch {mapping['BatchSize']} "
        f"{mapping['State']}"
    )


def deploy(ctx: LabContext) -> None:
    """Deploy the protected worker, send the first order and watch it be consumed."""
    provision.deploy_code(ctx, WORKER, worker_for(ctx, "q05_protected.py"))
    send_and_watch(ctx, [FIRST_ORDER], ["dedup-order"])


def repeats(ctx: LabContext) -> None:
    """The same body twice more, then an independent order; watch all three consumed."""
    send_and_watch(ctx, [FIRST_ORDER, FIRST_ORDER, OTHER_ORDER], ["dedup-order", "other-order"])


def result_lines(ctx: LabContext) -> list[str]:
    """The worker's RESULT lines, as the lab's jq filter selects them."""
    return [line for line in ctx.log_messages(LOG_GROUP) if line.startswith("RESULT ")]


def send_and_watch(ctx: LabContext, bodies: list[str], order_ids: list[str]) -> None:
    """send-message each body, then wait as the learner watches AWS View: queue empty,
    one RESULT line per message, and the orders stored."""
    url = ctx.queue_url(QUEUE)
    if url is None:
        raise LabError(f"queue {QUEUE} does not exist; run the connect step")
    sqs = ctx.client("sqs")
    dynamodb = ctx.client("dynamodb")
    before = len(result_lines(ctx))
    for body in bodies:
        message_id = sqs.send_message(QueueUrl=url, MessageBody=body)["MessageId"]
        ctx.log(f"sent {body} as message {message_id}")
    seen: dict = {}

    def consumed():
        counts = sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        seen["visible"] = int(counts.get("ApproximateNumberOfMessages", 0))
        seen["in flight"] = int(counts.get("ApproximateNumberOfMessagesNotVisible", 0))
        seen["results"] = len(result_lines(ctx)) - before
        seen["missing"] = [
            order_id
            for order_id in order_ids
            if "Item"
            not in dynamodb.get_item(
                TableName=ORDERS, Key={"id": {"S": order_id}}, ConsistentRead=True
            )
        ]
        return (
            seen["visible"] == 0
            and seen["in flight"] == 0
            and seen["results"] >= len(bodies)
            and not seen["missing"]
        )

    def stuck() -> str:
        return (
            f"queue {QUEUE} not consumed: {seen.get('visible')} visible, "
            f"{seen.get('in flight')} in flight, {seen.get('results')} of {len(bodies)} "
            f"RESULT lines, orders missing {seen.get('missing')}"
        )

    ctx.wait_until(consumed, watch_timeout(ctx), stuck)
    for line in result_lines(ctx)[before:]:
        ctx.log(line)


def cleanup(ctx: LabContext) -> None:
    """Mapping first, then queue, both orders and the worker's log group."""
    lam = ctx.client("lambda")
    mappings = ctx.mapping_ids(WORKER, ctx.arn("sqs", QUEUE))
    if not mappings:
        ctx.log("mapping already gone")
    for mapping_id in mappings:
        provision.delete_quietly(
            ctx,
            f"mapping {mapping_id}",
            lambda uuid=mapping_id: lam.delete_event_source_mapping(UUID=uuid),
            "ResourceNotFoundException",
        )
    url = ctx.queue_url(QUEUE)
    if url:
        ctx.client("sqs").delete_queue(QueueUrl=url)
        ctx.log(f"deleted queue {QUEUE}")
    else:
        ctx.log(f"queue {QUEUE} already gone")
    for order_id in ("dedup-order", "other-order"):
        ctx.client("dynamodb").delete_item(TableName=ORDERS, Key={"id": {"S": order_id}})
        ctx.log(f"deleted item {order_id} from {ORDERS}")
    logs = ctx.client("logs")
    provision.delete_quietly(
        ctx,
        f"log group {LOG_GROUP}",
        lambda: logs.delete_log_group(logGroupName=LOG_GROUP),
        "ResourceNotFoundException",
    )


LAB = Lab(
    name="q05",
    title="An idempotent SQS consumer",
    seed="002_70b7cb8b13170c87.txt",
    prefix="labex-q05-",
    provide=provide,
    steps=(
        Step("connect", "Connect an empty queue to the worker", connect),
        Step("deploy", "Deploy atomic protection for the business key", deploy),
        Step("repeats", "Consume repeated jobs without repeating the write", repeats),
        Step("cleanup", "Remove the consumer connection and business results", cleanup),
    ),
)
