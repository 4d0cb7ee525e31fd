"""A layout that puts its widgets in a row and wraps them onto more rows when the row is too narrow.

Rows of controls (a batch selector beside fill buttons, a lesson's buttons) must fit a
1024-pixel screen and a translation twice as long as the English: a plain row would either clip
its texts or make the whole window wider. Qt has no such layout built in; this is the usual
height-for-width one.

superqt (a dependency) has one, ``QFlowLayout``, and it does not serve here (superqt 0.9.0):

* a hidden widget is still an item there, of size 0 but followed by a spacing: the inputs
  panel hides its layer and head pickers for the book's tensors, and the fill controls after
  them moved 12 px to the right (a lesson's hidden "Open the masking lab" likewise);
  ``tests/ui/test_flow_layout.py::test_hidden_items_take_no_room`` fails with it;
* an item that fits the row exactly wraps (it compares the right edge with ``>`` against the
  last pixel): two 95 px buttons with a 10 px spacing take two rows in 200 px;
* it reports that it expands horizontally (``expandingDirections``); this one does not.

Its arrangement is one private method (``_doLayout``), so changing that would mean overriding
a private method of another package; this layout is that method and the usual four item calls.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QWidget

__all__ = ["FlowLayout"]


class FlowLayout(QLayout):
    """Items left to right, wrapped onto a new row when the next one would not fit."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        # As narrow as the widest single item: everything else can wrap.
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins: QMargins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        x, y, row_height = area.x(), area.y(), 0
        for item in self._items:
            widget = item.widget()
            # Hidden items take no room. isHidden (hidden on purpose), not isVisible: while a
            # panel is being shown its items are not visible yet, and a pass that skipped them
            # left them unplaced (at 0, 0 in Qt's default 640x480, over their neighbours); a
            # pass before the panel was on screen counted hidden items in.
            if widget is not None and widget.isHidden():
                continue
            hint = item.sizeHint()
            if x + hint.width() > area.right() + 1 and x > area.x():
                x, y, row_height = area.x(), y + row_height + self._spacing, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            row_height = max(row_height, hint.height())
        return y + row_height - rect.y() + margins.bottom()


def flow_widget(*widgets: QWidget, spacing: int = 6) -> QWidget:
    """A widget holding ``widgets`` in a FlowLayout (preferred width, height for its width)."""
    host = QWidget()
    layout = FlowLayout(host, spacing)
    for widget in widgets:
        layout.addWidget(widget)
    policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
    policy.setHeightForWidth(True)
    host.setSizePolicy(policy)
    return host
