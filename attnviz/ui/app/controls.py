"""Controls for shapes and settings. They only report what the user chose; the main window
turns that into document edits, and pushes the document's state back with ``show_state``."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from attnviz.document import MAX_BATCH, MAX_DIM, MAX_HIDDEN, MAX_LEN, State
from attnviz.ui.i18n import tr_text, translate
from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.theme import mark_error_label

# (key, label, tooltip, maximum); labels and tooltips are translated where they are shown.
SHAPE_FIELDS: tuple[tuple[str, str, str, int], ...] = (
    ("batch", QT_TRANSLATE_NOOP("SettingsPanel", "&Batch"),
     QT_TRANSLATE_NOOP("SettingsPanel", "Number of batch elements (independent examples)"), MAX_BATCH),
    ("n_queries", QT_TRANSLATE_NOOP("SettingsPanel", "&Queries"),
     QT_TRANSLATE_NOOP("SettingsPanel", "Number of queries per batch element (rows of the attention map)"), MAX_LEN),
    ("n_keys", QT_TRANSLATE_NOOP("SettingsPanel", "&Keys"),
     QT_TRANSLATE_NOOP("SettingsPanel", "Number of key-value pairs per batch element (columns of the attention map)"),
     MAX_LEN),
    ("d_q", "d_&q", QT_TRANSLATE_NOOP("SettingsPanel", "Length of each query vector"), MAX_DIM),
    ("d_k", "d_&k",
     QT_TRANSLATE_NOOP("SettingsPanel", "Length of each key vector (dot-product scoring needs d_k = d_q)"), MAX_DIM),
    ("d_v", "d_&v", QT_TRANSLATE_NOOP("SettingsPanel", "Length of each value vector (the output has this length too)"),
     MAX_DIM),
)

SCORING_LABELS = {
    "additive": QT_TRANSLATE_NOOP("SettingsPanel", "Additive"),
    "scaled_dot": QT_TRANSLATE_NOOP("SettingsPanel", "Scaled dot product"),
    "dot": QT_TRANSLATE_NOOP("SettingsPanel", "Dot product (unscaled)"),
    "bilinear": QT_TRANSLATE_NOOP("SettingsPanel", "Bilinear (q^T W k)"),
    "gaussian": QT_TRANSLATE_NOOP("SettingsPanel", "Gaussian kernel"),
    "summation": QT_TRANSLATE_NOOP("SettingsPanel", "Vector summation"),
}
MASK_MODE_LABELS = {
    "d2l": QT_TRANSLATE_NOOP("SettingsPanel", "Book (-1e6 fill)"),
    "strict": QT_TRANSLATE_NOOP("SettingsPanel", "Strict (empty rows = 0)"),
    "neg_inf": QT_TRANSLATE_NOOP("SettingsPanel", "-inf fill (NaN rows)"),
    "sdpa": QT_TRANSLATE_NOOP("SettingsPanel", "PyTorch SDPA boolean"),
    "float01": QT_TRANSLATE_NOOP("SettingsPanel", "1/0 mask as float (bug)"),
    "inverted": QT_TRANSLATE_NOOP("SettingsPanel", "Wrong polarity (bug)"),
}
LENS_LABELS = {
    "none": QT_TRANSLATE_NOOP("SettingsPanel", "None"),
    "1d": QT_TRANSLATE_NOOP("SettingsPanel", "1-D (per batch)"),
    "2d": QT_TRANSLATE_NOOP("SettingsPanel", "2-D (per query)"),
}
CAUSAL_LABELS = {
    None: QT_TRANSLATE_NOOP("SettingsPanel", "Off"),
    "top_left": QT_TRANSLATE_NOOP("SettingsPanel", "Top-left (is_causal)"),
    "bottom_right": QT_TRANSLATE_NOOP("SettingsPanel", "Bottom-right (KV cache)"),
}
DTYPE_LABELS = {"float32": "float32", "float64": "float64", "float16": "float16", "bfloat16": "bfloat16"}


def _combo(items: dict[Any, str], tooltip: str) -> QComboBox:
    box = QComboBox()
    for key, label in items.items():
        box.addItem(tr_text(label), key)
    box.setToolTip(tooltip)
    return box


def _select(box: QComboBox, key: Any) -> None:
    index = box.findData(key)
    if index >= 0 and index != box.currentIndex():
        with QSignalBlocker(box):
            box.setCurrentIndex(index)


class ShapePanel(QGroupBox):
    """Spin boxes for the dimensions. Emits ``shapeChanged({"n_keys": 12})`` per change."""

    shapeChanged = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(translate("SettingsPanel", "Shapes"), parent)
        self.setToolTip(translate("SettingsPanel", "Dimensions of the tensors; values that still fit are kept when "
                                                   "they change"))
        layout = QFormLayout(self)
        self.spins: dict[str, QSpinBox] = {}
        for key, label, tip, maximum in SHAPE_FIELDS:
            spin = QSpinBox()
            spin.setRange(1, maximum)
            spin.setToolTip(tr_text(tip))
            spin.setAccelerated(True)
            # One edit when the user has finished typing, not one per keystroke.
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(lambda value, k=key: self.shapeChanged.emit({k: int(value)}))
            self.spins[key] = spin
            caption = QLabel(tr_text(label))
            caption.setBuddy(spin)
            layout.addRow(caption, spin)

    def show_state(self, state: State) -> None:
        for key, value in state.dims.items():
            spin = self.spins[key]
            if spin.value() != value:
                with QSignalBlocker(spin):
                    spin.setValue(value)


class SettingsPanel(QGroupBox):
    """Scoring, masking, numerics. Emits ``settingsChanged({"scoring": "dot"})`` per change."""

    settingsChanged = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(translate("SettingsPanel", "Attention"), parent)
        self.setToolTip(translate("SettingsPanel", "How scores are computed and masked"))
        form = QFormLayout(self)

        self.scoring = _combo(SCORING_LABELS, translate("SettingsPanel", "Scoring function a(q, k)"))
        self.hidden = QSpinBox()
        self.hidden.setRange(1, MAX_HIDDEN)
        self.hidden.setKeyboardTracking(False)
        self.hidden.setToolTip(translate("SettingsPanel", "Hidden size h of additive attention (W_q, W_k are h x d)"))
        self.param_seed = QSpinBox()
        self.param_seed.setRange(0, 2**31 - 1)
        self.param_seed.setKeyboardTracking(False)
        self.param_seed.setToolTip(translate("SettingsPanel", "Seed of the learnable parameters (additive, bilinear)"))
        self.lens_mode = _combo(LENS_LABELS, translate(
            "SettingsPanel", "Valid lengths: none, one per batch element (1-D), or one per query (2-D)"))
        self.mask_mode = _combo(MASK_MODE_LABELS, translate(
            "SettingsPanel", "How masked keys are applied: the book's -1e6 fill, strict, or the conventions (and "
                             "bugs) of other libraries"))
        self.causal = _combo(CAUSAL_LABELS, translate(
            "SettingsPanel", "Causal mask: query i sees keys up to i (top-left) or up to i + K - Q (bottom-right)"))
        self.device = _combo({"cpu": "cpu"}, translate("SettingsPanel", "Device the attention runs on"))
        self.dtype = _combo(DTYPE_LABELS, translate(
            "SettingsPanel", "Floating-point type of the computation; float16 shows the -1e6 fill overflowing"))
        self.dropout = QDoubleSpinBox()
        self.dropout.setRange(0.0, 1.0)
        self.dropout.setSingleStep(0.05)
        self.dropout.setDecimals(2)
        self.dropout.setKeyboardTracking(False)
        self.dropout.setToolTip(translate("SettingsPanel", "Dropout probability on the attention weights (only in "
                                                           "training mode)"))
        self.train = QCheckBox(translate("SettingsPanel", "&Training"))
        self.train.setToolTip(translate("SettingsPanel", "Training mode: apply dropout to the weights (evaluation "
                                                         "mode ignores it)"))
        self.dropout_seed = QSpinBox()
        self.dropout_seed.setRange(0, 2**31 - 1)
        self.dropout_seed.setKeyboardTracking(False)
        self.dropout_seed.setToolTip(translate("SettingsPanel", "Seed of the dropout mask, so a training-mode "
                                                                "picture is reproducible"))

        def row(label: str, widget: QWidget) -> None:
            caption = QLabel(label)
            caption.setBuddy(widget)
            form.addRow(caption, widget)

        row(translate("SettingsPanel", "&Scoring"), self.scoring)
        row(translate("SettingsPanel", "&Hidden size"), self.hidden)
        row(translate("SettingsPanel", "&Parameter seed"), self.param_seed)
        row(translate("SettingsPanel", "&Valid lengths"), self.lens_mode)
        row(translate("SettingsPanel", "&Mask mode"), self.mask_mode)
        row(translate("SettingsPanel", "&Causal"), self.causal)
        row(translate("SettingsPanel", "&Device"), self.device)
        row(translate("SettingsPanel", "D&type"), self.dtype)
        drop = QWidget()
        drop_layout = QHBoxLayout(drop)
        drop_layout.setContentsMargins(0, 0, 0, 0)
        drop_layout.addWidget(self.dropout)
        drop_layout.addWidget(self.train)
        drop.setToolTip(self.dropout.toolTip())
        row(translate("SettingsPanel", "D&ropout"), drop)
        form.itemAt(form.rowCount() - 1, QFormLayout.ItemRole.LabelRole).widget().setBuddy(self.dropout)
        row(translate("SettingsPanel", "Dropout s&eed"), self.dropout_seed)

        for key, box in (("scoring", self.scoring), ("lens_mode", self.lens_mode), ("mask_mode", self.mask_mode),
                         ("causal", self.causal), ("device", self.device), ("dtype", self.dtype)):
            box.currentIndexChanged.connect(lambda _i, k=key, b=box: self.settingsChanged.emit({k: b.currentData()}))
        for key, spin in (("num_hiddens", self.hidden), ("param_seed", self.param_seed), ("dropout_seed", self.dropout_seed)):
            spin.valueChanged.connect(lambda v, k=key: self.settingsChanged.emit({k: int(v)}))
        self.dropout.valueChanged.connect(lambda v: self.settingsChanged.emit({"dropout": float(v)}))
        self.train.toggled.connect(lambda on: self.settingsChanged.emit({"train": bool(on)}))

    def set_devices(self, devices: list[str]) -> None:
        current = self.device.currentData()
        listed = [self.device.itemData(i) for i in range(self.device.count())]
        if listed == list(devices):
            return  # every result reports the devices: refilling the list each time repaints it
        with QSignalBlocker(self.device):
            self.device.clear()
            for name in devices:
                self.device.addItem(name, name)
        _select(self.device, current if current in devices else devices[-1])

    def show_state(self, state: State) -> None:
        s = state.settings
        _select(self.scoring, s.scoring)
        _select(self.lens_mode, s.lens_mode)
        _select(self.mask_mode, s.mask_mode)
        _select(self.causal, s.causal)
        if self.device.findData(s.device) < 0:
            with QSignalBlocker(self.device):
                self.device.addItem(s.device, s.device)
        _select(self.device, s.device)
        _select(self.dtype, s.dtype)
        for spin, value in ((self.hidden, s.num_hiddens), (self.param_seed, s.param_seed),
                            (self.dropout_seed, s.dropout_seed)):
            if spin.value() != value:
                with QSignalBlocker(spin):
                    spin.setValue(value)
        if abs(self.dropout.value() - s.dropout) > 1e-9:
            with QSignalBlocker(self.dropout):
                self.dropout.setValue(s.dropout)
        if self.train.isChecked() != s.train:
            with QSignalBlocker(self.train):
                self.train.setChecked(s.train)
        learnable = s.scoring in ("additive", "bilinear")
        self.hidden.setEnabled(s.scoring == "additive")
        self.param_seed.setEnabled(learnable)
        self.dropout_seed.setEnabled(s.train and s.dropout > 0)


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


class ControlsColumn(QWidget):
    """Shapes and settings stacked, each with an error line under it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.shapes = ShapePanel()
        self.shape_error = ErrorLabel()
        self.settings = SettingsPanel()
        self.settings_error = ErrorLabel()
        layout.addWidget(self.shapes)
        layout.addWidget(self.shape_error)
        layout.addWidget(self.settings)
        layout.addWidget(self.settings_error)
        layout.addStretch(1)
