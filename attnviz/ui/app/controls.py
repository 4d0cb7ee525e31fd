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

from attnviz import catalog
from attnviz.document import MAX_BATCH, MAX_DIM, MAX_HIDDEN, MAX_LEN, State
from attnviz.model_run import HeadView
from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.labels import ErrorLabel
from attnviz.ui.lifecycle import Retranslating

# (key, label, tooltip, maximum); labels and tooltips are translated where they are shown.
SHAPE_FIELDS: tuple[tuple[str, str, str, int], ...] = (
    (
        "batch",
        QT_TRANSLATE_NOOP("SettingsPanel", "&Batch"),
        QT_TRANSLATE_NOOP("SettingsPanel", "Number of batch elements (independent examples)"),
        MAX_BATCH,
    ),
    (
        "n_queries",
        QT_TRANSLATE_NOOP("SettingsPanel", "&Queries"),
        QT_TRANSLATE_NOOP("SettingsPanel", "Number of queries per batch element (rows of the attention map)"),
        MAX_LEN,
    ),
    (
        "n_keys",
        QT_TRANSLATE_NOOP("SettingsPanel", "&Keys"),
        QT_TRANSLATE_NOOP(
            "SettingsPanel", "Number of key-value pairs per batch element (columns of the attention map)"
        ),
        MAX_LEN,
    ),
    ("d_q", "d_&q", QT_TRANSLATE_NOOP("SettingsPanel", "Length of each query vector"), MAX_DIM),
    (
        "d_k",
        "d_&k",
        QT_TRANSLATE_NOOP("SettingsPanel", "Length of each key vector (dot-product scoring needs d_k = d_q)"),
        MAX_DIM,
    ),
    (
        "d_v",
        "d_&v",
        QT_TRANSLATE_NOOP("SettingsPanel", "Length of each value vector (the output has this length too)"),
        MAX_DIM,
    ),
)


def _combo(keys: list[Any]) -> QComboBox:
    """A combo box of ``keys`` (item data); texts are set by the panel's ``retranslate``. It is
    as wide as its longest label, in the current language: a chosen label is never cut."""
    box = QComboBox()
    for key in keys:
        box.addItem(str(key), key)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return box


def _form(parent: QWidget) -> QFormLayout:
    """Captions beside their fields, or above them when a translation makes a row too long for
    the column: the column stays narrow enough for a 1024-pixel screen."""
    form = QFormLayout(parent)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    return form


def _select(box: QComboBox, key: Any) -> None:
    index = box.findData(key)
    if index >= 0 and index != box.currentIndex():
        with QSignalBlocker(box):
            box.setCurrentIndex(index)


def _label_items(box: QComboBox, labels: dict[Any, str]) -> None:
    """Set the texts of ``box``'s items from ``labels`` (marked sources) by their data."""
    for index in range(box.count()):
        key = box.itemData(index)
        if key in labels:
            box.setItemText(index, tr_text(labels[key]))


class ShapePanel(Retranslating, QGroupBox):
    """Spin boxes for the dimensions. Emits ``shapeChanged({"n_keys": 12})`` per change."""

    shapeChanged = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = _form(self)
        self.spins: dict[str, QSpinBox] = {}
        self.captions: dict[str, QLabel] = {}
        for key, _label, _tip, maximum in SHAPE_FIELDS:
            spin = QSpinBox()
            spin.setRange(1, maximum)
            spin.setAccelerated(True)
            # One edit when the user has finished typing, not one per keystroke.
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(lambda value, k=key: self.shapeChanged.emit({k: int(value)}))
            self.spins[key] = spin
            caption = self.captions[key] = QLabel()
            caption.setBuddy(spin)
            layout.addRow(caption, spin)
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(translate("SettingsPanel", "Shapes"))
        self.setToolTip(
            translate("SettingsPanel", "Dimensions of the tensors; values that still fit are kept when they change")
        )
        for key, label, tip, _maximum in SHAPE_FIELDS:
            self.spins[key].setToolTip(tr_text(tip))
            self.captions[key].setText(tr_text(label))

    def show_state(self, view: HeadView) -> None:
        """Show the sizes of the head on show."""
        for key, value in view.dims.items():
            spin = self.spins[key]
            if spin.value() != value:
                with QSignalBlocker(spin):
                    if value > spin.maximum():
                        # Loaded tensors may be longer than the editor makes them: show the truth.
                        spin.setMaximum(value)
                    spin.setValue(value)


#: The settings' captions, in form order (key of the widget, marked caption).
_SETTING_CAPTIONS: tuple[tuple[str, str], ...] = (
    ("scoring", QT_TRANSLATE_NOOP("SettingsPanel", "&Scoring")),
    ("hidden", QT_TRANSLATE_NOOP("SettingsPanel", "&Hidden size")),
    ("param_seed", QT_TRANSLATE_NOOP("SettingsPanel", "&Parameter seed")),
    ("lens_mode", QT_TRANSLATE_NOOP("SettingsPanel", "&Valid lengths")),
    ("mask_mode", QT_TRANSLATE_NOOP("SettingsPanel", "&Mask mode")),
    ("causal", QT_TRANSLATE_NOOP("SettingsPanel", "&Causal")),
    ("device", QT_TRANSLATE_NOOP("SettingsPanel", "&Device")),
    ("dtype", QT_TRANSLATE_NOOP("SettingsPanel", "D&type")),
    ("dropout", QT_TRANSLATE_NOOP("SettingsPanel", "D&ropout")),
    ("dropout_seed", QT_TRANSLATE_NOOP("SettingsPanel", "Dropout s&eed")),
)


class SettingsPanel(Retranslating, QGroupBox):
    """Scoring, masking, numerics. Emits ``settingsChanged({"scoring": "dot"})`` per change.

    The scoring functions and mask modes are those of ``attnviz.catalog``: one registered
    later (``engine.scoring.register``) is added to the list as it arrives.
    """

    settingsChanged = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = _form(self)

        self.scoring = _combo(list(catalog.SCORINGS))
        self.hidden = QSpinBox()
        self.hidden.setRange(1, MAX_HIDDEN)
        self.hidden.setKeyboardTracking(False)
        self.param_seed = QSpinBox()
        self.param_seed.setRange(0, 2**31 - 1)
        self.param_seed.setKeyboardTracking(False)
        self.lens_mode = _combo(list(catalog.LENS_OPTIONS))
        self.mask_mode = _combo(list(catalog.MASK_MODES))
        self.causal = _combo(list(catalog.CAUSAL_OPTIONS))
        self.device = _combo(["cpu"])
        self.dtype = _combo(list(catalog.DTYPE_OPTIONS))
        self.dropout = QDoubleSpinBox()
        self.dropout.setRange(0.0, 1.0)
        self.dropout.setSingleStep(0.05)
        self.dropout.setDecimals(2)
        self.dropout.setKeyboardTracking(False)
        self.train = QCheckBox()
        self.dropout_seed = QSpinBox()
        self.dropout_seed.setRange(0, 2**31 - 1)
        self.dropout_seed.setKeyboardTracking(False)
        self._drop = QWidget()
        drop_layout = QHBoxLayout(self._drop)
        drop_layout.setContentsMargins(0, 0, 0, 0)
        drop_layout.addWidget(self.dropout)
        drop_layout.addWidget(self.train)

        fields: dict[str, QWidget] = {
            "scoring": self.scoring,
            "hidden": self.hidden,
            "param_seed": self.param_seed,
            "lens_mode": self.lens_mode,
            "mask_mode": self.mask_mode,
            "causal": self.causal,
            "device": self.device,
            "dtype": self.dtype,
            "dropout": self._drop,
            "dropout_seed": self.dropout_seed,
        }
        self.captions: dict[str, QLabel] = {}
        for key, _text in _SETTING_CAPTIONS:
            caption = self.captions[key] = QLabel()
            caption.setBuddy(self.dropout if key == "dropout" else fields[key])
            form.addRow(caption, fields[key])

        for key, box in (
            ("scoring", self.scoring),
            ("lens_mode", self.lens_mode),
            ("mask_mode", self.mask_mode),
            ("causal", self.causal),
            ("device", self.device),
            ("dtype", self.dtype),
        ):
            box.currentIndexChanged.connect(lambda _i, k=key, b=box: self.settingsChanged.emit({k: b.currentData()}))
        for key, spin in (
            ("num_hiddens", self.hidden),
            ("param_seed", self.param_seed),
            ("dropout_seed", self.dropout_seed),
        ):
            spin.valueChanged.connect(lambda v, k=key: self.settingsChanged.emit({k: int(v)}))
        self.dropout.valueChanged.connect(lambda v: self.settingsChanged.emit({"dropout": float(v)}))
        self.train.toggled.connect(lambda on: self.settingsChanged.emit({"train": bool(on)}))
        catalog.SCORINGS.subscribe(self._on_scoring_registered)
        self.destroyed.connect(lambda *_: catalog.SCORINGS.unsubscribe(self._on_scoring_registered))
        self.retranslate()

    def _on_scoring_registered(self, info: catalog.ScoringInfo) -> None:
        if self.scoring.findData(info.name) < 0:
            with QSignalBlocker(self.scoring):
                self.scoring.addItem(tr_text(info.label), info.name)
        else:
            _label_items(self.scoring, {info.name: info.label})

    def retranslate(self) -> None:
        self.setTitle(translate("SettingsPanel", "Attention"))
        self.setToolTip(translate("SettingsPanel", "How scores are computed and masked"))
        for key, text in _SETTING_CAPTIONS:
            self.captions[key].setText(tr_text(text))
        _label_items(self.scoring, {name: catalog.SCORINGS.label(name) for name in catalog.SCORINGS})
        _label_items(self.lens_mode, catalog.LENS_OPTIONS)
        _label_items(self.mask_mode, {name: catalog.MASK_MODES.label(name) for name in catalog.MASK_MODES})
        _label_items(self.causal, catalog.CAUSAL_OPTIONS)
        _label_items(self.dtype, catalog.DTYPE_OPTIONS)
        self.scoring.setToolTip(translate("SettingsPanel", "Scoring function a(q, k)"))
        self.hidden.setToolTip(translate("SettingsPanel", "Hidden size h of additive attention (W_q, W_k are h x d)"))
        self.param_seed.setToolTip(translate("SettingsPanel", "Seed of the learnable parameters (additive, bilinear)"))
        self.lens_mode.setToolTip(
            translate("SettingsPanel", "Valid lengths: none, one per batch element (1-D), or one per query (2-D)")
        )
        self.mask_mode.setToolTip(
            translate(
                "SettingsPanel",
                "How masked keys are applied: the book's -1e6 fill, strict, or the conventions (and "
                "bugs) of other libraries",
            )
        )
        self.causal.setToolTip(
            translate(
                "SettingsPanel", "Causal mask: query i sees keys up to i (top-left) or up to i + K - Q (bottom-right)"
            )
        )
        self.device.setToolTip(translate("SettingsPanel", "Device the attention runs on"))
        self.dtype.setToolTip(
            translate(
                "SettingsPanel", "Floating-point type of the computation; float16 shows the -1e6 fill overflowing"
            )
        )
        self.dropout.setToolTip(
            translate("SettingsPanel", "Dropout probability on the attention weights (only in training mode)")
        )
        self._drop.setToolTip(self.dropout.toolTip())
        self.train.setText(translate("SettingsPanel", "&Training"))
        self.train.setToolTip(
            translate("SettingsPanel", "Training mode: apply dropout to the weights (evaluation mode ignores it)")
        )
        self.dropout_seed.setToolTip(
            translate("SettingsPanel", "Seed of the dropout mask, so a training-mode picture is reproducible")
        )

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

    def show_state(self, state: State, view: HeadView) -> None:
        """Show the settings, and the causal flag of ``view``'s call (each call has its own)."""
        s = state.settings
        _select(self.scoring, s.scoring)
        _select(self.lens_mode, s.lens_mode)
        _select(self.mask_mode, s.mask_mode)
        _select(self.causal, view.causal)
        if self.device.findData(s.device) < 0:
            with QSignalBlocker(self.device):
                self.device.addItem(s.device, s.device)
        _select(self.device, s.device)
        _select(self.dtype, s.dtype)
        for spin, value in (
            (self.hidden, s.num_hiddens),
            (self.param_seed, s.param_seed),
            (self.dropout_seed, s.dropout_seed),
        ):
            if spin.value() != value:
                with QSignalBlocker(spin):
                    spin.setValue(value)
        if abs(self.dropout.value() - s.dropout) > 1e-9:
            with QSignalBlocker(self.dropout):
                self.dropout.setValue(s.dropout)
        if self.train.isChecked() != s.train:
            with QSignalBlocker(self.train):
                self.train.setChecked(s.train)
        info = catalog.SCORINGS.get(s.scoring)
        self.hidden.setEnabled(info is not None and info.uses_hidden)
        self.param_seed.setEnabled(info is not None and bool(info.params))
        self.dropout_seed.setEnabled(s.train and s.dropout > 0)


#: The long-context masks' fields: (setting, caption, tip). 0 turns each off.
_LONG_MASKS = (
    (
        "window",
        QT_TRANSLATE_NOOP("SettingsPanel", "&Window"),
        QT_TRANSLATE_NOOP(
            "SettingsPanel",
            "Sliding window: a query sees the keys within this distance (|i - j| < w; "
            "only earlier ones when Causal is on). 0: off",
        ),
    ),
    (
        "sinks",
        QT_TRANSLATE_NOOP("SettingsPanel", "S&inks"),
        QT_TRANSLATE_NOOP(
            "SettingsPanel",
            "Attention sinks: the first keys every query keeps seeing beside its window "
            "(StreamingLLM). Needs a window. 0: off",
        ),
    ),
    (
        "prefix",
        QT_TRANSLATE_NOOP("SettingsPanel", "Pre&fix"),
        QT_TRANSLATE_NOOP(
            "SettingsPanel", "Prefix-LM: every query sees the first keys (the prefix), and causally after it. 0: off"
        ),
    ),
    (
        "chunk",
        QT_TRANSLATE_NOOP("SettingsPanel", "C&hunk"),
        QT_TRANSLATE_NOOP(
            "SettingsPanel",
            "Chunked local attention: queries see the keys of their own chunk of this "
            "size (causally within it when Causal is on). 0: off",
        ),
    ),
)


class LongMasksPanel(Retranslating, QGroupBox):
    """The masks of long-context models, each a whole number (0 = off). Emits ``settingsChanged``."""

    settingsChanged = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = _form(self)
        self.spins: dict[str, QSpinBox] = {}
        self.captions: dict[str, QLabel] = {}
        for key, _caption, _tip in _LONG_MASKS:
            spin = QSpinBox()
            spin.setRange(0, 2**31 - 1)
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(lambda v, k=key: self.settingsChanged.emit({k: int(v)}))
            caption = QLabel()
            caption.setBuddy(spin)
            form.addRow(caption, spin)
            self.spins[key] = spin
            self.captions[key] = caption
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(translate("SettingsPanel", "Long-context masks"))
        self.setToolTip(
            translate(
                "SettingsPanel", "Masks of long-context models, combined with padding, causal and the model's own masks"
            )
        )
        off = translate("SettingsPanel", "off")
        for key, caption, tip in _LONG_MASKS:
            self.captions[key].setText(tr_text(caption))
            self.spins[key].setToolTip(tr_text(tip))
            self.spins[key].setSpecialValueText(off)

    def show_state(self, state: State) -> None:
        for key, spin in self.spins.items():
            value = int(getattr(state.settings, key))
            if spin.value() != value:
                with QSignalBlocker(spin):
                    spin.setValue(value)


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
        self.long_masks = LongMasksPanel()
        layout.addWidget(self.shapes)
        layout.addWidget(self.shape_error)
        layout.addWidget(self.settings)
        layout.addWidget(self.settings_error)
        layout.addWidget(self.long_masks)
        layout.addStretch(1)
