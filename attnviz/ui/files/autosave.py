"""Autosave written off the GUI thread, latest session wins.

Writing the autosave is file I/O with an ``fsync`` (the file is replaced atomically): for a
(1, 4096, 4096) session that kept the GUI thread busy for 15-30 ms, and the benchmark's
heartbeat caught it as the window's longest stall while the engine computed. The GUI thread
now only copies the state into a ``Session`` (arrays copied: later edits cannot leak in) and
hands it to one writer thread. A session handed over while another is being written replaces
any that waits, so a burst of changes costs one write in flight plus one pending. Failures come
back on the GUI thread through ``failed``.

Each writer has an autosave of its own (``attnviz.io.autosave``: one per window, locked while the
window lives), claimed at the first write; ``adopt`` makes a gone window's restored autosave
this one's, and ``close(discard=True)`` removes it at a clean exit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QObject, Signal

from attnviz.io import AutosaveSlot, Session, claim_autosave

__all__ = ["AutosaveWriter"]


class AutosaveWriter(QObject):
    """Writes sessions to the autosave file on a private thread, the latest one winning."""

    #: The exception a write raised (an ``AttnvizFileError`` for a file problem), on the GUI thread.
    failed = Signal(object)

    def __init__(self, parent: QObject | None = None, *, claim: Callable[[], AutosaveSlot] = claim_autosave) -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnviz-autosave")
        self._claim = claim
        #: This writer's autosave (None until the first write). Changed only while no write runs.
        self.slot: AutosaveSlot | None = None
        self._lock = threading.Lock()
        self._pending: Session | None = None
        self._writing = False
        self._closed = False
        #: Sessions written, and the last write's error (None: it succeeded). For tests.
        self.written = 0
        self.last_error: BaseException | None = None

    def submit(self, session: Session) -> None:
        """Write ``session`` soon; replaces one that waits to be written."""
        with self._lock:
            if self._closed:
                return
            self._pending = session
            if self._writing:
                return  # the running drain picks it up
            self._writing = True
        self._executor.submit(self._drain)

    def flush(self) -> bool:
        """Wait until everything handed over is written; True if the last write succeeded."""
        with self._lock:
            if self._closed:
                return self.last_error is None
        done: Future[None] = self._executor.submit(lambda: None)  # runs after the drain: one thread
        done.result()
        return self.last_error is None

    def adopt(self, slot: AutosaveSlot) -> None:
        """Write into ``slot`` from now on (a restored autosave of a gone window), giving up the
        one this writer had: the restored work stays on disk, now under this window's lock."""
        self.flush()  # no write may be running into the slot being given up
        old, self.slot = self.slot, slot
        if old is not None and old is not slot:
            old.discard()

    def close(self, *, discard: bool = False) -> None:
        """Drop what waits, let a write in progress finish, stop the thread (idempotent).
        ``discard``: then remove this writer's autosave too (a clean exit: nothing to recover)."""
        with self._lock:
            self._closed = True
            self._pending = None
        self._executor.shutdown(wait=True)
        if discard and self.slot is not None:
            self.slot.discard()

    def _drain(self) -> None:
        while True:
            with self._lock:
                session, self._pending = self._pending, None
                if session is None:
                    self._writing = False
                    return
            try:
                if self.slot is None:
                    self.slot = self._claim()
                self.slot.write(session)
            except Exception as exc:  # noqa: BLE001 - reported, never lost with the thread
                self.last_error = exc
                self.failed.emit(exc)
            else:
                self.last_error = None
                self.written += 1
