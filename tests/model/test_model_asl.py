"""ASL parsing: ev04's real definition, nested states, JSONata, and malformed input."""

from __future__ import annotations

import json

import pytest

from awsview.model.asl import (
    Catcher,
    ChoiceRule,
    DefinitionError,
    Retrier,
    parse_definition,
)

# workflow.json of ev04 (003_a4b8d46e88e87d5f.txt) after jq put the worker name in.
EV04_DEFINITION = """{
  "StartAt": "CheckQuantity",
  "States": {
    "CheckQuantity": {
      "Type": "Choice",
      "Choices": [
        {
          "Variable": "$.quantity",
          "NumericGreaterThan": 0,
          "Next": "StoreOrder"
        }
      ],
      "Default": "Rejected"
    },
    "StoreOrder": {
      "Type": "Task",
      "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {
        "FunctionName": "labex-ev04-worker",
        "Payload.$": "$"
      },
      "ResultSelector": {
        "result.$": "$.Payload"
      },
      "ResultPath": "$.saved",
      "Retry": [
        {
          "ErrorEquals": [
            "TransientOrderError"
          ],
          "IntervalSeconds": 1,
          "BackoffRate": 2,
          "MaxAttempts": 2
        }
      ],
      "Catch": [
        {
          "ErrorEquals": [
            "InvalidOrder"
          ],
          "Next": "Rejected",
          "ResultPath": "$.failure"
        }
      ],
      "Next": "ReadSummary"
    },
    "ReadSummary": {
      "Type": "Task",
      "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {
        "FunctionName": "labex-ev04-worker",
        "Payload": {
          "stage": "summary",
          "id.$": "$.saved.result.id"
        }
      },
      "OutputPath": "$.Payload",
      "End": true
    },
    "Rejected": {
      "Type": "Fail",
      "Error": "OrderRejected",
      "Cause": "Order could not be completed"
    }
  }
}"""


@pytest.fixture
def ev04():
    return parse_definition(EV04_DEFINITION)


def test_ev04_states_in_order(ev04):
    assert ev04.start_at == "CheckQuantity"
    assert [(s.name, s.type) for s in ev04.states] == [
        ("CheckQuantity", "Choice"),
        ("StoreOrder", "Task"),
        ("ReadSummary", "Task"),
        ("Rejected", "Fail"),
    ]
    assert ev04.comment is None and ev04.query_language == "JSONPath"


def test_ev04_store_order_task(ev04):
    store = ev04.state("StoreOrder")
    assert store.resource == "arn:aws:states:::lambda:invoke"
    assert store.function == "labex-ev04-worker"
    assert store.next == "ReadSummary" and not store.end
    assert store.result_path == "$.saved"
    assert json.loads(store.result_selector) == {"result.$": "$.Payload"}
    assert json.loads(store.parameters) == {"FunctionName": "labex-ev04-worker", "Payload.$": "$"}
    assert store.retry == (Retrier(("TransientOrderError",), 1, 2, 2),)
    assert store.catch == (Catcher(("InvalidOrder",), "Rejected", "$.failure"),)


def test_ev04_other_states(ev04):
    read = ev04.state("ReadSummary")
    assert read.end and read.next is None and read.output_path == "$.Payload"
    assert read.retry == () and read.catch == ()
    rejected = ev04.state("Rejected")
    assert (rejected.error, rejected.cause) == ("OrderRejected", "Order could not be completed")
    check = ev04.state("CheckQuantity")
    assert check.default == "Rejected"
    assert check.choices == (
        ChoiceRule("$.quantity", "NumericGreaterThan", 0, "StoreOrder", "$.quantity > 0"),
    )
    assert ev04.state("Nope") is None


def test_ev04_retry_catch_summary(ev04):
    assert ev04.retry_catch_summary() == (
        "StoreOrder: Retry TransientOrderError every 1s ×2, max 2"
        " · Catch InvalidOrder → Rejected ($.failure)",
    )


def test_ev04_retry_delays(ev04):
    retrier = ev04.state("StoreOrder").retry[0]
    assert retrier.delays() == (1, 2)


def test_definition_is_hashable_snapshot(ev04):
    assert hash(ev04) == hash(parse_definition(EV04_DEFINITION))
    with pytest.raises(AttributeError):
        ev04.start_at = "x"  # type: ignore[misc]


def test_retrier_defaults_and_cap():
    definition = parse_definition(
        json.dumps(
            {
                "StartAt": "T",
                "States": {
                    "T": {
                        "Type": "Task",
                        "Resource": "arn:aws:lambda:us-east-1:123456789012:function:w",
                        "End": True,
                        "Retry": [
                            {"ErrorEquals": ["States.ALL"]},
                            {
                                "ErrorEquals": ["A", "B"],
                                "IntervalSeconds": 3,
                                "BackoffRate": 1.5,
                                "MaxAttempts": 5,
                                "MaxDelaySeconds": 6,
                                "JitterStrategy": "FULL",
                            },
                            {"ErrorEquals": ["C"], "MaxAttempts": 0},
                        ],
                    }
                },
            }
        )
    )
    task = definition.state("T")
    assert task.function == "arn:aws:lambda:us-east-1:123456789012:function:w"
    default, capped, never = task.retry
    assert default == Retrier(("States.ALL",), 1, 2.0, 3, None, None)
    assert default.delays() == (1, 2, 4)
    assert capped.delays() == (3, 4.5, 6, 6, 6)
    assert never.delays() == ()
    huge = Retrier(("X",), 1, 1e10, 99_999_999)
    assert len(huge.delays()) == 100 and huge.delays()[-1] == float("inf")
    assert definition.retry_catch_summary() == (
        "T: Retry States.ALL every 1s ×2, max 3 · Retry A, B every 3s ×1.5, max 5, cap 6s,"
        " jitter FULL · Retry C every 1s ×2, max 0",
    )


def test_choice_combinators_and_type_tests():
    choices = [
        {
            "And": [
                {"Variable": "$.a", "StringEquals": "x"},
                {"Not": {"Variable": "$.b", "IsPresent": True}},
            ],
            "Next": "One",
        },
        {
            "Or": [
                {"Variable": "$.n", "NumericLessThanEqualsPath": "$.limit"},
                {"Variable": "$.ok", "BooleanEquals": False},
            ],
            "Next": "Two",
        },
        {"Variable": "$.name", "StringMatches": "log-*.txt", "Next": "Three"},
        {"Variable": "$.x", "IsNull": False, "Next": "Four"},
        {"Variable": "$.y", "Mystery": 1, "Next": "Five"},
    ]
    definition = parse_definition(
        json.dumps({"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": choices}}})
    )
    rules = definition.state("C").choices
    assert [r.operator for r in rules] == ["And", "Or", "StringMatches", "IsNull", "?"]
    assert [r.next for r in rules] == ["One", "Two", "Three", "Four", "Five"]
    assert rules[0].text == '($.a == "x" and not $.b is present)'
    assert rules[0].value == rules[0].text and rules[0].variable is None
    assert rules[1].text == "($.n <= $.limit or $.ok == false)"
    assert rules[2].text == '$.name matches "log-*.txt"'
    assert rules[3].text == "$.x is not null"
    assert rules[4].text == "$.y (unknown test)"


def test_parallel_and_map_list_nested_states():
    definition = parse_definition(
        json.dumps(
            {
                "StartAt": "P",
                "States": {
                    "P": {
                        "Type": "Parallel",
                        "Next": "M",
                        "Branches": [
                            {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}},
                            {
                                "StartAt": "B",
                                "States": {
                                    "B": {
                                        "Type": "Task",
                                        "Resource": "arn:aws:states:::lambda:invoke",
                                        "Parameters": {"FunctionName.$": "$.fn"},
                                        "End": True,
                                        "Retry": [{"ErrorEquals": ["X"]}],
                                    }
                                },
                            },
                        ],
                    },
                    "M": {
                        "Type": "Map",
                        "End": True,
                        "ItemProcessor": {
                            "ProcessorConfig": {"Mode": "INLINE"},
                            "StartAt": "I",
                            "States": {"I": {"Type": "Succeed"}},
                        },
                    },
                    "OldMap": {
                        "Type": "Map",
                        "End": True,
                        "Iterator": {
                            "StartAt": "J",
                            "States": {"J": {"Type": "Pass", "End": True}},
                        },
                    },
                },
            }
        )
    )
    assert [s.name for s in definition.states] == ["P", "M", "OldMap"]
    assert [(s.name, s.parent) for s in definition.all_states()] == [
        ("P", None),
        ("A", "P"),
        ("B", "P"),
        ("M", None),
        ("I", "M"),
        ("OldMap", None),
        ("J", "OldMap"),
    ]
    assert definition.state("B").function is None  # named at run time only
    assert definition.retry_catch_summary() == ("B: Retry X every 1s ×2, max 3",)


def test_jsonata_definition():
    definition = parse_definition(
        json.dumps(
            {
                "QueryLanguage": "JSONata",
                "Comment": "jsonata",
                "StartAt": "Check",
                "States": {
                    "Check": {
                        "Type": "Choice",
                        "Default": "No",
                        "Choices": [
                            {"Condition": "{% $states.input.quantity > 0 %}", "Next": "Store"}
                        ],
                    },
                    "Store": {
                        "Type": "Task",
                        "Resource": "arn:aws:states:::lambda:invoke",
                        "Arguments": {"FunctionName": "w", "Payload": "{% $states.input %}"},
                        "Output": "{% $states.result.Payload %}",
                        "Assign": {"x": 1},
                        "Catch": [
                            {
                                "ErrorEquals": ["States.ALL"],
                                "Next": "No",
                                "Output": "{% $states.errorOutput %}",
                            }
                        ],
                        "End": True,
                    },
                    "No": {"Type": "Fail", "Error": "{% 'Rejected' %}"},
                },
            }
        )
    )
    assert definition.query_language == "JSONata" and definition.comment == "jsonata"
    store = definition.state("Store")
    assert store.function == "w" and store.query_language == "JSONata"
    assert json.loads(store.output) == "{% $states.result.Payload %}"
    assert definition.state("Check").choices[0] == ChoiceRule(
        None,
        "Condition",
        "{% $states.input.quantity > 0 %}",
        "Store",
        "{% $states.input.quantity > 0 %}",
    )
    assert definition.retry_catch_summary() == ("Store: Catch States.ALL → No",)


def test_unknown_state_type_and_weird_names_are_kept():
    definition = parse_definition(
        json.dumps(
            {
                "StartAt": "[/bold]",
                "States": {
                    "[/bold]": {"Type": "FutureType", "Whatever": {"x": 1}},
                    "ünïcode ✓": {"Type": "Wait", "Seconds": 1, "End": True},
                },
            }
        )
    )
    assert [(s.name, s.type) for s in definition.states] == [
        ("[/bold]", "FutureType"),
        ("ünïcode ✓", "Wait"),
    ]


def test_bytes_input():
    assert parse_definition(EV04_DEFINITION.encode()).start_at == "CheckQuantity"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "not valid JSON"),
        ("{", "not valid JSON"),
        ("[1, 2]", "definition must be a JSON object"),
        ('"x"', "definition must be a JSON object"),
        ("{}", "definition.StartAt must be a state name"),
        ('{"StartAt": 3, "States": {}}', "StartAt must be a state name"),
        ('{"StartAt": "A"}', "definition.States must be an object of states"),
        ('{"StartAt": "A", "States": []}', "States must be an object"),
        ('{"StartAt": "A", "States": {"A": 1}}', "definition.States.A must be a JSON object"),
        ('{"StartAt": "A", "States": {"A": {}}}', "definition.States.A.Type must be a string"),
        (
            '{"StartAt": "A", "States": {"A": {"Type": "Task", "Retry": {}}}}',
            "A.Retry must be a list",
        ),
        (
            '{"StartAt": "A", "States": {"A": {"Type": "Task", "Retry": [1]}}}',
            "A.Retry[0] must be a JSON object",
        ),
        (
            '{"StartAt": "A", "States": {"A": {"Type": "Task", "Retry": [{"ErrorEquals": "X"}]}}}',
            "A.Retry[0].ErrorEquals must be a list",
        ),
        (
            '{"StartAt": "A", "States": {"A": {"Type": "Task", "Retry": '
            '[{"ErrorEquals": ["X"], "MaxAttempts": "2"}]}}}',
            "MaxAttempts must be int",
        ),
        (
            '{"StartAt": "A", "States": {"A": {"Type": "Task", "Retry": '
            '[{"ErrorEquals": ["X"], "IntervalSeconds": true}]}}}',
            "IntervalSeconds must be",
        ),
        ('{"StartAt": "A", "States": {"A": {"Type": "Task", "Next": 5}}}', "A.Next must be str"),
        (
            '{"StartAt": "A", "States": {"A": {"Type": "Choice", "Choices": [{"And": 1}]}}}',
            "Choices[0].And must be a list",
        ),
        (
            '{"StartAt": "A", "States": {"A": {"Type": "Parallel", "Branches": [{}]}}}',
            "A.Branches[0].StartAt",
        ),
    ],
)
def test_malformed_definitions_raise_definition_error(text, fragment):
    with pytest.raises(DefinitionError) as caught:
        parse_definition(text)
    assert fragment in caught.value.message


def test_non_text_and_deep_input_raise_definition_error():
    with pytest.raises(DefinitionError):
        parse_definition(None)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError):
        parse_definition("[" * 100_000 + "]" * 100_000)
    branch = {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}
    for _ in range(40):
        branch = {
            "StartAt": "P",
            "States": {"P": {"Type": "Parallel", "End": True, "Branches": [branch]}},
        }
    with pytest.raises(DefinitionError, match="nested deeper"):
        parse_definition(json.dumps(branch))


def test_wait_states_say_how_long_they_wait():
    states = {
        "S": {"Type": "Wait", "Seconds": 10, "Next": "T"},
        "T": {"Type": "Wait", "Timestamp": "2026-03-14T01:59:00Z", "Next": "SP"},
        "SP": {"Type": "Wait", "SecondsPath": "$.wait", "Next": "TP"},
        "TP": {"Type": "Wait", "TimestampPath": "$.until", "Next": "J"},
        "J": {"Type": "Wait", "Seconds": "{% $states.input.wait %}", "Next": "N"},
        "N": {"Type": "Wait", "End": True},
    }
    definition = parse_definition(json.dumps({"StartAt": "S", "States": states}))
    assert [s.wait for s in definition.states] == [
        "10 s",
        "until 2026-03-14T01:59:00Z",
        "seconds from $.wait",
        "until $.until",
        "seconds: {% $states.input.wait %}",
        None,
    ]
