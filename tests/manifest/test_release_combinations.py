"""Every rendered combination of engine x supported release x seed algorithm, checked against
that release's own generated tables (engine_flags.json) and read back by the serve wrapper as
an image of that release would (MLCC_ENGINE_VERSION)."""

from __future__ import annotations

import json

import engine_parse_check
import pytest
from crd_schema import assert_valid_manifest
from manifest_samples import BASE, CRD
from serve_harness import serve

from mlcc import engine_contract as contract
from mlcc.config.stack import parse
from mlcc.manifest.workload import API_VERSION, KIND

SEED_ALGORITHMS = ("draft-model", "eagle", "eagle2", "eagle3", "ngram", "mtp")
COMBINATIONS = [
    (engine, version, algorithm)
    for engine in contract.ENGINES
    for version in contract.SUPPORTED_VERSIONS[engine]
    for algorithm in SEED_ALGORITHMS
]


def rendered_env(engine: str, version: str, algorithm: str) -> dict[str, str]:
    """The container env of the one endpoint of a stack on that engine release."""
    spec = engine_parse_check.rendered_spec(engine, version, algorithm)
    manifest = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "hp-dev", "namespace": "inference"},
        "spec": spec,
    }
    assert_valid_manifest(manifest, CRD)
    return {e["name"]: e["value"] for e in spec["worker"]["environmentVariables"] if "value" in e}


def engine_variables(engine: str, env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(contract.ENV_PREFIXES[engine])}


@pytest.mark.parametrize(("engine", "version", "algorithm"), COMBINATIONS)
def test_the_rendered_env_uses_only_the_release_own_flags_and_names(
    engine: str, version: str, algorithm: str
) -> None:
    env = rendered_env(engine, version, algorithm)
    table = contract.release_table(engine, version)
    options = contract.engine_options(engine, version)
    flags = contract.env_flags(engine, engine_variables(engine, env), version)
    assert flags, "the endpoint's engine gets its settings"
    for flag in flags:
        base = flag.key.partition(".")[0]
        assert f"--{flag.name}" in options or base in table.long_options, flag.variable
    parameters = contract.speculative_parameters(engine, version)
    by_key = {flag.key: flag.value for flag in flags}
    expected = contract.ALGORITHMS[algorithm].engine_algorithm(engine)
    if engine == contract.VLLM:
        config = json.loads(by_key[contract.VLLM_CONFIG_FLAG] or "")
        assert config["method"] == expected and expected in table.speculative_names
        assert set(config) <= set(parameters), "SpeculativeConfig fields of this release"
    else:
        assert by_key[contract.SGLANG_ALGORITHM_FLAG] == expected
        assert expected in table.speculative_names
        speculative = {k for k in by_key if contract.is_speculative_flag(engine, k)}
        assert speculative <= set(parameters), "flags of this release's spec namespace"


@pytest.mark.parametrize(("engine", "version", "algorithm"), COMBINATIONS)
def test_an_image_of_the_release_accepts_the_rendered_env(
    engine: str, version: str, algorithm: str
) -> None:
    env = rendered_env(engine, version, algorithm)
    container = {**env, contract.ENGINE_ENV: engine, contract.ENGINE_VERSION_ENV: version}
    argv = serve.build_argv(engine, container, [])
    expected = contract.ALGORITHMS[algorithm].engine_algorithm(engine)
    if engine == contract.VLLM:
        config = json.loads(argv[argv.index(f"--{contract.VLLM_CONFIG_FLAG}") + 1])
        assert config["method"] == expected
    else:
        assert argv[argv.index(f"--{contract.SGLANG_ALGORITHM_FLAG}") + 1] == expected


def test_an_unsupported_engine_version_is_refused_listing_the_supported_ones() -> None:
    from mlcc.config.stack import ConfigError

    with pytest.raises(ConfigError) as refused:
        parse({**BASE, "hp:engine": "sglang", "hp:engineVersion": "0.5.2"}, stack="dev")
    lines = [line for line in str(refused.value).splitlines() if "hp:engineVersion" in line]
    assert len(lines) == 1
    assert "sglang '0.5.2' is not a supported release" in lines[0]
    assert lines[0].endswith(f"supported: {', '.join(contract.SUPPORTED_VERSIONS['sglang'])}")
