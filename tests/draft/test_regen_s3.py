"""`mlcc draft regenerate --dataset s3://...` against the local AWS (every request checked against
botocore's S3 model, tests/local_aws.py) and the fake vLLM server (tests/draft/fake_vllm.py): the
same dataset read from a folder and from S3 regenerates to the same files; each S3 failure is
one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import captures as c
import fake_vllm
import pytest
from local_aws import LocalAWS
from local_bucket import Buckets

from mlcc.cli import main
from mlcc.cli.draft import regen_pool, regen_s3, s3_store

BUCKET = "team-datasets"
PREFIX = "datasets/run-1/"
URI = f"s3://{BUCKET}/{PREFIX}"
SPLITS = ("train.jsonl", "validation.jsonl")
ROW_BOUND = 4096  # regen_pool.MAX_ROW_BYTES, lowered so that a test line can exceed it


def local_dataset(tmp_path: Path) -> Path:
    """A folder `mlcc draft dataset` wrote, with a line that is no row, an over-long line and a
    prompt the fake answers with no text (each a drop) appended to its train.jsonl."""
    questions = [f"question {n}" for n in range(12)] + ["empty answer please"]
    c.write(tmp_path / "capture" / "a.jsonl", [c.chat(q, "the old answer") for q in questions])
    args = ["--input", str(tmp_path / "capture"), "--output", str(tmp_path / "ds")]
    assert main(["draft", "dataset", *args, "--validation-fraction", "0.3"]) == 0
    folder = tmp_path / "ds"
    assert (folder / "train.jsonl").read_text() and (folder / "validation.jsonl").read_text()
    with (folder / "train.jsonl").open("a") as train:
        train.write("{not json\n\n" + json.dumps({"pad": "x" * 2 * ROW_BOUND}) + "\n")
    return folder


def upload(aws: LocalAWS, folder: Path) -> Buckets:
    buckets = Buckets(aws, page_size=2)
    objects = {f"{PREFIX}{p.name}": p.read_bytes() for p in folder.iterdir()}
    # under the prefix but not the dataset's own files: never read
    objects[f"{PREFIX}old/train.jsonl"] = b'{"conversations": "stale"}\n'
    objects["datasets/run-10/train.jsonl"] = b'{"conversations": "another run"}\n'
    buckets.objects[BUCKET] = objects
    return buckets


def regenerate(dataset: str, out: Path, url: str, *extra: str) -> int:
    args = ["draft", "regenerate", "--dataset", dataset, "--endpoint", url]
    return main([*args, "--output", str(out), "--s3-timeout", "0.4", *extra])


def lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regen_pool, "MAX_ROW_BYTES", ROW_BOUND)


@pytest.mark.usefixtures("bound")
def test_a_dataset_from_s3_regenerates_as_its_local_copy(aws: LocalAWS, tmp_path: Path) -> None:
    folder = local_dataset(tmp_path)
    upload(aws, folder)
    with fake_vllm.FakeVllm() as engine:
        assert regenerate(str(folder), tmp_path / "local", engine.url) == 0
        assert regenerate(URI, tmp_path / "s3", engine.url) == 0
    for name in (*SPLITS, "drops.jsonl"):
        assert lines(tmp_path / "s3" / name) == lines(tmp_path / "local" / name), name
    drops = {d["reason"] for d in lines(tmp_path / "s3" / "drops.jsonl")}
    assert drops == {"not a conversations row", "empty answer"}
    oversized = [d for d in lines(tmp_path / "s3/drops.jsonl") if "longer than" in d["detail"]]
    assert len(oversized) == 1  # the same line bound as a local file
    from_s3 = json.loads((tmp_path / "s3" / "provenance.json").read_text())
    from_copy = json.loads((tmp_path / "local" / "provenance.json").read_text())
    assert from_s3["counts"] == from_copy["counts"] and from_s3["counts"]["written"] == 12
    assert from_s3["tokens"] == from_copy["tokens"]
    assert from_s3["dataset"]["path"] == URI and from_copy["dataset"]["path"] == str(folder)
    assert from_s3["dataset"]["provenance"] == from_copy["dataset"]["provenance"]
    assert from_s3["dataset"]["provenance"]["counts"]["kept"] == 13
    names = (*SPLITS, "provenance.json")
    assert [(s["path"], s["size"], s["sha256"]) for s in from_s3["dataset"]["sources"]] == [
        (f"{URI}{n}", len(b := (folder / n).read_bytes()), hashlib.sha256(b).hexdigest())
        for n in names
    ]
    assert all(len(s["etag"]) == 32 for s in from_s3["dataset"]["sources"])
    # one listing of the prefix (two pages of two keys), then each object once
    gets = [p["Key"] for o, p in aws.requests if o == "GetObject"]
    assert gets == [f"{PREFIX}provenance.json", *[f"{PREFIX}{n}" for n in SPLITS]]
    assert sorted(p.name for p in (tmp_path / "s3").iterdir()) == sorted(
        (*SPLITS, "drops.jsonl", "provenance.json")
    )  # the spool is gone
    listings = [p for o, p in aws.requests if o == "ListObjectsV2"]
    assert all(p["Prefix"] == PREFIX and p["Delimiter"] == "/" for p in listings)


def test_a_dataset_without_provenance_is_read_and_recorded_so(
    aws: LocalAWS, tmp_path: Path
) -> None:
    folder = local_dataset(tmp_path)
    (folder / "provenance.json").unlink()
    upload(aws, folder)
    with fake_vllm.FakeVllm() as engine:
        assert regenerate(URI, tmp_path / "s3", engine.url) == 0
    record = json.loads((tmp_path / "s3" / "provenance.json").read_text())
    assert record["dataset"]["provenance"] is None
    assert [s["path"] for s in record["dataset"]["sources"]] == [f"{URI}{n}" for n in SPLITS]


def _keep_only_provenance(b: Buckets) -> None:
    b.objects[BUCKET] = {k: v for k, v in b.objects[BUCKET].items() if "provenance" in k}


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda b: b.objects.pop(BUCKET), f"--dataset {URI}: listing it: NoSuchBucket"),
        (lambda b: b.denied.add(BUCKET), f"(grant s3:ListBucket on arn:aws:s3:::{BUCKET})"),
        (_keep_only_provenance, "no train.jsonl or validation.jsonl under this prefix"),
        (
            lambda b: b.denied.add(f"{BUCKET}/{PREFIX}train.jsonl"),
            f"{URI}train.jsonl: AccessDenied: Access Denied (grant s3:GetObject on",
        ),
        (
            lambda b: b.delays.__setitem__(f"{PREFIX}validation.jsonl", 3.0),
            f"{URI}validation.jsonl: no answer within 0.4 s (--s3-timeout)",
        ),
        (lambda b: b.cut.__setitem__(f"{PREFIX}train.jsonl", 10), "reading it: the body ended"),
        (
            lambda b: b.delays.__setitem__(f"{PREFIX}provenance.json", 3.0),
            f"{URI}provenance.json: no answer within 0.4 s",
        ),
    ],
    ids=["no-bucket", "denied", "no-splits", "object-denied", "timeout", "cut", "provenance"],
)
def test_each_s3_failure_is_one_line_and_exit_1(
    aws: LocalAWS,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    setup: Any,
    expected: str,
) -> None:
    buckets = upload(aws, local_dataset(tmp_path))
    capsys.readouterr()
    setup(buckets)
    out = tmp_path / "out"
    with fake_vllm.FakeVllm() as engine:
        code = regenerate(URI, out, engine.url)
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("draft regenerate: --dataset") and expected in err, err
    assert not (out / "provenance.json").exists()
    assert not engine.bodies  # each failure comes before the first prompt is sent


@pytest.mark.parametrize(
    "value", ["s3://Bad_Bucket/x/", "s3://b", "s3://bucket/a//b/", "s3://192.168.1.1/x/"]
)
def test_a_malformed_dataset_uri_is_exit_2_before_any_request(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code = regenerate(value, tmp_path / "out", "http://127.0.0.1:9")
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("draft regenerate: --dataset:")
    assert aws.calls == [] and not (tmp_path / "out").exists()


def test_the_spool_is_the_objects_and_is_removed_after_a_failure(
    aws: LocalAWS, tmp_path: Path
) -> None:
    folder = local_dataset(tmp_path)
    buckets = upload(aws, folder)
    dataset = regen_s3.open_dataset(s3_store.place(URI, need_prefix=False), 5.0)
    (tmp_path / "spool").mkdir()
    local = dataset.spool(tmp_path / "spool")
    for name in SPLITS:
        assert (local.path / name).read_bytes() == (folder / name).read_bytes()
    assert regen_pool.count_rows(local) == 13 + 2  # the rows, the no-JSON and over-long lines
    buckets.cut[f"{PREFIX}validation.jsonl"] = 10
    out = tmp_path / "out"
    with fake_vllm.FakeVllm() as engine:
        assert regenerate(URI, out, engine.url) == 1
    assert [p.name for p in out.iterdir()] == []


def test_uploading_over_the_dataset_prefix_is_refused_before_any_request(
    aws: LocalAWS, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = regenerate(URI, tmp_path / "out", "http://127.0.0.1:9", "--upload", URI.rstrip("/"))
    err = capsys.readouterr().err
    assert code == 2 and err == (
        f"draft regenerate: --upload {URI} is the --dataset prefix: the regenerated files would "
        "replace the dataset's; choose another --upload prefix\n"
    )
    assert aws.calls == []
