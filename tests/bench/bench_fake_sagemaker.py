"""A fake SageMaker runtime on 127.0.0.1: answers botocore's real InvokeEndpointWithResponseStream
request with `application/vnd.amazon.eventstream` frames encoded here from the AWS event stream
specification, each carrying a piece of the fake engine's server-sent events."""

from __future__ import annotations

import json
import struct
import time
import zlib
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

from bench_fake_engine import FakeEngine, LoopbackServer, Timing, hostile_answer, trickle

_STRING_HEADER = 7


def encode_headers(headers: Sequence[tuple[str, str]]) -> bytes:
    encoded = b""
    for name, value in headers:
        raw_name, raw_value = name.encode(), value.encode()
        encoded += bytes([len(raw_name)]) + raw_name + bytes([_STRING_HEADER])
        encoded += struct.pack(">H", len(raw_value)) + raw_value
    return encoded


def encode_message(headers: Sequence[tuple[str, str]], payload: bytes) -> bytes:
    """Prelude (total length, headers length, CRC32 of both), headers, payload, CRC32 of all."""
    header_bytes = encode_headers(headers)
    total = 12 + len(header_bytes) + len(payload) + 4
    prelude = struct.pack(">II", total, len(header_bytes))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + header_bytes + payload
    return message + struct.pack(">I", zlib.crc32(message))


def payload_part(data: bytes) -> bytes:
    headers = [
        (":event-type", "PayloadPart"),
        (":content-type", "application/octet-stream"),
        (":message-type", "event"),
    ]
    return encode_message(headers, data)


def model_stream_error(message: str) -> bytes:
    headers = [
        (":exception-type", "ModelStreamError"),
        (":content-type", "application/json"),
        (":message-type", "exception"),
    ]
    return encode_message(
        headers, json.dumps({"Message": message, "ErrorCode": "StreamBroken"}).encode()
    )


class FakeSageMaker(LoopbackServer):
    """Streams `engine`'s events for endpoint `endpoint_name`, each event split in two
    PayloadParts in the middle of its line; `break_after` events, a ModelStreamError.
    `hostile`: "hang" or "trickle-headers" (as the fake engine), or "trickle-frames": the
    event stream a byte at a time."""

    def __init__(
        self,
        engine: FakeEngine,
        endpoint_name: str,
        break_after: int | None = None,
        hostile: str | None = None,
    ):
        self.engine, self.endpoint_name, self.break_after = engine, endpoint_name, break_after
        self.hostile = hostile
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.timings: list[Timing] = []  # what the fake really did, per streamed request
        self._serve(_handler(self))

    def frames(self) -> list[tuple[float, bytes, bool]]:
        """(delay, frame, completes an event that carries tokens)."""
        frames: list[tuple[float, bytes, bool]] = []
        for count, (delay, data, carries_tokens) in enumerate(self.engine.events(chat=True)):
            if self.break_after is not None and count == self.break_after:
                return [*frames, (0.0, model_stream_error("connection reset by the model"), False)]
            middle = len(data) // 2
            frames += [
                (delay, payload_part(data[:middle]), False),
                (0.0, payload_part(data[middle:]), carries_tokens),
            ]
        return frames


def _handler(fake: FakeSageMaker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            timing = Timing(time.monotonic())
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.requests.append((self.path, dict(self.headers), body))
            expected = f"/endpoints/{fake.endpoint_name}/invocations-response-stream"
            if self.path != expected:
                error = b'{"message": "Endpoint not found"}'
                self.send_response(400)
                self.send_header("x-amzn-ErrorType", "ValidationError")
                self.send_header("Content-Length", str(len(error)))
                self.end_headers()
                self.wfile.write(error)
                return
            if fake.hostile == "trickle-frames":
                self.close_connection = True
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.amazon.eventstream")
                self.end_headers()  # no length, not chunked: the body ends when the server closes
                frames = b"".join(frame for _, frame, _ in fake.frames())
                trickle(self, frames * 1000, fake.stopping)
                return
            if fake.hostile is not None:
                hostile_answer(self, fake.hostile, fake.stopping)
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

    return Handler
