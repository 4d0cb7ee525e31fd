"""The status bar's labels change text at every edit without making the window lay out again."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QHBoxLayout, QWidget

from attnviz.ui.labels import SteadyLabel


class _LayoutRequests(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def test_expected_texts_fit_without_a_layout_pass_and_longer_ones_grow(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    label = SteadyLabel(["computing…", "up to date"])
    QHBoxLayout(parent).addWidget(label)
    parent.show()
    qtbot.waitExposed(parent)
    QCoreApplication.processEvents()
    size = label.size()
    requests = _LayoutRequests()
    parent.installEventFilter(requests)
    for _ in range(20):
        label.show_text("computing…", "#8a5300")
        label.show_text("up to date", "#1b7f3b", bold=False)
        QCoreApplication.processEvents()
    assert requests.count == 0 and label.size() == size
    assert label.palette().color(QPalette.ColorRole.WindowText).name() == "#1b7f3b"
    # A text longer than any expected one widens the label instead of being cut.
    long_text = "a much longer status text than anything expected before"
    label.show_text(long_text)
    QCoreApplication.processEvents()
    assert label.width() >= label.fontMetrics().horizontalAdvance(long_text)
    assert label.text() == long_text
    # No colour: the palette's own text colour again (follows the theme).
    assert label.palette().color(QPalette.ColorRole.WindowText) == QPalette().color(QPalette.ColorRole.WindowText)


def test_bold_and_larger_fonts_still_fit(qtbot):
    label = SteadyLabel(["error: showing the last good result"])
    qtbot.addWidget(label)
    label.show_text("error: showing the last good result", "#c00000", bold=True)
    assert label.font().bold()
    assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.8)  # presentation mode enlarges the application font
    label.setFont(font)
    assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())
    assert label.height() >= label.fontMetrics().height()
