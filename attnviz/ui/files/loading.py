"""Reading and parsing files off the GUI thread, the latest request winning.

Opening a file is disk I/O and parsing (a session of 64 x 4096 x 4096 valid lengths, a big
``.safetensors``): on the GUI thread the window froze for as long. ``FileLoader.start(job)``
runs ``job`` on a thread of its own, the same way the compute threads do (superqt's
``create_worker`` on a private ``QThreadPool``), and delivers its result on the GUI thread.

There is no stopping a read already inside numpy or the OS: ``cancel`` (and a newer ``start``,
which supersedes) marks the running job's result as unwanted, and it is dropped when it arrives.
A second thread lets a new request start while a superseded read is still finishing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool, Signal, SignalInstance
from superqt.utils import create_worker

__all__ = ["FileLoader"]


class FileLoader(QObject):
    """Runs one file-reading job at a time off the GUI thread; only the latest one's result counts."""

    #: (ticket, result) of the current job, on the GUI thread.
    loaded = Signal(int, object)
    #: (ticket, exception) of the current job, on the GUI thread.
    failed = Signal(int, object)
    #: True while the current job runs (a cancelled one still finishing does not count).
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)
        self._current = 0  # ticket of the job whose result is wanted; 0: none
        self._issued = 0
        self._workers: dict[int, object] = {}  # kept alive while they run
        self._closed = False

    @property
    def busy(self) -> bool:
        return self._current != 0

    def start(self, job: Callable[[], object]) -> int:
        """Run ``job`` off the GUI thread, superseding any job still running; returns its ticket."""
        if self._closed:
            return 0
        was_busy = self.busy
        self._issued += 1
        ticket = self._current = self._issued
        worker = create_worker(job, _start_thread=False, _ignore_errors=True)
        worker.returned.connect(functools.partial(self._deliver, ticket, self.loaded))
        worker.errored.connect(functools.partial(self._deliver, ticket, self.failed))
        worker.finished.connect(functools.partial(self._workers.pop, ticket, None))
        self._workers[ticket] = worker
        self._pool.start(worker)
        if not was_busy:
            self.busyChanged.emit(True)
        return ticket

    def cancel(self) -> None:
        """Drop the running job's result (the read itself finishes on its thread)."""
        if self.busy:
            self._current = 0
            self.busyChanged.emit(False)

    def _deliver(self, ticket: int, signal: SignalInstance, value: object) -> None:
        if self._closed or ticket != self._current:
            return  # cancelled or superseded
        self._current = 0
        self.busyChanged.emit(False)
        signal.emit(ticket, value)

    def shutdown(self, timeout_ms: int = 30000) -> bool:
        """Drop every result and wait for the threads to end (idempotent)."""
        self._closed = True
        self._current = 0
        return self._pool.waitForDone(timeout_ms)
