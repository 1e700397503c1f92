"""DynamoDB items: wire ↔ plain, display, keys, diffs and JSON dumps."""

from __future__ import annotations

import base64
import json
from decimal import Decimal

import pytest

from awsview.model.items import (
    ItemDiff,
    diff_items,
    format_value,
    item_key,
    item_to_plain,
    item_to_wire,
    plain_to_json,
    to_plain,
    to_wire,
)

# q05's stored order, exactly as put_item writes it.
ORDER_WIRE = {"id": {"S": "dedup-order"}, "quantity": {"N": "4"}, "total_cents": {"N": "1100"}}
ORDER = {"id": "dedup-order", "quantity": 4, "total_cents": 1100}


def test_lab_order_item():
    plain = item_to_plain(ORDER_WIRE)
    assert plain == ORDER
    assert all(type(plain[n]) is int for n in ("quantity", "total_cents"))
    assert item_to_wire(plain) == ORDER_WIRE
    assert item_to_plain(None) is None


@pytest.mark.parametrize(
    "wire, plain",
    [
        ({"S": ""}, ""),
        ({"N": "600"}, 600),
        ({"N": "-0"}, 0),
        ({"N": "1.50"}, Decimal("1.50")),
        ({"N": "1E+2"}, 100),
        ({"N": "12345678901234567890123456789012345678"}, 12345678901234567890123456789012345678),
        ({"N": "1E+125"}, Decimal("1E+125")),
        ({"N": "0.1"}, Decimal("0.1")),
        ({"BOOL": False}, False),
        ({"NULL": True}, None),
        ({"B": b"\x00\xff"}, b"\x00\xff"),
        ({"B": "AP8="}, b"\x00\xff"),  # JSON wire text (CLI output) is base64
        ({"SS": ["b", "a"]}, frozenset({"a", "b"})),
        ({"NS": ["1", "2.5"]}, frozenset({1, Decimal("2.5")})),
        ({"BS": [b"x", "eQ=="]}, frozenset({b"x", b"y"})),
        ({"L": [{"S": "a"}, {"N": "1"}, {"NULL": True}]}, ["a", 1, None]),
        ({"M": {"a": {"M": {"b": {"L": [{"BOOL": True}]}}}}}, {"a": {"b": [True]}}),
    ],
)
def test_to_plain(wire, plain):
    assert to_plain(wire) == plain


def test_numbers_are_never_floats():
    assert not isinstance(to_plain({"N": "0.1"}), float)
    assert all(not isinstance(v, float) for v in to_plain({"NS": ["0.5", "3"]}))


@pytest.mark.parametrize(
    "weird",
    [
        {"X": "future"},
        {"N": "not a number"},
        {"N": "NaN"},
        {"N": 5},
        {"S": 5},
        {"B": "not base64!"},
        {"BOOL": "yes"},
        {"M": ["not", "a", "map"]},
        {"SS": "x"},
    ],
)
def test_unknown_or_malformed_values_are_kept_tagged(weird):
    assert to_plain(weird) == weird


def test_not_a_single_tag_is_kept():
    assert to_plain({"S": "a", "N": "1"}) == {"S": "a", "N": "1"}
    assert to_plain({}) == {}
    assert to_plain("bare") == "bare"


def test_large_nested_binary_and_weird_keys():
    big = "z" * 400_000
    wire = {
        "": {"S": "empty key"},
        "[/bold]": {"S": "[link=http://x]"},
        "ключ ✓": {"N": "7"},
        "big": {"S": big},
        "blob": {"B": bytes(range(256))},
        "tags": {"SS": ["b", "a", "[/i]"]},
        "deep": {"M": {"l": {"L": [{"M": {"n": {"N": "1.25"}}}]}}},
    }
    plain = item_to_plain(wire)
    assert plain[""] == "empty key" and plain["[/bold]"] == "[link=http://x]"
    assert plain["ключ ✓"] == 7 and plain["big"] == big
    assert plain["blob"] == bytes(range(256))
    assert plain["deep"] == {"l": [{"n": Decimal("1.25")}]}
    assert item_to_plain(item_to_wire(plain)) == plain
    dumped = json.loads(json.dumps(plain_to_json(plain)))
    assert dumped["tags"] == ["[/i]", "a", "b"]
    assert base64.b64decode(dumped["blob"]) == bytes(range(256))
    assert dumped["deep"] == {"l": [{"n": "1.25"}]} and dumped["ключ ✓"] == 7
    assert format_value(plain["big"]) == "z" * 199 + "…"
    assert format_value(plain["big"], limit=None) == big


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "null"),
        (True, "true"),
        (600, "600"),
        (Decimal("2.50"), "2.5"),
        (Decimal("1E+125"), "1" + "0" * 125),
        (Decimal("1E-7"), "0.0000001"),
        ("dedup-order", "dedup-order"),
        ("[/bold]", "[/bold]"),
        ("two\nlines\x1b[31m", "two lines"),
        (frozenset({"b", "a"}), "{a, b}"),
        (frozenset({2, Decimal("1.5")}), "{1.5, 2}"),
        (frozenset({"a", 1}), "{1, a}"),
        (["x", 1, None], "[x, 1, null]"),
        ({"id": "o", "n": {"k": True}}, "{id: o, n: {k: true}}"),
        (b"\x00\xff", "b64:AP8="),
        (bytes(18), "b64:" + "A" * 24),
        (bytes(19), "b64:" + "A" * 24 + "…"),
        (frozenset({b"b", b"a"}), "{b64:YQ==, b64:Yg==}"),
        ({"X": "future"}, "{X: future}"),
    ],
)
def test_format_value(value, text):
    assert format_value(value) == text


def test_format_value_limit():
    assert format_value("abcdef", limit=4) == "abc…"
    assert format_value("abcd", limit=4) == "abcd"


def test_item_key():
    assert item_key(ORDER, ["id"]) == ("dedup-order",)
    assert item_key(ORDER_WIRE, ("id", "quantity")) == ("dedup-order", 4)
    assert item_key({"pk": b"\x01"}, ["pk", "sk"]) == (b"\x01", None)
    assert item_key(None, ["id"]) == (None,)
    assert hash(item_key(ORDER, ["id", "total_cents"]))


def test_diff_items():
    before = {"id": "o", "quantity": 4, "total_cents": 1100, "old": True, "tags": frozenset({"a"})}
    after = {
        "id": "o",
        "quantity": 5,
        "total_cents": Decimal(1100),
        "new": None,
        "tags": frozenset({"a"}),
    }
    assert diff_items(before, after) == ItemDiff(
        added=("new",), removed=("old",), changed=(("quantity", 4, 5),)
    )
    assert diff_items(ORDER, dict(ORDER)).unchanged


def test_diff_items_with_missing_sides():
    assert diff_items(None, ORDER) == ItemDiff(added=("id", "quantity", "total_cents"))
    assert diff_items(ORDER, None) == ItemDiff(removed=("id", "quantity", "total_cents"))
    assert diff_items(None, None).unchanged


def test_diff_keeps_types_apart():
    diff = diff_items(
        {"a": True, "b": "x", "c": [1], "d": {"k": 1}},
        {"a": 1, "b": b"x", "c": [True], "d": {"k": Decimal("1.0")}},
    )
    assert [name for name, _, _ in diff.changed] == ["a", "b", "c"]


def test_plain_to_json():
    assert plain_to_json(
        {
            "n": Decimal("3"),
            "f": Decimal("0.25"),
            "s": frozenset({3, 1}),
            "t": (1, 2),
            "b": b"hi",
            "x": None,
        }
    ) == {"n": 3, "f": "0.25", "s": [1, 3], "t": [1, 2], "b": "aGk=", "x": None}


def test_to_wire_rejects_what_dynamodb_cannot_hold():
    with pytest.raises(TypeError):
        to_wire(1.5)
    with pytest.raises(TypeError):
        to_wire({1, "a"})
    assert to_wire(True) == {"BOOL": True} and to_wire(frozenset({2, 1})) == {"NS": ["1", "2"]}
