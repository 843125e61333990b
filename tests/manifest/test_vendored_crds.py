"""schemas/crds/: the files match SOURCE.md, and scripts/refresh_crds.py reproduces both.

The refresh script's HTTP is replaced by the vendored files themselves, served as the GitHub
API and raw.githubusercontent.com would serve them at the recorded commit; its --from-dir path
reads them from a folder laid out as upstream.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import refresh_crds
from crd_schema import CRD_DIR

SOURCE = (CRD_DIR / "SOURCE.md").read_text()
ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| `([0-9a-f]{64})` \|$", re.MULTILINE)
COMMIT = re.compile(r"^- Commit: `([0-9a-f]{40})` \(([^)]+)\)$", re.MULTILINE)
CHART = re.compile(r"^- Helm chart `(\S+)` (\S+), operator \(appVersion\) (\S+)$", re.MULTILINE)
FETCHED = re.compile(r"^- Fetched: (\d{4}-\d\d-\d\d)$", re.MULTILINE)
OBTAINED = re.compile(r"^- Obtained: (.+)\n", re.MULTILINE)


def recorded(pattern: re.Pattern[str]) -> tuple[str, ...]:
    match = pattern.search(SOURCE)
    assert match, f"SOURCE.md has no line matching {pattern.pattern}"
    return match.groups()


def upstream(files: dict[str, bytes]) -> dict[str, bytes]:
    """What GitHub serves at the recorded commit, keyed by URL."""
    sha, date = recorded(COMMIT)
    name, version, app_version = recorded(CHART)
    raw = f"https://raw.githubusercontent.com/{refresh_crds.REPOSITORY}/{sha}"
    crd_dir = f"{raw}/{refresh_crds.CHART_DIR}/config/crd"
    served = {
        f"{crd_dir}/{refresh_crds.CRD_FILES[vendored]}": content
        for vendored, content in files.items()
    }
    served[f"{raw}/{refresh_crds.CHART_DIR}/Chart.yaml"] = (
        f"name: {name}\nversion: {version}\nappVersion: '{app_version}'\n".encode()
    )
    commit = {"sha": sha, "commit": {"committer": {"date": date}}}
    served[f"https://api.github.com/repos/{refresh_crds.REPOSITORY}/commits/{sha[:7]}"] = (
        json.dumps(commit).encode()
    )
    return served


@pytest.fixture
def vendored_copy(tmp_path: Path) -> Path:
    shutil.copytree(CRD_DIR, tmp_path / "crds")
    return tmp_path / "crds"


def serve(monkeypatch: pytest.MonkeyPatch, files: dict[str, bytes]) -> None:
    monkeypatch.setattr(refresh_crds, "_get", upstream(files).__getitem__)


def recorded_sha256(name: str) -> str:
    return next(digest for vendored, _, digest in ROW.findall(SOURCE) if vendored == name)


def vendored_files() -> dict[str, bytes]:
    return {name: (CRD_DIR / name).read_bytes() for name in refresh_crds.CRD_FILES}


def test_every_vendored_file_is_recorded_with_its_sha256() -> None:
    rows = {name: (up, digest) for name, up, digest in ROW.findall(SOURCE)}
    assert sorted(rows) == sorted(p.name for p in CRD_DIR.glob("*.yaml"))
    assert sorted(rows) == sorted(refresh_crds.CRD_FILES)
    for name, (upstream_name, digest) in rows.items():
        assert upstream_name == refresh_crds.CRD_FILES[name]
        assert hashlib.sha256((CRD_DIR / name).read_bytes()).hexdigest() == digest, name


def test_refreshing_at_the_recorded_commit_reproduces_files_and_source(
    monkeypatch: pytest.MonkeyPatch, vendored_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    serve(monkeypatch, vendored_files())
    monkeypatch.setattr(refresh_crds, "DEST", vendored_copy)
    fetched = datetime.date.fromisoformat(recorded(FETCHED)[0])
    (sha, _date) = recorded(COMMIT)
    assert refresh_crds.main(["--ref", sha[:7]]) == 0
    for name, content in vendored_files().items():
        assert (vendored_copy / name).read_bytes() == content
    rewritten = (vendored_copy / "SOURCE.md").read_text()
    # A download records no "Obtained" line: it came the ordinary way.
    assert FETCHED.sub(f"- Fetched: {fetched.isoformat()}", rewritten) == OBTAINED.sub("", SOURCE)
    out = capsys.readouterr().out
    assert f"is {sha}" in out and "inferenceendpointconfigs.yaml: unchanged" in out


def upstream_folder(folder: Path, files: dict[str, bytes]) -> Path:
    """The files as they lie upstream: CRDs under their upstream names, beside Chart.yaml."""
    folder.mkdir()
    name, version, app_version = recorded(CHART)
    (folder / "Chart.yaml").write_text(
        f"name: {name}\nversion: {version}\nappVersion: '{app_version}'\n"
    )
    for vendored, content in files.items():
        (folder / refresh_crds.CRD_FILES[vendored]).write_bytes(content)
    return folder


def recorded_or(pattern: re.Pattern[str], default: str) -> str:
    match = pattern.search(SOURCE)
    return match.group(1) if match else default


def from_dir_arguments(folder: Path, dest: Path) -> list[str]:
    sha, date = recorded(COMMIT)
    obtained = recorded_or(OBTAINED, "a local copy")
    return [
        *("--from-dir", str(folder), "--dest", str(dest), "--commit", sha),
        *("--commit-date", date, "--obtained", obtained),
    ]


def test_refreshing_from_a_local_copy_reproduces_files_and_source(
    tmp_path: Path, vendored_copy: Path
) -> None:
    folder = upstream_folder(tmp_path / "upstream", vendored_files())
    assert refresh_crds.main(from_dir_arguments(folder, vendored_copy)) == 0
    for name, content in vendored_files().items():
        assert (vendored_copy / name).read_bytes() == content
    rewritten = FETCHED.sub(
        f"- Fetched: {recorded(FETCHED)[0]}", (vendored_copy / "SOURCE.md").read_text()
    )
    assert f"- Obtained: {recorded_or(OBTAINED, 'a local copy')}\n" in rewritten
    assert OBTAINED.sub("", rewritten) == OBTAINED.sub("", SOURCE)


def test_a_local_copy_without_its_commit_is_refused(
    tmp_path: Path, vendored_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = upstream_folder(tmp_path / "upstream", vendored_files())
    with pytest.raises(SystemExit) as exit_info:
        refresh_crds.main(["--from-dir", str(folder), "--dest", str(vendored_copy)])
    assert exit_info.value.code == 2
    assert "--from-dir needs --commit (40 hex digits) and --obtained" in capsys.readouterr().err


def test_check_reports_a_changed_file_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, vendored_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = vendored_files()
    files["jumpstartmodels.yaml"] += b"# upstream changed\n"
    serve(monkeypatch, files)
    (sha, _date) = recorded(COMMIT)
    before = {p.name: p.read_bytes() for p in vendored_copy.iterdir()}
    code = refresh_crds.main(["--ref", sha[:7], "--dest", str(vendored_copy), "--check"])
    assert code == 1
    assert {p.name: p.read_bytes() for p in vendored_copy.iterdir()} == before
    out = capsys.readouterr().out
    new = hashlib.sha256(files["jumpstartmodels.yaml"]).hexdigest()
    assert f"jumpstartmodels.yaml: {recorded_sha256('jumpstartmodels.yaml')} -> {new}" in out
    assert "1 file(s) differ" in out


def test_a_download_that_is_not_a_crd_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, vendored_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = vendored_files()
    files["jumpstartmodels.yaml"] = b"<html>rate limited</html>\n"
    serve(monkeypatch, files)
    (sha, _date) = recorded(COMMIT)
    code = refresh_crds.main(["--ref", sha[:7], "--dest", str(vendored_copy)])
    assert code == 1
    err = capsys.readouterr().err
    assert err == "refresh_crds: error: jumpstartmodels.yaml: not a CustomResourceDefinition\n"
    assert (vendored_copy / "jumpstartmodels.yaml").read_bytes() == (
        CRD_DIR / "jumpstartmodels.yaml"
    ).read_bytes()
