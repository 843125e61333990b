"""What `mlcc plan --out DIR` owns and writes, and the plan.json `--diff` reads.

`--out DIR` owns `DIR/plan.json` and the manifests that plan.json lists under `DIR/manifests/`,
nothing else: plan.json records the manifest files it wrote (`"manifests": [...]`), and the next
run removes only those it does not write again. A file a user put in `DIR/manifests/` stays; one
in the way of a manifest (the same name, not listed) stops the run before anything is written;
a `DIR/plan.json` that is not a plan mlcc wrote is never replaced. Every file goes through the
one safe writer (mlcc.userfiles), every failure is one `UserFileError` line naming the path.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlcc.observability import view
from mlcc.plan import manifest_yaml
from mlcc.plan.report import PlannedResource
from mlcc.userfiles import (
    FILE,
    FOLDER,
    UserFileError,
    ensure_folder,
    file_kind,
    read_json,
    remove_file,
    shown_path,
)
from mlcc.userfiles import write_text as write_file

DEFAULT_OUT = Path("build/plan")
PLAN_FILE = "plan.json"
MANIFESTS = "manifests"
OWNED_KEY = "manifests"  # plan.json's list of the manifest files that run wrote
COST_KEY = "cost"  # what the stack costs per hour (mlcc.preflight.cost.estimate, docs/cost.md)
# plan.json's list of hp:observability's importable files that run wrote (docs/observability.md)
OBSERVABILITY_KEY = "observability"
# A name mlcc gives a manifest: `NN-kind-name.yaml`, one plain file name (never a path).
_MANIFEST_NAME = re.compile(r"^[0-9]{2,}-[^/\\\0]+\.yaml$")


@dataclass(frozen=True)
class Manifest:
    name: str  # the file name in DIR/manifests/
    text: str


def check_out_dir(out: Path) -> None:
    """Before any work: the nearest existing folder on the way to `out` is a folder mlcc may
    write in, `out/manifests` a folder (or nothing yet), and a plan.json already in `out` one
    mlcc wrote (else UserFileError)."""
    for candidate in (out, *out.parents):
        kind = file_kind(candidate, "--out")
        if kind is None:
            continue
        if kind != FOLDER:
            where = f"is {kind}" if candidate == out else f"is inside {kind} {candidate}"
            if kind == FILE:
                where = "is a file" if candidate == out else f"is inside the file {candidate}"
            raise UserFileError(
                f"--out {shown_path(out)}: {where}; give a folder (default {DEFAULT_OUT})"
            )
        if not os.access(candidate, os.W_OK | os.X_OK):  # the write would fail after the run
            raise UserFileError(f"--out {shown_path(out)}: no permission to write in {candidate}")
        break
    manifests_kind = file_kind(out / MANIFESTS, "--out")
    if manifests_kind not in (None, FOLDER):
        raise UserFileError(
            f"--out {shown_path(out / MANIFESTS)}: is {manifests_kind}, not a folder"
        )
    owned_manifests(out)


def load_plan(path: Path, label: str) -> dict[str, Any]:
    """A plan.json mlcc wrote (a map whose `resources` each have a type and a name)."""
    document = read_json(path, label)
    resources = document.get("resources") if isinstance(document, dict) else None
    if not isinstance(resources, list) or not all(
        isinstance(r, dict) and {"type", "name"} <= set(r) for r in resources
    ):
        raise UserFileError(f"{label} {shown_path(path)}: not a {PLAN_FILE} written by `mlcc plan`")
    return dict(document)


def load_baseline(directory: Path) -> list[dict[str, Any]]:
    """`--diff DIR`: the resources of DIR/plan.json (or of the plan.json file DIR names)."""
    resources: list[dict[str, Any]] = load_baseline_plan(directory)["resources"]
    return resources


def load_baseline_plan(directory: Path) -> dict[str, Any]:
    """`--diff DIR`: the whole of DIR/plan.json (or of the plan.json file DIR names)."""
    path = directory / PLAN_FILE if file_kind(directory, "--diff") == FOLDER else directory
    if file_kind(path, "--diff") is None:
        raise UserFileError(
            f"--diff {shown_path(directory)}: no {PLAN_FILE} there; write one first with "
            f"`mlcc plan --out {shown_path(directory)}`"
        )
    return load_plan(path, "--diff")


def owned_manifests(out: Path) -> set[str]:
    """The manifest files the plan.json in `out` says its run wrote (none without a plan.json)."""
    plan_path = out / PLAN_FILE
    if file_kind(plan_path, "--out") is None:
        return set()
    document = load_plan(plan_path, "--out")
    listed = document.get(OWNED_KEY)
    if listed is None:  # written before plan.json listed its manifests: derive their names
        return {m.name for m in manifests([_legacy(r) for r in document["resources"]])}
    if not isinstance(listed, list):
        raise UserFileError(
            f"--out {shown_path(plan_path)}: its {OWNED_KEY!r} is not a list of file names"
        )
    return {name for name in listed if isinstance(name, str) and _MANIFEST_NAME.match(name)}


def _legacy(resource: dict[str, Any]) -> PlannedResource:
    return PlannedResource(
        str(resource["type"]), str(resource["name"]), None, 0, resource.get("inputs")
    )


def manifests(resources: list[PlannedResource]) -> list[Manifest]:
    """One YAML file per Kubernetes object, numbered in plan order."""
    objects = [
        r
        for r in resources
        if r.type.startswith("kubernetes:")
        and r.custom
        and isinstance(r.inputs, dict)
        and "apiVersion" in r.inputs
    ]
    return [
        Manifest(
            f"{index:02d}-{str(r.inputs.get('kind', 'object')).lower()}-{r.name}.yaml",
            manifest_yaml.dump(r.inputs),
        )
        for index, r in enumerate(objects, start=1)
    ]


def write_plan(
    out: Path,
    resources: list[PlannedResource],
    outputs: dict[str, Any],
    asset_json: Callable[[Any], Any],
    cost: dict[str, Any] | None = None,
    extra: dict[str, str] | None = None,
) -> None:
    """Write the manifests, `extra` (hp:observability's files, relative path -> text) and
    plan.json; remove only the files the last run wrote that this one does not. Nothing is
    written when a file not written by mlcc is in the way."""
    owned = owned_manifests(out)
    owned_extra = _owned_extra(out)
    extra = extra or {}
    files = manifests(resources)
    folder = out / MANIFESTS
    in_the_way = [
        folder / m.name
        for m in files
        if m.name not in owned and file_kind(folder / m.name, "--out")
    ] + [out / name for name in extra if name not in owned_extra and file_kind(out / name, "--out")]
    if in_the_way:
        raise UserFileError(
            f"--out {shown_path(in_the_way[0])}: not written by `mlcc plan` (not "
            f"listed in {shown_path(out / PLAN_FILE)}); move it away or choose another --out"
        )
    ensure_folder(folder, "--out")
    for manifest in files:
        write_file(folder / manifest.name, manifest.text, "--out")
    for name, text in sorted(extra.items()):
        ensure_folder((out / name).parent, "--out")
        write_file(out / name, text, "--out")
    plan = {
        "resources": [r.as_json() for r in resources],
        "outputs": outputs,
        OWNED_KEY: [m.name for m in files],
        **({COST_KEY: cost} if cost is not None else {}),
        **({OBSERVABILITY_KEY: sorted(extra)} if extra else {}),
    }
    text = json.dumps(plan, indent=2, ensure_ascii=False, default=asset_json) + "\n"
    write_file(out / PLAN_FILE, text, "--out")
    stale_files = [folder / name for name in sorted(owned - {m.name for m in files})]
    stale_files += [out / name for name in sorted(owned_extra - set(extra))]
    for stale in stale_files:
        if _is_plain_file(stale):  # what a user put there since (a folder, ...) stays
            remove_file(stale, "--out")


def _owned_extra(out: Path) -> set[str]:
    """hp:observability's files the plan.json in `out` says its run wrote (only the names this
    program writes: never a path a plan.json could point elsewhere)."""
    plan_path = out / PLAN_FILE
    if file_kind(plan_path, "--out") is None:
        return set()
    listed = load_plan(plan_path, "--out").get(OBSERVABILITY_KEY)
    known = {view.DASHBOARD_FILE, view.RULES_FILE}
    return {name for name in listed if name in known} if isinstance(listed, list) else set()


def _is_plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
