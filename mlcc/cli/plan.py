"""`mlcc plan`: evaluate the real program offline and show what `pulumi up` would create."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

DEFAULT_OUT = Path("build/plan")
CR_TYPE = "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="evaluate the program offline: resources, speculative settings, manifests",
        description="Run __main__.py under Pulumi's mock runtime with a stack's config.",
    )
    parser.add_argument("--stack", default="dev", help="stack name (Pulumi.<stack>.yaml)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value (hp: prefix optional); KEY= removes the key",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.set_defaults(run=run)


class _WarningCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run(args: argparse.Namespace) -> int:
    from mlcc import stackfiles

    project_dir = Path.cwd()
    try:
        overrides = stackfiles.parse_overrides(args.overrides)
        project = stackfiles.load_project(project_dir)
        stack_config = stackfiles.load_stack(project_dir, args.stack)
    except (ValueError, stackfiles.StackFileError) as error:
        print(f"mlcc plan: error: {error}", file=sys.stderr)
        return 2
    try:
        values = stackfiles.resolve(project, stack_config, stack=args.stack, overrides=overrides)
    except stackfiles.StackConfigError as error:
        return _config_errors([str(p) for p in error.problems])
    return _evaluate(project_dir, str(project["name"]), args.stack, values, args.out)


def _config_errors(lines: list[str]) -> int:
    for line in lines:
        print(f"error: {line}", file=sys.stderr)
    print(f"{len(lines)} configuration error(s); nothing would be created", file=sys.stderr)
    return 1


def _evaluate(project_dir: Path, project: str, stack: str, values: Any, out: Path) -> int:
    import pulumi

    from mlcc import offline

    collector = _WarningCollector()
    logging.getLogger().addHandler(collector)
    try:
        result = offline.run(
            offline.program_file(project_dir / "__main__.py"),
            config=values.values,
            secret_keys=values.secret_keys,
            project=project,
            stack=stack,
        )
    except pulumi.RunError as error:
        lines = [line for line in str(error).splitlines()[1:] if line.strip()]
        return _config_errors(lines or [str(error)])
    finally:
        logging.getLogger().removeHandler(collector)
    for message in collector.messages:
        print(f"warning: {message}", file=sys.stderr)
    _print_resources(result)
    _print_speculative(result)
    _print_outputs(result.outputs)
    _write(result, out)
    print(f"\nwrote {out / 'plan.json'} and {out / 'manifests'}/")
    return 0


def _print_resources(result: Any) -> None:
    rows = [(r.type, r.name) for r in result.registrations]
    width = max((len(t) for t, _ in rows), default=4)
    print(f"{'TYPE'.ljust(width)}  NAME")
    for type_token, name in rows:
        print(f"{type_token.ljust(width)}  {name}")
    print(f"{len(rows)} resources")


def speculative_flags(env: dict[str, str]) -> tuple[str | None, str | None]:
    """The vLLM JSON and the SGLang flags an InferenceEndpointConfig's env asks for.

    Read back with the serve wrapper's own rules (mlcc.engine_contract), so the summary shows
    what the engines will receive, or why the wrapper would refuse it.
    """
    from mlcc import engine_contract as contract

    def read(engine: str) -> tuple[list[contract.EnvFlag], str | None]:
        try:
            return contract.speculative_env_flags(engine, env), None
        except contract.EnvProblem as problem:
            return [], f"(refused by the serve wrapper: {problem})"

    vllm, vllm_refusal = read(contract.VLLM)
    sglang, sglang_refusal = read(contract.SGLANG)
    config = next((flag.value for flag in vllm if flag.key == contract.VLLM_CONFIG_FLAG), None)
    sglang_line = " ".join(token for flag in sglang for token in flag.tokens) or None
    return vllm_refusal or config, sglang_refusal or sglang_line


def _print_speculative(result: Any) -> None:
    for cr in result.of_type(CR_TYPE):
        env_list = cr.redacted_inputs["spec"]["worker"]["environmentVariables"]
        env = {e["name"]: e["value"] for e in env_list if "value" in e}
        algorithm = env.get("HP_SPECULATIVE_ALGORITHM")
        print(f"\nspeculative decoding ({cr.name}): {algorithm or 'off'}")
        if algorithm:
            vllm, sglang = speculative_flags(env)
            print(f"  vLLM   --speculative-config {vllm or '(not accepted by the pinned vLLM)'}")
            print(f"  SGLang {sglang or '(not accepted by the pinned SGLang)'}")


def _print_outputs(outputs: dict[str, Any]) -> None:
    if outputs:
        print("\noutputs:")
        for key, value in outputs.items():
            print(f"  {key}: {value}")


_FIRST_KEYS = ("apiVersion", "kind", "metadata", "name")


def ordered(value: Any) -> Any:
    """Keys in the conventional Kubernetes order (the mock runtime does not keep order)."""
    if isinstance(value, dict):
        rank = {key: index for index, key in enumerate(_FIRST_KEYS)}
        keys = sorted(value, key=lambda k: (rank.get(k, len(rank)), k))
        return {k: ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [ordered(v) for v in value]
    return value


def _write(result: Any, out: Path) -> None:
    manifests = out / "manifests"
    if manifests.exists():
        shutil.rmtree(manifests)
    manifests.mkdir(parents=True)
    k8s_objects = [
        r
        for r in result.registrations
        if r.type.startswith("kubernetes:") and r.custom and "apiVersion" in r.raw_inputs
    ]
    for index, registration in enumerate(k8s_objects, start=1):
        manifest = ordered(registration.redacted_inputs)
        kind = str(manifest.get("kind", "object")).lower()
        path = manifests / f"{index:02d}-{kind}-{registration.name}.yaml"
        path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    parents = {r.urn: f"{r.type}::{r.name}" for r in result.registrations}
    plan = {
        "resources": [
            {
                "type": r.type,
                "name": r.name,
                "parent": parents.get(r.parent or ""),
                "inputs": ordered(r.redacted_inputs),
            }
            for r in result.registrations
        ],
        "outputs": result.outputs,
    }
    (out / "plan.json").write_text(
        json.dumps(plan, indent=2, sort_keys=False, default=_asset_json) + "\n"
    )


def _asset_json(value: Any) -> str:
    """File assets (the lifecycle script) appear in plan.json as their path."""
    path = getattr(value, "path", None)
    if path is not None:
        return f"file://{path}"
    raise TypeError(f"cannot show {type(value).__name__} in plan.json")
