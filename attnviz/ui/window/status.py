"""The window's status bar: whether the pictures are current, the device and dtype and compute
time of the last result, a busy bar once a computation takes more than a moment, and "Run on
CPU" when the device failed."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QProgressBar, QPushButton, QStatusBar

from attnviz.ui import theme
from attnviz.ui.app.session import AppSession
from attnviz.ui.i18n import translate
from attnviz.ui.labels import SteadyLabel

__all__ = ["WindowStatus"]


class WindowStatus:
    """The permanent widgets of ``bar`` for ``session``; ``run_on_cpu`` is the button's action."""

    def __init__(self, bar: QStatusBar, session: AppSession, run_on_cpu: Callable[[], None]) -> None:
        self.session = session
        # Fixed-size labels: their texts change at every edit, and a plain QLabel would make the
        # whole window lay itself out again each time.
        self.state_label = SteadyLabel()
        self.device_label = SteadyLabel(["cpu · bfloat16"])
        self.time_label = SteadyLabel(["00000.0 ms"])
        # A busy bar only once a computation has taken more than a moment: flashing it for
        # every 2 ms toy computation would be noise.
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(120)
        self.busy_bar.setVisible(False)
        self._busy_timer = QTimer(bar)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(300)
        self._busy_timer.timeout.connect(lambda: self.busy_bar.setVisible(self.session.busy))
        self.cpu_button = QPushButton()
        self.cpu_button.clicked.connect(lambda: run_on_cpu())
        self.cpu_button.setVisible(False)
        bar.addPermanentWidget(self.cpu_button)
        bar.addPermanentWidget(self.busy_bar)
        for label in (self.state_label, self.device_label, self.time_label):
            bar.addPermanentWidget(label)
        self._state_texts = ("", "", "", "")

    def retranslate(self) -> None:
        self._state_texts = (
            translate("MainWindow", "computing…"),
            translate("MainWindow", "loading PyTorch…"),
            translate("MainWindow", "error: showing the last good result"),
            translate("MainWindow", "up to date"),
        )
        self.state_label.expect(self._state_texts)
        self.state_label.setToolTip(translate("MainWindow", "Whether the pictures show the current inputs"))
        self.device_label.setToolTip(translate("MainWindow", "Device and dtype of the last result"))
        self.time_label.setToolTip(translate("MainWindow", "Compute time of the last result (engine only)"))
        self.busy_bar.setToolTip(translate("MainWindow", "Computing…"))
        self.cpu_button.setText(translate("MainWindow", "Run on CPU"))
        self.cpu_button.setToolTip(
            translate("MainWindow", "The device failed (missing or out of memory): compute on the CPU instead")
        )

    def update(self) -> None:
        session = self.session
        outcome = session.last_outcome
        computing, loading, failed, current = self._state_texts
        bold = False
        if session.busy or not session.is_current:
            state, color = (computing if outcome is not None else loading), theme.warning_color()
        elif session.error_field is not None:
            state, color, bold = failed, theme.error_color(), True
        else:
            state, color = current, theme.ok_color()
        if session.busy:
            if not self._busy_timer.isActive() and not self.busy_bar.isVisible():
                self._busy_timer.start()
        else:
            self._busy_timer.stop()
            self.busy_bar.setVisible(False)
        self.state_label.show_text(state, color, bold=bold)
        if outcome is not None:
            self.device_label.show_text(f"{outcome.device} · {outcome.dtype}")
            self.time_label.show_text(f"{outcome.seconds * 1e3:.1f} ms")
