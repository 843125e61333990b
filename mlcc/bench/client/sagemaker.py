"""The SageMaker endpoint the operator registers, through `sagemaker-runtime`
`InvokeEndpointWithResponseStream`: the same OpenAI request body, answered as an event stream
whose `PayloadPart.Bytes` carry the engine's server-sent events, split anywhere.

botocore's timeouts bound each socket operation; the request's `Deadline` bounds the whole
stream by shutting down the socket under the answer (urllib3's response keeps its connection
while the body streams). Before the answer's headers botocore holds no socket we can reach:
there `mlcc.bench.runner` stops waiting for the request a moment after its deadline.

What botocore cannot bound is bounded here: an error answer is read up to
`MAX_ERROR_BODY_BYTES` (botocore reads it whole), and botocore never retries (one attempt in
`standard` mode, whatever AWS_MAX_ATTEMPTS or AWS_RETRY_MODE say: `adaptive` would sleep before
a request). The event stream itself is bounded by botocore's parser (`botocore/eventstream.py`:
a frame's headers at most 128 KiB, its payload at most 24 MiB, both checked from the prelude,
before the frame arrives), by `LineSplitter`'s 4 MiB line and by the deadline. A frame botocore
cannot read (a bad CRC, a header type it does not know, a truncated header) fails the request
with one line, as does every error the `sagemaker-runtime` model lists for the operation.
"""

from __future__ import annotations

import contextlib
import json
import re
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

from mlcc.bench.client.deadline import Deadline, shut_down
from mlcc.bench.client.transport import MAX_ERROR_BODY_BYTES, RequestError, TargetError
from mlcc.bench.inputs import shown
from mlcc.bench.runner import StreamSender
from mlcc.config.aws.environment import setup_failure

MAX_MESSAGE_CHARS = 200  # of each message the service or the model sends back


def sagemaker_sender(client: Any, endpoint_name: str) -> StreamSender:
    """A sender for `mlcc.bench.runner.timed_request`. The operator forwards the body to the
    container's `invocationEndpoint` (chat completions), so the API path is not sent."""
    from botocore.eventstream import ParserError
    from botocore.exceptions import BotoCoreError, ClientError, EventStreamError
    from botocore.parsers import ResponseParserError
    from urllib3.exceptions import HTTPError as Urllib3Error

    sending = threading.local()  # botocore sends in the calling thread

    def on_before_send(**kwargs: Any) -> None:
        mark_sent = getattr(sending, "mark_sent", None)
        if mark_sent is not None:
            mark_sent()

    client.meta.events.register(
        "before-send.sagemaker-runtime.InvokeEndpointWithResponseStream", on_before_send
    )
    bound_error_answers(client)
    # What botocore's event-stream parser raises on a frame it cannot read: its ParserError
    # (a CRC, a length), struct.error (a header cut short), KeyError (a header type it does not
    # know), UnicodeDecodeError (a header name or value), or the types of a header it misreads.
    unreadable = (ParserError, ResponseParserError, struct.error, LookupError, ValueError)
    misread = (TypeError, AttributeError)

    def send(
        path: str, body: dict[str, Any], mark_sent: Callable[[], None], deadline: Deadline
    ) -> Iterator[bytes]:
        del path
        sending.mark_sent = mark_sent
        events: Any = None
        try:
            response = client.invoke_endpoint_with_response_stream(
                EndpointName=endpoint_name,
                Body=json.dumps(body).encode(),
                ContentType="application/json",
                Accept="text/event-stream",
            )
            events = response["Body"]
            deadline.on_expiry(lambda: _abort(events))
            for event in events:
                if deadline.expired:  # events botocore had buffered before the shutdown
                    break
                part = event.get("PayloadPart") if isinstance(event, dict) else None
                data = part.get("Bytes") if isinstance(part, dict) else None
                if isinstance(data, bytes) and data:
                    yield data
        except EventStreamError as error:
            raise RequestError(f"stream error: {client_error_message(error)}") from None
        except ClientError as error:
            raise RequestError(client_error_message(error)) from None
        except BotoCoreError as error:
            raise RequestError(_bounded(str(error))) from None
        except (*unreadable, *misread) as error:
            reason = _bounded(f"{type(error).__name__}: {error}")
            raise RequestError(f"the event stream cannot be read ({reason})") from None
        except Urllib3Error as error:  # the connection broke (or the deadline shut it down)
            raise RequestError(f"the answer broke off ({type(error).__name__})") from None
        finally:
            if events is not None:
                with contextlib.suppress(Exception):  # frees the connection it reads from
                    events.close()

    return send


def endpoint_name_problem(client: Any, name: str) -> str | None:
    """What botocore's sagemaker-runtime model says of `EndpointName` (its length and pattern),
    checked before any request: botocore itself validates neither."""
    operation = client.meta.service_model.operation_model("InvokeEndpointWithResponseStream")
    rules = operation.input_shape.members["EndpointName"].metadata
    most, pattern = rules.get("max"), rules.get("pattern")
    if most is not None and len(name) > most:
        return f"{shown(name)} is longer than {most} characters"
    if pattern is not None and not re.fullmatch(pattern, name):
        return f"{shown(name)} is not an endpoint name (letters, digits and hyphens)"
    return None


def _abort(events: Any) -> None:
    """Shuts down the socket under a botocore EventStream: its urllib3 response's connection,
    or, for an answer without a length (which http.client takes off the connection), the
    socket its reader holds."""
    raw = getattr(events, "_raw_stream", None)
    sock = getattr(getattr(raw, "connection", None), "sock", None)
    if sock is None:
        reader = getattr(getattr(raw, "_fp", None), "fp", None)
        sock = getattr(getattr(reader, "raw", None), "_sock", None)
    shut_down(sock)


def client_error_message(error: Any) -> str:
    """`Code: Message` of a botocore error, each bounded; a ModelError adds the status the
    model itself answered (`OriginalStatusCode` in the sagemaker-runtime model) when it is
    one HTTP could carry."""
    response = getattr(error, "response", None)
    response = response if isinstance(response, dict) else {}
    details = response.get("Error")
    details = details if isinstance(details, dict) else {}
    code, message = details.get("Code") or "", details.get("Message") or ""
    if not code:  # an `error` event, or an exception the model does not list
        return _bounded(str(message)) or "an error without a code or a message"
    text = f"{_bounded(str(code))}: {_bounded(str(message))}"
    status = response.get("OriginalStatusCode")
    if type(status) is int and 100 <= status <= 599 and f"({status})" not in text:
        text += f" (the model answered HTTP {status})"
    return text


def _bounded(text: str) -> str:
    """One line (a credential process's stderr ends in a newline), at most MAX_MESSAGE_CHARS."""
    text = " ".join(text[: MAX_MESSAGE_CHARS * 4].split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."


def bound_error_answers(client: Any) -> None:
    """botocore reads an error answer whole (`AWSResponse.content`): past MAX_ERROR_BODY_BYTES,
    by Content-Length or by the bytes that arrive, the request fails instead. The event stream
    of a 200 answer is left to its own bounds (module docstring). botocore's endpoint keeps its
    HTTP session in `_endpoint.http_session`."""
    endpoint = getattr(client, "_endpoint", None)
    session = getattr(endpoint, "http_session", None)
    if endpoint is not None and session is not None and not isinstance(session, _ErrorBoundSession):
        endpoint.http_session = _ErrorBoundSession(session)


def _too_large(status: Any) -> RequestError:
    return RequestError(
        f"an error answer (HTTP {status}) of more than {MAX_ERROR_BODY_BYTES // 1024} KiB "
        "(not read)"
    )


class _ErrorBoundSession:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def send(self, request: Any) -> Any:
        response = self._inner.send(request)
        if response.status_code < 300:
            return response
        declared = str(response.headers.get("content-length", "")).strip()
        if declared.isdigit() and int(declared) > MAX_ERROR_BODY_BYTES:
            response.raw.close()
            raise _too_large(response.status_code)
        response.raw = _ErrorBoundRaw(response.raw, response.status_code)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _ErrorBoundRaw:
    def __init__(self, raw: Any, status: int) -> None:
        self._raw, self._status = raw, status

    def stream(self, amt: int = 65536, decode_content: bool | None = None) -> Iterator[bytes]:
        seen = 0
        for chunk in self._raw.stream(amt, decode_content=decode_content):
            seen += len(chunk)
            if seen > MAX_ERROR_BODY_BYTES:
                self._raw.close()
                raise _too_large(self._status)
            yield chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def sagemaker_client(
    region: str | None, timeout_s: float = 600.0, endpoint_url: str | None = None
) -> Any:
    """A `sagemaker-runtime` client; `endpoint_url` is for tests against a local server."""
    try:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, InvalidRegionError
    except ImportError:
        raise TargetError("--sagemaker-endpoint needs boto3 (pip install boto3)") from None
    try:
        return boto3.client(
            "sagemaker-runtime",
            region_name=region,
            endpoint_url=endpoint_url,
            config=Config(
                # One attempt: a retry would start past the deadline, and a throttled request
                # is a failed one. `mode` too, or AWS_RETRY_MODE=adaptive could sleep first.
                retries={"total_max_attempts": 1, "mode": "standard"},
                connect_timeout=timeout_s,
                read_timeout=timeout_s,
            ),
        )
    except InvalidRegionError as error:
        raise TargetError(f"--region: {error}") from None
    except (BotoCoreError, ValueError) as error:  # ValueError: an AWS_* setting botocore refuses
        raise TargetError(f"cannot create a SageMaker client: {setup_failure(error)}") from None
