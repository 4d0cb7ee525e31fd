"""Controls for shapes and settings. They only report what the user chose; the main window
turns that into document edits, and pushes the document's state back with ``show_state``.

The settings panels are built from the settings' declarations (``attnviz.state.settings``): a setting
declared there is shown, ranged, labelled and explained with no edit here."""

from __future__ import annotations

from collections.abc import Collection
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

from attnviz.state.document import MAX_BATCH, MAX_DIM, MAX_LEN, State
from attnviz.state.run import HeadView
from attnviz.state.settings import (
    ATTENTION,
    INT_MAX,
    LONG_MASKS,
    SETTINGS,
    Choice,
    DeviceName,
    Flag,
    Number,
    Setting,
    Whole,
    in_group,
)
from attnviz.text.tr import QT_TRANSLATE_NOOP
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


def _select(box: QComboBox, key: Any, *, add: bool = False) -> None:
    """Show ``key``'s entry (added first when ``add`` and the box lacks it: a device this machine
    does not have, say), without reporting a change."""
    index = box.findData(key)
    if index < 0 and add:
        with QSignalBlocker(box):
            box.addItem(str(key), key)
        index = box.count() - 1
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


class SettingsForm(Retranslating, QGroupBox):
    """The settings of one panel (a ``group`` of ``attnviz.state.settings``), built from their
    declarations: a combo box per choice, a spin box per number, a check box per flag, with the
    declared ranges, entries, captions and tooltips. Emits ``settingsChanged({"scoring": "dot"})``
    per change.

    It follows the declarations: one registered again (another range, caption or name) is shown
    as it now is, and a choice registered in a catalogue (``engine.scoring.register``) is added
    to its list as it arrives.
    """

    settingsChanged = Signal(dict)
    #: The ``attnviz.state.settings`` group this panel shows.
    group = ""

    def __init__(self, parent: QWidget | None = None, *, only: Collection[str] = ()) -> None:
        """``only``: these settings of the group alone (a lesson's; empty: all of them)."""
        super().__init__(parent)
        form = _form(self)
        self.declared: dict[str, Setting] = {s.name: s for s in in_group(self.group) if not only or s.name in only}
        self.fields: dict[str, QWidget] = {}
        self.combos: dict[str, QComboBox] = {}
        self.spins: dict[str, QSpinBox] = {}
        self.doubles: dict[str, QDoubleSpinBox] = {}
        self.checks: dict[str, QCheckBox] = {}
        self.captions: dict[str, QLabel] = {}
        hosts = {s.beside for s in self.declared.values() if s.beside}
        #: Rows shared by two settings (training mode beside dropout), by the first one's name.
        self.rows: dict[str, QWidget] = {}
        shared: dict[str, QHBoxLayout] = {}
        for setting in self.declared.values():
            field = self._field(setting)
            if setting.beside in shared:
                shared[setting.beside].addWidget(field)
                continue
            row = field
            if setting.name in hosts:
                row = self.rows[setting.name] = QWidget()
                shared[setting.name] = QHBoxLayout(row)
                shared[setting.name].setContentsMargins(0, 0, 0, 0)
                shared[setting.name].addWidget(field)
            caption = self.captions[setting.name] = QLabel()
            caption.setBuddy(field)
            form.addRow(caption, row)
        self._registries = {id(s.registry): s.registry for s in self.declared.values() if isinstance(s, Choice)}
        for registry in (*self._registries.values(), SETTINGS):
            if registry is not None:
                registry.subscribe(self._on_registered)
        self.destroyed.connect(lambda *_: self._unsubscribe())
        self.retranslate()

    def _field(self, setting: Setting) -> QWidget:
        """The widget of ``setting``, reporting each change as ``{name: value}``."""
        name = setting.name
        field: QWidget
        if isinstance(setting, (Choice, DeviceName)):
            box = self.combos[name] = _combo(list(setting.choices()) if isinstance(setting, Choice) else [])
            box.currentIndexChanged.connect(lambda _i, k=name, b=box: self.settingsChanged.emit({k: b.currentData()}))
            field = box
        elif isinstance(setting, Whole):
            spin = self.spins[name] = QSpinBox()
            spin.setKeyboardTracking(False)  # one edit when the user has finished typing
            spin.valueChanged.connect(lambda v, k=name: self.settingsChanged.emit({k: int(v)}))
            field = spin
        elif isinstance(setting, Number):
            double = self.doubles[name] = QDoubleSpinBox()
            double.setKeyboardTracking(False)
            double.valueChanged.connect(lambda v, k=name: self.settingsChanged.emit({k: float(v)}))
            field = double
        elif isinstance(setting, Flag):
            check = self.checks[name] = QCheckBox()
            check.toggled.connect(lambda on, k=name: self.settingsChanged.emit({k: bool(on)}))
            field = check
        else:
            raise TypeError(f"no widget for a {type(setting).__name__} setting ({name})")
        self.fields[name] = field
        self._apply_range(setting)
        return field

    def _apply_range(self, setting: Setting) -> None:
        name = setting.name
        if isinstance(setting, Whole) and name in self.spins:
            with QSignalBlocker(self.spins[name]):
                self.spins[name].setRange(setting.low, setting.high)
        elif isinstance(setting, Number) and name in self.doubles:
            double = self.doubles[name]
            with QSignalBlocker(double):
                double.setDecimals(setting.decimals)
                double.setSingleStep(setting.step)
                low = setting.low + 10.0**-setting.decimals if setting.above else setting.low
                double.setRange(low, min(setting.high, float(INT_MAX)))

    def _on_registered(self, info: object) -> None:
        if isinstance(info, Setting):
            if info.name not in self.declared or info.group != self.group:
                return  # another panel's, or a new setting: the panel keeps the rows it was built with
            self.declared[info.name] = info
            self._apply_range(info)
        for name, setting in self.declared.items():
            if isinstance(setting, Choice):
                box = self.combos[name]
                for key in setting.choices():
                    if box.findData(key) < 0:
                        with QSignalBlocker(box):
                            box.addItem(str(key), key)
        self.retranslate()

    def _unsubscribe(self) -> None:
        for registry in (*self._registries.values(), SETTINGS):
            if registry is not None:
                registry.unsubscribe(self._on_registered)

    def retranslate(self) -> None:
        for name, setting in self.declared.items():
            if name in self.captions:
                self.captions[name].setText(tr_text(setting.label) if name not in self.checks else "")
            field = self.fields[name]
            field.setToolTip(tr_text(setting.tooltip))
            if name in self.checks:
                self.checks[name].setText(tr_text(setting.label))
            if isinstance(setting, Choice):
                _label_items(self.combos[name], setting.choices())
            if isinstance(setting, Whole) and setting.zero_text:
                self.spins[name].setSpecialValueText(tr_text(setting.zero_text))
        for name, row in self.rows.items():
            # The row's room between its fields says what the first one does.
            row.setToolTip(self.fields[name].toolTip())

    def show_state(self, state: State, view: HeadView | None = None) -> None:
        """Show the settings; a call's own (the causal flag) as the call of ``view``, the head on
        show, has them (left as they are without one)."""
        for name, setting in self.declared.items():
            if setting.of_call and view is None:
                continue
            value = getattr(view if setting.of_call else state.settings, name)
            if name in self.combos:
                _select(self.combos[name], value, add=True)
            elif name in self.spins:
                spin = self.spins[name]
                if spin.value() != value:
                    with QSignalBlocker(spin):
                        spin.setValue(int(value))
            elif name in self.doubles:
                double = self.doubles[name]
                if abs(double.value() - value) > 1e-9:
                    with QSignalBlocker(double):
                        double.setValue(float(value))
            elif name in self.checks:
                check = self.checks[name]
                if check.isChecked() != bool(value):
                    with QSignalBlocker(check):
                        check.setChecked(bool(value))
            if setting.applies is not None:
                self.fields[name].setEnabled(setting.applies(state.settings))


class SettingsPanel(SettingsForm):
    """Scoring, masking, numerics (``attnviz.state.settings.ATTENTION``)."""

    group = ATTENTION

    def retranslate(self) -> None:
        self.setTitle(translate("SettingsPanel", "Attention"))
        self.setToolTip(translate("SettingsPanel", "How scores are computed and masked"))
        super().retranslate()

    def set_devices(self, devices: list[str]) -> None:
        box = self.combos["device"]
        current = box.currentData()
        listed = [box.itemData(i) for i in range(box.count())]
        if listed == list(devices):
            return  # every result reports the devices: refilling the list each time repaints it
        with QSignalBlocker(box):
            box.clear()
            for name in devices:
                box.addItem(name, name)
        _select(box, current if current in devices else devices[-1])


class LongMasksPanel(SettingsForm):
    """The masks of long-context models (``attnviz.state.settings.LONG_MASKS``), each a whole number
    (0 = off)."""

    group = LONG_MASKS

    def retranslate(self) -> None:
        self.setTitle(translate("SettingsPanel", "Long-context masks"))
        self.setToolTip(
            translate(
                "SettingsPanel", "Masks of long-context models, combined with padding, causal and the model's own masks"
            )
        )
        super().retranslate()


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
