"""Crash-safe file replacement.

Writers produce the whole file under a temporary name in the destination's directory (same file
system, so the final rename is atomic), fsync it, then ``os.replace`` it over the destination.
Readers therefore see either the old file or the complete new one, never a half-written mix;
on any error the temporary file is removed and the old file is untouched.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

TEMP_SUFFIX = ".tmp"


def temp_prefix(path: Path) -> str:
    """Prefix of the temporary files made for ``path`` (hidden, so file dialogs skip them)."""
    return f".{path.name}."


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, private: bool = False) -> Iterator[BinaryIO]:
    """Yield a binary file; on normal exit it atomically becomes ``path``.

    A new file gets the usual permissions (0o666 minus the umask), or 0o600 when ``private``;
    a replaced file keeps the permissions it had, as editors do.
    """
    target = Path(path)
    directory = target.parent
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    # Letting os.open apply the umask avoids the racy os.umask() read-and-restore dance.
    create_mode = 0o600 if private else 0o666
    while True:
        temp = directory / f"{temp_prefix(target)}{secrets.token_hex(6)}{TEMP_SUFFIX}"
        try:
            fd = os.open(temp, flags, create_mode)
            break
        except FileExistsError:  # pragma: no cover - 48 random bits colliding
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):
            old_mode = stat.S_IMODE(os.stat(target).st_mode)
            os.chmod(temp, old_mode)
        os.replace(temp, target)
    except BaseException:
        # BaseException too: a Ctrl-C mid-write must not leave stray temporaries behind.
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable on POSIX; Windows cannot open directories, and the data is
    # already safe there, so failures are ignored.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
