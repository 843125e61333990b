"""hp:modelRevision and hp:speculativeModelRevision reach both engines and the operator."""

from __future__ import annotations

import json

from crd_schema import assert_valid_manifest
from test_workload import env_dict, manifest, workload

from mlcc.serving.engines import Engine
from mlcc.serving.speculative import SpeculativeSpec

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_a_commit_goes_to_the_engine_and_the_operators_download() -> None:
    spec = SpeculativeSpec("eagle3", "org/head", 3, draft_revision="v2")
    for engine in Engine:
        w = workload(engine, model_revision=COMMIT)
        env = env_dict(w, spec)
        document = manifest(w, spec)
        assert env[f"SM_{engine.value.upper()}_REVISION"] == COMMIT
        source = document["spec"]["modelSourceConfig"]["huggingFaceModel"]  # type: ignore[index]
        assert source["commitSHA"] == COMMIT
        assert_valid_manifest(document, "inferenceendpointconfigs.yaml")
    vllm = json.loads(str(env_dict(workload(Engine.VLLM), spec)["SM_VLLM_SPECULATIVE_CONFIG"]))
    assert vllm["revision"] == "v2"
    assert (
        env_dict(workload(Engine.SGLANG), spec)["SM_SGLANG_SPECULATIVE_DRAFT_MODEL_REVISION"]
        == "v2"
    )


def test_a_branch_goes_to_the_engine_only_and_main_adds_nothing() -> None:
    branch = manifest(workload(model_revision="release"), None)
    source = branch["spec"]["modelSourceConfig"]["huggingFaceModel"]  # type: ignore[index]
    assert "commitSHA" not in source  # the operator's field takes a commit only
    assert env_dict(workload(model_revision="release"), None)["SM_VLLM_REVISION"] == "release"
    plain = env_dict(workload(), SpeculativeSpec("eagle3", "org/head", 3))
    assert not any("REVISION" in name for name in plain)
    assert "revision" not in json.loads(str(plain["SM_VLLM_SPECULATIVE_CONFIG"]))
