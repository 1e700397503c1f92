"""Identity-based policy evaluation for the one question the labs ask of IAM:
may this role perform this action on this resource? (Explicit Deny wins, then any Allow.)
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _matches(patterns: Iterable[str], value: str, case_sensitive: bool) -> bool:
    for pattern in patterns:
        if not isinstance(pattern, str):
            continue
        if case_sensitive:
            if fnmatch.fnmatchcase(value, pattern):
                return True
        elif fnmatch.fnmatchcase(value.lower(), pattern.lower()):
            return True
    return False


def _statement_applies(statement: dict[str, Any], action: str, resources: list[str]) -> bool:
    if "Action" in statement:
        if not _matches(_as_list(statement["Action"]), action, case_sensitive=False):
            return False
    elif "NotAction" in statement:
        if _matches(_as_list(statement["NotAction"]), action, case_sensitive=False):
            return False
    else:
        return False
    if "Resource" in statement:
        return any(_matches(_as_list(statement["Resource"]), r, True) for r in resources)
    if "NotResource" in statement:
        return not any(_matches(_as_list(statement["NotResource"]), r, True) for r in resources)
    return False


def parse_document(document: Any) -> dict[str, Any]:
    """A policy document as moto stores it: a dict, a JSON string, or a URL-encoded JSON string."""
    if isinstance(document, dict):
        return document
    text = str(document)
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(unquote(text))


def is_allowed(documents: Iterable[Any], action: str, resources: list[str]) -> bool:
    """True when some statement allows ``action`` on any of ``resources`` and none denies it."""
    allowed = False
    for document in documents:
        try:
            policy = parse_document(document)
        except ValueError:
            continue
        for statement in _as_list(policy.get("Statement")):
            if not isinstance(statement, dict) or not _statement_applies(
                statement, action, resources
            ):
                continue
            if statement.get("Effect") == "Deny":
                return False
            if statement.get("Effect") == "Allow":
                allowed = True
    return allowed


def role_documents(role: Any) -> list[Any]:
    """Inline and attached managed policy documents of a moto IAM Role."""
    documents = list((getattr(role, "policies", None) or {}).values())
    for policy in (getattr(role, "managed_policies", None) or {}).values():
        version = getattr(policy, "default_version", None) or next(
            (v for v in getattr(policy, "versions", []) if getattr(v, "is_default", False)), None
        )
        if version is not None:
            documents.append(version.document)
    return documents
