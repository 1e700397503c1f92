"""What the emulator answers, and to whom. It runs the code it is sent (Lambda) as the user who
started it, so every request passes here before moto or the journal sees it:

- **Host**: only the names the emulator was bound to (loopback names by default). A web page
  that rebinds its own DNS name to 127.0.0.1 still sends its own name, and is refused (421).
- **Origin**: a request a browser sends on behalf of a page (an ``Origin`` header, or
  ``Sec-Fetch-Site`` saying another site) is refused (403) unless that origin was allowed with
  ``--cors-origin``; moto's own CORS headers, which grant every origin, never go out.
- **Token** (off loopback only): a request is answered when its access key id (SigV4 or SigV2,
  header or presigned URL) is the token, or it carries the token in ``X-AWSView-Token`` (the
  viewer's reads of ``/_awsview/``); the emulator's own clients (Lambda code, Step Functions)
  carry a per-process session token instead.
- **Services**: the ones the labs, the viewer and the Lambda runtime use; any other moto
  service answers an AWS-shaped error saying how to switch it on.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
import socket
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

from awsview.access import TOKEN_HEADER, is_loopback

# The session token of the emulator's own clients: Lambda workers and the Step Functions
# interpreter call back into the emulator with it. New in every process, never printed.
INTERNAL_KEY = secrets.token_urlsafe(24)
_TOKEN_ENVIRON = "HTTP_" + TOKEN_HEADER.upper().replace("-", "_")

# What the labs, the viewer's pollers and the Lambda runtime call (moto's backend names), and
# moto's own API (reset, IAM authorization), which the tests and the lab player use.
DEFAULT_SERVICES = frozenset(
    {"dynamodb", "dynamodbstreams", "sqs", "stepfunctions", "awslambda", "logs", "iam", "sts"}
)
ALWAYS_ON = frozenset({"moto_api", "moto_api._internal"})
# The names the SDKs sign with, where moto names the backend otherwise.
ALIASES = {"lambda": "awslambda", "states": "stepfunctions", "streams.dynamodb": "dynamodbstreams"}
_SPOKEN = {backend: name for name, backend in ALIASES.items() if "." not in name}
_WILDCARDS = ("0.0.0.0", "::", "")
_PREFLIGHT_MAX_AGE = "600"


def service_names(given: Iterable[str]) -> set[str]:
    """Backend names from what a user typed: ``lambda,cloudformation`` or ``all``."""
    names = {n.strip().lower() for item in given for n in item.split(",") if n.strip()}
    return {ALIASES.get(n, n) for n in names}


def unknown_services(trust: Trust) -> set[str]:
    """The services asked for that moto does not have."""
    from moto.backends import list_of_moto_modules

    return set(trust.services) - set(list_of_moto_modules()) - {"all"}


@dataclass(frozen=True)
class Trust:
    """Who the emulator answers. ``token`` None: loopback, no token asked."""

    bind_host: str = "127.0.0.1"
    token: str | None = None
    cors_origins: frozenset[str] = frozenset()
    services: frozenset[str] = DEFAULT_SERVICES  # "all" in it: every moto service
    host_names: frozenset[str] = frozenset()  # more names the Host header may say
    _machine_names: frozenset[str] = field(default=frozenset(), compare=False)

    @classmethod
    def make(
        cls,
        bind_host: str = "127.0.0.1",
        token: str | None = None,
        cors_origins: Iterable[str] = (),
        services: Iterable[str] = (),
        host_names: Iterable[str] = (),
    ) -> Trust:
        wildcard = bind_host in _WILDCARDS
        machine = {socket.gethostname().lower(), socket.getfqdn().lower()} if wildcard else set()
        return cls(
            bind_host=bind_host,
            token=token,
            cors_origins=frozenset(o.rstrip("/").lower() for o in cors_origins),
            services=frozenset(DEFAULT_SERVICES | service_names(services)),
            host_names=frozenset(h.lower().strip("[]") for h in host_names),
            _machine_names=frozenset(machine),
        )

    def host_allowed(self, host_header: str) -> bool:
        """A Host header this emulator answers to: its bound address or a name it was given,
        with or without a port. A name not given is how DNS rebinding shows itself."""
        name = _host_name(host_header)
        if not name:
            return False
        if is_loopback(name) or name in self.host_names:
            return True
        if self.bind_host in _WILDCARDS:
            # Bound everywhere on purpose: any address of this machine, or its own name. An
            # address literal cannot be rebound: a page's origin is then that address itself.
            return _is_address(name) or name in self._machine_names
        return name == self.bind_host.lower().strip("[]")

    def origin_allowed(self, origin: str) -> bool:
        return origin.rstrip("/").lower() in self.cors_origins

    def service_on(self, backend: str) -> bool:
        return backend in ALWAYS_ON or "all" in self.services or backend in self.services

    def credential_ok(self, environ: dict[str, Any]) -> bool:
        """Off loopback: signed with the token as access key id, or carrying it, or one of the
        emulator's own clients."""
        if self.token is None:
            return True
        query = parse_qs(environ.get("QUERY_STRING", ""))
        session = environ.get("HTTP_X_AMZ_SECURITY_TOKEN") or _first(query, "X-Amz-Security-Token")
        if session and _same(session, INTERNAL_KEY):
            return True
        offered = (
            _access_key(environ.get("HTTP_AUTHORIZATION", ""))
            or _first(query, "X-Amz-Credential").split("/", 1)[0]
            or _first(query, "AWSAccessKeyId")  # SigV2, as S3 still presigns
            or environ.get(_TOKEN_ENVIRON, "")
        )
        return bool(offered) and _same(offered, self.token)


def gate(app: Callable, trust: Trust) -> Callable:
    """The emulator's WSGI application behind the Host, Origin and token checks."""

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if not trust.host_allowed(environ.get("HTTP_HOST", "")):
            return refuse(
                environ,
                start_response,
                "421 Misdirected Request",
                "MisdirectedRequest",
                "this emulator answers only to the host names it listens on",
            )
        origin = environ.get("HTTP_ORIGIN")
        granted = origin is not None and trust.origin_allowed(origin)
        site = environ.get("HTTP_SEC_FETCH_SITE", "")
        if (origin is not None or site in ("cross-site", "same-site")) and not granted:
            return refuse(
                environ,
                start_response,
                "403 Forbidden",
                "AccessDenied",
                "this emulator does not answer web pages of other sites "
                "(allow one with awsview emulator --cors-origin URL)",
            )
        if granted and environ.get("REQUEST_METHOD") == "OPTIONS":
            return _preflight(environ, start_response, str(origin))
        # Who it is (GET /_awsview/health) is said to anyone it answers at all: a lab command
        # asks it before treating a non-loopback endpoint as an emulator rather than an account.
        if not _identity_request(environ) and not trust.credential_ok(environ):
            return refuse(
                environ,
                start_response,
                "403 Forbidden",
                "UnrecognizedClientException",
                "this emulator answers only requests whose access key id is its token "
                "(AWS_ACCESS_KEY_ID=<token>)",
                xml_code="InvalidClientTokenId",
            )

        def respond(status: str, headers: list, exc_info: Any = None) -> Callable:
            kept = [(k, v) for k, v in headers if not k.lower().startswith("access-control-")]
            if granted:
                kept += [("Access-Control-Allow-Origin", str(origin)), ("Vary", "Origin")]
                kept.append(("Access-Control-Expose-Headers", "x-amzn-RequestId, x-amz-request-id"))
            return start_response(status, kept, exc_info)

        return app(environ, respond)

    return wsgi


def service_apps(create_app: Callable[[str], Any], trust: Trust) -> Callable[[str], Any]:
    """moto's per-service application factory, with the services not switched on answering
    an error instead (moto never builds them)."""

    def create(backend: str) -> Any:
        if trust.service_on(backend):
            return create_app(backend)
        name = _SPOKEN.get(backend, backend)

        def disabled(environ: dict, start_response: Callable) -> Iterable[bytes]:
            return refuse(
                environ,
                start_response,
                "400 Bad Request",
                "ServiceNotEnabled",
                f"{name} is switched off in this emulator; start it with "
                f"awsview emulator --enable-service {name}",
            )

        return disabled

    return create


def refuse(
    environ: dict,
    start_response: Callable,
    status: str,
    code: str,
    message: str,
    xml_code: str | None = None,
) -> Iterable[bytes]:
    """An error as the caller's AWS protocol shapes one: JSON for JSON services (a target
    header, Lambda's REST paths, the journal), XML otherwise (under ``xml_code`` if given:
    AWS names some errors differently there)."""
    request_id = uuid.uuid4().hex
    path = environ.get("PATH_INFO", "")
    if environ.get("HTTP_X_AMZ_TARGET") or path.startswith(("/20", "/_awsview/")):
        body = json.dumps({"__type": code, "message": message}).encode()
        headers = [("Content-Type", "application/x-amz-json-1.0"), ("x-amzn-ErrorType", code)]
    else:
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>{xml_code or code}</Code>"
            f"<Message>{escape(message)}</Message></Error><RequestId>{request_id}</RequestId>"
            "</ErrorResponse>"
        ).encode()
        headers = [("Content-Type", "text/xml")]
    headers += [("x-amzn-RequestId", request_id), ("Content-Length", str(len(body)))]
    start_response(status, headers)
    return [body]


def _preflight(environ: dict, start_response: Callable, origin: str) -> Iterable[bytes]:
    asked = environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS", "")[:1000]
    start_response(
        "200 OK",
        [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, HEAD, PATCH"),
            ("Access-Control-Allow-Headers", asked),
            ("Access-Control-Max-Age", _PREFLIGHT_MAX_AGE),
            ("Vary", "Origin"),
            ("Content-Length", "0"),
        ],
    )
    return [b""]


def _identity_request(environ: dict[str, Any]) -> bool:
    return (
        environ.get("REQUEST_METHOD") in ("GET", "HEAD")
        and environ.get("PATH_INFO") == "/_awsview/health"
    )


def _host_name(host_header: str) -> str:
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:5000
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _access_key(authorization: str) -> str:
    if authorization.startswith("AWS "):  # SigV2: AWS <key>:<signature>
        return authorization[4:].split(":", 1)[0].strip()
    if "Credential=" not in authorization:
        return ""
    return authorization.split("Credential=", 1)[1].split("/", 1)[0].strip()


def _first(query: dict[str, list[str]], key: str) -> str:
    return (query.get(key) or [""])[0]


def _same(offered: str, expected: str) -> bool:
    return hmac.compare_digest(offered.encode(), expected.encode())
