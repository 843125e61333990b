"""Capture records in SageMaker Data Capture's documented layout, for the draft dataset tests.

The layout: https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture.html
(`captureData.endpointInput`/`endpointOutput` with `observedContentType`, `mode`, `data`,
`encoding`; `eventMetadata` with `eventId` and `inferenceTime`; `eventVersion`). sample.jsonl
beside this module starts with a record shaped like that page's example (a CSV model's, so not a
chat request), followed by chat, completions and streamed records of the same layout.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "sample.jsonl"


def captured(body: Any, mode: str, encoding: str = "BASE64", content_type: str = "") -> Any:
    text = body if isinstance(body, str) else json.dumps(body)
    data = base64.b64encode(text.encode()).decode() if encoding == "BASE64" else text
    return {
        "observedContentType": content_type or "application/json",
        "mode": mode,
        "data": data,
        "encoding": encoding,
    }


def chat_request(question: str, system: str | None = None) -> Any:
    messages = [{"role": "system", "content": system}] if system else []
    return {"model": "m", "messages": [*messages, {"role": "user", "content": question}]}


def chat_response(answer: str) -> Any:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}


def sse(pieces: list[str]) -> str:
    events = [
        "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": piece}}]})
        for piece in pieces
    ]
    return "\n\n".join([*events, "data: [DONE]"]) + "\n\n"


def record(
    request: Any,
    response: Any,
    *,
    encoding: str = "BASE64",
    event_id: str = "e-1",
    time: str = "2025-01-02T03:04:05Z",
    output_type: str = "",
) -> Any:
    return {
        "captureData": {
            "endpointInput": captured(request, "INPUT", encoding),
            "endpointOutput": captured(response, "OUTPUT", encoding, output_type),
        },
        "eventMetadata": {"eventId": event_id, "inferenceTime": time},
        "eventVersion": "0",
    }


def chat(question: str, answer: str, **kw: Any) -> Any:
    return record(chat_request(question), chat_response(answer), **kw)


def write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str | bytes) else json.dumps(r) for r in records]
    path.write_bytes(b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines))
    return path
