"""Debian's Firefox driven over WebDriver BiDi, for the web page's Firefox tests.

Playwright drives only its own Firefox build, which cannot be downloaded here; Firefox
itself speaks WebDriver BiDi on ``--remote-debugging-port``, a websocket protocol, so
this small client does it with ``websockets``: start a headless Firefox on a fresh
profile, open one page, evaluate scripts (results come back as JSON text), resize the
viewport and take screenshots.

The profile sends every request to a closed proxy on loopback except loopback itself,
and turns Firefox's own background services off: the browser never reaches beyond
this machine.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")

PREFS = {
    # everything but loopback goes to a closed port: no request leaves the machine
    "network.proxy.type": 1,
    "network.proxy.http": "127.0.0.1",
    "network.proxy.http_port": 9,
    "network.proxy.ssl": "127.0.0.1",
    "network.proxy.ssl_port": 9,
    "network.proxy.no_proxies_on": "127.0.0.1,localhost,[::1]",
    "network.proxy.allow_hijacking_localhost": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "app.update.enabled": False,
    "app.normandy.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.enabled": False,
    "services.settings.server": "http://127.0.0.1:9/",
    "browser.shell.checkDefaultBrowser": False,
}


class Firefox:
    """``async with Firefox() as ff: await ff.goto(url); await ff.eval("1 + 1")``."""

    def __init__(self, width: int = 1100, height: int = 800) -> None:
        self.size = (width, height)
        self.proc: asyncio.subprocess.Process | None = None
        self.ws: ClientConnection | None = None
        self.context = ""
        self._ids = itertools.count(1)
        self._profile = Path(tempfile.mkdtemp(prefix="arena-firefox-"))

    async def __aenter__(self) -> Firefox:
        assert FIREFOX is not None, "no firefox-esr"
        prefs = "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in PREFS.items())
        (self._profile / "user.js").write_text(prefs)
        self.proc = await asyncio.create_subprocess_exec(
            FIREFOX,
            "--headless",
            "--no-remote",
            "--remote-debugging-port=0",
            "--profile",
            str(self._profile),
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        url = await asyncio.wait_for(self._listening(), 60)
        self.ws = await connect(url + "/session", max_size=2**26)
        await self.cmd("session.new", {"capabilities": {}})
        tree = await self.cmd("browsingContext.getTree", {})
        self.context = tree["contexts"][0]["context"]
        await self.viewport(*self.size)
        return self

    async def _listening(self) -> str:
        assert self.proc is not None and self.proc.stderr is not None
        async for raw in self.proc.stderr:
            line = raw.decode(errors="replace").strip()
            if line.startswith("WebDriver BiDi listening on "):
                asyncio.get_running_loop().create_task(self._drain())
                return line.removeprefix("WebDriver BiDi listening on ")
        raise RuntimeError("firefox exited before listening")

    async def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        async for _ in self.proc.stderr:  # (its console chatter, not needed)
            pass

    async def __aexit__(self, *exc: object) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.cmd("session.end", {}), 5)
            await self.ws.close()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    async def cmd(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one command; its result (events that arrive meanwhile are skipped)."""
        assert self.ws is not None
        cid = next(self._ids)
        await self.ws.send(json.dumps({"id": cid, "method": method, "params": params}))
        while True:
            msg = json.loads(await self.ws.recv())
            if msg.get("id") != cid:
                continue
            if msg.get("type") == "error":
                raise RuntimeError(f"{method}: {msg.get('error')}: {msg.get('message')}")
            return msg["result"]

    async def goto(self, url: str) -> None:
        params = {"context": self.context, "url": url, "wait": "complete"}
        await self.cmd("browsingContext.navigate", params)

    async def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited if a promise), through JSON."""
        result = await self.cmd(
            "script.evaluate",
            {
                "expression": f"(async () => JSON.stringify(await ({expression})))()",
                "target": {"context": self.context},
                "awaitPromise": True,
            },
        )
        if result.get("type") == "exception":
            raise RuntimeError(f"script failed: {result['exceptionDetails'].get('text')}")
        value = result["result"]
        return None if value.get("type") != "string" else json.loads(value["value"])

    async def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = await self.eval(expression)
            if value:
                return value
            if loop.time() > deadline:
                raise AssertionError(f"never true in Firefox: {expression}")
            await asyncio.sleep(0.02)

    async def viewport(self, width: int, height: int) -> None:
        size = {"width": width, "height": height}
        await self.cmd("browsingContext.setViewport", {"context": self.context, "viewport": size})

    async def screenshot(self, path: Path) -> None:
        shot = await self.cmd("browsingContext.captureScreenshot", {"context": self.context})
        path.write_bytes(base64.b64decode(shot["data"]))
