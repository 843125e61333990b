#!/usr/bin/env python3
"""Add, replace, remove or list a supported engine release: one command per release.

    python3 scripts/engine_release.py add vllm 0.34.0              # pip downloads the wheel
    python3 scripts/engine_release.py add sglang 0.5.23 --wheel /tmp/wheels/sglang-0.5.23-...whl
    python3 scripts/engine_release.py remove sglang 0.5.23
    python3 scripts/engine_release.py list

`add` fetches the release's wheel from PyPI with `pip download --no-deps` (or takes `--wheel`),
then writes the release's generated tables beside the other releases':

- mlcc/engine_contract/engine_flags.json (scripts/engine_flags.py): the flag table, the
  speculative names and their parameters (the contract, the config checks and the wrapper);
- mlcc/preflight/engine_models.json (scripts/engine_models.py): the model lists preflight reads;
- mlcc/facts/engine_metrics.json (scripts/engine_metrics.py): the Prometheus metrics
  the release defines (names, types, source files), which bench, scaling and verify read.

It then prints what the release changed against the nearest older supported release (flags,
names, parameters) for the review the new tables need before they are committed
(docs/images.md, "Adding an engine release"). Nothing is imported from the engine; the wheel is
only read. A release PINNED_VERSIONS names cannot be removed.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

SCRIPTS = Path(__file__).resolve().parent
ENGINES = ("vllm", "sglang")


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def pinned_versions() -> dict[str, str]:
    """PINNED_VERSIONS as names.py spells it (read as text: the contract loads the JSON)."""
    text = (SCRIPTS.parent / "mlcc" / "engine_contract" / "names.py").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("PINNED_VERSIONS"))
    return {e: line.split(f"{e.upper()}: ", 1)[1].split('"')[1] for e in ENGINES}


def download(engine: str, version: str, folder: Path) -> Path:
    """The release's wheel from PyPI, through pip (no dependencies: only the wheel is read)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
    command += [f"{engine}=={version}", "-d", str(folder)]
    if subprocess.run(command, check=False).returncode != 0:
        raise SystemExit(f"engine_release: pip could not download {engine}=={version}")
    wheels = sorted(folder.glob(f"{engine}-{version}-*.whl"))
    if not wheels:
        raise SystemExit(f"engine_release: no {engine}-{version} wheel in {folder}")
    return wheels[0]


def checked_wheel(engine: str, version: str, wheel: Path) -> Path:
    name = wheel.name.split("-")
    if not wheel.is_file() or name[:2] != [engine, version]:
        raise SystemExit(f"engine_release: {wheel} is not a {engine}-{version}-*.whl file")
    return wheel


def nearest_older(
    releases: dict[str, object], version: str, key: Callable[[str], Any]
) -> str | None:
    older = [v for v in releases if key(v) < key(version)]
    return max(older, key=key) if older else None


def changes(label: str, before: object, after: object) -> list[str]:
    old = set(before) if isinstance(before, list | dict) else set()
    new = set(after) if isinstance(after, list | dict) else set()
    lines = []
    if new - old:
        lines.append(f"  + {label}: {', '.join(sorted(new - old))}")
    if old - new:
        lines.append(f"  - {label}: {', '.join(sorted(old - new))}")
    return lines


def review(flags: ModuleType, engine: str, version: str) -> list[str]:
    """What the new release changed against the nearest older one, for the reviewer."""
    document = flags.read_document() or {}
    releases = document.get("engines", {}).get(engine, {})
    table = releases[version]
    base = nearest_older(releases, version, flags.version_key)
    speculative = table["speculative"]
    lines = [
        f"{engine} {version}: {len(table['long_options'])} flags, "
        f"{len(speculative['names'])} speculative names, "
        f"{len(speculative['parameters'])} speculative parameters"
    ]
    if base is None:
        return [*lines, "  (no older supported release to compare with)"]
    old = releases[base]
    lines.append(f"  against {engine} {base}:")
    lines += changes("flags", old["long_options"], table["long_options"])
    lines += changes("names", old["speculative"]["names"], speculative["names"])
    lines += changes("parameters", old["speculative"]["parameters"], speculative["parameters"])
    return lines


def add(engine: str, version: str, wheel: Path | None) -> int:
    flags, models, metrics = load("engine_flags"), load("engine_models"), load("engine_metrics")
    with tempfile.TemporaryDirectory(prefix="engine-release-") as folder:
        path = (
            checked_wheel(engine, version, wheel)
            if wheel is not None
            else download(engine, version, Path(folder))
        )
        flags_document = flags.merged(flags.read_document(), [path])
        models_document = models.merged(models.read_document(), [path])
        metrics_document = metrics.merged(metrics.read_document(), [path])
    flags.FLAGS_JSON.write_text(flags.rendered(flags_document))
    models.MODELS_JSON.write_text(models.rendered(models_document))
    metrics.METRICS_JSON.write_text(metrics.rendered(metrics_document))
    print(
        f"engine_release: wrote {engine} {version} into {flags.FLAGS_JSON.name}, "
        f"{models.MODELS_JSON.name} and {metrics.METRICS_JSON.name}; review the changes "
        "before committing:"
    )
    print("\n".join(review(flags, engine, version)))
    return 0


def remove(engine: str, version: str) -> int:
    if pinned_versions().get(engine) == version:
        raise SystemExit(
            f"engine_release: {engine} {version} is pinned (PINNED_VERSIONS in "
            "mlcc/engine_contract/names.py); pin another release first"
        )
    flags, models, metrics = load("engine_flags"), load("engine_models"), load("engine_metrics")
    flags_document, models_document = flags.read_document(), models.read_document()
    metrics_document = metrics.read_document()
    if flags_document is None or models_document is None or metrics_document is None:
        raise SystemExit("engine_release: the generated tables are missing")
    flags.FLAGS_JSON.write_text(flags.rendered(flags.without(flags_document, engine, version)))
    models.MODELS_JSON.write_text(models.rendered(models.without(models_document, engine, version)))
    metrics.METRICS_JSON.write_text(
        metrics.rendered(metrics.without(metrics_document, engine, version))
    )
    print(f"engine_release: removed {engine} {version}")
    return 0


def listing() -> int:
    flags = load("engine_flags")
    document = flags.read_document() or {}
    pinned = pinned_versions()
    for engine in ENGINES:
        versions = list(document.get("engines", {}).get(engine, {}))
        shown = [f"{v} (pinned)" if v == pinned[engine] else v for v in versions]
        print(f"{engine}: {', '.join(shown)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("add", "remove"):
        command = commands.add_parser(name)
        command.add_argument("engine", choices=ENGINES)
        command.add_argument("version")
        if name == "add":
            command.add_argument("--wheel", type=Path, help="a downloaded wheel of the release")
    commands.add_parser("list")
    args = parser.parse_args(argv)
    if args.command == "add":
        return add(args.engine, args.version.removeprefix("v"), args.wheel)
    if args.command == "remove":
        return remove(args.engine, args.version.removeprefix("v"))
    return listing()


if __name__ == "__main__":
    sys.exit(main())
