"""A Kubernetes API server on 127.0.0.1 that plays a deploy story, for the real kubernetes client.

It serves what the deploy wait reads, shaped as the API serves it: the InferenceEndpointConfig
(GET and `?watch=true` streams of newline-delimited watch events), PodList, EventList (core/v1),
pod logs (`previous=true` for the crashed run, 400 when a container has none), Status bodies for
errors. A story is a list of `Scene`s, each shown from `at` seconds after the first request.
Answers can be turned into 401, 500, a dropped watch, no answer at all (`hang`), an answer sent a
byte at a time (`trickle_s`), or any raw answer (`raw`: status, content type, body) for
hostile-input tests.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlparse

import yaml
from bench_fake_engine import LoopbackServer, QuietServer

from mlcc.facts.operator import GROUP, PLURAL, VERSION

TOKEN = "fake-cluster-token"
NAMESPACE = "inference"
Answer = Literal["ok", "401", "500", "hang"]


@dataclass(frozen=True)
class Scene:
    at: float  # seconds after the first request
    endpoint: dict[str, Any] | None
    pods: Sequence[dict[str, Any]] = ()
    events: Sequence[dict[str, Any]] = ()
    logs: dict[tuple[str, str, bool], str] = field(default_factory=dict)  # (pod, container, prev)


@dataclass
class Behaviour:
    answer: Answer = "ok"
    drop_watch: bool = False  # close every watch stream at once, with no event
    raw: tuple[int, str, bytes] | None = None  # this answer to every request
    trickle_s: float | None = None  # answer one byte every `trickle_s` seconds
    # Answers any request itself when it returns True (hostile_kube.py): floods, endless
    # logs, pages, 410 and 429 answers, ... (handler, path, query, scene index).
    custom: Callable[[BaseHTTPRequestHandler, str, dict[str, str], int], bool] | None = None


def status_body(code: int, reason: str, message: str) -> bytes:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    return json.dumps(body).encode()


class FakeKubeApi(LoopbackServer):
    def __init__(self, scenes: Sequence[Scene], behaviour: Behaviour | None = None) -> None:
        assert scenes and scenes[0].at == 0
        self.scenes = list(scenes)
        self.behaviour = behaviour or Behaviour()
        self.requests: list[str] = []
        self.released = threading.Event()
        self._started: float | None = None
        self._lock = threading.Lock()
        self._serve(_handler(self))

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        super().__exit__(*exc)

    def scene_index(self) -> int:
        with self._lock:
            if self._started is None:
                self._started = time.monotonic()
        elapsed = time.monotonic() - self._started
        return max(i for i, scene in enumerate(self.scenes) if scene.at <= elapsed)

    def endpoint(self, index: int) -> dict[str, Any] | None:
        found = self.scenes[index].endpoint
        if found is None:
            return None
        shown = json.loads(json.dumps(found))
        shown.setdefault("metadata", {})["resourceVersion"] = str(100 + index)
        return dict(shown)

    def kubeconfig(self, path: Path, *, user: dict[str, Any] | None = None) -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": user if user is not None else {"token": TOKEN}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "current-context": "fake",
        }
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path


def _handler(api: FakeKubeApi) -> type[BaseHTTPRequestHandler]:
    custom_prefix = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
    core_prefix = f"/api/v1/namespaces/{NAMESPACE}"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # watch streams are chunked, as the API server sends them
        # As the API server (Go) does: without it the body waits for the ACK of the headers,
        # which the client delays by 40 ms, on every request.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            url = urlparse(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            with api._lock:
                api.requests.append(self.path)
            if api.behaviour.raw is not None:
                self._send(api.behaviour.raw[0], api.behaviour.raw[2], api.behaviour.raw[1])
                return
            if api.behaviour.answer == "hang":
                api.released.wait(30)
                return
            if self.headers.get("Authorization") != f"Bearer {TOKEN}" or (
                api.behaviour.answer == "401"
            ):
                self._send(401, status_body(401, "Unauthorized", "Unauthorized"))
                return
            if api.behaviour.answer == "500":
                self._send(500, status_body(500, "InternalError", "etcdserver: leader changed"))
                return
            index = api.scene_index()
            scene = api.scenes[index]
            if api.behaviour.custom is not None and api.behaviour.custom(
                self, url.path, query, index
            ):
                return
            if url.path == custom_prefix and query.get("watch") in ("true", "1", "True"):
                self._watch(query, index)
            elif url.path.startswith(custom_prefix + "/"):
                self._endpoint(url.path.rsplit("/", 1)[1], index)
            elif url.path == f"{core_prefix}/pods":
                self._list("PodList", scene.pods)
            elif url.path == f"{core_prefix}/events":
                about = query.get("fieldSelector", "").removeprefix("involvedObject.name=")
                named = [e for e in scene.events if e["involvedObject"]["name"] == about]
                self._list("EventList", named if about else scene.events)
            elif url.path.startswith(f"{core_prefix}/pods/") and url.path.endswith("/log"):
                self._log(url.path.split("/")[-2], query, scene)
            else:
                self._send(
                    404, status_body(404, "NotFound", f"the server could not find {url.path}")
                )

        def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if api.behaviour.trickle_s is None:
                self.wfile.write(body)
                return
            for index in range(len(body)):
                if api.released.wait(api.behaviour.trickle_s):
                    return
                self.wfile.write(body[index : index + 1])
                self.wfile.flush()

        def _endpoint(self, name: str, index: int) -> None:
            found = api.endpoint(index)
            if found is None or found["metadata"].get("name") != name:
                message = f'{PLURAL}.{GROUP} "{name}" not found'
                self._send(404, status_body(404, "NotFound", message))
                return
            self._send(200, json.dumps(found).encode())

        def _list(self, kind: str, items: Sequence[dict[str, Any]]) -> None:
            body = {"kind": kind, "apiVersion": "v1", "metadata": {}, "items": list(items)}
            self._send(200, json.dumps(body).encode())

        def _log(self, pod: str, query: dict[str, str], scene: Scene) -> None:
            previous = query.get("previous") in ("true", "True", "1")
            text = scene.logs.get((pod, query.get("container", ""), previous))
            if text is None:
                message = f'previous terminated container "{query.get("container")}" not found'
                self._send(400, status_body(400, "BadRequest", message))
                return
            self._send(200, text.encode(), "text/plain")

        def _watch(self, query: dict[str, str], index: int) -> None:
            """Events after `resourceVersion` until `timeoutSeconds`; closes to end the stream."""
            if api.behaviour.drop_watch:
                self.close_connection = True
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            since = int(query.get("resourceVersion") or 0)
            deadline = time.monotonic() + float(query.get("timeoutSeconds") or 5)
            try:
                while time.monotonic() < deadline and not api.released.is_set():
                    index = api.scene_index()
                    found = api.endpoint(index)
                    if found is not None and 100 + index > since:
                        line = json.dumps({"type": "MODIFIED", "object": found}).encode() + b"\n"
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                        self.wfile.flush()
                        since = 100 + index
                    time.sleep(0.02)
                self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the client stopped watching
                pass
            self.close_connection = True

    return Handler


__all__ = ["Behaviour", "FakeKubeApi", "QuietServer", "Scene"]
