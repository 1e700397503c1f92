"""CONTRIBUTING.md's "Add a panel", followed: a `caller` kind (the identity the viewer polls as)
added with a poller, a renderer and a registry entry, and nothing else touched — then polled from
the real emulator, printed by `dump`'s text, shown by the TUI and opened with Enter."""

from __future__ import annotations

import dataclasses

import pytest

from awsview import kinds, labspec
from awsview.aws.session import Connection, Target
from awsview.core import render
from awsview.core.printout import as_text
from awsview.core.render import Row, cell
from awsview.polling.base import Poller
from awsview.polling.scheduler import Scheduler
from tests.support.probe import rows, settle, view

HERE = __name__


# 1. The poller.
class CallerPoller(Poller):
    kind = "caller"

    async def poll(self, conn, model):
        return [await self.fetch(model, self.kind, lambda: conn.call("sts", "get_caller_identity"))]


# 2. The renderer (`render.panel` makes the panel and its freshness from the snapshots).
def caller(model, profile, now):
    snapshot = model.get("caller")
    identity = snapshot.data if snapshot and snapshot.data else {}
    rows = (
        [Row(identity["Arn"], (cell(identity["Account"]), cell(identity["Arn"])))]
        if identity
        else []
    )
    return [
        render.panel(
            "caller", "Caller", [snapshot] if snapshot else [], ("ACCOUNT", "ARN"), rows, now
        )
    ]


# 3. The registry entry.
CALLER = kinds.Kind(
    "caller",
    f"{HERE}:caller",
    (f"{HERE}:CallerPoller",),
    reads=("caller",),
    key_columns=frozenset({"ACCOUNT"}),
)


@pytest.fixture
def registered():
    kinds.register(CALLER)
    try:
        yield
    finally:
        kinds.unregister("caller")


def test_the_registry_names_only_what_resolves():
    for kind in kinds.KINDS.values():
        assert callable(kinds.resolve(kind.renderer)), kind.name
        if kind.finder:
            assert callable(kinds.resolve(kind.finder)), kind.name
        for path in kind.pollers:
            assert issubclass(kinds.resolve(path), Poller), path


async def test_a_new_kind_is_polled_rendered_and_shown(emulator, registered, tmp_path):
    toml = tmp_path / "hello.toml"
    toml.write_text(
        'name = "hello"\ntitle = "Hello"\nprefix = "hello-"\npanels = ["caller", "queues"]\n'
    )
    profile = labspec.load_file(toml)  # a profile may name the new kind
    assert profile.panels == ("caller", "queues")
    target = Target(endpoint_url=emulator.endpoint_url, region="us-east-1")
    async with Connection(target) as conn:
        scheduler = Scheduler(conn, profile)
        assert any(isinstance(p, CallerPoller) for p in scheduler.pollers)  # the scheduler runs it
        model = await scheduler.run_once()
        await scheduler.stop()
    account = model.data("caller")["Account"]
    (panel,) = render.render("caller", model, profile, 0.0)
    assert panel.health == "ok" and panel.rows[0].cells[0] == account
    assert "== Caller  [" in as_text(profile, model, "here", account, 0.0)  # `awsview dump`

    from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
    from awsview.ui.viewer.screens import DetailScreen

    app = AWSViewApp(
        model=model, profile=dataclasses.replace(profile), options=ViewerOptions(clock=lambda: 0.0)
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert rows(app, "caller")[0][0] == account  # the TUI shows it
        shown = view(app, "caller")
        shown.table.focus()
        await pilot.press("enter")  # details: the generic listing of the row
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.detail.title.startswith("Caller · ")
