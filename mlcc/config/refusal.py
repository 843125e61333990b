"""How the program refuses a stack, before anything is created.

Each problem is its own `error: hp:<key>: ...` line of Pulumi's output, the same line `mlcc plan`
prints; one `RunError` then ends the run, counting them. Under `mlcc plan`'s mocks the lines
reach the plan through the mock engine's log (mlcc/cli/plan/command.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

REFUSED = "invalid stack configuration"


def refuse(problems: Sequence[object]) -> NoReturn:
    import pulumi

    lines = [str(problem) for problem in problems]
    for line in lines:
        pulumi.log.error(line)
    count = f"{len(lines)} error{'' if len(lines) == 1 else 's'}"
    raise pulumi.RunError(f"{REFUSED}: {count} above; nothing was created")
