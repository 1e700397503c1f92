"""Where to look, resolved exactly as the AWS SDK resolves it, and the read-only connection.

AWS View re-implements none of the SDK's configuration rules; botocore resolves them:

- the profile: ``--profile``, else ``AWS_PROFILE`` (``AWS_DEFAULT_PROFILE``), else ``default``;
- the region: ``--region``, ``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile's ``region``.
  botocore itself reads only ``AWS_DEFAULT_REGION``; ``AWS_REGION`` is put ahead of it through
  botocore's own session variables, the order CLI v2 and the other SDKs use;
- each service's endpoint: ``--endpoint-url``, else ``AWS_ENDPOINT_URL_<SERVICE>``,
  ``AWS_ENDPOINT_URL``, the profile's ``services`` section, its ``endpoint_url``, else AWS's own.
  The endpoint really used is read back from a client botocore made (``client.meta``);
- credentials: botocore's chain for the profile (environment, SSO, ``credential_process``,
  assume-role, the shared files, container and instance roles; for an endpoint that does not
  reach AWS, without the last two, which ask the network: `offline_chain`).

Every configuration problem becomes a `ConfigError`: one line that says what to do, exit 2.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
from collections import Counter
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from awsview.aws import log as logfile
from awsview.aws.endpoints import (
    check_endpoint_url,
    configured_where,
    endpoint_problem,
    identifies_as_emulator,
    is_local_url,
    may_be_emulator,
)
from awsview.aws.errors import (
    NETWORK_ERRORS,
    ConfigError,
    _one_line,
    classify,
    config_text,
    credentials_text,
    no_credentials_text,
)
from awsview.aws.ratelimit import RATE_DIR_ENV, RateLimiter, shared_dir
from awsview.aws.readonly import READ_OPERATIONS, guard
from awsview.model.textfile import shown

DEFAULT_REGION = "us-east-1"  # only for a local endpoint with no region configured
# How long one call may take to connect, then to answer, before it fails: a poll waits no longer.
CONNECT_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 15.0
LOCAL_RATE_SCALE = 10.0
# An emulator accepts any credentials; these are used only when the chain has none and no
# service goes to AWS itself.
EMULATOR_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
# The providers of botocore's chain that ask the network: an ECS task's credentials endpoint and
# EC2's instance metadata. For an endpoint that does not reach AWS the chain is walked without
# them (`offline_chain`): on a network that accepts a connection to 169.254.169.254 and never
# answers, they held every start against a local emulator for seconds.
NETWORK_PROVIDERS = frozenset({"container-role", "iam-role"})
# botocore's own session variable for the region, with AWS_REGION ahead of AWS_DEFAULT_REGION.
SESSION_VARS = {"region": ("region", ["AWS_REGION", "AWS_DEFAULT_REGION"], None, None)}
SERVICES = tuple(READ_OPERATIONS)  # every service the viewer may read
# What a process talking only to its own embedded emulator must not inherit from the shell.
SHELL_AWS_VARIABLES = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)


@dataclass(frozen=True)
class Target:
    """Where to look, as asked: a profile, region and endpoint given explicitly (``None`` leaves
    each to the SDK's configuration)."""

    profile: str | None = None
    region: str | None = None
    endpoint_url: str | None = None
    # Where endpoint_url was given, for the line that says it is malformed.
    endpoint_source: str = field(default="--endpoint-url", compare=False)

    def describe(self) -> str:
        """Before resolution: what was asked."""
        parts = [
            self.endpoint_url or "AWS",
            self.region,
            self.profile and f"profile {self.profile}",
        ]
        return " · ".join(p for p in parts if p)


@dataclass(frozen=True)
class Resolved:
    """A target as botocore resolves it: profile, region and the endpoint of every service."""

    target: Target
    profile: str | None
    region: str
    endpoints: tuple[tuple[str, str], ...]  # (service, endpoint URL), in SERVICES order
    aws_suffixes: tuple[str, ...] = ()
    session: Any = field(default=None, compare=False, repr=False)  # the botocore session
    emulator: bool = False  # the endpoint answered as the AWS View emulator (`identified`)

    def endpoint(self, service: str) -> str:
        return dict(self.endpoints)[service]

    @property
    def is_local(self) -> bool:
        """No account here: every service answers on loopback, or the one endpoint identified
        itself as the AWS View emulator. A private address alone is not local: it can be a VPC
        endpoint of a real account."""
        return self.emulator or all(is_local_url(url) for _, url in self.endpoints)

    @property
    def emulator_candidate(self) -> str | None:
        """The one endpoint every service uses, when it is neither loopback nor AWS and could be
        the AWS View emulator (plain http): worth asking (`identified`)."""
        urls = {url for _, url in self.endpoints}
        if len(urls) != 1:
            return None
        url = urls.pop()
        if is_local_url(url) or self.is_aws(url) or not may_be_emulator(url):
            return None
        return url

    def is_aws(self, url: str) -> bool:
        """An endpoint of AWS itself (a partition's DNS suffix), not one configured elsewhere."""
        host = (urlsplit(url).hostname or "").lower()
        return any(host == suffix or host.endswith("." + suffix) for suffix in self.aws_suffixes)

    @property
    def reaches_aws(self) -> bool:
        """Some service goes to AWS itself: credentials and a real region are needed."""
        return any(self.is_aws(url) for _, url in self.endpoints)

    @property
    def endpoint_url(self) -> str | None:
        """The endpoint configured for the lab's data (DynamoDB, where the embedded emulator also
        keeps its journal), or None when that is AWS itself."""
        url = self.endpoint("dynamodb")
        return None if self.is_aws(url) else url

    @property
    def scope(self) -> str:
        """Names what is watched, for what the viewer remembers between runs."""
        return self.endpoint_url or f"aws:{self.profile or 'default'}:{self.region}"

    def describe(self) -> str:
        """What is really used: endpoint (or AWS), region, profile; services that go elsewhere."""

        def where(url: str) -> str:
            return "AWS" if self.is_aws(url) else url.rstrip("/")

        places = Counter(where(url) for _, url in self.endpoints)
        main = places.most_common(1)[0][0]
        parts = [main, self.region]
        if self.profile:
            parts.append(f"profile {self.profile}")
        others = [
            f"{service} → {where(url)}" for service, url in self.endpoints if where(url) != main
        ]
        return " · ".join(parts) + (f" ({', '.join(others)})" if others else "")


def botocore_session(profile: str | None = None, loader: Any = None) -> Any:
    """A botocore session that resolves as the SDKs do (``AWS_REGION`` included). ``loader``:
    a botocore data loader to share; by default this process's (`shared_loader`)."""
    import botocore.session

    return _lend_loader(
        botocore.session.Session(session_vars=SESSION_VARS, profile=profile), loader
    )


def aio_session(profile: str | None = None) -> Any:
    """An aiobotocore session as `botocore_session` makes one, on this process's loader."""
    from aiobotocore.session import AioSession

    return _lend_loader(AioSession(session_vars=SESSION_VARS, profile=profile))


def _lend_loader(session: Any, loader: Any = None) -> Any:
    """``session`` reading its models through ``loader``, by default this process's."""
    loader = loader if loader is not None else shared_loader(session)
    if loader is not None:
        session.register_component("data_loader", loader)
    return session


_LOADERS: dict[str | None, Any] = {}


def shared_loader(session: Any) -> Any:
    """One botocore data loader per process (per data path): the service models and endpoint
    rules it parses, several MB for the lab's services, are read once for every session that
    resolves, checks or calls, not once per session. None when the session cannot say its data
    path (a broken configuration, which resolving then reports): it loads its own."""
    import botocore.loaders

    try:
        path = session.get_config_variable("data_path")
    except Exception:
        return None
    if path not in _LOADERS:
        _LOADERS[path] = botocore.loaders.create_loader(path)
    return _LOADERS[path]


def resolve(target: Target, loader: Any = None) -> Resolved:
    """Profile, region and endpoints as botocore resolves them; raises ConfigError.

    It makes a botocore client (no request is sent) and reads its endpoint: one per service, as
    each may have an endpoint configured of its own; one in all for an endpoint given outright,
    which botocore takes over any configured one for every service. Most of a client is reading
    its service model, which the process's loader (`shared_loader`) reads once.
    """
    from botocore.exceptions import BotoCoreError

    if target.endpoint_url is not None:
        check_endpoint_url(target.endpoint_url, target.endpoint_source)
    session = botocore_session(target.profile, loader)
    try:
        profile = session.profile
        if profile is not None and profile not in session.available_profiles:
            raise ConfigError(_unknown_profile(session, profile))
        region = target.region or session.get_config_variable("region")

        def endpoint(service: str) -> str:
            client = _client(session, service, region or DEFAULT_REGION, target.endpoint_url)
            return str(client.meta.endpoint_url)

        if target.endpoint_url is not None:
            # Every service's: the one client says whether botocore takes it with this region
            # and configuration.
            given = endpoint("sts")
            endpoints = tuple((service, given) for service in SERVICES)
        else:
            endpoints = tuple((service, endpoint(service)) for service in SERVICES)
    except ConfigError:
        raise
    except BotoCoreError as exc:
        raise ConfigError(config_text(exc, profile=target.profile)) from None
    except ValueError as exc:  # botocore's InvalidRegionError is also a ValueError
        said = _one_line(exc)
        if said.startswith("Invalid endpoint: "):  # a configured one (AWS_ENDPOINT_URL, …)
            bad = said.removeprefix("Invalid endpoint: ")
            where = (
                target.endpoint_source
                if target.endpoint_url is not None
                else configured_where(bad, target.profile)
            )
            check_endpoint_url(bad, where)
            said = f"{where} {shown(bad)}: not a valid endpoint URL (expected http://HOST:PORT)"
        raise ConfigError(said) from None
    for _, url in endpoints:  # configured, not given: botocore takes a scheme it cannot use
        if url != target.endpoint_url and endpoint_problem(url) is not None:
            check_endpoint_url(url, configured_where(url, profile))
    data = session.get_data("endpoints")
    suffixes = tuple(
        sorted({p.get("dnsSuffix", "") for p in data.get("partitions", [])} - {""})
    ) + ("api.aws",)
    resolved = Resolved(target, profile, region or DEFAULT_REGION, endpoints, suffixes, session)
    if region is None:
        if resolved.reaches_aws:
            if _has_no_credentials(session):  # nothing configured at all: say the first thing first
                raise ConfigError(no_credentials_text(profile))
            raise ConfigError(
                "no AWS region configured: pass --region, set AWS_REGION, or give the "
                f"profile a region (aws configure set region … --profile {profile or 'default'})"
            )
    elif resolved.reaches_aws:
        _check_region(region, data, resolved)
    return resolved


def profile_names() -> list[str]:
    """The profiles of the shared config and credentials files, as botocore reads them."""
    try:
        return sorted(botocore_session().available_profiles)
    except Exception:  # a config file botocore cannot parse: no profile to offer
        return []


def partition_regions(region: str | None) -> list[str]:
    """The regions of ``region``'s partition in botocore's data, ``region`` first (the
    commercial partition's when it is None or unknown)."""
    data = botocore_session().get_data("endpoints")
    partitions = data.get("partitions", [])
    chosen = next((p for p in partitions if region in p.get("regions", {})), None)
    chosen = chosen or next((p for p in partitions if p.get("partition") == "aws"), None)
    names = sorted(chosen.get("regions", {})) if chosen else []
    return ([region] if region else []) + [n for n in names if n != region]


def identified(resolved: Resolved, timeout: float = 2.0) -> Resolved:
    """``resolved``, marked as the AWS View emulator when its one plain-http endpoint off
    loopback answers as one (one GET of its identity route; nothing is asked of AWS, of https,
    or of loopback, which is local anyway)."""
    url = resolved.emulator_candidate
    if url is None or not identifies_as_emulator(url, timeout):
        return resolved
    return replace(resolved, emulator=True)


def _has_no_credentials(session: Any) -> bool:
    try:
        return session.get_credentials() is None
    except Exception:  # a broken chain is for check_credentials to explain
        return False


def read_models(loader: Any = None) -> None:
    """Parse into ``loader`` (by default this process's, `shared_loader`) what a client of each
    service the viewer reads parses: its model and endpoint rules, and botocore's endpoints. A
    fork server's warm-up, so that each child is handed them parsed; nothing is sent. A
    configuration botocore refuses is left for the child to report."""
    from botocore.exceptions import BotoCoreError

    session = botocore_session(None, loader)
    for service in SERVICES:
        try:
            _client(session, service, DEFAULT_REGION, "http://127.0.0.1:9")
        except (BotoCoreError, ValueError):
            return


def _client(session: Any, service: str, region: str, endpoint_url: str | None) -> Any:
    # Dummy keys: making a client must not run the credential chain (that is check_credentials).
    return session.create_client(
        service,
        region_name=region,
        endpoint_url=endpoint_url,
        aws_access_key_id="resolve",
        aws_secret_access_key="resolve",
    )


def _check_region(region: str, data: dict[str, Any], resolved: Resolved) -> None:
    """A region AWS does not have, sent to AWS, fails later as an unreachable host: say so now."""
    known = {name for p in data.get("partitions", []) for name in p.get("regions", {})}
    if region in known:
        return
    close = difflib.get_close_matches(region, sorted(known), n=1)
    hint = f" — did you mean {close[0]}?" if close else ""
    raise ConfigError(
        f"unknown AWS region {region!r}{hint} (a region newer than this botocore? "
        "upgrade it, or pass --endpoint-url)"
    )


def _unknown_profile(session: Any, profile: str) -> str:
    names = sorted(session.available_profiles)
    where = os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config"
    known = f"profiles there: {', '.join(names)}" if names else "it has no profiles"
    return f"unknown AWS profile {profile!r} in {where} ({known})"


def check_credentials(resolved: Resolved) -> str | None:
    """Run the credential chain once, as the first call would: SSO, credential_process and
    assume-role profiles fetch their credentials here. Returns how they were found ("env",
    "sso", "assume-role", …), or None for a local endpoint with none (the emulator's are used).

    Raises ConfigError for what no retry can fix (no credentials, an expired SSO session, a
    failing credential_process, a role that cannot be assumed). A network failure on the way is
    left for the calls to report.
    """
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        credentials = (
            resolved.session.get_credentials()
            if resolved.reaches_aws
            else offline_chain(resolved.session).load_credentials()
        )
        if credentials is None:
            if not resolved.reaches_aws:
                return None
            raise ConfigError(no_credentials_text(resolved.profile))
        credentials.get_frozen_credentials()
    except ConfigError:
        raise
    except NETWORK_ERRORS:
        return "unchecked"
    except ClientError as exc:
        raise ConfigError(
            f"profile {resolved.profile or 'default'!r}: cannot get credentials: "
            f"{classify(exc).text}"
        ) from None
    except BotoCoreError as exc:
        raise ConfigError(config_text(exc, resolved.profile)) from None
    return getattr(credentials, "method", "unknown")


def offline_chain(session: Any) -> Any:
    """``session``'s credential chain (botocore's or aiobotocore's resolver) without the
    providers that ask the network (NETWORK_PROVIDERS), for an endpoint that takes any keys."""
    chain = session.get_component("credential_provider")
    return type(chain)([p for p in chain.providers if p.METHOD not in NETWORK_PROVIDERS])


def isolate_from_shell(environ: Any = os.environ) -> None:
    """For a process that talks only to its own embedded emulator (demo, docs): forget the
    shell's AWS profile, keys, endpoints and config files, so no real account can be reached
    and no real credentials are handed to the emulator."""
    for name in [
        n for n in environ if n in SHELL_AWS_VARIABLES or n.startswith("AWS_ENDPOINT_URL_")
    ]:
        del environ[name]
    environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
    )


def _log_failure(service: str, operation: str, exc: BaseException) -> None:
    """One line in the log file (if one is configured) per failed call: its API, what went wrong."""
    if not logfile.calls.isEnabledFor(logging.INFO):
        return  # no log file: nothing to format
    failure = classify(exc)
    level = logging.INFO if failure.is_not_found else logging.WARNING
    logfile.calls.log(level, "call %s:%s: %s", service, operation, failure.text)


class Connection:
    """Opens one guarded client per service on first use; all close together.

    Use as ``async with Connection(target) as conn: await conn.call("sqs", "list_queues")``.
    Entering resolves the target (raises ConfigError).
    """

    def __init__(
        self,
        target: Target,
        limiter: RateLimiter | None = None,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        read_timeout: float = READ_TIMEOUT_S,
        session: Any = None,
    ):
        """``session``: an aiobotocore session to share (its loaded service models are ~10 MB;
        the class view opens one connection per learner); by default a fresh one."""
        self.target = target
        self._own_limiter = limiter is None
        self.limiter = limiter or RateLimiter()
        self._shared_session = session
        self._timeouts = (connect_timeout, read_timeout)
        self._stack: AsyncExitStack | None = None
        self._clients: dict[str, Any] = {}
        self._session: Any = None
        self._credentials: dict[str, str] = {}
        self.resolved: Resolved | None = None
        self.region = target.region or DEFAULT_REGION
        # Called after every call that got an answer: the endpoint is reachable and takes these
        # credentials, which is news to a scheduler whose other pollers back off.
        self.on_answer: list[Callable[[], None]] = []

    @property
    def is_local(self) -> bool:
        return self.resolved is not None and self.resolved.is_local

    def describe(self) -> str:
        return self.resolved.describe() if self.resolved is not None else self.target.describe()

    async def __aenter__(self) -> Connection:
        # botocore reads config files and builds endpoint rules: off the event loop. An endpoint
        # off loopback is local (change feed, journal, wider rate buckets) only if it says it is
        # the emulator.
        # A shared session lends its data loader too: resolving reads no model a second time.
        loader = (
            None
            if self._shared_session is None
            else self._shared_session.get_component("data_loader")
        )
        self.resolved = await asyncio.to_thread(
            lambda: identified(resolve(self.target, loader), self._timeouts[0])
        )
        self.region = self.resolved.region
        if self._own_limiter:
            # AWS quotas do not apply to a local emulator; its buckets are ten times wider.
            self.limiter.scale = LOCAL_RATE_SCALE if self.resolved.is_local else 1.0
            if os.environ.get(RATE_DIR_ENV):  # one of `awsview serve`'s sessions
                resolved = self.resolved
                account = (resolved.profile, resolved.region, resolved.endpoints)
                self.limiter.share(shared_dir(os.environ[RATE_DIR_ENV], account))
        self._stack = AsyncExitStack()
        self._session = self._shared_session or aio_session(self.target.profile)
        if not self.resolved.reaches_aws:
            try:
                found = await offline_chain(self._session).load_credentials()
            except Exception:  # a broken chain: the first call says why
                found = True
            if found is None:
                self._credentials = dict(EMULATOR_CREDENTIALS)
        return self

    async def access_key_id(self) -> str | None:
        """The access key id the calls are signed with. An emulator off loopback takes it as its
        token, on its own read API (``/_awsview/``) too."""
        if self._credentials:
            return self._credentials.get("aws_access_key_id")
        try:
            found = await self._session.get_credentials()
            return (await found.get_frozen_credentials()).access_key if found else None
        except Exception:  # a broken chain: the AWS calls say why
            return None

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()
        self._clients.clear()

    async def client(self, service: str) -> Any:
        if service not in self._clients:
            from aiobotocore.config import AioConfig

            from awsview.aws.tls import SharedTLSSession

            config = AioConfig(
                connect_timeout=self._timeouts[0],
                read_timeout=self._timeouts[1],
                retries={
                    "max_attempts": 1,
                    "mode": "standard",
                },  # the scheduler retries, not botocore
                max_pool_connections=20,
                http_session_cls=SharedTLSSession,  # one CA bundle loaded, not one per client
            )
            client = await self._stack.enter_async_context(
                self._session.create_client(
                    service,
                    region_name=self.region,
                    endpoint_url=self.target.endpoint_url,
                    config=config,
                    **self._credentials,
                )
            )
            self._clients[service] = guard(client)
        return self._clients[service]

    async def call(self, service: str, method: str, **params: Any) -> dict[str, Any]:
        """One rate-limited, read-only API call, e.g. call("stepfunctions", "list_executions")."""
        client = await self.client(service)
        operation = client.meta.method_to_api_mapping.get(method, method)
        await self.limiter.acquire(service, operation)
        try:
            answer = await getattr(client, method)(**params)
        except Exception as exc:
            # The credential chain failed (say an SSO session expired mid-watch): name the profile.
            text = credentials_text(
                exc, self.resolved.profile if self.resolved else self.target.profile
            )
            _log_failure(service, operation, ConfigError(text) if text is not None else exc)
            if text is not None:
                raise ConfigError(text) from exc
            raise
        for listener in self.on_answer:
            listener()
        return answer

    async def pages(
        self,
        service: str,
        method: str,
        key: str,
        token_in: str = "nextToken",
        token_out: str = "nextToken",
        limit: int | None = None,
        **params: Any,
    ) -> list[Any]:
        """All pages of a listing, concatenated under ``key``; stops at ``limit`` entries. An
        endpoint that repeats a page or never ends raises EndlessListing (answers.MAX_PAGES)."""
        from awsview.aws.answers import Pages

        results: list[Any] = []
        pages = Pages(method)
        while True:
            page = await self.call(service, method, **params)
            results.extend(page.get(key) or [])
            if limit is not None and len(results) >= limit:
                return results[:limit]
            token = pages.next(params.get(token_in), page.get(token_out))
            if token is None:
                return results
            params[token_in] = token
