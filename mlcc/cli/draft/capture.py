"""One SageMaker Data Capture record (one line of a capture file) -> a conversation or a drop.

The record layout is SageMaker's, https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture.html
("View Data Capture data"): `captureData.endpointInput` and `captureData.endpointOutput`, each
with `observedContentType`, `mode` ("INPUT"/"OUTPUT"), `data` and `encoding` ("JSON", "CSV" or
"BASE64": the body is base64 unless its content type is one the capture config lists as text),
`eventMetadata` (`eventId`, `inferenceTime`) and `eventVersion`.

The request is an OpenAI chat-completions body (`messages`) or a completions body (`prompt`); the
answer is `choices[0].message.content` or `choices[0].text`, or the concatenated `delta.content`
/ `text` of a streamed (server-sent events) body. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

MALFORMED_JSON = "malformed JSON"
NOT_CAPTURE = "not a capture record"
NO_OUTPUT = "missing endpointOutput"
BAD_BASE64 = "undecodable base64"
NOT_REQUEST = "not a chat/completions request"
NOT_RESPONSE = "not a chat/completions response"
EMPTY_ANSWER = "empty answer"
OVERSIZED = "oversized line"
DUPLICATE = "duplicate"
UNREADABLE = "unreadable file"
# The order of the summary on stdout and of provenance.json's counts.
DROP_REASONS = (
    OVERSIZED,
    MALFORMED_JSON,
    NOT_CAPTURE,
    NO_OUTPUT,
    BAD_BASE64,
    NOT_REQUEST,
    NOT_RESPONSE,
    EMPTY_ANSWER,
    DUPLICATE,
    UNREADABLE,
)
ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})

Message = dict[str, str]


class Dropped(Exception):
    """The record is not kept; `reason` is one of DROP_REASONS."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Conversation:
    prompt: tuple[tuple[str, str], ...]  # (role, content) of the request's messages
    answer: str
    inference_time: str | None
    event_id: str | None

    def messages(self) -> list[Message]:
        turns = [{"role": role, "content": content} for role, content in self.prompt]
        return [*turns, {"role": "assistant", "content": self.answer}]

    def key(self) -> str:
        """The normalized prompt: roles, and contents with their whitespace runs collapsed."""
        normal = [[role, " ".join(content.split())] for role, content in self.prompt]
        return json.dumps(normal, ensure_ascii=False, separators=(",", ":"))


def _json(text: str | bytes, reason: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError, bad UTF-8; nesting past the stack
        raise Dropped(reason) from None


def inference_time(record: object) -> str | None:
    """`eventMetadata.inferenceTime` when the record carries one as text."""
    if not isinstance(record, dict):
        return None
    metadata = record.get("eventMetadata")
    value = metadata.get("inferenceTime") if isinstance(metadata, dict) else None
    return value if isinstance(value, str) else None


def load(line: bytes) -> object:
    """The line's JSON value; raises Dropped(MALFORMED_JSON)."""
    return _json(line, MALFORMED_JSON)


def parse_record(record: object) -> Conversation:
    if not isinstance(record, dict) or not isinstance(record.get("captureData"), dict):
        raise Dropped(NOT_CAPTURE)
    capture = record["captureData"]
    if not isinstance(capture.get("endpointInput"), dict):
        raise Dropped(NOT_CAPTURE)
    if not isinstance(capture.get("endpointOutput"), dict):
        raise Dropped(NO_OUTPUT)
    request = _json(body(capture["endpointInput"]), NOT_REQUEST)
    prompt = prompt_of(request)
    output = capture["endpointOutput"]
    answer = answer_of(body(output), output.get("observedContentType"))
    if not is_text(answer):
        raise Dropped(NOT_RESPONSE)
    if not answer.strip():
        raise Dropped(EMPTY_ANSWER)
    metadata = record.get("eventMetadata")
    event_id = metadata.get("eventId") if isinstance(metadata, dict) else None
    return Conversation(
        prompt, answer, inference_time(record), event_id if isinstance(event_id, str) else None
    )


def body(captured: dict[str, Any]) -> str:
    """The body's text: `data` itself for JSON and CSV, decoded for BASE64."""
    data = captured.get("data")
    if not isinstance(data, str):
        raise Dropped(NOT_CAPTURE)
    encoding = captured.get("encoding")
    if encoding in ("JSON", "CSV"):
        return data
    if encoding != "BASE64":
        raise Dropped(NOT_CAPTURE)
    try:
        return base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # not base64, or not UTF-8 text once decoded
        raise Dropped(BAD_BASE64) from None


def is_text(value: str) -> bool:
    """Whether `value` can be written as UTF-8: JSON's `\\ud800` escapes decode to unpaired
    surrogates, which no UTF-8 file holds."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _content(value: object) -> str | None:
    """A message's content: text, or the text parts of a list of content parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        texts = [p.get("text") for p in value if isinstance(p, dict) and p.get("type") == "text"]
        if len(texts) == len(value) and all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    return None


def prompt_of(request: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(request, dict):
        raise Dropped(NOT_REQUEST)
    messages = request.get("messages")
    if isinstance(messages, list) and messages:
        turns = []
        for message in messages:
            role = message.get("role") if isinstance(message, dict) else None
            if not isinstance(role, str) or role not in ROLES:
                raise Dropped(NOT_REQUEST)
            content = _content(message.get("content"))
            if content is None or not is_text(content):
                raise Dropped(NOT_REQUEST)
            turns.append((str(message["role"]), content))
        return tuple(turns)
    prompt = request.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if isinstance(prompt, str) and prompt.strip() and is_text(prompt):
        return (("user", prompt),)
    raise Dropped(NOT_REQUEST)


def _choice_text(choice: object, streamed: bool) -> str | None:
    if not isinstance(choice, dict):
        return None
    part = choice.get("delta" if streamed else "message")
    if isinstance(part, dict):
        content = part.get("content")
        if isinstance(content, str) or (streamed and content is None):
            return content or ""
    text = choice.get("text")
    return text if isinstance(text, str) else None


def _first_choice(payload: object) -> object:
    if isinstance(payload, dict):
        choices = payload.get("choices")
        if isinstance(choices, list) and choices:
            return choices[0]
    return None


def is_event_stream(text: str, content_type: object) -> bool:
    if isinstance(content_type, str) and "text/event-stream" in content_type.lower():
        return True
    return text.lstrip().startswith("data:")


def answer_of(text: str, content_type: object) -> str:
    if not is_event_stream(text, content_type):
        answer = _choice_text(_first_choice(_json(text, NOT_RESPONSE)), streamed=False)
        if answer is None:
            raise Dropped(NOT_RESPONSE)
        return answer
    pieces: list[str] = []
    events = 0
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue  # comments, `event:` and `id:` fields, blank separators
        payload = line[len("data:") :].strip()
        if payload == "[DONE]":
            break
        choice = _first_choice(_json(payload, NOT_RESPONSE))
        if choice is None:  # a usage-only chunk (stream_options.include_usage)
            continue
        piece = _choice_text(choice, streamed=True)
        if piece is None:
            raise Dropped(NOT_RESPONSE)
        pieces.append(piece)
        events += 1
    if not events:
        raise Dropped(NOT_RESPONSE)
    return "".join(pieces)
