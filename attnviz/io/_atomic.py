"""Crash-safe file replacement, and the clean-up of saves that were killed midway.

Writers produce the whole file under a temporary name in the destination's directory (same file
system, so the final rename is atomic), fsync it, then ``os.replace`` it over the destination.
Readers therefore see either the old file or the complete new one, never a half-written mix;
on any error the temporary file is removed and the old file is untouched.

A save killed outright (SIGKILL, a power cut) cannot remove its temporary file, so each save
first removes the temporaries that earlier interrupted saves left in its folder. Which those are
is told by the writer, not by age (a slow save to a network drive can take minutes, and a
leftover would otherwise take up space until some deadline):

* a temporary file is named ``.<target>.attnviz-<pid>-<random>.tmp``, after the process writing it;
* the writer holds an exclusive ``flock`` on it while it writes;
* it is removed only when that process is not alive on this machine *and* nobody holds the lock.
  The pid answers quickly for this machine's processes (also in the instant between creating the
  file and locking it); the lock answers for writers whose pid means nothing here (another PID
  namespace: a container, a Flatpak sandbox; another NFS client where locks are shared). A pid
  reused by an unrelated process only keeps a leftover until that process ends.

Windows has neither ``flock`` nor a harmless ``kill(pid, 0)``; there, removal is simply attempted,
and a file another process still has open cannot be deleted.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from .paths import check_output

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

TEMP_SUFFIX = ".tmp"
_TAG = "attnviz"
# Long enough to recognise the target by, short enough that the temporary name stays under the
# usual 255-byte limit whatever the target's name (48 characters are at most 192 bytes of UTF-8).
_NAME_CHARS = 48
_TEMP_NAME = re.compile(rf"\..*\.{_TAG}-(\d{{1,10}})-[0-9a-f]{{12}}{re.escape(TEMP_SUFFIX)}", re.DOTALL)


def temp_prefix(path: Path) -> str:
    """Prefix of the temporary files made for ``path`` (hidden, so file dialogs skip them)."""
    return f".{path.name[:_NAME_CHARS]}."


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    *,
    private: bool = False,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
) -> Iterator[BinaryIO]:
    """Yield a binary file; on normal exit it atomically becomes ``path``.

    ``path`` is refused first (``paths.OutputRefused``, an ``OSError`` saying why in one line)
    when it names one of ``inputs`` or exists as anything but a regular file (a FIFO, a device).

    A new file gets the usual permissions (0o666 minus the umask), or 0o600 when ``private``;
    a replaced file keeps the permissions it had, as editors do. Temporary files that killed
    saves left in the folder are removed first.
    """
    target = Path(path)
    check_output(target, inputs)
    directory = target.parent
    remove_leftovers(directory)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    # Letting os.open apply the umask avoids the racy os.umask() read-and-restore dance.
    create_mode = 0o600 if private else 0o666
    while True:
        temp = directory / f"{temp_prefix(target)}{_TAG}-{os.getpid()}-{secrets.token_hex(6)}{TEMP_SUFFIX}"
        try:
            fd = os.open(temp, flags, create_mode)
            break
        except FileExistsError:  # pragma: no cover - 48 random bits colliding
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            _lock(fd)
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


def remove_leftovers(directory: Path, *, unnamed_prefix: str | None = None) -> None:
    """Remove the temporary files of interrupted saves in ``directory`` (see the module's doc).

    Temporaries that name no writer (written before the pid was part of the name) are left
    alone, except those starting with ``unnamed_prefix``: a caller that knows nobody writes its
    file any more (``AutosaveSlot.discard``) passes that file's ``temp_prefix``.
    """
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if match is not None:
            pid = int(match.group(1))
            if pid == os.getpid() or _alive(pid):
                continue
        elif unnamed_prefix is None or not (entry.name.startswith(unnamed_prefix) and entry.name.endswith(TEMP_SUFFIX)):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                _remove_unless_locked(entry.path)


def _lock(fd: int) -> None:
    if fcntl is not None:
        # A file system without locks (some network mounts) still has the pid in the name.
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _alive(pid: int) -> bool:
    if os.name == "nt":
        return False  # os.kill would terminate it; an open file cannot be deleted there anyway
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: no process can have that pid
        return False
    except OSError:
        return True  # it exists, as another user's process
    return True


def _remove_unless_locked(path: str) -> None:
    if fcntl is None:
        os.unlink(path)
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a live writer elsewhere holds it
        os.unlink(path)
    finally:
        os.close(fd)


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
