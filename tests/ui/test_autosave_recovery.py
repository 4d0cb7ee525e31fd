"""The recovery prompt at start-up, with other attnviz windows in other processes.

The other windows are child processes that autosave their inputs the way a window's writer does
(``claim_autosave`` + ``write``) and then either stay alive or are killed with SIGKILL. The window
under test is a ``FileActions`` on a bare host; the prompt is answered through
``QMessageBox.question``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from attnviz.state.document import SetSettings
from attnviz.ui.files.file_actions import FileActions, install_file_actions

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals")

ROOT = Path(__file__).resolve().parents[2]

# Another attnviz window: autosaves the dot-product preset with every query set to argv[1], says
# where, then lives until killed.
OTHER_WINDOW = r"""
import sys
import numpy as np
from attnviz.io import claim_autosave
from attnviz.io.session_state import state_to_session
from attnviz.teaching.presets import PRESETS
state = PRESETS["dot-toy"].build()
state = state.with_head((0, 0), "queries", np.full((2, 1, 2), float(sys.argv[1])))
slot = claim_autosave()
slot.write(state_to_session(state))
print(slot.path, flush=True)
sys.stdin.readline()
"""


class OtherWindow:
    def __init__(self, marker: float) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.process = subprocess.Popen(
            [sys.executable, "-c", OTHER_WINDOW, str(marker)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        self.path = Path(self.process.stdout.readline().strip())
        self.bytes = self.path.read_bytes()
        self.mtime = self.path.stat().st_mtime_ns

    def crash(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def untouched(self) -> bool:
        return self.path.read_bytes() == self.bytes and self.path.stat().st_mtime_ns == self.mtime

    def close(self) -> None:
        if self.process.poll() is None:
            self.crash()


@pytest.fixture
def others():
    started: list[OtherWindow] = []

    def start(marker: float) -> OtherWindow:
        started.append(OtherWindow(marker))
        return started[-1]

    yield start
    for window in started:
        window.close()


class Answers:
    """The recovery questions asked, answered in turn with the queued "yes"/"no"."""

    def __init__(self) -> None:
        self.queued: list[str] = []
        self.asked: list[str] = []

    def append(self, answer: str) -> None:
        self.queued.append(answer)

    def extend(self, answers: list[str]) -> None:
        self.queued.extend(answers)

    def question(self, _parent, _title, text, *_a):
        self.asked.append(text)
        return QMessageBox.StandardButton.Yes if self.queued.pop(0) == "yes" else QMessageBox.StandardButton.No


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> Answers:
    given = Answers()
    monkeypatch.setattr(QMessageBox, "question", staticmethod(given.question))
    return given


def window_actions(qtbot) -> FileActions:
    from attnviz.ui.app.host import HostWindow
    from attnviz.ui.app.session import AppSession

    host = HostWindow(AppSession())
    qtbot.addWidget(host)
    return install_file_actions(host.session, host, autosave_ms=50)


def queries_of(actions: FileActions) -> float:
    return float(actions.session.head_view().queries[0, 0, 0])


def test_a_starting_window_offers_a_gone_window_and_never_a_live_one(qtbot, others, answers) -> None:
    live = others(2.0)
    gone = others(1.0)
    gone.crash()
    actions = window_actions(qtbot)
    answers.append("yes")
    assert actions.offer_restore()
    assert len(answers.asked) == 1  # the gone window only
    assert queries_of(actions) == 1.0
    assert live.untouched()
    # The restored autosave is this window's own now; its clean exit removes it and nothing else.
    assert actions.autosave.writer.slot is not None and actions.autosave.writer.slot.path == gone.path
    actions.session.push(SetSettings({"dropout": 0.25}))
    qtbot.waitUntil(lambda: actions.autosave.writer.written >= 1, timeout=5000)
    actions.session.shutdown()
    assert not gone.path.exists()
    assert live.untouched()


def test_two_windows_killed_in_turn_both_get_their_work_back(qtbot, others, answers) -> None:
    first, second = others(1.0), others(2.0)
    first.crash()
    answers.append("yes")
    recovering_first = window_actions(qtbot)
    assert recovering_first.offer_restore() and queries_of(recovering_first) == 1.0
    assert second.untouched()

    second.crash()
    answers.append("yes")
    recovering_second = window_actions(qtbot)  # the first recovering window is still open
    assert recovering_second.offer_restore() and queries_of(recovering_second) == 2.0
    assert len(answers.asked) == 2
    assert first.path.exists()  # adopted by the first recovering window, which is alive


def test_no_discards_only_the_gone_windows_offered(qtbot, others, answers) -> None:
    live = others(3.0)
    gone = [others(1.0), others(2.0)]
    for window in gone:
        window.crash()
    actions = window_actions(qtbot)
    version = actions.session.document.version
    answers.extend(["no", "no"])
    assert not actions.offer_restore()
    assert len(answers.asked) == 2 and "1 more autosave" in answers.asked[0]
    assert actions.session.document.version == version
    assert not any(window.path.exists() for window in gone)
    assert live.untouched()


def test_after_a_yes_the_other_gone_windows_wait_for_the_next_start(qtbot, others, answers) -> None:
    older, newer = others(1.0), others(2.0)
    older.crash()
    newer.crash()
    answers.append("yes")
    first = window_actions(qtbot)
    assert first.offer_restore() and queries_of(first) == 2.0  # the newest first
    assert older.path.exists()
    answers.append("yes")
    second = window_actions(qtbot)
    assert second.offer_restore() and queries_of(second) == 1.0
    np.testing.assert_array_equal(second.session.head_view().queries, 1.0)
