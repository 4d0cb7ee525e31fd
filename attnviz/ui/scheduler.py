"""The compute thread: latest request wins.

At most one computation runs (a torch op cannot be interrupted) and at most one waits: a newer
snapshot replaces the waiting one. So a burst of edits costs one computation in flight plus
one pending, and the last edit is always the one that ends up computed. ``hold(ms)`` keeps
what is submitted waiting for a moment: a burst of undos and redos (a held Ctrl+Z) then costs
one computation, of where the burst ended, instead of one for its first step too. Results are delivered on
the GUI thread through a queued signal; whether a result is stale is for the receiver to judge
against the document's version.

Threads come from superqt's ``create_worker`` (a QRunnable on a private QThreadPool of one
thread), so nothing here touches a widget.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Generic, TypeVar

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal
from superqt.utils import create_worker

from attnviz.compute.attention import run_snapshot
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

_threads_configured = False
T = TypeVar("T")
#: What a scheduler's function takes (In) and gives (Out).
In = TypeVar("In")
Out = TypeVar("Out")


def _leave_a_core_for_the_gui() -> None:
    """Give torch one thread fewer than there are cores, and no huge pages, once per process.

    With as many torch threads as cores, the compute threads (spin-waiting between parallel
    regions) and the GUI thread fight over the CPU: on a 2-core machine the GUI then stalls for
    tens of milliseconds while a big input computes. One core for the event loop keeps it fluid.
    """
    global _threads_configured
    if _threads_configured:
        return
    _threads_configured = True
    try:
        import torch

        from attnviz.engine.memory import use_huge_pages
    except Exception:  # noqa: BLE001 - a broken install: the computation itself reports it
        return
    cores = os.cpu_count() or 1
    if cores > 1 and torch.get_num_threads() >= cores:
        torch.set_num_threads(cores - 1)
    # Huge pages help a process that only computes, not this one: see use_huge_pages.
    use_huge_pages(False)


#: The memory budget of one computation on the window's threads, in bytes. The window keeps
#: what a computation returns several times over (the stages as arrays, the maps painted of
#: them, a picture per view): a (4096, 4096) head, whose stages are 308 MiB, took the window to
#: +3.0 GB. Under this budget the stages of a head up to about 1448 x 1448 (67 MiB) and the
#: heads grid of 8 heads of 1024 x 1024 (80 MiB) are computed; a longer call is refused with its
#: size, and the long-context view, which streams it in display bins, opens instead.
APP_MEMORY_BUDGET = 96 * 2**20
_app_budget: float = APP_MEMORY_BUDGET


def set_app_memory_budget(nbytes: float | None) -> None:
    """The budget of the window's computations (None: back to ``APP_MEMORY_BUDGET``): raised by a
    benchmark that measures drawing a head longer than the default allows."""
    global _app_budget
    _app_budget = APP_MEMORY_BUDGET if nbytes is None else nbytes


def in_app(compute: Callable[[In], T]) -> Callable[[In], T]:
    """``compute`` as the app's threads run it: the process configured for a GUI first (whichever
    of the main computation or a lab happens to run first), under the window's memory budget."""

    @functools.wraps(compute)
    def run(item: In) -> T:
        _leave_a_core_for_the_gui()
        from attnviz.engine.budget import memory_budget_scope

        with memory_budget_scope(_app_budget):
            return compute(item)

    run.in_app = True  # type: ignore[attr-defined]  # what the tests look for on every thread's function
    return run


#: What the app's compute thread runs: ``run_snapshot`` with a core left for the GUI.
run_in_app = in_app(run_snapshot)


class ComputeScheduler(QObject, Generic[In, Out]):
    """Runs ``compute(item)`` off the GUI thread, latest item wins."""

    #: The result (an Out), delivered on the thread this object lives in (the GUI thread).
    finished = Signal(object)
    #: (item, message): ``compute`` raised instead of returning (a bug: errors are data).
    failed = Signal(object, object)
    #: True while a computation runs or waits.
    busyChanged = Signal(bool)

    def __init__(self, compute: Callable[[In], Out], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._compute = compute
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._running = False
        self._pending: In | None = None
        self._closed = False
        self._worker: object | None = None
        self._hold = QTimer(self)
        self._hold.setSingleShot(True)
        self._hold.timeout.connect(self._release)
        #: How many computations were started (for tests and the benchmark).
        self.started_count = 0

    @property
    def busy(self) -> bool:
        return self._running or self._pending is not None

    @property
    def running(self) -> bool:
        """Whether a computation runs now (it cannot be stopped; what waits can be replaced)."""
        return self._running

    @property
    def pending(self) -> In | None:
        """What waits to be computed next (None: nothing)."""
        return self._pending

    def submit(self, item: In) -> None:
        if self._closed:
            return
        was_busy = self.busy
        self._pending = item  # replaces a waiting one: it is stale already
        if not self._running and not self._hold.isActive():
            self._start_next()
        if not was_busy:
            self.busyChanged.emit(True)

    def hold(self, ms: int) -> None:
        """Start nothing new for ``ms`` milliseconds from now (each call restarts the wait); what
        is submitted meanwhile waits, the latest winning as always, and starts when it ends."""
        if not self._closed:
            self._hold.start(ms)

    def _release(self) -> None:
        if not self._running and not self._closed:
            self._start_next()

    def _start_next(self) -> None:
        item, self._pending = self._pending, None
        if item is None:
            return
        self._running = True
        self.started_count += 1
        worker = create_worker(self._compute, item, _start_thread=False, _ignore_errors=True)
        worker.returned.connect(self._on_returned)
        worker.errored.connect(functools.partial(self._on_errored, item))
        worker.finished.connect(self._on_finished)
        self._worker = worker  # keep the Python object alive while it runs
        self._pool.start(worker)

    def _on_returned(self, result: Out) -> None:
        if not self._closed:
            self.finished.emit(result)

    def _on_errored(self, item: In, exc: BaseException) -> None:
        if not self._closed:
            error = message(
                QT_TRANSLATE_NOOP("Errors", "unexpected error: {error}"), error=f"{type(exc).__name__}: {exc}"
            )
            self.failed.emit(item, error)

    def _on_finished(self, *_: object) -> None:
        self._running = False
        self._worker = None
        if self._closed:
            return
        if self._pending is None:
            self.busyChanged.emit(False)
        elif not self._hold.isActive():
            self._start_next()

    def shutdown(self, timeout_ms: int = 30000) -> bool:
        """Drop what waits, let what runs finish, and wait for the thread to end."""
        self._closed = True
        self._pending = None
        self._hold.stop()
        done = self._pool.waitForDone(timeout_ms)
        if done:
            # The thread has ended; its queued "finished" will not be delivered to a closed
            # scheduler, so say now that nothing runs.
            self._running = False
        return done
