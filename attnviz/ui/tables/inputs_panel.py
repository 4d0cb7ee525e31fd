"""The tensors as tables: one tab each for queries, keys, values and valid lengths."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute.axes import short_token
from attnviz.state import catalog
from attnviz.state.document import FILL_KINDS, State, table_view, table_view_of
from attnviz.state.run import Focus, HeadView
from attnviz.state.settings import INT_MAX
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.flow_layout import flow_widget
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.labels import ErrorLabel
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.tables.tensor_table import ArrayTableModel, TensorTableView

#: The fill kinds as the combo box shows them.
FILL_LABELS = {
    "random": QT_TRANSLATE_NOOP("InputsPanel", "Random"),
    "zeros": QT_TRANSLATE_NOOP("InputsPanel", "Zeros"),
    "ones": QT_TRANSLATE_NOOP("InputsPanel", "Ones"),
    "arange": QT_TRANSLATE_NOOP("InputsPanel", "Arange (book's values)"),
}
#: The tabs: the inputs as the catalogue declares them (title, tooltip, how a cell is named).
ROLES: tuple[str, ...] = tuple(catalog.ROLES)


def _pair(caption: QLabel, field: QWidget) -> QWidget:
    """A caption and its field kept together on one line of a wrapping row."""
    pair = QWidget()
    layout = QHBoxLayout(pair)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(caption)
    layout.addWidget(field)
    return pair


def _batch_label(row: int) -> str:
    return translate("InputsPanel", "batch {index}").format(index=row)


def _length_label(_column: int) -> str:
    return translate("InputsPanel", "length")


class InputsPanel(Retranslating, QWidget):
    """Signals: ``blockEdited(role, batch, row, col, block)``, ``fillRequested(role, kind, seed)``,
    ``batchChanged(int)`` (the user picked another batch element), ``message(str)`` (for the
    status bar)."""

    blockEdited = Signal(str, int, int, int, object)
    fillRequested = Signal(str, str, int)
    batchChanged = Signal(int)
    focusChanged = Signal(int, int)
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        self.batch = QSpinBox()
        self.batch.valueChanged.connect(self.batchChanged.emit)
        self.batch_caption = QLabel()
        self.batch_caption.setBuddy(self.batch)
        self.fill_kind = QComboBox()
        for kind in FILL_KINDS:
            self.fill_kind.addItem("", kind)
        # As wide as a short name needs, not the longest ("Arange (book's values)"): the row must
        # fit a 1024-pixel screen beside the controls; the open list shows the whole names.
        self.fill_kind.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.fill_kind.setMinimumContentsLength(7)
        self.fill_seed = QSpinBox()
        self.fill_seed.setRange(0, INT_MAX)
        self.fill_seed.setMaximumWidth(self.fill_seed.fontMetrics().horizontalAdvance("0000000") + 40)
        self.fill_button = QPushButton()
        self.fill_button.clicked.connect(self._fill)
        self.seed_caption = QLabel()
        self.seed_caption.setBuddy(self.fill_seed)
        # A model's call (layer) and head, beside the batch element: shown when there is a choice.
        self.layer = QComboBox()
        self.layer.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.layer.setMinimumContentsLength(10)
        self.layer_caption = QLabel()
        self.layer_caption.setBuddy(self.layer)
        self.head = QSpinBox()
        self.head_caption = QLabel()
        self.head_caption.setBuddy(self.head)
        self.layer.currentIndexChanged.connect(lambda _i: self._focus_edited())
        self.head.valueChanged.connect(lambda _v: self._focus_edited())
        self._layer_pair = _pair(self.layer_caption, self.layer)
        self._head_pair = _pair(self.head_caption, self.head)
        self._run_names: tuple[str, ...] = ()
        # One row when there is room, two beside a narrow window: the fill controls wrap under
        # the batch selector rather than make the window wider.
        layout.addWidget(
            flow_widget(
                _pair(self.batch_caption, self.batch),
                self._layer_pair,
                self._head_pair,
                self.fill_kind,
                _pair(self.seed_caption, self.fill_seed),
                self.fill_button,
            )
        )
        self._layer_pair.setVisible(False)
        self._head_pair.setVisible(False)

        self.error = ErrorLabel()
        # Its line is held while it is hidden: appearing, it pushed the tables down by a line,
        # and the click that followed landed on the cell below the one aimed at. One line, the
        # whole message in its tooltip too.
        self.error.setWordWrap(False)
        policy = self.error.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.error.setSizePolicy(policy)
        self._hold_error_line()
        layout.addWidget(self.error)

        self.tabs = QTabWidget()
        self.models: dict[str, ArrayTableModel] = {}
        self.views: dict[str, TensorTableView] = {}
        labels = {
            "queries": (lambda r: f"q{r}", lambda c: f"d{c}"),
            "keys": (lambda r: f"k{r}", lambda c: f"d{c}"),
            "values": (lambda r: f"k{r}", lambda c: f"d{c}"),
        }
        for role in ROLES:
            if role == "valid_lens":
                model = ArrayTableModel(
                    integer=True,
                    minimum=0,
                    value_name=catalog.ROLES[role].value_name,
                    row_label=_batch_label,
                    column_label=_length_label,
                )
            else:
                row_label, column_label = labels[role]
                model = ArrayTableModel(
                    row_label=row_label, column_label=column_label, value_name=catalog.ROLES[role].value_name
                )
            view = TensorTableView(model)
            view.tip_prefix = catalog.ROLES[role].tip
            model.blockEdited.connect(
                lambda r, c, block, role=role: self.blockEdited.emit(role, self.batch.value(), r, c, block)
            )
            model.inputRejected.connect(self._rejected)
            view.message.connect(self.message.emit)
            self.models[role] = model
            self.views[role] = view
            self.tabs.addTab(view, "")
        self.tabs.currentChanged.connect(lambda _i: self._update_fill_enabled())
        layout.addWidget(self.tabs, 1)
        self._lens_mode = "1d"
        self.retranslate()

    def retranslate(self) -> None:
        self.batch.setToolTip(
            translate("InputsPanel", "Batch element shown in the tables and highlighted in the results")
        )
        self.batch_caption.setText(translate("InputsPanel", "Batch &element"))
        for index, kind in enumerate(FILL_KINDS):
            self.fill_kind.setItemText(index, tr_text(FILL_LABELS.get(kind, kind)))
        self.fill_kind.setToolTip(
            translate("InputsPanel", "What to fill the current tensor with (every batch element)")
        )
        self.fill_seed.setToolTip(
            translate("InputsPanel", "Seed of the random fill, so the same seed gives the same values")
        )
        self.fill_button.setText(translate("InputsPanel", "&Fill"))
        self.fill_button.setToolTip(translate("InputsPanel", "Fill the tensor of the current tab (one undoable edit)"))
        self.seed_caption.setText(translate("InputsPanel", "s&eed"))
        self.layer_caption.setText(translate("InputsPanel", "La&yer"))
        self.layer.setToolTip(translate("InputsPanel", "The model's attention call shown (a layer, in call order)"))
        self.head_caption.setText(translate("InputsPanel", "&Head"))
        self.head.setToolTip(
            translate(
                "InputsPanel", "The attention head shown in the tables and every view; the Heads tab shows them all"
            )
        )
        self.tabs.setToolTip(
            translate("InputsPanel", "The input tensors; type, paste (Ctrl+V) or copy (Ctrl+C) blocks of cells")
        )
        for index, role in enumerate(ROLES):
            self.tabs.setTabText(index, tr_text(catalog.ROLES[role].label))
        self._update_lens_tab_tip()
        for model in self.models.values():
            model.refresh_headers()  # headers such as "batch 0"

    def _focus_edited(self) -> None:
        if self._run_names:
            self.focusChanged.emit(max(0, self.layer.currentIndex()), self.head.value())

    def _show_focus(self, state: State, focus: Focus) -> None:
        """The layer and head pickers follow the head on show (hidden when there is one call, or
        one head: the book's input)."""
        run = state.run
        self._layer_pair.setVisible(run.layers > 1)
        self._head_pair.setVisible(not run.single_head)
        with QSignalBlocker(self.layer), QSignalBlocker(self.head):
            names = tuple(call.name for call in run.calls)
            if names != self._run_names:
                self._run_names = names
                self.layer.clear()
                for index, short in enumerate(run.short_names()):
                    self.layer.addItem(short)
                    self.layer.setItemData(index, names[index], Qt.ItemDataRole.ToolTipRole)
            if self.layer.currentIndex() != focus.layer:
                self.layer.setCurrentIndex(focus.layer)
            heads = run.heads(focus.layer)
            if self.head.maximum() != heads - 1:
                self.head.setRange(0, heads - 1)
            if self.head.value() != focus.head:
                self.head.setValue(focus.head)

    def _show_tokens(self, view: HeadView, batch: int) -> None:
        """Row headers of Q, K and V: the tokens when there are tokens (index and token)."""
        queries, keys = view.tokens(batch) if batch < view.batch else (None, None)
        key = (queries, keys)
        if key == getattr(self, "_tokens_shown", (None, None)):
            return
        self._tokens_shown = key

        def labels(prefix: str, tokens: list[str] | None) -> Callable[[int], str]:
            if tokens is None:
                return lambda r: f"{prefix}{r}"
            return lambda r: f"{r} {short_token(tokens[r])}" if r < len(tokens) else f"{prefix}{r}"

        self.models["queries"].set_labels(row_label=labels("q", queries), column_label=lambda c: f"d{c}")
        for role in ("keys", "values"):
            self.models[role].set_labels(row_label=labels("k", keys), column_label=lambda c: f"d{c}")

    def current_role(self) -> str:
        return list(self.views)[self.tabs.currentIndex()]

    def _fill(self) -> None:
        role = self.current_role()
        if role != "valid_lens":
            self.fillRequested.emit(role, self.fill_kind.currentData(), self.fill_seed.value())

    def _update_fill_enabled(self) -> None:
        self.fill_button.setEnabled(self.current_role() != "valid_lens")
        self.fill_kind.setEnabled(self.current_role() != "valid_lens")

    def _rejected(self, text: str) -> None:
        self.error.show_message(text)
        self.message.emit(text)

    def _hold_error_line(self) -> None:
        """The message's line exactly as tall with a message as without (a bold text's line was
        a pixel taller than an empty one)."""
        self.error.setFixedHeight(QFontMetrics(self.error.font()).height() + 2 * self.error.margin() + 2)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._hold_error_line()

    def clear_error(self) -> None:
        self.error.show_message(None)

    def show_role(self, state: State, role: str, batch: int, focus: Focus = Focus()) -> None:
        """Show ``role``'s array of batch element ``batch`` of head ``focus`` (the other tables
        stay as they are)."""
        if role == "valid_lens" or self.batch.value() == batch:
            self.models[role].set_array(table_view(state, role, batch, focus))

    def show_state(self, state: State, batch: int, focus: Focus = Focus()) -> None:
        """Show every table of head ``focus`` of ``state`` for batch element ``batch``."""
        view = state.head_view(focus)
        with QSignalBlocker(self.batch):
            # The call's own batch (a windowed model's calls differ).
            if self.batch.maximum() != view.batch - 1:
                self.batch.setRange(0, view.batch - 1)
            if self.batch.value() != batch:
                self.batch.setValue(batch)
        self._show_focus(state, focus)
        self._show_tokens(view, batch)
        weights_only = view.weights_only
        reason = (
            translate(
                "InputsPanel",
                "this call recorded its attention weights only: there are no queries, keys or values to edit",
            )
            if weights_only
            else None
        )
        for role in ("queries", "keys", "values"):
            self.models[role].set_read_only(reason)
        self.fill_button.setEnabled(not weights_only and self.current_role() != "valid_lens")
        for role, model in self.models.items():
            model.set_array(table_view_of(state.array(role, view), role, batch))
        mode = state.settings.lens_mode
        if mode != self._lens_mode:
            self._lens_mode = mode
            lens_model = self.models["valid_lens"]
            if mode == "2d":
                lens_model.set_labels(row_label=_batch_label, column_label=lambda c: f"q{c}")
            else:
                lens_model.set_labels(row_label=_batch_label, column_label=_length_label)
        index = ROLES.index("valid_lens")
        # Only on a change: this runs at every keystroke, and setTabEnabled repaints and
        # re-lays out the whole tab bar even when nothing changes.
        if self.tabs.isTabEnabled(index) != (mode != "none"):
            self.tabs.setTabEnabled(index, mode != "none")
        self._update_lens_tab_tip()
        self._update_fill_enabled()

    def _update_lens_tab_tip(self) -> None:
        index = ROLES.index("valid_lens")
        tip = (
            tr_text(catalog.ROLES["valid_lens"].tip)
            if self._lens_mode != "none"
            else translate("InputsPanel", "Valid lengths are off: pick 1-D or 2-D under Attention > Valid lengths")
        )
        if self.tabs.tabToolTip(index) != tip:
            self.tabs.setTabToolTip(index, tip)
        for i, role in enumerate(ROLES):
            if role != "valid_lens":
                self.tabs.setTabToolTip(i, tr_text(catalog.ROLES[role].tip))
