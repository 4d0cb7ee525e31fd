"""The window's edit controller: the panels' requests become edits pushed through the session,
and the session's document and selection come back to the panels.

One way: the controls (shapes, settings, long masks) and the input tables never change the
document; they ask, this turns the ask into an ``Edit`` (``SetBlock``, ``SetSettings``,
``ReplaceState``) for ``AppSession.push``, and the panels show what the document then holds.
An error goes next to the control that caused it (``show_error``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QWidget

from attnviz.state import catalog
from attnviz.state.document import Edit, ReplaceState, SetBlock, SetSettings, State, filled_state, resize_state
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.app.controls import ControlsColumn
from attnviz.ui.app.results_panel import ResultsPanel
from attnviz.ui.app.session import AppSession, Selection
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.tables.inputs_panel import InputsPanel
from attnviz.ui.tables.tensor_table import TensorTableView

__all__ = ["FILL_NAMES", "INPUT_FIELDS", "SHAPE_FIELDS", "EditController"]

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


class EditController(QObject):
    """Edits from ``controls`` and ``inputs`` into ``session``, its states back into them.

    ``shown()`` is called after the panels show a new document or head (the window's status).
    A child of ``window``: its slots go with it (a session given to the window may outlive it).
    """

    def __init__(
        self,
        window: QWidget,
        session: AppSession,
        controls: ControlsColumn,
        inputs: InputsPanel,
        results: ResultsPanel,
        shown: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self.session = session
        self.controls = controls
        self.inputs = inputs
        self.results = results
        self._shown = shown
        self._selection_moved = False  # by an edit: shown with its documentChanged
        # Panels -> edits.
        controls.shapes.shapeChanged.connect(self.on_shape)
        controls.settings.settingsChanged.connect(self.on_settings)
        controls.long_masks.settingsChanged.connect(self.on_settings)
        inputs.blockEdited.connect(self.on_block)
        inputs.fillRequested.connect(self.on_fill)
        inputs.batchChanged.connect(session.set_batch)
        inputs.focusChanged.connect(session.set_focus)
        inputs.message.connect(lambda text: session.show_status(text, 8000))
        session.selectionChanged.connect(self.on_selection)
        session.errorChanged.connect(self.show_error)

    # ------------------------------------------------------------------ panels -> edits

    def table_command(self, command: str) -> bool:
        """Copy from or paste into the focused table, else the input table on show."""
        focus = QApplication.focusWidget()
        table = focus if isinstance(focus, TensorTableView) else self.inputs.views[self.inputs.current_role()]
        if command == "copy":
            return table.copy_selection()
        return table.paste()

    def on_shape(self, dims: dict[str, int]) -> None:
        self.session.push(
            ReplaceState(
                resize_state(self.session.document.state, focus=self.session.selection.focus, **dims),
                QT_TRANSLATE_NOOP("MainWindow", "Change shape"),
            )
        )

    def on_settings(self, changes: dict[str, object]) -> None:
        # Described by the settings' declared names ("Change dropout"), in the language on show.
        self.session.push(SetSettings(changes))

    def on_block(self, role: str, batch: int, row: int, col: int, block: object) -> None:
        self.inputs.clear_error()
        self.session.push(SetBlock(role, batch, row, col, block, self.session.selection.focus))  # type: ignore[arg-type]

    def on_fill(self, role: str, kind: str, seed: int) -> None:
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

    # ------------------------------------------------------------------ the session -> panels

    def show_all(self, state: State) -> None:
        selection = self.session.selection
        view = state.head_view(selection.focus)
        self.controls.shapes.show_state(view)
        self.controls.settings.show_state(state, view)
        self.controls.long_masks.show_state(state)
        self.inputs.show_state(state, selection.batch, selection.focus)

    def show_document(self, edit: Edit | None) -> None:
        """The panels after ``edit`` (None: a new document): only what it changed follows."""
        state = self.session.document.state
        if self.session.error_field not in INPUT_FIELDS:
            # A cell refused earlier ("'abc' is not a number") is history once a valid edit
            # went through; an input error of the computation is the session's to clear.
            self.inputs.clear_error()
        selection = self.session.selection
        moved, self._selection_moved = self._selection_moved, False
        if moved:
            self.show_all(state)  # the edit brought another head on show: everything follows
        elif isinstance(edit, SetBlock):
            # A typed cell or a paste changes one array: only the table that shows it follows.
            self.inputs.show_role(state, edit.role, selection.batch, selection.focus)
        elif isinstance(edit, SetSettings):
            self.controls.settings.show_state(state, state.head_view(selection.focus))
            self.controls.long_masks.show_state(state)
            if "lens_mode" in edit.changes:
                self.inputs.show_state(state, selection.batch, selection.focus)
        else:
            self.show_all(state)
        self._shown()

    def on_selection(self, selection: Selection) -> None:
        if self.session.applying_edit:
            self._selection_moved = True  # shown once, with the edit's documentChanged
            return
        state = self.session.document.state
        view = state.head_view(selection.focus)
        # Another head may have other sizes and its call another causal flag.
        self.controls.shapes.show_state(view)
        self.controls.settings.show_state(state, view)
        self.inputs.show_state(state, selection.batch, selection.focus)
        self._shown()

    def show_error(self, field: str | None, error: str | None) -> None:
        """``error`` beside the panel of ``field`` (shapes, inputs, else settings) and in the
        status bar; None clears them."""
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
