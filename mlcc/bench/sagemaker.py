"""The SageMaker endpoint the operator registers, through `sagemaker-runtime`
`InvokeEndpointWithResponseStream`: the same OpenAI request body, answered as an event stream
whose `PayloadPart.Bytes` carry the engine's server-sent events, split anywhere."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

from mlcc.bench.runner import RequestError, StreamSender, TargetError


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

    def send(path: str, body: dict[str, Any], mark_sent: Callable[[], None]) -> Iterator[bytes]:
        del path
        sending.mark_sent = mark_sent
        try:
            response = client.invoke_endpoint_with_response_stream(
                EndpointName=endpoint_name,
                Body=json.dumps(body).encode(),
                ContentType="application/json",
                Accept="text/event-stream",
            )
            for event in response["Body"]:
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


def _client_error_message(error: Any) -> str:
    details = getattr(error, "response", {}).get("Error", {})
    code, message = details.get("Code", ""), details.get("Message", "")
    return f"{code}: {message}" if code else str(error)


def sagemaker_client(region: str | None, endpoint_url: str | None = None) -> Any:
    """A `sagemaker-runtime` client; `endpoint_url` is for tests against a local server."""
    try:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError
    except ImportError:
        raise TargetError("--sagemaker-endpoint needs boto3 (pip install boto3)") from None
    try:
        return boto3.client(
            "sagemaker-runtime",
            region_name=region,
            endpoint_url=endpoint_url,
            config=Config(retries={"max_attempts": 1}, read_timeout=600),
        )
    except BotoCoreError as error:
        raise TargetError(f"cannot create a SageMaker client: {error}") from None
