"""`mlcc`: offline plan, recommendation jobs and endpoint verification.

Each subcommand lives in its own module with `register(subparsers)`, which adds an argparse
sub-parser whose `run` default returns the exit code. Heavy imports stay inside `run`.
Exit codes: 0 success, 1 a finding or config error, 2 a usage error (argparse's own),
130 interrupted; a closed stdout (`| head`) ends quietly with 0.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Sequence

EXIT_INTERRUPTED = 130
SUBCOMMAND_MODULES = ("mlcc.cli.plan", "mlcc.cli.verify", "mlcc.cli.optimize", "mlcc.cli.bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlcc", description="Speculative-decoding endpoints on SageMaker HyperPod"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in SUBCOMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
    once its output is flushed."""
    code = main()
    abandoned = [t for t in threading.enumerate() if t.daemon and t.is_alive()]
    if not abandoned:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
