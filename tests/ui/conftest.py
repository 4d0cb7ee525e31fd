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


def engine_result(state):
    """The engine's result on the head on show of ``state``, with every setting and parameter the
    window computes with: what a view must show."""
    # Here, not at the top: the fixtures of the tests that never compute need no torch.
    import numpy as np
    import torch

    from attnviz.engine import attend

    s = state.settings
    lens = state.valid_lens(state.head_view())
    params = {k: torch.from_numpy(np.asarray(v)) for k, v in state.params.items()} or None
    return attend(
        torch.from_numpy(state.head_view().queries),
        torch.from_numpy(state.head_view().keys),
        torch.from_numpy(state.head_view().values),
        None if lens is None else torch.from_numpy(lens),
        scoring=s.scoring,
        mask_mode=s.mask_mode,
        causal=state.head_view().causal,
        params=params,
        num_hiddens=s.num_hiddens,
        seed=s.param_seed,
        dropout=s.dropout,
        train=s.train,
        dropout_seed=s.dropout_seed,
        dtype=s.dtype,
    )


@pytest.fixture
def exposed_window(qtbot):
    """A main window at its usual size, shown and exposed, its first result current."""
    from attnviz.ui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1400, 860)
    win.show()
    qtbot.waitExposed(win)
    wait_current(qtbot, win)
    return win
