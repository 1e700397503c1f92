"""ev05: keep workflow retries from repeating a business effect (seed 000, Japanese)."""

from __future__ import annotations

from awsview.labs.context import LabContext
from awsview.labs.model import Lab, Step
from awsview.labs.provision import deploy_code, worker_source
from awsview.labs.workflow import OrderWorkflow

ORDERS = OrderWorkflow("labex-ev05-")


def provide(ctx: LabContext) -> None:
    """The fresh VM: the *unprotected* worker, its role, the three tables, reference item."""
    ORDERS.provide(ctx, worker_source("ev05_initial.py"))


def deploy(ctx: LabContext) -> None:
    """The protected handler printed in the lab, zipped as app.py at the archive root."""
    deploy_code(ctx, ORDERS.worker, worker_source("ev05_protected.py"))


def workflow(ctx: LabContext) -> None:
    ORDERS.authorize(ctx)
    ORDERS.create_machine(ctx)


def executions(ctx: LabContext) -> None:
    """A failure after the write, the same order again, and an independent order."""
    protected = '{"id":"protected-order","quantity":4,"mode":"after-write"}'
    ORDERS.execute(ctx, "after-write-order", protected)
    ORDERS.execute(ctx, "repeated-order", protected)
    ORDERS.execute(ctx, "different-order", '{"id":"different-order","quantity":1,"mode":"normal"}')


def cleanup(ctx: LabContext) -> None:
    ORDERS.cleanup(ctx, ["protected-order", "different-order"])


LAB = Lab(
    name="ev05",
    title="Keep workflow retries from repeating a business effect",
    seed="000_e6f04f0cbe250192.txt",
    prefix="labex-ev05-",
    provide=provide,
    steps=(
        Step("deploy", "Protect the business write with a stable key", deploy),
        Step("workflow", "Connect a scoped workflow with bounded retries", workflow),
        Step("executions", "One business write through retries and re-runs", executions),
        Step("cleanup", "Remove workflow resources and synthetic results", cleanup),
    ),
)
