"""scripts/engine_flags.py: the option tables are read from the engines' argparse sources."""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from mlcc.engine_contract import PINNED_VERSIONS
from mlcc.engine_contract.flag_tables import FLAGS_FILE, read_flag_tables

REPO = Path(__file__).resolve().parents[2]

VLLM_ARG_UTILS = """
class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        group = parser.add_argument_group("Model")
        group.add_argument("--max-model-len", **kwargs["max_model_len"])
        group.add_argument("--tensor-parallel-size", "-tp", **kwargs["tensor_parallel_size"])
        group.add_argument("--speculative-config", "-sc", **kwargs["speculative_config"])
        parser.add_argument(f"--{dynamic}")  # not a literal: not a flag we can know
"""
VLLM_CLI_ARGS = """
class BaseFrontendArgs:
    chat_template: str | None = None
    registry: ClassVar[dict] = {}

class FrontendArgs(BaseFrontendArgs):
    port: int = 8000

def make_arg_parser(parser):
    parser.add_argument("--headless", action="store_true")
"""
SGLANG_SERVER_ARGS = """
class ServerArgs:
    model_path: A[str, Arg(help="Path.", aliases=["--model"])]
    tp_size: A[int, Arg(help="TP.", aliases=["--tensor-parallel-size"])] = 1
    context_length: A[int, "Context length."] = None
    internal_state: A[int, Arg(help="x", no_cli=True)] = 0
    renamed: A[int, Arg(help="x", cli_name="--public-name")] = 0
    plain_field: int = 0

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--reasoning-parser", type=str)
"""


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "engine_flags", REPO / "scripts" / "engine_flags.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_vllm_flags_are_the_literal_options_and_the_frontend_fields(tmp_path: Path) -> None:
    script = load_script()
    vllm = wheel(
        tmp_path / "vllm-0.27.1-cp38-abi3-manylinux_2_28_x86_64.whl",
        {
            "vllm/engine/arg_utils.py": VLLM_ARG_UTILS,
            "vllm/entrypoints/openai/cli_args.py": VLLM_CLI_ARGS,
        },
    )
    assert script.vllm_flags(vllm) == {
        "--max-model-len": "max-model-len",
        "--tensor-parallel-size": "tensor-parallel-size",
        "-tp": "tensor-parallel-size",
        "--speculative-config": "speculative-config",
        "-sc": "speculative-config",
        "--headless": "headless",
        "--chat-template": "chat-template",
        "--port": "port",
    }
    assert script.wheel_version(vllm) == "0.27.1"


def test_sglang_flags_follow_the_dataclass_annotations(tmp_path: Path) -> None:
    script = load_script()
    sglang = wheel(
        tmp_path / "sglang-0.5.17-cp311-cp311-manylinux_2_34_x86_64.whl",
        {"sglang/srt/server_args.py": SGLANG_SERVER_ARGS},
    )
    assert script.sglang_flags(sglang) == {
        "--model-path": "model-path",
        "--model": "model-path",
        "--tp-size": "tp-size",
        "--tensor-parallel-size": "tp-size",
        "--context-length": "context-length",
        "--public-name": "public-name",
        "--reasoning-parser": "reasoning-parser",
    }


VLLM_SPECULATIVE = """
MTPModelTypes = Literal["deepseek_mtp", "mtp"]
EagleModelTypes = Literal["eagle", MTPModelTypes]
SpeculativeMethod = Literal[EagleModelTypes]

class SpeculativeConfig:
    num_speculative_tokens: int = Field(default=None, gt=0)
    method: SpeculativeMethod | None = None
    registry: ClassVar[dict] = {}

    def __post_init__(self):
        logger.warning("method `%s` is deprecated and replaced with mtp.", self.method)
"""
SGLANG_SPEC_INFO = """
class SpeculativeAlgorithm(Enum):
    EAGLE = auto()
    NGRAM = auto()
    NONE = auto()
"""
SGLANG_SPEC_FIELD = """
    speculative_algorithm: A[
        Optional[str], "Speculative algorithm. Builtins: EAGLE, NEXTN.", NS("spec")
    ] = None
"""


# vllm/config/cache.py as 0.27.1 declares its bounds (pydantic Field), and fields without one.
VLLM_CACHE = """
class CacheConfig:
    DEFAULT_BLOCK_SIZE: ClassVar[int] = 16
    gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)
    max_model_len: int = Field(default=None, ge=LIMIT)  # computed: not a bound we can know
    cache_dtype: CacheDType = "auto"
    not_a_flag: int = Field(default=1, gt=0)
"""


def fake_wheels(tmp_path: Path) -> tuple[Path, Path]:
    vllm = wheel(
        tmp_path / "vllm-0.27.1-x.whl",
        {
            "vllm/engine/arg_utils.py": VLLM_ARG_UTILS,
            "vllm/entrypoints/openai/cli_args.py": VLLM_CLI_ARGS,
            "vllm/config/speculative.py": VLLM_SPECULATIVE,
            "vllm/config/cache.py": VLLM_CACHE,
        },
    )
    server_args = SGLANG_SERVER_ARGS.replace(
        "    plain_field: int = 0\n", "    plain_field: int = 0\n" + SGLANG_SPEC_FIELD.lstrip("\n")
    )
    sglang = wheel(
        tmp_path / "sglang-0.5.17-x.whl",
        {
            "sglang/srt/server_args.py": server_args,
            "sglang/srt/speculative/spec_info.py": SGLANG_SPEC_INFO,
        },
    )
    return vllm, sglang


def test_the_generated_json_names_its_sources_and_versions(tmp_path: Path) -> None:
    script = load_script()
    document = json.loads(script.rendered(script.merged(None, list(fake_wheels(tmp_path)))))
    assert document["generated_by"] == "scripts/engine_flags.py"
    vllm, sglang = document["engines"]["vllm"]["0.27.1"], document["engines"]["sglang"]["0.5.17"]
    assert (vllm["version"], sglang["version"]) == ("0.27.1", "0.5.17")
    assert sglang["sources"] == ["sglang/srt/server_args.py"]
    assert vllm["long_options"] == sorted(vllm["long_options"])
    assert "tensor-parallel-size" in vllm["long_options"]
    assert vllm["aliases"] == {"-sc": "speculative-config", "-tp": "tensor-parallel-size"}
    assert sglang["aliases"] == {"--model": "model-path", "--tensor-parallel-size": "tp-size"}


def test_the_contract_loads_the_tables_the_script_writes(tmp_path: Path) -> None:
    script = load_script()
    written = tmp_path / "engine_flags.json"
    written.write_text(script.rendered(script.merged(None, list(fake_wheels(tmp_path)))))
    tables = read_flag_tables(written)
    assert tables["sglang"]["0.5.17"].long_options == (
        "context-length",
        "model-path",
        "public-name",
        "reasoning-parser",
        "speculative-algorithm",
        "tp-size",
    )
    assert tables["vllm"]["0.27.1"].aliases["-tp"] == "tensor-parallel-size"
    assert tables["vllm"]["0.27.1"].speculative_names == frozenset({"eagle", "mtp", "deepseek_mtp"})
    assert tables["vllm"]["0.27.1"].deprecated_names == frozenset({"deepseek_mtp"})
    assert tables["sglang"]["0.5.17"].speculative_names == frozenset({"EAGLE", "NEXTN", "NGRAM"})


def test_the_speculative_names_and_parameters_come_from_the_sources(tmp_path: Path) -> None:
    script = load_script()
    vllm, sglang = fake_wheels(tmp_path)
    assert script.vllm_speculative(vllm) == {
        "sources": ["vllm/config/speculative.py"],
        "names": ["deepseek_mtp", "eagle", "mtp"],  # nested Literals flattened
        "deprecated_names": ["deepseek_mtp"],  # "deprecated and replaced with mtp"
        "parameters": {
            "method": {"type": "SpeculativeMethod | None", "default": "None"},
            "num_speculative_tokens": {"type": "int", "default": "Field(default=None, gt=0)"},
        },
    }
    spec = script.sglang_speculative(sglang)
    assert spec["names"] == ["EAGLE", "NEXTN", "NGRAM"]  # the enum but NONE, the help's builtins
    assert spec["parameters"] == {
        "speculative-algorithm": {"type": "Optional[str]", "default": "None"}
    }


def test_value_bounds_are_the_pydantic_fields_of_vllm_flags(tmp_path: Path) -> None:
    """gpu-memory-utilization's (0, 1] from CacheConfig's Field(gt=0, le=1), loaded by the
    contract; a computed bound and a field that is no flag are left out; SGLang has none."""
    script = load_script()
    flags = {
        "--gpu-memory-utilization": "gpu-memory-utilization",
        "--max-model-len": "max-model-len",
    }
    vllm, _ = fake_wheels(tmp_path)
    source = "vllm/config/cache.py CacheConfig.gpu_memory_utilization"
    assert script.vllm_value_bounds(vllm, flags) == {
        "gpu-memory-utilization": {"gt": 0, "le": 1, "source": source}
    }
    written = tmp_path / "engine_flags.json"
    written.write_text(script.rendered(script.merged(None, list(fake_wheels(tmp_path)))))
    tables = read_flag_tables(written)
    assert tables["sglang"]["0.5.17"].value_bounds == ()
    checked_in = dict(read_flag_tables()["vllm"][PINNED_VERSIONS["vllm"]].value_bounds)
    bound = checked_in["gpu-memory-utilization"]
    assert (bound.gt, bound.le, bound.source) == (0, 1, source)


def test_sglang_namespace_classes_add_their_fields(tmp_path: Path) -> None:
    """SGLang 0.5.23: ServerArgs gathers its fields from the `_INPUT_NAMESPACES` classes."""
    script = load_script()
    sglang = wheel(
        tmp_path / "sglang-0.5.23-x.whl",
        {
            "sglang/srt/server_args.py": (
                "class ServerArgs:\n    pass\n_INPUT_NAMESPACES = [Spec]\n"
            ),
            "sglang/srt/arg_groups/fields/spec.py": (
                "class Spec(msgspec.Struct):\n"
                '    _NS_PATH = "spec"\n'
                '    uno_lora_path: A[Optional[str], "Path."] = None\n'
                "class Unlisted:\n"
                '    other: A[int, "x"] = 0\n'
            ),
            "sglang/srt/speculative/spec_info.py": SGLANG_SPEC_INFO,
        },
    )
    assert script.sglang_flags(sglang) == {"--uno-lora-path": "uno-lora-path"}
    assert list(script.sglang_speculative(sglang)["parameters"]) == ["uno-lora-path"]


def test_the_checked_in_tables_are_every_supported_release_as_the_script_writes_them() -> None:
    script = load_script()
    assert script.FLAGS_JSON == FLAGS_FILE
    document = json.loads(FLAGS_FILE.read_text())
    assert document["generated_by"] == "scripts/engine_flags.py" and document["about"]
    for engine, releases in document["engines"].items():
        assert PINNED_VERSIONS[engine] in releases
        for version, table in releases.items():
            assert table["version"] == version
            assert table["sources"] and table["long_options"] == sorted(set(table["long_options"]))
            assert set(table["aliases"].values()) <= set(table["long_options"])
            assert table["speculative"]["names"] and table["speculative"]["parameters"]
    assert script.rendered(document) == FLAGS_FILE.read_text()  # as the script writes it


@pytest.mark.parametrize(
    "text",
    [
        '{"engines": {"vllm": {}}}',
        '{"engines": {"vllm": {"1": {"version": "1", "long_options": [1]}}}}',
        '{"engines": {"vllm": {"1": {"version": "2"}}}}',
    ],
)
def test_malformed_tables_are_one_value_error(text: str, tmp_path: Path) -> None:
    path = tmp_path / "engine_flags.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"^engine_flags\.json: "):
        read_flag_tables(path)
