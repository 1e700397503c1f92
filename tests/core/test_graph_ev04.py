"""ev04's state machine graph, its three executions played on the real emulator: what
`awsview dump --graph` prints (golden files at 60 columns, in tests/golden/graphs/) and what the
viewer shows on Enter over a state machine or an execution.

`AWSVIEW_UPDATE_GOLDEN=1` rewrites the golden files; review the diff before committing.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from rich.cells import cell_len
from test_graph import golden

from awsview.aws.session import Target
from awsview.labs.player import LabPlayer
from awsview.ui.viewer.app import AWSViewApp, ViewerOptions
from awsview.ui.viewer.graphview import GraphView
from awsview.ui.viewer.screens import DetailScreen
from tests.support import processes
from tests.support.probe import screen_lines, settle, view

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

EXECUTIONS = ("retry-order", "permanent-order", "denied-order")
# What each execution must say at a glance, beside the golden files.
AT_A_GLANCE = {
    "retry-order": [
        "✓ CheckQuantity",
        "✓ StoreOrder ×2",
        "✓ succeeded on attempt 2 after TransientOrderError",
        "✓ ReadSummary",
        "┗━ ◉ end",
        "· Rejected",
    ],
    "permanent-order": [
        "✓ CheckQuantity",
        "↪ StoreOrder",
        "↪ InvalidOrder caught → Rejected",
        "┣━ catch InvalidOrder → Rejected",
        "· ReadSummary",
        "✗ Rejected",
        "✗ the execution failed here",
    ],
    "denied-order": [
        "✓ CheckQuantity",
        "✗ StoreOrder",
        "✗ failed: Lambda.AWSLambdaException",
        "not authorized to invoke it: nothing ran",
        "· ReadSummary",
        "· Rejected",
    ],
}


@pytest.fixture(scope="module")
def ev04_played(emulator):
    player = LabPlayer("ev04", endpoint_url=emulator.endpoint_url, log=lambda line: None)
    player.setup()
    player.play(until="executions")
    return emulator


def dump(emulator, *args: str) -> subprocess.CompletedProcess:
    return processes.awsview(
        "dump",
        "--lab",
        "ev04",
        "--endpoint-url",
        emulator.endpoint_url,
        *args,
        timeout=60,
        env=emulator.env,
    )


def sections(output: str) -> dict[str, str]:
    """`== Graph · <title>` → the graph under it."""
    found: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        if line.startswith("== Graph · "):
            current = found.setdefault(line[len("== Graph · ") :], [])
        elif current is not None:
            current.append(line)
    return {title: "\n".join(lines).strip("\n") for title, lines in found.items()}


def test_dump_graph_draws_the_machine_and_each_execution_on_it(starts_processes, ev04_played):
    done = dump(ev04_played, "--graph")
    assert done.returncode == 0, done.stderr
    drawn = sections(done.stdout)
    assert list(drawn) == [
        "labex-ev04-orders",
        "labex-ev04-orders · denied-order (FAILED)",
        "labex-ev04-orders · permanent-order (FAILED)",
        "labex-ev04-orders · retry-order (SUCCEEDED)",
    ]
    golden("ev04-machine", drawn["labex-ev04-orders"])
    for name in EXECUTIONS:
        graph = next(g for title, g in drawn.items() if f" · {name} (" in title)
        for fact in AT_A_GLANCE[name]:
            assert fact in graph, f"{name}: {fact!r} missing in\n{graph}"
        golden(f"ev04-{name}", graph)
    assert all(cell_len(line) <= 60 for g in drawn.values() for line in g.splitlines())


def test_dump_graph_json_and_a_narrow_width(starts_processes, ev04_played):
    done = dump(ev04_played, "--graph", "--json", "--width", "40")
    assert done.returncode == 0, done.stderr
    graphs = json.loads(done.stdout)["graphs"]
    assert all(cell_len(line) <= 40 for g in graphs for line in g["lines"])
    runs = {g["execution"]: g for g in graphs if g["execution"]}
    assert runs["retry-order"]["status"] == "SUCCEEDED"
    store = {name: runs[name]["states"]["StoreOrder"] for name in EXECUTIONS}
    assert (store["retry-order"]["status"], store["retry-order"]["attempts"]) == ("succeeded", 2)
    assert store["retry-order"]["retried"] == ["TransientOrderError"]
    assert (store["permanent-order"]["status"], store["permanent-order"]["caught_to"]) == (
        "caught",
        "Rejected",
    )
    assert (store["denied-order"]["status"], store["denied-order"]["denied"]) == ("failed", True)
    assert store["denied-order"]["error"] == "Lambda.AWSLambdaException"
    assert (
        "ReadSummary" in runs["retry-order"]["states"]
        and "ReadSummary" not in runs["denied-order"]["states"]
    )
    narrow = dump(ev04_played, "--graph", "--width", "12")
    assert (
        narrow.returncode == 2
        and narrow.stderr.strip() == "awsview: --width 12: a graph needs at least 20 columns"
    )


async def until(pilot, predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what} not met within {timeout} s; screen:\n" + "\n".join(screen_lines(pilot.app))
            )
        await pilot.pause(0.1)


async def test_the_viewer_shows_the_graph_on_enter_over_a_machine_and_each_execution(ev04_played):
    target = Target(endpoint_url=ev04_played.endpoint_url, region="us-east-1")
    app = AWSViewApp(target=target, lab="ev04", options=ViewerOptions(poll_speed=0.3))
    async with app.run_test(
        size=(64, 140)
    ) as pilot:  # half a wide terminal, tall enough for the whole graph

        def histories() -> int:
            return sum(
                1 for k in (app.model.snapshots if app.model else {}) if k.startswith("history:")
            )

        await until(
            pilot,
            lambda: (
                histories() == 3
                and "executions" in app.board.views
                and len(view(app, "executions").keys) == 3
            ),
            "three executions and their histories",
        )
        machines = view(app, "state_machines")
        machines.table.focus()
        machines.table.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        graph = app.screen.query_one(GraphView)
        shown = "\n".join(screen_lines(app))
        assert "│ StoreOrder" in shown and "↻ TransientOrderError 1s ×2, max 2" in shown
        assert all(
            cell_len(line.text) <= graph.content_region.width
            for line in graph.lines(graph.content_region.width)
        )
        await pilot.press("escape")
        await settle(pilot)

        executions = view(app, "executions")
        for name in EXECUTIONS:
            executions.table.focus()
            executions.table.move_cursor(
                row=[k.rsplit(":", 1)[-1] for k in executions.keys].index(name)
            )
            await pilot.press("enter")
            await settle(pilot)
            shown = "\n".join(screen_lines(app))
            assert f"Execution {name}" in shown and "Graph of this execution" in shown
            for fact in AT_A_GLANCE[name]:
                assert fact in shown, f"{name}: {fact!r} not on screen:\n{shown}"
            await pilot.press("escape")
            await settle(pilot)
