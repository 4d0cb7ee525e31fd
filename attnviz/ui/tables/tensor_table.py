"""A numpy-backed table for viewing and editing one 2-D slice of a tensor.

``ArrayTableModel`` shows a 2-D numpy array without creating a Python object per cell, so a
1024x1024 slice costs nothing until cells scroll into view. The model never writes into the
array: every edit (typed, pasted, deleted) is announced as one rectangular block through
``blockEdited``. The owner, a document with undo, applies it and hands the new array back with
``set_array``. Keeping the model read-only means one undo step per user action and no way for the
table and the document to disagree.

``TensorTableView`` adds what a spreadsheet user expects: copy and paste of rectangles as
tab-separated text, Delete to zero the selection, typing to edit, Enter to commit and move down.

What typed and pasted text means (numbers, decimal commas, spreadsheet blocks, the messages of a
refusal) is decided without Qt in ``attnviz.text.numbers``; this module only tells it whether the
locale writes decimal commas and shows its messages in the current language.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QLocale,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemDelegate,
    QAbstractItemView,
    QHeaderView,
    QMenu,
    QTableView,
    QWidget,
)

from attnviz.text.numbers import (
    CellRule,
    format_compact,
    format_full,
    minimum_message,
    parse_block,
    parse_value,
    whole_number_message,
)
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.i18n import error_text, tr_text, translate
from attnviz.ui.lifecycle import Retranslating

__all__ = ["ArrayTableModel", "TensorTableView", "uses_decimal_comma"]

Label = Callable[[int], str]
AnyIndex = QModelIndex | QPersistentModelIndex

# Colour for NaN/inf cells: in a debugging tool a non-finite value is the thing to spot first.
_NON_FINITE_BRUSH = QBrush(QColor("#d62728"))
_ALIGN_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
# Built once: data() and flags() run for every visible cell on every repaint, and combining
# PySide6 enum flags goes through Python's enum machinery.
_CELL_FLAGS = (
    Qt.ItemFlag.ItemIsEditable
    | Qt.ItemFlag.ItemIsSelectable
    | Qt.ItemFlag.ItemIsEnabled
    | Qt.ItemFlag.ItemNeverHasChildren
)


def _changed_cells(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Cells whose value differs (NaN equals NaN; a different dtype counts as a change)."""
    if old.dtype != new.dtype:
        return np.ones(new.shape, dtype=bool)
    if new.dtype.kind in "fc":
        return ~((old == new) | (np.isnan(old) & np.isnan(new)))
    return old != new


def _default_label(i: int) -> str:
    return str(i)


def uses_decimal_comma() -> bool:
    """Whether the locale the app runs in writes decimals with a comma (QLocale's default)."""
    return QLocale().decimalPoint() == ","


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------


class ArrayTableModel(QAbstractTableModel):
    """A read-only view of a 2-D numpy array that turns edits into ``blockEdited`` requests.

    Signals:
        blockEdited(int row, int col, object block): the user wants ``block`` (a 2-D array in
            the array's dtype) written with its top-left corner at (row, col). Emitted once
            per user action; the array itself is not touched.
        inputRejected(str message): an edit was refused; ``message`` says why, for a status bar.
    """

    blockEdited = Signal(int, int, object)
    inputRejected = Signal(str)

    def __init__(
        self,
        array: np.ndarray | None = None,
        *,
        integer: bool = False,
        minimum: float | None = None,
        row_label: Label | None = None,
        column_label: Label | None = None,
        value_name: str | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._integer_option = integer
        self._minimum = minimum
        self._row_label: Label = row_label or _default_label
        self._column_label: Label = column_label or _default_label
        # Kept as given (a marked source is translated whenever a message names it).
        self._value_name = value_name if value_name is not None else QT_TRANSLATE_NOOP("TensorTable", "value")
        self._array: np.ndarray = np.zeros((0, 0))
        self._integer = integer
        self._dtype_bounds: tuple[float, float] | None = None
        self._adopt(np.zeros((0, 0)) if array is None else array)

    # ---- data ownership ---------------------------------------------------------------------

    def _adopt(self, array: np.ndarray) -> None:
        arr = np.asarray(array)
        if arr.ndim != 2:
            raise ValueError(f"ArrayTableModel shows 2-D arrays, got shape {arr.shape}")
        kind = arr.dtype.kind
        if kind not in "biuf":
            raise TypeError(f"ArrayTableModel shows numeric arrays, got dtype {arr.dtype}")
        self._array = arr
        # An integer dtype cannot hold 2.5 however the model was configured, so validate as
        # integers rather than let the owner's cast truncate silently.
        self._integer = self._integer_option or kind in "biu"
        if kind == "b":
            self._dtype_bounds = (0, 1)
        elif kind in "iu":
            info = np.iinfo(arr.dtype)
            self._dtype_bounds = (int(info.min), int(info.max))
        else:
            self._dtype_bounds = None

    def set_array(self, array: np.ndarray) -> None:
        """Show ``array`` (kept by reference, never written; a read-only array is fine).

        A same-shape update emits ``dataChanged`` over the bounding box of the cells that changed
        (none: no signal), so views keep their selection, current cell and scroll position and
        repaint only what moved; only a new shape resets the model.
        """
        new = np.asarray(array)
        if new.shape == self._array.shape:
            old = self._array
            self._adopt(new)
            if new.size == 0:
                return
            changed = _changed_cells(old, new)
            if not changed.any():
                return
            rows = np.flatnonzero(changed.any(axis=1))
            cols = np.flatnonzero(changed.any(axis=0))
            self.dataChanged.emit(self.index(int(rows[0]), int(cols[0])), self.index(int(rows[-1]), int(cols[-1])), [])
        else:
            self.beginResetModel()
            try:
                self._adopt(new)
            finally:
                self.endResetModel()

    def array(self) -> np.ndarray:
        """The array currently shown (the same object passed to ``set_array``)."""
        return self._array

    def set_labels(self, row_label: Label | None = None, column_label: Label | None = None) -> None:
        """Change the header text functions; ``None`` restores "0", "1", ..."""
        self._row_label = row_label or _default_label
        self._column_label = column_label or _default_label
        self.refresh_headers()

    def refresh_headers(self) -> None:
        """Ask the views to fetch the header texts again (the language changed, say)."""
        rows, cols = self._array.shape
        if rows:
            self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, rows - 1)
        if cols:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, cols - 1)

    def row_label(self, row: int) -> str:
        return self._row_label(row)

    def column_label(self, column: int) -> str:
        return self._column_label(column)

    def cell_label(self, row: int, column: int) -> str:
        return f"{self._row_label(row)}, {self._column_label(column)}"

    def full_text(self, row: int, column: int) -> str:
        """Full-precision text of one cell; parsing it gives back exactly the stored value."""
        return format_full(self._array[row, column], self._integer)

    def block_text(self, top: int, left: int, bottom: int, right: int) -> str:
        """Tab-separated full-precision text of the inclusive rectangle, rows joined by newlines."""
        block = self._array[top : bottom + 1, left : right + 1]
        integer = self._integer
        if block.dtype == np.float64 and not integer:
            # repr of a Python float is the shortest exact text and far faster than per-scalar
            # NumPy formatting, which matters when a whole 1024x1024 slice is copied.
            return "\n".join("\t".join(map(repr, row)) for row in block.tolist())
        return "\n".join("\t".join(format_full(v, integer) for v in row) for row in block)

    # ---- Qt model interface -----------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        # A table has no children: Qt asks with a valid parent to find that out.
        return 0 if parent.isValid() else int(self._array.shape[0])

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else int(self._array.shape[1])

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return format_compact(self._array.item(row, col), self._integer)
        if role == Qt.ItemDataRole.EditRole:
            # A string, not a number: the default delegate then opens a QLineEdit with the full
            # value, where a float would get a QDoubleSpinBox rounded to two decimals.
            return self.full_text(row, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{self.cell_label(row, col)} = {self.full_text(row, col)}"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _ALIGN_RIGHT  # numbers line up by their last digit
        if role == Qt.ItemDataRole.ForegroundRole:
            value = self._array.item(row, col)
            if isinstance(value, float) and not math.isfinite(value):
                return _NON_FINITE_BRUSH
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or section < 0:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if section >= self._array.shape[1]:
                return None
            return self._column_label(section)
        if section >= self._array.shape[0]:
            return None
        return self._row_label(section)

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if getattr(self, "_read_only", None):
            return _CELL_FLAGS & ~Qt.ItemFlag.ItemIsEditable
        return _CELL_FLAGS

    def set_read_only(self, reason: str | None) -> None:
        """Refuse every edit, saying ``reason`` (None: editable again)."""
        self._read_only = reason

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Parse ``value`` and request the edit through ``blockEdited``; the array is untouched.

        Returns False (after ``inputRejected``) when the text is not acceptable. Returns True
        without emitting when the value equals what is already stored, so that opening an editor
        and pressing Enter does not create an empty undo step.
        """
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        text = value if isinstance(value, str) else str(value)
        try:
            parsed = parse_value(text, self.cell_rule())
        except ValueError as err:
            self.inputRejected.emit(error_text(err))
            return False
        dtype = np.int64 if isinstance(parsed, int) else np.float64
        return self.request_edit(index.row(), index.column(), np.array([[parsed]], dtype=dtype))

    def cell_rule(self) -> CellRule:
        """What this table's cells take (whole numbers by option or because the dtype is
        integral; the minimum; the value's name), read in the decimals of the app's locale."""
        return CellRule(self._integer, self._minimum, self._value_name, uses_decimal_comma())

    def parse_block(self, text: str) -> np.ndarray:
        """Pasted ``text`` read as this table's cells take it; raises ``ValueError`` with a
        translatable message (``number_text.parse_block``)."""
        return parse_block(text, self.cell_rule())

    # ---- edits ------------------------------------------------------------------------------

    def _value_problem(self, value: float | int) -> str | None:
        """Why ``value`` cannot be stored, or None. Used on edits that did not come as text."""
        text = format_full(value)
        rule = self.cell_rule()
        if self._integer and not float(value).is_integer():
            return tr_text(whole_number_message(rule, text))
        if self._minimum is not None and not value >= self._minimum:
            return tr_text(whole_number_message(rule, text) if self._integer else minimum_message(rule, text))
        if self._dtype_bounds is not None:
            low, high = self._dtype_bounds
            if not low <= value <= high:
                return translate("TensorTable", "{text} does not fit in {dtype} ({low} to {high})").format(
                    text=text, dtype=self._array.dtype, low=low, high=high
                )
        elif math.isfinite(value):
            largest = float(np.finfo(self._array.dtype).max)
            if abs(value) > largest:
                return translate("TensorTable", "{text} is too large for {dtype} (largest is {largest})").format(
                    text=text, dtype=self._array.dtype, largest=f"{largest:.4g}"
                )
        return None

    def _first_problem(self, values: np.ndarray) -> tuple[int, str] | None:
        """The flat position and message of the first value that cannot be stored."""
        flat = values.ravel()
        as_float = flat.astype(np.float64, copy=False)
        bad = np.zeros(flat.shape, dtype=bool)
        if self._integer:
            bad |= ~np.isfinite(as_float) | (np.floor(as_float) != as_float)
        if self._minimum is not None:
            bad |= ~(as_float >= self._minimum)
        if self._dtype_bounds is not None:
            low, high = self._dtype_bounds
            bad |= (as_float < low) | (as_float > high)
        else:
            largest = float(np.finfo(self._array.dtype).max)
            bad |= np.isfinite(as_float) & (np.abs(as_float) > largest)
        for pos in np.flatnonzero(bad):
            problem = self._value_problem(flat[pos].item())
            if problem is not None:
                return int(pos), problem
        return None

    def request_edit(self, row: int, col: int, block: np.ndarray, mask: np.ndarray | None = None) -> bool:
        """Validate a rectangular edit at (row, col) and emit it as one ``blockEdited``.

        ``mask`` (same shape as ``block``) marks which cells are new; the others keep their
        current values, so a non-rectangular selection still becomes one rectangular edit. The
        emitted block has the array's dtype. Returns False after ``inputRejected`` if the block
        does not fit or holds a value the table cannot take; True otherwise (also when nothing
        would change, in which case nothing is emitted).
        """
        reason = getattr(self, "_read_only", None)
        if reason:
            self.inputRejected.emit(reason)
            return False
        values = np.asarray(block)
        if values.ndim != 2 or values.size == 0:
            self.inputRejected.emit(
                translate("TensorTable", "an edit must be a non-empty 2-D block, got {shape}").format(
                    shape=values.shape
                )
            )
            return False
        height, width = values.shape
        rows, cols = self._array.shape
        if row < 0 or col < 0 or row + height > rows or col + width > cols:
            self.inputRejected.emit(
                translate(
                    "TensorTable",
                    "a {height}×{width} block at row {row}, column {col} does not fit in the {rows}×{cols} table",
                ).format(height=height, width=width, row=row, col=col, rows=rows, cols=cols)
            )
            return False
        if values.dtype.kind not in "biuf":
            self.inputRejected.emit(
                translate("TensorTable", "cannot store values of type {dtype}").format(dtype=values.dtype)
            )
            return False
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != values.shape:
                raise ValueError(f"mask shape {mask.shape} differs from block shape {values.shape}")
        checked = values if mask is None else values[mask]
        problem = self._first_problem(checked)
        if problem is not None:
            pos, message = problem
            if mask is None:
                r, c = divmod(pos, width)
            else:
                r, c = (int(i[pos]) for i in np.nonzero(mask))
            self.inputRejected.emit(f"{self.cell_label(row + r, col + c)}: {message}")
            return False
        current = self._array[row : row + height, col : col + width]
        if mask is None:
            result = values.astype(self._array.dtype)
        else:
            result = current.copy()
            result[mask] = values[mask].astype(self._array.dtype)
        same = np.array_equal(result, current, equal_nan=result.dtype.kind == "f")
        if same:
            return True
        self.blockEdited.emit(row, col, result)
        return True


# --------------------------------------------------------------------------------------------
# View
# --------------------------------------------------------------------------------------------

_VIEW_HELP = QT_TRANSLATE_NOOP(
    "TensorTable",
    "Type a number to edit a cell; Enter commits and moves down, Tab moves right.\nCtrl+C copies the selected "
    "rectangle as tab-separated text (full precision).\nCtrl+V pastes a block from a spreadsheet or text at the "
    "selection's top-left cell;\na single value pasted into a selection fills it.\nDelete sets the selected cells to "
    "0.",
)


class TensorTableView(Retranslating, QTableView):
    """A ``QTableView`` for an ``ArrayTableModel`` with spreadsheet-style keyboard editing.

    Signals:
        message(str): an informational note for a status bar, e.g. that a paste was clipped.
            Refusals go through the model's ``inputRejected`` instead.
    """

    message = Signal(str)

    def __init__(self, model: ArrayTableModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.setTabKeyNavigation(True)
        self.setWordWrap(False)
        # Fixed, uniform sections: QHeaderView then never measures contents, which would touch
        # every one of 1024 rows (and their data) whenever the model changes.
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._fit_sections()
        #: What this table holds, said before the help in its tooltip (a marked source).
        self.tip_prefix: str | None = None
        self.retranslate()
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._show_context_menu)
        if model is not None:
            self.setModel(model)

    def _fit_sections(self) -> None:
        """Rows and columns sized for the font (presentation mode enlarges it: the rows follow,
        or the enlarged numbers are cut in half)."""
        metrics = self.fontMetrics()
        row_height = metrics.height() + 6
        vertical = self.verticalHeader()
        vertical.setMinimumSectionSize(row_height)
        vertical.setDefaultSectionSize(row_height)
        self.horizontalHeader().setDefaultSectionSize(metrics.horizontalAdvance("-0.0000e+00") + 12)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_sections()

    def set_tip_prefix(self, prefix: str | None) -> None:
        self.tip_prefix = prefix
        self.retranslate()

    def retranslate(self) -> None:
        help_text = tr_text(_VIEW_HELP)
        self.setToolTip(help_text if not self.tip_prefix else f"{tr_text(self.tip_prefix)}. {help_text}")
        self.horizontalHeader().setToolTip(help_text)
        self.verticalHeader().setToolTip(help_text)
        # The corner button selects every cell; say so like every other control.
        for corner in self.findChildren(QAbstractButton):
            corner.setToolTip(translate("TensorTable", "Select all cells"))

    # ---- helpers ----------------------------------------------------------------------------

    def array_model(self) -> ArrayTableModel | None:
        model = self.model()
        return model if isinstance(model, ArrayTableModel) else None

    def selected_bounds(self) -> tuple[int, int, int, int] | None:
        """(top, left, bottom, right), inclusive, of the selection's bounding box, or None.

        Uses the selection's ranges rather than ``selectedIndexes()``, which would build a
        million QModelIndex objects after Ctrl+A on a 1024x1024 table.
        """
        selection_model = self.selectionModel()
        if selection_model is None:
            return None
        ranges = [r for r in selection_model.selection().toList() if r.isValid()]
        if not ranges:
            return None
        return (
            min(r.top() for r in ranges),
            min(r.left() for r in ranges),
            max(r.bottom() for r in ranges),
            max(r.right() for r in ranges),
        )

    def _selection_mask(self, top: int, left: int, bottom: int, right: int) -> np.ndarray:
        mask = np.zeros((bottom - top + 1, right - left + 1), dtype=bool)
        selection_model = self.selectionModel()
        selection: QItemSelection = selection_model.selection()
        for rng in selection.toList():
            if rng.isValid():
                mask[
                    rng.top() - top : rng.bottom() - top + 1,
                    rng.left() - left : rng.right() - left + 1,
                ] = True
        return mask

    # ---- actions ----------------------------------------------------------------------------

    def _selected_or_current(self) -> tuple[int, int, int, int] | None:
        """The selection's bounds, else the current cell's, else None."""
        bounds = self.selected_bounds()
        current = self.currentIndex()
        if bounds is None and current.isValid():
            return (current.row(), current.column(), current.row(), current.column())
        return bounds

    def copy_selection(self) -> bool:
        """Copy the selection's bounding box (or the current cell) to the clipboard as TSV."""
        model, bounds = self.array_model(), self._selected_or_current()
        if model is None or bounds is None:
            return False
        QGuiApplication.clipboard().setText(model.block_text(*bounds))
        return True

    def paste(self, text: str | None = None) -> bool:
        """Paste clipboard text (or ``text``) as one edit; returns whether an edit was requested.

        The block lands with its top-left corner on the selection's top-left cell (the current
        cell if nothing is selected). A single value pasted into a multi-cell selection fills
        the selected cells. Parts of the block that fall outside the table are dropped, and
        ``message`` says so.
        """
        model = self.array_model()
        if model is None:
            return False
        if text is None:
            text = QGuiApplication.clipboard().text()
        if not text.strip():
            model.inputRejected.emit(translate("TensorTable", "the clipboard has no text to paste"))
            return False
        try:
            block = model.parse_block(text)
        except ValueError as err:
            model.inputRejected.emit(translate("TensorTable", "cannot paste: {error}").format(error=error_text(err)))
            return False
        bounds = self._selected_or_current()
        if bounds is None:
            model.inputRejected.emit(translate("TensorTable", "select a cell to paste into"))
            return False
        top, left, bottom, right = bounds
        if block.shape == (1, 1) and (bottom > top or right > left):
            mask = self._selection_mask(top, left, bottom, right)
            filled = np.full(mask.shape, block[0, 0], dtype=block.dtype)
            return model.request_edit(top, left, filled, mask)
        rows, cols = model.rowCount(), model.columnCount()
        fit_rows, fit_cols = min(block.shape[0], rows - top), min(block.shape[1], cols - left)
        if fit_rows <= 0 or fit_cols <= 0:
            model.inputRejected.emit(translate("TensorTable", "cannot paste outside the table"))
            return False
        if (fit_rows, fit_cols) != block.shape:
            self.message.emit(
                translate(
                    "TensorTable",
                    "pasted block is {height}×{width} but only {fit_rows}×{fit_cols} fits from {cell}; "
                    "the rest was dropped",
                ).format(
                    height=block.shape[0],
                    width=block.shape[1],
                    fit_rows=fit_rows,
                    fit_cols=fit_cols,
                    cell=model.cell_label(top, left),
                )
            )
            block = block[:fit_rows, :fit_cols]
        ok = model.request_edit(top, left, block)
        if ok:
            # Select what was pasted so the user sees where it went.
            selection = QItemSelection(model.index(top, left), model.index(top + fit_rows - 1, left + fit_cols - 1))
            self.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        return ok

    def clear_selection_values(self) -> bool:
        """Set the selected cells to 0 (or the model's minimum, if above 0) as one edit."""
        model, bounds = self.array_model(), self.selected_bounds()
        if model is None or bounds is None:
            return False
        top, left, bottom, right = bounds
        mask = self._selection_mask(top, left, bottom, right)
        rule = model.cell_rule()
        fill: float = 0
        if rule.minimum is not None and rule.minimum > 0:
            fill = math.ceil(rule.minimum) if rule.integer else rule.minimum
        values = np.full(mask.shape, fill, dtype=np.int64 if rule.integer else np.float64)
        return model.request_edit(top, left, values, mask)

    def _show_context_menu(self, pos: QPoint) -> None:
        self.build_context_menu().exec(self.viewport().mapToGlobal(pos))

    def build_context_menu(self) -> QMenu:
        menu = QMenu(self)
        # The shortcut goes in the text after a tab instead of setShortcut(): the keys are
        # already handled in keyPressEvent, and a second live shortcut would be ambiguous.
        menu.addAction(translate("TensorTable", "Copy") + "\tCtrl+C", self.copy_selection)
        menu.addAction(translate("TensorTable", "Paste") + "\tCtrl+V", self.paste)
        menu.addAction(translate("TensorTable", "Set to 0") + "\tDel", self.clear_selection_values)
        return menu

    # ---- keyboard ---------------------------------------------------------------------------

    @staticmethod
    def _is_delete_key(event: QKeyEvent) -> bool:
        return event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and (
            event.modifiers() == Qt.KeyboardModifier.NoModifier
        )

    @classmethod
    def _is_table_key(cls, event: QKeyEvent) -> bool:
        return (
            event.matches(QKeySequence.StandardKey.Copy)
            or event.matches(QKeySequence.StandardKey.Paste)
            or cls._is_delete_key(event)
        )

    def event(self, event: QEvent) -> bool:
        # Claim copy/paste/delete before any window-level shortcut with the same keys does, the
        # way QLineEdit claims them, so they act on the table that has focus.
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and self.state() != QAbstractItemView.State.EditingState
            and self._is_table_key(event)
        ):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.state() != QAbstractItemView.State.EditingState:
            if event.matches(QKeySequence.StandardKey.Copy):
                self.copy_selection()
                event.accept()
                return
            if event.matches(QKeySequence.StandardKey.Paste):
                self.paste()
                event.accept()
                return
            if self._is_delete_key(event):
                self.clear_selection_values()
                event.accept()
                return
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._move_down()
                event.accept()
                return
        super().keyPressEvent(event)

    def _move_down(self) -> None:
        current = self.currentIndex()
        model = self.model()
        if model is None or not current.isValid() or current.row() + 1 >= model.rowCount():
            return
        self.setCurrentIndex(current.siblingAtRow(current.row() + 1))

    def closeEditor(self, editor: QWidget, hint: QAbstractItemDelegate.EndEditHint) -> None:
        # The delegate closes with SubmitModelCache when the user presses Enter in the editor;
        # spreadsheets then move down a row, Tab already moves right (EditNextItem).
        super().closeEditor(editor, hint)
        if hint == QAbstractItemDelegate.EndEditHint.SubmitModelCache:
            self._move_down()
