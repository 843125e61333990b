"""Preflight reads an s3:// head from S3 (boto3 against the local AWS, checked against botocore's
S3 model) and applies every check a Hub draft gets: format, token count, vocabulary, the
verifier's hidden size, EAGLE-1 vs EAGLE-3 from the fc shape; each failure one line naming
hp:speculativeModel."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_hub import FakeHub
from local_aws import LocalAWS, Reply, error, local_aws
from preview_run import hub_served, speculative_stack

from mlcc.config.stack import Parsed
from mlcc.preflight import s3_head
from mlcc.preflight.account.fetch import clients
from mlcc.preflight.hub import Fetched, Refused, Unreachable
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, settle

MODELS = Path(__file__).resolve().parents[1] / "preflight" / "models"
QWEN_HEAD = (MODELS / "speculators-format/qwen3-moe-eagle3-head/config.json").read_bytes()
MISTRAL_HEAD = (MODELS / "speculators-format/mistral-123b-eagle3-head/config.json").read_bytes()
BUCKET = "team-drafts"
PREFIX = "qwen3/run-1/checkpoint-best/"
URI = f"s3://{BUCKET}/{PREFIX}"

hub = pytest.fixture(hub_served, name="hub")


class Bucket:
    """Objects under their keys, served as S3 GetObject (ranges) and ListObjectsV2."""

    def __init__(self, fake: LocalAWS, objects: dict[str, bytes]) -> None:
        self.objects = objects
        fake.on("GetObject", self.get, service="s3")
        fake.on("ListObjectsV2", self.list, service="s3")

    def get(self, request: dict[str, Any]) -> Reply:
        if request["Bucket"] != BUCKET:
            return error("NoSuchBucket", "The specified bucket does not exist", 404)
        data = self.objects.get(request["Key"])
        if data is None:
            return error("NoSuchKey", "The specified key does not exist.", 404)
        first, _, last = str(request.get("Range", "bytes=0-")).removeprefix("bytes=").partition("-")
        end = min(int(last), len(data) - 1) if last else len(data) - 1
        part = data[int(first) : end + 1]
        headers = {"ETag": '"0123abcd"', "Content-Range": f"bytes {first}-{end}/{len(data)}"}
        return Reply(206, part, headers=headers)

    def list(self, request: dict[str, Any]) -> Reply:
        keys = sorted(k for k in self.objects if k.startswith(request.get("Prefix", "")))
        contents = [{"Key": k, "Size": len(self.objects[k])} for k in keys]
        return Reply(
            200,
            {
                "Name": BUCKET,
                "Prefix": request.get("Prefix", ""),
                "KeyCount": len(keys),
                "IsTruncated": False,
                "Contents": contents,
            },
        )


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAWS]:
    for name in list(os.environ):
        if name.startswith(("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")):
            monkeypatch.delenv(name)
    with local_aws() as fake:
        monkeypatch.setenv("AWS_ENDPOINT_URL", fake.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
        yield fake
    assert fake.violations == []
    assert fake.reply_problems == []


def stack(target: str = "Qwen/Qwen3-8B", **more: str) -> Parsed:
    return speculative_stack("eagle3", target, URI, **more)


def checked(parsed: Parsed) -> tuple[list[str], list[str], list[str]]:
    outcome = models_part(parsed.config, 5)
    errors, warnings = settle(outcome, Mode.STRICT)
    unchecked = [str(u) for u in outcome.unchecked]
    return [str(e) for e in errors], [str(w) for w in warnings], unchecked


def head_files(config: bytes) -> dict[str, bytes]:
    return {f"{PREFIX}config.json": config, f"{PREFIX}model.safetensors": b"\0" * 1000}


def test_a_head_that_fits_passes_as_a_hub_head_would(hub: FakeHub, aws: LocalAWS) -> None:
    Bucket(aws, head_files(QWEN_HEAD))
    errors, warnings, unchecked = checked(stack(speculativeNumTokens="3"))
    assert (errors, warnings, unchecked) == ([], [], [])
    assert {c.operation for c in aws.calls} == {"GetObject", "ListObjectsV2"}
    get = next(c for c in aws.calls if c.operation == "GetObject")
    assert get.params["Key"] == f"{PREFIX}config.json"


def test_the_heads_token_count_is_checked(hub: FakeHub, aws: LocalAWS) -> None:
    Bucket(aws, head_files(QWEN_HEAD))
    errors, _, _ = checked(stack(speculativeNumTokens="4"))
    assert errors == [
        "hp:speculativeNumTokens: is 4, and the draft's config says 3 (its speculators_config "
        "proposes 3 tokens a step); set hp:speculativeNumTokens to 3"
    ]


def test_a_head_for_another_target_is_refused(hub: FakeHub, aws: LocalAWS) -> None:
    Bucket(aws, head_files(MISTRAL_HEAD))
    parsed = stack("meta-llama/Llama-3.1-8B-Instruct", speculativeNumTokens="3", hfToken="t")
    errors, _, _ = checked(parsed)
    assert errors == [
        "hp:speculativeModel: draft hidden size 12288, target 4096: the head was trained for "
        "another target",
        "hp:speculativeModel: draft vocabulary 131072 tokens, target 128256: the head was "
        "trained for another tokenizer",
    ]


def test_a_missing_head_is_one_error_naming_the_key(hub: FakeHub, aws: LocalAWS) -> None:
    Bucket(aws, {})
    errors, _, _ = checked(stack(speculativeNumTokens="3"))
    assert errors == [
        f"hp:speculativeModel: {URI}config.json does not exist: no head at this prefix"
    ]


def test_a_config_that_is_not_json_is_one_error(hub: FakeHub, aws: LocalAWS) -> None:
    Bucket(aws, head_files(b"{not json"))
    (line,) = checked(stack(speculativeNumTokens="3"))[0]
    assert line.startswith(f"hp:speculativeModel: {URI}config.json is not JSON")


def test_access_denied_leaves_the_head_unchecked_with_one_line(hub: FakeHub, aws: LocalAWS) -> None:
    aws.on("GetObject", error("AccessDenied", "Access Denied", 403), service="s3")
    errors, _, unchecked = checked(stack(speculativeNumTokens="3"))
    (line,) = unchecked  # not checked, as an unreachable Hub draft (strict mode: an error)
    assert "access denied" in line and "s3:GetObject" in line
    (settled,) = errors
    assert settled.startswith("hp:speculativeModel: not checked:") and "access denied" in settled


def eagle_config() -> bytes:
    """A plain one-layer LlamaForCausalLM head: its config cannot tell EAGLE-1 from EAGLE-3."""
    return json.dumps(
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "num_hidden_layers": 1,
            "vocab_size": 128256,
            "max_position_embeddings": 8192,
            "torch_dtype": "bfloat16",
        }
    ).encode()


def safetensors_with_fc(inputs: int) -> bytes:
    header = json.dumps(
        {"fc.weight": {"dtype": "BF16", "shape": [4096, inputs], "data_offsets": [0, 16]}}
    ).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * 16


@pytest.mark.parametrize(("inputs", "width"), [(3 * 4096, 12288), (2 * 4096, 8192)])
def test_the_fc_width_comes_from_the_safetensors_header(
    aws: LocalAWS, inputs: int, width: int
) -> None:
    files = {
        f"{PREFIX}config.json": eagle_config(),
        f"{PREFIX}model.safetensors": safetensors_with_fc(inputs),
    }
    Bucket(aws, files)
    made = clients("us-east-1", "", 5)
    assert not isinstance(made, Unreachable)
    result = s3_head.fetch(URI, made)  # type: ignore[arg-type]
    assert isinstance(result, Fetched)
    assert result.facts.fc_in_features == width
    ranges = [c.params.get("Range") for c in aws.calls if c.operation == "GetObject"]
    assert "bytes=0-7" in ranges  # the header's length first, then only the header


def test_a_missing_bucket_is_refused(aws: LocalAWS) -> None:
    Bucket(aws, {})
    made = clients("us-east-1", "", 5)
    result = s3_head.fetch("s3://other-bucket/heads/v1/", made)  # type: ignore[arg-type]
    assert result == Refused("bucket other-bucket does not exist")
