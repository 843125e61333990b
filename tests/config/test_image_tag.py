"""A prebuilt hp:image's tag against hp:engine and hp:engineVersion (mlcc/config/image_tag.py):
a warning naming both releases and the keys to change, never a refusal."""

from __future__ import annotations

import pytest

from mlcc.config.image_tag import tag_release
from mlcc.config.stack import parse

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
PIN = "@sha256:" + "a" * 64


@pytest.mark.parametrize(
    ("image", "named"),
    [
        ("vllm/vllm-openai:v0.27.1", ("vllm", "0.27.1")),
        ("lmsysorg/sglang:v0.5.17-cu129", ("sglang", "0.5.17")),
        ("me.example.com/serve:vllm-0.34.0" + PIN, ("vllm", "0.34.0")),
        ("me.example.com:5000/vllm/serve:0.27.1", ("vllm", "0.27.1")),
        ("me/vllm:cu12.8.1-v0.34.0", ("vllm", "0.34.0")),
        ("me/vllm:cuda-12.8.1", None),  # a CUDA version, not the engine's
        ("me/serve:v1.2.3", None),  # names no engine: the image's own version
        ("me/vllm:v1.2.3.4", None),
        ("me.example.com:5000/vllm/serve", None),  # a registry port is no tag
        ("me/vllm" + PIN, None),
        ("me/vllm-sglang:v0.27.1", None),  # both engines named
    ],
)
def test_the_release_a_tag_names(image: str, named: tuple[str, str] | None) -> None:
    assert tag_release(image) == named


def image_warnings(values: dict[str, str]) -> list[str]:
    parsed = parse({**BASE, **values}, stack="dev")
    return [str(w) for w in parsed.warnings if w.key == "hp:image"]


def test_a_tag_naming_another_release_than_hp_engine_version_warns() -> None:
    found = image_warnings({"hp:image": "vllm/vllm-openai:v0.34.0" + PIN})
    assert found == [
        "hp:image: its tag names vllm 0.34.0, but the endpoints run vllm 0.27.1 (hp:engine, "
        "hp:engineVersion), whose flags the program checks and the serve wrapper reads: set "
        "hp:engine and hp:engineVersion to the image's release, or use an image of vllm 0.27.1"
    ]
    assert image_warnings({"hp:image": "lmsysorg/sglang:v0.5.17" + PIN})[0].startswith(
        "hp:image: its tag names sglang 0.5.17, but the endpoints run vllm 0.27.1 "
    )


def test_a_tag_naming_the_endpoints_release_is_quiet() -> None:
    assert image_warnings({"hp:image": "vllm/vllm-openai:v0.27.1" + PIN}) == []
    values = {"hp:engineVersion": "0.34.0", "hp:image": "me/serve:vllm-0.34.0" + PIN}
    assert image_warnings(values) == []


@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_preflight_says_a_non_ecr_image_s_labels_are_not_read(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only ECR images' labels are read (tests/preflight/test_image_labels.py): another
    registry's is a headline line on each endpoint that runs hp:image, and no warning or error,
    under strict too (no source failed to answer; the check does not exist there)."""
    from mlcc.preflight import run
    from mlcc.preflight.image.part import NOT_ECR
    from mlcc.preflight.outcome import Outcome

    monkeypatch.setattr(run, "run_parts", lambda config, seconds: Outcome())
    values = {"hp:image": "vllm/vllm-openai:v0.27.1" + PIN, "hp:preflight": mode}
    config = parse({**BASE, **values}, stack="dev").config
    errors, warnings, outcome = run.preflight(config)
    assert (errors, warnings) == ([], [])
    assert outcome.lines == {config.primary.name: (NOT_ECR,)}
    assert "read from ECR only" in NOT_ECR
    without = parse({**BASE, "hp:preflight": mode}, stack="dev").config
    assert run.preflight(without)[2].lines == {}
