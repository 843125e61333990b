"""`mlcc plan`: evaluate the real program offline and show what `pulumi up` would create.

Prints a headline (stack, mode, region, GPU nodes, and per endpoint the engine, model, instance
type x count and speculative settings), the resources as a tree, the stack outputs, and writes
`plan.json` (each resource with its URN and dependencies, mlcc.plan.graph) and the Kubernetes
manifests, byte-identical for the same inputs. `--diff DIR` prints per resource what changed
against the plan.json in DIR (inputs and dependencies, mlcc.plan.diff) instead of the tree.

Exit codes: 0 planned; 1 configuration errors (one `error: hp:key: ...` line each, nothing is
written); 2 usage or file errors (a malformed `--set`, an unreadable stack file, `--out`
naming a file, no plan.json for `--diff`; every file through mlcc.userfiles, what `--out` owns
in mlcc/cli/plan/out.py). Whatever an input held, each printed line is one line: control
characters are escaped.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlcc.cli.plan import out as plan_out
from mlcc.cli.plan.out import DEFAULT_OUT, PLAN_FILE
from mlcc.engine_contract.values import printable as _printable
from mlcc.plan import cost_report, graph
from mlcc.plan import diff as plan_diff
from mlcc.plan import report as plan_report
from mlcc.plan import schedule as plan_schedule
from mlcc.plan.graph import CR_TYPE
from mlcc.plan.report import PlannedResource
from mlcc.userfiles import UserFileError

if TYPE_CHECKING:
    from mlcc.stackfiles import resolve as stackfiles

EXIT_OK, EXIT_CONFIG, EXIT_USAGE = 0, 1, 2

__all__ = ["CR_TYPE", "ordered", "run", "speculative_flags"]
ordered = plan_report.ordered


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="evaluate the program offline: resources, speculative settings, manifests",
        description=(
            "Run __main__.py under Pulumi's mock runtime with a stack's config. Exit codes: "
            "0 planned, 1 configuration errors, 2 usage or file errors."
        ),
    )
    parser.add_argument(
        "--stack",
        default="dev",
        help="stack name: Pulumi.<stack>.yaml in this folder, else in examples/",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=(
            "override a config value like `pulumi config set [--path]` (hp: prefix optional): "
            "hp:tags.owner=alice, 'hp:instanceGroups[0].instanceCount=2', "
            "'hp:engineArgs={max-model-len: 8192}' (JSON or YAML flow); KEY= removes the key"
        ),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=(
            f"output folder (default {DEFAULT_OUT}): mlcc owns its {PLAN_FILE} and the files "
            f"under manifests/ that {PLAN_FILE} lists, and touches nothing else there"
        ),
    )
    parser.add_argument(
        "--diff",
        type=Path,
        metavar="DIR",
        help=(
            "compare with DIR/plan.json (an earlier --out): + new, - gone, ~ changed inputs "
            "or dependencies"
        ),
    )
    parser.add_argument(
        "--preflight",
        action="store_true",
        help=(
            "also run the preflight checks of `pulumi preview` (reads the models' config.json "
            "from the Hub: HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE; docs/preflight.md)"
        ),
    )
    parser.set_defaults(run=run)


class _LogCollector(logging.Handler):
    """The program's warnings and a refusal's errors: Pulumi's mock engine logs them on the
    root logger (pulumi/runtime/mocks.py, MockEngine.Log). A library's own records
    (huggingface_hub's "Retrying in 1s") pass through the root's handlers too, but are not the
    program's."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.errors: list[str] = []  # a refusal's lines (mlcc/config/refusal.py)

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "root":
            found = self.errors if record.levelno >= logging.ERROR else self.messages
            found.append(record.getMessage())


def run(args: argparse.Namespace) -> int:
    from mlcc.stackfiles import resolve as stackfiles

    project_dir = Path.cwd()
    try:
        overrides = stackfiles.parse_overrides(args.overrides)
        plan_out.check_out_dir(args.out)
        baseline_plan = plan_out.load_baseline_plan(args.diff) if args.diff else None
        project = stackfiles.load_project(project_dir)
        stack_config = stackfiles.load_stack(project_dir, args.stack)
        values = stackfiles.resolve(project, stack_config, stack=args.stack, overrides=overrides)
    except (UserFileError, stackfiles.StackFileError, stackfiles.OverrideError) as error:
        return _usage_error(str(error))
    except stackfiles.StackConfigError as error:
        return _config_errors(_every_problem(error, args.stack))
    evaluated = _evaluate(
        project_dir, str(project["name"]), args.stack, values, preflight=args.preflight
    )
    if isinstance(evaluated, int):
        return evaluated
    registered, program_outputs = evaluated
    resources = plan_report.tree_order(registered)
    outputs = _portable(dict(sorted(program_outputs.items())), project_dir)
    resources = [_portable_resource(r, project_dir) for r in resources]
    cost = _cost()
    observed, observed_lines = _observability(args.stack, values)
    try:
        plan_out.write_plan(args.out, resources, outputs, _asset_json, cost, observed)
    except UserFileError as error:
        return _usage_error(str(error))
    try:
        _print_report(
            args.stack,
            values.values,
            resources,
            outputs,
            (baseline_plan, cost),
            args.diff,
            observed_lines,
        )
        print()
        _print(f"wrote {args.out / PLAN_FILE} and {args.out / plan_out.MANIFESTS}/")
        sys.stdout.flush()
    except BrokenPipeError:  # `mlcc plan | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK


def _print(line: str) -> None:
    """One line of the report: whatever a stack value, a name or a path held, control
    characters are escaped (a name with a newline or an escape sequence stays one line)."""
    print(_printable(line))


def _usage_error(message: str) -> int:
    print(f"mlcc plan: error: {_printable(message)}", file=sys.stderr)
    return EXIT_USAGE


def _config_errors(lines: list[str]) -> int:
    for line in lines:
        print(f"error: {_printable(line)}", file=sys.stderr)
    print(f"{len(lines)} configuration error(s); nothing would be created", file=sys.stderr)
    return EXIT_CONFIG


def _every_problem(error: stackfiles.StackConfigError, stack: str) -> list[str]:
    """The stack files' problems, and the program's own for every other key: all at once."""
    from mlcc.config import stack as config
    from mlcc.config.provider_keys import environment_region

    lines = [str(p) for p in error.problems]
    if error.partial is None:
        return lines
    reported = {p.key for p in error.problems}
    values = {k: v for k, v in error.partial.values.items() if k not in reported}
    try:
        config.parse(
            values,
            stack=stack,
            secret_keys=error.partial.secret_keys,
            environment_region=environment_region(),
        )
    except config.ConfigError as more:
        lines += [str(p) for p in more.problems if p.key not in reported]
    return lines


def _evaluate(
    project_dir: Path, project: str, stack: str, values: Any, *, preflight: bool = False
) -> tuple[list[plan_report.Registered], dict[str, Any]] | int:
    """The offline run's registrations, or an exit code after printing why there are none."""
    import pulumi

    from mlcc.plan import mocks as offline

    collector = _LogCollector()
    logging.getLogger().addHandler(collector)
    try:
        result = offline.run(
            offline.program_file(project_dir / "__main__.py"),
            config=values.values,
            secret_keys=values.secret_keys,
            project=project,
            stack=stack,
            preflight=preflight,
        )
    except pulumi.RunError as error:
        return _config_errors(collector.errors or [str(error)])
    except Exception as error:  # a bug, but the user still gets one line and an exit code
        return _config_errors(
            [f"the program failed on this configuration: {type(error).__name__}: {error}"]
        )
    finally:
        logging.getLogger().removeHandler(collector)
    for message in collector.messages:
        print(f"warning: {_printable(message)}", file=sys.stderr)
    registered = [
        plan_report.Registered(
            r.type,
            r.name,
            r.urn,
            r.parent,
            r.redacted_inputs,
            r.custom,
            r.dependencies,
            r.property_dependencies,
            r.provider,
        )
        for r in result.registrations
    ]
    return registered, result.outputs


def _print_report(
    stack: str,
    values: Mapping[str, str],
    resources: list[PlannedResource],
    outputs: dict[str, Any],
    plans: tuple[dict[str, Any] | None, dict[str, Any] | None],
    diff_dir: Path | None,
    headline_lines: Sequence[str] = (),
) -> None:
    baseline_plan, cost = plans
    baseline = baseline_plan["resources"] if baseline_plan is not None else None
    for line in plan_report.headline(
        stack, values, resources, speculative_flags, _preflight_lines()
    ):
        _print(line)
    for line in cost_report.headline_lines(cost):
        _print(line)
    for line in headline_lines:  # hp:observability, hp:draftTraining
        _print(line)
    for line in _preflight_lines().get("draftTraining", ()):  # mlcc/preflight/training_part.py
        _print(f"  preflight: {line}")
    if baseline_plan is None or baseline is None:
        print()
        _print(f"resources ({len(resources)}):")
        for line in plan_report.tree_lines(resources):
            _print(line)
    else:
        changes = plan_diff.diff(baseline, [r.as_json() for r in resources])
        print()
        _print(cost_report.diff_line(baseline_plan.get(plan_out.COST_KEY), cost))
        _print(f"changes against {diff_dir}: {plan_diff.summary(changes)}")
        for line in plan_schedule.diff_lines(baseline, [r.as_json() for r in resources]):
            _print(line)
        if graph.unrecorded(baseline):
            where = f"the {PLAN_FILE} of --diff {diff_dir}"
            _print(f"dependencies not compared: {where} does not record them")
        for change in changes:
            for line in change.lines():
                _print(line)
    if outputs:
        print()
        _print("outputs:")
        for line in plan_report.output_lines(outputs):
            _print(line)


def _observability(stack: str, values: Any) -> tuple[dict[str, str], list[str]]:
    """hp:observability's importable files and headline line (docs/observability.md), and
    hp:draftTraining's job (docs/draft-training.md); the program already parsed the same values
    without a problem."""
    from mlcc.config import stack as config
    from mlcc.config.provider_keys import environment_region
    from mlcc.manifest.training_job import plan_lines
    from mlcc.observability import delivery

    parsed = config.parse(
        values.values,
        stack=stack,
        secret_keys=values.secret_keys,
        environment_region=environment_region(),
    ).config
    headline = delivery.headline(parsed)
    training = plan_lines(parsed.draft_training) if parsed.draft_training else []
    return delivery.files(parsed), [*([headline] if headline is not None else []), *training]


def _cost() -> dict[str, Any] | None:
    """What the program's run priced (mlcc.preflight.cost.budget), as plan.json records it."""
    from mlcc.preflight.run import PROGRAM

    return PROGRAM.costing.as_json() if PROGRAM.costing is not None else None


def _preflight_lines() -> dict[str, tuple[str, ...]]:
    """Per endpoint the preflight figures, when --preflight ran."""
    from mlcc.preflight.run import PROGRAM

    return dict(PROGRAM.outcome.lines) if PROGRAM.outcome is not None else {}


def speculative_flags(
    env: dict[str, str], releases: dict[str, str] | None = None
) -> tuple[str | None, str | None]:
    """The vLLM JSON and the SGLang flags an InferenceEndpointConfig's env asks for.

    Read back with the serve wrapper's own rules (mlcc.engine_contract), each engine at its
    release in `releases` (the endpoint's hp:engineVersion) or its pinned one, so the summary
    shows what the engines will receive, or why the wrapper would refuse it.
    """
    from mlcc import engine_contract as contract

    def read(engine: str) -> tuple[list[contract.EnvFlag], str | None]:
        version = (releases or {}).get(engine)
        if contract.version_problem(engine, version) is not None:
            version = None
        try:
            return contract.speculative_env_flags(engine, env, version), None
        except contract.EnvProblem as problem:
            return [], f"(refused by the serve wrapper: {problem})"

    vllm, vllm_refusal = read(contract.VLLM)
    sglang, sglang_refusal = read(contract.SGLANG)
    config = next((flag.value for flag in vllm if flag.key == contract.VLLM_CONFIG_FLAG), None)
    sglang_line = " ".join(token for flag in sglang for token in flag.tokens) or None
    return vllm_refusal or config, sglang_refusal or sglang_line


def _portable(value: Any, project_dir: Path) -> Any:
    """Paths inside the project folder shown relative to it, so plans diff across checkouts."""
    if isinstance(value, dict):
        return {k: _portable(v, project_dir) for k, v in value.items()}
    if isinstance(value, list):
        return [_portable(v, project_dir) for v in value]
    if isinstance(value, str):
        if value == str(project_dir):
            return "."
        prefix = f"{project_dir}/"
        return value.replace(f"file://{prefix}", "file://").replace(prefix, "")
    return value


def _portable_resource(resource: PlannedResource, project_dir: Path) -> PlannedResource:
    return PlannedResource(
        resource.type,
        resource.name,
        resource.parent,
        resource.depth,
        _portable(resource.inputs, project_dir),
        resource.custom,
        resource.edges,
    )


def _asset_json(value: Any) -> str:
    """Assets other than files (already shown by path) appear in plan.json by their type."""
    path = getattr(value, "path", None)
    return f"file://{path}" if path is not None else f"<{type(value).__name__}>"
