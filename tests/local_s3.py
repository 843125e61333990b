"""S3 in the local AWS (tests/local_aws.py): REST-XML requests read with botocore's S3 model.

boto3 reaches a 127.0.0.1 endpoint with path-style addressing (`/{Bucket}/{Key+}`): botocore's
S3 endpoint rules use the path style for an IP address. An operation is the one whose method
and URI template match and whose literal query (`?list-type=2`) the request carries, the most
specific first, among those whose required headers and query members it carries; the round
trip compares the path and query botocore's serializer makes of the decoded parameters with
what arrived. A blob payload (PutObject's Body) is the request's body. Replies: bytes as they
are with the script's headers (GetObject's body, ETag, Content-Length), a dict as the
operation's XML output, an error as S3's `<Error><Code/><Message/></Error>`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Protocol
from urllib.parse import parse_qs

import aws_wire
import botocore.session
from botocore.model import OperationModel
from botocore.serialize import create_serializer

MODEL = botocore.session.get_session().get_service_model("s3")
NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
# The root element of each output the fake writes (S3's API reference, "Response Syntax").
ROOTS = {"ListObjectsV2": "ListBucketResult"}


class ArrivedRequest(Protocol):
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


def decode(arrived: ArrivedRequest) -> tuple[OperationModel, dict[str, Any]]:
    query = parse_qs(arrived.query, keep_blank_values=True)
    found: list[tuple[int, OperationModel, dict[str, str]]] = []
    for name in MODEL.operation_names:
        operation = MODEL.operation_model(name)
        if operation.http.get("method") != arrived.method:
            continue
        template, _, literal = operation.http["requestUri"].partition("?")
        labels = aws_wire.match_uri(template, arrived.path)
        keys = [part.split("=")[0] for part in literal.split("&") if part]
        carried = labels is not None and all(key in query for key in keys)
        if carried and _has_required(operation, query, arrived.headers):
            found.append((len(keys), operation, labels))
    if not found:
        raise KeyError(f"no S3 operation is {arrived.method} {arrived.path}?{arrived.query}")
    _, operation, labels = max(found, key=lambda item: item[0])
    params = aws_wire.located_params(operation.input_shape, labels, query, arrived.headers, {})
    shape = operation.input_shape
    payload = shape.serialization.get("payload") if shape is not None else None
    if shape is not None and payload and shape.members[payload].type_name == "blob":
        params[payload] = arrived.body  # PutObject's Body: the request's bytes as they came
    return operation, params


def _has_required(
    operation: OperationModel, query: dict[str, list[str]], headers: dict[str, str]
) -> bool:
    """Whether the request carries every required header and query member of the operation:
    PUT /{Bucket}/{Key+} is PutObject, not CopyObject (x-amz-copy-source) or UploadPart
    (partNumber, uploadId)."""
    shape = operation.input_shape
    for name in shape.required_members if shape is not None else ():
        member = shape.members[name]
        where, wire = member.serialization.get("location"), str(member.serialization.get("name"))
        if where == "header" and wire.lower() not in headers:
            return False
        if where == "querystring" and wire not in query:
            return False
    return True


def round_trip_problems(
    operation: OperationModel, params: dict[str, Any], arrived: ArrivedRequest
) -> list[str]:
    expected = create_serializer("rest-xml").serialize_to_request(params, operation)
    path, _, literal = str(expected["url_path"]).partition("?")
    query = {k: [str(v)] for k, v in (expected["query_string"] or {}).items()}
    query |= parse_qs(literal, keep_blank_values=True)
    problems = []
    if expected["method"] != arrived.method or path != arrived.path:
        problems.append(f"sent {arrived.method} {arrived.path}, the model says {path}")
    if query != parse_qs(arrived.query, keep_blank_values=True):
        problems.append(f"query {arrived.query!r} is not the model's {query}")
    return problems


def xml_reply(operation: str, body: dict[str, Any], error_code: str) -> bytes:
    if error_code:
        root = ET.Element("Error")
        ET.SubElement(root, "Code").text = error_code
        ET.SubElement(root, "Message").text = str(body.get("message", ""))
        ET.SubElement(root, "RequestId").text = "local"
    else:
        root = ET.Element(ROOTS.get(operation, f"{operation}Result"), xmlns=NAMESPACE)
        shape = MODEL.operation_model(operation).output_shape
        if shape is not None:
            aws_wire.xml_members(root, body, shape)
    return ET.tostring(root, xml_declaration=True, encoding="utf-8")
