"""File > Open reads and parses off the GUI thread: the event loop keeps running, the status bar
shows what is opening with a Cancel button, cancel and a newer Open drop the old result."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QElapsedTimer, QSettings, QTimer
from PySide6.QtWidgets import QMessageBox

import attnviz.ui.files.opening as opening_module
from attnviz.io import SessionFileError
from attnviz.io.session_state import save_state_file
from attnviz.teaching.presets import PRESETS
from attnviz.ui.files.file_actions import FileActions, install_file_actions

SLOW_S = 1.2


@pytest.fixture
def actions(host, tmp_path: Path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    result = install_file_actions(host.session, host, settings=settings)
    yield result
    result.shutdown()


@pytest.fixture
def warnings(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda _p, title, text, *_a: shown.append((title, text))))
    return shown


@pytest.fixture
def slow_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every session read takes SLOW_S seconds (sleeping, as a read from a slow disk does) and
    records the thread it ran on."""
    threads: list[str] = []
    real = opening_module.load_state_and_focus

    def slow(path, **kwargs):
        threads.append(threading.current_thread().name)
        time.sleep(SLOW_S if "slow" in Path(path).name else 0.0)
        return real(path, **kwargs)

    monkeypatch.setattr(opening_module, "load_state_and_focus", slow)
    return threads


def session_file(tmp_path: Path, name: str, marker: float) -> Path:
    state = PRESETS["dot-toy"].build()
    state = state.with_head((0, 0), "queries", np.full((2, 1, 2), marker))
    path = tmp_path / name
    save_state_file(path, state)
    return path


def queries(actions: FileActions) -> float:
    return float(actions.session.head_view().queries[0, 0, 0])


def test_a_slow_open_keeps_the_event_loop_running_and_shows_progress(
    host, actions, qtbot, slow_reads, tmp_path
) -> None:
    path = session_file(tmp_path, "slow.attnviz", 5.0)
    ticks: list[int] = []
    clock = QElapsedTimer()
    clock.start()
    heartbeat = QTimer()
    heartbeat.setInterval(20)
    heartbeat.timeout.connect(lambda: ticks.append(clock.elapsed()))
    heartbeat.start()
    started = time.perf_counter()
    assert actions.open_file(path)
    assert time.perf_counter() - started < 0.2  # the GUI thread did not wait for the read
    assert actions.opening == path and queries(actions) != 5.0
    qtbot.waitUntil(actions.open_progress.isVisible, timeout=2000)
    assert "slow.attnviz" in actions.open_progress.label.text()
    assert actions.open_progress.cancel_button.isVisible()
    with qtbot.waitSignal(actions.openFinished, timeout=10000) as finished:
        pass
    heartbeat.stop()
    assert finished.args == [True] and queries(actions) == 5.0
    assert slow_reads and slow_reads[0] != threading.main_thread().name
    assert not actions.open_progress.isVisible()
    gaps = np.diff(ticks)
    # The timer kept firing during the read (on the GUI thread, the read stalled it for all of SLOW_S;
    # the bounds leave room for a machine busy with other work).
    assert len(ticks) >= SLOW_S / 0.02 * 0.25, ticks
    assert gaps.max() < SLOW_S * 1000 / 3, gaps.max()


def test_cancel_drops_the_result_of_a_read_still_running(host, actions, qtbot, slow_reads, tmp_path) -> None:
    path = session_file(tmp_path, "slow.attnviz", 5.0)
    version = actions.session.document.version
    assert actions.open_file(path)
    qtbot.waitUntil(actions.open_progress.isVisible, timeout=2000)
    with qtbot.waitSignal(actions.openFinished, timeout=1000) as finished:
        actions.open_progress.cancel_button.click()
    assert finished.args == [False] and actions.opening is None
    assert not actions.open_progress.isVisible()
    assert "cancelled" in host.statusBar().currentMessage()
    qtbot.wait(int(SLOW_S * 1000) + 300)  # the read finishes on its thread...
    assert actions.session.document.version == version  # ...and its result is dropped
    assert queries(actions) != 5.0


def test_a_second_open_supersedes_the_first(host, actions, qtbot, slow_reads, tmp_path) -> None:
    slow = session_file(tmp_path, "slow.attnviz", 5.0)
    fast = session_file(tmp_path, "fast.attnviz", 7.0)
    results: list[bool] = []
    actions.openFinished.connect(results.append)
    assert actions.open_file(slow)
    assert actions.open_file(fast)  # while the slow one is still reading
    qtbot.waitUntil(lambda: results == [False, True], timeout=5000)
    assert queries(actions) == 7.0
    version = actions.session.document.version
    qtbot.wait(int(SLOW_S * 1000) + 300)  # the slow read ends later: dropped
    assert actions.session.document.version == version and queries(actions) == 7.0
    assert results == [False, True]
    assert actions.current_path == fast


def test_a_refusal_is_shown_as_before(host, actions, qtbot, warnings, monkeypatch, tmp_path) -> None:
    def refuse(path, **_kwargs):
        raise SessionFileError(path, "is not an attnviz session")

    monkeypatch.setattr(opening_module, "load_state_and_focus", refuse)
    with qtbot.waitSignal(actions.openFinished, timeout=5000) as finished:
        actions.open_file(tmp_path / "bad.attnviz")
    assert finished.args == [False]
    assert warnings == [("Cannot open file", "bad.attnviz: is not an attnviz session")]


def test_closing_the_window_while_a_file_is_read_waits_for_the_reader(
    host, actions, qtbot, slow_reads, tmp_path
) -> None:
    path = session_file(tmp_path, "slow.attnviz", 5.0)
    results: list[bool] = []
    actions.openFinished.connect(results.append)
    assert actions.open_file(path)
    started = time.perf_counter()
    host.close()  # ends the session: the reader thread is waited for
    assert time.perf_counter() - started >= SLOW_S * 0.5
    assert not actions.opener.loader.busy
    qtbot.wait(100)
    assert results == []  # nothing is applied to a closed session
