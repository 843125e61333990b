"""One safe writer for the files mlcc writes where a user points it, and its output folders.

`write_text` writes a temporary file beside the target and renames it over the target in one
step: an interrupted run leaves the old file or the new one, never half of one. A target that is
anything but a regular file (a FIFO, a folder, a device) is refused, not replaced; a symbolic
link is replaced, or, for a user's own file, followed (the file it points to is rewritten and
the link stays); a file the user may not write (read-only) is refused, as an open for writing
would be, though a rename could replace it; a rewritten file keeps its permission bits. Every
failure is one UserFileError line naming the path.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from contextlib import suppress
from pathlib import Path

from .paths import FILE as _FILE
from .paths import FOLDER as _FOLDER
from .paths import UserFileError, file_kind, os_reason, refusal

_temporary_names = itertools.count()


def ensure_folder(path: Path, label: str = "") -> None:
    """`path` as a folder (created with its parents if missing), or UserFileError."""
    kind = file_kind(path, label)
    if kind == _FOLDER:
        return
    if kind is not None:
        raise refusal(label, path, f"is {kind}, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise refusal(label, path, "is a file, not a folder") from None
    except OSError as error:
        raise refusal(label, path, f"cannot create the folder: {os_reason(error)}") from None


def check_writable_folder(path: Path, label: str = "") -> None:
    """`path` as a folder mlcc can write files in (tried with a file created and removed at
    once, so that read-only mounts and permissions count, for root too), or UserFileError."""
    ensure_folder(path, label)
    probe = _temporary_beside(path / "probe")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        os.unlink(probe)
    except OSError as error:
        raise refusal(label, path, f"cannot write in this folder: {os_reason(error)}") from None


def write_text(path: Path, text: str, label: str = "", *, follow_link: bool = False) -> None:
    """Write `text` (UTF-8, newlines as given) to `path` in one step, or UserFileError.

    A symbolic link at `path` is replaced by the file, unless `follow_link` (a user's own file,
    such as the stack file `mlcc optimize --apply` edits): then the file it points to is."""
    target = Path(os.path.realpath(path)) if follow_link and os.path.islink(path) else path
    kind = file_kind(target, label)
    if kind not in (None, _FILE):
        raise refusal(label, path, f"is {kind}, not a file; move it away or choose another path")
    if kind == _FILE and not os.access(target, os.W_OK):  # a rename would bypass the mode
        raise refusal(label, path, "cannot write it: permission denied (the file is read-only)")
    mode = stat.S_IMODE(os.stat(target).st_mode) if kind == _FILE else None
    temporary = _temporary_beside(target)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as file:
            if mode is not None:
                os.fchmod(descriptor, mode)
            file.write(text)
        os.replace(temporary, target)
    except OSError as error:
        with suppress(OSError):
            os.unlink(temporary)
        raise refusal(label, path, f"cannot write it: {os_reason(error)}") from None
    except UnicodeEncodeError:  # lone surrogates, e.g. from a file name that was not UTF-8
        with suppress(OSError):
            os.unlink(temporary)
        raise refusal(label, path, "cannot write it: the text is not valid Unicode") from None


def remove_file(path: Path, label: str = "") -> None:
    """Remove the file at `path` (nothing there is fine), or UserFileError."""
    try:
        os.unlink(path)
    except OSError as error:
        if error.errno != errno.ENOENT:
            raise refusal(label, path, f"cannot remove it: {os_reason(error)}") from None


def _temporary_beside(path: Path) -> Path:
    """A short hidden name in the folder of `path` (short, so a long target name still fits)."""
    return path.parent / f".mlcc-{os.getpid()}-{next(_temporary_names)}.tmp"


__all__ = ["UserFileError", "check_writable_folder", "ensure_folder", "remove_file", "write_text"]
