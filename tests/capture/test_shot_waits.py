"""What `awsview screenshot` waits for before it saves: every resource kind answered once, and
the derived kinds (timeline, checkpoints) computed after their inputs last moved. A kind read
last that the timeline is not derived from (the roles) must not make it wait for a timeline
that is never computed again: it used to wait out its whole timeout on every lab."""

from __future__ import annotations

from dataclasses import replace

from awsview import labspec
from awsview.capture.shot import Moves, waiting
from awsview.model import keys
from awsview.model.snapshot import succeeded
from awsview.model.state import LabState

PROFILE = labspec.load("q05")


def _read(model: LabState, key: str, data: object) -> None:
    model.apply([succeeded(model.get(key), key.split(":", 1)[0], key, data)])


def _inputs(model: LabState) -> None:
    for key in ("state_machines", "queues", "functions", "journal"):
        _read(model, key, ())
    for name in PROFILE.tables():
        _read(model, keys.table(name), ())
    for group in PROFILE.log_groups:
        _read(model, keys.logs(group), ())


def _derive(model: LabState, *derived: str) -> None:
    for key in derived:
        _read(model, key, object())


def test_the_roles_read_last_wait_for_the_checkpoints_only():
    model = LabState()
    moves = Moves(model)
    assert waiting(model, PROFILE, moves)[0] == "state_machines"
    _inputs(model)
    assert waiting(model, PROFILE, moves) == ["roles"]
    _derive(model, keys.TIMELINE, keys.CHECKPOINTS)
    _read(model, "roles", ("labex-q05-role",))
    # The checkpoints read every key (IAM wiring among them); the timeline reads none of these.
    assert waiting(model, PROFILE, moves) == [keys.CHECKPOINTS]
    _derive(model, keys.CHECKPOINTS)
    assert waiting(model, PROFILE, moves) == []


def test_a_read_that_moves_nothing_wakes_nothing_to_wait_for():
    model = LabState()
    moves = Moves(model)
    _inputs(model)
    _read(model, "roles", ())
    _derive(model, keys.TIMELINE, keys.CHECKPOINTS)
    assert waiting(model, PROFILE, moves) == []
    # The same data again, and a snapshot that only turns live (the feed came up): no move.
    table = keys.table(PROFILE.tables()[0])
    _read(model, table, ())
    model.apply([replace(model.get(table), live=True)])
    assert waiting(model, PROFILE, moves) == []
    # New rows in a table: the timeline and the checkpoints are derived from it.
    _read(model, table, ({"pk": "order-1"},))
    assert waiting(model, PROFILE, moves) == [keys.TIMELINE, keys.CHECKPOINTS]


def test_snapshots_read_before_the_watch_began_count_as_moves():
    model = LabState()
    _inputs(model)
    _read(model, "roles", ())
    moves = Moves(model)  # the first reads came before the screenshot looked
    assert waiting(model, PROFILE, moves) == [keys.TIMELINE, keys.CHECKPOINTS]
    _derive(model, keys.TIMELINE, keys.CHECKPOINTS)
    assert waiting(model, PROFILE, moves) == []
