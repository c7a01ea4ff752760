"""Writing our files so that nobody else can redirect them or read them first.

Anyone who can write to a folder we write in can plant a symbolic link, or a file of their own, at a name
we would use: a predictable temporary name (``NAME.PID.tmp``) or the file itself. So every file is written
whole under a random name, created with ``O_EXCL | O_NOFOLLOW`` (never an existing file, never through a
link) at its final mode (0600 unless said) before its first byte, then renamed over the target (a rename
replaces a link planted at the target; it never writes through it). Appends (the journal's lines) open
the file itself with ``O_NOFOLLOW``, and create it under ``O_EXCL`` at 0600 when it does not exist yet.

The agent (``host/agent.py``) travels to the host alone and cannot import this: it keeps a small copy of
the same idea (``write_json_file``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path
from typing import BinaryIO

PRIVATE = 0o600
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_ATTEMPTS = 16  # random names that all exist already: someone is planting them, say so


def _refused(path: Path, exc: OSError) -> OSError:
    """ELOOP from O_NOFOLLOW says only "too many links": say what it means."""
    if exc.errno == errno.ELOOP:
        return OSError(errno.ELOOP, "is a symbolic link: not written through it", str(path))
    return exc


def write(path: Path, data: bytes, *, mode: int = PRIVATE) -> None:
    """Replace ``path`` with ``data``, whole: a reader sees the old file or the new one, never half, and
    nobody but the modes allow reads it at any moment. The folder is created when missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = _create_partial(path, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())  # the rename must not land before the bytes (a crash leaves old or new)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def write_text(path: Path, text: str, *, mode: int = PRIVATE) -> None:
    write(path, text.encode("utf-8"), mode=mode)


def _create_partial(path: Path, mode: int) -> tuple[int, Path]:
    for _ in range(_ATTEMPTS):
        partial = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(partial, _CREATE, mode)
        except FileExistsError:
            continue
        os.fchmod(fd, mode)  # exactly the intended mode (the umask may have narrowed it), before any byte
        return fd, partial
    raise FileExistsError(errno.EEXIST, f"{_ATTEMPTS} random temporary names all exist", str(path.parent))


def open_append(path: Path, *, mode: int = PRIVATE, readable: bool = False) -> BinaryIO:
    """``path`` opened to append (and read, when ``readable``), never through a symbolic link; created
    at ``mode`` when missing, by this call alone (O_EXCL), so no one else's file is ever taken for ours."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = (os.O_RDWR if readable else os.O_WRONLY) | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(_ATTEMPTS):
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            try:
                fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, mode)
            except FileExistsError:
                continue  # created meanwhile (another console): open it as it is
            except OSError as exc:
                raise _refused(path, exc) from None
        except OSError as exc:
            raise _refused(path, exc) from None
        return os.fdopen(fd, "a+b" if readable else "ab")
    raise FileExistsError(errno.EEXIST, "appeared and vanished repeatedly", str(path))
