"""`mlcc bench`'s counts, seconds and URLs: absurd values are one usage line naming the flag,
before anything is sent."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc.bench import inputs
from mlcc.cli import main

GOOD = ["--url", "http://127.0.0.1:9", "--model", "m"]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--timeout", "nan", "'nan' must be more than 0 and at most 86400 seconds"),
        ("--timeout", "inf", "'inf' must be more than 0"),
        ("--timeout", "-1", "'-1' must be more than 0"),
        ("--timeout", "0", "'0' must be more than 0"),
        ("--timeout", "1e30", "'1e30' must be more than 0"),
        ("--timeout", "soon", "'soon' is not a number of seconds"),
        ("--requests", "0", "'0' must be from 1 to 100,000"),
        ("--requests", "-3", "'-3' must be from 1 to 100,000"),
        ("--requests", "1" + "0" * 30, "must be from 1 to 100,000"),
        ("--requests", "9" * 5000, "must be from 1 to 100,000"),
        ("--requests", "1e3", "'1e3' is not a whole number"),
        ("--requests", "nan", "'nan' is not a whole number"),
        ("--concurrency", "0", "'0' must be from 1 to 1,024"),
        ("--concurrency", "100000", "'100000' must be from 1 to 1,024"),
        ("--concurrency", "inf", "'inf' is not a whole number"),
        ("--max-tokens", "10000000000", "must be from 1 to 1,000,000"),
    ],
)
def test_absurd_numbers_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    code = main(["bench", *GOOD, flag, value, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"mlcc bench: error: {flag}: ")
    assert message in err
    assert len(err.splitlines()) == 1 and len(err) < 200


@pytest.mark.parametrize(
    ("flag", "url", "message"),
    [
        ("--url", "http://127.0.0.1:0", "has no valid port (1 to 65535)"),
        ("--url", "http://127.0.0.1:65536", "has no valid port"),
        ("--url", "http://127.0.0.1:99999999999999999999", "has no valid port"),
        ("--url", "http://127.0.0.1:-1", "has no valid port"),
        ("--url", "http://127.0.0.1:http", "has no valid port"),
        ("--url", "http://127.0.0.1/v1?x=1", "is a base URL: no ?query or #fragment"),
        ("--url", "http://a b/", "contains spaces or control characters"),
        ("--url", "http://host\x1b[31m/", "contains spaces or control characters"),
        ("--url", "http://" + "a" * 70 + ".example/", "has no valid host name"),
        ("--url", "unix:///run/engine.sock", "is not http://HOST[:PORT][/PATH]"),
        ("--metrics-url", "file:///etc/passwd", "is not http://HOST[:PORT][/PATH]"),
        ("--metrics-url", "http://127.0.0.1:70000/metrics", "has no valid port"),
    ],
)
def test_bad_urls_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, url: str, message: str
) -> None:
    argv = ["--model", "m", flag, url] + (
        ["--url", "http://127.0.0.1:9"] if flag != "--url" else []
    )
    code = main(["bench", *argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"mlcc bench: error: {flag}: ")
    assert message in err
    assert len(err.splitlines()) == 1 and "\x1b" not in err


@given(st.text(max_size=60))
def test_any_seconds_text_is_a_bounded_finite_number_or_refused(text: str) -> None:
    try:
        value = inputs.seconds(text)
    except ValueError as error:
        assert "\n" not in str(error)
        return
    assert math.isfinite(value) and 0 < value <= inputs.MAX_TIMEOUT_S


@given(st.one_of(st.text(max_size=60), st.integers().map(str)))
def test_any_count_text_is_within_its_bound_or_refused(text: str) -> None:
    try:
        value = inputs.whole_number(text, inputs.MAX_REQUESTS)
    except ValueError as error:
        assert "\n" not in str(error)
        return
    assert 1 <= value <= inputs.MAX_REQUESTS


@given(st.integers(min_value=-(10**6), max_value=10**6))
def test_any_port_in_a_url_is_a_tcp_port_or_refused(port: int) -> None:
    try:
        url = inputs.parse_http_url(f"http://127.0.0.1:{port}/v1", allow_query=False)
    except ValueError:
        assert not 1 <= port <= 65535
        return
    assert url.port == port and url.path == "/v1"
