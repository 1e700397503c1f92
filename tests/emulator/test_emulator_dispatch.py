"""What moto works out again for every request, the emulator works out once: a request's backend
from its host (moto lists its own package folder and matches every service's URL patterns, under
the lock every request takes), a response class's action names."""

from __future__ import annotations

import pytest
from moto import backends
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

from awsview.emulator import moto_patches

HOSTS = [
    "dynamodb.us-east-1.amazonaws.com",
    "sqs.eu-west-1.amazonaws.com",
    "states.us-east-1.amazonaws.com",
    "lambda.us-east-1.amazonaws.com",
    "logs.us-east-1.amazonaws.com",
    "iam.amazonaws.com",
    "sts.amazonaws.com",
    "dynamodb",  # a moto module's own name
    "nothing.example.com",
    None,
]


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts how often moto lists its package folder to find a backend."""
    counted: list[int] = []
    listing = backends.list_of_moto_modules

    def counting():  # type: ignore[no-untyped-def]
        counted.append(1)
        return listing()

    monkeypatch.setattr(backends, "list_of_moto_modules", counting)
    return counted


def test_each_host_is_looked_up_once_with_moto_s_answer(listings: list[int]) -> None:
    stock = DomainDispatcherApplication(create_backend_app)
    expected = [stock.get_backend_for_host(host) for host in HOSTS]
    assert expected[:7] == ["dynamodb", "sqs", "stepfunctions", "awslambda", "logs", "iam", "sts"]
    listings.clear()

    dispatcher = moto_patches.remembering_dispatcher(create_backend_app)
    for _ in range(3):
        assert [dispatcher.get_backend_for_host(host) for host in HOSTS] == expected
    looked_up = [host for host in HOSTS if host not in (None, "moto_api")]
    assert len(listings) == len(looked_up)  # the first round only


def test_the_remembered_hosts_are_bounded(listings: list[int]) -> None:
    """A request names its host (the region in its signature): a client sending a thousand
    regions gets the right answers without growing the table past its bound."""
    dispatcher = moto_patches.remembering_dispatcher(create_backend_app)
    hosts = [f"dynamodb.region-{n}.amazonaws.com" for n in range(1000)]
    assert {dispatcher.get_backend_for_host(host) for host in hosts} == {"dynamodb"}
    assert len(dispatcher._backends) == moto_patches.REMEMBERED_HOSTS
    listings.clear()
    assert dispatcher.get_backend_for_host(hosts[-1]) == "dynamodb"
    assert len(listings) == 1  # past the bound: looked up again, as moto does


def test_a_response_class_s_actions_are_listed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler

    listed: list[object] = []
    original = responses.method_names_from_class

    def listing(clazz: object) -> list[str]:
        listed.append(clazz)
        return original(clazz)

    monkeypatch.setattr(responses, "method_names_from_class", listing)  # restored after
    moto_patches._remember_action_names()
    names = [responses.method_names_from_class(DynamoHandler) for _ in range(3)]
    assert names[0] == original(DynamoHandler) and "put_item" in names[0]
    assert names == [names[0]] * 3
    assert listed == [DynamoHandler]
