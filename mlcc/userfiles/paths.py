"""How a user's path appears in an error line, and why the operating system refused it, in words."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from mlcc.engine_contract.values import printable

# A path longer than this is shown by its start and its end.
MAX_SHOWN_PATH = 160
_HEAD, _TAIL = 80, 60

# errno -> what to tell the user (the rest: the system's own words).
_REASONS = {
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.ENOENT: "no such file or folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ELOOP: "too many levels of symbolic links",
    errno.EISDIR: "is a folder, not a file",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.ENXIO: "no such device (a FIFO without a reader?)",
}


FOLDER, FILE = "a folder", "a file"  # what file_kind says of the two kinds mlcc expects


class UserFileError(Exception):
    """A user's file or folder that cannot be read or written; the message is one line that
    names it and says why."""


def shown_path(path: Path | str) -> str:
    """The path for an error line: control characters escaped, a very long one cut."""
    text = printable(os.fspath(path))
    if len(text) <= MAX_SHOWN_PATH:
        return text
    return f"{text[:_HEAD]}...{text[-_TAIL:]} ({len(text)} characters)"


def os_reason(error: OSError) -> str:
    """Why an operation failed, in words, without the path the error carries."""
    if error.errno in _REASONS:
        return _REASONS[error.errno]
    return printable(error.strerror or type(error).__name__).lower()


def refusal(label: str, path: Path | str, reason: str) -> UserFileError:
    """`label path: reason` (label is the flag or what the file is, e.g. `--diff`, `kubeconfig`)."""
    where = f"{label} {shown_path(path)}" if label else shown_path(path)
    return UserFileError(f"{where}: {reason}")


def mode_kind(mode: int) -> str:
    """What a file of `mode` is, for `is <kind>, not a file` lines."""
    if stat.S_ISDIR(mode):
        return FOLDER
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return FILE if stat.S_ISREG(mode) else "not a regular file"


def file_kind(path: Path, label: str = "") -> str | None:
    """What is at `path` (following links): FOLDER, FILE, `a FIFO (named pipe)`, ...; None when
    nothing is there. A name the file system refuses is UserFileError (`label path: why`)."""
    try:
        return mode_kind(os.stat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ENOTDIR:
            return None
        raise refusal(label, path, os_reason(error)) from None
