"""Who may reach a server AWS View starts on this machine: the one rule that `awsview serve` and
`awsview emulator` share. On loopback only this machine can connect; on any other address a
token is mandatory, at least 12 characters, from ``--token`` or ``AWSVIEW_TOKEN`` (which keeps
it out of `ps` and the shell's history).

Imports nothing of AWS View: the emulator, which stands alone, uses it as the commands do.
"""

from __future__ import annotations

import ipaddress
import os
import secrets

from awsview.model.errors import UserError

TOKEN_ENV = "AWSVIEW_TOKEN"
# How a client that signs no AWS call (the viewer reading the emulator's ``/_awsview/``) shows it.
TOKEN_HEADER = "X-AWSView-Token"
MIN_TOKEN_CHARS = 12


class AccessError(UserError):
    """A one-line reason a server cannot start as asked."""


def is_loopback(host: str) -> bool:
    """``localhost`` or a literal loopback address (127.0.0.0/8, ::1); names are not resolved."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def given_token(option: str | None) -> str | None:
    """The token from the command line, else from the environment; None when neither says one."""
    return option or os.environ.get(TOKEN_ENV) or None


def check_token(host: str, token: str | None) -> str | None:
    """The token to require, or None. Off loopback a token is mandatory."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise AccessError(f"the token must be at least {MIN_TOKEN_CHARS} characters long")
    if token is None and not is_loopback(host):
        raise AccessError(
            f"listening on {host} exposes the lab to the network: set {TOKEN_ENV} or pass "
            f"--token (e.g. {TOKEN_ENV}={secrets.token_urlsafe(18)})"
        )
    return token
