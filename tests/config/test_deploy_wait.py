"""hp:waitForEndpoints and hp:deployTimeoutMinutes: read once, and the same minutes are the
operator's deadline in every endpoint's custom resource."""

from __future__ import annotations

import pytest
from crd_schema import crd_schema
from program_runs import CR_TYPE, run_endpoint

from mlcc.config.deploy_wait import DEFAULT_TIMEOUT_MINUTES, MAX_TIMEOUT_MINUTES, DeployWait
from mlcc.config.stack import ConfigError, parse

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}


def deploy_wait(**values: str) -> DeployWait:
    return parse(
        {**BASE, **{f"hp:{k}": v for k, v in values.items()}}, stack="dev"
    ).config.deploy_wait


def test_by_default_pulumi_up_waits_longer_than_the_operators_own_default() -> None:
    crd_default = crd_schema("inferenceendpointconfigs.yaml")["properties"]["spec"]["properties"][
        "maxDeployTimeInSeconds"
    ]["default"]
    assert deploy_wait() == DeployWait(True, DEFAULT_TIMEOUT_MINUTES)
    assert DEFAULT_TIMEOUT_MINUTES * 60 > crd_default == 3600


def test_the_keys_are_read() -> None:
    assert deploy_wait(waitForEndpoints="false", deployTimeoutMinutes="240") == DeployWait(
        False, 240
    )


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"deployTimeoutMinutes": "0"}, "hp:deployTimeoutMinutes"),
        ({"deployTimeoutMinutes": "-5"}, "hp:deployTimeoutMinutes"),
        ({"deployTimeoutMinutes": "1.5"}, "hp:deployTimeoutMinutes"),
        ({"deployTimeoutMinutes": "9" * 5000}, "hp:deployTimeoutMinutes"),
        ({"deployTimeoutMinutes": str(MAX_TIMEOUT_MINUTES + 1)}, "hp:deployTimeoutMinutes"),
        ({"waitForEndpoints": "yes"}, "hp:waitForEndpoints"),
    ],
)
def test_bad_values_name_the_key(values: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        deploy_wait(**values)
    assert [p.key for p in raised.value.problems] == [key]
    assert "\n" not in str(raised.value)


def test_the_largest_timeout_still_fits_the_crds_int32() -> None:
    field = crd_schema("inferenceendpointconfigs.yaml")["properties"]["spec"]["properties"][
        "maxDeployTimeInSeconds"
    ]
    assert field["format"] == "int32"
    assert MAX_TIMEOUT_MINUTES * 60 <= 2**31 - 1 < (MAX_TIMEOUT_MINUTES + 1) * 60


@pytest.mark.parametrize("minutes", ["45", "600"])
def test_the_timeout_is_every_endpoints_max_deploy_time(minutes: str) -> None:
    run = run_endpoint({"hp:deployTimeoutMinutes": minutes}, stack="multi")
    crs = run.of_type(CR_TYPE)
    assert len(crs) > 1
    assert {cr.inputs["spec"]["maxDeployTimeInSeconds"] for cr in crs} == {int(minutes) * 60}
