"""Labels that look after themselves: an error line, a status-bar label that changes text and
colour at every edit without re-laying out the window, and a wrapped status line over a view
that only grows (``WrappedStatusLabel``).

``SteadyLabel``: a ``QLabel`` whose text changes asks its parent layout to recompute (``updateGeometry``), and a
new style sheet re-polishes it as well: in the status bar that meant a layout pass of the main
window at every keystroke, twice (“computing…”, then “up to date”). A widget whose minimum and
maximum sizes are equal does not propagate ``updateGeometry``, so this label keeps a fixed size
that fits every text it has shown (and those it was built to expect), growing only when a longer one
arrives, and takes its colour from its palette instead of a style sheet.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPalette, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from attnviz.ui.theme import mark_error_label

__all__ = ["ErrorLabel", "SteadyLabel", "WrappedStatusLabel"]


class SteadyLabel(QLabel):
    """A plain-text label of fixed size that only grows; colour and weight set without CSS."""

    def __init__(self, expected: Iterable[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        # The box is as wide as the longest text; shorter ones sit at its right edge, next to
        # their neighbours in the status bar, not after a gap.
        self.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self._expected = list(expected)
        self._color: QColor | None = None
        self._bold = False
        self._refit()

    def expect(self, texts: Iterable[str]) -> None:
        """Size the box for ``texts`` (a new language brings texts of other lengths)."""
        self._expected = list(texts)
        self._refit()

    def show_text(self, text: str, color: QColor | str | None = None, bold: bool = False) -> None:
        """Show ``text`` in ``color`` (None: the palette's normal text colour)."""
        new_color = None if color is None else QColor(color)
        if bold != self._bold:
            self._bold = bold
            font = self.font()
            font.setBold(bold)
            self.setFont(font)  # a FontChange event refits the size
        if new_color != self._color:
            self._color = new_color
            # An empty palette with one role set: every other role still follows the theme.
            palette = QPalette()
            if new_color is not None:
                palette.setColor(QPalette.ColorRole.WindowText, new_color)
            self.setPalette(palette)
        if text != self.text():
            self.setText(text)
            if self._box_width([text]) > self.width():
                self._expected.append(text)
                self._refit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._refit()

    def _box_width(self, texts: Iterable[str]) -> int:
        """Width that holds the widest of ``texts``, in bold too (switching weight must not
        overflow), with the label's margins."""
        bold = self.font()
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        margins = self.contentsMargins()
        return (
            max(metrics.horizontalAdvance(t) for t in texts) + margins.left() + margins.right() + 2 * self.margin() + 2
        )

    def _refit(self) -> None:
        bold = self.font()
        bold.setBold(True)
        margins = self.contentsMargins()
        height = (
            max(QFontMetrics(bold).height(), self.fontMetrics().height())
            + margins.top()
            + margins.bottom()
            + 2 * self.margin()
        )
        self.setFixedSize(self._box_width([*self._expected, self.text()]), height)


class ErrorLabel(QLabel):
    """A red message shown next to the control that caused it; hidden when there is none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        mark_error_label(self, bold=True)
        self.setVisible(False)

    def show_message(self, text: str | None) -> None:
        self.setText(text or "")
        self.setToolTip(text or "")
        self.setVisible(bool(text))


class WrappedStatusLabel(QLabel):
    """A wrapped status line whose height only grows: at least two lines, and as many as the
    longest text it has shown needs at its width. A status that changes every result then
    leaves the layout alone, while none is ever cut (presentation fonts, Portuguese, a narrow
    tab); a new font or width starts the count again.

    Unlike a wrapped ``QLabel`` it is not height-for-width: one such child makes a scroll area
    that holds its view size the view by its preferred height instead of the page (the long-
    context view was 968 px tall in a 642-pixel tab while a message was shown)."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._tallest = 0

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self._grow()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._tallest = 0
            self._grow()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._tallest = 0
            self._grow()

    def _grow(self) -> None:
        margins = self.contentsMargins()
        two_lines = 2 * self.fontMetrics().lineSpacing() + margins.top() + margins.bottom()
        need = max(two_lines, super().heightForWidth(max(1, self.width())))
        if need > self._tallest:
            self._tallest = need
            self.updateGeometry()

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return False

    def sizeHint(self) -> QSize:  # noqa: N802
        if not self._tallest:
            self._grow()
        return QSize(200, self._tallest)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(80, self.sizeHint().height())
