"""A local AWS on 127.0.0.1: SageMaker, Service Quotas, EKS, EC2, Pricing, ECR, S3 on one port.

Clients reach it the way users redirect boto3: `AWS_ENDPOINT_URL` (or
`AWS_ENDPOINT_URL_<SERVICE>`). The service of a request is the one its SigV4 signature names
(the credential scope), so one URL serves them all, each in its own protocol: JSON 1.1
(SageMaker, Service Quotas, Pricing, ECR), REST-JSON (EKS), EC2 query and S3's REST-XML
(tests/local_s3.py: GetObject, ListObjectsV2, PutObject and the rest of its model, path-style;
tests/local_bucket.py keeps objects for them); what the
protocols share (URI labels, located members, XML elements) is in tests/aws_wire.py.

Every request is decoded with the service's botocore model and must pass three checks: botocore's
own validator (required and unknown members, types), the enums, patterns, lengths and list sizes
botocore does not check client-side, and a round trip: botocore's serializer, given the decoded
parameters, must produce the very request that arrived (so nothing the model lacks slipped in).
A request that fails any is a violation and the test fails.

Replies are scripted per (service, operation) as the operation's output in wire-shaped values
(timestamps as epoch seconds); the fake checks a dict reply against the output shape (problems
go to `reply_problems`, so a test can send malformed replies on purpose) and writes it in the
protocol's wire form: JSON, or EC2's XML.
"""

from __future__ import annotations

import json
import re
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import aws_wire
import botocore.session
import local_s3
from bench_fake_engine import LoopbackServer
from botocore.model import ListShape, MapShape, OperationModel, ServiceModel, Shape, StructureShape
from botocore.serialize import create_serializer
from botocore.validate import ParamValidator

SERVICES = ("sagemaker", "service-quotas", "eks", "ec2", "pricing", "ecr", "s3")
_SESSION = botocore.session.get_session()
MODELS: dict[str, ServiceModel] = {name: _SESSION.get_service_model(name) for name in SERVICES}
_BY_SIGNING_NAME = {model.signing_name: name for name, model in MODELS.items()}
_CREDENTIAL_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/(?P<region>[^/]+)/(?P<service>[^/]+)/")
# Java's Unicode classes as the models use them (inside [...]), in Python's syntax;
# \w is a little wider than \p{L} (it also takes digits and "_", which the patterns allow too).
_JAVA_CLASSES = {r"\p{L}": r"\w", r"\p{Z}": r"\s", r"\p{N}": r"\d"}


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] = field(default_factory=dict)  # bytes: sent as they are
    error_code: str = ""
    delay_s: float = 0.0  # wait this long before answering (a silent server)
    endless: bytes = b""  # sent again and again after the headers, no Content-Length
    chunked: bool = False  # the endless body in chunks (Transfer-Encoding: chunked)
    cut_by: int = 0  # a body this many bytes short of its Content-Length, then the connection ends
    headers: dict[str, str] = field(default_factory=dict)  # sent besides the protocol's own


def error(code: str, message: str, status: int = 400) -> Reply:
    return Reply(status, {"message": message}, error_code=code)


Script = Callable[[dict[str, Any]], Reply]


@dataclass(frozen=True)
class Call:
    service: str
    operation: str
    params: dict[str, Any]
    region: str  # from the signature's credential scope


@dataclass
class LocalAWS:
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    reply_problems: list[str] = field(default_factory=list)
    scripts: dict[tuple[str, str], Script] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, operation: str, script: Script | Reply, service: str = "sagemaker") -> None:
        self.scripts[(service, operation)] = (
            script if callable(script) else (lambda _request: script)
        )

    @property
    def requests(self) -> list[tuple[str, dict[str, Any]]]:
        return [(call.operation, call.params) for call in self.calls]

    def operations(self, service: str | None = None) -> list[str]:
        return [c.operation for c in self.calls if service in (None, c.service)]

    def handle(self, service: str, operation: str, params: dict[str, Any], region: str) -> Reply:
        with self.lock:
            self.calls.append(Call(service, operation, params, region))
        script = self.scripts.get((service, operation))
        if script is None:
            self.violations.append(f"{service} {operation}: not expected by the test")
            return error("InternalFailure", f"{operation} not scripted", 500)
        reply = script(params)
        if isinstance(reply.body, dict) and not reply.error_code:
            shape = MODELS[service].operation_model(operation).output_shape
            try:
                problems = (
                    shape_violations(reply.body, shape, f"{operation} reply") if shape else []
                )
            except Exception as failure:  # a value botocore cannot read at all (a year 10^12)
                problems = [f"{operation} reply: {failure!r}"]
            self.reply_problems += problems
        return reply


def shape_violations(value: dict[str, Any], shape: StructureShape, path: str) -> list[str]:
    report = ParamValidator().validate(value, shape)
    problems = [report.generate_report()] if report.has_errors() else []
    return problems + _constraint_violations(value, shape, path)


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
    elif isinstance(value, str) and shape.type_name == "string":
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


@dataclass(frozen=True)
class Arrived:
    method: str
    path: str  # as sent, still percent-encoded
    query: str
    headers: dict[str, str]  # lower-case names
    body: bytes


def decode(service: str, arrived: Arrived) -> tuple[OperationModel, dict[str, Any]]:
    """The operation and parameters of a request, read with the service's model."""
    model = MODELS[service]
    if model.protocol == "rest-xml":
        return local_s3.decode(arrived)
    if model.protocol == "json":
        target = arrived.headers.get("x-amz-target", "")
        prefix = f"{model.metadata['targetPrefix']}."
        operation = model.operation_model(target.removeprefix(prefix))
        return operation, json.loads(arrived.body or b"{}")
    if model.protocol == "rest-json":
        return _decode_rest_json(model, arrived)
    form = dict(parse_qsl(arrived.body.decode(), keep_blank_values=True))
    operation = model.operation_model(form.get("Action", ""))
    return operation, _decode_query(form, operation.input_shape, "") or {}


def _decode_rest_json(model: ServiceModel, arrived: Arrived) -> tuple[OperationModel, Any]:
    for name in model.operation_names:
        operation = model.operation_model(name)
        labels = _match_uri(operation, arrived.method, arrived.path)
        if labels is None:
            continue
        body = json.loads(arrived.body) if arrived.body else {}
        query = parse_qs(arrived.query, keep_blank_values=True)
        return operation, aws_wire.located_params(
            operation.input_shape, labels, query, arrived.headers, body
        )
    raise KeyError(f"no EKS operation is {arrived.method} {arrived.path}")


def _match_uri(operation: OperationModel, method: str, path: str) -> dict[str, str] | None:
    if operation.http.get("method") != method:
        return None
    return aws_wire.match_uri(operation.http["requestUri"].split("?")[0], path)


def _decode_query(form: dict[str, str], shape: Shape | None, prefix: str) -> Any:
    """EC2's form parameters (`InstanceType.1`, `Filter.1.Value.1`) back into values."""
    if isinstance(shape, StructureShape):
        found = {}
        for name, member in shape.members.items():
            wire = member.serialization.get("queryName") or _capitalized(
                member.serialization.get("name", name)
            )
            value = _decode_query(form, member, f"{prefix}{wire}")
            if value is not None:
                found[name] = value
        return found or None
    if isinstance(shape, ListShape):
        items, index = [], 1
        while any(key.startswith(f"{prefix}.{index}") for key in form):
            items.append(_decode_query(form, shape.member, f"{prefix}.{index}"))
            index += 1
        return items or None
    if shape is None or prefix.rstrip(".") not in form:
        return None
    return aws_wire.scalar(form[prefix.rstrip(".")], shape)


def _capitalized(name: str) -> str:
    return name[0].upper() + name[1:]


def round_trip_problems(
    service: str, operation: OperationModel, params: dict[str, Any], arrived: Arrived
) -> list[str]:
    """What differs between the request that arrived and botocore's serialization of `params`."""
    if MODELS[service].protocol == "rest-xml":
        return local_s3.round_trip_problems(operation, params, arrived)
    expected = create_serializer(MODELS[service].protocol).serialize_to_request(params, operation)
    problems = []
    if expected["method"] != arrived.method or expected["url_path"] != arrived.path:
        problems.append(
            f"sent {arrived.method} {arrived.path}, the model says "
            f"{expected['method']} {expected['url_path']}"
        )
    body = expected["body"]
    if isinstance(body, dict):  # EC2's form
        sent = dict(parse_qsl(arrived.body.decode(), keep_blank_values=True))
        if {k: str(v) for k, v in body.items()} != sent:
            problems.append(f"form {sent} is not the model's {body}")
    elif (json.loads(body) if body else {}) != (json.loads(arrived.body) if arrived.body else {}):
        problems.append(f"body {arrived.body!r} is not the model's {body!r}")
    query = expected["query_string"]
    if isinstance(query, dict) and _query_lists(query) != parse_qs(arrived.query):
        problems.append(f"query {arrived.query!r} is not the model's {query}")
    return problems


def _query_lists(query: dict[str, Any]) -> dict[str, list[str]]:
    return {k: [str(i) for i in v] if isinstance(v, list) else [str(v)] for k, v in query.items()}


def wire_reply(service: str, operation: str, reply: Reply) -> tuple[bytes, dict[str, str]]:
    """The reply's bytes and headers in the service's protocol."""
    model = MODELS[service]
    if model.protocol == "rest-xml":
        if isinstance(reply.body, bytes):
            return reply.body, {"Content-Type": "application/octet-stream", **reply.headers}
        xml = local_s3.xml_reply(operation, reply.body, reply.error_code)
        return xml, {"Content-Type": "application/xml", **reply.headers}
    if isinstance(reply.body, bytes):
        return reply.body, {"Content-Type": "application/json"}
    if model.protocol == "ec2":
        return _ec2_xml(model, operation, reply), {"Content-Type": "text/xml"}
    if model.protocol == "rest-json":
        headers = {"Content-Type": "application/json"}
        if reply.error_code:
            headers["x-amzn-ErrorType"] = reply.error_code
        return json.dumps(reply.body).encode(), headers
    body = {"__type": reply.error_code, **reply.body} if reply.error_code else reply.body
    return json.dumps(body).encode(), {"Content-Type": "application/x-amz-json-1.1"}


def _ec2_xml(model: ServiceModel, operation: str, reply: Reply) -> bytes:
    assert isinstance(reply.body, dict)
    if reply.error_code:
        root = ET.Element("Response")
        fault = ET.SubElement(ET.SubElement(root, "Errors"), "Error")
        ET.SubElement(fault, "Code").text = reply.error_code
        ET.SubElement(fault, "Message").text = str(reply.body.get("message", ""))
        ET.SubElement(root, "RequestID").text = "local"
    else:
        root = ET.Element(f"{operation}Response", xmlns=model.metadata["xmlNamespace"])
        ET.SubElement(root, "requestId").text = "local"
        shape = model.operation_model(operation).output_shape
        if shape is not None:
            aws_wire.xml_members(root, reply.body, shape)
    return ET.tostring(root, xml_declaration=True, encoding="utf-8")


def _handler(fake: LocalAWS, stopping: threading.Event) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def do_PUT(self) -> None:
            self._answer()

        def _answer(self) -> None:
            if self.headers.get("Expect", "").lower() == "100-continue":  # PutObject of a file:
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # S3 asks for the body
                self.wfile.flush()  # (botocore otherwise waits a second before sending it)
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            arrived = Arrived(
                self.command,
                parts.path,
                parts.query,
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(length),
            )
            try:
                service, operation, reply = self._dispatch(arrived)
            except Exception as failure:  # the fake's own bug: fail the test, answer anyway
                fake.violations.append(f"the fake failed on {arrived}: {failure!r}")
                service, operation = "sagemaker", ""
                reply = error("InternalFailure", repr(failure), 500)
            if reply.delay_s:
                stopping.wait(reply.delay_s)
            if reply.endless:
                self._endless(reply)
                return
            payload, headers = wire_reply(service, operation, reply)
            self.send_response(reply.status)
            for name, value in {**headers, "Content-Length": str(len(payload))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload[: len(payload) - reply.cut_by])

        def _endless(self, reply: Reply) -> None:
            """A body that never ends, until the client hangs up or the fake stops."""
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            if reply.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            piece = b"%x\r\n%s\r\n" % (len(reply.endless), reply.endless)
            try:
                while not stopping.is_set():
                    self.wfile.write(piece if reply.chunked else reply.endless)
            except OSError:
                return  # the client stopped reading

        def _dispatch(self, arrived: Arrived) -> tuple[str, str, Reply]:
            scope = _CREDENTIAL_SCOPE.search(arrived.headers.get("authorization", ""))
            service = _BY_SIGNING_NAME.get(scope["service"]) if scope else None
            if scope is None or service is None:
                fake.violations.append(f"unsigned or unknown service: {arrived.headers}")
                return "sagemaker", "", error("UnrecognizedClientException", "unsigned")
            try:
                operation, params = decode(service, arrived)
            except (KeyError, ValueError) as failure:
                fake.violations.append(f"{service}: cannot read the request ({failure})")
                return service, "", error("ValidationException", str(failure))
            shape = operation.input_shape
            problems = shape_violations(params, shape, operation.name) if shape else []
            if not problems:  # botocore's serializer only takes valid parameters
                problems = round_trip_problems(service, operation, params, arrived)
            if problems:
                fake.violations += [f"{service} {operation.name}: {p}" for p in problems]
                return service, operation.name, error("ValidationException", "; ".join(problems))
            reply = fake.handle(service, operation.name, params, scope["region"])
            return service, operation.name, reply

        def log_message(self, *_args: Any) -> None:
            return

    return Handler


class LocalAWSServer(LoopbackServer):
    def __init__(self) -> None:
        self._stopping = threading.Event()
        self.fake = LocalAWS()
        self._serve(_handler(self.fake, self._stopping))
        self.fake.url = self.url

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        super().__exit__(*exc)


@contextmanager
def local_aws() -> Iterator[LocalAWS]:
    """The fake, served on 127.0.0.1 while the `with` lasts."""
    with LocalAWSServer() as server:
        yield server.fake
