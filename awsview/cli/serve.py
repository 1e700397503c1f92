"""`awsview serve`: the viewer in a browser (textual-serve), as a read-only presenter screen.

textual-serve has no authentication of its own. Here a token guards every route: required on
any address other than loopback, optional on loopback. The token arrives once as ``?token=``,
becomes an HttpOnly, SameSite=Strict cookie that expires, and leaves the address at once (a
redirect), so it is neither projected in the address bar nor kept in the browser's history.
Whatever the token, the websocket that carries the screen only accepts a page of this server
(its Origin must be this host), and a server on loopback only answers to a loopback Host name,
so no other web page a browser has open can read the screen.

Each browser tab is a viewer process of its own: their number is capped (``--max-sessions``),
each screen's size is capped (`MAX_COLUMNS` x `MAX_ROWS`), and all of them draw on one rate
budget (a directory of shared token buckets, `awsview.aws.ratelimit`), so more tabs never mean
more calls to the account.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import os
import shlex
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from awsview.access import AccessError, check_token, given_token, is_loopback
from awsview.aws.ratelimit import RATE_DIR_ENV
from awsview.cli.common import EXIT_FAILURE, EXIT_USAGE, checked_target, fail, record_taken

COOKIE = "awsview_token"
STOP_GRACE_S = (
    5.0  # a session's viewer gets this long to quit when its browser goes, then is killed
)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")
COOKIE_MAX_AGE_S = 12 * 3600  # a class day; then the address with the token is needed again
MAX_SESSIONS = 4  # each is a viewer process (~150 MB)
# A screen larger than any projector or monitor shows (a 4K screen at a 9 px font is ~430 x 120):
# an unbounded resize makes the viewer lay out and paint hundreds of MB for one frame.
MAX_COLUMNS, MAX_ROWS = 500, 200


# One-line reasons the server cannot start as asked; the token rule is `awsview emulator`'s too.
ServeError = AccessError


def _hostname(netloc: str) -> str:
    return (urlsplit(f"//{netloc}").hostname or "").lower()


def same_origin(origin: str | None, host: str | None) -> bool:
    """A websocket opened by a page of this server: its Origin names this server's Host."""
    if not origin or not host:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


def over_https(request: Any) -> bool:
    """The browser reached the server over TLS: directly (serve itself speaks plain HTTP) or
    through a reverse proxy that says so. A client that claims it falsely only makes its own
    cookie one its browser will not send over plain HTTP."""
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return bool(request.secure) or forwarded == "https"


def guard_middleware(bind_host: str, token: str | None) -> Any:
    from aiohttp import web

    loopback = is_loopback(bind_host)

    @web.middleware
    async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
        if loopback and not is_loopback(_hostname(request.host)):
            return web.Response(
                status=421, text="AWS View: this server only answers to a loopback host name.\n"
            )
        given = request.query.get("token") if token is not None else None
        if token is not None:
            offered = given or request.cookies.get(COOKIE) or ""
            if not hmac.compare_digest(offered.encode(), token.encode()):
                return web.Response(status=401, text="AWS View: a valid ?token= is required.\n")
        if token is not None and given and request.path != "/ws":
            # The token becomes the cookie and leaves the address: the same page without it.
            kept = [(k, v) for k, v in request.query.items() if k != "token"]
            # One leading slash: `//host/…` would send the browser to another server.
            path = "/" + request.path.lstrip("/")
            location = request.rel_url.with_path(path).with_query(kept)
            response = web.Response(status=303, headers={"Location": str(location)})
            response.set_cookie(
                COOKIE,
                token,
                path="/",
                max_age=COOKIE_MAX_AGE_S,
                httponly=True,
                samesite="Strict",
                secure=over_https(request),
            )
            return response
        if request.path == "/ws" and not same_origin(request.headers.get("Origin"), request.host):
            return web.Response(
                status=403, text="AWS View: the screen is only for pages of this server.\n"
            )
        return await handler(request)

    return middleware


def app_command(watch_args: Sequence[str], command: str = "watch") -> str:
    """The command textual-serve runs per browser session: the viewer in presenter mode."""
    # `exec`: textual-serve starts it through a shell; the viewer must be the process it stops.
    return "exec " + shlex.join(
        [sys.executable, "-m", "awsview", command, "--presenter", *watch_args]
    )


def make_server(
    host: str,
    port: int,
    token: str | None,
    command: str,
    font_size: int = 18,
    title: str = "AWS View",
    max_sessions: int = MAX_SESSIONS,
    rate_dir: str | None = None,
) -> Any:
    """The server; ``rate_dir``: the shared rate budget every session draws on."""
    from aiohttp import WSCloseCode, web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    full = (
        f"AWS View: {max_sessions} screen{'s are' if max_sessions != 1 else ' is'} open already "
        f"(--max-sessions {max_sessions}); close one, then reload this page."
    )

    class Session(AppService):
        """One browser tab's viewer process. textual-serve asks it to quit when the tab goes and
        then waits for it forever; here a viewer that has not quit in time is terminated, then
        killed, so a session never outlives its browser or its server."""

        _stopping: asyncio.Task[None] | None = None

        def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
            environment = super()._build_environment(width, height)
            if rate_dir is not None:
                environment[RATE_DIR_ENV] = rate_dir
            return environment

        async def set_terminal_size(self, width: int, height: int) -> None:
            # The browser says its window's size; nothing bounds it but this.
            await super().set_terminal_size(
                _cells(width, 80, MAX_COLUMNS), _cells(height, 24, MAX_ROWS)
            )

        async def stop(self) -> None:
            # Both the websocket's handler and the server's shutdown stop a session: once.
            if self._stopping is None:
                self._stopping = asyncio.ensure_future(self._stop())
            await asyncio.shield(self._stopping)

        async def _stop(self) -> None:
            task, process = self._task, self._process
            if task is None:
                return
            try:
                await asyncio.wait_for(asyncio.shield(super().stop()), STOP_GRACE_S)
            except (TimeoutError, OSError):  # stuck, or its pipes already broke
                pass
            self._task = None
            if process is not None and process.returncode is None:
                process.terminate()  # its lifeline ends it within two seconds, even if stuck
                try:
                    await asyncio.wait_for(process.wait(), STOP_GRACE_S)
                except TimeoutError:
                    process.kill()
                    await process.wait()
            if not task.done():  # still forwarding to a browser that stopped reading
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    class GuardedServer(Server):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.sessions: dict[web.WebSocketResponse, Session] = {}  # the open ones

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(guard_middleware(host, token))
            return app

        async def handle_index(self, request: web.Request) -> Any:
            if len(self.sessions) >= max_sessions:
                return web.Response(status=503, text=full + "\n")
            # The page's websocket URL: the address the browser used (a bind address such as
            # 0.0.0.0 is not one a browser can reach).
            scheme = "https" if over_https(request) else request.scheme
            self.public_url = f"{scheme}://{request.host}"
            if "fontsize" not in request.query:
                request = request.clone(rel_url=request.rel_url.update_query(fontsize=font_size))
            return await super().handle_index(request)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            # textual-serve's own handler, with Session (stop with a deadline) as the app service.
            websocket = web.WebSocketResponse(heartbeat=15)
            width = _cells(request.query.get("width"), 80, MAX_COLUMNS)
            height = _cells(request.query.get("height"), 24, MAX_ROWS)
            if len(self.sessions) >= max_sessions:
                # A page opened before the last place was taken: its screen says why it is shut.
                await websocket.prepare(request)
                await websocket.close(code=WSCloseCode.TRY_AGAIN_LATER, message=full.encode())
                return websocket
            # Counted before the first await, so two tabs opening at once cannot both take the
            # last place.
            session = Session(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            self.sessions[websocket] = session
            try:
                await websocket.prepare(request)
                await session.start(width, height)
                await self._process_messages(websocket, session)
            except asyncio.CancelledError:
                await websocket.close()
            except Exception as exc:  # one broken session must not take the server down
                import logging

                logging.getLogger("awsview.cli.serve").warning("session ended: %s", exc)
            finally:
                await session.stop()
                self.sessions.pop(websocket, None)
            return websocket

        async def on_startup(self, app: web.Application) -> None:
            pass  # run() says where to look, without textual-serve's banner

        async def on_shutdown(self, app: web.Application) -> None:
            """Stopping the server (SIGTERM, SIGHUP, ctrl+c) ends every open session first:
            aiohttp would wait up to a minute for each browser to hang up, its viewer polling on."""
            await asyncio.gather(
                *(self._end(ws, s) for ws, s in list(self.sessions.items())), return_exceptions=True
            )

        async def _end(self, websocket: web.WebSocketResponse, session: Session) -> None:
            await session.stop()
            try:  # a browser that does not answer the close is cut off
                await asyncio.wait_for(
                    websocket.close(code=WSCloseCode.GOING_AWAY, message=b"AWS View stopped"), 1.0
                )
            except (TimeoutError, OSError, RuntimeError):
                pass

        def initialize_logging(self) -> None:
            import logging

            # Problems only: one line per browser request would bury what the terminal says.
            logging.basicConfig(level=logging.WARNING, format="awsview serve: %(message)s")
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    return GuardedServer(command, host=host, port=port, title=title)


def _cells(value: object, default: int, most: int) -> int:
    """A size in cells from a browser: a whole number from 1 to ``most``."""
    try:
        return max(1, min(most, int(value or default)))  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return default


def watch_args(args: argparse.Namespace) -> list[str]:
    """The viewer options `awsview serve` passes on to each session."""
    out: list[str] = []
    for option in ("lab", "prefix", "profile", "endpoint_url", "region", "theme"):
        value = getattr(args, option, None)
        if value:
            out += [f"--{option.replace('_', '-')}", str(value)]
    return out


def run(args: argparse.Namespace) -> int:
    if record_taken(args):
        return fail(f"{args.record} already exists; record into a new file", EXIT_USAGE)
    # Each session checks the target again; this says it once, before serving.
    return serve(
        args, check_target=None if args.roster is not None else lambda: checked_target(args)
    )


def serve(args: argparse.Namespace, check_target: Any = None) -> int:
    """Check everything that can be checked before binding, then serve.
    ``check_target`` raises ConfigError when the AWS configuration cannot work."""
    from awsview import labspec

    token = check_token(args.host, given_token(args.token))
    if not 1 <= args.port <= 65535:
        raise ServeError(f"--port must be between 1 and 65535, not {args.port}")
    if not 8 <= args.font_size <= 64:
        raise ServeError(f"--font-size must be between 8 and 64, not {args.font_size}")
    if not 1 <= args.max_sessions <= 64:
        raise ServeError(f"--max-sessions must be between 1 and 64, not {args.max_sessions}")
    if args.roster is not None:
        command = _class_command(args.roster, args.theme)
    else:
        if args.lab:
            labspec.load(args.lab)
        if check_target is not None:
            check_target()
        command = app_command(watch_args(args))
    # One rate budget for every session and the recorder: this directory of shared buckets,
    # named to each of them by the environment (this process's own too, for the recorder).
    with tempfile.TemporaryDirectory(prefix="awsview-serve-rates-") as rates:
        os.environ[RATE_DIR_ENV] = rates
        return _serve_with(args, token, command, rates)


def _serve_with(args: argparse.Namespace, token: str | None, command: str, rates: str) -> int:
    """Serve until stopped, each session's viewer running ``command``; the exit status."""
    server = make_server(
        args.host,
        args.port,
        token,
        command,
        args.font_size,
        title="AWS View · class" if args.roster else "AWS View",
        max_sessions=args.max_sessions,
        rate_dir=rates,
    )
    if getattr(args, "record", None) is not None:
        try:
            _record_in_background(args)
        except Exception as exc:  # RecordingError: the file exists or cannot be written
            return fail(str(exc), EXIT_USAGE)
    where = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else where}:{args.port}/"
    print(f"AWS View presenter screen on {url}{'?token=' + token if token else ''}", flush=True)
    print(
        "  read-only: the browser can look around, never change anything · Ctrl+C stops", flush=True
    )
    # textual-serve stops gracefully on SIGINT and SIGTERM; a closed terminal (SIGHUP) too.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # the loop textual-serve's serve() picks up
    loop.add_signal_handler(signal.SIGHUP, server.request_exit)
    try:
        server.serve()
    except OSError as exc:
        return fail(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}", EXIT_FAILURE)
    return 0


def _record_in_background(args: argparse.Namespace) -> None:
    """`serve --record FILE`: one recording of what the screens show, made by the server itself
    (each browser tab has a viewer process of its own; they must not share a file). Its own
    read-only polling, in a thread, for as long as the server runs."""
    import asyncio
    import threading

    from awsview.aws.session import Target
    from awsview.recording.follow import ClassRecorder, open_recording, record_headless

    writer = open_recording(args.record, "serve")
    if args.roster is not None:
        from awsview.classroom.monitor import ClassMonitor, load_roster

        recording = ClassRecorder(writer)
        monitor = ClassMonitor(
            load_roster(args.roster), on_update=recording.status, on_model=recording.model
        )
        work = monitor.run()
    else:
        target = Target(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
        work = record_headless(target, args.lab, args.prefix, writer)
    threading.Thread(target=asyncio.run, args=(work,), name="awsview-record", daemon=True).start()
    print(f"  recording to {args.record}", flush=True)


def _class_command(roster: Path, theme: str | None) -> str:
    from awsview.classroom.monitor import RosterError, load_roster

    try:
        load_roster(roster)
    except RosterError as exc:
        raise ServeError(str(exc)) from None
    extra = ["--theme", theme] if theme else []
    return "exec " + shlex.join(
        [
            sys.executable,
            "-m",
            "awsview",
            "class",
            str(Path(roster).resolve()),
            "--presenter",
            *extra,
        ]
    )
