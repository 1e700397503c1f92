"""ev04: retry a failed step and handle permanent errors (seed 003, German)."""

from __future__ import annotations

from awsview.labs.context import LabContext
from awsview.labs.model import Lab, Step
from awsview.labs.provision import worker_source
from awsview.labs.workflow import OrderWorkflow

ORDERS = OrderWorkflow("labex-ev04-")


def provide(ctx: LabContext) -> None:
    """The fresh VM: worker, its role, orders/attempts/reference tables, reference item."""
    ORDERS.provide(ctx, worker_source("ev04_worker.py"))


def authorize(ctx: LabContext) -> None:
    ORDERS.authorize(ctx)


def workflow(ctx: LabContext) -> None:
    ORDERS.create_machine(ctx)


def executions(ctx: LabContext) -> None:
    """A transient failure, a permanent one, and a denied invocation; each waited for."""
    ORDERS.execute(ctx, "retry-order", '{"id":"retry-order","quantity":2,"mode":"flaky"}')
    permanent = '{"id":"permanent-order","quantity":2,"mode":"permanent"}'
    ORDERS.execute(ctx, "permanent-order", permanent)
    ORDERS.delete_invoke_policy(ctx)
    ORDERS.execute(ctx, "denied-order", '{"id":"denied-order","quantity":2,"mode":"flaky"}')
    ORDERS.put_invoke_policy(ctx)


def cleanup(ctx: LabContext) -> None:
    ORDERS.cleanup(ctx, ["retry-order"])


LAB = Lab(
    name="ev04",
    title="Retry a failed step and handle permanent errors",
    seed="003_a4b8d46e88e87d5f.txt",
    prefix="labex-ev04-",
    provide=provide,
    steps=(
        Step("authorize", "Authorize the workflow to invoke its worker", authorize),
        Step("workflow", "Configure bounded retries and a permanent-failure path", workflow),
        Step("executions", "Observe real Retry, Catch and permission outcomes", executions),
        Step("cleanup", "Remove workflow resources and synthetic results", cleanup),
    ),
)
