"""The autosave writer: off the GUI thread, latest session wins, failures reported, clean stop."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from attnviz.io import Session, SessionFileError
from attnviz.ui.files.autosave import AutosaveWriter


def _session(value: float) -> Session:
    return Session(arrays={"queries": np.full((1, 1, 1), value)}, settings={})


class FakeSlot:
    """An autosave slot whose writes go to ``write`` (the real ones: tests/io/test_io_autosave.py)."""

    def __init__(self, write) -> None:
        self.write = write
        self.discarded = False

    def discard(self) -> None:
        self.discarded = True


def writer_with(write) -> AutosaveWriter:
    return AutosaveWriter(claim=lambda: FakeSlot(write))  # type: ignore[arg-type, return-value]


def test_a_burst_writes_the_first_and_the_last_session_only(qtbot, monkeypatch):
    written: list[tuple[float, bool]] = []
    release = threading.Event()

    def slow_write(session: Session) -> None:
        release.wait(5)
        written.append(
            (float(session.arrays["queries"][0, 0, 0]), threading.current_thread() is threading.main_thread())
        )

    writer = writer_with(slow_write)
    for i in range(10):
        writer.submit(_session(i))
        time.sleep(0.002)  # the first write has started and waits
    release.set()
    assert writer.flush()
    assert [v for v, _ in written] == [0.0, 9.0]  # one in flight, then only the latest
    assert not any(on_gui for _, on_gui in written)
    writer.close()


def test_a_failed_write_is_reported_on_the_gui_thread(qtbot, monkeypatch):
    def failing(session: Session) -> None:
        raise SessionFileError("/nowhere/autosave.attnviz", "cannot be written (disk full)")

    writer = writer_with(failing)
    seen: list[tuple[str, bool]] = []
    writer.failed.connect(lambda exc: seen.append((str(exc), threading.current_thread() is threading.main_thread())))
    writer.submit(_session(1.0))
    assert not writer.flush()
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    assert seen == [("autosave.attnviz: cannot be written (disk full)", True)]
    writer.close()


def test_close_waits_for_the_write_in_progress_and_drops_the_rest(qtbot, monkeypatch):
    written: list[float] = []
    started = threading.Event()

    def slow_write(session: Session) -> None:
        started.set()
        time.sleep(0.1)
        written.append(float(session.arrays["queries"][0, 0, 0]))

    writer = writer_with(slow_write)
    writer.submit(_session(1.0))
    assert started.wait(5)
    writer.submit(_session(2.0))  # waits behind the first: dropped by close
    writer.close(discard=True)
    assert written == [1.0]  # finished before close returned, and nothing after it
    assert writer.slot is not None and writer.slot.discarded  # a clean exit removes the autosave
    writer.submit(_session(3.0))
    time.sleep(0.05)
    assert written == [1.0]
    with pytest.raises(RuntimeError):
        writer._executor.submit(lambda: None)  # the thread is gone
