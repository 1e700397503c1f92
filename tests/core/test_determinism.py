"""Freezing volatile text for deterministic screenshots."""

from awsview.core.determinism import Deterministic
from awsview.core.render import Panel, Row


def test_ids_clocks_ages_and_durations_are_frozen_consistently():
    deterministic = Deterministic()
    first = deterministic.text(
        "19:04:05 SQS message 3f2a9c1e-1111-2222-3333-444455556666 took 1.2 s, 0.4 s ago"
    )
    again = deterministic.text(
        "3F2A9C1E-1111-2222-3333-444455556666 at 19:04:05 and 19:04:07, stale 12 s ago"
    )
    assert first == "12:00:00 SQS message id-0001 took 1 s, just now"
    assert again == "id-0001 at 12:00:00 and 12:00:01, stale just now"


def test_panels_keep_their_shape_and_code_hashes_get_names():
    panel = Panel(
        "functions",
        "Lambda functions",
        "0.3 s ago",
        "ok",
        ("FUNCTION", "CODE"),
        (Row("arn", ("labex-q05-worker", "fB5QwUDsgvOl")),),
        "none",
    )
    frozen = Deterministic().panel(panel)
    assert frozen.freshness == "just now"
    assert frozen.rows[0].cells == ("labex-q05-worker", "sha-1")
    assert frozen.rows[0].key == "arn"


def test_ordinary_words_stay():
    assert (
        Deterministic().text("Retry TransientOrderError every 1s ×2, max 2")
        == "Retry TransientOrderError every 1s ×2, max 2"
    )


def test_exact_replacements_come_first():
    deterministic = Deterministic(exact={"http://127.0.0.1:41234": "http://127.0.0.1:5000"})
    assert (
        deterministic.text("http://127.0.0.1:41234 (us-east-1)")
        == "http://127.0.0.1:5000 (us-east-1)"
    )


def test_with_phases_a_time_says_its_phase_not_its_second():
    deterministic = Deterministic(phases=["10:00:00", "10:00:07"])
    assert deterministic.text("10:00:03 and 10:00:04") == "12:00:00 and 12:00:00"
    assert deterministic.text("10:00:07, 10:00:09") == "12:01:00, 12:01:00"


def test_short_ids_share_the_name_of_their_uuid():
    deterministic = Deterministic()
    assert (
        deterministic.text("END RequestId: 3f2a9c1e-1111-2222-3333-444455556666")
        == "END RequestId: id-0001"
    )
    assert (
        deterministic.text("SQS message 9d05aa11, 3f2a9c1e → labex-q05-worker 3f2a9c1e")
        == "SQS message id-0002, id-0001 → labex-q05-worker id-0001"
    )
    assert (
        deterministic.text("labex-ev04-worker request 3f2a9c1e")
        == "labex-ev04-worker request id-0001"
    )
    assert deterministic.text("quantity 12345678") == "quantity 12345678"  # only in those phrases


def test_report_figures_and_sqs_timestamps_are_frozen():
    deterministic = Deterministic()
    line = (
        "REPORT RequestId: x Duration: 107.97 ms Billed Duration: 108 ms Memory Size: 128 MB "
        "Max Memory Used: 45 MB Init Duration: 140.20 ms"
    )
    assert deterministic.text(line) == (
        "REPORT RequestId: x Duration: 0.00 ms Billed Duration: 0 ms "
        "Memory Size: 128 MB Max Memory Used: 0 MB Init Duration: 0.00 ms"
    )
    first = deterministic.text('{"SentTimestamp": "1795987747034"}')
    assert (
        first
        == deterministic.text('{"SentTimestamp": "1795987747034"}')
        != '{"SentTimestamp": "1795987747034"}'
    )


def test_code_hashes_keep_the_words_around_them():
    deterministic = Deterministic()
    assert (
        deterministic.text("protected worker deployed (new CodeSha256)")
        == "protected worker deployed (new CodeSha256)"
    )
    assert (
        deterministic.text("CodeSha256 IKVReecACqnr → 7hG+/aB12cDe") == "CodeSha256 sha-1 → sha-2"
    )
    assert (
        deterministic.text("CodeSha256 IKVReecACqnr, no other version seen yet")
        == "CodeSha256 sha-1, no other version seen yet"
    )
