"""The state machine graph, pure: a corpus of real-world definitions drawn within the width (and
against golden files at 60 columns), hostile names kept inert, malformed definitions and
histories fuzzed, and the text grid's width invariants.

Golden files live in tests/golden/graphs/; `AWSVIEW_UPDATE_GOLDEN=1` rewrites them (review the
diff before committing).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len, get_character_cell_size

from awsview.core.graph import draw, text
from awsview.core.stateruns import run_of
from awsview.core.textgrid import Canvas, cells, clean, cut, wrap
from awsview.model.asl import DefinitionError, parse_definition
from awsview.model.history import parse_history
from tests.support.examples import examples

CORPUS = sorted((Path(__file__).parents[1] / "corpus" / "asl").glob("*.json"))
GOLDEN = Path(__file__).parents[1] / "golden" / "graphs"
WIDTHS = (16, 24, 30, 40, 60, 100)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def golden(name: str, actual: str) -> None:
    """Compare with tests/golden/graphs/<name>.txt, or write it when asked to."""
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("AWSVIEW_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual + "\n", encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run with AWSVIEW_UPDATE_GOLDEN=1 and review it"
    assert actual + "\n" == path.read_text(encoding="utf-8")


def assert_fits(lines, width: int) -> None:
    for line in lines:
        assert cells(line.text) <= width, (width, line.text)
        assert cell_len(line.text) <= width, (width, line.text)  # as the terminal will count
        assert not CONTROL.search(line.text)
        for span in line.spans:
            assert 0 <= span.start < span.end <= len(line.text)


def test_the_corpus_is_big_enough_and_covers_the_state_types():
    assert len(CORPUS) >= 10
    types, features = set(), set()
    for path in CORPUS:
        raw = path.read_text()
        definition = parse_definition(raw)
        types |= {s.type for s in definition.all_states()}
        features |= {
            f
            for f in (
                "ItemProcessor",
                '"And"',
                '"Or"',
                '"Not"',
                "JSONata",
                "Catch",
                "Retry",
                "SecondsPath",
                "TimestampPath",
            )
            if f in raw
        }
    assert {"Task", "Choice", "Parallel", "Map", "Wait", "Pass", "Fail", "Succeed"} <= types
    assert len(features) == 9, features


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_definition_is_drawn_within_every_width(path):
    definition = parse_definition(path.read_text())
    for width in WIDTHS:
        assert_fits(draw(definition, width), width)
    drawn = text(draw(definition, 60))
    for state in definition.all_states():
        assert clean(state.name)[:8] in drawn, state.name
    golden(f"corpus-{path.stem}", drawn)


def test_loops_catches_and_unknown_targets_are_drawn_as_such():
    corpus = Path(__file__).parents[1] / "corpus" / "asl"
    loop = text(draw(parse_definition((corpus / "job-poller-loop.json").read_text()), 60))
    assert "default → Wait X Seconds ─" in loop
    assert "Wait │◀╮" in loop  # the lane climbs back into the Wait box
    odd = text(draw(parse_definition((corpus / "self-loop-and-unreachable.json").read_text()), 60))
    assert "Vanished (no such state)" in odd
    assert "not reachable from StartAt" in odd
    assert "→ Ready?" in odd  # the Choice that loops on itself


@pytest.mark.parametrize(
    "name",
    [
        "[/bold]",
        "[link=http://evil]x[/link]",
        "\x1b[31mred\x1b[0m",
        "\x1b]0;title\x07",
        "\x9b31m",
        "注文を保存する状態の名前がとても長い",
        "e\u0301\u200b\u202e🎉",
        "tab\there\nnewline",
        "",
    ],
)
def test_hostile_names_stay_inert_and_within_the_width(name):
    definition = json.dumps(
        {
            "StartAt": name,
            "States": {
                name: {
                    "Type": "Task",
                    "Resource": "arn:aws:states:::lambda:invoke",
                    "Parameters": {"FunctionName": name},
                    "Next": "Done",
                    "Retry": [{"ErrorEquals": [name]}],
                    "Catch": [{"ErrorEquals": [name], "Next": name}],
                },
                "Done": {
                    "Type": "Choice",
                    "Choices": [{"Variable": f"$.{name}", "StringEquals": name, "Next": name}],
                    "Default": f"{name}-missing",
                },
            },
        }
    )
    parsed = parse_definition(definition)
    for width in WIDTHS:
        lines = draw(parsed, width)
        assert_fits(lines, width)
        assert "\x1b" not in text(lines) and "\x9b" not in text(lines) and "\x07" not in text(lines)
    if name.startswith("["):
        assert name in text(draw(parsed, 100))  # shown as written, never taken as markup


def test_a_definition_that_cannot_be_parsed_is_a_labelled_box():
    with pytest.raises(DefinitionError) as raised:
        parse_definition('{"StartAt": 5}')
    lines = draw(None, 40, problem=raised.value.message)
    assert_fits(lines, 40)
    said = " ".join(line.text.strip("│ ") for line in lines[1:-1])
    assert said == "cannot draw: definition.StartAt must be a state name"
    for width in (1, 5, 8, 200):
        assert_fits(draw(None, width, problem="x" * 300), width)


def test_deep_nesting_and_thousands_of_states_stay_bounded():
    inner: dict = {"StartAt": "Leaf", "States": {"Leaf": {"Type": "Pass", "End": True}}}
    for depth in range(30):
        inner = {
            "StartAt": f"P{depth}",
            "States": {f"P{depth}": {"Type": "Parallel", "Branches": [inner], "End": True}},
        }
    lines = draw(parse_definition(json.dumps(inner)), 60)
    assert_fits(lines, 60)
    assert "(no room to draw" in text(lines)
    chain = {
        "StartAt": "S0",
        "States": {f"S{i}": {"Type": "Pass", "Next": f"S{i + 1}"} for i in range(2000)},
    }
    chain["States"]["S2000"] = {"Type": "Succeed"}
    lines = draw(parse_definition(json.dumps(chain)), 60)
    assert_fits(lines, 60)
    assert "more states not drawn" in text(lines)


# -- fuzz ------------------------------------------------------------------------------------------

NAMES = st.sampled_from(["A", "B", "C", "Fail", "[/x]", "注文", "\x1b[1m", "", "x" * 90])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**12),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    NAMES,
)


def _json_values(depth: int = 2):
    if depth == 0:
        return SCALARS
    return st.one_of(
        SCALARS,
        st.lists(_json_values(depth - 1), max_size=3),
        st.dictionaries(st.text(max_size=6), _json_values(depth - 1), max_size=3),
    )


RULE = st.recursive(
    st.fixed_dictionaries(
        {"Variable": st.one_of(st.just("$.x"), SCALARS)},
        optional={
            "StringEquals": SCALARS,
            "NumericGreaterThan": SCALARS,
            "IsPresent": SCALARS,
            "Condition": SCALARS,
            "Next": NAMES,
        },
    ),
    lambda inner: st.one_of(
        st.fixed_dictionaries({"And": st.lists(inner, max_size=3)}, optional={"Next": NAMES}),
        st.fixed_dictionaries({"Or": st.one_of(st.lists(inner, max_size=3), SCALARS)}),
        st.fixed_dictionaries({"Not": inner}, optional={"Next": NAMES}),
    ),
    max_leaves=6,
)
STATE = st.recursive(
    st.fixed_dictionaries(
        {
            "Type": st.sampled_from(
                ["Task", "Choice", "Pass", "Wait", "Fail", "Succeed", "Map", "Parallel", "Bogus", 7]
            )
        },
        optional={
            "Next": st.one_of(NAMES, SCALARS),
            "End": SCALARS,
            "Default": NAMES,
            "Choices": st.one_of(st.lists(RULE, max_size=4), SCALARS),
            "Retry": st.one_of(
                st.lists(
                    st.fixed_dictionaries(
                        {"ErrorEquals": st.one_of(st.lists(NAMES, max_size=2), SCALARS)},
                        optional={
                            "MaxAttempts": SCALARS,
                            "IntervalSeconds": SCALARS,
                            "BackoffRate": SCALARS,
                        },
                    ),
                    max_size=2,
                ),
                SCALARS,
            ),
            "Catch": st.lists(
                st.fixed_dictionaries(
                    {"ErrorEquals": st.lists(NAMES, max_size=2)}, optional={"Next": NAMES}
                ),
                max_size=3,
            ),
            "Seconds": SCALARS,
            "TimestampPath": SCALARS,
            "Resource": SCALARS,
            "Error": SCALARS,
            "Cause": _json_values(1),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {"Type": st.sampled_from(["Parallel", "Map"])},
        optional={
            "Branches": st.lists(
                st.fixed_dictionaries(
                    {"StartAt": NAMES, "States": st.dictionaries(NAMES, inner, max_size=3)}
                ),
                max_size=2,
            ),
            "ItemProcessor": st.fixed_dictionaries(
                {"StartAt": NAMES, "States": st.dictionaries(NAMES, inner, max_size=3)}
            ),
            "Next": NAMES,
            "End": st.booleans(),
        },
    ),
    max_leaves=8,
)
DEFINITION = st.one_of(
    st.fixed_dictionaries(
        {"StartAt": st.one_of(NAMES, SCALARS), "States": st.dictionaries(NAMES, STATE, max_size=6)}
    ),
    _json_values(3),
)


RULE_OK = st.recursive(
    st.fixed_dictionaries({"Variable": st.just("$.x"), "StringEquals": st.text(max_size=20)}),
    lambda inner: st.one_of(
        st.fixed_dictionaries({"And": st.lists(inner, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"Or": st.lists(inner, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"Not": inner}),
    ),
    max_leaves=5,
)
TARGETS = st.sampled_from(["A", "B", "C", "D", "E", "F", "G", "H", "missing", "[/x]", "注文の状態"])


def _state_ok(nested=None):
    branches = (
        {}
        if nested is None
        else {"Branches": st.lists(nested, max_size=3), "ItemProcessor": nested}
    )
    return st.fixed_dictionaries(
        {
            "Type": st.sampled_from(
                ["Task", "Choice", "Pass", "Wait", "Fail", "Succeed", "Map", "Parallel", "Bogus"]
            )
        },
        optional={
            "Next": TARGETS,
            "End": st.booleans(),
            "Default": TARGETS,
            "Choices": st.lists(st.tuples(RULE_OK, TARGETS), max_size=4).map(
                lambda pairs: [{**rule, "Next": target} for rule, target in pairs]
            ),
            "Retry": st.lists(
                st.fixed_dictionaries(
                    {"ErrorEquals": st.lists(TARGETS, max_size=2)},
                    optional={
                        "MaxAttempts": st.integers(0, 99999999),
                        "IntervalSeconds": st.integers(0, 10**9),
                        "BackoffRate": st.floats(0, 1e308),
                    },
                ),
                max_size=3,
            ),
            "Catch": st.lists(
                st.fixed_dictionaries(
                    {"ErrorEquals": st.lists(TARGETS, max_size=2)}, optional={"Next": TARGETS}
                ),
                max_size=3,
            ),
            "Seconds": st.integers(0, 10**6),
            "Resource": st.text(max_size=40),
            "Error": st.text(max_size=30),
            **branches,
        },
    )


MACHINE_OK = st.recursive(
    st.fixed_dictionaries(
        {"StartAt": TARGETS, "States": st.dictionaries(TARGETS, _state_ok(), max_size=8)}
    ),
    lambda inner: st.fixed_dictionaries(
        {"StartAt": TARGETS, "States": st.dictionaries(TARGETS, _state_ok(inner), max_size=8)}
    ),
    max_leaves=4,
)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MACHINE_OK, st.integers(1, 130))
# A counting rod digit: 1 cell in Python 3.11's Unicode tables, 2 in Rich's (Unicode 16).
@example({"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "\U0001d360"}}}, 16)
def test_any_well_typed_definition_is_drawn_within_the_width(document, width):
    definition = parse_definition(
        json.dumps(document)
    )  # names and targets are arbitrary, types right
    assert_fits(draw(definition, width), width)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DEFINITION, st.integers(1, 130))
def test_malformed_definitions_never_crash_and_stay_within_the_width(document, width):
    try:
        definition = parse_definition(json.dumps(document))
    except DefinitionError as error:
        lines = draw(None, width, problem=error.message)
    else:
        lines = draw(definition, width)
    assert_fits(lines, width)


EVENT_TYPES = [
    "ExecutionStarted",
    "TaskStateEntered",
    "ChoiceStateEntered",
    "FailStateEntered",
    "TaskStateExited",
    "ChoiceStateExited",
    "TaskScheduled",
    "TaskStarted",
    "TaskFailed",
    "TaskSucceeded",
    "ExecutionFailed",
    "ExecutionSucceeded",
    "ParallelStateFailed",
    "MapStateEntered",
    "Weird",
]
EVENT = st.fixed_dictionaries(
    {
        "id": st.one_of(st.integers(0, 40), SCALARS),
        "type": st.one_of(st.sampled_from(EVENT_TYPES), SCALARS),
    },
    optional={
        "previousEventId": st.one_of(st.integers(0, 40), SCALARS),
        "stateEnteredEventDetails": st.fixed_dictionaries({}, optional={"name": NAMES}),
        "stateExitedEventDetails": st.fixed_dictionaries({}, optional={"name": NAMES}),
        "taskFailedEventDetails": st.fixed_dictionaries(
            {}, optional={"error": SCALARS, "cause": SCALARS}
        ),
    },
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EVENT, max_size=30), st.integers(16, 90))
def test_any_history_marks_the_ev04_graph_without_crashing(events, width):
    definition = parse_definition(
        (Path(__file__).parents[2] / "labs/ev04/assets/workflow-template.json").read_text()
    )
    run = run_of(parse_history(events))
    assert_fits(draw(definition, width, run), width)


# -- the text grid ---------------------------------------------------------------------------------


def test_cut_and_wrap_count_cells_not_characters():
    assert cut("注文注文", 5) == "注文…" and cells(cut("注文注文", 5)) == 5
    assert cut("abc", 3) == "abc" and cut("abcd", 3) == "ab…" and cut("abc", 0) == ""
    assert wrap("catch States.ALL → Notify Failure", 20, 3) == [
        "catch States.ALL →",
        "Notify Failure",
    ]
    assert wrap("x" * 25, 10, 3) == ["x" * 10, "x" * 10, "xxxxx"]
    assert wrap("one two three four five", 7, 2) == ["one two", "three…"]
    assert clean("a\x1b[31mb\u200b\u0301c\n d") == "abc d"


def test_every_character_kept_is_as_wide_as_rich_counts_it():
    """What the graph keeps of a name, it counts as Rich (and so Textual) lays it out: characters
    Rich's tables and Python's disagree on are dropped, or counted as Rich counts them."""
    every = (chr(point) for point in range(0x20, 0x110000))
    kept = clean("".join(ch for ch in every if unicodedata.category(ch) not in ("Cn", "Co", "Cs")))
    assert len(kept) > 100_000
    ours, theirs = map(cells, kept), map(get_character_cell_size, kept)
    assert [f"U+{ord(ch):04X}" for ch, a, b in zip(kept, ours, theirs) if a != b] == []


def test_the_canvas_keeps_every_row_exactly_as_wide_as_asked():
    canvas = Canvas(6)
    row = canvas.row()
    canvas.put(row, 0, "注文注文")  # 8 cells into 6: the last one does not fit
    canvas.set(row, 1, "│")  # over the second half of 注
    canvas.put(row, 4, "注", "name")
    canvas.set(row, 4, "x")  # over the first half of 注
    (line,) = canvas.lines()
    assert cells(line.text) <= 6 and cell_len(line.text) <= 6
    assert line.text == " │文x"


def test_an_execution_whose_history_is_not_read_yet_says_so():
    from awsview.core.graph import Drawing

    definition = parse_definition(
        (Path(__file__).parents[1] / "corpus" / "asl" / "pass.json").read_text()
    )
    drawing = Drawing("machine", definition, execution="run-1")
    assert drawing.title == "machine · run-1 (history not read yet)"
    lines = drawing.lines(40)
    assert lines[0].text == "history not read yet: no state is marked" and "✓" not in text(lines)
    assert_fits(lines, 40)
