"""One conclusion of `mlcc verify` or the deploy wait: a named PASS, FAIL or SKIP with its
detail (mlcc/deploy/verify.py, mlcc/deploy/engine_log.py, mlcc/cli/verify/)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mlcc.engine_contract.values import printable


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str
    skipped: bool = False  # not checked, and rightly so (a replaced pod): passes

    @property
    def line(self) -> str:
        said = "SKIP" if self.skipped else "PASS" if self.passed else "FAIL"
        return printable(f"{said} {self.name}: {self.detail}")  # a pod's values are anything


def all_passed(checks: Iterable[Check]) -> bool:
    return all(check.passed for check in checks)
