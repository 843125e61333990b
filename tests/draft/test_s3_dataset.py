"""`mlcc draft dataset --input s3://...` and `--upload` against the local AWS (tests/local_aws.py,
every request checked against botocore's S3 model), reached as users redirect boto3:
AWS_ENDPOINT_URL_S3. The same capture files read from S3 and from a local copy give the same
dataset; each S3 failure is one line and exit 1."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path
from typing import Any

import captures as c
import fake_vllm
import pytest
from local_aws import LocalAWS
from local_bucket import Buckets

from mlcc.cli import main
from mlcc.cli.draft import capture, s3_input
from mlcc.cli.draft.dataset import Split

BUCKET = "team-capture"
PREFIX = "my-endpoint/abc123/sme/"
URI = f"s3://{BUCKET}/{PREFIX}"
OUT_BUCKET = "team-datasets"


def capture_files() -> dict[str, bytes]:
    """Keys under PREFIX and their bytes: rows, each drop reason, and files a folder copy
    orders differently from a plain string sort ("2025/" before "2025-x/")."""
    big = b'{"pad": "' + b"x" * (3 << 20) + b'"}'
    files = {
        "2025/01/02/03/a.jsonl": [
            c.chat("what is a draft?", "a small model"),
            "{not json",
            c.chat("what  is a draft?", "again"),  # duplicate once whitespace is collapsed
            big,
        ],
        "2025/01/02/04/b.jsonl": [
            {"captureData": {"endpointInput": c.captured(c.chat_request("q"), "INPUT")}},
            c.chat("base64?", "yes", encoding="BASE64"),
            c.chat("json?", "yes", encoding="JSON", time="2025-01-02T04:00:00Z"),
            "",
            c.record(c.chat_request("stream?"), c.sse(["a", "b"]), output_type="text/event-stream"),
        ],
        "2025-x/c.jsonl": [c.chat("what is a draft?", "dup from a later folder")],
        "2025/notes.txt": ["not a capture file"],
    }
    for index in range(7):  # more objects than one page of the fake
        files[f"2025/01/03/{index:02d}.jsonl"] = [
            c.chat(f"question {index}", f"answer {index}", time=f"2025-01-03T0{index}:00:00Z")
        ]
    return {key: _lines(records) for key, records in files.items()}


def _lines(records: list[Any]) -> bytes:
    out = []
    for r in records:
        out.append(r if isinstance(r, bytes) else (r if isinstance(r, str) else json.dumps(r)))
    return b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in out)


def rows(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def failure(capsys: pytest.CaptureFixture[str]) -> str:
    """stderr without the progress lines (`reading N .jsonl objects`, `read N of M`)."""
    lines = capsys.readouterr().err.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith(("reading ", "read ")))


def dataset(*args: str) -> int:
    return main(["draft", "dataset", *args])


def served(aws: LocalAWS, files: dict[str, bytes], page_size: int = 3) -> Buckets:
    buckets = Buckets(aws, page_size=page_size)
    buckets.objects[BUCKET] = {f"{PREFIX}{k}": v for k, v in files.items()}
    buckets.objects[BUCKET]["other-endpoint/x.jsonl"] = _lines([c.chat("elsewhere", "no")])
    buckets.objects[OUT_BUCKET] = {}
    return buckets


def test_s3_and_a_local_copy_give_the_same_dataset(aws: LocalAWS, tmp_path: Path) -> None:
    files = capture_files()
    buckets = served(aws, files)
    local = tmp_path / "copy"
    for key, data in files.items():
        (local / key).parent.mkdir(parents=True, exist_ok=True)
        (local / key).write_bytes(data)
    flags = ["--max-record-bytes", "65536", "--validation-fraction", "0.3"]
    assert dataset("--input", URI, "--output", str(tmp_path / "s3"), *flags) == 0
    assert dataset("--input", str(local), "--output", str(tmp_path / "local"), *flags) == 0
    for name in ("train.jsonl", "validation.jsonl"):
        assert rows(tmp_path / "s3" / name) == rows(tmp_path / "local" / name)
    assert rows(tmp_path / "s3" / "train.jsonl") and rows(tmp_path / "s3" / "validation.jsonl")
    s3_drops, local_drops = rows(tmp_path / "s3/drops.jsonl"), rows(tmp_path / "local/drops.jsonl")
    assert s3_drops == [
        {"where": f"s3://{BUCKET}/{PREFIX}{d['where']}", "reason": d["reason"]} for d in local_drops
    ]
    reasons = {d["reason"] for d in s3_drops}
    assert {capture.MALFORMED_JSON, capture.DUPLICATE, capture.OVERSIZED} <= reasons
    assert capture.NO_OUTPUT in reasons
    # "2025-x/c.jsonl" comes after the "2025/" folder, as in the local copy: its prompt is the dup
    assert {"where": f"{URI}2025-x/c.jsonl:1", "reason": capture.DUPLICATE} in s3_drops
    from_s3 = json.loads((tmp_path / "s3/provenance.json").read_text())
    from_copy = json.loads((tmp_path / "local/provenance.json").read_text())
    assert from_s3["input"] == URI
    assert from_s3["counts"] == from_copy["counts"]
    assert from_s3["inferenceTime"] == from_copy["inferenceTime"]
    assert [(s["path"], s["size"], s["sha256"]) for s in from_s3["sources"]] == [
        (f"{URI}{s['path']}", s["size"], s["sha256"]) for s in from_copy["sources"]
    ]
    assert all(s["etag"] for s in from_s3["sources"])
    # 11 keys under the prefix, 3 a page: every page was read, with its ContinuationToken
    assert buckets.lists == 4
    tokens = [p.get("ContinuationToken") for o, p in aws.requests if o == "ListObjectsV2"]
    assert tokens == [None, "3", "6", "9"]
    assert "GetObject" in aws.operations("s3") and "2025/notes.txt" not in str(aws.requests)


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda b: b.objects.pop(BUCKET), "NoSuchBucket"),
        (lambda b: b.denied.add(BUCKET), "AccessDenied"),
        (lambda b: b.objects.__setitem__(BUCKET, {f"{PREFIX}a.txt": b"x"}), "no .jsonl objects"),
        (lambda b: b.denied.add(f"{BUCKET}/{PREFIX}2025/01/03/00.jsonl"), "s3:GetObject"),
        (lambda b: b.delays.__setitem__(f"{PREFIX}2025/01/03/00.jsonl", 3.0), "within 0.4 s"),
        (lambda b: b.cut.__setitem__(f"{PREFIX}2025/01/02/03/a.jsonl", 100), "body ended after"),
    ],
    ids=["no-bucket", "denied", "no-jsonl", "object-denied", "read-timeout", "cut-short"],
)
def test_each_s3_failure_is_one_line_and_exit_1(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: Any, expected: str
) -> None:
    buckets = served(aws, capture_files())
    setup(buckets)
    out = tmp_path / "out"
    code = dataset("--input", URI, "--output", str(out), "--s3-timeout", "0.4")
    err = failure(capsys)
    assert code == 1
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err
    assert err.startswith("draft dataset: --input")
    assert not (out / "provenance.json").exists()  # no provenance: not a complete dataset


def test_an_unreachable_endpoint_is_one_line(
    aws: LocalAWS,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    code = dataset("--input", URI, "--output", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and f"cannot reach S3 at http://127.0.0.1:{port}" in err


def test_progress_is_at_most_one_line_every_few_seconds(aws: LocalAWS, tmp_path: Path) -> None:
    served(aws, capture_files())
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0  # a second per look: about one line every five objects
        return now[0]

    shown = io.StringIO()
    tally = s3_input.build(URI, tmp_path / "out", Split(0.0, 0), 65536, 5.0, shown, clock)
    lines = shown.getvalue().splitlines()
    assert tally.kept and 2 <= len(lines) <= 3
    assert lines[0] == f"reading 10 .jsonl objects (3 MiB) under {URI}"
    assert lines[1].startswith("read ") and " of 10 objects (" in lines[1]


def test_upload_puts_the_four_files_provenance_last(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buckets = served(aws, capture_files())
    out = tmp_path / "out"
    code = dataset("--input", URI, "--output", str(out), "--upload", f"s3://{OUT_BUCKET}/ds/run1")
    assert code == 0
    stored = buckets.objects[OUT_BUCKET]
    names = ("train.jsonl", "validation.jsonl", "drops.jsonl", "provenance.json")
    assert stored == {f"ds/run1/{n}": (out / n).read_bytes() for n in names}
    puts = [p["Key"] for o, p in aws.requests if o == "PutObject"]
    assert puts == [f"ds/run1/{n}" for n in names]
    assert buckets.checksum_problems == []
    assert all("ChecksumCRC32" in p for o, p in aws.requests if o == "PutObject")  # checked
    printed = capsys.readouterr().out
    assert (
        f"pulumi config set --path hp:draftTraining.dataset s3://{OUT_BUCKET}/ds/run1/" in printed
    )


@pytest.mark.parametrize(
    "value",
    ["s3://team-datasets", "s3://team-datasets/", "s3://Bad_Bucket/x/", "/local/dir", "s3://b"],
)
def test_a_bad_upload_prefix_is_exit_2_before_any_request(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    served(aws, capture_files())
    code = dataset("--input", URI, "--output", str(tmp_path / "out"), "--upload", value)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("draft dataset: --upload:")
    assert aws.calls == []
    assert not (tmp_path / "out").exists()


def test_an_upload_failure_names_what_was_and_was_not_uploaded(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buckets = served(aws, capture_files())
    buckets.denied.add(f"{OUT_BUCKET}/ds/drops.jsonl")
    code = dataset(
        "--input", URI, "--output", str(tmp_path / "out"), "--upload", f"s3://{OUT_BUCKET}/ds/"
    )
    err = failure(capsys)
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert f"s3://{OUT_BUCKET}/ds/drops.jsonl: AccessDenied" in err
    assert (
        "uploaded: train.jsonl, validation.jsonl; not uploaded: drops.jsonl, provenance.json" in err
    )
    assert sorted(buckets.objects[OUT_BUCKET]) == ["ds/train.jsonl", "ds/validation.jsonl"]


def test_regenerate_uploads_after_the_counts_check_out(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buckets = served(aws, capture_files())
    assert dataset("--input", URI, "--output", str(tmp_path / "ds")) == 0
    target = f"s3://{OUT_BUCKET}/regenerated/run-1/"
    args = ["draft", "regenerate", "--dataset", str(tmp_path / "ds"), "--upload", target]
    with fake_vllm.FakeVllm() as engine:
        code = main([*args, "--endpoint", engine.url, "--output", str(tmp_path / "regen")])
    assert code == 0
    names = ("train.jsonl", "validation.jsonl", "drops.jsonl", "provenance.json")
    stored = buckets.objects[OUT_BUCKET]
    assert stored == {
        f"regenerated/run-1/{n}": (tmp_path / "regen" / n).read_bytes() for n in names
    }
    provenance = json.loads(stored["regenerated/run-1/provenance.json"])
    assert provenance["tokens"]["train"] > 0  # what preflight reads for the disk check
    assert provenance["dataset"]["provenance"]["input"] == URI
    out = capsys.readouterr().out
    assert f"pulumi config set --path hp:draftTraining.dataset {target}" in out


def test_regenerate_refuses_a_bad_upload_before_any_request(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["draft", "regenerate", "--dataset", str(tmp_path), "--endpoint", "http://127.0.0.1:9"]
    assert main([*args, "--upload", "s3://team-datasets"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("draft regenerate: --upload:") and err.count("\n") == 1
    assert aws.calls == []


def test_regenerate_without_rows_uploads_nothing(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buckets = served(aws, capture_files())
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "train.jsonl").write_text("")
    args = ["draft", "regenerate", "--dataset", str(folder), "--output", str(tmp_path / "r")]
    with fake_vllm.FakeVllm() as engine:
        code = main([*args, "--endpoint", engine.url, "--upload", f"s3://{OUT_BUCKET}/x/"])
    assert code == 1 and buckets.objects[OUT_BUCKET] == {}
    assert "PutObject" not in aws.operations("s3")
