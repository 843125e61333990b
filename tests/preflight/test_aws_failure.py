"""One line per botocore failure, shared by preflight's head reads and the dataset steps."""

from __future__ import annotations

import pytest
from botocore import exceptions as bx

from mlcc.preflight.bounded.aws_failure import described


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (bx.NoCredentialsError(), "no AWS credentials (set AWS_PROFILE"),
        (
            bx.ClientError({"Error": {"Code": "AccessDenied", "Message": "No\nway"}}, "GetObject"),
            "AccessDenied: No way",
        ),
        (
            bx.ClientError({"ResponseMetadata": {"HTTPStatusCode": 403}}, "HeadObject"),
            "403",
        ),
        (bx.ReadTimeoutError(endpoint_url="http://x"), "no answer within 2 s (--s3-timeout)"),
        (
            bx.IncompleteReadError(actual_bytes=3, expected_bytes=9),
            "the body ended after 3 of its 9 bytes",
        ),
        (
            bx.EndpointConnectionError(endpoint_url="http://127.0.0.1:1\x1b[2J"),
            "cannot reach S3 at http://127.0.0.1:1\\x1b[2J",
        ),
        (ValueError("bad\x1b value\n" + "x" * 500), "ValueError: bad\\x1b value x"),
    ],
)
def test_each_failure_is_one_printable_line(error: BaseException, said: str) -> None:
    line = described(error, 2.0, "--s3-timeout")
    assert line.startswith(said)
    assert "\n" not in line and "\x1b" not in line and len(line) < 300


def test_a_timeout_without_a_deadline_says_only_no_answer() -> None:
    assert described(bx.ConnectTimeoutError(endpoint_url="http://x")) == "no answer"
