"""The main window: controls on the left, heatmaps on top, the tables being edited below.

It hosts the panels that show the session's document and results, and the features installed
into it (file actions, lessons, labs, teaching views, copy as code), each of which gets the
``AppSession`` and this window as a ``Host`` only. The flow is one way: a panel's edit becomes
an ``Edit`` pushed through the session; the session tells every view what changed and computes
off the GUI thread; its current outcome comes back and is drawn.
"""

from __future__ import annotations

import functools

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QPaintEvent,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolBar,
)

from attnviz import __version__
from attnviz.compute import Outcome
from attnviz.state import catalog
from attnviz.state.document import Edit, ReplaceState, SetBlock, SetSettings, State, filled_state, resize_state
from attnviz.teaching.presets import DEFAULT_PRESET, PRESETS
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui import theme
from attnviz.ui.app.controls import ControlsColumn
from attnviz.ui.app.host import HostWindow, ToolDock, ToolTab
from attnviz.ui.app.results_panel import OutputPanel, ResultsPanel
from attnviz.ui.app.session import AppSession, Selection
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
from attnviz.ui.labels import SteadyLabel
from attnviz.ui.pacing import next_frame
from attnviz.ui.tables.inputs_panel import InputsPanel
from attnviz.ui.views.presenter import PresentationHint
from attnviz.ui.window.presentation import PresentationLayout

__all__ = ["MainWindow"]

#: Which panel shows an error about which field.
SHAPE_FIELDS = {"shape", "queries", "keys", "values", "memory_budget"}
INPUT_FIELDS = {"valid_lens", "mask"}

#: Names of the fills in undo texts ("Fill keys with zeros"); the settings' and the inputs' names
#: are declared with them (``attnviz.state.settings``, ``catalog.ROLES``).
FILL_NAMES = {
    "random": QT_TRANSLATE_NOOP("MainWindow", "random numbers"),
    "zeros": QT_TRANSLATE_NOOP("MainWindow", "zeros"),
    "ones": QT_TRANSLATE_NOOP("MainWindow", "ones"),
    "arange": QT_TRANSLATE_NOOP("MainWindow", "the book's arange values"),
}
THEME_CHOICES = (
    (
        "system",
        QT_TRANSLATE_NOOP("MainWindow", "Follow the &system"),
        QT_TRANSLATE_NOOP("MainWindow", "Light or dark as the desktop is"),
    ),
    (
        "light",
        QT_TRANSLATE_NOOP("MainWindow", "&Light"),
        QT_TRANSLATE_NOOP("MainWindow", "Light theme (good on a projector in a bright room)"),
    ),
    ("dark", QT_TRANSLATE_NOOP("MainWindow", "&Dark"), QT_TRANSLATE_NOOP("MainWindow", "Dark theme")),
)
LANGUAGE_SYSTEM = (
    QT_TRANSLATE_NOOP("MainWindow", "Follow the &system"),
    QT_TRANSLATE_NOOP(
        "MainWindow", "The language of the desktop (Portuguese for any Portuguese locale, otherwise English)"
    ),
)


class MainWindow(HostWindow):
    """The application window on an ``AppSession`` (a new one on ``preset`` by default)."""

    def __init__(self, preset: str = DEFAULT_PRESET, *, session: AppSession | None = None) -> None:
        super().__init__(session if session is not None else AppSession(preset=preset))
        self.setWindowTitle("attnviz")
        session = self.session

        self.controls = ControlsColumn()
        self.inputs = InputsPanel()
        self.output = OutputPanel()
        self.results = ResultsPanel(session, self.output)
        # Controls on the left; the heatmaps large on top, the tables being edited right below
        # them, so an edit and its effect are in view together.
        controls_scroll = self.controls_scroll = QScrollArea()
        controls_scroll.setWidgetResizable(True)
        controls_scroll.setWidget(self.controls)
        controls_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._fit_controls_width()
        bottom = self.bottom_splitter = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.inputs)
        bottom.addWidget(self.output)
        bottom.setSizes([700, 400])
        # The input tables have four tabs and more columns: they take most of a narrow width.
        bottom.setStretchFactor(0, 3)
        bottom.setStretchFactor(1, 2)
        right = self.right_splitter = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.results)
        right.addWidget(bottom)
        right.setSizes([520, 320])
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(controls_scroll)
        main.addWidget(right)
        main.setSizes([max(300, controls_scroll.minimumWidth()), 1100])
        main.setStretchFactor(1, 1)
        self.main_view = main
        self.set_main_view(main, QT_TRANSLATE_NOOP("MainWindow", "Attention"))

        self._build_status_bar()
        self._build_menus()
        self.retranslate()

        # Panels -> edits.
        self.controls.shapes.shapeChanged.connect(self._on_shape)
        self.controls.settings.settingsChanged.connect(self._on_settings)
        self.controls.long_masks.settingsChanged.connect(self._on_settings)
        self.inputs.blockEdited.connect(self._on_block)
        self.inputs.fillRequested.connect(self._on_fill)
        self.inputs.batchChanged.connect(session.set_batch)
        self.inputs.focusChanged.connect(session.set_focus)
        self.inputs.message.connect(lambda text: session.show_status(text, 8000))
        # Session -> panels.
        self._selection_moved = False  # by an edit: shown with its documentChanged
        session.documentChanged.connect(self._on_document_changed)
        session.selectionChanged.connect(self._on_selection)
        session.outcomeShown.connect(self._on_outcome)
        session.errorChanged.connect(self._on_error)
        session.busyChanged.connect(lambda _busy: self._update_status())
        session.presentationChanged.connect(self._apply_presentation)
        # Rows a view asks to look at (a finding of the mask doctor) are outlined in the weights:
        # the weights come to the front.
        session.rowsOutlined.connect(lambda _rows: self.tool_tabs.setCurrentIndex(0))

        self._start_queued = False
        self._too_large = False  # the last outcome was refused as too large (see _on_outcome)
        self._show_all(session.document.state)
        self._update_status()
        self.resize(1400, 860)
        self._install_features()
        self._fit_to_screen()

    def _fit_to_screen(self) -> None:
        """Keep the window (and its frame) inside the screen's free area, however it was sized:
        a layout saved on a large screen must not open off the edges of a projector."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        free = screen.availableGeometry()
        # Before the first show there is no frame yet: leave room for a usual title bar.
        frame_w, frame_h = (
            (16, 40)
            if not self.isVisible()
            else (self.frameGeometry().width() - self.width(), self.frameGeometry().height() - self.height())
        )
        width = max(min(self.width(), free.width() - frame_w), self.minimumSizeHint().width())
        height = max(min(self.height(), free.height() - frame_h), self.minimumSizeHint().height())
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        x = min(max(self.x(), free.left()), max(free.left(), free.right() - width - frame_w))
        y = min(max(self.y(), free.top()), max(free.top(), free.bottom() - height - frame_h))
        if (x, y) != (self.x(), self.y()):
            self.move(x, y)

    def _install_features(self) -> None:
        """Feature modules add their menus, docks and actions through the Host interface."""
        from attnviz.ui.files.copy_code import install_copy_code
        from attnviz.ui.files.file_actions import install_file_actions
        from attnviz.ui.views.doctor import install_doctor
        from attnviz.ui.views.heads import install_heads_view
        from attnviz.ui.views.lessons import install_lessons
        from attnviz.ui.views.long_context import install_long_context_view
        from attnviz.ui.views.masking_lab import install_masking_lab
        from attnviz.ui.views.model_overview import install_model_overview
        from attnviz.ui.views.pipeline import install_pipeline_view
        from attnviz.ui.views.presenter import install_presenter
        from attnviz.ui.views.run_compare import install_run_compare
        from attnviz.ui.views.scaling_lab import install_scaling_lab
        from attnviz.ui.views.side_by_side import install_compare_view
        from attnviz.ui.views.tokens import install_tokens_view

        session = self.session
        self.file_actions = install_file_actions(session, self)
        self.pipeline_dock = install_pipeline_view(session, self)
        self.compare_dock = install_compare_view(session, self)
        self.masking_lab_dock = install_masking_lab(session, self)
        self.scaling_lab_dock = install_scaling_lab(session, self)
        self.lessons = install_lessons(session, self)
        self.code_copier = install_copy_code(session, self)
        self.heads_dock = install_heads_view(session, self)
        self.overview_dock = install_model_overview(session, self)
        self.tokens_dock = install_tokens_view(session, self)
        self.long_dock = install_long_context_view(session, self)
        self.doctor_dock = install_doctor(session, self)
        self.run_compare_dock = install_run_compare(session, self)
        self.presenter = install_presenter(session, self, self.lessons, lambda: self.set_presentation_mode(False))
        # Over the views, in the place of the hidden menus, only while presenting.
        bar = self.presenter_toolbar = QToolBar()
        bar.setObjectName("presenterToolbar")
        bar.setMovable(False)
        bar.setFloatable(False)
        bar.toggleViewAction().setVisible(False)
        bar.addWidget(self.presenter)
        self.presenter.show()
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        bar.hide()
        self.tool_tabs.currentChanged.connect(self.presentation.lesson_beside_view)
        # A lesson loaded while presenting opens its panel at the presentation's width.
        if isinstance(self.lessons.dock, ToolDock):
            self.lessons.dock.visibilityChanged.connect(self._fit_lesson)
        session.outcomeShown.connect(self._split_output)
        self._restore_layout()
        bar.hide()
        self._had_heads = not session.document.state.run.single_head
        self._had_comparison = session.document.state.compared_with is not None

    def _fit_controls_width(self) -> None:
        # As wide as the widest row of labels and fields needs (a translation may be wider than
        # the English), plus room for the vertical scroll bar, so no field is ever cut off.
        scroll = self.controls_scroll
        bar = scroll.verticalScrollBar().sizeHint().width()
        needed = self.controls.minimumSizeHint().width() + bar + 2 * scroll.frameWidth()
        scroll.setMinimumWidth(max(280, needed))

    def _restore_layout(self) -> None:
        """Window size, position and docks as the user left them (QSettings)."""
        from attnviz.ui.preferences import default_settings

        settings = default_settings()
        geometry = settings.value("window/geometry")
        state = settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        # Tool views open as tabs (or in their own windows) are not part of saveState.
        detached = _string_list(settings.value("window/detached"))
        for name in _string_list(settings.value("window/tabs")):
            tool = self.dock(name)
            if isinstance(tool, ToolTab):
                tool.setFloating(name in detached)
                tool.show()
        self.tool_tabs.setCurrentIndex(0)

    def _save_layout(self) -> None:
        from attnviz.ui.preferences import default_settings

        settings = default_settings()
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState())
        tabs = [tool for tool in self.findChildren(ToolTab) if tool.isVisible()]
        settings.setValue("window/tabs", [tool.objectName() for tool in tabs])
        settings.setValue("window/detached", [tool.objectName() for tool in tabs if tool.isFloating()])

    # ------------------------------------------------------------------ chrome

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        # Fixed-size labels: their texts change at every edit, and a plain QLabel would make the
        # whole window lay itself out again each time.
        self.status_state = SteadyLabel()
        self.status_device = SteadyLabel(["cpu · bfloat16"])
        self.status_time = SteadyLabel(["00000.0 ms"])
        # A busy bar only once a computation has taken more than a moment: flashing it for
        # every 2 ms toy computation would be noise.
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(120)
        self.busy_bar.setVisible(False)
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(300)
        self._busy_timer.timeout.connect(lambda: self.busy_bar.setVisible(self.session.busy))
        self.cpu_button = QPushButton()
        self.cpu_button.clicked.connect(lambda: self._on_settings({"device": "cpu"}))
        self.cpu_button.setVisible(False)
        bar.addPermanentWidget(self.cpu_button)
        bar.addPermanentWidget(self.busy_bar)
        for label in (self.status_state, self.status_device, self.status_time):
            bar.addPermanentWidget(label)

    def _build_menus(self) -> None:
        self.quit_action = self.add_action(
            "file",
            QT_TRANSLATE_NOOP("MainWindow", "&Quit"),
            self.close,
            shortcut=QKeySequence(QKeySequence.StandardKey.Quit),
            tip=QT_TRANSLATE_NOOP("MainWindow", "Close attnviz"),
        )
        undo_stack = self.session.undo_stack
        edit_menu = self.menu("edit")
        # Our own actions rather than QUndoStack.createUndoAction: that one fixes its "Undo"
        # prefix when it is made, and the prefix must follow the language.
        self.undo_action = QAction(self)
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.undo_action.triggered.connect(undo_stack.undo)
        self.redo_action = QAction(self)
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.redo_action.triggered.connect(undo_stack.redo)
        undo_stack.canUndoChanged.connect(self.undo_action.setEnabled)
        undo_stack.canRedoChanged.connect(self.redo_action.setEnabled)
        undo_stack.undoTextChanged.connect(self._update_undo_texts)
        undo_stack.redoTextChanged.connect(self._update_undo_texts)
        self.undo_action.setEnabled(undo_stack.canUndo())
        self.redo_action.setEnabled(undo_stack.canRedo())
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        self.addAction(self.undo_action)
        self.addAction(self.redo_action)
        edit_menu.addSeparator()
        # Copy and Paste act on the table that has the focus (the tables also take the keys
        # themselves); from the menu they reach the table the user last worked in.
        self.copy_action = self.add_action(
            "edit",
            QT_TRANSLATE_NOOP("MainWindow", "&Copy"),
            lambda: self._table_command("copy"),
            shortcut=QKeySequence(QKeySequence.StandardKey.Copy),
            tip=QT_TRANSLATE_NOOP("MainWindow", "Copy the selected cells of the current table as tab-separated text"),
        )
        self.paste_action = self.add_action(
            "edit",
            QT_TRANSLATE_NOOP("MainWindow", "&Paste"),
            lambda: self._table_command("paste"),
            shortcut=QKeySequence(QKeySequence.StandardKey.Paste),
            tip=QT_TRANSLATE_NOOP("MainWindow", "Paste a block of numbers into the current table as one edit"),
        )

        view_menu = self.menu("view")
        self.presentation_action = self.add_action(
            "view",
            QT_TRANSLATE_NOOP("MainWindow", "&Presentation mode"),
            lambda: None,
            shortcut="F5",
            tip=QT_TRANSLATE_NOOP(
                "MainWindow",
                "For a lecture hall: large fonts and cells, editing chrome hidden, still live (F5 or Esc to leave)",
            ),
        )
        self.presentation_action.setCheckable(True)
        self.presentation_action.toggled.connect(self.set_presentation_mode)
        # Shortcuts of a hidden menu bar do not fire: the window holds the actions that must work
        # in presentation mode too (F5 to leave it, undo and redo).
        self.addAction(self.presentation_action)
        self.presentation_hint = PresentationHint(self)
        #: Presentation mode's layout, fonts and zoom (ui/app/presentation.py).
        self.presentation = PresentationLayout(self)
        self.presentation.add_zoom_actions()
        view_menu.addSeparator()
        self.theme_menu = view_menu.addMenu("")
        self.theme_menu.setToolTipsVisible(True)
        self.theme_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for mode, label, tip in THEME_CHOICES:
            action = QAction(self, checkable=True)
            self._action_texts.append((action, label, tip))
            action.triggered.connect(lambda _checked=False, m=mode: self.set_theme(m))
            group.addAction(action)
            self.theme_menu.addAction(action)
            self.theme_actions[mode] = action
        self.theme_actions[theme.current_mode()].setChecked(True)
        self.language_menu = view_menu.addMenu("")
        self.language_menu.setToolTipsVisible(True)
        group = QActionGroup(self)
        self.language_actions: dict[str, QAction] = {}
        choices: list[tuple[str, str, str]] = [("system", *LANGUAGE_SYSTEM)] + [
            (code, name, name) for code, name in LANGUAGES.items()
        ]
        for choice, caption, hint in choices:
            action = QAction(caption, self, checkable=True)
            action.setToolTip(hint)
            if choice == "system":
                self._action_texts.append((action, caption, hint))
            action.triggered.connect(lambda _checked=False, c=choice: self.set_language(c))
            group.addAction(action)
            self.language_menu.addAction(action)
            self.language_actions[choice] = action
        self.language_actions[saved_language()].setChecked(True)
        view_menu.addSeparator()

        for preset in PRESETS.values():
            action = self.add_action(
                "presets",
                preset.title,
                functools.partial(self.session.load_preset, preset.name),
                tip=preset.description,
            )
            action.setStatusTip(tr_text(preset.description))

        self.add_action("help", QT_TRANSLATE_NOOP("MainWindow", "&About attnviz"), self._about)

    def _about(self) -> None:
        QMessageBox.about(
            self,
            translate("MainWindow", "About attnviz"),
            f"<b>attnviz {__version__}</b>"
            + translate(
                "MainWindow",
                "<p>See and debug attention: edit queries, keys, values and masks and watch "
                "every stage of the computation change.</p><p>Built on the chapter “Attention "
                "Scoring Functions” of <i>Dive into Deep Learning</i>.</p>",
            ),
        )

    def retranslate(self) -> None:
        super().retranslate()
        self.theme_menu.setTitle(translate("MainWindow", "&Theme"))
        self.language_menu.setTitle(translate("MainWindow", "&Language"))
        self._update_undo_texts()
        self._state_texts = (
            translate("MainWindow", "computing…"),
            translate("MainWindow", "loading PyTorch…"),
            translate("MainWindow", "error: showing the last good result"),
            translate("MainWindow", "up to date"),
        )
        self.status_state.expect(self._state_texts)
        self.status_state.setToolTip(translate("MainWindow", "Whether the pictures show the current inputs"))
        self.status_device.setToolTip(translate("MainWindow", "Device and dtype of the last result"))
        self.status_time.setToolTip(translate("MainWindow", "Compute time of the last result (engine only)"))
        self.busy_bar.setToolTip(translate("MainWindow", "Computing…"))
        self.cpu_button.setText(translate("MainWindow", "Run on CPU"))
        self.cpu_button.setToolTip(
            translate("MainWindow", "The device failed (missing or out of memory): compute on the CPU instead")
        )
        self.presentation_hint.retranslate()
        # After the panels have their new texts (they hear of the language change after the
        # window does): a translation may need a wider column.
        QTimer.singleShot(0, self, self._fit_controls_width)
        self._update_status()

    def _update_undo_texts(self, _text: str = "") -> None:
        stack = self.session.undo_stack
        for action, prefix, text in (
            (self.undo_action, translate("MainWindow", "&Undo"), stack.undoText()),
            (self.redo_action, translate("MainWindow", "&Redo"), stack.redoText()),
        ):
            action.setText(f"{prefix} {text}" if text else prefix)

    # ------------------------------------------------------------------ edits

    def _table_command(self, command: str) -> bool:
        """Copy from or paste into the focused table, else the input table on show."""
        from attnviz.ui.tables.tensor_table import TensorTableView

        focus = QApplication.focusWidget()
        table = focus if isinstance(focus, TensorTableView) else self.inputs.views[self.inputs.current_role()]
        if command == "copy":
            return table.copy_selection()
        return table.paste()

    def _on_shape(self, dims: dict[str, int]) -> None:
        self.session.push(
            ReplaceState(
                resize_state(self.session.document.state, focus=self.session.selection.focus, **dims),
                QT_TRANSLATE_NOOP("MainWindow", "Change shape"),
            )
        )

    def _on_settings(self, changes: dict[str, object]) -> None:
        # Described by the settings' declared names ("Change dropout"), in the language on show.
        self.session.push(SetSettings(changes))

    def _on_block(self, role: str, batch: int, row: int, col: int, block: object) -> None:
        self.inputs.clear_error()
        self.session.push(SetBlock(role, batch, row, col, block, self.session.selection.focus))  # type: ignore[arg-type]

    def _on_fill(self, role: str, kind: str, seed: int) -> None:
        self.session.push(
            ReplaceState(
                filled_state(self.session.document.state, role, kind, seed, self.session.selection.focus),
                message(
                    QT_TRANSLATE_NOOP("MainWindow", "Fill {role} with {kind}"),
                    role=catalog.role_word(role),
                    kind=FILL_NAMES.get(kind, kind),
                ),
            )
        )

    def _show_all(self, state: State) -> None:
        selection = self.session.selection
        view = state.head_view(selection.focus)
        self.controls.shapes.show_state(view)
        self.controls.settings.show_state(state, view)
        self.controls.long_masks.show_state(state)
        self.inputs.show_state(state, selection.batch, selection.focus)

    def _on_document_changed(self, edit: Edit | None) -> None:
        state = self.session.document.state
        if self.session.error_field not in INPUT_FIELDS:
            # A cell refused earlier ("'abc' is not a number") is history once a valid edit
            # went through; an input error of the computation is the session's to clear.
            self.inputs.clear_error()
        has_heads = not state.run.single_head
        if has_heads and not self._had_heads:
            # A model arrived (a file, a capture): its heads are what the user came to see, and
            # with several calls the layers x heads overview (the calls browser) comes first.
            self.heads_dock.show()
            self.heads_dock.raise_()
            if state.run.layers > 1:
                self.overview_dock.show()
                self.overview_dock.raise_()
        self._had_heads = has_heads
        compared = state.compared_with is not None
        if compared and not self._had_comparison:
            # A session that compares its run with a capture file opens on that comparison.
            self.run_compare_dock.show()
            self.run_compare_dock.raise_()
        self._had_comparison = compared
        selection = self.session.selection
        moved, self._selection_moved = self._selection_moved, False
        if moved:
            self._show_all(state)  # the edit brought another head on show: everything follows
        elif isinstance(edit, SetBlock):
            # A typed cell or a paste changes one array: only the table that shows it follows.
            self.inputs.show_role(state, edit.role, selection.batch, selection.focus)
        elif isinstance(edit, SetSettings):
            self.controls.settings.show_state(state, state.head_view(selection.focus))
            self.controls.long_masks.show_state(state)
            if "lens_mode" in edit.changes:
                self.inputs.show_state(state, selection.batch, selection.focus)
        else:
            self._show_all(state)
        self._update_status()

    def _on_selection(self, selection: Selection) -> None:
        if self.session.applying_edit:
            self._selection_moved = True  # shown once, with the edit's documentChanged
            return
        state = self.session.document.state
        view = state.head_view(selection.focus)
        # Another head may have other sizes and its call another causal flag.
        self.controls.shapes.show_state(view)
        self.controls.settings.show_state(state, view)
        self.inputs.show_state(state, selection.batch, selection.focus)
        self._update_status()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # A window that is never painted (minimised at start, say) still computes, a moment later.
        QTimer.singleShot(1000, self, self._start_computing)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.session.computing and not self._start_queued:
            # The first computation imports PyTorch on the compute thread, and an import holds
            # Python's lock most of the time: started before the window has painted, it would
            # delay the first paint by as long (half a second). So start it once the paint pass
            # that began with this event is over.
            self._start_queued = True
            QTimer.singleShot(0, self, self._start_computing)

    def _start_computing(self) -> None:
        self.session.start()
        self._update_status()

    # ------------------------------------------------------------------ results

    def _on_outcome(self, outcome: Outcome) -> None:
        if outcome.devices:
            self.controls.settings.set_devices(list(outcome.devices))
        self.cpu_button.setVisible(outcome.error_field == "device")
        was_too_large, self._too_large = self._too_large, outcome.too_large
        if outcome.too_large and not was_too_large and not self.long_dock.is_current_tab():
            # Too long for every stage at once: the long-context view streams it in bins. It
            # opens a frame later, once the refusal shown here is painted: laying the
            # new tab out takes 5-10 ms more, too much for the same frame.
            next_frame(self, self._open_long_view)
        self._update_status()

    def _open_long_view(self) -> None:
        # Brought forward when the input becomes too large (open already, a restored layout's
        # tab in the background, say), not again at each edit of it: the user may look elsewhere.
        # The last outcome shown decides, not the current one: an edit within the frame (a wheel
        # over a spin box) would otherwise skip the opening, and later outcomes do not ask again.
        if self._too_large and not self.long_dock.is_current_tab():
            self.long_dock.show()
            self.long_dock.raise_()

    def _on_error(self, field: str | None, error: str | None) -> None:
        shape_msg = settings_msg = input_msg = None
        if error:
            text = tr_text(error)
            outcome = self.session.last_outcome
            if outcome is not None and outcome.out_of_memory:
                text += translate("MainWindow", " — choose the CPU under Device to run there.")
            if field in SHAPE_FIELDS:
                shape_msg = text
            elif field in INPUT_FIELDS:
                input_msg = text
            else:
                settings_msg = text
            if self.results.has_view:
                text += translate("MainWindow", " (showing the last good result)")
            self.session.show_status(text, 15000)
        self.controls.shape_error.show_message(shape_msg)
        self.controls.settings_error.show_message(settings_msg)
        if input_msg or field in INPUT_FIELDS or error is None:
            self.inputs.error.show_message(input_msg)

    def _update_status(self) -> None:
        session = self.session
        outcome = session.last_outcome
        computing, loading, failed, current = self._state_texts
        bold = False
        if session.busy or not session.is_current:
            state, color = (computing if outcome is not None else loading), theme.warning_color()
        elif session.error_field is not None:
            state, color, bold = failed, theme.error_color(), True
        else:
            state, color = current, theme.ok_color()
        if session.busy:
            if not self._busy_timer.isActive() and not self.busy_bar.isVisible():
                self._busy_timer.start()
        else:
            self._busy_timer.stop()
            self.busy_bar.setVisible(False)
        self.status_state.show_text(state, color, bold=bold)
        if outcome is not None:
            self.status_device.show_text(f"{outcome.device} · {outcome.dtype}")
            self.status_time.show_text(f"{outcome.seconds * 1e3:.1f} ms")

    # ------------------------------------------------------------------ view options

    def set_theme(self, mode: str) -> None:
        theme.apply_theme(mode)
        theme.save_mode(theme.current_mode())
        self.theme_actions[theme.current_mode()].setChecked(True)

    def set_presentation_mode(self, on: bool) -> None:
        if self.presentation_action.isChecked() != on:
            self.presentation_action.setChecked(on)  # re-enters through toggled
            return
        self.session.set_presenting(on)

    def _apply_presentation(self, on: bool) -> None:
        self.presentation.apply(on)

    def _fit_lesson(self, visible: bool) -> None:
        # A slot of the window (not of a plain object): disconnected when the window goes.
        if visible:
            self.presentation.fit_lesson()

    def _split_output(self, _outcome: object) -> None:
        self.presentation.split_output()  # (a slot of the window, as _fit_lesson)

    def zoom_text(self, steps: int) -> None:
        """Presentation mode's text ``steps`` sizes larger (or smaller); 0: as designed."""
        self.presentation.zoom_text(steps)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self.presentation_action.isChecked():
            self.set_presentation_mode(False)
            return
        super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.presentation_hint.place()

    def set_language(self, choice: str) -> None:
        """Switch to ``choice`` ("system", or a code of LANGUAGES) and remember it. Every widget
        retranslates itself (Qt's LanguageChange): nothing is rebuilt, nothing is lost."""
        save_language(choice)
        if choice in self.language_actions:
            self.language_actions[choice].setChecked(True)
        code, previous = resolve_language(choice), current_language()
        if code == previous:
            return
        app = QApplication.instance()
        if not install_language(app, code):
            install_language(app, previous)  # the window keeps the language it is in
            self.session.show_status(
                translate("MainWindow", "The translation for {language} could not be loaded").format(
                    language=LANGUAGES.get(code, code)
                ),
                10000,
            )

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_layout()
        super().closeEvent(event)


def _string_list(value: object) -> list[str]:
    """A list of strings stored in QSettings (an INI file gives a lone string for one item)."""
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []
