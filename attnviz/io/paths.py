"""What a path *is*, decided before anything opens it: a network or device path, and whether a
file may be written there.

* ``network_path``: a path that would make the program contact another machine (a UNC share) or
  open a device, by the rules of the platform that reads it. A session travels between
  platforms, so Windows' spellings are refused everywhere (on POSIX they are odd relative names
  that no capture file has); POSIX adds ``//host``: exactly two leading slashes are
  implementation-defined there (Cygwin and some others reach a server), three or more are ``/``.
* ``OutputRefused`` / ``check_output``: an output that names one of the command's inputs (the
  same file, however spelled: a link, ``..``), or an existing file that is not a regular one (a
  FIFO, which would block the writer forever; a device; a folder). Checked with ``os.stat``,
  which opens nothing, so a FIFO never blocks the check itself. ``_atomic.atomic_write`` runs it
  for every writer.
"""

from __future__ import annotations

import errno
import ntpath
import os
import stat
from collections.abc import Iterable

from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, message

__all__ = ["OutputRefused", "check_output", "network_path"]

_SEPARATORS = "\\/"


def network_path(path: str, *, windows: bool | None = None) -> bool:
    """Whether ``path`` names a network share or a device (see the module's note). ``windows``:
    judge by Windows' rules (None: this platform's)."""
    windows = os.name == "nt" if windows is None else windows
    head = path[:4]
    # \??\UNC\host\share and \??\C:\ are NT object paths: Win32 passes them through untouched.
    if len(head) == 4 and head[0] in _SEPARATORS and head[1:3] == "??" and head[3] in _SEPARATORS:
        if windows or head[0] == "\\" or "\\" in path[4:]:
            return True
    drive, _rest = ntpath.splitdrive(path)
    two_separators = len(drive) >= 2 and drive[0] in _SEPARATORS and drive[1] in _SEPARATORS
    if two_separators:
        # ntpath reads \\host\share, //host/share, /\host\share, \/host/share, \\?\UNC\..., \\.\dev
        # (and ///host, where Windows still finds a server) as a share or a device.
        if windows or "\\" in path[:2]:
            return True
    if windows:
        return False
    # POSIX: exactly two leading slashes; ///host/share is the local folder /host/share.
    return path.startswith("//") and not path.startswith("///")


class OutputRefused(OSError):
    """An output path that must not be written: its ``strerror`` says why (one translatable line)."""

    def __init__(self, path: str | os.PathLike[str], why: Message) -> None:
        super().__init__(errno.EINVAL, why, os.fspath(path))


def check_output(path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str] | None] = ()) -> None:
    """Raise :class:`OutputRefused` when ``path`` may not be written: it is one of ``inputs`` (the
    same file, by device and inode, or the same resolved path), or exists as anything but a
    regular file (a link to a regular file is written through, as editors do)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:  # a loop of links, a component that is not a folder, a name too long
        raise OutputRefused(
            path,
            message(QT_TRANSLATE_NOOP("FileErrors", "the path cannot be used ({error})"), error=exc.strerror or exc),
        ) from exc
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OutputRefused(
            path,
            message(
                QT_TRANSLATE_NOOP("FileErrors", "it is {kind}, not a regular file: nothing was written"),
                kind=_kind(info.st_mode),
            ),
        )
    for source in inputs:
        if source is not None and _same_file(path, source, info):
            raise OutputRefused(
                path,
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "it is {input}, an input of this command: nothing was written"),
                    input=os.fspath(source),
                ),
            )


def _same_file(path: str | os.PathLike[str], source: str | os.PathLike[str], info: os.stat_result | None) -> bool:
    if info is not None:
        try:
            other = os.stat(source)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == (other.st_dev, other.st_ino)
    try:
        return os.path.realpath(path) == os.path.realpath(source)
    except (OSError, ValueError):
        return False


def _kind(mode: int) -> Message:
    if stat.S_ISFIFO(mode):
        return message(QT_TRANSLATE_NOOP("FileErrors", "a FIFO (a named pipe)"))
    if stat.S_ISDIR(mode):
        return message(QT_TRANSLATE_NOOP("FileErrors", "a folder"))
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return message(QT_TRANSLATE_NOOP("FileErrors", "a device"))
    if stat.S_ISSOCK(mode):
        return message(QT_TRANSLATE_NOOP("FileErrors", "a socket"))
    return message(QT_TRANSLATE_NOOP("FileErrors", "a special file"))
