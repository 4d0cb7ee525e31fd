"""Fixtures for the app tests: a main window whose worker is always stopped at the end."""

from __future__ import annotations

import threading
import time

import pytest


@pytest.fixture
def window(qtbot):
    from attnviz.ui.app.main_window import MainWindow

    threads_before = threading.active_count()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    wait_current(qtbot, win)
    yield win
    win.close()
    # No compute thread may outlive the window.
    deadline = time.monotonic() + 5
    while win.scheduler.busy and time.monotonic() < deadline:
        qtbot.wait(10)
    assert not win.scheduler.busy
    assert threading.active_count() <= threads_before + 1


def wait_current(qtbot, win, timeout: int = 30000) -> None:
    """Wait until the window shows the result of the document's current version."""
    qtbot.waitUntil(lambda: win.shown_version == win.document.version and not win.scheduler.busy, timeout=timeout)
