"""`mlcc`: offline plan, recommendation jobs and endpoint verification.

Each subcommand lives in its own package (`mlcc/cli/<command>/`) whose module with
`register(subparsers)` adds an argparse sub-parser whose `run` default returns the exit code.
Heavy imports stay inside `run`.
Exit codes: 0 success, 1 a finding or config error, 2 a usage error (argparse's own),
130 interrupted; a closed stdout (`| head`) ends quietly with 0.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
import threading
from collections.abc import Callable, Sequence

EXIT_INTERRUPTED = 130
SUBCOMMAND_MODULES = {
    "plan": "mlcc.cli.plan.command",
    "verify": "mlcc.cli.verify.command",
    "optimize": "mlcc.cli.optimize.command",
    "bench": "mlcc.cli.bench.sweep",  # mlcc.cli.bench.command's parser, with the sweep's flags
    "draft": "mlcc.cli.draft.command",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or only of `command` when it names one: a plan then
    does not import verify's, optimize's and bench's modules (`mlcc --help` lists them all)."""
    parser = argparse.ArgumentParser(
        prog="mlcc", description="Speculative-decoding endpoints on SageMaker HyperPod"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = [command] if command in SUBCOMMAND_MODULES else list(SUBCOMMAND_MODULES)
    for name in chosen:
        importlib.import_module(SUBCOMMAND_MODULES[name]).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(arguments[0] if arguments else None).parse_args(arguments)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except BrokenPipeError:  # `mlcc ... | head`: the reader left; end quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def entry() -> None:
    """The `mlcc` command: `main`, then exit. A request given up on at its deadline may still
    be stuck in a daemon thread inside a C extension (ssl, a socket read); the interpreter's
    shutdown would then abort ("Fatal Python error: Aborted"), so the process ends at once
    once its output is flushed.

    Before the exit everything still alive is frozen: the interpreter's shutdown runs the cyclic
    collector over the whole heap, which after importing the Pulumi SDKs was about 0.5 s of
    every command. Nothing the commands leave needs a collector pass to be released (files are
    closed, and what atexit does still runs); the operating system takes back the memory."""
    code = main()
    gc.freeze()
    abandoned = [t for t in threading.enumerate() if t.daemon and t.is_alive()]
    if not abandoned:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
