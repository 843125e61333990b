"""Refresh the vendored HyperPod inference-operator CRDs in schemas/crds/ (needs network).

    python scripts/refresh_crds.py                 # the newest commit on main
    python scripts/refresh_crds.py --ref a00b22d   # a branch, tag or commit
    python scripts/refresh_crds.py --check         # only report what would change
    python scripts/refresh_crds.py --from-dir DIR --commit SHA --obtained "how"   # no network

Resolves --ref to a commit with the GitHub API, downloads each CRD at that commit, checks that it
is a CustomResourceDefinition with a v1 openAPIV3Schema, writes it, and rewrites SOURCE.md
(repository, commit, date, chart version, sha256 of each file). The tests read only these files.

--from-dir takes the upstream files (the CRDs under their upstream names, and Chart.yaml) from a
folder instead, for a commit whose files were obtained some other way (a mirror, a code index);
--obtained says how, and SOURCE.md records it. The same checks and the same record apply.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPOSITORY = "aws/sagemaker-hyperpod-cli"
CHART_DIR = "helm_chart/HyperPodHelmChart/charts/inference-operator"
CRD_GROUP = "inference.sagemaker.aws.amazon.com"
# vendored name -> upstream file in CHART_DIR/config/crd/
CRD_FILES = {
    "inferenceendpointconfigs.yaml": f"{CRD_GROUP}_inferenceendpointconfigs.yaml",
    "jumpstartmodels.yaml": f"{CRD_GROUP}_jumpstartmodels.yaml",
    "sagemakerendpointregistrations.yaml": f"{CRD_GROUP}_sagemakerendpointregistrations.yaml",
    "modelimagecaches.yaml": f"{CRD_GROUP}_modelimagecaches.yaml",
    "modelweightscacheconfigs.yaml": f"{CRD_GROUP}_modelweightscacheconfigs.yaml",
}
DEST = Path(__file__).resolve().parent.parent / "schemas" / "crds"
TIMEOUT_SECONDS = 60
# libyaml when installed: the pure-Python loader takes most of a second per CRD.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str


@dataclass(frozen=True)
class Chart:
    name: str
    version: str
    app_version: str


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "mlcc-refresh-crds"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
        body: bytes = response.read()
    return body


def resolve(ref: str) -> Commit:
    data: dict[str, Any] = json.loads(
        _get(f"https://api.github.com/repos/{REPOSITORY}/commits/{ref}")
    )
    return Commit(sha=data["sha"], date=data["commit"]["committer"]["date"])


def raw_file(commit: Commit, path: str) -> bytes:
    return _get(f"https://raw.githubusercontent.com/{REPOSITORY}/{commit.sha}/{path}")


def chart(commit: Commit) -> Chart:
    return parse_chart(raw_file(commit, f"{CHART_DIR}/Chart.yaml"))


def parse_chart(content: bytes) -> Chart:
    values = yaml.safe_load(content)
    return Chart(
        name=str(values["name"]),
        version=str(values["version"]),
        app_version=str(values["appVersion"]),
    )


def check_crd(name: str, content: bytes) -> None:
    """Refuse anything that is not a CRD the tests can validate against."""
    crd = yaml.load(content, Loader=YAML_LOADER)
    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
        raise ValueError(f"{name}: not a CustomResourceDefinition")
    versions = {v.get("name"): v for v in crd["spec"]["versions"]}
    if "openAPIV3Schema" not in versions.get("v1", {}).get("schema", {}):
        raise ValueError(f"{name}: has no v1 openAPIV3Schema")


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def source_record(
    commit: Commit,
    chart_info: Chart,
    files: dict[str, bytes],
    fetched: datetime.date,
    obtained: str | None = None,
) -> str:
    rows = "\n".join(
        f"| `{name}` | `{CRD_FILES[name]}` | `{sha256(content)}` |"
        for name, content in sorted(files.items())
    )
    versions = f"{chart_info.version}, operator (appVersion) {chart_info.app_version}"
    how = f"- Obtained: {obtained}\n" if obtained else ""
    return f"""# Source of the vendored CRDs

Written by `scripts/refresh_crds.py`; do not edit by hand.

- Repository: https://github.com/{REPOSITORY}
- Folder: `{CHART_DIR}/config/crd/`
- Commit: `{commit.sha}` ({commit.date})
- Helm chart `{chart_info.name}` {versions}
{how}- Fetched: {fetched.isoformat()}

| File | Upstream file | sha256 |
| --- | --- | --- |
{rows}
"""


@dataclass(frozen=True)
class Upstream:
    commit: Commit
    chart: Chart
    files: dict[str, bytes]
    obtained: str | None = None


def download(ref: str) -> Upstream:
    commit = resolve(ref)
    chart_info = chart(commit)
    print(f"{REPOSITORY}@{ref} is {commit.sha} ({commit.date}), chart {chart_info.version}")
    files = {
        name: raw_file(commit, f"{CHART_DIR}/config/crd/{upstream}")
        for name, upstream in CRD_FILES.items()
    }
    return Upstream(commit, chart_info, files)


def local_copy(folder: Path, commit: Commit, obtained: str) -> Upstream:
    """The upstream files of one commit, already on disk under their upstream names."""
    chart_info = parse_chart((folder / "Chart.yaml").read_bytes())
    print(f"{REPOSITORY}@{commit.sha} from {folder}, chart {chart_info.version}")
    files = {name: (folder / upstream).read_bytes() for name, upstream in CRD_FILES.items()}
    return Upstream(commit, chart_info, files, obtained)


def refresh(upstream: Upstream, dest: Path, *, check_only: bool) -> int:
    """Check every file, then write them all; returns how many files changed."""
    files = upstream.files
    for name, content in files.items():
        check_crd(name, content)
    changed = 0
    for name, content in files.items():
        path = dest / name
        old, new = (sha256(path.read_bytes()) if path.is_file() else "absent"), sha256(content)
        changed += old != new
        print(f"{name}: {'unchanged' if old == new else f'{old} -> {new}'}")
        if not check_only:
            path.write_bytes(content)
    if not check_only:
        today = datetime.datetime.now(datetime.UTC).date()
        record = source_record(upstream.commit, upstream.chart, files, today, upstream.obtained)
        (dest / "SOURCE.md").write_text(record)
        print(f"wrote {len(files)} files and SOURCE.md to {dest}")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="branch, tag or commit (default: main)")
    parser.add_argument("--dest", type=Path, default=DEST, help="folder of the vendored CRDs")
    parser.add_argument("--check", action="store_true", help="report changes, write nothing")
    parser.add_argument("--from-dir", type=Path, help="upstream files already on disk")
    parser.add_argument("--commit", help="with --from-dir: the full commit the files are from")
    parser.add_argument("--commit-date", default="date not recorded", help="with --from-dir")
    parser.add_argument("--obtained", help="with --from-dir: how the files were obtained")
    args = parser.parse_args(argv)
    if args.from_dir and not (args.commit and len(args.commit) == 40 and args.obtained):
        parser.error("--from-dir needs --commit (40 hex digits) and --obtained")
    try:
        upstream = (
            local_copy(args.from_dir, Commit(args.commit, args.commit_date), args.obtained)
            if args.from_dir
            else download(args.ref)
        )
        changed = refresh(upstream, args.dest, check_only=args.check)
    except (OSError, ValueError, KeyError) as error:
        print(f"refresh_crds: error: {error}", file=sys.stderr)
        return 1
    if args.check and changed:
        print(f"{changed} file(s) differ from {REPOSITORY}@{args.commit or args.ref}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
