"""Files and folders a user names (on the command line, or a project's stack files), read and
written so that no path and no content ends in a traceback or a hang.

- `reading`: `read_text`, `read_json`, `read_json_lines` (one safe reader): a name the file
  system refuses (too long, a part that is a file, a loop of links), no permission, anything
  but a regular file (a FIFO is opened without blocking and refused before a byte is read, a
  folder, a device), a file larger than the caller's limit, text that is not UTF-8, JSON nested
  too deep or with numbers of thousands of digits: each one `UserFileError` line naming the file.
- `writing`: `write_text` (one safe writer: a temporary file beside the target, renamed over it
  in one step, so an interrupted write never leaves half a file; a target that is a FIFO or a
  folder is refused, never replaced) and `ensure_folder` / `check_writable_folder` for an output
  folder, checked before the work that fills it.
- `paths`: how a path is shown in those lines (control characters escaped, a long name cut) and
  why the operating system refused it, in words.
- `process`: a command a configuration names (a kubeconfig's exec plugin, an AWS profile's
  `credential_process`) run with a deadline and bounded output, its process group stopped.
- `numbers`: the numbers a user types on the command line (`--timeout 5`), one bounded rule for
  every flag, the refusal echoing at most 40 characters of the text.
"""

from __future__ import annotations

from .paths import FILE, FOLDER, UserFileError, file_kind, shown_path
from .reading import MAX_JSON_DEPTH, MAX_READ_BYTES, read_json, read_json_lines, read_text
from .writing import check_writable_folder, ensure_folder, remove_file, write_text

__all__ = [
    "FILE",
    "FOLDER",
    "MAX_JSON_DEPTH",
    "MAX_READ_BYTES",
    "UserFileError",
    "check_writable_folder",
    "ensure_folder",
    "file_kind",
    "read_json",
    "read_json_lines",
    "read_text",
    "remove_file",
    "shown_path",
    "write_text",
]
