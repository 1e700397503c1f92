"""Freezing volatile text for deterministic screenshots."""

from awsview.freeze import Freezer
from awsview.render import Panel, Row


def test_ids_clocks_ages_and_durations_are_frozen_consistently():
    freezer = Freezer()
    first = freezer.text("19:04:05 SQS message 3f2a9c1e-1111-2222-3333-444455556666 took 1.2 s, 0.4 s ago")
    again = freezer.text("3F2A9C1E-1111-2222-3333-444455556666 at 19:04:05 and 19:04:07, stale 12 s ago")
    assert first == "12:00:00 SQS message id-0001 took 1 s, just now"
    assert again == "id-0001 at 12:00:00 and 12:00:01, stale just now"


def test_panels_keep_their_shape_and_code_hashes_get_names():
    panel = Panel("functions", "Lambda functions", "0.3 s ago", "ok", ("FUNCTION", "CODE"),
                  (Row("arn", ("labex-q05-worker", "fB5QwUDsgvOl")),), "none")
    frozen = Freezer().panel(panel)
    assert frozen.freshness == "just now"
    assert frozen.rows[0].cells == ("labex-q05-worker", "sha-1")
    assert frozen.rows[0].key == "arn"


def test_ordinary_words_stay():
    assert Freezer().text("Retry TransientOrderError every 1s ×2, max 2") == "Retry TransientOrderError every 1s ×2, max 2"
