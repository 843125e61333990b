"""A fake SageMaker runtime on 127.0.0.1: answers botocore's real InvokeEndpointWithResponseStream
request with `application/vnd.amazon.eventstream` frames encoded here from the AWS event stream
specification, each carrying a piece of the fake engine's server-sent events.

It can be hostile (`hostile=`): the stalls of the fake engine, frames botocore cannot read
(`FRAME_MODES`), answers that are not the engine's (`PAYLOAD_MODES`), errors in the middle of
the stream, and error answers (`error_answer`) whose shapes are checked against botocore's
`sagemaker-runtime` model, as tests/local_aws.py checks the SageMaker API's."""

from __future__ import annotations

import contextlib
import json
import struct
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import botocore.session
from bench_fake_engine import FakeEngine, LoopbackServer, Timing, hostile_answer, trickle
from botocore.validate import ParamValidator

_STRING_HEADER, _INT32_HEADER = 7, 4
MODEL = botocore.session.get_session().get_service_model("sagemaker-runtime")
OPERATION = MODEL.operation_model("InvokeEndpointWithResponseStream")
# The operation's errors in the model; ModelNotReadyException is modeled for InvokeEndpoint
# only, and ThrottlingException, ExpiredTokenException are AWS's common errors (in no model).
COMMON_ERRORS = {"ThrottlingException": 400, "ExpiredTokenException": 403}
FRAME_MODES = (
    "bad-crc",  # a frame whose message CRC is wrong
    "bad-prelude-crc",  # a frame whose prelude CRC is wrong
    "truncated-prelude",  # the body ends 6 bytes into a prelude
    "unknown-header-type",  # a header of type 42 (the spec's types are 0 to 9)
    "int-event-type",  # `:event-type` as an int32, not a string
    "frame-2gb",  # a prelude that announces a frame of 2 GiB
    "error-message",  # a message of type `error`, with no code
    "unknown-exception",  # an exception the model does not list, its payload not JSON
)
PAYLOAD_MODES = ("not-sse", "huge-part", "tiny-parts-forever", "stall-mid-stream")
STREAM_ERRORS = ("ModelStreamError", "InternalStreamFailure")
HUGE_PART_BYTES = 100 * 1024 * 1024


def encode_headers(headers: Sequence[tuple[str, str | int]]) -> bytes:
    encoded = b""
    for name, value in headers:
        raw_name = name.encode()
        encoded += bytes([len(raw_name)]) + raw_name
        if isinstance(value, int):
            encoded += bytes([_INT32_HEADER]) + struct.pack(">i", value)
        else:
            raw_value = value.encode()
            encoded += bytes([_STRING_HEADER]) + struct.pack(">H", len(raw_value)) + raw_value
    return encoded


def prelude(total: int, headers_length: int) -> bytes:
    """Total length, headers length, CRC32 of both."""
    lengths = struct.pack(">II", total, headers_length)
    return lengths + struct.pack(">I", zlib.crc32(lengths))


def encode_message(headers: Sequence[tuple[str, str | int]], payload: bytes) -> bytes:
    """Prelude, headers, payload, CRC32 of all."""
    return encode_raw(encode_headers(headers), payload)


def encode_raw(header_bytes: bytes, payload: bytes) -> bytes:
    total = 12 + len(header_bytes) + len(payload) + 4
    message = prelude(total, len(header_bytes)) + header_bytes + payload
    return message + struct.pack(">I", zlib.crc32(message))


PAYLOAD_HEADERS: list[tuple[str, str | int]] = [
    (":event-type", "PayloadPart"),
    (":content-type", "application/octet-stream"),
    (":message-type", "event"),
]


def payload_part(data: bytes) -> bytes:
    return encode_message(PAYLOAD_HEADERS, data)


def stream_exception(shape: str, fields: dict[str, Any]) -> bytes:
    """An exception event of the ResponseStream, its members checked against the model."""
    check_shape(MODEL.shape_for("ResponseStream").members[shape], fields)
    headers: list[tuple[str, str | int]] = [
        (":exception-type", shape),
        (":content-type", "application/json"),
        (":message-type", "exception"),
    ]
    return encode_message(headers, json.dumps(fields).encode())


def model_stream_error(message: str) -> bytes:
    return stream_exception("ModelStreamError", {"Message": message, "ErrorCode": "StreamBroken"})


def check_shape(shape: Any, fields: dict[str, Any]) -> None:
    report = ParamValidator().validate(fields, shape)
    assert not report.has_errors(), report.generate_report()


@dataclass(frozen=True)
class ErrorAnswer:
    status: int
    code: str
    body: bytes


def error_answer(code: str, fields: dict[str, Any]) -> ErrorAnswer:
    """An error answer in the operation's REST-JSON form (`x-amzn-ErrorType`, the members as
    JSON), its status and members those of the model's shape."""
    if code in COMMON_ERRORS:
        return ErrorAnswer(COMMON_ERRORS[code], code, json.dumps(fields).encode())
    shape = _modeled_error(code)
    check_shape(shape, fields)
    return ErrorAnswer(shape.metadata["error"]["httpStatusCode"], code, json.dumps(fields).encode())


def _modeled_error(code: str) -> Any:
    for operation in ("InvokeEndpointWithResponseStream", "InvokeEndpoint"):
        for shape in MODEL.operation_model(operation).error_shapes:
            if shape.name == code:
                return shape
    raise KeyError(f"{code} is no error of sagemaker-runtime's model")


class FakeSageMaker(LoopbackServer):
    """Streams `engine`'s events for endpoint `endpoint_name`, each event split in two
    PayloadParts in the middle of its line; `break_after` events, a ModelStreamError (or
    `stream_error`). `hostile`: "hang" or "trickle-headers" (as the fake engine),
    "trickle-frames" (the event stream a byte at a time), one of FRAME_MODES or PAYLOAD_MODES,
    or "raw" (`raw_body` as it is).
    `errors`: the error answers to give, one a request (the last one repeats), after
    `errors_from` requests answered well."""

    def __init__(
        self,
        engine: FakeEngine,
        endpoint_name: str,
        break_after: int | None = None,
        hostile: str | None = None,
        errors: Sequence[ErrorAnswer] = (),
        errors_from: int = 0,
        stream_error: str = "ModelStreamError",
        huge_error_bytes: int = 0,
    ):
        self.engine, self.endpoint_name, self.break_after = engine, endpoint_name, break_after
        self.hostile, self.errors, self.errors_from = hostile, errors, errors_from
        self.stream_error, self.huge_error_bytes = stream_error, huge_error_bytes
        # Built once, before any request: building it in the handler would delay the answer.
        huge = huge_error_bytes or (HUGE_PART_BYTES if hostile == "huge-part" else 0)
        self.huge = memoryview(b"a" * huge)
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.timings: list[Timing] = []  # what the fake really did, per streamed request
        self.sent_bytes = 0  # what the hostile answers managed to write
        self.raw_body: bytes | None = None  # hostile="raw": this body, as it is, then close
        self._lock = threading.Lock()
        self._serve(_handler(self))

    def count_sent(self, size: int) -> None:
        with self._lock:
            self.sent_bytes += size

    def frames(self) -> list[tuple[float, bytes, bool]]:
        """(delay, frame, completes an event that carries tokens)."""
        frames: list[tuple[float, bytes, bool]] = []
        for count, (delay, data, carries_tokens) in enumerate(self.engine.events(chat=True)):
            if self.break_after is not None and count == self.break_after:
                fields: dict[str, Any] = {"Message": "connection reset by the model"}
                if self.stream_error == "ModelStreamError":
                    fields["ErrorCode"] = "StreamBroken"
                return [*frames, (0.0, stream_exception(self.stream_error, fields), False)]
            middle = len(data) // 2
            frames += [
                (delay, payload_part(data[:middle]), False),
                (0.0, payload_part(data[middle:]), carries_tokens),
            ]
        return frames


def hostile_frame(mode: str, first: bytes) -> bytes:
    """The bytes of FRAME_MODES' `mode`, after a good first frame `first`."""
    good = payload_part(b"data: {}\n\n")
    if mode == "bad-crc":
        return first + good[:-1] + bytes([good[-1] ^ 1])
    if mode == "bad-prelude-crc":
        return first + good[:8] + bytes([good[8] ^ 1]) + good[9:]
    if mode == "truncated-prelude":
        return first + good[:6]
    if mode == "unknown-header-type":
        return first + encode_raw(b"\x03abc\x2a", b"")
    if mode == "int-event-type":
        return first + encode_message([(":event-type", 5), (":message-type", "event")], b"x")
    if mode == "frame-2gb":
        return first + prelude(2**31, 0) + b"\0" * 65536
    if mode == "error-message":
        return first + encode_message([(":message-type", "error"), (":error-message", "x")], b"")
    if mode == "unknown-exception":
        headers = [(":message-type", "exception"), (":exception-type", "Boom")]
        return first + encode_message(headers, b"\xff not json")
    raise ValueError(f"unknown frame mode {mode!r}; one of {FRAME_MODES}")


def _handler(fake: FakeSageMaker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            timing = Timing(time.monotonic())
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.requests.append((self.path, dict(self.headers), body))
            number = len(fake.requests)
            expected = f"/endpoints/{fake.endpoint_name}/invocations-response-stream"
            if self.path != expected:
                answer = error_answer("ValidationError", {"Message": "Endpoint not found"})
                self._error(answer.status, answer.code, answer.body)
                return
            if fake.errors and number > fake.errors_from:
                answer = fake.errors[min(number - fake.errors_from, len(fake.errors)) - 1]
                self._error(answer.status, answer.code, answer.body)
                return
            if fake.huge_error_bytes:
                self._huge_error()
                return
            if fake.hostile in ("hang", "trickle-headers"):
                hostile_answer(self, fake.hostile, fake.stopping)
                return
            if fake.hostile is not None:
                self.close_connection = True
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.amazon.eventstream")
                self.end_headers()  # no length, not chunked: the body ends when the server closes
                # OSError: the client shut the connection (its deadline), or gave up on it
                with contextlib.suppress(OSError):
                    self._hostile_stream(fake.hostile)
                return
            fake.engine.record(0)
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.amazon.eventstream")
            self.send_header("X-Amzn-SageMaker-Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for delay, frame, completes_tokens in fake.frames():
                time.sleep(delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                self.wfile.flush()
                if completes_tokens:
                    timing.token_times.append(time.monotonic())
            self.wfile.write(b"0\r\n\r\n")
            timing.tokens = fake.engine.tokens_per_request()
            fake.timings.append(timing)

        def _error(self, status: int, code: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("x-amzn-ErrorType", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _huge_error(self) -> None:
            self.close_connection = True
            self.send_response(500)
            self.send_header("x-amzn-ErrorType", "InternalFailure")
            self.send_header("Content-Type", "application/json")
            if fake.hostile != "no-length":
                self.send_header("Content-Length", str(fake.huge_error_bytes))
            self.end_headers()
            self.wfile.write(b'{"Message": "')
            self._write_counted(fake.huge[: fake.huge_error_bytes - 13])

        def _write_counted(self, data: memoryview, piece: int = 65536) -> None:
            try:
                for start in range(0, len(data), piece):
                    if fake.stopping.is_set():
                        return
                    self.wfile.write(data[start : start + piece])
                    fake.count_sent(len(data[start : start + piece]))
            except OSError:
                pass

        def _hostile_stream(self, mode: str) -> None:
            frames = fake.frames()
            if mode == "raw":
                self.wfile.write(fake.raw_body or b"")
            elif mode == "trickle-frames":
                trickle(self, b"".join(frame for _, frame, _ in frames) * 1000, fake.stopping)
            elif mode in FRAME_MODES:  # after one whole event
                _, first_event, _ = next(iter(fake.engine.events(chat=True)))
                self.wfile.write(hostile_frame(mode, payload_part(first_event)))
            elif mode == "not-sse":  # another server's stream: JSON lines, no `data:` events
                for text in ('{"token": {"text": " a"}}\n', '{"generated_text": "a"}\n'):
                    self.wfile.write(payload_part(text.encode()))
            elif mode == "huge-part":
                header = encode_headers(PAYLOAD_HEADERS)
                self.wfile.write(prelude(12 + len(header) + HUGE_PART_BYTES + 4, len(header)))
                self.wfile.write(header)
                self._write_counted(fake.huge[:HUGE_PART_BYTES])
            elif mode == "tiny-parts-forever":
                event = b'data: {"choices": [{"index": 0, "delta": {"content": " a"}}]}\n\n'
                parts = b"".join(payload_part(event[i : i + 1]) for i in range(len(event)))
                parts *= 64
                while not fake.stopping.wait(0.001):  # a pause: the client's threads run too
                    self.wfile.write(parts)
                    fake.count_sent(len(parts))
            elif mode == "stall-mid-stream":
                for _, frame, _ in frames[:4]:
                    self.wfile.write(frame)
                self.wfile.flush()
                fake.stopping.wait()
            else:
                raise ValueError(f"unknown hostile mode {mode!r}")

    return Handler
