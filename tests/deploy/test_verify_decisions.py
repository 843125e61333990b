"""The pure decisions of `mlcc verify` on realistic CRs, pods and engine logs."""

from __future__ import annotations

import json
from typing import Any

import pytest
import verify_samples as s

from mlcc.deploy.check import Check, all_passed
from mlcc.deploy.endpoint_pods import endpoint_pods
from mlcc.deploy.engine_log import check_acceptance, check_engine_log
from mlcc.deploy.verify import (
    Observed,
    check_endpoint_state,
    check_env,
    verify_endpoint,
    worker_container,
)
from mlcc.serving.engines import Engine

VLLM_CONFIG_JSON = json.dumps(
    {"method": "eagle3", "model": s.EAGLE3_DRAFT, "num_speculative_tokens": 5},
    separators=(",", ":"),
)


def observed(
    env: list[dict[str, object]],
    log: str,
    *,
    pod_env: list[dict[str, object]] | None = None,
    **endpoint_fields: object,
) -> Observed:
    pod = s.pod("hp-dev-7c9f8d-x2k4q", env if pod_env is None else pod_env)
    return Observed(
        namespace="inference",
        name="hp-dev",
        endpoint=s.endpoint(env, **endpoint_fields),  # type: ignore[arg-type]
        pods=[pod],
        pod_selection="selector app=hp-dev",
        logs={"hp-dev-7c9f8d-x2k4q": log},
    )


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


# --- expectations from the stack config -------------------------------------------------------


def test_the_vllm_expectation_is_the_selected_engines_set_from_the_stack_config() -> None:
    expected = s.expectation()
    assert expected.engine is Engine.VLLM
    assert expected.env == {
        "HP_SPECULATIVE_ALGORITHM": "eagle3",
        "SM_VLLM_SPECULATIVE_CONFIG": VLLM_CONFIG_JSON,
    }
    assert (expected.algorithm, expected.engine_algorithm) == ("eagle3", "eagle3")


def test_the_sglang_expectation_has_the_full_triple_and_no_vllm_variables() -> None:
    expected = s.expectation(engine="sglang")
    assert expected.env == {
        "HP_SPECULATIVE_ALGORITHM": "eagle3",
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE3",
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": s.EAGLE3_DRAFT,
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    }
    assert expected.engine_algorithm == "EAGLE3"


def test_without_an_algorithm_nothing_speculative_is_expected() -> None:
    expected = s.expectation(speculativeAlgorithm=None, speculativeModel=None)
    assert expected.env == {}
    assert not expected.speculation_on


# --- a healthy endpoint -----------------------------------------------------------------------


def test_a_healthy_vllm_eagle3_endpoint_passes_every_check() -> None:
    checks = verify_endpoint(observed(s.rendered_env(), s.VLLM_EAGLE3_LOG), s.expectation())
    assert [c.line for c in checks] == [
        "PASS endpoint: InferenceEndpointConfig inference/hp-dev is DeploymentComplete",
        "PASS endpoint env: HP_SPECULATIVE_ALGORITHM, SM_VLLM_SPECULATIVE_CONFIG as configured "
        "(eagle3)",
        "PASS pods: 1 selected by selector app=hp-dev: hp-dev-7c9f8d-x2k4q (Running)",
        "PASS pod hp-dev-7c9f8d-x2k4q env: HP_SPECULATIVE_ALGORITHM, SM_VLLM_SPECULATIVE_CONFIG "
        "as configured (eagle3)",
        "PASS pod hp-dev-7c9f8d-x2k4q engine log: speculation is on: method=eagle3, "
        f"model={s.EAGLE3_DRAFT}, num_spec_tokens=5",
        "PASS pod hp-dev-7c9f8d-x2k4q acceptance: mean acceptance length 2.87, acceptance rate "
        "37.5% (last of 2 reports)",
    ]
    assert all_passed(checks)


@pytest.mark.parametrize(
    "log",
    [s.SGLANG_0_5_23_EAGLE3_LOG, s.SGLANG_0_5_17_EAGLE3_LOG],
    ids=["0.5.23-dict", "ServerArgs"],
)
def test_a_healthy_sglang_endpoint_passes_in_both_server_args_forms(log: str) -> None:
    env = s.rendered_env(engine="sglang")
    checks = by_name(verify_endpoint(observed(env, log), s.expectation(engine="sglang")))
    assert all_passed(checks.values()), [c.line for c in checks.values()]
    assert checks["pod hp-dev-7c9f8d-x2k4q engine log"].detail == (
        "speculation is on: speculative_algorithm=EAGLE3, num_steps=5, eagle_topk=1, "
        "num_draft_tokens=6"
    )


def test_sglang_acceptance_is_reported_from_the_decode_batch_line() -> None:
    check = check_acceptance("acceptance", s.SGLANG_0_5_23_EAGLE3_LOG, Engine.SGLANG)
    assert check == Check(
        "acceptance", True, "mean acceptance length 3.12, acceptance rate 0.52 (last of 1 reports)"
    )


def test_sglang_mtp_passes_when_the_log_shows_nextn_rewritten_to_eagle() -> None:
    expected = s.expectation(
        engine="sglang",
        model="deepseek-ai/DeepSeek-V3",
        speculativeAlgorithm="mtp",
        speculativeModel=None,
        speculativeNumTokens="3",
    )
    assert expected.engine_algorithm == "NEXTN"
    check = check_engine_log("log", s.SGLANG_NEXTN_LOG, expected)
    assert check.passed, check.line


def test_the_vllm_config_json_may_differ_in_key_order_and_spacing() -> None:
    reordered = json.dumps(
        {"num_speculative_tokens": 5, "model": s.EAGLE3_DRAFT, "method": "eagle3"}
    )
    env = s.with_env(s.rendered_env(), "SM_VLLM_SPECULATIVE_CONFIG", reordered)
    assert check_env("endpoint env", env, s.expectation()).passed


# --- speculation silently off or wrong --------------------------------------------------------


def test_vllm_speculative_config_none_fails_although_the_env_is_right() -> None:
    checks = by_name(
        verify_endpoint(observed(s.rendered_env(), s.VLLM_SPECULATION_OFF_LOG), s.expectation())
    )
    assert checks["endpoint env"].passed
    log_check = checks["pod hp-dev-7c9f8d-x2k4q engine log"]
    assert not log_check.passed
    assert log_check.line.startswith(
        "FAIL pod hp-dev-7c9f8d-x2k4q engine log: speculative_config=None"
    )
    assert "speculation is OFF although the stack asks for eagle3" in log_check.detail
    assert "pod hp-dev-7c9f8d-x2k4q acceptance" not in checks  # no metrics without speculation


def test_vllm_running_another_method_fails_and_names_both() -> None:
    check = check_engine_log("log", s.VLLM_DETECTED_AS_DRAFT_MODEL_LOG, s.expectation())
    assert not check.passed
    assert check.detail.startswith("the engine runs draft_model, expected eagle3 (eagle3)")


def test_sglang_speculative_algorithm_none_fails() -> None:
    check = check_engine_log("log", s.SGLANG_SPECULATION_OFF_LOG, s.expectation(engine="sglang"))
    assert not check.passed
    assert check.detail.startswith("speculative_algorithm=None: speculation is OFF")


def test_sglang_running_another_algorithm_fails_and_drafts_never_accepted_fail_too() -> None:
    expected = s.expectation(engine="sglang")
    checks = by_name(
        verify_endpoint(
            observed(s.rendered_env(engine="sglang"), s.SGLANG_EAGLE_WITH_EAGLE3_HEAD_LOG), expected
        )
    )
    log_check = checks["pod hp-dev-7c9f8d-x2k4q engine log"]
    assert not log_check.passed
    assert log_check.detail.startswith("the engine runs EAGLE, expected EAGLE3 (eagle3)")
    acceptance = checks["pod hp-dev-7c9f8d-x2k4q acceptance"]
    assert not acceptance.passed
    assert acceptance.detail.endswith("no draft token was ever accepted")


def test_vllm_acceptance_of_exactly_one_token_fails() -> None:
    check = check_acceptance("acceptance", s.VLLM_NO_ACCEPTANCE_LOG, Engine.VLLM)
    assert check is not None and not check.passed


def test_a_single_poor_report_among_good_ones_is_not_a_failure() -> None:
    log = s.VLLM_EAGLE3_LOG.replace("Mean acceptance length: 2.87", "Mean acceptance length: 1.00")
    check = check_acceptance("acceptance", log, Engine.VLLM)
    assert check is not None and check.passed
    assert "1.00" in check.detail  # the last report is still the one shown


def test_no_acceptance_check_before_any_request() -> None:
    assert check_acceptance("acceptance", s.SGLANG_0_5_17_EAGLE3_LOG, Engine.SGLANG) is None


def test_an_engine_that_has_not_started_has_no_proof() -> None:
    check = check_engine_log("log", s.VLLM_STILL_LOADING_LOG, s.expectation())
    assert not check.passed
    assert "no vLLM engine config line" in check.detail
    sglang = check_engine_log("log", s.VLLM_EAGLE3_LOG, s.expectation(engine="sglang"))
    assert not sglang.passed and "no SGLang `server_args=` line" in sglang.detail


def test_the_last_engine_start_in_the_log_decides() -> None:
    restarted = s.VLLM_EAGLE3_LOG + s.VLLM_SPECULATION_OFF_LOG
    assert not check_engine_log("log", restarted, s.expectation()).passed
    assert check_engine_log(
        "log", s.VLLM_SPECULATION_OFF_LOG + s.VLLM_EAGLE3_LOG, s.expectation()
    ).passed


# --- the manifest env -------------------------------------------------------------------------


def test_a_missing_variable_fails_naming_it_and_its_expected_value() -> None:
    env = s.with_env(s.rendered_env(), "SM_VLLM_SPECULATIVE_CONFIG", None)
    check = check_env("endpoint env", env, s.expectation())
    assert check == Check(
        "endpoint env",
        False,
        f"SM_VLLM_SPECULATIVE_CONFIG is missing (expected {VLLM_CONFIG_JSON})",
    )


def test_the_eagle2_of_older_tools_is_caught_in_the_manifest() -> None:
    stale = VLLM_CONFIG_JSON.replace('"eagle3"', '"eagle2"')
    assert stale != VLLM_CONFIG_JSON
    env = s.with_env(s.rendered_env(), "SM_VLLM_SPECULATIVE_CONFIG", stale)
    check = check_env("endpoint env", env, s.expectation())
    assert not check.passed
    assert check.detail == f"SM_VLLM_SPECULATIVE_CONFIG is {stale}, expected {VLLM_CONFIG_JSON}"


def test_a_partial_sglang_triple_fails() -> None:
    env = s.with_env(s.rendered_env(engine="sglang"), "SM_SGLANG_SPECULATIVE_EAGLE_TOPK", None)
    check = check_env("endpoint env", env, s.expectation(engine="sglang"))
    assert check.detail == "SM_SGLANG_SPECULATIVE_EAGLE_TOPK is missing (expected 1)"


def test_the_other_engines_variables_are_not_the_selected_engines_business() -> None:
    env = s.with_env(s.rendered_env(), "SM_SGLANG_SPECULATIVE_ALGORITHM", "STANDALONE")
    assert check_env("endpoint env", env, s.expectation()).passed


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SM_VLLM_SPEC_METHOD", "ngram"),
        ("SM_VLLM_SPEC_TOKENS", "9"),
        ("SM_VLLM_SPECULATIVE_C", "{}"),
    ],
)
def test_a_speculative_setting_in_another_spelling_is_caught(variable: str, value: str) -> None:
    # The wrapper reads these as speculative flags too (shorthand, abbreviation), so verify
    # treats them as speculative variables the stack config did not ask for.
    env = [*s.rendered_env(), {"name": variable, "value": value}]
    check = check_env("endpoint env", env, s.expectation())
    assert not check.passed
    assert check.detail == f"{variable}={value} is set but the stack config does not ask for it"


def test_a_speculative_variable_from_a_secret_reference_is_not_the_configured_value() -> None:
    env = s.with_env(s.rendered_env(), "HP_SPECULATIVE_ALGORITHM", None)
    env.append(
        {
            "name": "HP_SPECULATIVE_ALGORITHM",
            "valueFrom": {"configMapKeyRef": {"name": "x", "key": "y"}},
        }
    )
    check = check_env("endpoint env", env, s.expectation())
    assert check.detail == "HP_SPECULATIVE_ALGORITHM set from a reference, expected eagle3"


# --- speculation intentionally off ------------------------------------------------------------


OFF = {"speculativeAlgorithm": None, "speculativeModel": None}


def test_speculation_off_passes_when_it_is_indeed_off() -> None:
    env = s.rendered_env(**OFF)
    checks = verify_endpoint(observed(env, s.VLLM_SPECULATION_OFF_LOG), s.expectation(**OFF))
    assert all_passed(checks), [c.line for c in checks]
    assert by_name(checks)["pod hp-dev-7c9f8d-x2k4q engine log"].detail == (
        "speculative_config=None: speculation is off, as configured"
    )
    assert by_name(checks)["endpoint env"].detail == (
        "no speculative variables, as configured (speculation off)"
    )


def test_speculation_off_fails_when_the_engine_still_speculates() -> None:
    check = check_engine_log("log", s.VLLM_EAGLE3_LOG, s.expectation(**OFF))
    assert not check.passed
    assert check.detail.startswith("speculation is ON (method=eagle3")
    assert check.detail.endswith("although hp:speculativeAlgorithm is not set")
    sglang = check_engine_log(
        "log", s.SGLANG_0_5_17_EAGLE3_LOG, s.expectation(engine="sglang", **OFF)
    )
    assert not sglang.passed


def test_speculation_off_fails_on_leftover_speculative_variables() -> None:
    leftover: dict[str, object] = {"name": "SM_VLLM_SPECULATIVE_CONFIG", "value": VLLM_CONFIG_JSON}
    env = [*s.rendered_env(**OFF), leftover]
    check = check_env("endpoint env", env, s.expectation(**OFF))
    assert check.detail == (
        f"SM_VLLM_SPECULATIVE_CONFIG={VLLM_CONFIG_JSON} is set but speculation is off in the "
        "stack config"
    )


# --- the InferenceEndpointConfig state --------------------------------------------------------


def test_a_failed_deployment_fails_with_its_state_and_reason() -> None:
    cr = s.endpoint(
        s.rendered_env(),
        state="DeploymentFailed",
        conditions=[
            {
                "type": "DeploymentComplete",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": "ReplicaSet hp-dev-7c9f8d has timed out progressing",
            },
        ],
    )
    check = check_endpoint_state(cr, "inference", "hp-dev")
    assert check.line == (
        "FAIL endpoint: InferenceEndpointConfig inference/hp-dev is DeploymentFailed "
        "(ReplicaSet hp-dev-7c9f8d has timed out progressing)"
    )


@pytest.mark.parametrize(
    ("state", "shown"),
    [("DeploymentInProgress", "is DeploymentInProgress"), (None, "is without a status yet")],
)
def test_an_unfinished_deployment_fails(state: str | None, shown: str) -> None:
    check = check_endpoint_state(s.endpoint([], state=state), "inference", "hp-dev")
    assert not check.passed and check.detail.endswith(shown)


def test_a_missing_endpoint_is_the_only_check() -> None:
    checks = verify_endpoint(Observed("inference", "hp-dev", None), s.expectation())
    assert [c.line for c in checks] == [
        "FAIL endpoint: InferenceEndpointConfig inference/hp-dev not found "
        "(was `pulumi up` run for this stack?)"
    ]


def test_an_unfinished_deployment_still_reports_the_other_checks() -> None:
    checks = verify_endpoint(
        observed(s.rendered_env(), s.VLLM_EAGLE3_LOG, state="DeploymentInProgress"), s.expectation()
    )
    assert [c.passed for c in checks] == [False, True, True, True, True, True]
    assert not all_passed(checks)


# --- pods -------------------------------------------------------------------------------------


def test_pods_whose_env_differs_from_the_endpoint_fail() -> None:
    """A pod left over from before the last update still runs the old settings."""
    old = s.rendered_env(speculativeNumTokens="3")
    checks = by_name(
        verify_endpoint(observed(s.rendered_env(), s.VLLM_EAGLE3_LOG, pod_env=old), s.expectation())
    )
    assert checks["endpoint env"].passed
    pod_env = checks["pod hp-dev-7c9f8d-x2k4q env"]
    assert not pod_env.passed
    assert pod_env.detail.startswith('SM_VLLM_SPECULATIVE_CONFIG is {"method":"eagle3"')
    assert '"num_speculative_tokens":3}, expected' in pod_env.detail


def test_the_worker_container_is_found_behind_a_sidecar() -> None:
    pod = s.pod("hp-dev-1", s.rendered_env())
    assert worker_container(pod, s.IMAGE)["name"] == "model"  # type: ignore[index]
    assert worker_container(pod, "another-image:tag")["name"] == "model"  # type: ignore[index]
    assert worker_container({"spec": {"containers": []}}, s.IMAGE) is None


def test_no_pods_fail() -> None:
    obs = observed(s.rendered_env(), s.VLLM_EAGLE3_LOG)
    empty = Observed(obs.namespace, obs.name, obs.endpoint, [], "selector app=hp-dev")
    checks = verify_endpoint(empty, s.expectation())
    assert checks[-1].line == (
        "FAIL pods: no pods selected by selector app=hp-dev; is the deployment scaled to 0?"
    )


def test_an_unreadable_log_fails_with_the_reason() -> None:
    obs = observed(s.rendered_env(), "")
    unreadable = Observed(
        obs.namespace,
        obs.name,
        obs.endpoint,
        obs.pods,
        obs.pod_selection,
        {},
        {"hp-dev-7c9f8d-x2k4q": "400 Bad Request"},
    )
    checks = by_name(verify_endpoint(unreadable, s.expectation()))
    assert checks["pod hp-dev-7c9f8d-x2k4q engine log"].line == (
        "FAIL pod hp-dev-7c9f8d-x2k4q engine log: the log could not be read: 400 Bad Request"
    )


def test_pods_without_a_selector_are_the_deployments_own_not_the_twins() -> None:
    names = ("hp-dev-7c9f8d-x2k4q", "hp-dev-baseline-7c9f8d-x2k4q", "hp-dev-canary-0", "hp-devx-1")
    pods = [unlabelled(s.pod(n, [])) for n in (*names, "other")]
    endpoint = s.endpoint([], selector=None)
    assert [p["metadata"]["name"] for p in endpoint_pods(pods, endpoint, "hp-dev")] == [
        "hp-dev-7c9f8d-x2k4q"
    ]
    twin = endpoint_pods(pods, endpoint, "hp-dev-baseline")
    assert [p["metadata"]["name"] for p in twin] == ["hp-dev-baseline-7c9f8d-x2k4q"]


def unlabelled(pod: dict[str, Any]) -> dict[str, Any]:
    del pod["metadata"]["labels"]
    return pod


def test_pods_without_a_selector_are_found_by_the_clis_label_and_the_published_deployment() -> None:
    """The HyperPod CLI lists an endpoint's pods by label `app`; status.deploymentStatus.name
    names its Deployment (docs/operator-facts.md)."""
    labelled = s.pod("renamed-by-someone", [])
    by_deployment = unlabelled(s.pod("hp-dev-model-6b5d9-k2x7q", []))
    others = [unlabelled(s.pod("hp-dev-baseline-7c9f8d-x2k4q", [])), s.pod("x-1", [])]
    others[1]["metadata"]["labels"]["app"] = "hp-dev-baseline"
    endpoint = s.endpoint([], selector=None)
    endpoint["status"]["deploymentStatus"] = {"name": "hp-dev-model", "lastUpdated": "x"}
    found = endpoint_pods([labelled, by_deployment, *others], endpoint, "hp-dev")
    assert [p["metadata"]["name"] for p in found] == [
        "renamed-by-someone",
        "hp-dev-model-6b5d9-k2x7q",
    ]


# --- the algorithms beyond the seed's six ------------------------------------------------------
# vLLM logs `SpeculativeConfig(method=...)` (its __repr__) with the method it was given; SGLang's
# server_args keep DFLASH and DSPARK as given (only NEXTN/EAGLE are rewritten:
# speculative_hook.py `_resolve_speculative_algorithm_alias`). The logs below are the recorded
# EAGLE-3 start-ups with the method's name put in, not recordings of these methods.


def test_vllm_dspark_passes_when_the_log_shows_method_dspark() -> None:
    expected = s.expectation(speculativeAlgorithm="dspark", speculativeModel="org/dspark-draft")
    assert expected.engine_algorithm == "dspark"
    log = s.VLLM_EAGLE3_LOG.replace(
        "SpeculativeConfig(method='eagle3'", "SpeculativeConfig(method='dspark'"
    )
    assert check_engine_log("log", log, expected).passed
    assert not check_engine_log("log", s.VLLM_EAGLE3_LOG, expected).passed


def test_sglang_dflash_passes_when_server_args_show_dflash() -> None:
    expected = s.expectation(
        engine="sglang", speculativeAlgorithm="dflash", speculativeModel="z-lab/Qwen3-8B-DFlash-b16"
    )
    assert expected.engine_algorithm == "DFLASH"
    log = s.SGLANG_0_5_23_EAGLE3_LOG.replace(
        "'speculative_algorithm': 'EAGLE3'", "'speculative_algorithm': 'DFLASH'"
    )
    assert check_engine_log("log", log, expected).passed
    assert not check_engine_log("log", s.SGLANG_0_5_23_EAGLE3_LOG, expected).passed
