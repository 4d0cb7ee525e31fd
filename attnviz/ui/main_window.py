"""The main window: inputs on the left, results on the right, status at the bottom.

The flow is one way. An edit becomes a document Edit on the undo stack; the document notifies;
the panels redraw the inputs and a snapshot goes to the compute scheduler; its outcome comes
back on this thread, is dropped if the document has moved on, else drawn.
"""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
)

from .. import __version__
from ..compute import Outcome
from ..document import (
    Document,
    Edit,
    ReplaceState,
    SetBlock,
    SetSettings,
    filled_state,
    resize_state,
)
from ..presets import DEFAULT_PRESET, PRESETS
from ..worker import ComputeScheduler
from .inputs_panel import InputsPanel
from .results_panel import OutputPanel, ResultsPanel
from .settings_panel import ControlsColumn
from .undo import DocumentCommand

#: Which panel shows an error about which field.
SHAPE_FIELDS = {"shape", "queries", "keys", "values"}
INPUT_FIELDS = {"valid_lens", "mask"}


class MainWindow(QMainWindow):
    #: Emitted after an outcome has been drawn (for tests and the benchmark).
    outcomeShown = Signal(object)

    def __init__(self, preset: str = DEFAULT_PRESET, scheduler: ComputeScheduler | None = None) -> None:
        super().__init__()
        self.setWindowTitle("attnviz")
        self.document = Document(PRESETS[preset].build())
        self.undo_stack = QUndoStack(self)
        self.scheduler = scheduler or ComputeScheduler(parent=self)
        self.scheduler.finished.connect(self._on_outcome)
        self.scheduler.busyChanged.connect(lambda _busy: self._update_status())
        self.last_outcome: Outcome | None = None
        self.shown_version = -1
        self.dropped_outcomes = 0
        self._submitted_at = time.perf_counter()
        self._error: Outcome | None = None

        self.controls = ControlsColumn()
        self.inputs = InputsPanel()
        self.output = OutputPanel()
        self.results = ResultsPanel(self.output)
        # Controls on the left; the heatmaps large on top, the tables being edited right below
        # them, so an edit and its effect are in view together.
        controls_scroll = QScrollArea()
        controls_scroll.setWidgetResizable(True)
        controls_scroll.setWidget(self.controls)
        controls_scroll.setMinimumWidth(280)
        controls_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.inputs)
        bottom.addWidget(self.output)
        bottom.setSizes([700, 400])
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.results)
        right.addWidget(bottom)
        right.setSizes([520, 320])
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(controls_scroll)
        main.addWidget(right)
        main.setSizes([300, 1100])
        main.setStretchFactor(1, 1)
        self.setCentralWidget(main)

        self._build_status_bar()
        self._build_menus()

        self.controls.shapes.shapeChanged.connect(self._on_shape)
        self.controls.settings.settingsChanged.connect(self._on_settings)
        self.inputs.blockEdited.connect(self._on_block)
        self.inputs.fillRequested.connect(self._on_fill)
        self.inputs.batchChanged.connect(self._on_batch)
        self.inputs.message.connect(lambda text: self.statusBar().showMessage(text, 8000))

        self.document.subscribe(lambda _edit: self._on_document_changed())
        self._on_document_changed()
        self.resize(1400, 860)

    # ------------------------------------------------------------------ chrome

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.status_state = QLabel()
        self.status_state.setToolTip("Whether the pictures show the current inputs")
        self.status_device = QLabel()
        self.status_device.setToolTip("Device and dtype of the last result")
        self.status_time = QLabel()
        self.status_time.setToolTip("Compute time of the last result (engine only)")
        for label in (self.status_state, self.status_device, self.status_time):
            bar.addPermanentWidget(label)

    def _build_menus(self) -> None:
        # Feature modules add their actions to these menus (see ``install_features``).
        file_menu = self.file_menu = self.menuBar().addMenu("&File")
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.setToolTip("Close attnviz")
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        edit_menu = self.edit_menu = self.menuBar().addMenu("&Edit")
        undo = self.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        edit_menu.addAction(undo)
        edit_menu.addAction(redo)

        self.view_menu = self.menuBar().addMenu("&View")
        preset_menu = self.preset_menu = self.menuBar().addMenu("&Presets")
        for preset in PRESETS.values():
            action = QAction(preset.title, self)
            action.setToolTip(preset.description)
            action.setStatusTip(preset.description)
            action.triggered.connect(lambda _checked=False, name=preset.name: self.load_preset(name))
            preset_menu.addAction(action)
        preset_menu.setToolTipsVisible(True)

        self.tools_menu = self.menuBar().addMenu("&Tools")
        help_menu = self.help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About attnviz", self)
        about.triggered.connect(lambda: QMessageBox.about(
            self, "About attnviz",
            f"<b>attnviz {__version__}</b><p>See and debug attention: edit queries, keys, values "
            "and masks and watch every stage of the computation change.</p>"
            "<p>Built on the chapter “Attention Scoring Functions” of <i>Dive into Deep Learning</i>.</p>"))
        help_menu.addAction(about)

    # ------------------------------------------------------------------ edits

    def push(self, edit: Edit) -> None:
        """Apply an edit through the undo stack (the only way the document changes)."""
        self.undo_stack.push(DocumentCommand(self.document, edit))

    def load_preset(self, name: str) -> None:
        preset = PRESETS[name]
        self.push(ReplaceState(preset.build(), f"Load preset {preset.title}"))
        self.statusBar().showMessage(preset.description, 10000)

    def _on_shape(self, dims: dict[str, int]) -> None:
        self.push(ReplaceState(resize_state(self.document.state, **dims), "Change shape"))

    def _on_settings(self, changes: dict[str, object]) -> None:
        self.push(SetSettings(changes, "Change " + ", ".join(changes)))

    def _on_block(self, role: str, batch: int, row: int, col: int, block: np.ndarray) -> None:
        self.inputs.clear_error()
        self.push(SetBlock(role, batch, row, col, np.asarray(block)))

    def _on_fill(self, role: str, kind: str, seed: int) -> None:
        self.push(ReplaceState(filled_state(self.document.state, role, kind, seed), f"Fill {role} with {kind}"))

    def _on_batch(self, batch: int) -> None:
        self.inputs.show_state(self.document.state)
        self.results.set_batch(batch)

    def _on_document_changed(self) -> None:
        state = self.document.state
        self.controls.shapes.show_state(state)
        self.controls.settings.show_state(state)
        self.inputs.show_state(state)
        self._submitted_at = time.perf_counter()
        self.scheduler.submit(self.document.snapshot())
        self._update_status()

    # ------------------------------------------------------------------ results

    def _on_outcome(self, outcome: Outcome) -> None:
        if outcome.version != self.document.version:
            self.dropped_outcomes += 1  # the inputs have moved on; a newer result is coming
            return
        self.last_outcome = outcome
        self._show_error(outcome)
        if outcome.view is not None:
            devices = outcome.extra.get("devices")
            if isinstance(devices, list):
                self.controls.settings.set_devices(devices)
            self.results.show_view(outcome.view, min(self.inputs.batch.value(), outcome.view.weights.shape[0] - 1))
        self.shown_version = outcome.version
        self._update_status()
        self.outcomeShown.emit(outcome)

    def _show_error(self, outcome: Outcome) -> None:
        self._error = outcome if outcome.error else None
        shape_msg = settings_msg = input_msg = None
        if outcome.error:
            text = outcome.error
            if outcome.out_of_memory:
                text += " — choose the CPU under Device to run there."
            if outcome.error_field in SHAPE_FIELDS:
                shape_msg = text
            elif outcome.error_field in INPUT_FIELDS:
                input_msg = text
            else:
                settings_msg = text
            text = text + " (showing the last good result)" if self.results._view is not None else text
            self.statusBar().showMessage(text, 15000)
        self.controls.shape_error.show_message(shape_msg)
        self.controls.settings_error.show_message(settings_msg)
        if input_msg or outcome.error_field in INPUT_FIELDS or outcome.error is None:
            self.inputs.error.show_message(input_msg)

    def _update_status(self) -> None:
        outcome = self.last_outcome
        if self.scheduler.busy or self.shown_version != self.document.version:
            state = "computing…" if outcome is not None else "loading PyTorch…"
            style = "color: #8a5300;"
        elif self._error is not None:
            state, style = "error: showing the last good result", "color: #b00020; font-weight: bold;"
        else:
            state, style = "up to date", "color: #1b7f3b;"
        self.status_state.setText(state)
        self.status_state.setStyleSheet(f"QLabel {{ {style} }}")
        if outcome is not None:
            self.status_device.setText(f"{outcome.device} · {outcome.dtype}")
            self.status_time.setText(f"{outcome.seconds * 1e3:.1f} ms")

    def closeEvent(self, event: QCloseEvent) -> None:
        # Let a running computation end and the thread stop before the widgets go away.
        self.scheduler.shutdown()
        super().closeEvent(event)


def create_window(preset: str = DEFAULT_PRESET) -> MainWindow:
    return MainWindow(preset)


