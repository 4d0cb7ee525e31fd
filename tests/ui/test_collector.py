"""Cycles of Qt wrappers are collected on the GUI thread, between events, while a session is open.

The automatic collector ran wherever allocations crossed its threshold: on a compute thread
(deleting Qt objects from a thread that does not own them) or inside a paint (a test worker
died of a segfault with the collector running in ``AxisItem.boundingRect``).
"""

from __future__ import annotations

import gc
import threading

from attnviz.ui import collector


class _Cycle:
    """A piece of garbage only the cyclic collector can free; says on which thread it was."""

    freed_on: list[int] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.freed_on.append(threading.get_ident())


def test_a_session_collects_on_the_gui_thread_and_gives_the_collector_back(host, qtbot):
    assert collector.holding() and not gc.isenabled()
    _Cycle.freed_on.clear()
    _Cycle()  # dropped at once: a cycle

    def allocate() -> None:
        # Enough new container objects to run the automatic collector many times over.
        kept = [[i] for i in range(200_000)]
        del kept

    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join()
    assert _Cycle.freed_on == []  # not collected on the worker thread
    qtbot.waitUntil(lambda: bool(_Cycle.freed_on), timeout=5 * collector.INTERVAL_MS)
    assert _Cycle.freed_on == [threading.main_thread().ident]
    host.close()
    assert not collector.holding() and gc.isenabled()


def test_two_sessions_hold_it_until_the_last_one_ends(qtbot):
    from attnviz.ui.app.session import AppSession

    was = gc.isenabled()
    first, second = AppSession(), AppSession()
    first.shutdown()
    assert collector.holding() and not gc.isenabled()
    second.shutdown()
    second.shutdown()  # idempotent: released once
    assert not collector.holding() and gc.isenabled() == was


def test_the_young_generation_every_tick_the_older_ones_past_their_thresholds(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: calls.append(generation) or 0)
    monkeypatch.setattr(gc, "get_threshold", lambda: (700, 10, 10))
    for counts, expected in [
        ((0, 0, 0), [0]),  # allocations minus deallocations may read 0 while garbage waits
        ((701, 3, 0), [0]),
        ((5, 11, 3), [1]),
        ((5, 11, 11), [2]),
        ((5, 3, 11), [0]),  # the oldest only after the middle one, as the automatic collector
    ]:
        calls.clear()
        monkeypatch.setattr(gc, "get_count", lambda counts=counts: counts)
        collector.collect_due()
        assert calls == expected, counts
