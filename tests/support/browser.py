"""A real headless Chromium driven over the DevTools protocol (Debian's `chromium` package).

Enough of it to open a page, read what a `textual-serve` page received on its websocket (the
terminal bytes the browser draws), press keys and take a screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import re
import shutil
import subprocess
import tempfile
from typing import Any

# Before any page script runs: keep every byte the screen's websocket delivers.
RECORD_WEBSOCKET = """
(() => {
  const Native = window.WebSocket;
  window.__screenBytes = [];
  window.WebSocket = function (url, protocols) {
    const socket = new Native(url, protocols);
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") window.__screenBytes.push(new Uint8Array(event.data));
    });
    window.__screenSocket = socket;
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
})();
"""
SCREEN_TEXT = """
(() => {
  const parts = window.__screenBytes || [];
  let size = 0; for (const p of parts) size += p.length;
  const all = new Uint8Array(size); let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return new TextDecoder().decode(all);
})()
"""
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """``async with Browser() as page: await page.open(url)``."""

    def __init__(self, width: int = 1400, height: int = 1000):
        self.size = (width, height)
        self._proc: subprocess.Popen[str] | None = None
        self._ws: Any = None
        self._http: Any = None
        self._next = 0

    async def __aenter__(self) -> Browser:
        import aiohttp

        binary = chromium_path()
        if binary is None:
            raise RuntimeError("chromium is not installed (make test installs it)")
        self._profile = tempfile.mkdtemp(prefix="awsview-chromium-")
        self._proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--hide-scrollbars",
                f"--window-size={self.size[0]},{self.size[1]}",
                f"--user-data-dir={self._profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        endpoint = await asyncio.wait_for(asyncio.to_thread(self._devtools_endpoint), 30)
        self._http = aiohttp.ClientSession()
        port = re.search(r":(\d+)/", endpoint).group(1)
        targets = await (await self._http.get(f"http://127.0.0.1:{port}/json/list")).json()
        page = next(t for t in targets if t["type"] == "page")
        self._ws = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        await self.call("Page.enable")
        await self.call("Page.addScriptToEvaluateOnNewDocument", source=RECORD_WEBSOCKET)
        return self

    def _devtools_endpoint(self) -> str:
        assert self._proc is not None and self._proc.stderr is not None
        for line in self._proc.stderr:
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                return found.group(1)
        raise RuntimeError("chromium exited before opening its DevTools port")

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        shutil.rmtree(self._profile, ignore_errors=True)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        await self._ws.send_json({"id": ident, "method": method, "params": params})
        while True:
            message = await asyncio.wait_for(self._ws.receive_json(), 30)
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    async def open(self, url: str) -> None:
        await self.call("Page.navigate", url=url)

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def screen_text(self) -> str:
        """What the page's terminal was sent so far, escape sequences removed."""
        return ANSI.sub("", await self.evaluate(SCREEN_TEXT) or "")

    async def wait_for_text(self, *needles: str, timeout: float = 30.0) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        text = ""
        while loop.time() < deadline:
            text = await self.screen_text()
            if all(n in text for n in needles):
                return text
            await asyncio.sleep(0.25)
        missing = [n for n in needles if n not in text]
        raise AssertionError(f"the browser never showed {missing}; it got {len(text)} characters")

    async def focus_terminal(self) -> None:
        await self.evaluate("document.querySelector('.xterm-helper-textarea').focus()")

    async def type(self, text: str) -> None:
        """Printable characters, as typed into the terminal."""
        await self.focus_terminal()
        await self.call("Input.insertText", text=text)

    async def press(self, key: str, code: str, text: str = "", modifiers: int = 0) -> None:
        """One key press (modifiers: 2 = Ctrl)."""
        await self.focus_terminal()
        for kind in ("keyDown", "keyUp"):
            await self.call(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=code,
                text=text if kind == "keyDown" else "",
                modifiers=modifiers,
                windowsVirtualKeyCode=ord(key.upper()) if len(key) == 1 else 0,
            )

    async def screenshot(self) -> bytes:
        return base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])
