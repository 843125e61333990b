"""What the local AWS's protocols share (tests/local_aws.py, tests/local_s3.py), read from botocore.

A REST request's URI labels (`/{Bucket}/{Key+}`), the members an input shape locates in the URI,
the query string, the headers (and, for REST-JSON, the body), the type of a value sent as text,
and an output structure written as XML elements (S3's REST-XML and EC2's query protocol both
name an element by the member's `locationName`, a list's items by its member's).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any
from urllib.parse import unquote

from botocore.model import ListShape, Shape, StructureShape


def match_uri(template: str, path: str) -> dict[str, str] | None:
    """The labels of a request URI template (without its query) in `path`, or None."""
    pattern = re.sub(r"\\\{(\w+)\\\+\\\}", r"(?P<\1>.+)", re.escape(template))
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", pattern)
    found = re.fullmatch(pattern, path)
    return None if found is None else {k: unquote(v) for k, v in found.groupdict().items()}


def located_params(
    shape: StructureShape | None,
    labels: dict[str, str],
    query: dict[str, list[str]],
    headers: dict[str, str],
    body: dict[str, Any],
) -> dict[str, Any]:
    """An input's members from where the model locates them: URI, query, header or JSON body."""
    params: dict[str, Any] = {}
    for member_name, member in (shape.members if shape else {}).items():
        where, wire = member.serialization.get("location"), member.serialization.get("name")
        if where == "uri" and wire in labels:
            params[member_name] = labels[wire]
        elif where == "querystring" and wire in query:
            values = query[wire]
            params[member_name] = (
                values if isinstance(member, ListShape) else scalar(values[0], member)
            )
        elif where == "header" and str(wire).lower() in headers:
            params[member_name] = scalar(headers[str(wire).lower()], member)
        elif where is None and member_name in body:
            params[member_name] = body[member_name]
    return params


def scalar(text: str, shape: Shape) -> Any:
    """A value sent as text (a query, a header, an EC2 form field) as the shape's type."""
    if shape.type_name in ("integer", "long"):
        return int(text)
    if shape.type_name == "boolean":
        return text == "true"
    if shape.type_name in ("float", "double"):
        return float(text)
    return text


def xml_members(parent: ET.Element, value: dict[str, Any], shape: StructureShape) -> None:
    """`value`'s members as elements of `parent`; those located in headers are not XML."""
    for name, member in shape.members.items():
        if name not in value or member.serialization.get("location"):
            continue
        wire = member.serialization.get("name", name)
        if isinstance(member, ListShape) and member.serialization.get("flattened"):
            for item in value[name]:
                _xml_value(ET.SubElement(parent, wire), item, member.member)
        else:
            _xml_value(ET.SubElement(parent, wire), value[name], member)


def _xml_value(element: ET.Element, value: Any, shape: Shape) -> None:
    if isinstance(shape, StructureShape):
        xml_members(element, value, shape)
    elif isinstance(shape, ListShape):
        for item in value:
            _xml_value(
                ET.SubElement(element, shape.member.serialization.get("name", "member")),
                item,
                shape.member,
            )
    elif isinstance(value, bool):
        element.text = "true" if value else "false"
    else:
        element.text = str(value)
