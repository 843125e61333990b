"""A real headless Chromium driven over the Chrome DevTools Protocol (its
`--remote-debugging-port` websocket, with the `websocket-client` package the kubernetes client
already brings), and the built site served from a local http.server on 127.0.0.1.

Everything waits on events (the DevTools line on stderr, Page.loadEventFired, a DOM mutation);
the bounds only turn a hang into a failure.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import websocket

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# The machine's flags: no sandbox (root in a container), no network of the browser's own.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
DEVTOOLS_LINE = re.compile(r"DevTools listening on (ws://\S+)")
START_S = 60.0  # Chromium's first start on a cold, loaded machine
EVENT_S = 60.0  # any one page load, command answer or awaited DOM change


def find_browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class SiteServer:
    """`directory` over HTTP on 127.0.0.1, an ephemeral port, until the `with` ends."""

    def __init__(self, directory: Path) -> None:
        handler = functools.partial(QuietHandler, directory=str(directory))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class Browser:
    """One headless Chromium with a fresh profile and one page to drive."""

    def __init__(self, executable: str) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="mlcc-docs-chromium-")
        self._process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its helpers (renderer, crashpad) are stopped with it
        )
        self._stderr: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self._socket: websocket.WebSocket | None = None
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self._stderr.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def __enter__(self) -> Self:
        try:
            self._connect()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _connect(self) -> None:
        browser_ws = self._devtools_url()
        port = int(browser_ws.split(":")[2].split("/")[0])
        new = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(new, timeout=EVENT_S) as answer:
            target = json.load(answer)
        self._socket = websocket.create_connection(
            target["webSocketDebuggerUrl"], timeout=EVENT_S, suppress_origin=True
        )
        self.send("Page.enable")
        self.send("Runtime.enable")

    def _devtools_url(self) -> str:
        while True:
            try:
                line = self._lines.get(timeout=START_S)
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(
                    f"chromium printed no DevTools address within {START_S:.0f} s; its stderr:\n"
                    + "".join(self._stderr[-20:])
                )
            if match := DEVTOOLS_LINE.search(line):
                return match.group(1)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._socket is not None:
            with contextlib.suppress(Exception):
                self._socket.close()
        self._signal_group(signal.SIGTERM)
        try:
            self._process.wait(timeout=EVENT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        # A helper that outlived the browser still writes into the profile; none may be left.
        self._signal_group(signal.SIGKILL)
        self._remove_profile()

    def _signal_group(self, number: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, number)

    def _remove_profile(self) -> None:
        deadline = time.monotonic() + EVENT_S
        while True:
            try:
                self._profile.cleanup()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    # -- the protocol --------------------------------------------------------------------------

    def _receive(self) -> dict[str, Any]:
        assert self._socket is not None
        message: dict[str, Any] = json.loads(self._socket.recv())
        return message

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One command; its result once its answer arrives (events before it are kept)."""
        assert self._socket is not None
        self._next_id += 1
        self._socket.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_event(self, method: str) -> dict[str, Any]:
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                del self.events[: index + 1]
                return event
        while True:
            message = self._receive()
            if message.get("method") == method:
                self.events.clear()
                return message
            self.events.append(message)

    def navigate(self, url: str) -> None:
        self.events.clear()
        answer = self.send("Page.navigate", url=url)
        assert "errorText" not in answer, f"{url}: {answer['errorText']}"
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression; a promise is awaited."""
        answer = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in answer:
            raise AssertionError(f"{expression[:80]}...: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def insert_text(self, text: str) -> None:
        """As typing does: input events on the focused element."""
        self.send("Input.insertText", text=text)

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
