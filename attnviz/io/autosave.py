"""One crash-recovery autosave per window, and the autosaves of windows that are gone.

Every window keeps its own autosave, ``autosave-<tag>.attnviz`` in the state directory
(``session.state_dir``), and holds an exclusive lock on ``autosave-<tag>.lock`` for as long as
it lives (``_lock.FileLock``: the operating system drops it when the process ends, however it
ends). So at start-up:

* an autosave whose lock is free belongs to a window that is gone: ``stale_autosaves`` hands it
  over, locked now by the caller, so two windows starting at once never offer the same one;
* an autosave whose lock is held belongs to a live window: it is never offered, read, changed
  or deleted by anyone else;
* a window that closes normally deletes its own autosave and lock file (``AutosaveSlot.discard``).

The tag is the writer's pid (for people looking at the folder) and random digits (pids are
reused). An autosave written by a version of attnviz from before this scheme
(``autosave.attnviz``, no lock file) has no live owner that could lock it: it is offered too.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import threading
from pathlib import Path

from attnviz.io._atomic import remove_leftovers, temp_prefix
from attnviz.io._limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_ELEMENTS
from attnviz.io._lock import FileLock
from attnviz.io.errors import SessionFileError
from attnviz.io.session import (
    SESSION_SUFFIX,
    Session,
    load_session,
    save_session,
    state_dir,
)
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["AutosaveSlot", "claim_autosave", "stale_autosaves"]

_PREFIX = "autosave"
LOCK_SUFFIX = ".lock"
_NAME = re.compile(rf"{_PREFIX}(-[0-9a-f]{{1,16}}-[0-9a-f]{{8}})?(\.attnviz|{re.escape(LOCK_SUFFIX)})")

# Locks this process holds: never probed by this process (a network file system may emulate
# flock with POSIX locks, which one process never conflicts with).
_held: set[str] = set()
_held_guard = threading.Lock()


class AutosaveSlot:
    """One window's autosave: ``path``, and the lock that says its window lives.

    Made by ``claim_autosave`` (a new, empty slot for a starting window) or ``stale_autosaves``
    (a gone window's, now held by the caller, who restores it and keeps it as its own, or
    ``discard``s it, or ``release``s it for a later start to offer again).
    """

    def __init__(self, directory: Path, stem: str, lock: FileLock) -> None:
        self.path = directory / (stem + SESSION_SUFFIX)
        self._lock = lock
        with _held_guard:
            _held.add(stem)
        self._stem = stem

    @property
    def held(self) -> bool:
        """Whether this process still holds the slot (not yet discarded or released)."""
        return self._lock.held

    def modified(self) -> float | None:
        """When the autosave was last written (seconds since the epoch), None if it never was."""
        try:
            return self.path.stat().st_mtime
        except OSError:
            return None

    def write(self, session: Session) -> Path:
        """Save ``session`` as this slot's autosave (private to the user, atomic)."""
        if not self.held:
            raise SessionFileError(self.path, QT_TRANSLATE_NOOP("FileErrors", "is no longer this window's autosave"))
        # Autosaves may hold a user's private tensors: readable by the owner only.
        save_session(self.path, session, private=True)
        return self.path

    def read(self, *, max_elements: int = DEFAULT_MAX_ELEMENTS, max_bytes: int = DEFAULT_MAX_BYTES) -> Session | None:
        """The autosaved session, None when nothing was written yet.

        A damaged autosave raises ``SessionFileError`` (the caller tells the user, then may
        ``discard`` it) rather than being dropped in silence.
        """
        if not self.path.exists():
            return None
        return load_session(self.path, max_elements=max_elements, max_bytes=max_bytes)

    def discard(self) -> None:
        """Delete the autosave, the temporaries of its interrupted writes and the lock file;
        the slot is then gone (idempotent)."""
        if not self.held:
            return
        with contextlib.suppress(OSError):  # a clean exit must not fail on a file it cannot remove
            self.path.unlink()
        # The writer of this slot is this process (done writing) or a dead one: its unnamed
        # temporaries are leftovers too.
        remove_leftovers(self.path.parent, unnamed_prefix=temp_prefix(self.path))
        self._lock.remove()
        self._forget()

    def release(self) -> None:
        """Let go of the slot, leaving its files: a later start offers it again (idempotent)."""
        self._lock.release()
        self._forget()

    def _forget(self) -> None:
        with _held_guard:
            _held.discard(self._stem)


def claim_autosave(directory: Path | None = None) -> AutosaveSlot:
    """A new autosave slot for a starting window, locked for as long as the window lives.

    ``directory``: the state directory by default (created, private to the user, if needed).
    Raises ``SessionFileError`` when it cannot be created or the lock file cannot be made.
    """
    folder = _folder(directory)
    for _attempt in range(8):
        stem = f"{_PREFIX}-{os.getpid():x}-{secrets.token_hex(4)}"
        lock = FileLock.take(folder / (stem + LOCK_SUFFIX), create=True)
        if lock is not None:
            return AutosaveSlot(folder, stem, lock)
    raise SessionFileError(folder, QT_TRANSLATE_NOOP("FileErrors", "cannot hold a lock on an autosave file here"))


def stale_autosaves(directory: Path | None = None) -> list[AutosaveSlot]:
    """The autosaves of windows that are gone, newest first, each now held by the caller.

    Every slot returned must be kept (restored), ``discard``ed or ``release``d. A gone window
    that never autosaved leaves only its lock file: that is removed here. Autosaves of live
    windows, in this process or another, are not touched.
    """
    folder = state_dir() if directory is None else Path(directory)
    try:
        names = [entry.name for entry in os.scandir(folder)]
    except OSError:
        return []
    stems = {name.rsplit(".", 1)[0] for name in names if _NAME.fullmatch(name)}
    found: list[AutosaveSlot] = []
    for stem in sorted(stems):
        with _held_guard:
            if stem in _held:
                continue
        # Created when missing: an autosave whose lock file is gone has no owner to hold it.
        lock = FileLock.take(folder / (stem + LOCK_SUFFIX), create=True)
        if lock is None:
            continue  # its window is alive
        slot = AutosaveSlot(folder, stem, lock)
        if slot.modified() is None:
            slot.discard()  # the window went before its first autosave
        else:
            found.append(slot)
    found.sort(key=lambda slot: slot.modified() or 0.0, reverse=True)
    return found


def _folder(directory: Path | None) -> Path:
    folder = state_dir() if directory is None else Path(directory)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise SessionFileError(
            folder,
            message(
                QT_TRANSLATE_NOOP("FileErrors", "cannot create {folder} ({error})"),
                folder=str(folder),
                error=exc.strerror or str(exc),
            ),
        ) from exc
    return folder
