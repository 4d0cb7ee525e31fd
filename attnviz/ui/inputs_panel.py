"""The tensors as tables: one tab each for queries, keys, values and valid lengths."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker, Signal
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

from ..document import FILL_KINDS, State, table_view
from .settings_panel import ErrorLabel
from .tensor_table import ArrayTableModel, TensorTableView

ROLE_TITLES = {"queries": "&Queries", "keys": "&Keys", "values": "&Values", "valid_lens": "Valid &lengths"}
ROLE_TIPS = {
    "queries": "Query vectors of the selected batch element: one row per query",
    "keys": "Key vectors of the selected batch element: one row per key",
    "values": "Value vectors of the selected batch element: one row per key-value pair",
    "valid_lens": "Valid lengths: keys at or past the valid length are masked",
}


class InputsPanel(QWidget):
    """Signals: ``blockEdited(role, batch, row, col, block)``, ``fillRequested(role, kind, seed)``,
    ``batchChanged(int)``, ``message(str)`` (for the status bar)."""

    blockEdited = Signal(str, int, int, int, object)
    fillRequested = Signal(str, str, int)
    batchChanged = Signal(int)
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        top = QHBoxLayout()
        self.batch = QSpinBox()
        self.batch.setToolTip("Batch element shown in the tables and highlighted in the results")
        self.batch.valueChanged.connect(self.batchChanged.emit)
        caption = QLabel("Batch &element")
        caption.setBuddy(self.batch)
        top.addWidget(caption)
        top.addWidget(self.batch)
        top.addStretch(1)
        self.fill_kind = QComboBox()
        for kind in FILL_KINDS:
            self.fill_kind.addItem(kind.capitalize() if kind != "arange" else "Arange (book's values)", kind)
        self.fill_kind.setToolTip("What to fill the current tensor with (every batch element)")
        self.fill_seed = QSpinBox()
        self.fill_seed.setRange(0, 2**31 - 1)
        self.fill_seed.setToolTip("Seed of the random fill, so the same seed gives the same values")
        self.fill_button = QPushButton("&Fill")
        self.fill_button.setToolTip("Fill the tensor of the current tab (one undoable edit)")
        self.fill_button.clicked.connect(self._fill)
        seed_caption = QLabel("s&eed")
        seed_caption.setBuddy(self.fill_seed)
        top.addWidget(self.fill_kind)
        top.addWidget(seed_caption)
        top.addWidget(self.fill_seed)
        top.addWidget(self.fill_button)
        layout.addLayout(top)

        self.error = ErrorLabel()
        layout.addWidget(self.error)

        self.tabs = QTabWidget()
        self.tabs.setToolTip("The input tensors; type, paste (Ctrl+V) or copy (Ctrl+C) blocks of cells")
        self.models: dict[str, ArrayTableModel] = {}
        self.views: dict[str, TensorTableView] = {}
        labels = {
            "queries": (lambda r: f"q{r}", lambda c: f"d{c}"),
            "keys": (lambda r: f"k{r}", lambda c: f"d{c}"),
            "values": (lambda r: f"k{r}", lambda c: f"d{c}"),
        }
        for role in ("queries", "keys", "values", "valid_lens"):
            if role == "valid_lens":
                model = ArrayTableModel(integer=True, minimum=0, value_name="valid length",
                                        row_label=lambda r: f"batch {r}", column_label=lambda c: "length")
            else:
                row_label, column_label = labels[role]
                model = ArrayTableModel(row_label=row_label, column_label=column_label, value_name=role[:-1])
            view = TensorTableView(model)
            view.setToolTip(ROLE_TIPS[role] + ". " + view.toolTip())
            model.blockEdited.connect(lambda r, c, block, role=role: self.blockEdited.emit(role, self.batch.value(), r, c, block))
            model.inputRejected.connect(self._rejected)
            view.message.connect(self.message.emit)
            self.models[role] = model
            self.views[role] = view
            self.tabs.addTab(view, ROLE_TITLES[role])
            self.tabs.setTabToolTip(self.tabs.count() - 1, ROLE_TIPS[role])
        self.tabs.currentChanged.connect(lambda _i: self._update_fill_enabled())
        layout.addWidget(self.tabs, 1)
        self._lens_mode = "1d"

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

    def clear_error(self) -> None:
        self.error.show_message(None)

    def show_state(self, state: State) -> None:
        with QSignalBlocker(self.batch):
            self.batch.setRange(0, state.batch - 1)
        b = self.batch.value()
        for role, model in self.models.items():
            model.set_array(np.array(table_view(state, role, b)))
        mode = state.settings.lens_mode
        if mode != self._lens_mode:
            self._lens_mode = mode
            lens_model = self.models["valid_lens"]
            if mode == "2d":
                lens_model.set_labels(row_label=lambda r: f"batch {r}", column_label=lambda c: f"q{c}")
            else:
                lens_model.set_labels(row_label=lambda r: f"batch {r}", column_label=lambda c: "length")
        index = list(self.views).index("valid_lens")
        self.tabs.setTabEnabled(index, mode != "none")
        self.tabs.setTabToolTip(index, ROLE_TIPS["valid_lens"] if mode != "none" else
                                "Valid lengths are off: pick 1-D or 2-D under Attention > Valid lengths")
        self._update_fill_enabled()
