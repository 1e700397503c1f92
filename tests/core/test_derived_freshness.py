"""A derived panel (checkpoints, verdicts, decisions) is as fresh as the inputs it shows: a stale
snapshot it does not read leaves it fresh, and a stale one it reads is named on its border."""

from __future__ import annotations

import time

from awsview import labspec
from awsview.core.checkpoints import evaluate
from awsview.core.render import panels
from awsview.model import keys
from awsview.model.snapshot import failed, succeeded
from awsview.model.state import LabState

REFUSED = "connection refused — http://127.0.0.1:9/"


def _checkpoints(model: LabState, profile: labspec.LabSpec):
    model.apply([succeeded(None, keys.CHECKPOINTS, keys.CHECKPOINTS, evaluate(profile, model))])
    return next(p for p in panels(model, profile, time.time()) if p.name == "checkpoints")


def _ev05_model() -> LabState:
    model = LabState()
    for key in (keys.STATE_MACHINES, keys.FUNCTIONS, keys.ROLES, keys.QUEUES):
        model.apply([succeeded(None, key, key, ())])
    return model


def test_a_stale_snapshot_no_checkpoint_reads_leaves_the_checkpoints_panel_fresh():
    profile = labspec.load("ev05")
    model = _ev05_model()
    # Read once, then refused: the log group's snapshot is stale, and no ev05 check reads logs.
    group = keys.logs("/aws/lambda/labex-ev05-worker")
    model.apply([succeeded(None, keys.LOGS, group, None)])
    model.apply([failed(model.get(group), keys.LOGS, group, REFUSED)])
    shown = _checkpoints(model, profile)
    assert shown.health == "ok", shown.freshness
    assert "refused" not in shown.freshness


def test_the_checkpoints_panel_names_the_input_it_could_not_read():
    profile = labspec.load("ev05")
    model = _ev05_model()
    machines = model.get(keys.STATE_MACHINES)
    model.apply([failed(machines, keys.STATE_MACHINES, keys.STATE_MACHINES, REFUSED)])
    shown = _checkpoints(model, profile)
    assert shown.health == "stale"
    assert shown.freshness.startswith("stale "), shown.freshness
    assert f"— state machines: {REFUSED}" in shown.freshness


def test_the_decision_panels_name_the_input_they_could_not_read():
    profile = labspec.load("ev05")
    model = _ev05_model()
    listing = keys.executions("labex-ev05-orders")
    model.apply([succeeded(None, keys.EXECUTIONS, listing, ())])
    model.apply([failed(model.get(listing), keys.EXECUTIONS, listing, REFUSED)])
    shown = {p.name: p for p in panels(model, profile, time.time())}
    for name in ("verdicts", "decisions"):
        assert shown[name].health == "stale", shown[name].freshness
        assert f"— executions: {REFUSED}" in shown[name].freshness
