"""The class view opens one connection per learner: what every connection would otherwise load
for itself (the service models, the CA bundle of each client's TLS context) is loaded once."""

from __future__ import annotations

from typing import Any

from aiobotocore.session import AioSession

from awsview.aws.session import SESSION_VARS, Connection, Target
from tests.support.emulator import REGION


def _tls_context(client: Any) -> Any:
    # aiobotocore keeps one aiohttp session per proxy (None: no proxy) behind each client.
    http = client._endpoint.http_session
    return http._sessions[None].connector._ssl


async def test_connections_sharing_a_session_share_its_models_and_one_tls_context(emulator):
    session = AioSession(session_vars=SESSION_VARS)
    target = Target(region=REGION, endpoint_url=emulator.endpoint_url)
    conns = [await Connection(target, session=session).__aenter__() for _ in range(3)]
    try:
        for conn in conns:
            await conn.call("sqs", "list_queues")
            await conn.call("dynamodb", "list_tables")
        contexts = {
            id(_tls_context(await conn.client(service)))
            for conn in conns
            for service in ("sqs", "dynamodb")
        }
        assert len(contexts) == 1
        loaders = {id(conn.resolved.session.get_component("data_loader")) for conn in conns}
        assert loaders == {id(session.get_component("data_loader"))}
    finally:
        for conn in conns:
            await conn.__aexit__(None, None, None)
