"""CloudWatch log events of the lab workers, as classified, cleaned and redacted lines.

Every string that leaves this module went through `untrusted.clean` (no terminal control sequences)
and `redact` (no receipt handles, keys, tokens or signatures). Rich markup such as `[/bold]` is
left alone on purpose: renderers pass text as `Text` objects, never as markup.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from awsview.model import untrusted

REDACTED = "‹redacted›"
MAX_LINE_BYTES = 64 * 1024

TAGGED_KINDS = ("RESULT", "EVENT", "JOB", "WORKFLOW")  # `KIND {json}` lines the workers print
RUNTIME_KINDS = ("START", "END", "REPORT")

_LINE_BREAKS = re.compile(r"\r\n|\r|\n")

_SEP = r"""(["']?\s*[:=>]\s*["']?)"""  # between a key and its value: `": "`, `=`, `>`
_SECRET_VALUE = r"""([^\s"',;}\]<]+)"""
_KEYED_SECRETS = re.compile(
    r"(?i)\b(receipt_?handle|(?:aws_)?secret_?access_?key|(?:aws_)?session_?token"
    r"|x-amz-security-token|x-amz-signature)" + _SEP + _SECRET_VALUE
)
_AUTHORIZATION = re.compile(
    r"(?i)\b(authorization" + _SEP[1:-1] + r")(AWS4-HMAC-SHA256)\s[^\"'\r\n]*"
)
_SIGNATURE = re.compile(r"(?i)\b(signature=)[0-9a-f]{16,}")
_ACCESS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")

_SECRET_KEYS = frozenset(
    {
        "receipthandle",
        "secretaccesskey",
        "awssecretaccesskey",
        "sessiontoken",
        "awssessiontoken",
        "securitytoken",
        "xamzsecuritytoken",
        "xamzsignature",
        "authorization",
    }
)

_REQUEST_ID = re.compile(r"RequestId:\s*(\S+)")
_START_VERSION = re.compile(r"Version:\s*(\S+)")
_REPORT_FIELD = re.compile(r"([A-Za-z][A-Za-z ]*?):\s*([^\t]+?)\s*(?:\t|$)")
_MEASURE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(ms|MB)?$")


@dataclass(frozen=True)
class LogLine:
    """One line of a log event.

    kind: RESULT, EVENT, JOB, WORKFLOW, START, END, REPORT, ERROR or OTHER.
    data: the JSON after a RESULT/EVENT/JOB/WORKFLOW tag (None if it is not JSON), or the
    fields of START/END/REPORT; read-only, redacted and cleaned like `text`.
    """

    kind: str
    text: str
    data: Any = field(default=None, hash=False)
    request_id: str | None = None


def redact(text: str) -> str:
    """Replace receipt handles, access key ids, secrets, session tokens and signatures."""
    text = _KEYED_SECRETS.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _AUTHORIZATION.sub(lambda m: f"{m.group(1)}{m.group(2)} {REDACTED}", text)
    text = _SIGNATURE.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _ACCESS_KEY_ID.sub(REDACTED, text)


def redact_data(value: Any) -> Any:
    """A decoded JSON value with secret-named keys masked and every string cleaned and redacted."""
    if isinstance(value, dict):
        return {
            untrusted.clean(str(k)): REDACTED if _is_secret_key(k) else redact_data(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    if isinstance(value, str):
        return redact(untrusted.clean(value, keep_newlines=True))
    return value


def split_event(message: str | bytes) -> tuple[str, ...]:
    """The lines of one log event (split on \\n, \\r\\n and \\r; no empty last line)."""
    text = _decode(message)
    if not text:
        return ()
    lines = _LINE_BREAKS.split(text)
    if lines[-1] == "":
        lines.pop()
    return tuple(lines)


def classify(line: str | bytes) -> LogLine:
    """What one line is, with its cleaned, redacted and capped text."""
    text = untrusted.clean(_decode(line))
    tag, _, rest = text.partition(" ")
    if tag in TAGGED_KINDS:
        return LogLine(tag, _cap(redact(text)), redact_data(_json(rest)))
    if tag in RUNTIME_KINDS and text.startswith(f"{tag} RequestId:"):
        data = _runtime_fields(tag, text)
        return LogLine(tag, _cap(redact(text)), redact_data(data), data.get("RequestId"))
    if text.startswith("[ERROR]") or "Task timed out after" in text:
        return LogLine("ERROR", _cap(redact(text)))
    return LogLine("OTHER", _cap(redact(text)))


def parse_event(message: str | bytes) -> tuple[LogLine, ...]:
    """All lines of one log event; the traceback lines of an [ERROR] event are ERROR too."""
    lines = [classify(line) for line in split_event(message)]
    if lines and lines[0].kind == "ERROR":
        lines = [line if line.kind == "ERROR" else LogLine("ERROR", line.text) for line in lines]
    return tuple(lines)


def _runtime_fields(tag: str, text: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    request = _REQUEST_ID.search(text)
    if request:
        fields["RequestId"] = request.group(1)
    if tag == "START":
        version = _START_VERSION.search(text)
        if version:
            fields["Version"] = version.group(1)
    elif tag == "REPORT":
        for name, value in _REPORT_FIELD.findall(text.removeprefix("REPORT ")):
            if name != "RequestId":
                fields[name.strip()] = _measure(value)
    return fields


def _measure(value: str) -> Any:
    """ "12.34 ms" → 12.34, "128 MB" → 128; anything else stays text."""
    match = _MEASURE.match(value.strip())
    if not match:
        return value.strip()
    number = match.group(1)
    return float(number) if "." in number else int(number)


def _json(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_secret_key(key: Any) -> bool:
    return isinstance(key, str) and re.sub(r"[-_ ]", "", key).lower() in _SECRET_KEYS


def _decode(value: str | bytes) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    return value if isinstance(value, str) else str(value)


def _cap(text: str) -> str:
    if len(text) <= MAX_LINE_BYTES // 4:  # cannot exceed the cap even at 4 bytes a character
        return text
    encoded = text.encode("utf-8", errors="replace")
    if len(encoded) <= MAX_LINE_BYTES:
        return text
    kept = encoded[:MAX_LINE_BYTES].decode("utf-8", errors="ignore")
    more = len(encoded) - len(kept.encode("utf-8"))
    return f"{kept}… ({more} more bytes)"
