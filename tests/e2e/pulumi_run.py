"""Runs one real `pulumi` command on the project's program: `python pulumi_run.py up --yes ...`.

The Pulumi CLI and engine are the real ones (scripts/build_e2e.sh), and so are the provider and
the API server. Only the Python language host is not: its Go module
(github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3) is not served by the Go module
proxy this project builds from, at any version. So the program runs in Pulumi's own Python
language runtime, the one the Automation API uses for inline programs (`pulumi.automation`'s
`LanguageServer`, from the pinned pulumi SDK): this script starts it on 127.0.0.1, hosting
`__main__.py` as the language host would (run as `__main__`, from the project folder), and
runs the CLI command with `--client=<that address>`, as `pulumi.automation` does. The CLI's
output and exit code are passed through unchanged.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from concurrent import futures
from pathlib import Path

import grpc
from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import language_pb2_grpc

REPO = Path(__file__).resolve().parents[2]
# The CLI's own limits for the messages it exchanges with a language runtime (pulumi.automation).
GRPC_OPTIONS = [("grpc.max_receive_message_length", 400 * 1024 * 1024)]


def program() -> None:
    """The project's program, as the language host runs it: `__main__.py` of the folder."""
    runpy.run_path(str(Path.cwd() / "__main__.py"), run_name="__main__")


def main(args: list[str]) -> int:
    pulumi = os.environ["PULUMI_BIN"]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=GRPC_OPTIONS)
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(LanguageServer(program), server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        return subprocess.call([pulumi, *args, f"--client=127.0.0.1:{port}"])
    finally:
        server.stop(0)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main(sys.argv[1:]))
