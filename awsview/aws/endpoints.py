"""Endpoint URLs: which are well formed, which are local, which are an AWS View emulator.

Every endpoint the viewer, the lab player or the class view will use goes through
`check_endpoint_url` once (`--endpoint-url`, the SDK's ``AWS_ENDPOINT_URL*`` variables and
config-file ``endpoint_url``, a class roster's ``endpoint_url``), so a mistake is one line with a
hint instead of an HTTP client's error on the first call.

"Local" is a promise that no real account is behind the endpoint, because it decides whether a
lab may create and delete resources there without ``--real-account``. Only loopback makes that
promise by its address: a private or link-local address can be an AWS VPC endpoint of a real
account. Any other endpoint counts as local only when it answers as the AWS View emulator
(`identifies_as_emulator`), which serves plain HTTP only: an ``https://`` endpoint off loopback
is never asked.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import os
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from awsview.aws.errors import ConfigError
from awsview.model.textfile import shown

SCHEMES = ("http", "https")
MAX_URL = 2048  # longer is not an endpoint; said shortened
IDENTITY_ROUTE = "/_awsview/health"  # the emulator's read-only identity (GET, no credentials)
IDENTITY_BYTES = 16_384  # its answer is ~200 bytes; more is not the emulator


def check_endpoint_url(url: str, where: str = "--endpoint-url") -> None:
    """Raise ConfigError (one line: ``where``, the URL, what is wrong, a hint) unless ``url`` is
    ``http://`` or ``https://`` with a host and, if given, a valid port."""
    problem = endpoint_problem(url)
    if problem is not None:
        raise ConfigError(f"{where} {shown(url)}: {problem}")


def endpoint_problem(url: str) -> str | None:
    """What is wrong with ``url`` as an endpoint, with a hint; None when nothing is."""
    if not url.strip():
        return "empty (give http://HOST:PORT or https://HOST)"
    if len(url) > MAX_URL:
        return f"longer than {MAX_URL} characters: not an endpoint URL"
    if url != url.strip():
        return f"spaces around it (did you mean {shown(url.strip())}?)"
    if any(not c.isprintable() or c.isspace() for c in url):
        return "contains a space or a control character"
    if "://" not in url:
        guess = _scheme_for(urlsplit("//" + url).hostname) + url
        return f"no scheme (did you mean {shown(guess)}?)"
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        said = f'unsupported scheme "{shown(parts.scheme)}" (use http:// or https://)'
        close = difflib.get_close_matches(scheme, SCHEMES, n=1, cutoff=0.5)
        if close:
            said += f" — did you mean {shown(close[0] + url[len(parts.scheme) :])}?"
        return said
    if not parts.hostname:
        return "no host (give http://HOST:PORT or https://HOST)"
    try:
        parts.port  # noqa: B018  raises for a port that is not a number from 0 to 65535
    except ValueError:
        return "the port is not a number from 1 to 65535"
    if parts.port == 0:
        return "the port is not a number from 1 to 65535"
    return None


def configured_where(url: str, profile: str | None) -> str:
    """Which setting gave an endpoint URL: an AWS_ENDPOINT_URL* variable, else the config file
    (with the line that says it, when it is there word for word)."""
    for name, value in sorted(os.environ.items()):
        if name.startswith("AWS_ENDPOINT_URL") and value == url:
            return name
    config = os.path.expanduser(os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config")
    try:
        with open(config, encoding="utf-8", errors="replace") as lines:
            for number, line in enumerate(lines, start=1):
                if url in line:
                    return f"{config}:{number}: endpoint_url"
    except OSError:
        pass
    return f"endpoint_url of profile {profile or 'default'} in {config}"


def _scheme_for(host: str | None) -> str:
    """The scheme a URL without one most likely meant: an emulator on this machine or a private
    network speaks http, AWS and anything else https."""
    host = (host or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return "http://"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "https://"
    return "http://" if address.is_private or address.is_loopback else "https://"


def is_local_url(url: str | None) -> bool:
    """An endpoint on this machine by its address alone: ``localhost`` or a literal loopback
    address. Host names are not resolved; a private address is not local (see the module)."""
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def may_be_emulator(url: str) -> bool:
    """Worth asking whether it is the AWS View emulator: plain HTTP (the emulator has no TLS)."""
    return urlsplit(url).scheme.lower() == "http" and endpoint_problem(url) is None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # an answer elsewhere is not this endpoint's


def identifies_as_emulator(url: str, timeout: float = 2.0) -> bool:
    """The endpoint answers the AWS View emulator's identity route (one unsigned GET, no AWS
    call, no credentials, no proxy, no redirect). False for https, for anything that does not
    answer, and for a LocalStack or stock moto (which have no such route)."""
    if not may_be_emulator(url):
        return False
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())
    request = urllib.request.Request(url.rstrip("/") + IDENTITY_ROUTE, method="GET")
    try:
        with opener.open(request, timeout=timeout) as response:
            if response.status != 200:
                return False
            data = response.read(IDENTITY_BYTES + 1)
        if len(data) > IDENTITY_BYTES:
            return False
        body = json.loads(data)
    except (OSError, ValueError, urllib.error.HTTPError):
        return False
    return (
        isinstance(body, dict)
        and body.get("ok") is True
        and all(isinstance(body.get(key), str) for key in ("instance", "journal", "feed"))
    )
