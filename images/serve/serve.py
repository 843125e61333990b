#!/usr/bin/env python3
"""mlcc serve wrapper: the container's SM_<ENGINE>_* environment -> engine argv -> exec.

One program for both serve images; the image fixes the engine with MLCC_ENGINE=vllm|sglang.
Standard library only and no imports from `mlcc`: it runs on the engine image's own Python and
starts in a few milliseconds. The contract it implements is DESIGN.md section 4:

- every SM_<ENGINE>_FOO_BAR of the image's engine becomes `--foo-bar` (sorted by variable name):
  `true` -> bare flag, `false` -> omitted, anything else (a JSON object included) -> exactly one
  argument, verbatim, never shell-split;
- the model comes from SM_VLLM_MODEL / SM_SGLANG_MODEL_PATH, else /opt/ml/model when it holds
  files, else HF_MODEL_ID / MODEL_ID; --host 0.0.0.0 and --port 8080 unless set;
- the container's own arguments are appended; a flag given as an argument replaces the same flag
  from the environment;
- the speculative settings are validated again (the image may run without the Pulumi program):
  a bad one is refused with one line `mlcc-serve: error: <VARIABLE>: <what to change>` on stderr
  and exit code 2, before anything is exec'd;
- the final command is logged to stderr with secret-like values redacted, then exec'd
  (MLCC_DRY_RUN=1: printed as a JSON array on stdout instead, exit 0).
"""

from __future__ import annotations

import json
import os
import shlex
import sys

PROGRAM = "mlcc-serve"
EXIT_REFUSED = 2
EXIT_EXEC_FAILED = 127
MODEL_DIR = "/opt/ml/model"
DEFAULT_OPTIONS = (("host", "0.0.0.0"), ("port", "8080"))

# What the pinned engine versions accept (reference/engines.md sections 1.2 and 2.2). This is a
# copy of mlcc.engines.pinned(...).speculative_names: the wrapper cannot import mlcc, and
# tests/images check that the two never drift apart.
PINNED_VERSIONS = {"vllm": "0.27.1", "sglang": "0.5.17"}
SPECULATIVE_NAMES = {
    "vllm": frozenset(
        {"eagle", "eagle3", "draft_model", "dflash", "mtp", "dspark", "ngram", "ngram_gpu"}
        | {"suffix", "extract_hidden_states", "medusa", "mlp_speculator", "custom_class"}
    ),
    "sglang": frozenset(
        {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "FROZEN_KV_MTP", "DSPARK"}
    ),
}
# vLLM methods that load a separate draft and fail without `model` (engines.md 1.2).
VLLM_METHODS_NEEDING_MODEL = frozenset(
    {"eagle", "eagle3", "draft_model", "dflash", "medusa", "mlp_speculator", "custom_class"}
)
# vLLM methods with no draft config to take n_predict from (engines.md 1.5).
VLLM_METHODS_NEEDING_TOKENS = frozenset({"ngram", "ngram_gpu", "mtp"})
# vLLM's shorthand and dotted forms of the same SpeculativeConfig fields (engines.md 1.1).
VLLM_SPEC_SHORTHANDS = {
    "spec-method": "method",
    "spec-model": "model",
    "spec-tokens": "num_speculative_tokens",
}
# SGLang falls back to the target as its own draft for these, which crashes (engines.md 2.3).
SGLANG_ALGORITHMS_NEEDING_DRAFT = frozenset({"EAGLE", "EAGLE3", "STANDALONE"})
SGLANG_EAGLE_FAMILY = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
SGLANG_TRIPLE = (
    "speculative-num-steps",
    "speculative-eagle-topk",
    "speculative-num-draft-tokens",
)
SGLANG_SPECULATIVE_OPTIONS = ("speculative-draft-model-path", *SGLANG_TRIPLE)
# A flag is secret-like when one of its dash-separated words is one of these.
SECRET_WORDS = frozenset(
    {"token", "secret", "key", "apikey", "password", "passwd", "credential", "credentials"}
)


class Refusal(Exception):
    """A setting the engine would reject or mishandle; `variable` is what the user must change."""

    def __init__(self, variable: str, message: str) -> None:
        super().__init__(f"{variable}: {message}")
        self.variable = variable
        self.message = message

    def line(self) -> str:
        return " ".join(f"{PROGRAM}: error: {self.variable}: {self.message}".split())


class EngineSpec:
    """How one engine is started and how its flags are spelled."""

    def __init__(
        self,
        name: str,
        command: tuple[str, ...],
        model_variable: str,
        model_key: str,
        model_flag: str | None,
        aliases: dict[str, str],
        command_prefixes: tuple[tuple[str, ...], ...],
    ) -> None:
        self.name = name
        self.prefix = f"SM_{name.upper()}_"
        self.command = command
        self.model_variable = model_variable
        self.model_key = model_key
        self.model_flag = model_flag  # None: the model is the first positional argument
        self.aliases = aliases
        self.command_prefixes = command_prefixes


ENGINES = {
    "vllm": EngineSpec(
        name="vllm",
        command=("vllm", "serve"),
        model_variable="SM_VLLM_MODEL",
        model_key="model",
        model_flag=None,
        aliases={
            "sc": "speculative-config",
            "tp": "tensor-parallel-size",
            "pp": "pipeline-parallel-size",
            "dp": "data-parallel-size",
        },
        command_prefixes=(
            ("vllm", "serve"),
            ("python3", "-m", "vllm.entrypoints.openai.api_server"),
        ),
    ),
    "sglang": EngineSpec(
        name="sglang",
        command=("python3", "-m", "sglang.launch_server"),
        model_variable="SM_SGLANG_MODEL_PATH",
        model_key="model-path",
        model_flag="--model-path",
        aliases={
            "model": "model-path",
            "speculative-draft-model": "speculative-draft-model-path",
            # argparse also takes unambiguous prefixes; --tp and --dp are the common ones.
            "tp": "tp-size",
            "dp": "dp-size",
            "tensor-parallel-size": "tp-size",
            "pipeline-parallel-size": "pp-size",
            "data-parallel-size": "dp-size",
        },
        command_prefixes=(
            ("python3", "-m", "sglang.launch_server"),
            ("python", "-m", "sglang.launch_server"),
            ("sglang", "serve"),
        ),
    ),
}


class Setting:
    """One flag's value and where it came from (an env variable or a container argument)."""

    def __init__(self, value: str | None, source: str) -> None:
        self.value = value
        self.source = source


class EnvOption:
    """The argv tokens one SM_<ENGINE>_* variable contributes."""

    def __init__(self, key: str, tokens: list[str], setting: Setting) -> None:
        self.key = key
        self.tokens = tokens
        self.setting = setting


# ---------------------------------------------------------------------------------------------
# Flags: names, env options, container arguments
# ---------------------------------------------------------------------------------------------


def flag_key(engine: EngineSpec, flag: str) -> str:
    """The canonical name of a flag: no dashes in front, `_` as `-`, aliases and `--no-` folded."""
    name = flag.lstrip("-").split("=", 1)[0].replace("_", "-")
    name = name.removeprefix("no-")
    return engine.aliases.get(name, name)


def env_option(engine: EngineSpec, variable: str, value: str) -> EnvOption | None:
    """The DLC convention for one variable; None when `false` omits the flag."""
    name = variable[len(engine.prefix) :].lower().replace("_", "-")
    if not name:
        raise Refusal(variable, f"no flag name after {engine.prefix}; remove the variable")
    if not value.strip():
        raise Refusal(variable, "empty value; set a value, `true` for a bare flag, or unset it")
    key = flag_key(engine, name)
    if value.lower() == "false":
        return None
    if value.lower() == "true":
        return EnvOption(key, [f"--{name}"], Setting(None, variable))
    if engine.name == "sglang" and key == "speculative-algorithm":
        value = value.strip().upper()  # <= 0.5.8 only took uppercase names
    # argparse reads a value that starts with "-" as another flag; `--flag=value` is unambiguous.
    tokens = [f"--{name}={value}"] if value.startswith("-") else [f"--{name}", value]
    return EnvOption(key, tokens, Setting(value, variable))


def env_options(engine: EngineSpec, env: dict[str, str]) -> list[EnvOption]:
    """The engine's SM_* variables (except the model's), sorted by variable name."""
    options = []
    for variable in sorted(env):
        if variable.startswith(engine.prefix) and variable != engine.model_variable:
            option = env_option(engine, variable, env[variable])
            if option is not None:
                options.append(option)
    return options


def strip_engine_command(engine: EngineSpec, args: list[str]) -> list[str]:
    """Drop a leading engine command, as in HyperPod samples written for images without one."""
    for prefix in engine.command_prefixes:
        if tuple(args[: len(prefix)]) == prefix:
            return args[len(prefix) :]
    return args


def argument_settings(engine: EngineSpec, args: list[str]) -> dict[str, Setting]:
    """The flags the container arguments set, by canonical name (`--f v`, `--f=v`, bare `--f`)."""
    settings: dict[str, Setting] = {}
    if args and engine.model_flag is None and not args[0].startswith("-"):
        settings[engine.model_key] = Setting(args[0], "argument 1 (the model)")
    for index, token in enumerate(args):
        if not token.startswith("-") or token in {"-", "--"}:
            continue
        following = args[index + 1] if index + 1 < len(args) else None
        if "=" in token:
            value: str | None = token.split("=", 1)[1]
        elif following is not None and not following.startswith("-"):
            value = following
        else:
            value = None
        settings[flag_key(engine, token)] = Setting(value, f"argument {token.split('=', 1)[0]}")
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


def resolve_model(engine: EngineSpec, env: dict[str, str], model_dir: str) -> str | None:
    """SM_<ENGINE>_MODEL[_PATH], else the model directory when it holds files, else the HF id."""
    if env.get(engine.model_variable):
        return env[engine.model_variable]
    if directory_has_files(model_dir):
        return model_dir
    return env.get("HF_MODEL_ID") or env.get("MODEL_ID") or None


def model_tokens(engine: EngineSpec, model: str) -> list[str]:
    return [model] if engine.model_flag is None else [engine.model_flag, model]


# ---------------------------------------------------------------------------------------------
# Speculative validation
# ---------------------------------------------------------------------------------------------


def is_uri(value: str) -> bool:
    """s3://, https://, gs:// ... and ARNs: the engines want a Hub id or a local path."""
    scheme = value.split("://", 1)[0]
    has_scheme = "://" in value and scheme.replace("+", "").replace(".", "").isalnum()
    return has_scheme or value.lower().startswith("arn:")


def positive_int(value: object) -> int | None:
    """The value as a positive integer, or None. JSON booleans are not integers."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def known_names(engine: str, version: str | None) -> frozenset[str] | None:
    """The names the image's engine accepts; None when the image carries an unknown version."""
    if version and version != PINNED_VERSIONS[engine]:
        return None
    return SPECULATIVE_NAMES[engine]


def vllm_speculative_fields(settings: dict[str, Setting]) -> dict[str, tuple[object, str]]:
    """SpeculativeConfig fields from the JSON flag, the dotted and the shorthand flags."""
    fields: dict[str, tuple[object, str]] = {}
    config = settings.get("speculative-config")
    if config is not None:
        fields.update({k: (v, config.source) for k, v in vllm_config_object(config).items()})
    for key, setting in settings.items():
        if key.startswith("speculative-config."):
            field = key.removeprefix("speculative-config.").replace("-", "_")
        elif key in VLLM_SPEC_SHORTHANDS:
            field = VLLM_SPEC_SHORTHANDS[key]
        else:
            continue
        if field in fields:
            raise Refusal(setting.source, f"{field} is also set by {fields[field][1]}; set it once")
        fields[field] = (setting.value, setting.source)
    return fields


def vllm_config_object(setting: Setting) -> dict[str, object]:
    example = '{"method":"eagle3","model":"org/draft","num_speculative_tokens":3}'
    try:
        parsed = json.loads(setting.value or "")
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise Refusal(setting.source, f"must be one JSON object, e.g. {example}")
    return {str(key).replace("-", "_"): value for key, value in parsed.items()}


def validate_vllm(settings: dict[str, Setting], version: str | None) -> None:
    fields = vllm_speculative_fields(settings)
    if not fields and "speculative-config" not in settings:
        return
    config = settings.get("speculative-config")
    first_source = config.source if config is not None else next(iter(fields.values()))[1]
    method, method_source = fields.get("method", (None, first_source))
    names = known_names("vllm", version)
    accepted = ", ".join(sorted(SPECULATIVE_NAMES["vllm"]))
    if not isinstance(method, str) or not method:
        raise Refusal(method_source, f'set "method" explicitly (one of {accepted})')
    if names is not None and method not in names:
        hint = ' (vLLM has no eagle2; use "eagle")' if method == "eagle2" else ""
        raise Refusal(method_source, f'unknown method "{method}"{hint}; use one of {accepted}')
    validate_vllm_model(method, fields)
    validate_vllm_tokens(method, fields)


def validate_vllm_model(method: str, fields: dict[str, tuple[object, str]]) -> None:
    model, source = fields.get("model", (None, fields["method"][1]))
    if model is None or model == "":
        if method in VLLM_METHODS_NEEDING_MODEL:
            raise Refusal(source, f'method "{method}" needs "model": a Hub id or a local path')
        return
    if not isinstance(model, str):
        raise Refusal(source, '"model" must be a string: a Hub id or a local path')
    if is_uri(model):
        raise Refusal(
            source,
            f'"model" {model!r} is a URI or ARN; use a Hugging Face id (org/name) or a local '
            "path in the image (stage s3:// drafts to the Hub or bake them into the image)",
        )


def validate_vllm_tokens(method: str, fields: dict[str, tuple[object, str]]) -> None:
    if "num_speculative_tokens" not in fields:
        if method in VLLM_METHODS_NEEDING_TOKENS:
            source = fields["method"][1]
            raise Refusal(source, f'method "{method}" needs "num_speculative_tokens" (e.g. 3)')
        return
    value, source = fields["num_speculative_tokens"]
    if positive_int(value) is None:
        raise Refusal(source, f'"num_speculative_tokens" must be a positive integer, not {value!r}')


def validate_sglang(settings: dict[str, Setting], version: str | None) -> None:
    algorithm = settings.get("speculative-algorithm")
    if algorithm is None or not algorithm.value:
        refuse_speculative_without_algorithm(settings)
        return
    name = algorithm.value.strip().upper()
    names = known_names("sglang", version)
    if names is not None and name not in names:
        accepted = ", ".join(sorted(names))
        hints = {"MTP": ' (SGLang calls it "NEXTN")', "EAGLE2": ' (use "EAGLE" with topk > 1)'}
        raise Refusal(
            algorithm.source,
            f'unknown algorithm "{name}"{hints.get(name, "")}; use one of {accepted}',
        )
    validate_sglang_draft(name, settings)
    validate_sglang_triple(name, settings)


def refuse_speculative_without_algorithm(settings: dict[str, Setting]) -> None:
    for key in SGLANG_SPECULATIVE_OPTIONS:
        if key in settings:
            raise Refusal(
                settings[key].source,
                "has no effect without SM_SGLANG_SPECULATIVE_ALGORITHM; set that too or unset it",
            )


def validate_sglang_draft(algorithm: str, settings: dict[str, Setting]) -> None:
    draft = settings.get("speculative-draft-model-path")
    if draft is None or not draft.value:
        if algorithm in SGLANG_ALGORITHMS_NEEDING_DRAFT:
            raise Refusal(
                "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH",
                f"{algorithm} needs a draft model (a Hub id or a local path); without one "
                "SGLang loads the target as its own draft and crashes",
            )
        return
    if is_uri(draft.value):
        raise Refusal(
            draft.source,
            f"{draft.value!r} is a URI or ARN; use a Hugging Face id (org/name) or a local path "
            "in the image (stage s3:// drafts to the Hub or bake them into the image)",
        )


def validate_sglang_triple(algorithm: str, settings: dict[str, Setting]) -> None:
    """steps / topk / draft tokens: all three or none (a partial triple crashes SGLang)."""
    given = [key for key in SGLANG_TRIPLE if key in settings]
    if not given:
        return
    variables = ", ".join(f"SM_SGLANG_{key.upper().replace('-', '_')}" for key in SGLANG_TRIPLE)
    if len(given) != len(SGLANG_TRIPLE):
        missing = next(key for key in SGLANG_TRIPLE if key not in settings)
        name = f"SM_SGLANG_{missing.upper().replace('-', '_')}"
        raise Refusal(name, f"missing; set all three of {variables}, or none of them")
    values = {key: positive_int(settings[key].value) for key in SGLANG_TRIPLE}
    for key, number in values.items():
        if number is None:
            raise Refusal(
                settings[key].source, f"must be a positive integer, not {settings[key].value!r}"
            )
    steps, topk, draft_tokens = (values[key] for key in SGLANG_TRIPLE)
    chain = algorithm in SGLANG_EAGLE_FAMILY and topk == 1
    if chain and steps is not None and draft_tokens != steps + 1:
        source = settings["speculative-num-draft-tokens"].source
        raise Refusal(source, f"with top-k 1 SGLang uses steps + 1 = {steps + 1}; set that")


VALIDATORS = {"vllm": validate_vllm, "sglang": validate_sglang}


# ---------------------------------------------------------------------------------------------
# Assembling the command
# ---------------------------------------------------------------------------------------------


def build_argv(
    engine_name: str | None,
    env: dict[str, str],
    args: list[str],
    model_dir: str = MODEL_DIR,
) -> list[str]:
    """The engine argv for this environment and these container arguments, or a Refusal."""
    engine = engine_spec(engine_name)
    args = strip_engine_command(engine, args)
    from_args = argument_settings(engine, args)
    kept = [option for option in env_options(engine, env) if option.key not in from_args]
    settings = {option.key: option.setting for option in kept} | from_args
    VALIDATORS[engine.name](settings, env.get("MLCC_ENGINE_VERSION"))
    argv = [*engine.command, *model_argv(engine, env, settings, model_dir)]
    argv += [token for option in kept for token in option.tokens]
    argv += [
        token
        for key, value in DEFAULT_OPTIONS
        if key not in settings
        for token in (f"--{key}", value)
    ]
    return argv + args


def engine_spec(engine_name: str | None) -> EngineSpec:
    if engine_name not in ENGINES:
        raise Refusal("MLCC_ENGINE", f"must be vllm or sglang, not {engine_name!r}")
    return ENGINES[engine_name]


def model_argv(
    engine: EngineSpec, env: dict[str, str], settings: dict[str, Setting], model_dir: str
) -> list[str]:
    """The model arguments, or none when a container argument already names the model."""
    if engine.model_key in settings:
        return []
    model = resolve_model(engine, env, model_dir)
    if model is None:
        raise Refusal(
            engine.model_variable,
            f"no model; set {engine.model_variable} or HF_MODEL_ID, put the model files in "
            f"{model_dir}, or pass the model as a container argument",
        )
    return model_tokens(engine, model)


def is_secret_flag(flag: str) -> bool:
    words = flag.lstrip("-").split("=", 1)[0].replace("_", "-").lower().split("-")
    return any(word in SECRET_WORDS for word in words)


def redacted(argv: list[str]) -> list[str]:
    """argv with the values of secret-like flags (`--api-key`, `--hf-token`, ...) replaced."""
    shown: list[str] = []
    hide_next = False
    for token in argv:
        if hide_next and not token.startswith("-"):
            shown.append("***")
        elif token.startswith("-") and "=" in token and is_secret_flag(token):
            shown.append(token.split("=", 1)[0] + "=***")
        else:
            shown.append(token)
        hide_next = token.startswith("-") and "=" not in token and is_secret_flag(token)
    return shown


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    env = dict(os.environ)
    try:
        command = build_argv(env.get("MLCC_ENGINE"), env, args)
    except Refusal as refusal:
        print(refusal.line(), file=sys.stderr)
        return EXIT_REFUSED
    print(f"{PROGRAM}: exec: {shlex.join(redacted(command))}", file=sys.stderr, flush=True)
    if env.get("MLCC_DRY_RUN") == "1":
        print(json.dumps(command))
        return 0
    try:
        os.execvp(command[0], command)
    except OSError as error:
        print(f"{PROGRAM}: error: cannot start {command[0]}: {error}", file=sys.stderr)
    return EXIT_EXEC_FAILED


if __name__ == "__main__":
    sys.exit(main())
