"""One line for a failed boto3 call that the caller does not handle by its code.

Preflight's S3 reads of a head (mlcc/preflight/s3_head.py) and the draft dataset steps' S3
reads and uploads (mlcc/cli/draft/) say their failures through this, so one failure reads the
same in both. The classes are botocore's own (`botocore.exceptions`); a ClientError is said by
its `Error.Code` (or, for a HEAD answer without a body, its HTTP status) and message.
"""

from __future__ import annotations

from mlcc.engine_contract.values import printable

MOST_CHARS = 200


def described(error: BaseException, timeout_s: float | None = None, flag: str = "") -> str:
    """`error` in a few words; a timeout names `timeout_s` and the `flag` that sets it."""
    from botocore import exceptions as bx

    if isinstance(error, bx.NoCredentialsError):
        return "no AWS credentials (set AWS_PROFILE, or the environment's keys, or a role)"
    if isinstance(error, bx.ClientError):
        return _client_error(error)
    if isinstance(error, bx.ConnectTimeoutError | bx.ReadTimeoutError):
        within = f" within {timeout_s:g} s" if timeout_s is not None else ""
        return f"no answer{within}{f' ({flag})' if flag else ''}"
    if isinstance(error, bx.IncompleteReadError):
        got, whole = error.kwargs.get("actual_bytes"), error.kwargs.get("expected_bytes")
        return f"the body ended after {got} of its {whole} bytes"
    if isinstance(error, bx.ResponseStreamingError):
        return "the connection broke while the body was read"
    if isinstance(error, bx.EndpointConnectionError):
        return f"cannot reach S3 at {printable(str(error.kwargs.get('endpoint_url', '')))}"
    return f"{type(error).__name__}: {_one_line(str(error)) or 'no detail'}"


def _client_error(error: BaseException) -> str:
    response = getattr(error, "response", {})
    details = response.get("Error", {})
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", "error")
    code = _one_line(str(details.get("Code", ""))) or str(status)
    message = _one_line(str(details.get("Message", "")))
    return f"{code}: {message}" if message else code


def _one_line(text: str) -> str:
    return printable(" ".join(text.split())[:MOST_CHARS])
