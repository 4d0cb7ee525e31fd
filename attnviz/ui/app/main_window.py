"""The main window: inputs on the left, results on the right, status at the bottom.

The flow is one way. An edit becomes a document Edit on the undo stack; the document notifies;
the panels redraw the inputs and a snapshot goes to the compute scheduler; its outcome comes
back on this thread, is dropped if the document has moved on, else drawn.
"""

from __future__ import annotations

import gc
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QProgressBar,
    QPushButton,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
)

from attnviz import __version__
from attnviz.compute.attention import Outcome
from attnviz.document import (
    Document,
    Edit,
    ReplaceState,
    SetBlock,
    SetSettings,
    filled_state,
    resize_state,
)
from attnviz.ui.i18n import (
    LANGUAGES,
    current_language,
    install_language,
    resolve_language,
    save_language,
    saved_language,
    tr_text,
    translate,
)
from attnviz.presets import DEFAULT_PRESET, PRESETS
from attnviz.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.scheduler import ComputeScheduler
from attnviz.ui.app import theme
from attnviz.ui.heatmap.widget import PRESENTATION_SCALE
from attnviz.ui.tables.inputs_panel import InputsPanel
from attnviz.ui.app.results_panel import OutputPanel, ResultsPanel
from attnviz.ui.app.controls import ControlsColumn
from attnviz.ui.app.status_label import SteadyLabel
from attnviz.ui.app.undo import DocumentCommand

#: Which panel shows an error about which field.
SHAPE_FIELDS = {"shape", "queries", "keys", "values"}
INPUT_FIELDS = {"valid_lens", "mask"}

#: Names of the settings and tensors in undo texts ("Change dropout", "Fill keys with zeros").
SETTING_NAMES = {
    "scoring": QT_TRANSLATE_NOOP("MainWindow", "scoring function"),
    "lens_mode": QT_TRANSLATE_NOOP("MainWindow", "valid lengths"),
    "mask_mode": QT_TRANSLATE_NOOP("MainWindow", "mask mode"),
    "causal": QT_TRANSLATE_NOOP("MainWindow", "causal mask"),
    "device": QT_TRANSLATE_NOOP("MainWindow", "device"),
    "dtype": QT_TRANSLATE_NOOP("MainWindow", "dtype"),
    "dropout": QT_TRANSLATE_NOOP("MainWindow", "dropout"),
    "train": QT_TRANSLATE_NOOP("MainWindow", "training mode"),
    "dropout_seed": QT_TRANSLATE_NOOP("MainWindow", "dropout seed"),
    "num_hiddens": QT_TRANSLATE_NOOP("MainWindow", "hidden size"),
    "param_seed": QT_TRANSLATE_NOOP("MainWindow", "parameter seed"),
}
ROLE_NAMES = {
    "queries": QT_TRANSLATE_NOOP("MainWindow", "queries"),
    "keys": QT_TRANSLATE_NOOP("MainWindow", "keys"),
    "values": QT_TRANSLATE_NOOP("MainWindow", "values"),
    "valid_lens": QT_TRANSLATE_NOOP("MainWindow", "valid lengths"),
}
FILL_NAMES = {
    "random": QT_TRANSLATE_NOOP("MainWindow", "random numbers"),
    "zeros": QT_TRANSLATE_NOOP("MainWindow", "zeros"),
    "ones": QT_TRANSLATE_NOOP("MainWindow", "ones"),
    "arange": QT_TRANSLATE_NOOP("MainWindow", "the book's arange values"),
}

#: Main windows alive in this process: a window rebuilt in another language replaces its
#: predecessor here, so nothing but this set has to hold on to it.
_WINDOWS: set["MainWindow"] = set()


# Set when frozen objects were released for collection: the next freeze collects first.
_collect_before_freeze = False


def _freeze_startup_objects() -> None:
    """Exempt everything alive after the first result from the cyclic garbage collector.

    By then Qt's wrappers, pyqtgraph and torch have created some 240,000 objects that live as
    long as the process. A full collection walks all of them on the GUI thread: 120-140 ms, a
    visible hitch in the middle of typing whenever Python decides to run one. ``gc.freeze``
    (meant for exactly this) moves them out of the collector's reach; later garbage is still
    collected as usual. Freezing only relinks the collector's lists (no walk); a collection
    first would itself be the hitch, so the little garbage alive at this moment stays. Once per
    process.
    """
    global _collect_before_freeze
    if gc.get_freeze_count() == 0:
        if _collect_before_freeze:
            # A window was replaced (language switch): its cycles are garbage now and must not
            # be frozen with the rest. One collection, once per switch.
            _collect_before_freeze = False
            gc.collect()
        gc.freeze()


def _unfreeze_for_collection() -> None:
    """Give frozen objects back to the collector (a window was replaced and may be among them:
    frozen, its reference cycles and the results they hold would never be freed)."""
    global _collect_before_freeze
    gc.unfreeze()
    _collect_before_freeze = True


class MainWindow(QMainWindow):
    #: Emitted after an outcome has been drawn (for tests and the benchmark).
    outcomeShown = Signal(object)
    #: Emitted with the new window after ``set_language`` rebuilt this one in another language.
    replacedBy = Signal(object)

    def __init__(
        self,
        preset: str = DEFAULT_PRESET,
        scheduler: ComputeScheduler | None = None,
        *,
        document: Document | None = None,
        undo_stack: QUndoStack | None = None,
    ) -> None:
        """A window on a new document with ``preset``'s inputs, or on ``document`` (with its
        ``undo_stack``, which this window then owns): how a language switch keeps the work."""
        super().__init__()
        self.setWindowTitle("attnviz")
        self._retired = False
        self.document = document if document is not None else Document(PRESETS[preset].build())
        if undo_stack is not None:
            undo_stack.setParent(self)
            self.undo_stack = undo_stack
        else:
            self.undo_stack = QUndoStack(self)
        self.scheduler = scheduler or ComputeScheduler(parent=self)
        self.scheduler.finished.connect(self._on_outcome)
        # Frees replaced results (see _on_outcome): one thread, started on first use.
        self._releaser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnviz-release")
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
        controls_scroll = self.controls_scroll = QScrollArea()
        controls_scroll.setWidgetResizable(True)
        controls_scroll.setWidget(self.controls)
        # As wide as the widest row of labels and fields needs (a translation may be wider than the
        # English), plus room for the vertical scroll bar, so no field is ever cut off.
        bar = controls_scroll.verticalScrollBar().sizeHint().width()
        needed = self.controls.minimumSizeHint().width() + bar + 2 * controls_scroll.frameWidth()
        controls_scroll.setMinimumWidth(max(280, needed))
        controls_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bottom = self.bottom_splitter = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.inputs)
        bottom.addWidget(self.output)
        bottom.setSizes([700, 400])
        right = self.right_splitter = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.results)
        right.addWidget(bottom)
        right.setSizes([520, 320])
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(controls_scroll)
        main.addWidget(right)
        main.setSizes([max(300, controls_scroll.minimumWidth()), 1100])
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

        # Through a weak reference: the document may outlive this window (a language switch hands
        # it to a new one), and must neither keep the old window alive nor redraw it.
        this = weakref.ref(self)

        def on_document_changed(_edit: Edit | None) -> None:
            window = this()
            if window is not None and not window._retired:
                window._on_document_changed()

        self._document_listener = on_document_changed
        self.document.subscribe(on_document_changed)
        self._first_paint_done = False
        self._on_document_changed()
        self.resize(1400, 860)
        self._install_features()
        _WINDOWS.add(self)

    def _install_features(self) -> None:
        """Feature modules add their menus, docks and actions to the window."""
        from attnviz.ui.files.file_actions import install_file_actions

        from attnviz.ui.files.copy_code import install_copy_code
        from attnviz.ui.views.lessons import install_lessons
        from attnviz.ui.views.masking_lab import install_masking_lab
        from attnviz.ui.views.scaling_lab import install_scaling_lab
        from attnviz.ui.views.teaching_docks import install_compare_view, install_pipeline_view

        self.file_actions = install_file_actions(self)
        self.pipeline_dock = install_pipeline_view(self)
        self.compare_dock = install_compare_view(self)
        self.masking_lab_dock = install_masking_lab(self)
        self.scaling_lab_dock = install_scaling_lab(self)
        self.lessons = install_lessons(self)
        self.code_copier = install_copy_code(self)
        self._restore_layout()

    def _restore_layout(self) -> None:
        """Window size, position and docks as the user left them (QSettings)."""
        from attnviz.ui.app.settings import default_settings

        settings = default_settings()
        geometry = settings.value("window/geometry")
        state = settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def _save_layout(self) -> None:
        from attnviz.ui.app.settings import default_settings

        settings = default_settings()
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState())

    # ------------------------------------------------------------------ chrome

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        # Fixed-size labels: their texts change at every edit, and a plain QLabel would make the
        # whole window lay itself out again each time.
        # (computing, loading, failed, current): a window is rebuilt when the language changes.
        self._state_texts = (translate("MainWindow", "computing…"), translate("MainWindow", "loading PyTorch…"),
                             translate("MainWindow", "error: showing the last good result"),
                             translate("MainWindow", "up to date"))
        self.status_state = SteadyLabel(self._state_texts)
        self.status_state.setToolTip(translate("MainWindow", "Whether the pictures show the current inputs"))
        self.status_device = SteadyLabel(["cpu · bfloat16"])
        self.status_device.setToolTip(translate("MainWindow", "Device and dtype of the last result"))
        self.status_time = SteadyLabel(["00000.0 ms"])
        self.status_time.setToolTip(translate("MainWindow", "Compute time of the last result (engine only)"))
        # A busy bar only once a computation has taken more than a moment: flashing it for
        # every 2 ms toy computation would be noise.
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(120)
        self.busy_bar.setToolTip(translate("MainWindow", "Computing…"))
        self.busy_bar.setVisible(False)
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(300)
        self._busy_timer.timeout.connect(lambda: self.busy_bar.setVisible(self.scheduler.busy))
        self.cpu_button = QPushButton(translate("MainWindow", "Run on CPU"))
        self.cpu_button.setToolTip(translate("MainWindow", "The device failed (missing or out of memory): compute on "
                                                           "the CPU instead"))
        self.cpu_button.clicked.connect(lambda: self._on_settings({"device": "cpu"}))
        self.cpu_button.setVisible(False)
        bar.addPermanentWidget(self.cpu_button)
        bar.addPermanentWidget(self.busy_bar)
        for label in (self.status_state, self.status_device, self.status_time):
            bar.addPermanentWidget(label)

    def _build_menus(self) -> None:
        # Feature modules add their actions to these menus (see ``install_features``).
        file_menu = self.file_menu = self.menuBar().addMenu(translate("MainWindow", "&File"))
        quit_action = QAction(translate("MainWindow", "&Quit"), self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.setToolTip(translate("MainWindow", "Close attnviz"))
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        edit_menu = self.edit_menu = self.menuBar().addMenu(translate("MainWindow", "&Edit"))
        undo = self.undo_action = self.undo_stack.createUndoAction(self, translate("MainWindow", "&Undo"))
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.redo_action = self.undo_stack.createRedoAction(self, translate("MainWindow", "&Redo"))
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        edit_menu.addAction(undo)
        edit_menu.addAction(redo)
        edit_menu.addSeparator()
        # Copy and Paste act on the table that has the focus (the tables also take the keys
        # themselves); from the menu they reach the table the user last worked in.
        self.copy_action = QAction(translate("MainWindow", "&Copy"), self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setToolTip(translate("MainWindow", "Copy the selected cells of the current table as tab-separated text"))
        self.copy_action.triggered.connect(lambda: self._table_command("copy"))
        self.paste_action = QAction(translate("MainWindow", "&Paste"), self)
        self.paste_action.setShortcut(QKeySequence.StandardKey.Paste)
        self.paste_action.setToolTip(translate("MainWindow", "Paste a block of numbers into the current table as one edit"))
        self.paste_action.triggered.connect(lambda: self._table_command("paste"))
        edit_menu.addAction(self.copy_action)
        edit_menu.addAction(self.paste_action)

        self.view_menu = self.menuBar().addMenu(translate("MainWindow", "&View"))
        self.presentation_action = QAction(translate("MainWindow", "&Presentation mode"), self)
        self.presentation_action.setCheckable(True)
        self.presentation_action.setShortcut(QKeySequence("F5"))
        self.presentation_action.setToolTip(translate(
            "MainWindow", "For a lecture hall: large fonts and cells, editing chrome hidden, still live (F5 or Esc "
                          "to leave)"))
        self.presentation_action.toggled.connect(self.set_presentation_mode)
        self.view_menu.addAction(self.presentation_action)
        self.view_menu.addSeparator()
        theme_menu = self.view_menu.addMenu(translate("MainWindow", "&Theme"))
        theme_menu.setToolTipsVisible(True)
        self.theme_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for mode, label, tip in (
            ("system", translate("MainWindow", "Follow the &system"),
             translate("MainWindow", "Light or dark as the desktop is")),
            ("light", translate("MainWindow", "&Light"),
             translate("MainWindow", "Light theme (good on a projector in a bright room)")),
            ("dark", translate("MainWindow", "&Dark"), translate("MainWindow", "Dark theme")),
        ):
            action = QAction(label, self, checkable=True)
            action.setToolTip(tip)
            action.triggered.connect(lambda _checked=False, m=mode: self.set_theme(m))
            group.addAction(action)
            theme_menu.addAction(action)
            self.theme_actions[mode] = action
        self.theme_actions[theme.current_mode()].setChecked(True)
        self._build_language_menu()
        self.view_menu.addSeparator()
        preset_menu = self.preset_menu = self.menuBar().addMenu(translate("MainWindow", "&Presets"))
        for preset in PRESETS.values():
            action = QAction(tr_text(preset.title), self)
            action.setToolTip(tr_text(preset.description))
            action.setStatusTip(tr_text(preset.description))
            action.triggered.connect(lambda _checked=False, name=preset.name: self.load_preset(name))
            preset_menu.addAction(action)
        preset_menu.setToolTipsVisible(True)

        self.tools_menu = self.menuBar().addMenu(translate("MainWindow", "&Tools"))
        help_menu = self.help_menu = self.menuBar().addMenu(translate("MainWindow", "&Help"))
        about = QAction(translate("MainWindow", "&About attnviz"), self)
        about.triggered.connect(lambda: QMessageBox.about(
            self, translate("MainWindow", "About attnviz"),
            f"<b>attnviz {__version__}</b>"
            + translate("MainWindow", "<p>See and debug attention: edit queries, keys, values and masks and watch "
                                      "every stage of the computation change.</p><p>Built on the chapter “Attention "
                                      "Scoring Functions” of <i>Dive into Deep Learning</i>.</p>")))
        help_menu.addAction(about)

    def _build_language_menu(self) -> None:
        """View › Language: follow the system, or one of LANGUAGES (each named in itself)."""
        menu = self.language_menu = self.view_menu.addMenu(translate("MainWindow", "&Language"))
        menu.setToolTipsVisible(True)
        group = QActionGroup(self)
        self.language_actions: dict[str, QAction] = {}
        choices = [("system", translate("MainWindow", "Follow the &system"),
                    translate("MainWindow", "The language of the desktop (Portuguese for any Portuguese locale, "
                                            "otherwise English)"))]
        choices += [(code, name, name) for code, name in LANGUAGES.items()]
        for choice, label, tip in choices:
            action = QAction(label, self, checkable=True)
            action.setToolTip(tip)
            action.triggered.connect(lambda _checked=False, c=choice: self.set_language(c))
            group.addAction(action)
            menu.addAction(action)
            self.language_actions[choice] = action
        self.language_actions[saved_language()].setChecked(True)

    # ------------------------------------------------------------------ edits

    def push(self, edit: Edit) -> None:
        """Apply an edit through the undo stack (the only way the document changes)."""
        self.undo_stack.push(DocumentCommand(self.document, edit))

    def _table_command(self, command: str) -> bool:
        """Copy from or paste into the focused table, else the input table on show."""
        from attnviz.ui.tables.tensor_table import TensorTableView

        focus = QApplication.focusWidget()
        table = focus if isinstance(focus, TensorTableView) else self.inputs.views[self.inputs.current_role()]
        if command == "copy":
            return table.copy_selection()
        return table.paste()

    def load_preset(self, name: str) -> None:
        preset = PRESETS[name]
        self.push(ReplaceState(preset.build(), message(QT_TRANSLATE_NOOP("MainWindow", "Load preset {title}"),
                                                       title=preset.title)))
        self.statusBar().showMessage(tr_text(preset.description), 10000)

    def _on_shape(self, dims: dict[str, int]) -> None:
        self.push(ReplaceState(resize_state(self.document.state, **dims),
                               QT_TRANSLATE_NOOP("MainWindow", "Change shape")))

    def _on_settings(self, changes: dict[str, object]) -> None:
        names = [SETTING_NAMES.get(name, name) for name in changes]
        # One setting (the usual case) stays a Source, so the undo text follows a language switch.
        what = names[0] if len(names) == 1 else ", ".join(tr_text(n) for n in names)
        self.push(SetSettings(changes, message(QT_TRANSLATE_NOOP("MainWindow", "Change {names}"), names=what)))

    def _on_block(self, role: str, batch: int, row: int, col: int, block: np.ndarray) -> None:
        self.inputs.clear_error()
        self.push(SetBlock(role, batch, row, col, np.asarray(block)))

    def _on_fill(self, role: str, kind: str, seed: int) -> None:
        self.push(ReplaceState(filled_state(self.document.state, role, kind, seed),
                               message(QT_TRANSLATE_NOOP("MainWindow", "Fill {role} with {kind}"),
                                       role=ROLE_NAMES.get(role, role), kind=FILL_NAMES.get(kind, kind))))

    def _on_batch(self, batch: int) -> None:
        self.inputs.show_state(self.document.state)
        self.results.set_batch(batch)

    def _on_document_changed(self) -> None:
        state = self.document.state
        self.controls.shapes.show_state(state)
        self.controls.settings.show_state(state)
        self.inputs.show_state(state)
        if self._first_paint_done:
            self._submit()
        self._update_status()

    def _submit(self) -> None:
        self._submitted_at = time.perf_counter()
        self.scheduler.submit(self.document.snapshot())

    def showEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        super().showEvent(event)
        if not self._first_paint_done:
            # The first computation imports PyTorch on the compute thread, and an import holds
            # Python's lock most of the time: started before the window has painted, it would
            # delay the window by as long. So start it once the event loop has painted.
            QTimer.singleShot(0, self._start_computing)

    def _start_computing(self) -> None:
        if not self._first_paint_done:
            self._first_paint_done = True
            self._submit()
            self._update_status()

    # ------------------------------------------------------------------ results

    def set_theme(self, mode: str) -> None:
        theme.apply_theme(mode)
        theme.save_mode(theme.current_mode())
        self.theme_actions[theme.current_mode()].setChecked(True)

    def set_presentation_mode(self, on: bool) -> None:
        """Enlarge everything and hide the editing chrome; the tables stay so a teacher can
        still change a valid length on the projector and the class sees the effect."""
        if self.presentation_action.isChecked() != on:
            self.presentation_action.setChecked(on)  # re-enters through toggled
            return
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        if on:
            self._normal_font = app.font()
            big = app.font()
            big.setPointSizeF(max(big.pointSizeF(), 9.0) * 1.6)
            app.setFont(big)
        elif hasattr(self, "_normal_font"):
            app.setFont(self._normal_font)
        self.results.set_font_scale(PRESENTATION_SCALE if on else 1.0)
        self.controls_scroll.setVisible(not on)
        self.output.setVisible(not on)
        self.statusBar().setVisible(not on)
        self.menuBar().setVisible(not on)
        if on:
            self.right_splitter.setSizes([700, 200])

    def keyPressEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        if event.key() == Qt.Key.Key_Escape and self.presentation_action.isChecked():
            self.set_presentation_mode(False)
            return
        super().keyPressEvent(event)

    def _on_outcome(self, outcome: Outcome) -> None:
        if outcome.version != self.document.version:
            self.dropped_outcomes += 1  # the inputs have moved on; a newer result is coming
            return
        previous = [self.last_outcome]  # released at the end, off this thread
        self.last_outcome = outcome
        self._show_error(outcome)
        if outcome.view is not None:
            devices = outcome.extra.get("devices")
            if isinstance(devices, list):
                self.controls.settings.set_devices(devices)
            self.results.show_view(outcome.view, min(self.inputs.batch.value(), outcome.view.weights.shape[0] - 1))
        if self.shown_version < 0 and outcome.view is not None:
            _freeze_startup_objects()
        self.shown_version = outcome.version
        self._update_status()
        self.outcomeShown.emit(outcome)
        # Every view now holds the new result; the old one (hundreds of MiB of torch memory at
        # 4096x4096, ~50 ms to free) is dropped on the releaser's thread, not this one.
        try:
            self._releaser.submit(previous.clear)
        except RuntimeError:  # the window is closing: drop it here
            previous.clear()

    def _show_error(self, outcome: Outcome) -> None:
        self._error = outcome if outcome.error else None
        shape_msg = settings_msg = input_msg = None
        if outcome.error:
            # Shown translated if the compute side ever hands over a marked (attnviz.tr) message.
            text = tr_text(outcome.error)
            if outcome.out_of_memory:
                text += translate("MainWindow", " — choose the CPU under Device to run there.")
            if outcome.error_field in SHAPE_FIELDS:
                shape_msg = text
            elif outcome.error_field in INPUT_FIELDS:
                input_msg = text
            else:
                settings_msg = text
            if self.results._view is not None:
                text += translate("MainWindow", " (showing the last good result)")
            self.statusBar().showMessage(text, 15000)
        self.cpu_button.setVisible(outcome.error_field == "device")
        self.controls.shape_error.show_message(shape_msg)
        self.controls.settings_error.show_message(settings_msg)
        if input_msg or outcome.error_field in INPUT_FIELDS or outcome.error is None:
            self.inputs.error.show_message(input_msg)

    def _update_status(self) -> None:
        outcome = self.last_outcome
        computing, loading, failed, current = self._state_texts
        bold = False
        if self.scheduler.busy or self.shown_version != self.document.version:
            state, color = (computing if outcome is not None else loading), "#8a5300"
        elif self._error is not None:
            state, color, bold = failed, theme.error_color(), True
        else:
            state, color = current, "#1b7f3b"
        if self.scheduler.busy:
            if not self._busy_timer.isActive() and not self.busy_bar.isVisible():
                self._busy_timer.start()
        else:
            self._busy_timer.stop()
            self.busy_bar.setVisible(False)
        self.status_state.show_text(state, color, bold=bold)
        if outcome is not None:
            self.status_device.show_text(f"{outcome.device} · {outcome.dtype}")
            self.status_time.show_text(f"{outcome.seconds * 1e3:.1f} ms")

    # ------------------------------------------------------------------ language

    def set_language(self, choice: str) -> "MainWindow":
        """Switch to ``choice`` ("system", or a code of LANGUAGES) and remember it.

        Qt widgets keep the texts they were given, so a different language rebuilds the window:
        the new one takes this window's document and undo stack (the inputs, the undo history
        and the file being edited survive), its layout, batch element, colour map and lesson,
        and this one closes without discarding the autosave. Returns the window now in use
        (this one when the language does not change); ``replacedBy`` tells the others.
        """
        save_language(choice)
        if choice in self.language_actions:
            self.language_actions[choice].setChecked(True)
        code, previous = resolve_language(choice), current_language()
        if code == previous:
            return self
        app = QApplication.instance()
        if not install_language(app, code):
            install_language(app, previous)  # the window keeps the language it is in
            self.statusBar().showMessage(
                translate("MainWindow", "The translation for {language} could not be loaded").format(
                    language=LANGUAGES.get(code, code)), 10000)
            return self
        return self._rebuild()

    def _rebuild(self) -> "MainWindow":
        presenting = self.presentation_action.isChecked()
        if presenting:
            self.set_presentation_mode(False)  # restores the normal font before it is measured
        self._save_layout()  # the new window restores it: same size, same docks
        for index in range(self.undo_stack.count()):
            command = self.undo_stack.command(index)
            if isinstance(command, DocumentCommand):
                command.retranslate()
        new = MainWindow(document=self.document, undo_stack=self.undo_stack)
        # The app deletes a closed window (WA_DeleteOnClose): then this one goes when it closes,
        # with the connections that would otherwise keep it alive. Tests keep theirs to inspect.
        delete_on_close = self.testAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        new.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, delete_on_close)
        new._adopt_view_state(self)
        if self.isMaximized():
            new.showMaximized()
        elif self.isFullScreen():
            new.showFullScreen()
        else:
            new.show()
        if presenting:
            new.set_presentation_mode(True)
        self._retire()
        self.replacedBy.emit(new)
        return new

    def _adopt_view_state(self, old: "MainWindow") -> None:
        """What the user was looking at in ``old`` (the document itself is shared)."""
        self.inputs.batch.setValue(min(old.inputs.batch.value(), self.inputs.batch.maximum()))
        self.inputs.tabs.setCurrentIndex(old.inputs.tabs.currentIndex())
        self.output.setCurrentIndex(old.output.currentIndex())
        self.results.colormap.setCurrentIndex(old.results.colormap.currentIndex())
        self.file_actions.adopt(old.file_actions)
        self.lessons.adopt(old.lessons)
        compare_old, compare_new = old.compare_dock.widget(), self.compare_dock.widget()
        compare_new.set_comparison(compare_old.comparison)

    def _retire(self) -> None:
        """Close a window that another has replaced: its document, undo stack and autosave
        carry on in the new one."""
        self._retired = True
        self.file_actions.retire()
        self.close()
        _WINDOWS.discard(self)
        _unfreeze_for_collection()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_layout()
        # Let a running computation end and the thread stop before the widgets go away.
        self.scheduler.shutdown()
        for dock in (self.compare_dock, self.masking_lab_dock, self.scaling_lab_dock):
            dock.widget().shutdown()
        super().closeEvent(event)
        if event.isAccepted():
            self._releaser.shutdown(wait=True)
            _WINDOWS.discard(self)
            self.document.unsubscribe(self._document_listener)


def create_window(preset: str = DEFAULT_PRESET) -> MainWindow:
    return MainWindow(preset)


