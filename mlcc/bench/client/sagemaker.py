"""The SageMaker endpoint the operator registers, through `sagemaker-runtime`
`InvokeEndpointWithResponseStream`: the same OpenAI request body, answered as an event stream
whose `PayloadPart.Bytes` carry the engine's server-sent events, split anywhere.

botocore's timeouts bound each socket operation; the request's `Deadline` bounds the whole
stream by shutting down the socket under the answer (urllib3's response keeps its connection
while the body streams). Before the answer's headers botocore holds no socket we can reach:
there `mlcc.bench.runner` stops waiting for the request a moment after its deadline.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from mlcc.bench.client.deadline import Deadline, shut_down
from mlcc.bench.client.transport import RequestError, TargetError
from mlcc.bench.inputs import shown
from mlcc.bench.runner import StreamSender


def sagemaker_sender(client: Any, endpoint_name: str) -> StreamSender:
    """A sender for `mlcc.bench.runner.timed_request`. The operator forwards the body to the
    container's `invocationEndpoint` (chat completions), so the API path is not sent."""
    from botocore.exceptions import BotoCoreError, ClientError, EventStreamError

    sending = threading.local()  # botocore sends in the calling thread

    def on_before_send(**kwargs: Any) -> None:
        mark_sent = getattr(sending, "mark_sent", None)
        if mark_sent is not None:
            mark_sent()

    client.meta.events.register(
        "before-send.sagemaker-runtime.InvokeEndpointWithResponseStream", on_before_send
    )

    def send(
        path: str, body: dict[str, Any], mark_sent: Callable[[], None], deadline: Deadline
    ) -> Iterator[bytes]:
        del path
        sending.mark_sent = mark_sent
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
                part = event.get("PayloadPart")
                if part and part.get("Bytes"):
                    yield part["Bytes"]
        except EventStreamError as error:
            raise RequestError(f"stream error: {_client_error_message(error)}") from None
        except ClientError as error:
            raise RequestError(_client_error_message(error)) from None
        except BotoCoreError as error:
            raise RequestError(str(error)) from None

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


def _client_error_message(error: Any) -> str:
    details = getattr(error, "response", {}).get("Error", {})
    code, message = details.get("Code", ""), details.get("Message", "")
    return f"{code}: {message}" if code else str(error)


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
                retries={"total_max_attempts": 1},  # a retry would start past the deadline
                connect_timeout=timeout_s,
                read_timeout=timeout_s,
            ),
        )
    except InvalidRegionError as error:
        raise TargetError(f"--region: {error}") from None
    except BotoCoreError as error:
        raise TargetError(f"cannot create a SageMaker client: {error}") from None
