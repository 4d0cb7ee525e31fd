"""The flowing row of buttons (lessons, side by side): every shown item is placed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from attnviz.ui.flow_layout import flow_widget

ROOT = Path(__file__).resolve().parents[2]


def _placed(button: QPushButton) -> bool:
    """Laid out by the flow: its size hint at a place inside the row, not Qt's default 640x480."""
    parent = button.parentWidget()
    return button.size() == button.sizeHint() and parent.rect().contains(button.geometry())


_CHILD = r"""
import json, sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from attnviz.ui.window.main_window import MainWindow
from tests.ui.layout_probe import settle  # every computation done, then the frames they cause

window = MainWindow()
window.resize(1280, 720)
window.show()
settle(window)
window.lessons.load("pitfall-zero-length")
if sys.argv[1] == "present":
    window.set_presentation_mode(True)
    settle(window)
else:
    window.dock("maskingLabDock").show()
    settle(window)
    view = window.lessons.view
    print(json.dumps({name: [*getattr(view, name).geometry().getRect(), getattr(view, name).isVisible()]
                      for name in ("answer_button", "lab_button")}))
window.close()
settle(window)
"""


@pytest.mark.slow
def test_the_lesson_buttons_are_placed_after_presentation_mode_widened_the_panel(tmp_path) -> None:
    """A window closed in presentation mode leaves the lesson panel wide; in the next window, a
    pitfall with the masking lab open showed a white box where its buttons belong: "Open the
    masking lab", shown with its panel, was laid out while neither visible nor hidden, skipped,
    and left at 0, 0 at 640x480 over "Show the answer". Two processes, as a user restarting."""
    env = {**os.environ, "ATTNVIZ_STATE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    for step in ("present", "measure"):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, step], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr[-3000:]
    places = json.loads(done.stdout.strip().splitlines()[-1])
    answer, open_lab = (QRect(*places[name][:4]) for name in ("answer_button", "lab_button"))
    assert places["lab_button"][4], "a pitfall offers the masking lab"
    assert open_lab.height() < 100 and answer.height() < 100, places  # laid out, not Qt's 640x480
    assert not answer.intersects(open_lab), places


def test_hidden_items_take_no_room(qtbot) -> None:
    panel = QWidget()
    qtbot.addWidget(panel)
    a, b, c = (QPushButton(text) for text in ("a", "b", "c"))
    row = flow_widget(a, b, c, spacing=10)
    QVBoxLayout(panel).addWidget(row)
    b.hide()
    panel.resize(400, 100)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: c.x() > 0)
    assert c.x() == a.geometry().right() + 1 + 10
