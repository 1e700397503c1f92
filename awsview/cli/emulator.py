"""`awsview emulator`: the embedded lab emulator in the foreground, until Ctrl+C or SIGTERM."""

from __future__ import annotations

import argparse
import re
import signal
from urllib.parse import urlsplit

from awsview.access import AccessError, check_token, given_token, is_loopback
from awsview.emulator.trust import Trust

# The token travels as an access key id, inside SigV4's `Credential=<id>/<date>/...`.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_-]+")


def run(args: argparse.Namespace) -> int:
    from awsview.emulator.server import start

    trust = _trust(args)
    emulator = start(args.host, args.port, args.state_dir, trust=trust)

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    key = "<token>" if trust.token else "testing"
    print(f"AWS View emulator listening on {emulator.endpoint_url}", flush=True)
    print(f"  write-decision journal: {emulator.endpoint_url}/_awsview/journal", flush=True)
    print(f"  state and logs:         {emulator.state_dir}", flush=True)
    print(
        f"  use it: export AWS_ENDPOINT_URL={emulator.endpoint_url} AWS_DEFAULT_REGION=us-east-1 "
        f"AWS_ACCESS_KEY_ID={key} AWS_SECRET_ACCESS_KEY=testing",
        flush=True,
    )
    if trust.token:
        # The token itself is not printed: whoever started it has it, the terminal may be shown.
        print(
            "  every client signs with the token as access key id (AWS_ACCESS_KEY_ID=<token>); "
            "other requests are refused",
            flush=True,
        )
    if not is_loopback(args.host):
        print(
            f"  reachable from the network on {args.host}:{emulator.port}: anyone with the "
            "token can run code here as you",
            flush=True,
        )
    try:
        emulator.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0


def _trust(args: argparse.Namespace) -> Trust:
    if not is_loopback(args.host) and not args.allow_remote:
        raise AccessError(
            f"--host {args.host} lets other machines upload and run code as you: "
            "add --allow-remote (and a token) if that is what you want"
        )
    token = check_token(args.host, given_token(args.token))
    if token is not None and not _TOKEN_CHARS.fullmatch(token):
        raise AccessError("the token is used as an access key id: letters, digits, - and _ only")
    for origin in args.cors_origin:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/"):
            raise AccessError(f"--cors-origin {origin!r} is not an origin like http://host:port")
    return Trust.make(
        args.host,
        token,
        cors_origins=args.cors_origin,
        services=args.enable_service,
        host_names=args.host_name,
    )
