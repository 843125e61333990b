#!/usr/bin/env python3
"""mlcc serve wrapper: the container's SM_<ENGINE>_* environment -> engine argv -> exec.

One program for both serve images; the image fixes the engine with MLCC_ENGINE=vllm|sglang.
Standard library only: it runs on the engine image's own Python and starts in a few
milliseconds. Every rule it applies (variable names, each supported release's flags, aliases
and speculative names, validation) comes from the `engine_contract` package, which the image
build copies beside this file from mlcc/engine_contract/; there is no second table
(docs/images.md):

- the image's engine release is MLCC_ENGINE_VERSION (its Dockerfile sets it; unset: the pinned
  release); a release the contract has no generated tables for is refused, naming the
  supported ones, and every check below uses that release's own tables;

- every SM_<ENGINE>_FOO_BAR of the image's engine becomes `--foo-bar` (sorted by variable name):
  `true` -> bare flag, `false` -> omitted (any case, spaces around ignored), anything else (a
  JSON object included) -> exactly one argument, never shell-split;
- the model comes from SM_VLLM_MODEL / SM_SGLANG_MODEL_PATH, else /opt/ml/model when it holds
  files, else HF_MODEL_ID / MODEL_ID; it must be a Hub id (org/name) or an absolute path;
  --host 0.0.0.0 and --port 8080 unless set;
- the container's own arguments are appended; a flag given as an argument replaces the same flag
  from the environment;
- SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG whose value is a JSON object (how the program renders
  hp:speculativeSchedule) is written to a new file under $TMPDIR (else /tmp), and SGLang gets
  that file's path (a value that is not an object is passed on as a path);
- the final command is logged to stderr with secret-like values redacted, then exec'd
  (MLCC_DRY_RUN=1: printed as a JSON array on stdout instead).

Exit codes (nothing is exec'd unless noted):
  0    MLCC_DRY_RUN=1 and the command was printed (otherwise the engine replaces this process);
  2    a setting was refused: one line `mlcc-serve: error: <VARIABLE>: <what to change>` on
       stderr, where <VARIABLE> is the env variable or `argument --flag` to change;
  70   an internal error of the wrapper (a bug, or an image without a whole engine_contract/):
       one line on stderr, never a traceback;
  127  the engine command could not be started.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

PROGRAM = "mlcc-serve"
EXIT_REFUSED = 2
EXIT_INTERNAL_ERROR = 70
EXIT_EXEC_FAILED = 127
MODEL_DIR = "/opt/ml/model"
DEFAULT_OPTIONS = (("host", "0.0.0.0"), ("port", "8080"))
CONTRACT_PACKAGE = "engine_contract"


def contract_dir(here: Path) -> Path:
    """The contract package beside this file (the image), else the repository's mlcc/ (a
    checkout)."""
    beside = here.with_name(CONTRACT_PACKAGE)
    if beside.is_dir() or len(here.parents) < 3:
        return beside
    return here.parents[2] / "mlcc" / CONTRACT_PACKAGE


def load_contract(package_dir: Path) -> ModuleType:
    """Import the contract package from its folder as the top-level `engine_contract`.

    No sys.path changes: the package's own folder is its only search location, so its relative
    imports find its modules and nothing else. The same code runs in the image and a checkout.
    """
    spec = importlib.util.spec_from_file_location(
        CONTRACT_PACKAGE,
        package_dir / "__init__.py",
        submodule_search_locations=[str(package_dir)],
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {package_dir}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its submodules and dataclasses look the package up
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from mlcc import engine_contract as contract
else:
    try:
        contract = load_contract(contract_dir(Path(__file__).resolve()))
    except (OSError, ImportError, SyntaxError, ValueError) as error:  # a broken image
        print(f"{PROGRAM}: error: cannot load {CONTRACT_PACKAGE}: {error}", file=sys.stderr)
        sys.exit(EXIT_INTERNAL_ERROR)

Refusal = contract.EnvProblem
Setting = contract.Setting


class EngineSpec:
    """How one engine is started."""

    def __init__(
        self,
        name: str,
        command: tuple[str, ...],
        model_positional: bool,
        command_prefixes: tuple[tuple[str, ...], ...],
    ) -> None:
        self.name = name
        self.command = command
        self.model_key = contract.MODEL_FLAGS[name]
        self.model_variable = contract.MODEL_VARIABLES[name]
        self.model_positional = model_positional  # vLLM: the model is the first argument
        self.command_prefixes = command_prefixes


ENGINES = {
    contract.VLLM: EngineSpec(
        name=contract.VLLM,
        command=("vllm", "serve"),
        model_positional=True,
        command_prefixes=(
            ("vllm", "serve"),
            ("python3", "-m", "vllm.entrypoints.openai.api_server"),
        ),
    ),
    contract.SGLANG: EngineSpec(
        name=contract.SGLANG,
        command=("python3", "-m", "sglang.launch_server"),
        model_positional=False,
        command_prefixes=(
            ("python3", "-m", "sglang.launch_server"),
            ("python", "-m", "sglang.launch_server"),
            ("sglang", "serve"),
        ),
    ),
}


def refusal_line(refusal: contract.EnvProblem) -> str:
    return " ".join(f"{PROGRAM}: error: {refusal.source}: {refusal.message}".split())


# ---------------------------------------------------------------------------------------------
# Container arguments
# ---------------------------------------------------------------------------------------------


def strip_engine_command(engine: EngineSpec, args: list[str]) -> list[str]:
    """Drop a leading engine command, as in HyperPod samples written for images without one."""
    for prefix in engine.command_prefixes:
        if tuple(args[: len(prefix)]) == prefix:
            return args[len(prefix) :]
    return args


def check_argument_text(args: list[str]) -> None:
    for position, token in enumerate(args, start=1):
        problem = contract.text_problem(token)
        if problem is not None:
            raise Refusal(f"argument {position}", problem)


def argument_settings(
    engine: EngineSpec, args: list[str], version: str | None = None
) -> dict[str, contract.Setting]:
    """The flags the container arguments set, by canonical name (`--f v`, `--f=v`, bare `--f`),
    as the image's engine release (`version`, None: pinned) reads them."""
    settings: dict[str, contract.Setting] = {}
    if args and engine.model_positional and not args[0].startswith("-"):
        settings[engine.model_key] = Setting(args[0], "argument 1 (the model)")
    for index, token in enumerate(args):
        if not token.startswith("-") or token in {"-", "--"}:
            continue
        source = f"argument {token.split('=', 1)[0]}"
        problem = contract.flag_spelling_problem(
            engine.name, token, guarded_only=True, version=version
        )
        if problem is not None:
            raise Refusal(source, problem)
        following = args[index + 1] if index + 1 < len(args) else None
        if "=" in token:
            value: str | None = token.split("=", 1)[1]
        elif following is not None and not following.startswith("-"):
            value = following
        else:
            value = None
        settings[contract.canonical_flag(engine.name, token, version)] = Setting(value, source)
    return settings


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------


def directory_has_files(path: str) -> bool:
    try:
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def checked_model(value: str | None, source: str) -> str:
    if value is None:
        raise Refusal(source, "needs a model: a Hugging Face id (org/name) or an absolute path")
    problem = contract.draft_model_problem(value)
    if problem is not None:
        raise Refusal(source, problem)
    return value


def resolve_model(
    engine: EngineSpec, env_model: contract.EnvFlag | None, env: dict[str, str], model_dir: str
) -> str | None:
    """SM_<ENGINE>_MODEL[_PATH], else the model directory when it holds files, else the Hub id."""
    if env_model is not None:
        return checked_model(env_model.value, env_model.variable)
    if directory_has_files(model_dir):
        return model_dir
    for variable in contract.HUB_MODEL_ENVS:
        value = env.get(variable, "")
        if value.strip():
            return checked_model(value.strip(), variable)
    return None


def model_argv(
    engine: EngineSpec,
    env_model: contract.EnvFlag | None,
    env: dict[str, str],
    from_args: dict[str, contract.Setting],
    model_dir: str,
) -> list[str]:
    """The model arguments, or none when a container argument already names the model."""
    if engine.model_key in from_args:
        given = from_args[engine.model_key]
        checked_model(given.value, given.source)
        return []
    model = resolve_model(engine, env_model, env, model_dir)
    if model is None:
        raise Refusal(
            engine.model_variable,
            f"no model; set {engine.model_variable} or HF_MODEL_ID, put the model files in "
            f"{model_dir}, or pass the model as a container argument",
        )
    return [model] if engine.model_positional else [f"--{engine.model_key}", model]


# ---------------------------------------------------------------------------------------------
# Assembling the command
# ---------------------------------------------------------------------------------------------


def engine_spec(engine_name: str | None) -> EngineSpec:
    problem = contract.engine_problem(engine_name)
    if problem is not None or engine_name is None:
        raise Refusal(contract.ENGINE_ENV, problem or "is not set")
    return ENGINES[engine_name.strip().lower()]


def engine_release(engine: EngineSpec, env: dict[str, str]) -> str | None:
    """The image's engine release (MLCC_ENGINE_VERSION, set by the Dockerfile; None: the pinned
    one), refused unless the contract has its generated tables: without them nothing the
    wrapper checks would be that release's."""
    version = env.get(contract.ENGINE_VERSION_ENV, "").strip().removeprefix("v") or None
    problem = contract.version_problem(engine.name, version)
    if problem is not None:
        raise Refusal(contract.ENGINE_VERSION_ENV, problem)
    return version


def build_argv(
    engine_name: str | None,
    env: dict[str, str],
    args: list[str],
    model_dir: str = MODEL_DIR,
) -> list[str]:
    """The engine argv for this environment and these container arguments, or a Refusal."""
    engine = engine_spec(engine_name)
    version = engine_release(engine, env)
    check_argument_text(args)
    args = strip_engine_command(engine, args)
    from_args = argument_settings(engine, args, version)
    flags = contract.env_flags(engine.name, env, version)
    env_model = next((flag for flag in flags if flag.key == engine.model_key), None)
    kept = [flag for flag in flags if flag.key not in from_args and flag is not env_model]
    settings = contract.settings_from_flags(kept) | from_args
    contract.check_speculative(engine.name, settings, version)
    kept = [written_adaptive_config(flag, env) for flag in kept]
    argv = [*engine.command, *model_argv(engine, env_model, env, from_args, model_dir)]
    argv += [token for flag in kept for token in flag.tokens]
    argv += [
        token
        for key, value in DEFAULT_OPTIONS
        if key not in settings
        for token in (f"--{key}", value)
    ]
    return argv + args


def written_adaptive_config(flag: contract.EnvFlag, env: dict[str, str]) -> contract.EnvFlag:
    """An inline SGLang adaptive config (a JSON object, checked already) as a file's path."""
    value = (flag.value or "").strip()
    if flag.key != contract.SGLANG_ADAPTIVE_CONFIG_FLAG or not value.startswith("{"):
        return flag
    directory = env.get("TMPDIR", "").strip() or "/tmp"
    try:
        handle, path = tempfile.mkstemp(prefix="mlcc-adaptive-", suffix=".json", dir=directory)
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(value + "\n")
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or type(error).__name__
        raise Refusal(
            flag.variable,
            f"cannot write the adaptive config file in {directory} ({reason}); "
            "set TMPDIR to a writable folder",
        ) from None
    return contract.EnvFlag(flag.variable, flag.name, flag.key, path)


def redacted(argv: list[str]) -> list[str]:
    """argv with the values of secret-like flags (`--api-key`, `--hf-token`, ...) replaced."""
    shown: list[str] = []
    hide_next = False
    for token in argv:
        secret = token.startswith("-") and contract.is_secret_flag(token)
        if hide_next and not token.startswith("-"):
            shown.append("***")
        elif secret and "=" in token:
            shown.append(token.split("=", 1)[0] + "=***")
        else:
            shown.append(token)
        hide_next = secret and "=" not in token
    return shown


def is_dry_run(env: dict[str, str]) -> bool:
    return env.get("MLCC_DRY_RUN", "").strip().lower() in {"1", "true"}


def main(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    env = dict(os.environ) if environ is None else environ
    try:
        command = build_argv(env.get(contract.ENGINE_ENV), env, args)
    except Refusal as refusal:
        print(refusal_line(refusal), file=sys.stderr)
        return EXIT_REFUSED
    except Exception as error:  # one line instead of a traceback, even for a bug
        print(f"{PROGRAM}: error: internal error: {type(error).__name__}", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    print(f"{PROGRAM}: exec: {shlex.join(redacted(command))}", file=sys.stderr, flush=True)
    if is_dry_run(env):
        print(json.dumps(command))
        return 0
    try:
        os.execvp(command[0], command)
    except OSError as error:
        print(f"{PROGRAM}: error: cannot start {command[0]}: {error}", file=sys.stderr)
    return EXIT_EXEC_FAILED


if __name__ == "__main__":
    sys.exit(main())
