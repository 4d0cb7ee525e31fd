"""Tests for the numpy-backed tensor table model and view."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QLineEdit  # noqa: E402

from attnviz.text.numbers import format_full, parse_block  # noqa: E402
from attnviz.ui.tables.tensor_table import ArrayTableModel, TensorTableView  # noqa: E402

DISPLAY = Qt.ItemDataRole.DisplayRole
EDIT = Qt.ItemDataRole.EditRole
TOOLTIP = Qt.ItemDataRole.ToolTipRole
ALIGN = Qt.ItemDataRole.TextAlignmentRole


class Recorder:
    """Collects every emission of a signal so tests can assert on count and content."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any) -> None:
        self.calls.append(args)


def float_model(**kwargs: Any) -> ArrayTableModel:
    arr = np.arange(12, dtype=np.float64).reshape(3, 4) / 8
    return ArrayTableModel(arr, row_label=lambda i: f"q{i}", column_label=lambda i: f"d{i}", **kwargs)


def length_model() -> ArrayTableModel:
    return ArrayTableModel(
        np.array([[3, 5], [1, 0]], dtype=np.int64),
        integer=True,
        minimum=0,
        value_name="valid length",
    )


def connect(model: ArrayTableModel) -> tuple[Recorder, Recorder]:
    edits, rejects = Recorder(), Recorder()
    model.blockEdited.connect(edits)
    model.inputRejected.connect(rejects)
    return edits, rejects


def select(view: TensorTableView, top: int, left: int, bottom: int, right: int) -> None:
    model = view.model()
    view.setCurrentIndex(model.index(top, left))
    view.selectionModel().select(
        QItemSelection(model.index(top, left), model.index(bottom, right)),
        QItemSelectionModel.SelectionFlag.ClearAndSelect,
    )


def show_and_focus(view: TensorTableView, qtbot: Any) -> None:
    """Keyboard editing needs a shown, active window so the editor can take focus."""
    view.show()
    qtbot.waitExposed(view)
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)


@pytest.fixture
def view(qtbot: Any) -> TensorTableView:
    widget = TensorTableView(float_model())
    qtbot.addWidget(widget)
    widget.resize(500, 300)
    return widget


# ---- model contract ----------------------------------------------------------------------------


def test_modeltester_float(qtmodeltester: Any) -> None:
    qtmodeltester.check(float_model())


def test_modeltester_integer(qtmodeltester: Any) -> None:
    qtmodeltester.check(length_model())


def test_modeltester_empty(qtmodeltester: Any) -> None:
    model = ArrayTableModel(np.zeros((0, 5)))
    assert model.rowCount() == 0
    assert model.columnCount() == 5
    qtmodeltester.check(model)


def test_modeltester_after_set_array(qtmodeltester: Any) -> None:
    model = float_model()
    model.set_array(np.ones((2, 7)))
    qtmodeltester.check(model)


# ---- display -----------------------------------------------------------------------------------


def test_roles_and_labels() -> None:
    arr = np.array([[1 / 3, np.nan], [np.inf, -np.inf]])
    model = ArrayTableModel(arr, row_label=lambda i: f"q{i}", column_label=lambda i: f"k{i}")
    assert model.data(model.index(0, 0), DISPLAY) == "0.3333"
    assert model.data(model.index(0, 0), EDIT) == repr(1 / 3)
    assert float(model.data(model.index(0, 0), EDIT)) == arr[0, 0]
    assert model.data(model.index(0, 1), DISPLAY) == "NaN"
    assert model.data(model.index(1, 0), DISPLAY) == "inf"
    assert model.data(model.index(1, 1), DISPLAY) == "-inf"
    tip = model.data(model.index(0, 0), TOOLTIP)
    assert "q0" in tip and "k0" in tip and repr(1 / 3) in tip
    align = Qt.AlignmentFlag(model.data(model.index(0, 0), ALIGN))
    assert align & Qt.AlignmentFlag.AlignRight
    assert model.headerData(1, Qt.Orientation.Horizontal, DISPLAY) == "k1"
    assert model.headerData(1, Qt.Orientation.Vertical, DISPLAY) == "q1"
    flags = model.flags(model.index(0, 0))
    assert flags & Qt.ItemFlag.ItemIsEditable
    assert flags & Qt.ItemFlag.ItemIsSelectable
    assert flags & Qt.ItemFlag.ItemIsEnabled


def test_default_labels_and_integer_display() -> None:
    model = length_model()
    assert model.headerData(0, Qt.Orientation.Horizontal, DISPLAY) == "0"
    assert model.headerData(1, Qt.Orientation.Vertical, DISPLAY) == "1"
    assert model.data(model.index(0, 1), DISPLAY) == "5"
    assert model.data(model.index(0, 1), EDIT) == "5"
    # An integer table stored as floats still shows whole numbers without ".0".
    as_float = ArrayTableModel(np.array([[3.0]], dtype=np.float32), integer=True)
    assert as_float.data(as_float.index(0, 0), DISPLAY) == "3"


def test_float32_edit_text_round_trips_exactly() -> None:
    arr = np.array([[0.1, 1e-30, 3.4e38]], dtype=np.float32)
    model = ArrayTableModel(arr)
    assert model.data(model.index(0, 0), EDIT) == "0.1"
    for c in range(3):
        text = model.data(model.index(0, c), EDIT)
        assert np.float32(float(text)) == arr[0, c]
    assert format_full(np.float64(0.1)) == "0.1"


def test_set_array_same_shape_keeps_model_and_emits_data_changed(qtbot: Any) -> None:
    model = float_model()
    resets, changes = Recorder(), Recorder()
    model.modelReset.connect(resets)
    model.dataChanged.connect(changes)
    new = np.full((3, 4), 2.0)
    new.setflags(write=False)  # the document may hand over read-only arrays
    model.set_array(new)
    assert model.array() is new
    assert resets.calls == []
    assert len(changes.calls) == 1
    top_left, bottom_right = changes.calls[0][0], changes.calls[0][1]
    assert (top_left.row(), top_left.column()) == (0, 0)
    assert (bottom_right.row(), bottom_right.column()) == (2, 3)
    assert model.data(model.index(2, 3), DISPLAY) == "2"


def test_set_array_new_shape_resets() -> None:
    model = float_model()
    resets = Recorder()
    model.modelReset.connect(resets)
    model.set_array(np.zeros((5, 2)))
    assert len(resets.calls) == 1
    assert (model.rowCount(), model.columnCount()) == (5, 2)


def test_set_array_rejects_non_2d() -> None:
    model = float_model()
    with pytest.raises(ValueError):
        model.set_array(np.zeros(3))
    assert model.array().shape == (3, 4)


# ---- setData -----------------------------------------------------------------------------------


def test_set_data_emits_block_and_leaves_array_alone() -> None:
    model = float_model()
    before = model.array().copy()
    edits, rejects = connect(model)
    assert model.setData(model.index(1, 2), "2.75", EDIT) is True
    assert len(edits.calls) == 1
    row, col, block = edits.calls[0]
    assert (row, col) == (1, 2)
    assert block.shape == (1, 1)
    assert block[0, 0] == 2.75
    assert rejects.calls == []
    np.testing.assert_array_equal(model.array(), before)


def test_set_data_accepts_nan_and_inf_for_floats() -> None:
    model = float_model()
    edits, _ = connect(model)
    assert model.setData(model.index(0, 0), "nan", EDIT)
    assert model.setData(model.index(0, 1), "-inf", EDIT)
    assert np.isnan(edits.calls[0][2][0, 0])
    assert edits.calls[1][2][0, 0] == -np.inf


def test_set_data_same_value_emits_nothing() -> None:
    model = float_model()
    edits, _ = connect(model)
    text = model.data(model.index(1, 1), EDIT)
    assert model.setData(model.index(1, 1), text, EDIT) is True
    assert edits.calls == []


@pytest.mark.parametrize("text", ["abc", "", "1,2.3", "1 2"])
def test_set_data_rejects_non_numbers(text: str) -> None:
    model = float_model()
    before = model.array().copy()
    edits, rejects = connect(model)
    assert model.setData(model.index(0, 0), text, EDIT) is False
    assert edits.calls == []
    assert len(rejects.calls) == 1
    assert "not a number" in rejects.calls[0][0]
    np.testing.assert_array_equal(model.array(), before)


def test_set_data_message_quotes_the_text() -> None:
    model = float_model()
    _, rejects = connect(model)
    model.setData(model.index(0, 0), "abc", EDIT)
    assert rejects.calls == [("'abc' is not a number",)]


@pytest.mark.parametrize("text", ["2.5", "-1", "nan", "inf"])
def test_integer_model_rejects(text: str) -> None:
    model = length_model()
    edits, rejects = connect(model)
    assert model.setData(model.index(0, 0), text, EDIT) is False
    assert edits.calls == []
    assert rejects.calls == [(f"valid length must be a whole number ≥ 0, got '{text}'",)]


def test_integer_model_accepts_whole_numbers() -> None:
    model = length_model()
    edits, _ = connect(model)
    assert model.setData(model.index(1, 1), "7", EDIT)
    assert model.setData(model.index(1, 0), "4.0", EDIT)
    assert [(r, c, b.tolist()) for r, c, b in edits.calls] == [(1, 1, [[7]]), (1, 0, [[4]])]
    assert edits.calls[0][2].dtype == np.int64


def test_integer_dtype_range_is_checked() -> None:
    model = ArrayTableModel(np.zeros((1, 1), dtype=np.uint8))
    edits, rejects = connect(model)
    assert model.setData(model.index(0, 0), "300", EDIT) is False
    assert edits.calls == []
    assert "uint8" in rejects.calls[0][0]


def test_float_model_minimum() -> None:
    model = ArrayTableModel(np.zeros((1, 1)), minimum=0.5, value_name="temperature")
    edits, rejects = connect(model)
    assert model.setData(model.index(0, 0), "0.25", EDIT) is False
    assert rejects.calls == [("temperature must be ≥ 0.5, got '0.25'",)]
    assert model.setData(model.index(0, 0), "0.5", EDIT) is True
    assert edits.calls[0][2][0, 0] == 0.5


# ---- view: copy / paste / delete ---------------------------------------------------------------


def test_copy_selection_puts_full_precision_tsv_on_clipboard(view: TensorTableView, qtbot: Any) -> None:
    model = view.model()
    assert isinstance(model, ArrayTableModel)
    arr = np.array([[0.1, 1 / 3, 2.0], [np.nan, -1e-300, 5.0]])
    model.set_array(arr)
    select(view, 0, 1, 1, 2)
    QApplication.clipboard().clear()
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    text = QApplication.clipboard().text()
    assert text == f"{1 / 3!r}\t2.0\n-1e-300\t5.0"
    np.testing.assert_array_equal(parse_block(text), arr[0:2, 1:3])


def test_copy_uses_bounding_box_of_disjoint_selection(view: TensorTableView) -> None:
    model = view.model()
    model.set_array(np.arange(12, dtype=np.float64).reshape(3, 4))
    select(view, 0, 0, 0, 0)
    view.selectionModel().select(model.index(2, 2), QItemSelectionModel.SelectionFlag.Select)
    assert view.copy_selection()
    assert QApplication.clipboard().text() == "0.0\t1.0\t2.0\n4.0\t5.0\t6.0\n8.0\t9.0\t10.0"


def test_copy_integer_model() -> None:
    model = length_model()
    assert model.block_text(0, 0, 1, 1) == "3\t5\n1\t0"


def test_paste_is_one_block_edit_at_current_cell(view: TensorTableView, qtbot: Any) -> None:
    model = view.model()
    before = model.array().copy()
    edits, rejects = connect(model)
    select(view, 1, 1, 1, 1)
    QApplication.clipboard().setText("1\t2\n3\t4\n")
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert rejects.calls == []
    assert len(edits.calls) == 1
    row, col, block = edits.calls[0]
    assert (row, col) == (1, 1)
    np.testing.assert_array_equal(block, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(model.array(), before)  # the owner applies it, not the model


def test_paste_is_clipped_to_the_table(view: TensorTableView) -> None:
    model = view.model()  # 3x4
    edits, rejects = connect(model)
    messages = Recorder()
    view.message.connect(messages)
    select(view, 2, 2, 2, 2)
    assert view.paste("1\t2\t3\n4\t5\t6\n")
    assert len(edits.calls) == 1
    row, col, block = edits.calls[0]
    assert (row, col) == (2, 2)
    np.testing.assert_array_equal(block, [[1, 2]])
    assert len(messages.calls) == 1
    assert "2×3" in messages.calls[0][0] and "1×2" in messages.calls[0][0]
    assert rejects.calls == []


def test_paste_parse_error_changes_nothing(view: TensorTableView) -> None:
    model = view.model()
    edits, rejects = connect(model)
    select(view, 0, 0, 0, 0)
    QApplication.clipboard().setText("1\t2\n3\tx\n")
    assert view.paste() is False
    assert edits.calls == []
    assert len(rejects.calls) == 1
    assert "row 2, column 2" in rejects.calls[0][0]


def test_paste_single_value_fills_selection(view: TensorTableView) -> None:
    model = view.model()
    edits, _ = connect(model)
    select(view, 0, 1, 1, 2)
    assert view.paste("9")
    assert len(edits.calls) == 1
    row, col, block = edits.calls[0]
    assert (row, col) == (0, 1)
    np.testing.assert_array_equal(block, np.full((2, 2), 9.0))


def test_paste_single_value_into_disjoint_selection_keeps_other_cells(
    view: TensorTableView,
) -> None:
    model = view.model()
    model.set_array(np.arange(12, dtype=np.float64).reshape(3, 4))
    edits, _ = connect(model)
    select(view, 0, 0, 0, 0)
    view.selectionModel().select(model.index(1, 1), QItemSelectionModel.SelectionFlag.Select)
    assert view.paste("-1")
    assert len(edits.calls) == 1
    row, col, block = edits.calls[0]
    assert (row, col) == (0, 0)
    np.testing.assert_array_equal(block, [[-1, 1], [4, -1]])


def test_paste_into_integer_model_validates(qtbot: Any) -> None:
    model = length_model()
    view = TensorTableView(model)
    qtbot.addWidget(view)
    edits, rejects = connect(model)
    select(view, 0, 0, 0, 0)
    assert view.paste("1\t-2\n") is False
    assert edits.calls == []
    assert "≥ 0" in rejects.calls[0][0]
    assert view.paste("1\t2\n")
    assert edits.calls[0][2].tolist() == [[1, 2]]


def test_delete_zeroes_selection_as_one_edit(view: TensorTableView, qtbot: Any) -> None:
    model = view.model()
    model.set_array(np.ones((3, 4)))
    edits, _ = connect(model)
    select(view, 1, 0, 2, 2)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert len(edits.calls) == 1
    row, col, block = edits.calls[0]
    assert (row, col) == (1, 0)
    np.testing.assert_array_equal(block, np.zeros((2, 3)))


# ---- view: keyboard editing --------------------------------------------------------------------


def test_edit_triggers_and_layout(view: TensorTableView) -> None:
    triggers = view.editTriggers()
    for trigger in (
        view.EditTrigger.AnyKeyPressed,
        view.EditTrigger.EditKeyPressed,
        view.EditTrigger.DoubleClicked,
    ):
        assert triggers & trigger
    from PySide6.QtWidgets import QHeaderView

    assert view.verticalHeader().sectionResizeMode(0) == QHeaderView.ResizeMode.Fixed
    assert "Ctrl+V" in view.toolTip()


def test_typing_edits_and_enter_moves_down(view: TensorTableView, qtbot: Any) -> None:
    model = view.model()
    edits, _ = connect(model)
    show_and_focus(view, qtbot)
    view.setCurrentIndex(model.index(0, 1))
    # The first key opens the editor and is forwarded to it; later keys go to the editor,
    # which has focus by then (QTest sends to the widget named, not the focus widget).
    qtbot.keyClicks(view, "4")
    editor = QApplication.focusWidget()
    assert isinstance(editor, QLineEdit)
    qtbot.keyClicks(editor, "2")
    assert editor.text() == "42"
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(edits.calls) == 1)
    row, col, block = edits.calls[0]
    assert (row, col) == (0, 1)
    assert block.tolist() == [[42.0]]
    qtbot.waitUntil(lambda: view.currentIndex().row() == 1)
    qtbot.wait(50)  # give a stray second move a chance to show up
    assert (view.currentIndex().row(), view.currentIndex().column()) == (1, 1)
    assert view.state() != view.State.EditingState


def test_enter_without_editing_moves_down(view: TensorTableView, qtbot: Any) -> None:
    model = view.model()
    show_and_focus(view, qtbot)
    view.setCurrentIndex(model.index(1, 2))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert (view.currentIndex().row(), view.currentIndex().column()) == (2, 2)
    qtbot.keyClick(view, Qt.Key.Key_Return)  # last row: stays put
    assert view.currentIndex().row() == 2


def test_tab_moves_to_next_cell_after_edit(view: TensorTableView, qtbot: Any) -> None:
    model = view.model()
    edits, _ = connect(model)
    show_and_focus(view, qtbot)
    view.setCurrentIndex(model.index(0, 0))
    qtbot.keyClicks(view, "7")
    editor = QApplication.focusWidget()
    assert isinstance(editor, QLineEdit)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: len(edits.calls) == 1)
    assert edits.calls[0][:2] == (0, 0)
    qtbot.waitUntil(lambda: view.currentIndex().column() == 1)
    assert view.currentIndex().row() == 0


def test_context_menu_has_actions(view: TensorTableView) -> None:
    menu = view.build_context_menu()
    texts = [a.text() for a in menu.actions()]
    assert any(t.startswith("Copy") for t in texts)
    assert any(t.startswith("Paste") for t in texts)


# ---- scale -------------------------------------------------------------------------------------


def test_large_model_builds_and_reads(qtbot: Any) -> None:
    rng = np.random.default_rng(0)
    arr = rng.standard_normal((1024, 1024)).astype(np.float32)
    model = ArrayTableModel(arr, row_label=lambda i: f"q{i}", column_label=lambda i: f"k{i}")
    view = TensorTableView(model)
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    assert (model.rowCount(), model.columnCount()) == (1024, 1024)
    for r, c in [(0, 0), (511, 7), (1023, 1023)]:
        assert np.float32(model.data(model.index(r, c), EDIT)) == arr[r, c]
        assert model.data(model.index(r, c), DISPLAY) == f"{float(arr[r, c]):.4g}"
    assert model.headerData(1023, Qt.Orientation.Vertical, DISPLAY) == "q1023"
    view.selectAll()
    assert view.selected_bounds() == (0, 0, 1023, 1023)
    edits, _ = connect(model)
    model.set_array(arr + 1)
    view.scrollTo(model.index(1000, 1000))
    assert view.selected_bounds() == (0, 0, 1023, 1023)  # same shape: selection survives
    assert edits.calls == []


@pytest.fixture
def decimal_comma_locale():
    from PySide6.QtCore import QLocale

    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.Portuguese, QLocale.Country.Brazil))
    yield
    QLocale.setDefault(before)


def test_decimal_commas_are_read_where_the_locale_writes_them(decimal_comma_locale, view: TensorTableView) -> None:
    """The table tells the Qt-free reader (number_text) what the locale writes."""
    model = view.model()
    edits, rejects = connect(model)
    assert model.setData(model.index(0, 0), "0,5", EDIT) is True
    assert model.setData(model.index(0, 1), "1,000", EDIT) is True  # in Brazil that is one, not a thousand
    select(view, 1, 0, 1, 0)
    assert view.paste("0,5;0,25")  # text lists use semicolons where commas are decimals
    assert [call[2].tolist() for call in edits.calls] == [[[0.5]], [[1.0]], [[0.5, 0.25]]] and rejects.calls == []


def test_commas_separate_cells_where_the_locale_writes_decimal_points(view: TensorTableView) -> None:
    from PySide6.QtCore import QLocale

    assert QLocale().decimalPoint() == "."
    model = view.model()
    edits, rejects = connect(model)
    assert model.setData(model.index(0, 0), "0,5", EDIT) is False
    assert rejects.calls == [("'0,5' is not a number",)]
    select(view, 1, 0, 1, 0)
    assert view.paste("0.5,0.25")
    assert [call[2].tolist() for call in edits.calls] == [[[0.5, 0.25]]]


def test_a_refused_paste_is_said_in_the_current_language(qapp, view: TensorTableView) -> None:
    from attnviz.ui.i18n import install_language

    model = view.model()
    _edits, rejects = connect(model)
    select(view, 0, 0, 0, 0)
    assert install_language(qapp, "pt_BR")
    try:
        assert not view.paste("1\tx")
    finally:
        install_language(qapp, "en")
    assert not view.paste("1\tx")
    portuguese, english = (call[0] for call in rejects.calls)
    assert english == "cannot paste: row 1, column 2: 'x' is not a number"
    assert "'x'" in portuguese and "not a number" not in portuguese and "cannot paste" not in portuguese
