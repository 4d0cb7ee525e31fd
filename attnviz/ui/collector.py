"""Python's cyclic garbage collector runs on the GUI thread, between events, while the app is open.

Qt's wrappers (widgets, pyqtgraph's graphics items) often sit in reference cycles, so the cyclic
collector is what deletes their C++ objects. Left to itself it runs wherever allocations cross its
threshold: on a compute thread (deleting a Qt object from a thread that does not own it), or in
the middle of a paint on the GUI thread (deleting an item while its scene is being drawn). Either
can crash the process: a test worker died of a segfault with the collector running inside
pyqtgraph's ``AxisItem.boundingRect`` during a paint. pyqtgraph's own answer
(``pyqtgraph.util.garbage_collector.GarbageCollector``) is the one taken here: automatic
collection off, and a timer on the GUI thread collecting. Unlike pyqtgraph's, this one collects
the young generation at every tick (see ``collect_due``), is held by each open session and gives
automatic collection back when the last one ends (a notebook or a test process goes on).
"""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QTimer

__all__ = ["INTERVAL_MS", "hold", "holding", "release"]

#: How often the GUI thread collects: garbage cycles wait at most this long, and the young
#: generation stays small enough to be collected in well under a frame.
INTERVAL_MS = 200

_holders = 0
_timer: QTimer | None = None
_was_enabled = True


def hold() -> None:
    """Collect on the GUI thread from now on (call on the GUI thread, once per ``release``)."""
    global _holders, _timer, _was_enabled
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("the garbage collector is paced from the GUI thread")
    _holders += 1
    if _holders > 1:
        return
    _was_enabled = gc.isenabled()
    gc.disable()
    _timer = QTimer()
    _timer.setInterval(INTERVAL_MS)
    _timer.timeout.connect(collect_due)
    _timer.start()


def release() -> None:
    """The end of one ``hold``: after the last, the collector runs by itself again."""
    global _holders, _timer
    if _holders == 0:
        return
    _holders -= 1
    if _holders:
        return
    if _timer is not None:
        _timer.stop()
        _timer.deleteLater()
        _timer = None
    if _was_enabled:
        gc.enable()


def holding() -> bool:
    return _holders > 0


def collect_due() -> int:
    """Collect the young generation, and the older ones when their thresholds are passed, as the
    automatic collector counts them (a generation's count is the number of collections of the
    next younger one since its own last). Returns how many unreachable objects were found.

    The young generation is collected at every tick: the allocation count the automatic
    collector goes by is allocations minus deallocations at the moment of each allocation, and
    sampled between events it may read zero while garbage waits (a closed window's wrappers
    freed meanwhile bring it down). A young collection costs microseconds; an old one, over the
    objects made since the first result (the rest are frozen), about 7 ms with a model's views
    open, every ``INTERVAL_MS`` x 11 x 11 (about 24 s)."""
    thresholds = gc.get_threshold()
    counts = gc.get_count()
    generation = 0
    if counts[1] > thresholds[1]:
        generation = 2 if counts[2] > thresholds[2] else 1
    return gc.collect(generation)
