"""A numpy-backed table for viewing and editing one 2-D slice of a tensor.

``ArrayTableModel`` shows a 2-D numpy array without creating a Python object per cell, so a
1024x1024 slice costs nothing until cells scroll into view. The model never writes into the
array: every edit (typed, pasted, deleted) is announced as one rectangular block through
``blockEdited``. The owner, a document with undo, applies it and hands the new array back with
``set_array``. Keeping the model read-only means one undo step per user action and no way for the
table and the document to disagree.

``TensorTableView`` adds what a spreadsheet user expects: copy and paste of rectangles as
tab-separated text, Delete to zero the selection, typing to edit, Enter to commit and move down.
"""

from __future__ import annotations

import math
import re
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

from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.lifecycle import Retranslating

__all__ = [
    "ArrayTableModel",
    "TensorTableView",
    "format_full",
    "parse_block",
    "parse_value",
]

Label = Callable[[int], str]
AnyIndex = QModelIndex | QPersistentModelIndex

# Spreadsheets and web pages sometimes hand over a typographic minus; float() rejects it, and a
# user who copied "−0.5" means -0.5.
_MINUS_SIGNS_TEXT = ("\u2212", "\u2013")
_MINUS_SIGNS = str.maketrans(dict.fromkeys(_MINUS_SIGNS_TEXT, "-"))
# A number written with a decimal comma ("0,5", "-1,25e-3"): read as such where the locale
# writes decimals that way (Brazil: the spin boxes show "0,50", spreadsheets copy "0,5").
_DECIMAL_COMMA_NUMBER = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
_INT64 = np.iinfo(np.int64)
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


def _fmt_bound(bound: float) -> str:
    """Write a minimum the way a person would: 0 rather than 0.0."""
    return f"{bound:g}"


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def _whole_number_message(name: str, minimum: float | None, text: str) -> str:
    if minimum is not None:
        return translate("TensorTable", "{name} must be a whole number ≥ {bound}, got '{text}'").format(
            name=name, bound=_fmt_bound(minimum), text=text
        )
    return translate("TensorTable", "{name} must be a whole number, got '{text}'").format(name=name, text=text)


def _not_a_number(text: str) -> str:
    return translate("TensorTable", "'{text}' is not a number").format(text=text)


def uses_decimal_comma() -> bool:
    """Whether the locale the app runs in writes decimals with a comma (QLocale's default)."""
    return QLocale().decimalPoint() == ","


def parse_value(text: str, integer: bool = False, minimum: float | None = None, name: str | None = None) -> float | int:
    """Parse one cell's text into a number, or raise ``ValueError`` with a message for people.

    Float cells accept anything ``float()`` does, including "nan", "inf" and "-inf" (they are
    legitimate when debugging). Integer cells accept whole numbers, also written as "3.0" or
    "1e2", and reject NaN and infinities. Where the locale writes decimal commas (pt-BR),
    "0,5" is 0.5. ``minimum`` is inclusive; NaN never satisfies it.
    ``name`` names the quantity in messages, e.g. "valid length" (default: "value"). Messages
    are in the current language.
    """
    if name is None:
        name = translate("TensorTable", "value")
    stripped = text.strip().translate(_MINUS_SIGNS)
    if not stripped:
        raise ValueError(translate("TensorTable", "an empty cell is not a number"))
    if "," in stripped and _DECIMAL_COMMA_NUMBER.fullmatch(stripped) and uses_decimal_comma():
        stripped = stripped.replace(",", ".")
    if integer:
        value: float | int
        try:
            # int() first so that large integers stay exact instead of passing through a float.
            value = int(stripped)
        except ValueError:
            try:
                as_float = float(stripped)
            except ValueError:
                raise ValueError(_not_a_number(text)) from None
            if not as_float.is_integer():  # also false for NaN and infinities
                raise ValueError(_whole_number_message(name, minimum, text)) from None
            value = int(as_float)
        if minimum is not None and value < minimum:
            raise ValueError(_whole_number_message(name, minimum, text))
        if not _INT64.min <= value <= _INT64.max:
            raise ValueError(translate("TensorTable", "'{text}' is too large for a whole number").format(text=text))
        return value
    try:
        result = float(stripped)
    except ValueError:
        raise ValueError(_not_a_number(text)) from None
    if minimum is not None and not result >= minimum:  # written so that NaN fails the test
        raise ValueError(_minimum_message(name, minimum, text))
    return result


def _minimum_message(name: str, minimum: float, text: str) -> str:
    return translate("TensorTable", "{name} must be ≥ {bound}, got '{text}'").format(
        name=name, bound=_fmt_bound(minimum), text=text
    )


def _cells(n: int) -> str:
    if n == 1:
        return translate("TensorTable", "{n} cell").format(n=n)
    return translate("TensorTable", "{n} cells").format(n=n)


def _split_cells(line: str, separator: str | None) -> list[str]:
    if separator is None:
        return line.split()
    return line.split(separator)


def parse_block(text: str, integer: bool = False, minimum: float | None = None, name: str | None = None) -> np.ndarray:
    """Parse clipboard text into a 2-D array: int64 when ``integer``, else float64.

    Rows are separated by newlines (``\\n``, ``\\r\\n`` or ``\\r``) and cells by tabs, which is
    what spreadsheets put on the clipboard. Text without tabs may use commas, and text without
    tabs or commas may use any whitespace, so a column copied from a text file or a NumPy
    printout also pastes. Where the locale writes decimal commas ("0,5"), cells may be written
    so and lists without tabs are separated by semicolons or whitespace instead. Trailing
    newlines are ignored. Ragged rows and bad cells raise ``ValueError`` naming the 1-based row
    and column of the pasted block.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    if not normalized.strip():
        raise ValueError(translate("TensorTable", "there is nothing to paste"))
    separator: str | None
    if "\t" in normalized:
        separator = "\t"
    elif uses_decimal_comma():
        # Commas are decimals here; lists use semicolons (as spreadsheets in such locales do).
        separator = ";" if ";" in normalized else None
    elif "," in normalized:
        separator = ","
    else:
        separator = None
    rows = [_split_cells(line, separator) for line in normalized.split("\n")]
    width = len(rows[0])
    for r, cells in enumerate(rows, start=1):
        problem = None
        if separator is None and not cells:
            problem = translate("TensorTable", "row {r} is empty").format(r=r)
        elif len(cells) != width:
            problem = translate(
                "TensorTable", "rows have different lengths: row {r} has {cells}, row 1 has {first}"
            ).format(r=r, cells=_cells(len(cells)), first=_cells(width))
        if problem is not None:
            _parse_cells(rows[: r - 1], integer, minimum, name)  # a bad cell above is reported first
            raise ValueError(problem)
    if not integer:
        fast = _floats(rows, width, minimum, any(sign in normalized for sign in _MINUS_SIGNS_TEXT))
        if fast is not None:
            return fast
    return np.array(_parse_cells(rows, integer, minimum, name), dtype=np.int64 if integer else np.float64)


def _parse_cells(
    rows: list[list[str]], integer: bool, minimum: float | None, name: str | None
) -> list[list[float | int]]:
    """``parse_value`` of every cell; the first bad one raises, naming its row and column."""
    parsed: list[list[float | int]] = []
    for r, cells in enumerate(rows, start=1):
        row: list[float | int] = []
        for c, cell in enumerate(cells, start=1):
            try:
                row.append(parse_value(cell, integer, minimum, name))
            except ValueError as err:
                raise ValueError(
                    translate("TensorTable", "row {r}, column {c}: {error}").format(r=r, c=c, error=err)
                ) from None
        parsed.append(row)
    return parsed


def _floats(rows: list[list[str]], width: int, minimum: float | None, minus_signs: bool) -> np.ndarray | None:
    """The cells as a (rows, width) float64 array, each read exactly as ``parse_value`` reads it,
    or None when some cell is not a number ``parse_value`` takes (``_parse_cells`` then says which).

    ``parse_value`` costs about 1.5 µs a cell, most of it in its per-cell clean-up: a 500 x 500
    paste blocked the window for 0.4-1.1 s. Here the clean-up is done only where it is needed
    (``minus_signs``: the text has typographic minus signs) and the minimum is checked on the array.
    """
    cells = [cell for row in rows for cell in row]
    if minus_signs:
        cells = [cell.translate(_MINUS_SIGNS) for cell in cells]
    if uses_decimal_comma():
        cells = [_decimal_point(cell) if "," in cell else cell for cell in cells]
    try:
        values = np.array(list(map(float, cells)), dtype=np.float64)  # float() skips surrounding spaces
    except ValueError:
        return None
    if minimum is not None and not bool((values >= minimum).all()):  # NaN fails, as in parse_value
        return None
    return values.reshape(len(rows), width)


def _decimal_point(cell: str) -> str:
    stripped = cell.strip()
    return stripped.replace(",", ".") if _DECIMAL_COMMA_NUMBER.fullmatch(stripped) else cell


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def format_full(value: Any, integer: bool = False) -> str:
    """Text that parses back to exactly ``value`` in its own dtype.

    ``str`` of a NumPy scalar is the shortest text that round-trips in that dtype, so a float32
    0.1 reads "0.1" rather than "0.10000000149011612" and still comes back bit-identical.
    """
    if integer or isinstance(value, (int, np.integer, bool, np.bool_)):
        as_float = float(value)
        if math.isfinite(as_float) and as_float.is_integer():
            return str(int(value))
    if isinstance(value, np.floating):
        return str(value)
    return repr(float(value))


def _format_compact(value: float | int, integer: bool) -> str:
    if isinstance(value, (bool, int)):
        return str(int(value))
    if math.isnan(value):
        return "NaN"
    if integer and value.is_integer():  # integer table stored as floats: show 3, not 3.0
        return str(int(value))
    return f"{value:.4g}"  # also gives "inf" and "-inf"


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

    @property
    def integer(self) -> bool:
        """True when cells must hold whole numbers (by option or because the dtype is integral)."""
        return self._integer

    @property
    def minimum(self) -> float | None:
        return self._minimum

    @property
    def value_name(self) -> str:
        """How messages name a cell's value, in the current language."""
        return tr_text(self._value_name)

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
            return _format_compact(self._array.item(row, col), self._integer)
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
            parsed = parse_value(text, self._integer, self._minimum, self.value_name)
        except ValueError as err:
            self.inputRejected.emit(str(err))
            return False
        dtype = np.int64 if isinstance(parsed, int) else np.float64
        return self.request_edit(index.row(), index.column(), np.array([[parsed]], dtype=dtype))

    # ---- edits ------------------------------------------------------------------------------

    def _value_problem(self, value: float | int) -> str | None:
        """Why ``value`` cannot be stored, or None. Used on edits that did not come as text."""
        text = format_full(value)
        if self._integer and not float(value).is_integer():
            return _whole_number_message(self.value_name, self._minimum, text)
        if self._minimum is not None and not value >= self._minimum:
            if self._integer:
                return _whole_number_message(self.value_name, self._minimum, text)
            return _minimum_message(self.value_name, self._minimum, text)
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
        row_height = self.fontMetrics().height() + 6
        vertical = self.verticalHeader()
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setMinimumSectionSize(row_height)
        vertical.setDefaultSectionSize(row_height)
        horizontal = self.horizontalHeader()
        horizontal.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        horizontal.setDefaultSectionSize(self.fontMetrics().horizontalAdvance("-0.0000e+00") + 12)
        #: What this table holds, said before the help in its tooltip (a marked source).
        self.tip_prefix: str | None = None
        self.retranslate()
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._show_context_menu)
        if model is not None:
            self.setModel(model)

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

    def copy_selection(self) -> bool:
        """Copy the selection's bounding box (or the current cell) to the clipboard as TSV."""
        model = self.array_model()
        if model is None:
            return False
        bounds = self.selected_bounds()
        if bounds is None:
            current = self.currentIndex()
            if not current.isValid():
                return False
            bounds = (current.row(), current.column(), current.row(), current.column())
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
            block = parse_block(text, model.integer, model.minimum, model.value_name)
        except ValueError as err:
            model.inputRejected.emit(translate("TensorTable", "cannot paste: {error}").format(error=err))
            return False
        bounds = self.selected_bounds()
        if bounds is None:
            current = self.currentIndex()
            if not current.isValid():
                model.inputRejected.emit(translate("TensorTable", "select a cell to paste into"))
                return False
            bounds = (current.row(), current.column(), current.row(), current.column())
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
        model = self.array_model()
        if model is None:
            return False
        bounds = self.selected_bounds()
        if bounds is None:
            return False
        top, left, bottom, right = bounds
        mask = self._selection_mask(top, left, bottom, right)
        fill: float = 0
        if model.minimum is not None and model.minimum > 0:
            fill = math.ceil(model.minimum) if model.integer else model.minimum
        values = np.full(mask.shape, fill, dtype=np.int64 if model.integer else np.float64)
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
