#!/usr/bin/env python3
"""Extract `speculators train`'s options from the pinned release's own parser.

    python3 scripts/speculators_train_flags.py WHEEL PYTHON

PYTHON is an interpreter where that speculators release is installed (with its hs-connectors
and torch; nothing runs on a GPU). The parser is the release's
`speculators.train.config.resolution.build_parser()`: the argparse parser `speculators train`
resolves its arguments with (generated from the pydantic `TrainConfig` schema, plus the flags
each registered hidden-states backend of hs-connectors adds). For each option: its long flag,
destination, group, kind (value, list, store_true, boolean-optional), value type, choices and
the schema's default. Written to mlcc/facts/speculators_train.json with the wheel's sha256.

The parser accepts unambiguous abbreviations (argparse's allow_abbrev); the table lists the full
names only, and mlcc accepts only those (docs/draft-training.md).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "mlcc" / "facts" / "speculators_train.json"

_PROBE = r"""
import argparse, importlib.metadata, json
from speculators.train.config import resolution
from speculators.train.config.schema import TrainConfig, _GROUPS, _ROOT_FIELDS

fields = {name: TrainConfig.model_fields[name] for name in _ROOT_FIELDS}
for group in _GROUPS.values():
    fields.update(group.model_fields)
parser = resolution.build_parser()
groups = {}
for group in parser._action_groups:
    for action in group._group_actions:
        groups[action.dest] = group.title
rows = []
for action in parser._actions:
    longs = [s for s in action.option_strings if s.startswith("--")]
    if not longs or action.dest == "help":
        continue
    if isinstance(action, argparse.BooleanOptionalAction):
        kind = "boolean-optional"
    elif isinstance(action, argparse._StoreTrueAction):
        kind = "store_true"
    elif action.nargs == "+":
        kind = "list"
    else:
        kind = "value"
    field = fields.get(action.dest)
    default = None
    if field is not None:
        default = field.get_default(call_default_factory=True)
    elif action.default is not argparse.SUPPRESS:
        default = action.default
    type_name = getattr(action.type, "__name__", None) if action.type else None
    rows.append({
        "flag": longs[0],
        "also": longs[1:],
        "dest": action.dest,
        "group": groups.get(action.dest, ""),
        "kind": kind,
        "type": "bool" if kind in ("boolean-optional", "store_true") else (type_name or "str"),
        "choices": None if action.choices is None else list(action.choices),
        "default": default,
        "required": action.dest in resolution.REQUIRED_FLAGS,
    })
print(json.dumps({
    "version": importlib.metadata.version("speculators"),
    "hs_connectors": importlib.metadata.version("hs-connectors"),
    "allow_abbrev": parser.allow_abbrev,
    "options": rows,
}, default=str))
"""


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    wheel, python = Path(argv[0]), argv[1]
    out = subprocess.run(
        [python, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=600
    )
    found = json.loads(out.stdout)
    release = found["version"]
    table: dict[str, Any] = {
        "generated_by": "scripts/speculators_train_flags.py",
        "about": "Do not edit: the options of `speculators train` as the release's own "
        "parser (speculators.train.config.resolution.build_parser) declares them.",
        "releases": {
            release: {
                "source": {
                    "package": "speculators",
                    "version": release,
                    "hs_connectors": found["hs_connectors"],
                    "module": "speculators.train.config.resolution (build_parser) over "
                    "speculators.train.config.schema (TrainConfig)",
                    "wheel": wheel.name,
                    "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
                },
                "allow_abbrev": found["allow_abbrev"],
                "options": sorted(found["options"], key=lambda row: row["flag"]),
            }
        },
    }
    if OUTPUT.is_file():  # keep the other releases' tables
        earlier = json.loads(OUTPUT.read_text())
        table["releases"] = {**earlier.get("releases", {}), **table["releases"]}
    OUTPUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUTPUT.relative_to(REPO)} ({len(found['options'])} options of {release})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
