#!/usr/bin/env python3
"""Regenerate the engines' option tables, mlcc/engine_contract/engine_flags.json, from their wheels.

    pip download --no-deps vllm==0.27.1 sglang==0.5.17 -d /tmp/wheels
    python3 scripts/engine_flags.py /tmp/wheels/vllm-0.27.1-*.whl /tmp/wheels/sglang-0.5.17-*.whl

Reads (without importing anything from the engines) the argparse definitions of `vllm serve`
(vllm/engine/arg_utils.py: explicit `add_argument("--flag", ...)`; vllm/entrypoints/openai/
cli_args.py: explicit flags plus one `--field-name` per FrontendArgs field) and of
`python3 -m sglang.launch_server` (sglang/srt/server_args.py: explicit flags plus one flag per
`A[..., Arg(...)]` / `A[..., "help"]` field of ServerArgs, with `cli_name` and `aliases`), and
writes them, with each engine's version and the source files read, to the JSON file the engine
contract loads (mlcc/engine_contract/flag_tables.py).
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
    "Do not edit: generated from the engines' wheels. The long options `vllm serve` and "
    "`python3 -m sglang.launch_server` accept at these versions, and their other option "
    "strings (short forms, aliases) with the long option each stands for."
)
VLLM_FILES = ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py")
VLLM_FRONTEND_CLASSES = ("BaseFrontendArgs", "FrontendArgs")
SGLANG_FILE = "sglang/srt/server_args.py"
SGLANG_CLASS = "ServerArgs"

Flags = dict[str, str]  # option string ("--tp-size", "-tp") -> the long name it stands for


def wheel_version(wheel: Path) -> str:
    match = re.match(r"[^-]+-([^-]+)-", wheel.name)
    if match is None:
        raise SystemExit(f"engine_flags: {wheel.name} is not a wheel file name")
    return match.group(1)


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


def dataclass_fields(tree: ast.Module, class_name: str) -> list[ast.AnnAssign]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return [
                item
                for item in node.body
                if isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and "ClassVar" not in ast.unparse(item.annotation)
            ]
    raise SystemExit(f"engine_flags: no class {class_name} in the source")


def vllm_flags(wheel: Path) -> Flags:
    flags: Flags = {}
    for member in VLLM_FILES:
        tree = read_source(wheel, member)
        explicit_flags(tree, flags)
        if member.endswith("cli_args.py"):
            for class_name in VLLM_FRONTEND_CLASSES:
                for item in dataclass_fields(tree, class_name):
                    name = item.target.id.replace("_", "-")  # type: ignore[union-attr]
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


def sglang_flags(wheel: Path) -> Flags:
    tree = read_source(wheel, SGLANG_FILE)
    flags: Flags = {}
    for item in dataclass_fields(tree, SGLANG_CLASS):
        is_cli, arg = sglang_arg_call(item.annotation)
        if not is_cli or (arg is not None and keyword(arg, "no_cli")):
            continue
        field_flag = "--" + item.target.id.replace("_", "-")  # type: ignore[union-attr]
        cli_name = keyword(arg, "cli_name") if arg is not None else None
        aliases = keyword(arg, "aliases") if arg is not None else None
        alias_names = [str(a) for a in aliases] if isinstance(aliases, list) else []
        names = [str(cli_name or field_flag), *alias_names]
        record(flags, names)
    explicit_flags(tree, flags)
    return flags


def engine_table(version: str, sources: list[str], flags: Flags) -> dict[str, object]:
    """One engine's entry: its version, the files read, its long options and their aliases."""
    aliases = {option: primary for option, primary in flags.items() if option != f"--{primary}"}
    return {
        "version": version,
        "sources": sources,
        "long_options": sorted(set(flags.values())),
        "aliases": dict(sorted(aliases.items())),
    }


def document(vllm_wheel: Path, sglang_wheel: Path) -> dict[str, object]:
    """The whole JSON document for the two engines' wheels."""
    return {
        "generated_by": GENERATOR,
        "about": ABOUT,
        "engines": {
            "vllm": engine_table(
                wheel_version(vllm_wheel), list(VLLM_FILES), vllm_flags(vllm_wheel)
            ),
            "sglang": engine_table(
                wheel_version(sglang_wheel), [SGLANG_FILE], sglang_flags(sglang_wheel)
            ),
        },
    }


def rendered(table: dict[str, object]) -> str:
    return json.dumps(table, indent=2, ensure_ascii=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vllm_wheel", type=Path)
    parser.add_argument("sglang_wheel", type=Path)
    args = parser.parse_args()
    FLAGS_JSON.write_text(rendered(document(args.vllm_wheel, args.sglang_wheel)))
    print(f"engine_flags: wrote {FLAGS_JSON}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
