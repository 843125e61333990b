"""A Pulumi project folder for the end-to-end stories, driven by the real CLI.

Each story gets its own folder (Pulumi.yaml, the stack file the CLI writes), its own local
backend (`file://`) and a passphrase secrets provider; the CLI's home (its installed provider
plugin) is shared by the session. Nothing is downloaded: the Kubernetes provider is installed
from the binary scripts/build_e2e.sh built, under its version, with `pulumi plugin install
--file`, and automatic plugin acquisition is off.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("MLCC_E2E_CACHE") or Path.home() / ".cache" / "mlcc-e2e")
BIN = CACHE / "bin"
RUNNER = Path(__file__).with_name("pulumi_run.py")
PASSPHRASE = "e2e-stories-passphrase"
PROVIDER = "pulumi-resource-kubernetes"


def provider_version() -> str:
    """The version the binary was built at: the pinned pulumi-kubernetes SDK's."""
    return (BIN / f"{PROVIDER}.version").read_text().strip().removeprefix("v")


def install_provider(home: Path) -> None:
    """`pulumi plugin install resource kubernetes <version> --file <binary>`, once per home."""
    env = {**os.environ, "PULUMI_HOME": str(home), "PULUMI_SKIP_UPDATE_CHECK": "true"}
    command = [str(BIN / "pulumi"), "plugin", "install", "resource", "kubernetes"]
    command += [provider_version(), "--file", str(BIN / PROVIDER)]
    subprocess.run(command, env=env, check=True, capture_output=True, text=True, timeout=300)


def _stack_file(name: str) -> bool:
    return name.startswith("Pulumi.") and name not in {"Pulumi.yaml", "Pulumi.yml"}


@dataclass
class Result:
    command: list[str]
    code: int
    output: str  # stdout and stderr, interleaved as printed
    seconds: float

    def __str__(self) -> str:
        head = f"$ {' '.join(self.command)} -> exit {self.code} in {self.seconds:.0f} s"
        return f"{head}\n{self.output}"

    def check(self) -> Result:
        assert self.code == 0, str(self)
        return self


@dataclass
class PulumiProject:
    folder: Path
    home: Path  # PULUMI_HOME, with the provider installed
    stack: str = "e2e"
    extra_env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, folder: Path, home: Path, stack: str = "e2e") -> PulumiProject:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "state").mkdir(exist_ok=True)
        # A checkout as a user has it (the program, Pulumi.yaml), without its stacks and builds.
        for entry in REPO.iterdir():
            if entry.name not in {"build", ".venv", ".git"} and not _stack_file(entry.name):
                (folder / entry.name).symlink_to(entry)
        project = cls(folder, home, stack)
        project.cli("stack", "init", stack, "--secrets-provider", "passphrase").check()
        return project

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PULUMI_HOME": str(self.home),
            "PULUMI_BACKEND_URL": (self.folder / "state").as_uri(),
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_BIN": str(BIN / "pulumi"),
            "NO_COLOR": "1",
            **self.extra_env,
        }

    def cli(self, *args: str, timeout: float = 120) -> Result:
        """The real CLI alone: config, stack, export. Commands that run the program use `run`."""
        return self._call([str(BIN / "pulumi"), *args], timeout)

    def run(self, *args: str, timeout: float = 600) -> Result:
        """`pulumi <args>` on the program (preview, up, refresh, destroy), by pulumi_run.py."""
        return self._call([sys.executable, str(RUNNER), *args, "--stack", self.stack], timeout)

    def _call(self, command: list[str], timeout: float) -> Result:
        started = time.monotonic()
        done = subprocess.run(
            command,
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
        shown = [Path(command[0]).name, *command[1:]]
        return Result(shown, done.returncode, done.stdout, time.monotonic() - started)

    def config_set(self, key: str, value: str, *flags: str) -> None:
        self.cli("config", "set", *flags, key, value, "--stack", self.stack).check()
