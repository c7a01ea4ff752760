"""Reading our files back, when each may be damaged or hostile.

A file we wrote may since have been cut by a crash, edited by hand, written by another version, or
replaced by someone who can write to its folder. Reading it must never block, fill the memory or end in a
traceback: ``read_regular`` opens without waiting (O_NONBLOCK: opening a FIFO to read waits for a writer)
and reads only a regular file of a bounded size, checked on the open file itself (fstat), so nothing can
be swapped in between a look and the read; ``loads_json`` turns every way JSON text can be bad (invalid
UTF-8, a cut line, nesting deep enough to exhaust the stack, an integer of 5000 digits) into one
``BadRecord`` that says why. What the value then holds is checked by its reader, field by field.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

MAX_BYTES = 16 << 20  # a file of ours (facts, a pick, a history) larger than this is not one


class BadRecord(ValueError):
    """A record that is not what we wrote; the message says why, in a few words."""


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened to read, when it is a regular file; OSError (its ``strerror`` said in words) when
    it is missing or a directory, FIFO, device or socket. Never waits: O_NONBLOCK at the open, the check
    on the open file (fstat)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a directory, not a file", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, device or socket)", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path`` (as ``open_regular``), or OSError when it holds more than ``limit``."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"over {limit // 1024} KiB: not a file of ours", str(path))
    return data


def loads_json(data: bytes | str) -> Any:
    """``data`` parsed as JSON, or BadRecord saying why not."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRecord("not UTF-8") from None
    try:
        return json.loads(data)
    except RecursionError:
        raise BadRecord("nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and an integer over Python's 4300 digits
        what = "not JSON (cut by a crash?)" if isinstance(exc, json.JSONDecodeError) else "a number too long"
        raise BadRecord(what) from None
