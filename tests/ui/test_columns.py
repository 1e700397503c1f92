"""How a table too wide for its panel is fitted: what is said once, left out, or cut."""

from __future__ import annotations

from awsview.core.render import DECISION_COLUMNS
from awsview.ui.viewer.cells import MIN_WIDTH, plan_columns

LABELS = DECISION_COLUMNS
REJECTED = "Rejected: ConditionalCheckFailedException"
ROWS = [
    (
        "19:29:47",
        "labex-q05-orders",
        "dedup-order",
        "PutItem",
        "attribute_not_exists(id)",
        "Accepted",
        "create",
        "none → id=dedup-order, quantity=4",
        "SQS message 49f22150 → labex-q05-worker 1a2b3c4d",
    ),
    (
        "19:29:48",
        "labex-q05-orders",
        "dedup-order",
        "PutItem",
        "attribute_not_exists(id)",
        REJECTED,
        "duplicate",
        "unchanged",
        "SQS message 831d5791 → labex-q05-worker 5e6f7a8b",
    ),
    (
        "19:29:49",
        "labex-q05-orders",
        "dedup-order",
        "DeleteItem",
        "none",
        "Accepted",
        "delete",
        "id=dedup-order, quantity=4 → none",
        "API call",
    ),
]


def shown(available: int) -> dict[str, int | None]:
    plan = plan_columns(LABELS, ROWS, available)
    return {LABELS[i]: limit for i, limit in zip(plan.shown, plan.limits)}


def test_everything_whole_when_it_fits():
    plan = plan_columns(LABELS, ROWS, 400)
    assert plan.shown == tuple(range(len(LABELS))) and set(plan.limits) == {None}


def test_a_half_terminal_pane_leaves_a_column_out_rather_than_cut_the_time_to_nothing():
    """At 95 cells (a 200-column terminal split in two) the decisions used to show `19:2…`,
    `DeleteIt…` and `attribut…`; now the rightmost spare column that does not fit is left out and
    the rest are whole."""
    assert shown(95) == dict.fromkeys(("TIME", "KEY", "OPERATION", "OUTCOME", "KIND"))
    caption = plan_columns(LABELS, ROWS, 95).caption
    assert caption.startswith("TABLE labex-q05-orders · not shown: CONDITION, BEFORE → AFTER, BY")


def test_no_column_is_cut_below_a_readable_width():
    for available in range(40, 200):
        plan = plan_columns(LABELS, ROWS, available)
        assert all(limit is None or limit >= MIN_WIDTH for limit in plan.limits), available
        # the outcome and the key are never the ones to go
        assert {"KEY", "OUTCOME"} <= {LABELS[i] for i in plan.shown}, available
        assert plan_columns(LABELS, ROWS, available).limits[
            plan.shown.index(LABELS.index("OUTCOME"))
        ] in (None, len(REJECTED))
