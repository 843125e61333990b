#!/usr/bin/env python3
"""Regenerate mlcc/preflight/engine_models.json, the model rules preflight takes from the engines.

    pip download --no-deps vllm==0.27.1 sglang==0.5.17 -d /tmp/wheels
    python3 scripts/engine_models.py /tmp/wheels/vllm-0.27.1-*.whl /tmp/wheels/sglang-0.5.17-*.whl

Reads the wheels' sources with `ast` (nothing is imported from the engines):

- vLLM EAGLE-3 targets: every architecture of vllm/model_executor/models/registry.py whose class
  derives, directly or through its bases, from `SupportsEagle3` (the check of
  `GPUModelRunner._setup_eagle3_aux_hidden_state_outputs`).
- vLLM MTP targets: the `model_type` and architecture names `SpeculativeConfig.hf_config_override`
  (vllm/config/speculative.py) rewrites into an MTP draft; any other target ends in
  `NotImplementedError: Unsupported speculative method: 'mtp'` in `SpeculativeConfig.__post_init__`.
- vLLM's default `gpu_memory_utilization` (vllm/config/cache.py, `CacheConfig`).
- SGLang EAGLE-3 targets: every `EntryClass` of sglang/srt/models/*.py with a
  `set_eagle3_layers_to_capture` method (called by the model runner's attention-backend setup).
- SGLang MTP (NEXTN) targets: the architectures `ModelConfig._config_draft_model`
  (sglang/srt/configs/model_config.py) turns into a NextN/MTP draft, and those
  `_handle_eagle_family` (sglang/srt/arg_groups/speculative_hook.py) lets draft themselves.
- Each engine's quantization methods and their `get_min_capability()` (compute capability x 10).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

MODELS_JSON = Path(__file__).resolve().parents[1] / "mlcc" / "preflight" / "engine_models.json"
ABOUT = "Do not edit: generated from the engines' wheels by scripts/engine_models.py."


def wheel_version(wheel: Path) -> str:
    match = re.match(r"[^-]+-([^-]+)-", wheel.name)
    if match is None:
        raise SystemExit(f"engine_models: {wheel.name} is not a wheel file name")
    return match.group(1)


def sources(wheel: Path, prefix: str) -> Iterator[tuple[str, ast.Module]]:
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(prefix) and name.endswith(".py"):
                try:
                    yield name, ast.parse(archive.read(name).decode())
                except SyntaxError:
                    continue


def one_source(wheel: Path, member: str) -> ast.Module:
    with zipfile.ZipFile(wheel) as archive:
        return ast.parse(archive.read(member).decode())


def base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
        elif isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name):
            names.append(base.value.id)
    return names


def function(module: ast.Module, name: str) -> ast.FunctionDef:
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise SystemExit(f"engine_models: no function {name}")


def compared_strings(node: ast.AST) -> set[str]:
    """Every string a comparison in `node` tests against (`x == "a"`, `x in ("a", "b")`)."""
    found: set[str] = set()
    for compare in (n for n in ast.walk(node) if isinstance(n, ast.Compare)):
        for side in compare.comparators:
            for constant in ast.walk(side):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    found.add(constant.value)
    return found


def derives(classes: dict[str, list[str]], name: str, wanted: str, seen: set[str]) -> bool:
    if name == wanted:
        return True
    if name in seen or name not in classes:
        return False
    seen.add(name)
    return any(derives(classes, base, wanted, seen) for base in classes[name])


def vllm_eagle3_targets(wheel: Path) -> list[str]:
    classes: dict[str, list[str]] = {}
    for _, module in sources(wheel, "vllm/model_executor/models/"):
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).extend(base_names(node))
    registry = one_source(wheel, "vllm/model_executor/models/registry.py")
    targets = set()
    for node in ast.walk(registry):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_TEXT_GENERATION_MODELS" for t in node.targets
        ):
            assert isinstance(node.value, ast.Dict)
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(value, ast.Tuple)):
                    continue
                class_name = value.elts[1]
                if isinstance(class_name, ast.Constant) and derives(
                    classes, str(class_name.value), "SupportsEagle3", set()
                ):
                    targets.add(str(key.value))
    return sorted(targets)


def vllm_tables(wheel: Path) -> dict[str, object]:
    speculative = one_source(wheel, "vllm/config/speculative.py")
    override = compared_strings(function(speculative, "hf_config_override"))
    mtp_types: list[str] = []
    for node in ast.walk(speculative):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MTPModelTypes" for t in node.targets
        ):
            mtp_types = [
                str(c.value)
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
    cache = one_source(wheel, "vllm/config/cache.py")
    utilization = None
    for node in ast.walk(cache):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "gpu_memory_utilization"
            and isinstance(node.value, ast.Call)
        ):
            for keyword in node.value.keywords:
                if keyword.arg == "default" and isinstance(keyword.value, ast.Constant):
                    utilization = keyword.value.value
    return {
        "version": wheel_version(wheel),
        "eagle3_targets": vllm_eagle3_targets(wheel),
        "mtp_targets": sorted(override | set(mtp_types)),
        "gpu_memory_utilization": utilization,
        "quantization_min_capability": min_capabilities(
            wheel, "vllm/model_executor/layers/quantization/"
        ),
    }


def min_capabilities(wheel: Path, prefix: str) -> dict[str, int]:
    """quantization method name -> the smallest compute capability x 10 the engine accepts."""
    found: dict[str, int] = {}
    for _, module in sources(wheel, prefix):
        for node in (n for n in ast.walk(module) if isinstance(n, ast.ClassDef)):
            methods = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
            name = _constant_return(methods.get("get_name"))
            capability = _constant_return(methods.get("get_min_capability"))
            if isinstance(name, str) and isinstance(capability, int):
                found[name] = capability
    return dict(sorted(found.items()))


def _constant_return(method: ast.FunctionDef | None) -> object:
    if method is None:
        return None
    returns = [n for n in ast.walk(method) if isinstance(n, ast.Return)]
    values = {r.value.value for r in returns if isinstance(r.value, ast.Constant)}
    return values.pop() if len(values) == 1 and len(returns) >= 1 else None


def sglang_eagle3_targets(wheel: Path) -> list[str]:
    targets = set()
    for _, module in sources(wheel, "sglang/srt/models/"):
        classes = {n.name: n for n in ast.walk(module) if isinstance(n, ast.ClassDef)}

        def has_capture(
            name: str, seen: set[str], classes: dict[str, ast.ClassDef] = classes
        ) -> bool:
            node = classes.get(name)
            if node is None or name in seen:
                return False
            seen.add(name)
            if any(
                isinstance(f, ast.FunctionDef) and f.name == "set_eagle3_layers_to_capture"
                for f in node.body
            ):
                return True
            return any(has_capture(base, seen) for base in base_names(node))

        for node in module.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
            ):
                for entry in ast.walk(node.value):
                    if isinstance(entry, ast.Name) and has_capture(entry.id, set()):
                        targets.add(entry.id)
    return sorted(targets)


def sglang_tables(wheel: Path) -> dict[str, object]:
    model_config = one_source(wheel, "sglang/srt/configs/model_config.py")
    drafts = compared_strings(function(model_config, "_config_draft_model"))
    hook = one_source(wheel, "sglang/srt/arg_groups/speculative_hook.py")
    self_drafting = compared_strings(function(hook, "_handle_eagle_family"))
    # Architecture names (CamelCase); the algorithm names compared there are all capitals.
    architectures = {s for s in drafts | self_drafting if re.match(r"^[A-Z]\w*[a-z]\w*$", s)}
    return {
        "version": wheel_version(wheel),
        "eagle3_targets": sglang_eagle3_targets(wheel),
        "mtp_targets": sorted(architectures),
        "quantization_min_capability": min_capabilities(wheel, "sglang/srt/layers/quantization/"),
    }


def document(vllm: Path, sglang: Path) -> dict[str, object]:
    return {"about": ABOUT, "vllm": vllm_tables(vllm), "sglang": sglang_tables(sglang)}


def rendered(tables: dict[str, object]) -> str:
    return json.dumps(tables, indent=1) + "\n"


def main(argv: list[str]) -> int:
    wheels = {Path(a).name.split("-")[0]: Path(a) for a in argv}
    if set(wheels) != {"vllm", "sglang"}:
        print(__doc__, file=sys.stderr)
        return 2
    MODELS_JSON.write_text(rendered(document(wheels["vllm"], wheels["sglang"])))
    print(f"wrote {MODELS_JSON}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
