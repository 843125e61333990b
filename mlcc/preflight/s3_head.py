"""A trained draft head in S3 (`hp:speculativeModel: s3://bucket/prefix/`), read for preflight
(docs/draft-serving.md): its config.json, the size of its safetensors files, and, when the
config leaves EAGLE-1 and EAGLE-3 open, the `fc` width in a safetensors header. The facts then
go through every check a Hub draft goes through (format, vocabulary, the verifier's hidden
size, the algorithm), in mlcc/preflight/models.py.

boto3 does the reading, through preflight's AWS clients (mlcc/preflight/account/fetch.py: the
stack's profile and region, its timeouts and bounded answers). Only GetObject (with a byte
range: config.json, the safetensors header) and ListObjectsV2 (the sizes) are called. Each
failure is one line: a missing object or bucket and a config that is not JSON refuse the draft
(`Refused`); access denied, no credentials or no answer leave it unchecked (`Unreachable`): the
pod reads with its own role, which may differ from the one preflight runs with.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, replace
from typing import Any

from mlcc.preflight.account.fetch import Clients
from mlcc.preflight.bounded import aws_failure
from mlcc.preflight.facts import NotAModelConfig, model_facts, with_estimate
from mlcc.preflight.head_weights import (
    INDEX_FILE,
    MAX_HEADER_BYTES,
    SINGLE_FILE,
    could_be_either_head,
    is_fc_weight,
)
from mlcc.preflight.hub import (
    MAX_JSON_BYTES,
    Failure,
    Fetched,
    FetchResult,
    Refused,
    Unreachable,
    parsed_json,
)
from mlcc.serving import s3_draft

CONFIG_FILE = "config.json"
# What the reads need (docs/preflight.md lists them for the deploying role): GetObject, and
# ListObjectsV2, whose IAM action is s3:ListBucket.
IAM_ACTIONS = ("s3:GetObject", "s3:ListBucket")
MAX_LIST_PAGES = 10  # 10,000 objects: a head's folder holds a handful
MISSING = frozenset({"NoSuchKey", "404", "NotFound"})
NO_BUCKET = frozenset({"NoSuchBucket"})
DENIED = frozenset({"AccessDenied", "403", "AllAccessDisabled", "InvalidObjectState"})


NO_HEAD = "no head at this prefix"


@dataclass(frozen=True)
class JsonRead:
    value: object


def fetch(uri: str, clients: Clients) -> FetchResult:
    """The head's facts, or why not. Never raises."""
    draft = s3_draft.parse(uri)
    if draft is None:  # the config refused it already
        return Refused(f"{uri} is not an s3://bucket/prefix/ of a head")
    try:
        s3 = clients.client("s3")
        data = _get(s3, draft, CONFIG_FILE, MAX_JSON_BYTES)
        config = parsed_json(data, f"{draft.uri}{CONFIG_FILE}")
        facts = with_estimate(model_facts(config, _weight_bytes(s3, draft)))
        if could_be_either_head(facts):
            facts = replace(facts, fc_in_features=_fc_width(s3, draft))
        return Fetched(facts)
    except Failure as failure:
        return failure.result
    except NotAModelConfig as error:
        return Refused(f"its {CONFIG_FILE} ({draft.uri}{CONFIG_FILE}) {error}")
    except Exception as error:  # every other failure of the read: one line, never a traceback
        return Unreachable(f"{draft.uri}: {aws_failure.described(error, clients.timeout_s)}")


def read_json(
    folder: s3_draft.S3Folder, name: str, clients: Clients, absent: str
) -> JsonRead | Refused | Unreachable:
    """Another JSON file under an S3 folder (e.g. a dataset's provenance.json), read the way a
    head's config.json is: bounded GetObject, the same failures. `absent` says what a missing
    object means. Never raises."""
    try:
        data = _get(clients.client("s3"), folder, name, MAX_JSON_BYTES, absent, f"a {name}")
        return JsonRead(parsed_json(data, f"{folder.uri}{name}"))
    except Failure as failure:
        return failure.result
    except Exception as error:  # every other failure of the read: one line, never a traceback
        return Unreachable(f"{folder.uri}{name}: {aws_failure.described(error, clients.timeout_s)}")


def _get(
    s3: Any,
    draft: s3_draft.S3Folder,
    name: str,
    most: int,
    absent: str = NO_HEAD,
    kind: str = "",
) -> bytes:
    """An object of at most `most` bytes; a larger one, its absence or refusal as a Failure."""
    data = _range(s3, draft, name, 0, most + 1, absent)
    if len(data) > most:
        where = f"{draft.uri}{name}"
        what = kind or f"a head's {name}"
        raise Failure(Refused(f"{where} is over {most >> 20} MiB: not {what}"))
    return data


def _range(
    s3: Any, draft: s3_draft.S3Folder, name: str, start: int, count: int, absent: str = NO_HEAD
) -> bytes:
    """`count` bytes of an object from `start` (fewer at its end)."""
    from botocore.exceptions import ClientError

    where = f"{draft.uri}{name}"
    try:
        answer = s3.get_object(
            Bucket=draft.bucket, Key=draft.key(name), Range=f"bytes={start}-{start + count - 1}"
        )
        data = bytes(answer["Body"].read(count))
    except ClientError as error:
        details = error.response.get("Error", {})
        code = str(details.get("Code", ""))
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in MISSING or (not code and status == 404):
            raise Failure(Refused(f"{where} does not exist: {absent}")) from None
        if code in NO_BUCKET:
            raise Failure(Refused(f"bucket {draft.bucket} does not exist")) from None
        if code in DENIED or status == 403:
            raise Failure(
                Unreachable(
                    f"access denied reading {where} (s3:GetObject); preflight's credentials "
                    f"cannot read it, so {'the head' if absent == NO_HEAD else 'it'} was not "
                    "checked"
                )
            ) from None
        raise
    return data


def _weight_bytes(s3: Any, draft: s3_draft.S3Folder) -> int | None:
    """The sizes of the .safetensors objects directly under the prefix, from ListObjectsV2."""
    total, token, pages = 0, None, 0
    while pages < MAX_LIST_PAGES:
        params = {"Bucket": draft.bucket, "Prefix": draft.prefix}
        answer = s3.list_objects_v2(**params, **({"ContinuationToken": token} if token else {}))
        pages += 1
        for item in answer.get("Contents") or []:
            name = str(item.get("Key", "")).removeprefix(draft.prefix)
            size = item.get("Size")
            if "/" not in name and name.endswith(".safetensors") and isinstance(size, int):
                total += size
        token = answer.get("NextContinuationToken")
        if not answer.get("IsTruncated") or not token:
            return total or None
    return None  # a folder this long is no head's; the size stays unknown


def _fc_width(s3: Any, draft: s3_draft.S3Folder) -> int | None:
    """The fc weight's input width from a safetensors header; None when no header shows it."""
    files = [SINGLE_FILE]
    try:
        index = parsed_json(_get(s3, draft, INDEX_FILE, MAX_HEADER_BYTES), INDEX_FILE)
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if isinstance(weight_map, dict):
            files = [str(f) for n, f in weight_map.items() if is_fc_weight(str(n))]
    except Failure:
        pass  # no index: the single file
    for name in files:
        try:
            (length,) = struct.unpack("<Q", _range(s3, draft, name, 0, 8))
            if length > MAX_HEADER_BYTES:
                continue
            header = json.loads(_range(s3, draft, name, 8, length))
        except (Failure, struct.error, ValueError):
            continue
        for tensor, entry in header.items() if isinstance(header, dict) else ():
            shape = entry.get("shape") if isinstance(entry, dict) else None
            if is_fc_weight(tensor) and isinstance(shape, list) and len(shape) == 2:
                return int(shape[1]) if isinstance(shape[1], int) else None
    return None
