"""A local SageMaker endpoint for black-box runs of `mlcc optimize` (127.0.0.1, JSON 1.1).

Every request is checked against the botocore service model: required members, unknown
members and types (botocore's own validator), plus the enums, patterns, lengths and list sizes
that botocore does not check client-side. A request that breaks the model fails the test. The
replies are scripted per operation; they may be anything, including malformed bodies.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import botocore.session
from botocore.model import ListShape, MapShape, Shape, StructureShape
from botocore.validate import ParamValidator

MODEL = botocore.session.get_session().get_service_model("sagemaker")
# Java's Unicode classes as the SageMaker model uses them (inside [...]), in Python's syntax;
# \w is a little wider than \p{L} (it also takes digits and "_", which the patterns allow too).
_JAVA_CLASSES = {r"\p{L}": r"\w", r"\p{Z}": r"\s", r"\p{N}": r"\d"}


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] = field(default_factory=dict)

    def payload(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


def error(code: str, message: str, status: int = 400) -> Reply:
    return Reply(status, {"__type": code, "message": message})


Script = Callable[[dict[str, Any]], Reply]


@dataclass
class LocalSageMaker:
    url: str = ""
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    scripts: dict[str, Script] = field(default_factory=dict)

    def on(self, operation: str, script: Script | Reply) -> None:
        self.scripts[operation] = script if callable(script) else (lambda _request: script)

    def operations(self) -> list[str]:
        return [operation for operation, _ in self.requests]

    def handle(self, operation: str, request: dict[str, Any]) -> Reply:
        self.requests.append((operation, request))
        problems = model_violations(operation, request)
        self.violations += [f"{operation}: {p}" for p in problems]
        if problems:
            return error("ValidationException", "; ".join(problems))
        script = self.scripts.get(operation)
        if script is None:
            self.violations.append(f"{operation}: not expected by the test")
            return error("InternalFailure", f"{operation} not scripted", 500)
        return script(request)


def model_violations(operation: str, request: dict[str, Any]) -> list[str]:
    try:
        shape = MODEL.operation_model(operation).input_shape
    except Exception as failure:
        return [f"unknown operation ({failure})"]
    report = ParamValidator().validate(request, shape)
    problems = [report.generate_report()] if report.has_errors() else []
    return problems + _constraint_violations(request, shape, operation)


def _constraint_violations(value: Any, shape: Shape, path: str) -> list[str]:
    meta, found = shape.metadata, []
    if isinstance(shape, StructureShape) and isinstance(value, dict):
        for name, member in shape.members.items():
            if name in value:
                found += _constraint_violations(value[name], member, f"{path}.{name}")
    elif isinstance(shape, ListShape) and isinstance(value, list):
        found += _size(len(value), meta, path)
        for index, item in enumerate(value):
            found += _constraint_violations(item, shape.member, f"{path}[{index}]")
    elif isinstance(shape, MapShape) and isinstance(value, dict):
        for key, item in value.items():
            found += _constraint_violations(item, shape.value, f"{path}[{key}]")
    elif isinstance(value, str):
        found += _size(len(value), meta, path)
        if shape.enum and value not in shape.enum:
            found.append(f"{path}: {value!r} not in {shape.enum}")
        if "pattern" in meta and not re.fullmatch(_python_pattern(meta["pattern"]), value):
            found.append(f"{path}: {value!r} does not match {meta['pattern']}")
    elif isinstance(value, int) and not isinstance(value, bool):
        found += _size(value, meta, path)
    return found


def _size(size: int, meta: dict[str, Any], path: str) -> list[str]:
    low, high = meta.get("min"), meta.get("max")
    if (low is not None and size < low) or (high is not None and size > high):
        return [f"{path}: {size} outside {low}..{high}"]
    return []


def _python_pattern(pattern: str) -> str:
    for java, python in _JAVA_CLASSES.items():
        pattern = pattern.replace(java, python)
    return pattern


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        target = self.headers.get("X-Amz-Target", "")
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        reply = self.server.fake.handle(target.removeprefix("SageMaker."), body)
        payload = reply.payload()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: Any) -> None:
        return


class _Server(ThreadingHTTPServer):
    fake: LocalSageMaker


@contextmanager
def local_sagemaker() -> Iterator[LocalSageMaker]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = LocalSageMaker(url=f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
