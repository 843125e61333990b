#!/usr/bin/env python3
"""Regenerate one engine release's tables in mlcc/engine_contract/engine_flags.json from its wheel.

    python3 scripts/engine_release.py add vllm 0.34.0        # downloads the wheel, runs this
    python3 scripts/engine_flags.py /tmp/wheels/vllm-0.34.0-*.whl [more wheels ...]

Each wheel adds (or replaces) the entry of its engine and version; the other releases in the
file stay as they are. Reads (without importing anything from the engines):

- the options of `vllm serve`: vllm/engine/arg_utils.py (explicit `add_argument("--flag", ...)`)
  and the frontend's cli_args.py (vllm/entrypoints/openai/ up to 0.27, vllm/entrypoints/common/
  later: explicit flags plus one `--field-name` per BaseFrontendArgs/FrontendArgs field);
- the options of `python3 -m sglang.launch_server`: sglang/srt/server_args.py (explicit flags
  plus one flag per `A[..., Arg(...)]` / `A[..., "help"]` field of ServerArgs, with `cli_name`
  and `aliases`) and, where ServerArgs gathers its fields from the namespace classes listed in
  `_INPUT_NAMESPACES` (SGLang 0.5.23), those classes' fields in sglang/srt/arg_groups/fields/;
- the speculative names and parameters: vLLM's `SpeculativeMethod` Literal (nested Literals
  flattened) and the fields of `SpeculativeConfig` in vllm/config/speculative.py, with the
  MTP model-type names it logs as "deprecated and replaced with mtp"; SGLang's builtin
  `SpeculativeAlgorithm` members (sglang/srt/speculative/spec_info.py, but NONE) with the names
  the `--speculative-algorithm` help lists as builtins (NEXTN, rewritten to EAGLE before the
  lookup), and the flags of the `spec` namespace (NS("spec") or the class whose `_NS_PATH` is
  "spec");
- the bounds vLLM's pydantic config declares on the fields behind its flags: each `Field(...,
  gt=, ge=, lt=, le=)` of the classes of VLLM_BOUNDED_CONFIGS (vllm/config/cache.py
  `CacheConfig`: `gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)` in 0.27.1)
  whose field is a `vllm serve` flag; `vllm serve` refuses a value outside them. SGLang's
  ServerArgs declares no bounds (its `A[...]` fields carry a type and help only).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import zipfile
from pathlib import Path

FLAGS_JSON = Path(__file__).resolve().parents[1] / "mlcc" / "engine_contract" / "engine_flags.json"
GENERATOR = "scripts/engine_flags.py"
ABOUT = (
    "Do not edit: generated from the engines' wheels (scripts/engine_release.py add ENGINE "
    "VERSION). Per engine and release: the long options `vllm serve` and `python3 -m "
    "sglang.launch_server` accept, their other option strings (short forms, aliases) with the "
    "long option each stands for, and the speculative names and parameters the release accepts."
)
VLLM_ARG_UTILS = "vllm/engine/arg_utils.py"
VLLM_CLI_ARGS = ("vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/common/cli_args.py")
VLLM_FRONTEND_CLASSES = ("BaseFrontendArgs", "FrontendArgs")
VLLM_SPECULATIVE = "vllm/config/speculative.py"
VLLM_METHOD_LITERAL = "SpeculativeMethod"
VLLM_MTP_LITERAL = "MTPModelTypes"
VLLM_MTP_DEPRECATION = "is deprecated and replaced with mtp"
SGLANG_FILE = "sglang/srt/server_args.py"
SGLANG_FIELDS = "sglang/srt/arg_groups/fields/"
SGLANG_CLASS = "ServerArgs"
SGLANG_SPEC_INFO = "sglang/srt/speculative/spec_info.py"
SGLANG_SPEC_NAMESPACE = "spec"
ENGINES = ("vllm", "sglang")
VLLM_BOUNDED_CONFIGS = (("vllm/config/cache.py", "CacheConfig"),)
BOUND_KEYWORDS = ("gt", "ge", "lt", "le")

Flags = dict[str, str]  # option string ("--tp-size", "-tp") -> the long name it stands for
Parameters = dict[str, dict[str, str | None]]  # name -> {"type": ..., "default": ...}


def wheel_engine(wheel: Path) -> str:
    engine = wheel.name.split("-", 1)[0].lower()
    if engine not in ENGINES:
        raise SystemExit(f"engine_flags: {wheel.name} is not a vllm or sglang wheel")
    return engine


def wheel_version(wheel: Path) -> str:
    match = re.match(r"[^-]+-([^-]+)-", wheel.name)
    if match is None:
        raise SystemExit(f"engine_flags: {wheel.name} is not a wheel file name")
    return match.group(1)


def members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def read_source(wheel: Path, member: str) -> ast.Module:
    with zipfile.ZipFile(wheel) as archive:
        return ast.parse(archive.read(member).decode())


def string_flags(call: ast.Call) -> list[str]:
    return [
        arg.value
        for arg in call.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value[:1] == "-"
    ]


def record(flags: Flags, names: list[str]) -> None:
    """One add_argument call: its first long option is primary, every other name an alias."""
    longs = [name for name in names if name.startswith("--")]
    if not longs:
        return
    primary = longs[0].lstrip("-")
    for name in names:
        flags.setdefault(name, primary)


def explicit_flags(tree: ast.Module, flags: Flags) -> None:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "add_argument":
            record(flags, string_flags(node))


def class_node(tree: ast.Module, class_name: str) -> ast.ClassDef | None:
    return next(
        (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name), None
    )


def dataclass_fields(tree: ast.Module, class_name: str) -> list[ast.AnnAssign]:
    node = class_node(tree, class_name)
    if node is None:
        raise SystemExit(f"engine_flags: no class {class_name} in the source")
    return [
        item
        for item in node.body
        if isinstance(item, ast.AnnAssign)
        and isinstance(item.target, ast.Name)
        and "ClassVar" not in ast.unparse(item.annotation)
    ]


def field_name(item: ast.AnnAssign) -> str:
    assert isinstance(item.target, ast.Name)
    return item.target.id


def vllm_cli_args(wheel: Path) -> str:
    found = [member for member in VLLM_CLI_ARGS if member in members(wheel)]
    if not found:
        raise SystemExit(f"engine_flags: {wheel.name} has none of {', '.join(VLLM_CLI_ARGS)}")
    return found[0]


def vllm_sources(wheel: Path) -> list[str]:
    return [VLLM_ARG_UTILS, vllm_cli_args(wheel)]


def vllm_flags(wheel: Path) -> Flags:
    flags: Flags = {}
    for member in vllm_sources(wheel):
        tree = read_source(wheel, member)
        explicit_flags(tree, flags)
        if member.endswith("cli_args.py"):
            for class_name in VLLM_FRONTEND_CLASSES:
                for item in dataclass_fields(tree, class_name):
                    name = field_name(item).replace("_", "-")
                    flags.setdefault(f"--{name}", name)
    return flags


def sglang_arg_call(annotation: ast.expr) -> tuple[bool, ast.Call | None]:
    """(is a CLI field, its Arg(...) call) for `A[T, "help" | Arg(...), ...]`."""
    if not (isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) == "A"):
        return False, None
    parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    for part in parts[1:]:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return True, None
        if isinstance(part, ast.Call) and ast.unparse(part.func) == "Arg":
            return True, part
    return False, None


def keyword(call: ast.Call, name: str) -> object:
    for item in call.keywords:
        if item.arg == name:
            return ast.literal_eval(item.value)
    return None


def annotation_namespace(annotation: ast.expr) -> str | None:
    """`NS("spec")` among an `A[...]` annotation's parts (SGLang 0.5.17)."""
    index = annotation.slice if isinstance(annotation, ast.Subscript) else None
    parts = index.elts if isinstance(index, ast.Tuple) else []
    for part in parts:
        if isinstance(part, ast.Call) and ast.unparse(part.func) == "NS" and part.args:
            value = part.args[0]
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    return None


def input_namespaces(tree: ast.Module) -> list[str]:
    """The class names of `_INPUT_NAMESPACES = [...]` in server_args.py (none before 0.5.23)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_INPUT_NAMESPACES" for t in node.targets
        ):
            return [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)]
    return []


def class_namespace(node: ast.ClassDef) -> str | None:
    for item in node.body:
        if isinstance(item, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_NS_PATH" for t in item.targets
        ):
            value = item.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    return None


SglangField = tuple[ast.AnnAssign, str | None]  # the field and its namespace


def sglang_fields(wheel: Path) -> tuple[list[str], list[SglangField]]:
    """(the files read, every annotated field of ServerArgs and its namespace classes)."""
    tree = read_source(wheel, SGLANG_FILE)
    found = [
        (item, annotation_namespace(item.annotation))
        for item in dataclass_fields(tree, SGLANG_CLASS)
    ]
    wanted = input_namespaces(tree)
    files = [SGLANG_FILE]
    for member in sorted(m for m in members(wheel) if m.startswith(SGLANG_FIELDS)):
        if not member.endswith(".py") or not wanted:
            continue
        module = read_source(wheel, member)
        for node in (n for n in module.body if isinstance(n, ast.ClassDef)):
            if node.name in wanted:
                files.append(member)
                namespace = class_namespace(node)
                found += [(item, namespace) for item in dataclass_fields(module, node.name)]
    return sorted(set(files), key=files.index), found


def sglang_cli_names(item: ast.AnnAssign) -> list[str] | None:
    """The option strings of one field (its flag first), or None when it has no CLI."""
    is_cli, arg = sglang_arg_call(item.annotation)
    if not is_cli or (arg is not None and keyword(arg, "no_cli")):
        return None
    field_flag = "--" + field_name(item).replace("_", "-")
    cli_name = keyword(arg, "cli_name") if arg is not None else None
    aliases = keyword(arg, "aliases") if arg is not None else None
    alias_names = [str(a) for a in aliases] if isinstance(aliases, list) else []
    return [str(cli_name or field_flag), *alias_names]


def sglang_flags(wheel: Path) -> Flags:
    flags: Flags = {}
    for item, _ in sglang_fields(wheel)[1]:
        names = sglang_cli_names(item)
        if names is not None:
            record(flags, names)
    explicit_flags(read_source(wheel, SGLANG_FILE), flags)
    return flags


# --- speculative names and parameters -------------------------------------------------------


def literal_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level `Name = Literal[...]` assignments."""
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and ast.unparse(node.value).startswith("Literal["):
                found[target.id] = node.value
    return found


def literal_values(literals: dict[str, ast.expr], name: str) -> list[str]:
    """The strings of a Literal, the Literals it names flattened (as `get_args` reads them)."""
    node = literals[name]
    assert isinstance(node, ast.Subscript)
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    values: list[str] = []
    for part in parts:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            values.append(part.value)
        elif isinstance(part, ast.Name) and part.id in literals:
            values += literal_values(literals, part.id)
        else:
            raise SystemExit(f"engine_flags: cannot read {ast.unparse(part)} in {name}")
    return values


def declared_type(annotation: ast.expr) -> ast.expr:
    """The type of `A[T, help, ...]` (SGLang), else the annotation itself."""
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) == "A":
        index = annotation.slice
        return index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
    return annotation


def field_parameters(fields: list[tuple[str, ast.AnnAssign]]) -> Parameters:
    """name -> its type and default as the source spells them."""
    return {
        name: {
            "type": ast.unparse(declared_type(item.annotation)),
            "default": None if item.value is None else ast.unparse(item.value),
        }
        for name, item in sorted(fields)
    }


def vllm_speculative(wheel: Path) -> dict[str, object]:
    tree = read_source(wheel, VLLM_SPECULATIVE)
    literals = literal_assignments(tree)
    names = literal_values(literals, VLLM_METHOD_LITERAL)
    deprecated: list[str] = []
    if VLLM_MTP_LITERAL in literals and VLLM_MTP_DEPRECATION in ast.unparse(tree):
        deprecated = [n for n in literal_values(literals, VLLM_MTP_LITERAL) if n != "mtp"]
    fields = [(field_name(item), item) for item in dataclass_fields(tree, "SpeculativeConfig")]
    return {
        "sources": [VLLM_SPECULATIVE],
        "names": sorted(set(names)),
        "deprecated_names": sorted(set(deprecated) & set(names)),
        "parameters": field_parameters(fields),
    }


def sglang_builtin_names(wheel: Path, fields: list[SglangField]) -> list[str]:
    """SpeculativeAlgorithm's members but NONE, and the builtins the flag's help lists."""
    node = class_node(read_source(wheel, SGLANG_SPEC_INFO), "SpeculativeAlgorithm")
    if node is None:
        raise SystemExit(f"engine_flags: no SpeculativeAlgorithm in {SGLANG_SPEC_INFO}")
    names = {
        target.id
        for item in node.body
        if isinstance(item, ast.Assign)
        for target in item.targets
        if isinstance(target, ast.Name) and target.id != "NONE"
    }
    for item, _ in fields:
        if field_name(item) == "speculative_algorithm":
            text = " ".join(
                c.value
                for c in ast.walk(item.annotation)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            )
            listed = re.search(r"Builtins: ([A-Z0-9_, ]+)", text)
            if listed:
                names |= {n.strip() for n in listed.group(1).split(",") if n.strip()}
    return sorted(names)


def sglang_speculative(wheel: Path) -> dict[str, object]:
    files, fields = sglang_fields(wheel)
    spec = []
    for item, namespace in fields:
        names = sglang_cli_names(item)
        if namespace == SGLANG_SPEC_NAMESPACE and names is not None:
            spec.append((names[0].lstrip("-"), item))
    return {
        "sources": [SGLANG_SPEC_INFO, *files],
        "names": sglang_builtin_names(wheel, fields),
        "deprecated_names": [],
        "parameters": field_parameters(spec),
    }


def field_bounds(item: ast.AnnAssign) -> dict[str, float]:
    """The numeric gt/ge/lt/le of a `name: T = Field(...)` field, as its source spells them."""
    call = item.value
    if not (isinstance(call, ast.Call) and ast.unparse(call.func).split(".")[-1] == "Field"):
        return {}
    bounds: dict[str, float] = {}
    for word in call.keywords:
        if word.arg in BOUND_KEYWORDS:
            try:
                number = ast.literal_eval(word.value)
            except ValueError:
                continue  # a bound computed at run time: not one we can know
            if isinstance(number, int | float) and not isinstance(number, bool):
                bounds[word.arg] = number
    return bounds


def vllm_value_bounds(wheel: Path, flags: Flags) -> dict[str, dict[str, object]]:
    """flag -> its field's bounds and the field they were read from, for the fields of
    VLLM_BOUNDED_CONFIGS that are `vllm serve` flags."""
    options = set(flags.values())
    found: dict[str, dict[str, object]] = {}
    for member, class_name in VLLM_BOUNDED_CONFIGS:
        for item in dataclass_fields(read_source(wheel, member), class_name):
            flag, bounds = field_name(item).replace("_", "-"), field_bounds(item)
            if bounds and flag in options:
                found[flag] = {**bounds, "source": f"{member} {class_name}.{field_name(item)}"}
    return dict(sorted(found.items()))


# --- the document -----------------------------------------------------------------------------


def engine_table(version: str, sources: list[str], flags: Flags) -> dict[str, object]:
    """One release's option table: its version, the files read, long options, aliases."""
    aliases = {option: primary for option, primary in flags.items() if option != f"--{primary}"}
    return {
        "version": version,
        "sources": sources,
        "long_options": sorted(set(flags.values())),
        "aliases": dict(sorted(aliases.items())),
    }


def release_table(wheel: Path) -> tuple[str, str, dict[str, object]]:
    """(engine, version, its table) for one wheel."""
    engine, version = wheel_engine(wheel), wheel_version(wheel)
    if engine == "vllm":
        flags = vllm_flags(wheel)
        table = engine_table(version, vllm_sources(wheel), flags)
        table["speculative"] = vllm_speculative(wheel)
        table["value_bounds"] = vllm_value_bounds(wheel, flags)
    else:
        table = engine_table(version, sglang_fields(wheel)[0], sglang_flags(wheel))
        table["speculative"] = sglang_speculative(wheel)
        table["value_bounds"] = {}
    return engine, version, table


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else -1 for part in re.split(r"[.+-]", version))


def merged(existing: dict[str, object] | None, wheels: list[Path]) -> dict[str, object]:
    """The document with each wheel's release added or replaced, releases in version order."""
    old = existing.get("engines") if isinstance(existing, dict) else None
    engines: dict[str, dict[str, object]] = {engine: {} for engine in ENGINES}
    for engine in ENGINES:
        releases = old.get(engine) if isinstance(old, dict) else None
        for version, table in (releases or {}).items():
            if isinstance(table, dict) and table.get("version") == version:
                engines[engine][version] = table  # a release entry (not the older layout)
    for wheel in wheels:
        engine, version, table = release_table(wheel)
        engines[engine][version] = table
    return {
        "generated_by": GENERATOR,
        "about": ABOUT,
        "engines": {
            engine: {v: engines[engine][v] for v in sorted(engines[engine], key=version_key)}
            for engine in ENGINES
        },
    }


def without(existing: dict[str, object], engine: str, version: str) -> dict[str, object]:
    """The document without one release."""
    engines = existing.get("engines")
    assert isinstance(engines, dict)
    kept = {
        e: {v: t for v, t in r.items() if (e, v) != (engine, version)} for e, r in engines.items()
    }
    return {**existing, "engines": kept}


def rendered(document: dict[str, object]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=True) + "\n"


def read_document(path: Path = FLAGS_JSON) -> dict[str, object] | None:
    """The generated JSON document at `path` (engine_flags.json, engine_metrics.json, ...)."""
    if not path.exists():
        return None
    document = json.loads(path.read_text(encoding="utf-8"))
    return document if isinstance(document, dict) else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", type=Path, nargs="+", help="vllm-*.whl or sglang-*.whl")
    args = parser.parse_args()
    FLAGS_JSON.write_text(rendered(merged(read_document(), args.wheels)))
    print(f"engine_flags: wrote {FLAGS_JSON}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
