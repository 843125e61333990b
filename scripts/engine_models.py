#!/usr/bin/env python3
"""Regenerate one release's entry in mlcc/preflight/engine_models.json, the model rules
preflight takes from the engines.

    python3 scripts/engine_release.py add vllm 0.34.0        # downloads the wheel, runs this
    python3 scripts/engine_models.py /tmp/wheels/vllm-0.34.0-*.whl [more wheels ...]

Each wheel adds (or replaces) the entry of its engine and version; the other releases stay.

Reads the wheels' sources with `ast` (nothing is imported from the engines):

- vLLM EAGLE-3 targets: every architecture of vllm/model_executor/models/registry.py whose class
  derives, directly or through its bases, from `SupportsEagle3` (the check of
  `GPUModelRunner._setup_eagle3_aux_hidden_state_outputs`).
- vLLM MTP targets: the `model_type` and architecture names `SpeculativeConfig.hf_config_override`
  (vllm/config/speculative.py) rewrites into an MTP draft; any other target ends in
  `NotImplementedError: Unsupported speculative method: 'mtp'` in `SpeculativeConfig.__post_init__`.
- vLLM EAGLE heads by format: the architectures of `_SPECULATIVE_DECODING_MODELS` in
  vllm/model_executor/models/registry.py whose module is an `*_eagle3` one (EAGLE-3: the head's
  fc takes the target's auxiliary hidden states) or an `*_eagle` one (EAGLE-1: fc over the token
  embedding and one hidden state).
- vLLM's default `gpu_memory_utilization` (vllm/config/cache.py, `CacheConfig`): the field's
  default, or, where the field defaults to None (0.34.0), the class constant
  `DEFAULT_GPU_MEMORY_UTILIZATION` that `resolved_gpu_memory_utilization` falls back to
  without the extensible KV cache.
- SGLang EAGLE-3 targets: every `EntryClass` of sglang/srt/models/*.py with a
  `set_eagle3_layers_to_capture` method (called by the model runner's attention-backend setup).
- SGLang EAGLE heads by format: the `EntryClass` of sglang/srt/models/*_eagle3.py (EAGLE-3) and
  *_eagle.py (EAGLE-1); SGLang loads a draft by its config's architecture alone.
- SGLang MTP (NEXTN) targets: the architectures `ModelConfig._config_draft_model`
  (sglang/srt/configs/model_config.py) turns into a NextN/MTP draft, and those
  `_handle_eagle_family` (sglang/srt/arg_groups/speculative_hook.py) lets draft themselves.
- Each engine's quantization methods (vLLM `get_quantization_config`'s `method_to_config`,
  SGLang's `BASE_QUANTIZATION_METHODS`) and their classes' `get_min_capability()` (compute
  capability x 10; the CUDA case where the method branches by platform).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

from engine_flags import version_key, wheel_version

MODELS_JSON = Path(__file__).resolve().parents[1] / "mlcc" / "preflight" / "engine_models.json"
ABOUT = (
    "Do not edit: generated from the engines' wheels by scripts/engine_models.py "
    "(scripts/engine_release.py add ENGINE VERSION), per engine and release."
)
ENGINES = ("vllm", "sglang")


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
    for key, value in registry_entries(registry, "_TEXT_GENERATION_MODELS"):
        class_name = value.elts[1]
        if isinstance(class_name, ast.Constant) and derives(
            classes, str(class_name.value), "SupportsEagle3", set()
        ):
            targets.add(key)
    return sorted(targets)


def registry_entries(registry: ast.Module, table: str) -> list[tuple[str, ast.Tuple]]:
    """(architecture, (module, class)) of one of vLLM's registry tables."""
    entries = []
    for node in ast.walk(registry):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == table for t in node.targets
        ):
            assert isinstance(node.value, ast.Dict)
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Tuple):
                    entries.append((str(key.value), value))
    return entries


def vllm_eagle_heads(wheel: Path) -> dict[str, list[str]]:
    """{"eagle3": [...], "eagle": [...]}: the registry's speculative architectures by module."""
    registry = one_source(wheel, "vllm/model_executor/models/registry.py")
    heads: dict[str, set[str]] = {"eagle3": set(), "eagle": set()}
    for key, value in registry_entries(registry, "_SPECULATIVE_DECODING_MODELS"):
        module = value.elts[0]
        if isinstance(module, ast.Constant):
            suffix = str(module.value).rsplit("_", 1)[-1]
            if suffix in heads:
                heads[suffix].add(key)
    return {name: sorted(found) for name, found in heads.items()}


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
    utilization = fallback = None
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
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "DEFAULT_GPU_MEMORY_UTILIZATION"
            and isinstance(node.value, ast.Constant)
        ):
            fallback = node.value.value
    if utilization is None:
        utilization = fallback
    return {
        "version": wheel_version(wheel),
        "eagle3_targets": vllm_eagle3_targets(wheel),
        "eagle_heads": vllm_eagle_heads(wheel),
        "mtp_targets": sorted(override | set(mtp_types)),
        "gpu_memory_utilization": utilization,
        "quantization_min_capability": min_capabilities(
            wheel, "vllm/model_executor/layers/quantization/", "method_to_config"
        ),
    }


def min_capabilities(wheel: Path, prefix: str, registry: str) -> dict[str, int]:
    """quantization method name -> the smallest compute capability x 10 the engine accepts:
    the method's class in the engine's registry (`registry`, a dict literal of the package's
    __init__.py), and that class's `get_min_capability()`."""
    capability: dict[str, int] = {}
    for _, module in sources(wheel, prefix):
        for node in (n for n in ast.walk(module) if isinstance(n, ast.ClassDef)):
            methods = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
            value = _constant_return(methods.get("get_min_capability"))
            if isinstance(value, int):
                capability[node.name] = value
    found: dict[str, int] = {}
    for entries in _registry_entries(one_source(wheel, f"{prefix}__init__.py"), registry):
        for key, cls in zip(entries.keys, entries.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(cls, ast.Name) and cls.id in capability:
                found[str(key.value)] = capability[cls.id]
    return dict(sorted(found.items()))


def _registry_entries(module: ast.Module, registry: str) -> list[ast.Dict]:
    """The registry's dict literal, then the `registry.update({...})` calls made on CUDA
    (under an `if` whose test names is_cuda)."""
    found: list[ast.Dict] = []
    for node in ast.walk(module):
        target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == registry and isinstance(value, ast.Dict):
            found.append(value)
    for branch in (n for n in ast.walk(module) if isinstance(n, ast.If)):
        if "is_cuda" not in ast.unparse(branch.test):
            continue
        for call in (n for s in branch.body for n in ast.walk(s) if isinstance(n, ast.Call)):
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "update"
                and isinstance(func.value, ast.Name)
                and func.value.id == registry
                and call.args
                and isinstance(call.args[0], ast.Dict)
            ):
                found.append(call.args[0])
    return found


def _constant_return(method: ast.FunctionDef | None) -> object:
    """The constant the method returns last in its source: the plain CUDA case after the
    platform branches (NPU, ROCm, MUSA) that return earlier; of a conditional expression
    (`100 if self.use_mxfp8 else 80`), its else branch."""
    if method is None:
        return None
    returns = sorted(
        (n for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None),
        key=lambda n: n.lineno,
    )
    if not returns:
        return None
    value = returns[-1].value
    if isinstance(value, ast.IfExp):
        value = _cuda_branch(value)
    return value.value if isinstance(value, ast.Constant) else None


_PLATFORMS = re.compile(r"(npu|hip|musa|rocm|xpu|cpu)", re.IGNORECASE)


def _cuda_branch(choice: ast.IfExp) -> ast.expr:
    """`a if <platform> else b` -> b, `a if not <platform> else b` -> a; any other condition
    (a feature such as mxfp8) -> its else branch, the plain case."""
    test = choice.test
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    names = " ".join(
        n.id if isinstance(n, ast.Name) else n.attr
        for n in ast.walk(test)
        if isinstance(n, ast.Name | ast.Attribute)
    )
    if _PLATFORMS.search(names):
        return choice.body if negated else choice.orelse
    return choice.orelse


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


def sglang_eagle_heads(wheel: Path) -> dict[str, list[str]]:
    """{"eagle3": [...], "eagle": [...]}: the EntryClass names of the EAGLE model files."""
    heads: dict[str, set[str]] = {"eagle3": set(), "eagle": set()}
    for name, module in sources(wheel, "sglang/srt/models/"):
        suffix = Path(name).stem.rsplit("_", 1)[-1]
        if suffix not in heads:
            continue
        for node in module.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
            ):
                heads[suffix] |= {e.id for e in ast.walk(node.value) if isinstance(e, ast.Name)}
    return {name: sorted(found) for name, found in heads.items()}


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
        "eagle_heads": sglang_eagle_heads(wheel),
        "mtp_targets": sorted(architectures),
        "quantization_min_capability": min_capabilities(
            wheel, "sglang/srt/layers/quantization/", "BASE_QUANTIZATION_METHODS"
        ),
    }


def merged(existing: dict[str, object] | None, wheels: list[Path]) -> dict[str, object]:
    """The document with each wheel's release added or replaced, releases in version order."""
    engines: dict[str, dict[str, object]] = {engine: {} for engine in ENGINES}
    for engine in ENGINES:
        releases = existing.get(engine) if isinstance(existing, dict) else None
        for version, table in (releases if isinstance(releases, dict) else {}).items():
            if isinstance(table, dict) and table.get("version") == version:
                engines[engine][version] = table  # a release entry (not the older layout)
    for wheel in wheels:
        engine = wheel.name.split("-", 1)[0].lower()
        if engine not in ENGINES:
            raise SystemExit(f"engine_models: {wheel.name} is not a vllm or sglang wheel")
        tables = vllm_tables(wheel) if engine == "vllm" else sglang_tables(wheel)
        engines[engine][str(tables["version"])] = tables
    return {
        "about": ABOUT,
        **{
            engine: {v: engines[engine][v] for v in sorted(engines[engine], key=version_key)}
            for engine in ENGINES
        },
    }


def without(existing: dict[str, object], engine: str, version: str) -> dict[str, object]:
    """The document without one release."""
    releases = existing.get(engine)
    assert isinstance(releases, dict)
    return {**existing, engine: {v: t for v, t in releases.items() if v != version}}


def read_document(path: Path = MODELS_JSON) -> dict[str, object] | None:
    if not path.exists():
        return None
    document = json.loads(path.read_text(encoding="utf-8"))
    return document if isinstance(document, dict) else None


def rendered(tables: dict[str, object]) -> str:
    return json.dumps(tables, indent=1) + "\n"


def main(argv: list[str]) -> int:
    wheels = [Path(a) for a in argv]
    if not wheels or any(w.name.split("-", 1)[0] not in ENGINES for w in wheels):
        print(__doc__, file=sys.stderr)
        return 2
    MODELS_JSON.write_text(rendered(merged(read_document(), wheels)))
    print(f"wrote {MODELS_JSON}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
