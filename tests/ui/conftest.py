"""Fixtures for the app tests: a main window whose worker is always stopped at the end."""

from __future__ import annotations

import threading
import time

import pytest


@pytest.fixture
def window(qtbot):
    from attnviz.ui.window.main_window import MainWindow

    threads_before = threading.active_count()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    wait_current(qtbot, win)
    yield win
    win.close()
    # No compute thread may outlive the window.
    deadline = time.monotonic() + 5
    while win.session.busy and time.monotonic() < deadline:
        qtbot.wait(10)
    assert not win.session.busy
    assert threading.active_count() <= threads_before + 1


def wait_current(qtbot, win, timeout: int = 30000) -> None:
    """Wait until the window shows the result of the document's current version."""
    qtbot.waitUntil(lambda: win.session.is_current and not win.session.busy, timeout=timeout)


@pytest.fixture
def host(qtbot):
    """A bare window hosting features on a new session: no main panels, nothing computed until
    ``session.start()``. Features are installed into it by the test."""
    from attnviz.ui.app.host import HostWindow
    from attnviz.ui.app.session import AppSession

    threads_before = threading.active_count()
    win = HostWindow(AppSession())
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    yield win
    win.close()
    assert win.session.closed  # closing the host ends the session and its threads
    deadline = time.monotonic() + 5
    while win.session.busy and time.monotonic() < deadline:
        qtbot.wait(10)
    assert threading.active_count() <= threads_before + 2


def wait_session(qtbot, session, timeout: int = 30000) -> None:
    """Start the session's own computation if needed and wait until it shows the current version."""
    session.start()
    qtbot.waitUntil(lambda: session.is_current and not session.busy, timeout=timeout)
