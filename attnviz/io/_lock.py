"""An exclusive lock on a file that the operating system drops when its holder dies.

``flock`` on POSIX, ``msvcrt.locking`` on Windows: either way the lock belongs to an open file and
goes when the process does, however it ends (``kill -9``, a crash, a power cut). That is what
tells a window that is still running from one that is gone, without any timeout or pid guessing.

Both locks conflict between two opens of the same file even inside one process, so two windows of
one process hold separate locks, and a probe from the same process sees a held lock as held.

A lock file can be removed by whoever holds its lock. Someone who opened the file just before
the removal may then lock the removed file; ``FileLock.take`` checks after locking that the path
still names the file it locked, so such a lock is never taken for the real one.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:  # POSIX
    msvcrt = None  # type: ignore[assignment]

__all__ = ["FileLock"]


class FileLock:
    """A held lock on ``path`` (made by ``take``); ``release`` or ``remove`` ends it."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def take(cls, path: Path, *, create: bool) -> FileLock | None:
        """Lock ``path`` without waiting (creating it, private to the user, when ``create``).

        None when another open file holds the lock, when the file does not exist (and ``create`` is
        False) or was removed meanwhile, or on a system with no file locks at all (there nobody can
        tell a live holder from a dead one, so nothing is ever taken for dead).
        """
        flags = os.O_RDWR | (os.O_CREAT if create else 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except OSError:
            return None
        if not _lock(fd) or not _still_named(path, fd):
            os.close(fd)
            return None
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let go of the lock and leave the file (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            _unlock(fd)
            os.close(fd)

    def remove(self) -> None:
        """Delete the lock file and let go of the lock (idempotent)."""
        if self._fd is None:
            return
        if os.name == "nt":
            self.release()  # Windows deletes no open file
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            return
        # Unlinked while still locked: nobody can lock this file in between and take it for free.
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self.release()


def _lock(fd: int) -> bool:
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True
    if msvcrt is not None:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # one byte at offset 0; past the end is allowed
        except OSError:
            return False
        return True
    return False


def _unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        elif msvcrt is not None:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def _still_named(path: Path, fd: int) -> bool:
    try:
        named, opened = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)
