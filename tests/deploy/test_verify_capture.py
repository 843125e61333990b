"""`mlcc verify`'s capture line: the live spec.dataCapture against hp:capture, and the records
under its s3Uri, read from the local S3 (tests/local_bucket.py) through boto3."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import verify_samples as s
from fake_kube_api import FakeKubeApi, Scene
from local_aws import LocalAWS
from local_bucket import Buckets, redirected_s3

from mlcc.cli.verify import capture_records
from mlcc.cli.verify import command as verify_cli
from mlcc.config.operator.capture import Capture
from mlcc.deploy.capture_check import Records, check_capture

REPO_ROOT = Path(__file__).resolve().parents[2]
POD = "hp-dev-7c9f8d-x2k4q"
BUCKET = "hp-capture-0a1b2c"
URI = f"s3://{BUCKET}/hp-dev"
STACK_FILE = s.stack_file(
    extra="  hp:sagemakerEndpoint: true\n  hp:capture:\n    samplingPercent: 10\n"
)


def captured(sampling: object = 10, enabled: object = True) -> dict[str, Any]:
    """spec.dataCapture as mlcc/manifest/capture.py writes it."""
    return {
        "s3Uri": URI,
        "sagemakerEndpoint": {
            "enabled": enabled,
            "initialSamplingPercentage": sampling,
            "captureOptions": [{"captureMode": "Input"}, {"captureMode": "Output"}],
            "captureContentTypeHeader": {"jsonContentTypes": ["application/json"]},
        },
    }


def live(data_capture: dict[str, Any] | None) -> dict[str, Any]:
    endpoint = s.endpoint(s.rendered_env())
    if data_capture is not None:
        endpoint["spec"]["dataCapture"] = data_capture
    return endpoint


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LocalAWS]:
    with redirected_s3(monkeypatch, tmp_path) as fake:
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(REPO_ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK_FILE, encoding="utf-8")
    return tmp_path


def verify(project: Path, endpoint: dict[str, Any]) -> int:
    env = s.rendered_env()
    scene = Scene(0, endpoint, [s.pod(POD, env)], logs={(POD, "model", False): s.VLLM_EAGLE3_LOG})
    parser = argparse.ArgumentParser(prog="mlcc")
    verify_cli.register(parser.add_subparsers(dest="command", required=True))
    with FakeKubeApi([scene]) as api:
        kubeconfig = api.kubeconfig(project / "kubeconfig")
        argv = ["verify", "--project-dir", str(project), "--kubeconfig", str(kubeconfig)]
        return verify_cli.run(parser.parse_args(argv))


def capture_line(capsys: pytest.CaptureFixture[str]) -> str:
    [line] = [x for x in capsys.readouterr().out.splitlines() if " capture: " in x]
    return line


def test_verify_says_how_many_records_capture_has_written(
    aws: LocalAWS, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buckets = Buckets(aws, page_size=2)
    buckets.objects[BUCKET] = {
        "hp-dev/ab12/sme/AllTraffic/2026/12/06/11/a.jsonl": b"x" * 1500,
        "hp-dev/ab12/sme/AllTraffic/2026/12/06/12/b.jsonl": b"y" * 1500,
        "hp-dev/ab12/sme/AllTraffic/2026/12/06/12/c.jsonl": b"z" * 1500,
        "hp-dev-baseline/other.jsonl": b"not this endpoint's",
    }
    buckets.modified["hp-dev/ab12/sme/AllTraffic/2026/12/06/12/c.jsonl"] = (
        "2026-12-06T12:34:56.000Z"
    )
    assert verify(project, live(captured())) == 0
    assert capture_line(capsys) == (
        f"PASS capture: SageMaker endpoint tier on, 10% of requests into {URI}; 3 record files "
        "(4.5 kB), newest 2026-12-06 12:34:56 UTC"
    )
    assert buckets.lists == 2  # every page, Prefix hp-dev/ only


def test_no_record_yet_passes_and_says_why_there_may_be_none(
    aws: LocalAWS, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Buckets(aws).objects[BUCKET] = {}
    assert verify(project, live(captured())) == 0
    assert capture_line(capsys).endswith(
        "; no record yet (the operator writes only requests sent through the SageMaker "
        "endpoint, a sample of them)"
    )


def test_a_bucket_that_cannot_be_listed_is_said_not_failed(
    aws: LocalAWS, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buckets = Buckets(aws)
    buckets.objects[BUCKET] = {"hp-dev/a.jsonl": b"x"}
    buckets.denied.add(BUCKET)
    assert verify(project, live(captured())) == 0
    assert capture_line(capsys).endswith(
        f"; records not read: s3://{BUCKET}/hp-dev/: AccessDenied: Access Denied (grant "
        f"s3:ListBucket on arn:aws:s3:::{BUCKET})"
    )


@pytest.mark.parametrize(
    ("data_capture", "said"),
    [
        (None, "spec.dataCapture.sagemakerEndpoint.enabled is not true; "),
        (captured(sampling=100), "initialSamplingPercentage is 100, hp:capture asks 10"),
        (captured(enabled=False), "spec.dataCapture.sagemakerEndpoint.enabled is not true"),
        ({"sagemakerEndpoint": captured()["sagemakerEndpoint"]}, "spec.dataCapture.s3Uri is"),
    ],
)
def test_a_live_capture_other_than_the_stacks_fails(
    aws: LocalAWS,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    data_capture: dict[str, Any] | None,
    said: str,
) -> None:
    Buckets(aws).objects[BUCKET] = {}
    assert verify(project, live(data_capture)) == 1
    line = capture_line(capsys)
    assert line.startswith("FAIL capture: ") and said in line
    assert line.endswith(": run `pulumi up` for this stack")


def test_the_listing_stops_at_its_page_bound(aws: LocalAWS) -> None:
    buckets = Buckets(aws, page_size=1)
    buckets.objects[BUCKET] = {f"hp-dev/{n:03}.jsonl": b"x" for n in range(15)}
    records = capture_records.read_records(URI, 5.0)
    assert (records.objects, records.complete) == (capture_records.MOST_PAGES, False)
    assert records.text().startswith("at least 10 record files (10 bytes)")


def test_a_sampling_of_true_is_not_one_percent() -> None:
    check = check_capture(live(captured(sampling=True)), Capture(sampling_percent=1), Records())
    assert not check.passed and "initialSamplingPercentage is True" in check.detail


def test_records_text_reads_sizes_and_dates() -> None:
    newest = datetime(2026, 12, 6, 9, 5, tzinfo=UTC)
    assert Records(2, 3_400_000, newest).text() == (
        "2 record files (3.4 MB), newest 2026-12-06 09:05:00 UTC"
    )
    assert Records(not_read="no s3Uri").text() == "records not read: no s3Uri"
