"""Polled (stock moto, as on AWS), a read that got no answer is no news of the resource: a quiet
listing that failed is read again at the next paced poll, and the first one after the endpoint
answers again makes its panel fresh — it does not wait out a quiet resource's pacing (up to
LISTING_CEILING_S, IDLE_CEILING_S when the lab is idle) with its panel stale all that time."""

from __future__ import annotations

import pytest

from awsview import labspec
from awsview.aws.session import Connection, Target
from awsview.model.snapshot import Health
from awsview.model.state import LabState
from awsview.polling.pollers.functions import FunctionPoller
from awsview.polling.pollers.iam import RolePoller
from awsview.polling.pollers.stepfunctions import StateMachinePoller
from awsview.polling.quiet import PACED
from tests.support.processes import free_port

FAILED_READS = 8  # quiet reads in a row would make it wait 0.3 s × 2⁷ (up to its ceiling)


@pytest.mark.parametrize("poller_class", [FunctionPoller, RolePoller, StateMachinePoller])
async def test_a_quiet_listing_that_failed_is_read_again_at_once(poller_class, stock_moto_url):
    poller = poller_class(labspec.generic_spec("labex-"))
    model = LabState()
    paced = PACED.set(True)  # as in a scheduler's polling loop
    down = Target(endpoint_url=f"http://127.0.0.1:{free_port()}")  # nothing listens there
    try:
        async with Connection(Target(endpoint_url=stock_moto_url)) as up, Connection(down) as gone:
            model.apply(await poller.poll(up, model))
            assert model.get(poller.kind).health is Health.OK
            for failed in range(FAILED_READS):
                read = await poller.poll(gone, model)
                assert read, f"not asked again after {failed} failed reads"
                model.apply(read)
                assert model.get(poller.kind).health is Health.STALE
            read = await poller.poll(up, model)
            assert read, "not asked again once the endpoint answered"
            model.apply(read)
            assert model.get(poller.kind).health is Health.OK
    finally:
        PACED.reset(paced)
