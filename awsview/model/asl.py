"""Step Functions definitions (Amazon States Language) as immutable, displayable data.

`parse_definition` accepts what `describe_state_machine` returns and never fails with anything
but `DefinitionError`. It is lenient about what AWS would reject (unknown state types, missing
Next) because a viewer shows what is there; it is strict only about shapes it cannot read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MAX_LISTED_DELAYS = 100  # MaxAttempts may be 99999999; nobody reads that many waits
MAX_NESTING = 32  # Parallel/Map depth; deeper input is treated as malformed, not recursed into

_LAMBDA_ARN = re.compile(r"^arn:aws[\w-]*:lambda:[^:]*:[^:]*:function:.+$")

_COMPARISON_SYMBOLS = {
    "Equals": "==",
    "GreaterThan": ">",
    "GreaterThanEquals": ">=",
    "LessThan": "<",
    "LessThanEquals": "<=",
    "Matches": "matches",
}
_TYPE_TESTS = ("IsNull", "IsPresent", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp")
_COMPARISON_OPERATORS = frozenset(
    f"{kind}{comparison}{suffix}"
    for kind in ("String", "Numeric", "Boolean", "Timestamp")
    for comparison in _COMPARISON_SYMBOLS
    for suffix in ("", "Path")
    if comparison != "Matches" or (kind == "String" and suffix == "")
) | frozenset(_TYPE_TESTS)


class DefinitionError(ValueError):
    """The definition is not JSON or not shaped like ASL; `message` is one human line."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Retrier:
    """One entry of a state's Retry list, with the AWS defaults filled in."""

    error_equals: tuple[str, ...]
    interval_seconds: float = 1
    backoff_rate: float = 2.0
    max_attempts: int = 3
    max_delay_seconds: float | None = None
    jitter_strategy: str | None = None

    def delay(self, retry: int) -> float:
        """Expected wait in seconds before retry number `retry` (1-based), before any jitter."""
        try:
            wait = self.interval_seconds * self.backoff_rate ** (retry - 1)
        except OverflowError:
            wait = float("inf")
        if self.max_delay_seconds is not None:
            wait = min(wait, self.max_delay_seconds)
        return wait

    def delays(self) -> tuple[float, ...]:
        """The expected wait before each retry (MaxAttempts counts retries), at most 100 listed."""
        return tuple(self.delay(n) for n in range(1, min(self.max_attempts, MAX_LISTED_DELAYS) + 1))

    def describe(self) -> str:
        """E.g. "Retry TransientOrderError every 1s ×2, max 2"."""
        text = (
            f"Retry {', '.join(self.error_equals)} every {_number(self.interval_seconds)}s"
            f" ×{_number(self.backoff_rate)}, max {self.max_attempts}"
        )
        if self.max_delay_seconds is not None:
            text += f", cap {_number(self.max_delay_seconds)}s"
        if self.jitter_strategy and self.jitter_strategy != "NONE":
            text += f", jitter {self.jitter_strategy}"
        return text


@dataclass(frozen=True)
class Catcher:
    """One entry of a state's Catch list."""

    error_equals: tuple[str, ...]
    next: str | None
    result_path: str | None = None

    def describe(self) -> str:
        """E.g. "Catch InvalidOrder → Rejected ($.failure)"."""
        text = f"Catch {', '.join(self.error_equals)} → {self.next or '?'}"
        if self.result_path is not None:
            text += f" ({self.result_path})"
        return text


@dataclass(frozen=True)
class ChoiceRule:
    """One Choice rule. And/Or/Not keep their whole test, readable, in `value` and `text`.

    JSONata rules have operator "Condition" and the `{% ... %}` expression as value.
    """

    variable: str | None
    operator: str
    value: Any
    next: str | None
    text: str


@dataclass(frozen=True)
class State:
    """One state. Fields a state type does not have are None or empty."""

    name: str
    type: str
    next: str | None = None
    end: bool = False
    comment: str | None = None
    resource: str | None = None
    function: str | None = None
    parameters: str | None = None  # Parameters (JSONPath) or Arguments (JSONata), compact JSON
    retry: tuple[Retrier, ...] = ()
    catch: tuple[Catcher, ...] = ()
    choices: tuple[ChoiceRule, ...] = ()
    default: str | None = None
    error: str | None = None
    cause: str | None = None
    input_path: str | None = None
    result_path: str | None = None
    result_selector: str | None = None  # compact JSON
    output_path: str | None = None
    output: str | None = None  # JSONata Output, compact JSON
    query_language: str = "JSONPath"
    branches: tuple[Definition, ...] = ()  # Parallel branches, or a Map's item processor
    parent: str | None = None  # the Parallel/Map state this one runs inside
    wait: str | None = None  # a Wait state's time, readable: "10 s", "until $.expiry"

    def retry_catch_text(self) -> str | None:
        """Its Retry and Catch in one line, or None when it has neither."""
        parts = [r.describe() for r in self.retry] + [c.describe() for c in self.catch]
        return f"{self.name}: {' · '.join(parts)}" if parts else None


@dataclass(frozen=True)
class Definition:
    """A parsed state machine definition; `states` in the order the JSON lists them."""

    start_at: str
    states: tuple[State, ...]
    comment: str | None = None
    query_language: str = "JSONPath"

    def state(self, name: str) -> State | None:
        """The state with this name, searched in nested branches too."""
        return next((s for s in self.all_states() if s.name == name), None)

    def all_states(self) -> Iterator[State]:
        """Every state, each Parallel/Map followed by the states nested under it."""
        for state in self.states:
            yield state
            for branch in state.branches:
                yield from branch.all_states()

    def retry_catch_summary(self) -> tuple[str, ...]:
        """One human line per state that has Retry or Catch."""
        return tuple(t for t in (s.retry_catch_text() for s in self.all_states()) if t)


def parse_definition(text: str | bytes) -> Definition:
    """Parse a definition's JSON text; raise DefinitionError if it is unreadable."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise DefinitionError(f"definition must be JSON text, not {type(text).__name__}")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise DefinitionError(f"definition is not valid JSON: {error}") from None
    return _machine(document, "definition", None, "JSONPath", 0)


def _machine(
    document: Any, where: str, parent: str | None, language: str, depth: int
) -> Definition:
    if depth > MAX_NESTING:
        raise DefinitionError(f"{where}: nested deeper than {MAX_NESTING} levels")
    _require(document, dict, where, "a JSON object")
    language = _optional(document, "QueryLanguage", str, where) or language
    start_at = document.get("StartAt")
    _require(start_at, str, f"{where}.StartAt", "a state name")
    states = document.get("States")
    _require(states, dict, f"{where}.States", "an object of states")
    parsed = tuple(
        _state(name, body, f"{where}.States.{name}", parent, language, depth)
        for name, body in states.items()
    )
    return Definition(
        start_at=start_at,
        states=parsed,
        comment=_optional(document, "Comment", str, where),
        query_language=language,
    )


def _state(
    name: str, body: Any, where: str, parent: str | None, language: str, depth: int
) -> State:
    _require(body, dict, where, "a JSON object")
    kind = body.get("Type")
    _require(kind, str, f"{where}.Type", "a string")
    language = _optional(body, "QueryLanguage", str, where) or language
    resource = _optional(body, "Resource", str, where)
    parameters = body.get("Parameters", body.get("Arguments"))
    return State(
        name=name,
        type=kind,
        next=_optional(body, "Next", str, where),
        end=_optional(body, "End", bool, where) or False,
        comment=_optional(body, "Comment", str, where),
        resource=resource,
        function=_function(resource, parameters),
        parameters=_compact(parameters),
        retry=tuple(
            _retrier(r, f"{where}.Retry[{i}]") for i, r in enumerate(_list(body, "Retry", where))
        ),
        catch=tuple(
            _catcher(c, f"{where}.Catch[{i}]") for i, c in enumerate(_list(body, "Catch", where))
        ),
        choices=tuple(
            _choice(c, f"{where}.Choices[{i}]", top=True)
            for i, c in enumerate(_list(body, "Choices", where))
        ),
        default=_optional(body, "Default", str, where),
        error=_text(body.get("Error", body.get("ErrorPath"))),
        cause=_text(body.get("Cause", body.get("CausePath"))),
        input_path=_text(body.get("InputPath")),
        result_path=_text(body.get("ResultPath")),
        result_selector=_compact(body.get("ResultSelector")),
        output_path=_text(body.get("OutputPath")),
        output=_compact(body.get("Output")),
        query_language=language,
        branches=_branches(name, body, where, language, depth),
        parent=parent,
        wait=_wait(body) if kind == "Wait" else None,
    )


def _wait(body: dict) -> str | None:
    """Seconds, SecondsPath, Timestamp or TimestampPath, as one line; JSONata as written."""
    for key, text in (
        ("Seconds", "{} s"),
        ("SecondsPath", "seconds from {}"),
        ("Timestamp", "until {}"),
        ("TimestampPath", "until {}"),
    ):
        value = body.get(key)
        if value is None or isinstance(value, bool):
            continue
        if key == "Seconds" and isinstance(value, str):  # a JSONata expression
            text = "seconds: {}"
        return text.format(value if isinstance(value, (str, int, float)) else _compact(value))
    return None


def _branches(
    name: str, body: dict, where: str, language: str, depth: int
) -> tuple[Definition, ...]:
    found = []
    for i, branch in enumerate(_list(body, "Branches", where)):
        found.append(_machine(branch, f"{where}.Branches[{i}]", name, language, depth + 1))
    for key in ("ItemProcessor", "Iterator"):
        if key in body:
            found.append(_machine(body[key], f"{where}.{key}", name, language, depth + 1))
    return tuple(found)


def _function(resource: str | None, parameters: Any) -> str | None:
    """The Lambda function a Task invokes, when the definition names it literally."""
    if resource and _LAMBDA_ARN.match(resource):
        return resource
    if resource and resource.startswith("arn:") and ":states:::lambda:invoke" in resource:
        if isinstance(parameters, dict) and isinstance(parameters.get("FunctionName"), str):
            return parameters["FunctionName"]
    return None


def _retrier(body: Any, where: str) -> Retrier:
    _require(body, dict, where, "a JSON object")

    def given(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        value = _optional(body, key, kind, where)
        return default if value is None else value

    return Retrier(
        error_equals=_errors(body, where),
        interval_seconds=given("IntervalSeconds", (int, float), 1),
        backoff_rate=float(given("BackoffRate", (int, float), 2.0)),
        max_attempts=given("MaxAttempts", int, 3),
        max_delay_seconds=_optional(body, "MaxDelaySeconds", (int, float), where),
        jitter_strategy=_optional(body, "JitterStrategy", str, where),
    )


def _catcher(body: Any, where: str) -> Catcher:
    _require(body, dict, where, "a JSON object")
    return Catcher(
        error_equals=_errors(body, where),
        next=_optional(body, "Next", str, where),
        result_path=_text(body.get("ResultPath")),
    )


def _errors(body: dict, where: str) -> tuple[str, ...]:
    errors = body.get("ErrorEquals", [])
    if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
        raise DefinitionError(f"{where}.ErrorEquals must be a list of error names")
    return tuple(errors)


def _choice(body: Any, where: str, top: bool = False) -> ChoiceRule:
    _require(body, dict, where, "a JSON object")
    following = _optional(body, "Next", str, where) if top else None
    if "Condition" in body:
        condition = _text(body["Condition"]) or ""
        return ChoiceRule(None, "Condition", condition, following, condition)
    for combinator in ("And", "Or"):
        if combinator in body:
            rules = body[combinator]
            if not isinstance(rules, list):
                raise DefinitionError(f"{where}.{combinator} must be a list of rules")
            parts = [_choice(r, f"{where}.{combinator}[{i}]") for i, r in enumerate(rules)]
            text = "(" + f" {combinator.lower()} ".join(p.text for p in parts) + ")"
            return ChoiceRule(None, combinator, text, following, text)
    if "Not" in body:
        inner = _choice(body["Not"], f"{where}.Not")
        text = f"not {inner.text}"
        return ChoiceRule(None, "Not", text, following, text)
    variable = _text(body.get("Variable"))
    operator = next((key for key in body if key in _COMPARISON_OPERATORS), None)
    if operator is None:
        return ChoiceRule(variable, "?", None, following, f"{variable or '?'} (unknown test)")
    value = body[operator]
    if isinstance(value, (dict, list)):
        value = _compact(value)
    return ChoiceRule(variable, operator, value, following, _rule_text(variable, operator, value))


def _rule_text(variable: str | None, operator: str, value: Any) -> str:
    subject = variable or "?"
    if operator in _TYPE_TESTS:
        noun = operator[2:].lower()
        return f"{subject} is {'' if value else 'not '}{'present' if noun == 'present' else noun}"
    comparison = re.sub(r"^(String|Numeric|Boolean|Timestamp)", "", operator)
    if comparison.endswith("Path"):  # compares against another path, shown as written
        return f"{subject} {_COMPARISON_SYMBOLS[comparison[:-4]]} {value}"
    return f"{subject} {_COMPARISON_SYMBOLS[comparison]} {json.dumps(value, ensure_ascii=False)}"


def _require(value: Any, kind: type | tuple[type, ...], where: str, what: str) -> None:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise DefinitionError(f"{where} must be {what}")


def _optional(body: dict, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = body.get(key)
    if value is None:
        return None
    wants_bool = kind is bool
    if not isinstance(value, kind) or (isinstance(value, bool) and not wants_bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DefinitionError(f"{where}.{key} must be {names}, not {json.dumps(value)[:40]}")
    return value


def _list(body: dict, key: str, where: str) -> list:
    value = body.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise DefinitionError(f"{where}.{key} must be a list")
    return value


def _text(value: Any) -> str | None:
    """A path or name field; a JSONata expression object is shown as compact JSON."""
    if value is None or isinstance(value, str):
        return value
    return _compact(value)


def _compact(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
