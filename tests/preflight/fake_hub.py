"""A fake Hugging Face Hub on 127.0.0.1 serving the vendored model files (models/, SOURCES.md).

It answers the two routes `huggingface_hub` uses for preflight, the way the Hub does:
`HEAD|GET /<repo>/resolve/<revision>/<file>` (X-Repo-Commit, ETag, Content-Length; 404 with
X-Error-Code EntryNotFound / RepoNotFound / RevisionNotFound; 401/403 GatedRepo) and
`GET /api/models/<repo>/revision/<revision>?blobs=true` (siblings with sizes). A repository
with a vendored `model.safetensors.header.json` serves `model.safetensors` as that header alone
(8 bytes of length, then the JSON; ranged GETs answered 206), as `get_safetensors_metadata`
reads it; the file is not listed among the siblings (no weight size comes from it). Repositories can
be made gated, slow, silent, or answer HTML, a 10 MB config, invalid UTF-8 or a redirect loop;
`HubBehaviour.answers` replaces any file's (or the API's, file name `api`) answer with raw bytes,
status and headers: the hostile corpus (tests/preflight/hostile/).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bench_fake_engine import LoopbackServer

MODELS = Path(__file__).parent / "models"
HEADER_SUFFIX = ".header.json"  # model.safetensors.header.json: served as model.safetensors
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "hf_fake_reader"


def vendored_repos() -> dict[str, dict[str, bytes]]:
    """repo id -> file name -> bytes, from tests/preflight/models/<org>/<name>/."""
    repos: dict[str, dict[str, bytes]] = {}
    for path in sorted(MODELS.glob("*/*/*.json")):
        repo = f"{path.parent.parent.name}/{path.parent.name}"
        repos.setdefault(repo, {})[path.name] = path.read_bytes()
    return repos


def listed_sizes() -> dict[str, dict[str, object]]:
    table = json.loads((MODELS / "files.json").read_text())
    return {k: v for k, v in table.items() if k != "about"}


@dataclass(frozen=True)
class HubAnswer:
    """One answer as it goes on the wire (Content-Length is added unless `headers` has one)."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class HubBehaviour:
    gated: set[str] = field(default_factory=set)  # readable only with TOKEN
    slow: dict[str, float] = field(default_factory=dict)  # repo -> seconds before answering
    malformed: dict[str, str] = field(default_factory=dict)  # repo -> html|huge|utf8|redirect
    silent: bool = False  # accept connections, never answer
    # (repo, file name or "api") -> the answer sent instead of the vendored one
    answers: dict[tuple[str, str], HubAnswer] = field(default_factory=dict)


class FakeHub(LoopbackServer):
    def __init__(self, behaviour: HubBehaviour | None = None) -> None:
        self.behaviour = behaviour or HubBehaviour()
        self.repos = vendored_repos()
        self.sizes = listed_sizes()
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, Authorization
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                hub.answer(self, head=True)

            def do_GET(self) -> None:
                hub.answer(self, head=False)

        self._serve(Handler)

    def answer(self, handler: BaseHTTPRequestHandler, *, head: bool) -> None:
        with self._lock:
            self.requests.append(
                (handler.command, handler.path, handler.headers.get("Authorization"))
            )
        if self.behaviour.silent:
            self.stopping.wait()  # until the test's `with` ends
            return
        path = unquote(urlsplit(handler.path).path)
        if path.startswith("/api/models/"):
            repo, _, rest = path.removeprefix("/api/models/").partition("/revision/")
            self._api(handler, repo, rest)
            return
        parts = path.lstrip("/").split("/", 4)
        if len(parts) != 5 or parts[2] != "resolve":
            self._send(handler, 404, b"", {"X-Error-Code": "RepoNotFound"}, head)
            return
        repo, revision, filename = f"{parts[0]}/{parts[1]}", parts[3], parts[4]
        self._file(handler, repo, revision, filename, head)

    def _refusal(self, handler: BaseHTTPRequestHandler, repo: str) -> tuple[int, str] | None:
        if repo not in self.repos and repo not in self.sizes:
            return 401 if handler.headers.get("Authorization") is None else 404, "RepoNotFound"
        if repo in self.behaviour.gated:
            auth = handler.headers.get("Authorization")
            if auth is None:
                return 401, "GatedRepo"
            if auth != f"Bearer {TOKEN}":
                return 403, "GatedRepo"
        self.stopping.wait(self.behaviour.slow.get(repo, 0))
        return None

    def _file(
        self, handler: BaseHTTPRequestHandler, repo: str, revision: str, name: str, head: bool
    ) -> None:
        refusal = self._refusal(handler, repo)
        if refusal:
            self._send(handler, refusal[0], b"refused", {"X-Error-Code": refusal[1]}, head)
            return
        if revision not in ("main", COMMIT):
            self._send(handler, 404, b"", {"X-Error-Code": "RevisionNotFound"}, head)
            return
        answer = self.behaviour.answers.get((repo, name))
        if answer is not None:
            self._raw(handler, answer, head)
            return
        kind = self.behaviour.malformed.get(repo)
        if kind == "redirect":
            self._send(handler, 302, b"", {"Location": handler.path}, head)
            return
        body = self._body(repo, name, kind)
        if body is None:
            self._send(handler, 404, b"", {"X-Error-Code": "EntryNotFound"}, head)
            return
        etag = hashlib.sha256(body).hexdigest()
        headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{etag}"'}
        ranged = re.fullmatch(r"bytes=(\d+)-(\d+)", handler.headers.get("Range") or "")
        if ranged and name.endswith(".safetensors"):
            first, last = int(ranged[1]), min(int(ranged[2]), len(body) - 1)
            headers["Content-Range"] = f"bytes {first}-{last}/{len(body)}"
            self._send(handler, 206, body[first : last + 1], headers, head)
            return
        self._send(handler, 200, body, headers, head)

    def _body(self, repo: str, name: str, kind: str | None) -> bytes | None:
        if name == "config.json" and kind == "html":
            return b"<!DOCTYPE html><html><body>Hugging Face is down</body></html>"
        if name == "config.json" and kind == "huge":
            return b'{"pad": "' + b"x" * (10 * 1024 * 1024) + b'"}'
        if name == "config.json" and kind == "utf8":
            return b'{"hidden_size": "\xff\xfe"}'
        header = self.repos.get(repo, {}).get(name + HEADER_SUFFIX)
        if name.endswith(".safetensors") and header is not None:
            compact = json.dumps(json.loads(header), separators=(",", ":")).encode()
            return struct.pack("<Q", len(compact)) + compact
        return self.repos.get(repo, {}).get(name)

    def _api(self, handler: BaseHTTPRequestHandler, repo: str, revision: str) -> None:
        refusal = self._refusal(handler, repo)
        if refusal:
            self._send(handler, refusal[0], b"{}", {"X-Error-Code": refusal[1]}, False)
            return
        answer = self.behaviour.answers.get((repo, "api"))
        if answer is not None:
            self._raw(handler, answer, False)
            return
        vendored = self.repos.get(repo, {}).items()
        files = {n: len(body) for n, body in vendored if not n.endswith(HEADER_SUFFIX)}
        listed = dict(self.sizes.get(repo, {}))
        parameters = listed.pop("safetensors", None)
        files |= listed
        info: dict[str, object] = {
            "id": repo,
            "modelId": repo,
            "sha": COMMIT,
            "siblings": [{"rfilename": n, "size": s} for n, s in sorted(files.items())],
        }
        if isinstance(parameters, dict):
            info["safetensors"] = {"parameters": parameters, "total": sum(parameters.values())}
        self._send(handler, 200, json.dumps(info).encode(), {}, False)

    def _raw(self, handler: BaseHTTPRequestHandler, answer: HubAnswer, head: bool) -> None:
        body = answer.body
        headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha256(body).hexdigest()}"'}
        headers |= {"Content-Type": "application/json", **answer.headers}
        handler.send_response(answer.status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if not any(n.lower() == "content-length" for n in headers):
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if not head:
            # the client may stop reading (a bounded read): not the fake's fault
            with contextlib.suppress(OSError):
                handler.wfile.write(body)

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        headers: dict[str, str],
        head: bool,
    ) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        if not head:
            handler.wfile.write(body)
