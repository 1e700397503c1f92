"""`awsview serve`: the presenter screen in a real headless Chromium, and its guard.

The browser test reads what the page's websocket delivered (the terminal bytes it draws),
presses keys in the page, and checks the screenshot it takes.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from awsview.cli.serve import ServeError, check_token, is_loopback, same_origin
from awsview.labs import get_lab
from awsview.labs.player import LabPlayer
from tests.support.browser import Browser, chromium_path
from tests.support.processes import free_port

pytestmark = pytest.mark.timeout(180)

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYzEXAMPLEKEY"  # what the viewer must never show


class _Unfollowed(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 3xx itself is the answer


_NO_REDIRECTS = urllib.request.build_opener(_Unfollowed)


class Served:
    """`awsview serve` in a subprocess, on a free loopback port."""

    def __init__(self, *args: str, env: dict | None = None):
        # The free port may be taken by a parallel worker before serve binds it: a few tries.
        for attempt in range(3):
            try:
                self._start(args, env)
                return
            except RuntimeError as exc:
                if attempt == 2 or "in use" not in str(exc):
                    raise

    def _start(self, args: tuple[str, ...], env: dict | None) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "awsview", "serve", "--port", str(self.port), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.banner = self.process.stdout.readline()
        deadline = time.monotonic() + 60  # a deadline on a busy machine, not a timing claim
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError(
                        f"serve did not start: {self.banner!r} {self.process.stderr.read()}"
                    ) from None
                time.sleep(0.1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def get(self, path: str = "", headers: dict | None = None) -> tuple[int, str, dict]:
        """One request, its redirect (if any) not followed."""
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with _NO_REDIRECTS.open(request, timeout=10) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), dict(exc.headers)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


# -- the token and the bind address --------------------------------------------------------


def test_a_token_is_required_off_loopback():
    assert check_token("127.0.0.1", None) is None
    assert check_token("::1", None) is None and check_token("localhost", None) is None
    with pytest.raises(ServeError, match="--token"):
        check_token("0.0.0.0", None)
    with pytest.raises(ServeError, match="--token"):
        check_token("192.168.1.20", None)
    with pytest.raises(ServeError, match="12 characters"):
        check_token("0.0.0.0", "short")
    assert check_token("0.0.0.0", "a-long-enough-token") == "a-long-enough-token"
    assert not is_loopback("example.com") and is_loopback("127.8.0.1")


def test_serving_to_the_network_without_a_token_is_refused_in_one_line(awsview):
    result = awsview("serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert result.returncode == 2
    assert "pass --token" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_serve_arguments_are_one_line_each(awsview, tmp_path):
    bad_roster = tmp_path / "class.toml"
    bad_roster.write_text("[[learner]\n")
    for args, message in (
        (["--lab", "nope"], "nope"),
        (["--class", str(bad_roster)], "class.toml"),
        (["--token", "short"], "12 characters"),
        (["--font-size", "2"], "--font-size"),
        (["--max-sessions", "0"], "--max-sessions must be between 1 and 64"),
    ):
        result = awsview("serve", "--port", str(free_port()), *args)
        assert result.returncode == 2, args
        assert message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_a_busy_port_is_one_line(awsview):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = awsview(
            "serve", "--port", str(busy.getsockname()[1]), "--endpoint-url", "http://127.0.0.1:9"
        )
    assert result.returncode == 1
    assert "cannot serve on 127.0.0.1" in result.stderr and "Traceback" not in result.stderr


def test_same_origin():
    assert same_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert not same_origin("http://evil.example", "127.0.0.1:8000")
    assert not same_origin(None, "127.0.0.1:8000")
    assert not same_origin("null", "127.0.0.1:8000")


def test_the_token_is_any_value_after_token(monkeypatch):
    """A random URL-safe token starts with '-' one time in 32: still the token, not an option."""
    from awsview.cli.main import UsageError, parse

    monkeypatch.delenv("AWSVIEW_TOKEN", raising=False)
    for value in ("-Kx3_tokenvalue", "--looks-like-an-option", "-h", "plain-token-value"):
        assert parse(["serve", "--token", value, "--port", "8001"]).token == value
        assert parse(["serve", f"--token={value}", "--port", "8001"]).token == value
        assert parse(["serve", "--port", "8001", "--token", value]).token == value
    with pytest.raises(UsageError, match="unrecognized arguments: -- --token x"):
        parse(["serve", "--", "--token", "x"])  # after --, nothing is an option
    with pytest.raises(UsageError, match="--token: expected one argument"):
        parse(["serve", "--token"])
    assert parse(["serve"]).token is None  # AWSVIEW_TOKEN is read by serve itself


def test_the_token_guards_every_route_and_becomes_a_cookie(starts_processes):
    token = "-" + secrets.token_urlsafe(16)  # one that starts with '-', as it can by chance
    served = Served("--token", token, "--endpoint-url", "http://127.0.0.1:9")
    try:
        assert f"?token={token}" in served.banner
        for path in ("", "static/js/textual.js", "ws", f"?token={token}x"):
            status, body, _ = served.get(path)
            assert status == 401, path
            assert "token" in body
        status, _, headers = served.get(f"?token={token}")
        cookie = headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        status, page, _ = served.get("", {"Cookie": cookie.split(";")[0]})
        assert status == 200 and 'data-font-size="18"' in page
        status, _, _ = served.get("static/js/textual.js", {"Cookie": cookie.split(";")[0]})
        assert status == 200
        # A page elsewhere cannot open the screen's websocket, even with the cookie.
        status, _, _ = served.get(
            "ws", {"Cookie": cookie.split(";")[0], "Origin": "http://evil.example"}
        )
        assert status == 403
    finally:
        served.stop()


def test_the_token_leaves_the_address_for_a_cookie_that_expires(starts_processes):
    """The address with the token is projected and kept in the browser's history: it is answered
    with a redirect to the same page without it, the token now in the cookie."""
    token = secrets.token_urlsafe(16)
    served = Served("--token", token, "--endpoint-url", "http://127.0.0.1:9")
    try:
        status, _, headers = served.get(f"?fontsize=30&token={token}")
        assert status == 303
        assert headers["Location"] == "/?fontsize=30"
        cookie = headers["Set-Cookie"]
        attributes = {a.strip().split("=")[0].lower(): a for a in cookie.split(";")}
        assert cookie.startswith(f"awsview_token={token};")
        assert "httponly" in attributes and attributes["samesite"].strip() == "SameSite=Strict"
        assert attributes["max-age"].strip() == "Max-Age=43200"
        assert "secure" not in attributes  # plain HTTP: a Secure cookie would never come back
        assert attributes["path"].strip() == "Path=/"
        # Behind a TLS reverse proxy the cookie only travels over TLS.
        _, _, headers = served.get(f"?token={token}", {"X-Forwarded-Proto": "https"})
        assert headers["Location"] == "/" and "Secure" in headers["Set-Cookie"]
        # Never to another server, whatever the path looks like.
        _, _, headers = served.get(f"/evil.example/?token={token}")
        assert headers["Location"] == "/evil.example/"
        # The page it leads to, with the cookie and no token in the address.
        status, page, _ = served.get("?fontsize=30", {"Cookie": cookie.split(";")[0]})
        assert status == 200 and 'data-font-size="30"' in page and token not in page
    finally:
        served.stop()


def test_loopback_answers_only_to_loopback_host_names(starts_processes):
    served = Served("--endpoint-url", "http://127.0.0.1:9")
    try:
        assert served.get()[0] == 200
        assert served.get(headers={"Host": "attacker.example"})[0] == 421  # DNS rebinding
        assert served.get("?fontsize=30")[1].count('data-font-size="30"') == 1
    finally:
        served.stop()


# -- in a real browser ---------------------------------------------------------------------


@pytest.mark.skipif(
    chromium_path() is None, reason="chromium is not installed (make test installs it)"
)
def test_presenter_screen_in_headless_chromium(starts_processes, emulator):
    player = LabPlayer(get_lab("q05"), endpoint_url=emulator.endpoint_url, log=lambda line: None)
    player.setup()
    player.play(until="connect")
    token = secrets.token_urlsafe(16)
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLEPRESENTER",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    served = Served(
        f"--token={token}", "--endpoint-url", emulator.endpoint_url, "--lab", "q05", env=env
    )
    try:
        shot, before, text = asyncio.run(_look(served.url + f"?token={token}"))
    finally:
        served.stop()
    assert SECRET not in text and "AKIAEXAMPLEPRESENTER" not in text
    assert "labex-q05-jobs" in text and "Checkpoints" in text
    (tmp_dir := os.environ.get("AWSVIEW_KEEP_SHOTS")) and open(
        os.path.join(tmp_dir, "presenter.png"), "wb"
    ).write(shot)
    _check_screenshot(shot, before)


async def _look(url: str) -> tuple[bytes, bytes, str]:
    async with Browser(1400, 1000) as page:
        before = await page.screenshot()
        await page.open(url)
        # A deadline, not a timing claim: with two CPU hogs, a benchmark and the suite on two
        # cores, the presenter's first done checkpoint came later than 30 s (the page had the
        # rest of the screen).
        text = await page.wait_for_text(
            "presenter (read-only)", "labex-q05-jobs", "✓", timeout=90.0
        )
        await asyncio.sleep(1.0)
        # Keys that would quit, open the palette or filter: a presenter screen ignores them.
        await page.press("q", "KeyQ", "q", modifiers=2)  # ctrl+q
        await page.press("c", "KeyC", "c", modifiers=2)  # ctrl+c
        await page.press("p", "KeyP", "p", modifiers=2)  # ctrl+p
        await page.type("/")
        await page.type("q")
        await asyncio.sleep(2.0)
        assert not await page.evaluate("document.body.classList.contains('-closed')"), (
            "the session ended"
        )
        assert await page.evaluate("window.__screenSocket.readyState") == 1
        after = await page.screen_text()
        new = after[len(text) :]
        assert "Search for commands" not in new and "filter every panel" not in new
        shot = await page.screenshot()
        # Keys do reach the app: `?` (navigation) opens the presenter's help.
        await page.type("?")
        after = await page.wait_for_text("Presenter screen")
        return shot, before, after


def _check_screenshot(png: bytes, blank: bytes) -> None:
    """The screenshot shows the app: the status line's text across the top, checkpoint marks in
    the theme's success green, and none of textual-serve's "Start" dialog."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.width == 1400 and image.height > 600
    assert png != blank
    width, height = image.size
    pixels = image.load()
    top = [pixels[x, y] for x in range(width) for y in range(0, 18)]
    bright = sum(1 for r, g, b in top if r + g + b > 500)
    assert bright > 400, f"no status line text across the top ({bright} bright pixels)"
    green = sum(
        1
        for x in range(0, width, 2)
        for y in range(0, height // 2, 2)
        if (lambda p: p[1] > 140 and p[1] > p[0] + 40 and p[1] > p[2] + 20)(pixels[x, y])
    )
    assert green > 20, f"no green checkpoint marks ({green})"


@pytest.mark.skipif(
    chromium_path() is None, reason="chromium is not installed (make test installs it)"
)
def test_class_view_served_in_headless_chromium(starts_processes, emulator, tmp_path):
    roster = tmp_path / "class.toml"
    roster.write_text(
        f'[[learner]]\nname = "Ada"\nendpoint_url = "{emulator.endpoint_url}"\nlab = "q05"\n\n'
        '[[learner]]\nname = "Cy"\nendpoint_url = "http://127.0.0.1:9"\nlab = "q05"\n'
    )
    served = Served("--class", str(roster))
    try:
        text = asyncio.run(_look_at_class(served.url))
    finally:
        served.stop()
    assert "2 learners" in text and "connection refused" in text


async def _look_at_class(url: str) -> str:
    async with Browser(1400, 1000) as page:
        await page.open(url)
        await page.wait_for_text("AWS View · class", "Ada", "Cy", "connection refused")
        await page.press("q", "KeyQ", "q", modifiers=2)  # ctrl+q: refused
        await page.type("q")
        await asyncio.sleep(1.5)
        assert not await page.evaluate("document.body.classList.contains('-closed')"), (
            "the session ended"
        )
        return await page.screen_text()


async def test_a_viewer_that_does_not_quit_is_killed_when_its_browser_goes(
    starts_processes, tmp_path
):
    """textual-serve asks a session's process to quit when the tab closes and then waits for it
    forever: a stuck viewer would keep running (and polling) with nobody watching."""
    import aiohttp
    from aiohttp import web

    from awsview.cli import serve

    stuck = tmp_path / "stuck.py"
    pid_file = tmp_path / "pid"
    stuck.write_text(
        "import os, sys, time\n"
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "sys.stdout.write('__GANGLION__\\n'); sys.stdout.flush()\n"
        "time.sleep(600)\n"
    )
    port = free_port()
    server = serve.make_server("127.0.0.1", port, None, f"exec {sys.executable} {stuck}")
    runner = web.AppRunner(await server._make_app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(
                f"http://127.0.0.1:{port}/ws?width=80&height=24",
                headers={"Origin": f"http://127.0.0.1:{port}"},
            ):
                deadline = time.monotonic() + 60
                while (
                    not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline
                ):
                    await asyncio.sleep(0.1)
                pid = int(pid_file.read_text())
            # The browser is gone: after the grace period (5 s), the process is too. Without the
            # kill it would sleep its 600 s; the deadline is generous for a busy machine.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                await asyncio.sleep(0.1)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
            else:
                os.kill(pid, 9)
                raise AssertionError("the stuck viewer outlived its browser session")
    finally:
        await runner.cleanup()


# -- sessions: how many, how large, and one rate budget ------------------------------------

RECORDING_APP = """\
import json, os, sys
out = {folder!r} + "/" + str(os.getpid())
with open(out + ".env", "w") as f:
    json.dump({{k: os.environ.get(k) for k in ("COLUMNS", "ROWS", "AWSVIEW_RATE_DIR")}}, f)
sys.stdout.write("__GANGLION__\\n")
sys.stdout.flush()
with open(out + ".stdin", "wb") as f:
    while chunk := os.read(0, 4096):
        f.write(chunk)
        f.flush()
"""


class InProcess:
    """`serve.make_server` in this event loop, each session a small app that writes down its
    environment and everything the server sends it."""

    def __init__(self, tmp_path, **options):
        self.folder = tmp_path / "sessions"
        self.folder.mkdir()
        app = tmp_path / "app.py"
        app.write_text(RECORDING_APP.format(folder=str(self.folder)))
        self.port = free_port()
        self.options = options
        self.command = f"exec {sys.executable} {app}"

    async def __aenter__(self):
        from aiohttp import web

        from awsview.cli import serve

        server = serve.make_server("127.0.0.1", self.port, None, self.command, **self.options)
        self.runner = web.AppRunner(await server._make_app())
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *exc):
        await self.runner.cleanup()

    def ws(self, http, width=80, height=24):
        return http.ws_connect(
            f"http://127.0.0.1:{self.port}/ws?width={width}&height={height}",
            headers={"Origin": f"http://127.0.0.1:{self.port}"},
        )

    async def sessions(self, count: int) -> list[dict]:
        """The environments of ``count`` sessions, once they have all started."""
        import json

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = []
            for path in self.folder.glob("*.env"):
                try:
                    found.append(json.loads(path.read_text()))
                except ValueError:
                    pass  # being written
            if len(found) >= count:
                return found
            await asyncio.sleep(0.1)
        raise AssertionError(f"{count} sessions did not start")

    async def received(self, needle: bytes) -> bytes:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for path in self.folder.glob("*.stdin"):
                if needle in (data := path.read_bytes()):
                    return data
            await asyncio.sleep(0.1)
        raise AssertionError(f"no session received {needle!r}")


@pytest.mark.process  # starts the CLI in a process of its own
async def test_sessions_are_capped_and_the_next_one_is_told_why(tmp_path):
    import aiohttp

    async with InProcess(tmp_path, max_sessions=2) as served, aiohttp.ClientSession() as http:
        async with served.ws(http), served.ws(http):
            await served.sessions(2)
            async with http.get(f"http://127.0.0.1:{served.port}/") as page:
                assert page.status == 503
                assert "2 screens are open already (--max-sessions 2)" in await page.text()
            async with served.ws(http) as third:
                message = await third.receive(timeout=30)
                assert message.type == aiohttp.WSMsgType.CLOSE
                assert message.data == aiohttp.WSCloseCode.TRY_AGAIN_LATER
                assert "--max-sessions 2" in message.extra
            assert len(list(served.folder.glob("*.env"))) == 2  # no third viewer started
        # Both tabs closed: their places are free again.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            async with http.get(f"http://127.0.0.1:{served.port}/") as page:
                if page.status == 200:
                    break
            await asyncio.sleep(0.2)
        else:
            raise AssertionError("the places of closed sessions stayed taken")


@pytest.mark.process  # starts the CLI in a process of its own
async def test_a_screen_cannot_be_made_larger_than_a_screen_can_be(tmp_path):
    """A browser says its size when the page opens and on every resize; 10000 x 5000 cells would
    have the viewer lay out and paint hundreds of MB for one frame."""
    import json

    import aiohttp

    from awsview.cli.serve import MAX_COLUMNS, MAX_ROWS

    async with InProcess(tmp_path) as served, aiohttp.ClientSession() as http:
        async with served.ws(http, width=10000, height=5000) as ws:
            (environment,) = await served.sessions(1)
            assert (environment["COLUMNS"], environment["ROWS"]) == (
                str(MAX_COLUMNS),
                str(MAX_ROWS),
            )
            await ws.send_str(json.dumps(["resize", {"width": 10000, "height": 5000}]))
            await ws.send_str(json.dumps(["resize", {"width": "x", "height": -3}]))
            await ws.send_str(json.dumps(["resize", {"width": 120, "height": 40}]))
            data = await served.received(b'"width": 120')
    resizes = [json.loads(m) for m in re.findall(rb'\{[^{}]*"resize"[^{}]*\}', data)]
    assert [(r["width"], r["height"]) for r in resizes] == [
        (MAX_COLUMNS, MAX_ROWS),
        (80, 1),
        (120, 40),
    ]


@pytest.mark.process  # starts the CLI in a process of its own
async def test_every_session_draws_on_the_servers_one_rate_budget(tmp_path):
    import aiohttp

    budget = str(tmp_path / "rates")
    async with (
        InProcess(tmp_path, rate_dir=budget) as served,
        aiohttp.ClientSession() as http,
    ):
        async with served.ws(http), served.ws(http):
            environments = await served.sessions(2)
    assert [e["AWSVIEW_RATE_DIR"] for e in environments] == [budget, budget]


@pytest.mark.process  # starts the CLI in a process of its own
async def test_awsview_serve_gives_its_sessions_a_private_rate_budget_it_removes():
    """End to end: the directory `serve` makes, named to each viewer by its environment."""
    import stat

    import aiohttp

    from tests.support.helpers import processes

    served = Served("--endpoint-url", "http://127.0.0.1:9")
    try:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(
                served.url + "ws?width=80&height=24", headers={"Origin": served.url[:-1]}
            ):
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    viewers = [p for p in processes() if p.ppid == served.process.pid]
                    if viewers:
                        break
                    await asyncio.sleep(0.1)
                (viewer,) = viewers
                environment = dict(
                    line.split("=", 1)
                    for line in open(f"/proc/{viewer.pid}/environ").read().split("\0")
                    if "=" in line
                )
                budget = environment["AWSVIEW_RATE_DIR"]
                assert stat.S_IMODE(os.stat(budget).st_mode) == 0o700
    finally:
        served.stop()
    assert not os.path.exists(budget)
