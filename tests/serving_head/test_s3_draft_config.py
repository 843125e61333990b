"""An s3:// hp:speculativeModel: accepted for vLLM (top level and per entry), refused for SGLang,
malformed URIs refused, the keys the copy depends on checked (docs/draft-serving.md)."""

from __future__ import annotations

import json

import pytest

from mlcc.config.stack import ConfigError, Parsed, parse
from mlcc.serving import s3_draft
from mlcc.serving.engines import Engine

HEAD = "s3://team-drafts/llama-8b/run-3/checkpoint-best/"
BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:speculativeAlgorithm": "eagle3",
    "hp:speculativeModel": HEAD,
    "hp:kubernetes": json.dumps({"serviceAccountName": "draft-reader"}),
}


def parsed(**values: object) -> Parsed:
    given = {f"hp:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
    return parse({**BASE, **given}, stack="dev")


def errors(**values: object) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parsed(**values)
    return [str(p) for p in raised.value.problems]


def test_a_vllm_endpoint_takes_an_s3_head() -> None:
    result = parsed()
    (endpoint,) = result.config.endpoints
    assert endpoint.engine is Engine.VLLM
    assert endpoint.speculative is not None
    assert endpoint.speculative.draft_model == HEAD
    assert [str(w) for w in result.warnings if "speculativeModel" in w.key] == []


def test_an_entry_takes_its_own_s3_head() -> None:
    entries = [
        {"name": "trained", "speculativeModel": "s3://team-drafts/heads/v2"},
        {"name": "public", "speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"},
    ]
    trained, public = parsed(endpoints=entries).config.endpoints
    assert trained.speculative is not None and public.speculative is not None
    assert trained.speculative.draft_model == "s3://team-drafts/heads/v2"
    assert public.speculative.draft_model == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def test_sglang_refuses_an_s3_head_naming_the_engine_and_why() -> None:
    (line,) = [e for e in errors(engine="sglang") if "speculativeModel" in e]
    assert line.startswith("hp:speculativeModel:")
    assert "hp:engine" in line and "vllm" in line
    assert "speculators" in line


def test_an_sglang_entry_is_refused_under_its_own_key() -> None:
    entries = [{"name": "sg", "engine": "sglang"}]
    found = [e for e in errors(endpoints=entries) if "speculativeModel" in e]
    (line,) = found
    assert line.startswith("hp:endpoints[0].speculativeModel:")
    assert "(inherited from hp:speculativeModel)" in line


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("s3://team-drafts", "no folder"),
        ("s3://team-drafts/", "no folder"),
        ("s3://Team_Drafts/head/", "bucket name"),
        ("s3://ab/head/", "bucket name"),
        ("s3://192.168.1.10/head/", "bucket name"),
        ("s3://team-drafts/a/../b/", "'..'"),
        ("s3://team-drafts/a//b/", "empty"),
        ("s3://team-drafts/a b/", "letters, digits"),
        ("s3://team-drafts/$(reboot)/", "letters, digits"),
    ],
)
def test_malformed_s3_uris_are_refused_with_one_line(uri: str, words: str) -> None:
    (line,) = [e for e in errors(speculativeModel=uri) if "speculativeModel" in e]
    assert line.startswith("hp:speculativeModel:")
    assert words in line
    assert "Traceback" not in line


def test_prefetch_cannot_serve_a_copied_head() -> None:
    (line,) = [e for e in errors(prefetch="true") if e.startswith("hp:prefetch")]
    assert "s3://" in line and "hp:prefetch" in line


def test_the_copy_init_container_name_is_reserved() -> None:
    kubernetes = {
        "serviceAccountName": "draft-reader",
        "initContainers": [{"name": s3_draft.INIT_CONTAINER, "image": "busybox:1.36"}],
    }
    (line,) = [e for e in errors(kubernetes=kubernetes) if "initContainers" in e]
    assert s3_draft.INIT_CONTAINER in line


def test_create_mode_needs_no_service_account_of_the_users() -> None:
    warned = [str(w) for w in parsed(kubernetes={}).warnings]
    assert [w for w in warned if "serviceAccountName" in w] == []


def test_on_an_existing_cluster_a_missing_service_account_warns() -> None:
    warned = [str(w) for w in parsed(kubernetes={}, clusterName="team-cluster").warnings]
    (line,) = [w for w in warned if "serviceAccountName" in w]
    assert line.startswith("hp:kubernetes.serviceAccountName: not set")
    assert "s3:GetObject" in line and HEAD in line
    given = parsed(clusterName="team-cluster").warnings  # BASE names one
    assert [w for w in given if "serviceAccountName" in str(w)] == []


def test_a_hub_revision_is_ignored_for_an_s3_head() -> None:
    warned = [str(w) for w in parsed(speculativeModelRevision="v2").warnings]
    assert any(w.startswith("hp:speculativeModelRevision: ignored") for w in warned)


def test_parse_gives_bucket_and_folder() -> None:
    draft = s3_draft.parse("s3://team-drafts/heads/v2")
    assert draft is not None
    assert (draft.bucket, draft.prefix, draft.uri) == (
        "team-drafts",
        "heads/v2/",
        "s3://team-drafts/heads/v2/",
    )
    assert draft.key("config.json") == "heads/v2/config.json"
    assert s3_draft.parse("s3://team-drafts") is None
