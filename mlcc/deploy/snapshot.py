"""What one round of the deploy wait read from the cluster, and how its text is shown.

`Target` is the endpoint waited for, `Snapshot` what the API returned for it (JSON-shaped
dicts, logs as text), `Sign` one reason the deploy will not succeed. Pure (docs/deploy.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mlcc.deploy.expectation import Expectation
from mlcc.facts.operator import KIND

MAX_LINE = 300
# CUDA out-of-memory.
_EXPLAINING = re.compile(
    r"mlcc-serve: error:|\b[A-Za-z_.]*(?:Error|Exception)\b|out of memory", re.IGNORECASE
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A pydantic ValidationError (vLLM's configs are pydantic dataclasses): the header, then for each
# error its field (none for a model-level error) and, indented by two, the reason.
_VALIDATION = re.compile(r"\b(?P<count>\d+) validation errors? for \w+")
_PROCESS_PREFIX = re.compile(r"^\([^()]*pid=\d+\) ?")  # vLLM's `(EngineCore_DP0 pid=7) `
# metav1.Time and MicroTime as the API writes them: RFC 3339, seconds or microseconds, a zone.
_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<time>\d{2}:\d{2}:\d{2})(?:\.(?P<fraction>\d{1,9}))?"
    r"(?P<zone>[Zz]|[+-]\d{2}:\d{2})"
)
# How far past the reader's clock a time may be and still be believed (clocks differ).
FUTURE_SKEW_S = 3600.0


def dotted(found: object, path: str) -> object:
    """The value at a dotted `path` (`deploymentStatus.name`) of a JSON-shaped object, None
    when any part is absent or not a map."""
    for part in path.split("."):
        found = found.get(part) if isinstance(found, Mapping) else None
    return found


def moment(value: object, now: float | None = None) -> float | None:
    """Seconds since the epoch of a time the API wrote, or None when it is none: not text, not
    RFC 3339 (a time without a zone is ambiguous), no date, or more than FUTURE_SKEW_S past
    `now` (the reader's wall clock, when given)."""
    found = _RFC3339.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return None
    zone = "+00:00" if found["zone"] in ("Z", "z") else found["zone"]
    fraction = f".{found['fraction'][:6]}" if found["fraction"] else ""
    try:
        seconds = datetime.fromisoformat(
            f"{found['date']}T{found['time']}{fraction}{zone}"
        ).timestamp()
    except (ValueError, OverflowError):  # 2026-13-45, year 0, ...
        return None
    return None if now is not None and seconds > now + FUTURE_SKEW_S else seconds


def in_time_order(times: Sequence[float | None]) -> list[int]:
    """The indexes of `times` in order: those unknown first (in their order), then the known
    ones oldest to newest; the last is the newest known, never one of unknown time."""
    return sorted(range(len(times)), key=lambda i: (times[i] is not None, times[i] or 0.0, i))


def mapping(value: object) -> Mapping[str, Any]:
    """`value` when it is a map, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def items_of(value: object) -> list[Mapping[str, Any]]:
    """The maps of a JSON list (anything else: none)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


@dataclass(frozen=True)
class Target:
    """One endpoint to wait for: where it is, what it must run, the generation just applied."""

    namespace: str
    name: str
    expectation: Expectation
    generation: int | None = None  # None: the generation the cluster holds now

    @property
    def where(self) -> str:
        return f"{KIND} {self.namespace}/{self.name}"


@dataclass(frozen=True)
class LogRequest:
    pod: str
    container: str
    previous: bool  # the log of the container's last (crashed) run


@dataclass(frozen=True)
class Snapshot:
    """What the cluster returned for one endpoint in one round."""

    endpoint: Mapping[str, Any] | None
    pods: Sequence[Mapping[str, Any]] = ()
    events: Sequence[Mapping[str, Any]] = ()
    logs: Mapping[LogRequest, str] = field(default_factory=dict)
    # Why a log that is no reason to wait could not be read (the copy's: draft_head.py).
    log_errors: Mapping[LogRequest, str] = field(default_factory=dict)
    # Fields of the wrong type (left out of the maps above, mlcc/deploy/shapes.py), and what
    # was not read (pods past the cap, logs past a round's budget): shown, never concluded from.
    malformed: Sequence[str] = ()
    unread: Sequence[str] = ()
    events_unread: Sequence[str] = ()  # only the last event shown depends on them
    read_at: float | None = None  # the reader's wall clock (epoch seconds): later times are none


@dataclass(frozen=True)
class Sign:
    """A sign that the deploy will not succeed; `key` identifies it across rounds."""

    key: str
    message: str
    immediate: bool = False
    grace_s: float | None = None  # how long it may last, when not the wait's usual grace


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """Text for an error line: control characters escaped, cut when long."""
    flat = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.strip())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def explaining_lines(log: str, most: int = 2) -> list[str]:
    """The last log lines that say why the engine stopped (else the last lines at all); a
    validation error's header carries its fields and reasons."""
    lines = [line for line in log.splitlines() if line.strip()]
    details = {
        i: _validation_details(lines, i) for i, x in enumerate(lines) if _VALIDATION.search(x)
    }
    absorbed = {i + 1 + k for i, (_, used) in details.items() for k in range(used)}
    kept = [i for i in range(len(lines)) if i not in absorbed]
    refusals = [i for i in kept if "mlcc-serve: error:" in lines[i]]
    chosen = refusals or [i for i in kept if _EXPLAINING.search(lines[i])] or kept
    # A header with its details may take two lines' room: the field and reason are the cause.
    return [
        one_line(lines[i] + details[i][0], 2 * MAX_LINE) if i in details else one_line(lines[i])
        for i in chosen[-most:]
    ]


def _validation_details(lines: Sequence[str], header: int) -> tuple[str, int]:
    """`: field: reason; ...` of the pydantic errors after `lines[header]`, and how many lines
    they took (the `For further information` links included)."""
    found = _VALIDATION.search(lines[header])
    wanted = int(found["count"]) if found else 0
    errors: list[str] = []
    field, used = "", 0
    for line in lines[header + 1 :]:
        text = _PROCESS_PREFIX.sub("", line)
        if text.startswith("    ") and "For further information" in text:
            pass
        elif text.startswith("  ") and not text.startswith("   "):
            errors.append(f"{field}: {text.strip()}" if field else text.strip())
            field = ""
        elif not field and len(errors) < wanted and text.strip() and " " not in text.strip():
            field = text.strip()
        else:
            break
        used += 1
    if field:  # a field name with no reason after it: not part of the error
        used -= 1
    return (f": {'; '.join(errors)}" if errors else ""), used
