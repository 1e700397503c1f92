"""The IAM Identity Center (SSO) portal's one call the SDKs make for an SSO profile:
``GetRoleCredentials`` (``GET /federation/credentials``), so that an SSO profile can be used
against the emulator exactly as against AWS: ``aws sso login`` leaves a token in the SSO cache,
the SDK trades it here for role credentials.

The emulator has no identity store: any bearer token is accepted, except those starting with
``EXPIRED`` or ``INVALID``, refused with AWS's ``UnauthorizedException`` (as the access keys of
the same names are refused elsewhere), so clients' handling of a dead SSO session can be tested.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterable
from urllib.parse import parse_qs

PATH = "/federation/credentials"
LIFETIME_S = 3600
TOKEN_KEY = "awsview.sso_bearer_token"  # where the request handler puts the token


def keeping_the_token(handler: type) -> type:
    """The emulator's request handler, keeping the portal's ``x-amz-sso_bearer_token`` header:
    werkzeug drops every header with an underscore in its name (WSGI cannot tell ``X_Foo`` from
    ``X-Foo``), so it is kept under a key of its own that no other header can spoof."""

    class Handler(handler):  # type: ignore[misc, valid-type]
        def make_environ(self) -> dict:
            environ = super().make_environ()
            environ.pop(TOKEN_KEY, None)
            token = self.headers.get("x-amz-sso_bearer_token")
            if token is not None:
                environ[TOKEN_KEY] = token
            return environ

    return Handler


def answer(environ: dict, start_response: Callable) -> Iterable[bytes]:
    query = parse_qs(environ.get("QUERY_STRING", ""))
    token = environ.get(TOKEN_KEY, "")
    if (
        environ.get("REQUEST_METHOD") != "GET"
        or not query.get("role_name")
        or not query.get("account_id")
    ):
        return _json(
            start_response,
            "400 Bad Request",
            {"message": "role_name and account_id are required"},
            "InvalidRequestException",
        )
    if not token or token.startswith(("EXPIRED", "INVALID")):
        return _json(
            start_response,
            "401 Unauthorized",
            {"message": "Session token not found or invalid"},
            "UnauthorizedException",
        )
    credentials = {
        "accessKeyId": "ASIASSO" + secrets.token_hex(6).upper(),
        "secretAccessKey": secrets.token_urlsafe(30),
        "sessionToken": secrets.token_urlsafe(60),
        "expiration": int((time.time() + LIFETIME_S) * 1000),
    }
    return _json(start_response, "200 OK", {"roleCredentials": credentials})


def _json(
    start_response: Callable, status: str, body: dict, error: str | None = None
) -> Iterable[bytes]:
    data = json.dumps(body).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    if error:
        headers.append(("x-amzn-ErrorType", error))
    start_response(status, headers)
    return [data]
