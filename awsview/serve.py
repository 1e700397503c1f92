"""`awsview serve`: the viewer in a browser (textual-serve), as a read-only presenter screen.

textual-serve has no authentication of its own. Here a token guards every route: required on
any address other than loopback, optional on loopback. The token arrives once as ``?token=``
and is then kept in an HttpOnly, SameSite=Strict cookie.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import shlex
import sys
from typing import Any, Sequence

COOKIE = "awsview_token"


class ServeError(Exception):
    """A one-line reason the server cannot start as asked."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(host: str, token: str | None) -> str | None:
    """The token to require, or None. Off loopback a token is mandatory."""
    if token is not None and len(token) < 12:
        raise ServeError("the token must be at least 12 characters long")
    if token is None and not is_loopback(host):
        raise ServeError(f"serving on {host} exposes the lab to the network: pass --token "
                         f"(e.g. --token {secrets.token_urlsafe(18)})")
    return token


def token_middleware(token: str) -> Any:
    from aiohttp import web

    @web.middleware
    async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
        offered = request.query.get("token") or request.cookies.get(COOKIE) or ""
        if not hmac.compare_digest(offered.encode(), token.encode()):
            return web.Response(status=401, text="AWS View: a valid ?token= is required.\n")
        response = await handler(request)
        if request.query.get("token") and isinstance(response, web.StreamResponse) and not response.prepared:
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
        return response

    return middleware


def app_command(watch_args: Sequence[str]) -> str:
    """The command textual-serve runs per browser session: the viewer in presenter mode."""
    return shlex.join([sys.executable, "-m", "awsview", "watch", "--presenter", *watch_args])


def make_server(host: str, port: int, token: str | None, watch_args: Sequence[str],
                title: str = "AWS View") -> Any:
    from textual_serve.server import Server

    class GuardedServer(Server):
        async def _make_app(self) -> Any:
            app = await super()._make_app()
            if token is not None:
                app.middlewares.append(token_middleware(token))
            return app

    return GuardedServer(app_command(watch_args), host=host, port=port, title=title)
