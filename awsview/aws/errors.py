"""Turning botocore / aiohttp failures into one-line reasons, and telling "does not exist"
(a successful answer) apart from every kind of failure; the AWS configuration's own errors (an
unknown profile, no credentials, an expired SSO session) as the one line a user is shown."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConfigParseError,
    ConnectionClosedError,
    ConnectTimeoutError,
    CredentialRetrievalError,
    EndpointConnectionError,
    HTTPClientError,
    InvalidConfigError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
    SSOError,
    TokenRetrievalError,
)

from awsview.model.errors import UserError

NOT_FOUND_CODES = frozenset(
    {
        "ResourceNotFoundException",
        "StateMachineDoesNotExist",
        "ExecutionDoesNotExist",
        "AWS.SimpleQueueService.NonExistentQueue",
        "QueueDoesNotExist",
        "NoSuchEntity",
        "NoSuchEntityException",
    }
)
NETWORK_ERRORS = (
    EndpointConnectionError,
    ConnectTimeoutError,
    ReadTimeoutError,
    ConnectionClosedError,
)
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "ProvisionedThroughputExceededException",
        "RequestThrottled",
        "RequestThrottledException",
        "SlowDown",
        "LimitExceededException",
    }
)
AUTH_CODES = {
    "ExpiredToken": "credentials expired",
    "ExpiredTokenException": "credentials expired",
    "RequestExpired": "request expired (clock skew?)",
    "InvalidClientTokenId": "credentials not recognised",
    "UnrecognizedClientException": "credentials not recognised",
    "InvalidSignatureException": "credentials rejected (bad signature)",
    "SignatureDoesNotMatch": "credentials rejected (bad signature)",
    "AuthFailure": "credentials rejected",
}
# Said as AWS says it: the code, then the message naming the action refused.
ACCESS_DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "NotAuthorized"})


@dataclass(frozen=True)
class Failure:
    kind: str  # "network" | "throttled" | "auth" | "not_found" | "other"
    text: str  # one line, for a panel or a terminal
    code: str | None = None

    @property
    def is_not_found(self) -> bool:
        return self.kind == "not_found"


def error_code(exc: BaseException) -> str | None:
    if isinstance(exc, ClientError):
        return exc.response.get("Error", {}).get("Code")
    return None


def classify(exc: BaseException) -> Failure:
    """One line saying what went wrong; never a traceback. AWS's words are untrusted text:
    control characters and escape sequences are removed."""
    from dataclasses import replace

    from awsview.model import untrusted

    failure = _classify(exc)
    return replace(
        failure,
        text=" ".join(untrusted.clean(failure.text).split()),
        code=untrusted.clean(failure.code) if failure.code else None,
    )


def _classify(exc: BaseException) -> Failure:
    if isinstance(exc, ConfigError):
        return Failure("auth", str(exc))
    chain = credentials_text(exc, None)
    if chain is not None:
        return Failure("auth", chain)
    if isinstance(exc, ClientError):
        code = error_code(exc) or "Error"
        message = " ".join(str(exc.response.get("Error", {}).get("Message", "")).split())[:160]
        if code in NOT_FOUND_CODES:
            return Failure("not_found", f"{code}: {message}".rstrip(": "), code)
        if code in THROTTLING_CODES:
            return Failure("throttled", f"throttled ({code})", code)
        if code in ACCESS_DENIED_CODES:
            return Failure("auth", f"{code}: {message}".rstrip(": "), code)
        if code in AUTH_CODES:
            return Failure("auth", f"{AUTH_CODES[code]} ({code}: {message})", code)
        return Failure("other", f"{code}: {message}".rstrip(": "), code)
    if isinstance(exc, NoRegionError):
        return Failure("other", "no AWS region configured (use --region or AWS_REGION)")
    if isinstance(exc, EndpointConnectionError):
        return Failure(
            "network", f"connection refused — {exc.kwargs.get('endpoint_url', '')}".strip(" —")
        )
    if isinstance(exc, (ConnectTimeoutError, ReadTimeoutError, asyncio.TimeoutError)):
        return Failure("network", "timed out")
    if isinstance(exc, ConnectionClosedError):
        return Failure("network", "connection closed")
    if isinstance(exc, HTTPClientError) and isinstance(exc.kwargs.get("error"), BotoCoreError):
        exc = exc.kwargs["error"]  # ours, raised inside the HTTP session (an answer too large)
    if isinstance(exc, BotoCoreError):
        return Failure("other", " ".join(str(exc).split())[:200])
    if isinstance(exc, OSError):
        return Failure("network", " ".join(str(exc).split())[:200] or type(exc).__name__)
    name = type(exc).__name__
    if "Connect" in name or "Connection" in name or "ServerDisconnected" in name:
        return Failure("network", f"connection failed ({name})")
    return Failure("other", f"{name}: {' '.join(str(exc).split())[:200]}")


@contextlib.contextmanager
def said_as_botocore(url: str) -> Iterator[None]:
    """Around a plain HTTP call (aiohttp) to the endpoint: a connection failure is raised as
    botocore's, so it reads as every other panel's ("connection refused — http://…/"), not as
    aiohttp's ("Cannot connect to host … ssl:default [Connect call failed …]")."""
    from urllib.parse import urlsplit

    import aiohttp

    try:
        yield
    except aiohttp.ClientConnectorError as exc:
        parts = urlsplit(url)
        raise EndpointConnectionError(endpoint_url=f"{parts.scheme}://{parts.netloc}/") from exc


DEMO_HINT = "to try AWS View without an account: awsview demo"


class ConfigError(UserError):
    """The AWS configuration cannot work as given; the message is one line saying what to do."""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def config_text(exc: BaseException, profile: str | None) -> str:
    """The one line for an AWS configuration error: what is wrong, and what to run about it."""
    name = profile or os.environ.get("AWS_PROFILE") or "default"
    if isinstance(exc, (SSOError, TokenRetrievalError)):
        return (
            f"the SSO session of profile {name!r} has expired or was never started — "
            f"run: aws sso login --profile {name}"
        )
    if isinstance(exc, ProfileNotFound):
        return f"unknown AWS profile {exc.kwargs.get('profile', name)!r}"
    if isinstance(exc, ConfigParseError):
        return f"cannot read the AWS config file: {_one_line(exc)}"
    if isinstance(exc, NoCredentialsError):
        return no_credentials_text(profile)
    if isinstance(exc, (CredentialRetrievalError, PartialCredentialsError, InvalidConfigError)):
        return f"profile {name!r}: {_one_line(exc)}"
    return _one_line(exc)


def no_credentials_text(profile: str | None) -> str:
    """No credentials for AWS itself: say where they were looked for, and how to try AWS View
    without an account."""
    where = (
        f"profile {profile!r}"
        if profile
        else "the environment, ~/.aws/credentials, ~/.aws/config or an instance role"
    )
    return (
        f"no AWS credentials found in {where} "
        f"(aws configure, aws sso login, or AWS_PROFILE=…) — {DEMO_HINT}"
    )


def credentials_text(exc: BaseException, profile: str | None) -> str | None:
    """The one line for a credential-chain failure raised by a call, or None if it is not one."""
    kinds = (
        SSOError,
        TokenRetrievalError,
        CredentialRetrievalError,
        PartialCredentialsError,
        InvalidConfigError,
        ProfileNotFound,
        NoCredentialsError,
    )
    return config_text(exc, profile) if isinstance(exc, kinds) else None
