"""File menu: open sessions and tensor files, save, recent files, exports, and autosave.

``install_file_actions(session, host)`` adds everything to the host's File menu (above Quit)
and returns the :class:`FileActions` that owns it.

Rules kept here:

* loading anything is ONE ``ReplaceState`` edit, so Undo brings the previous inputs back;
* files are read and parsed off the GUI thread (``loading.FileLoader``): the status bar shows
  what is being opened with a Cancel button, a newer Open supersedes one still reading, and
  ``openFinished(bool)`` says when it is over (True: the inputs were replaced);
* a refused file shows one line in a message box and leaves the document untouched;
* dialogs go through ``QFileDialog``/``QMessageBox`` static methods and the ``choose_roles``
  attribute, so tests (and scripts) replace them instead of clicking;
* autosave writes a few seconds after a change (at most once per interval while the user types),
  never on every keystroke, into this window's own autosave, which is removed when the session
  ends cleanly; ``offer_restore`` offers the autosaves of windows that did not end cleanly (never
  those of windows still open, in this process or another).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QSettings, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QWidget,
)
from superqt.utils import QSignalThrottler

from attnviz.compute import ViewData
from attnviz.document import ReplaceState, State, resize_state
from attnviz.io import (
    AutosaveSlot,
    TensorFile,
    guess_roles,
    is_capture_file,
    load_capture,
    load_tensor_file,
    stale_autosaves,
)
from attnviz.io.errors import AttnvizFileError
from attnviz.io.state_io import (
    is_session_path,
    load_state_and_focus,
    save_state_file,
    session_to_state_and_focus,
    state_from_tensor_file,
    state_to_session,
    tensor_file_focus,
)
from attnviz.model_run import Focus
from attnviz.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.app.host import Host
from attnviz.ui.app.session import AppSession
from attnviz.ui.files.autosave import AutosaveWriter
from attnviz.ui.files.export import ExportError, build_weights_figure, export_view_arrays, figure_subtitle
from attnviz.ui.files.loading import FileLoader
from attnviz.ui.files.open_dialog import ask_roles, roles_complete
from attnviz.ui.i18n import error_text, tr_text, translate
from attnviz.ui.preferences import default_settings

__all__ = ["AUTOSAVE_MS", "MAX_RECENT", "FileActions", "install_file_actions"]

#: Autosave this long after the first unsaved change (further changes ride along).
AUTOSAVE_MS = 3000
MAX_RECENT = 10
RECENT_KEY = "recentFiles"
LAST_DIR_KEY = "lastDirectory"
_TENSOR_PATTERNS = "*.npy *.npz *.pt *.pth *.safetensors"
#: What the exports and refusals call each result array.
WHAT_NAMES = {
    "attention map": QT_TRANSLATE_NOOP("FileActions", "attention map"),
    "weights": QT_TRANSLATE_NOOP("FileActions", "weights"),
    "output": QT_TRANSLATE_NOOP("FileActions", "output"),
}


def open_filter() -> str:
    """The Open dialog's file types (descriptions in the current language, patterns as they are)."""
    return ";;".join(
        (
            translate("FileActions", "Sessions, captures and tensor files")
            + f" (*.attnviz *.attnviz-capture {_TENSOR_PATTERNS})",
            translate("FileActions", "attnviz sessions") + " (*.attnviz)",
            translate("FileActions", "Captures (attnviz.capture)") + " (*.attnviz-capture)",
            translate("FileActions", "Tensor files") + f" ({_TENSOR_PATTERNS})",
            translate("FileActions", "All files") + " (*)",
        )
    )


def session_filter() -> str:
    return translate("FileActions", "attnviz session") + " (*.attnviz)"


#: The app shows every batch element up to this many (results_panel.MAX_GRID), else the selected one.
_MAX_FIGURE_BATCH = 4

#: Asks which array plays which role: (roles, head, layer), or None when the user cancelled.
RolesChooser = Callable[
    [QWidget, TensorFile, dict[str, str], State], tuple[dict[str, str], int | None, int | None] | None
]
#: A file still opening after this long gets the busy indicator (a quick one would only flash it).
OPEN_BUSY_MS = 200


@dataclass
class OpenedFile:
    """What the loader thread read: a session's state, or a tensor file (``state`` then built
    from ``base_version``'s inputs, head ``base_focus``, when its roles were complete, else None:
    the roles are asked). ``focus``: the head to show first."""

    path: Path
    state: State | None
    tensors: TensorFile | None = None
    roles: dict[str, str] = field(default_factory=dict)
    base_version: int = -1
    notes: list[str] = field(default_factory=list)
    focus: Focus = Focus()
    base_focus: Focus = Focus()


def read_file(path: Path, base: State, base_version: int, base_focus: Focus = Focus()) -> OpenedFile:
    """Read and parse ``path`` (runs on the loader's thread: no widget is touched)."""
    notes: list[str] = []
    if is_capture_file(path):
        # A capture (attnviz.capture), told by its content: every call, shown from the first.
        return OpenedFile(path, State.from_run(load_capture(path)), notes=notes)
    if is_session_path(path):
        session, shown = load_state_and_focus(path, notes=notes)
        return OpenedFile(path, session, notes=notes, focus=shown)
    tf = load_tensor_file(path)
    roles = guess_roles(tf)
    if not roles_complete(tf, roles):
        return OpenedFile(path, None, tf, roles, base_version, notes, base_focus=base_focus)
    state = state_from_tensor_file(tf, roles, None, base, notes=notes, base_focus=base_focus)
    return OpenedFile(path, state, tf, roles, base_version, notes, tensor_file_focus(state, None, None), base_focus)


class OpenProgress(QWidget):
    """For the status bar: which file is being opened, a busy bar and a Cancel button."""

    def __init__(self, cancel: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy: a read has no progress to report
        self.bar.setMaximumWidth(100)
        self.cancel_button = QPushButton()
        self.cancel_button.clicked.connect(cancel)
        for widget in (self.label, self.bar, self.cancel_button):
            layout.addWidget(widget)
        self.name = ""
        self.hide()

    def retranslate(self) -> None:
        self.label.setText(translate("FileActions", "Opening {name}…").format(name=self.name))
        self.bar.setToolTip(translate("FileActions", "Reading the file"))
        self.cancel_button.setText(translate("FileActions", "Cancel"))
        self.cancel_button.setToolTip(translate("FileActions", "Stop opening this file; the inputs stay as they are"))


class FileActions(QObject):
    """The File-menu actions of one session, and its autosave."""

    #: An Open is over: True when the inputs were replaced (False: refused, cancelled, superseded).
    openFinished = Signal(bool)

    def __init__(
        self, session: AppSession, host: Host, *, settings: QSettings | None = None, autosave_ms: int = AUTOSAVE_MS
    ) -> None:
        super().__init__(host.widget())
        self.session = session
        self.host = host
        self.window = host.widget()
        self.settings = settings if settings is not None else default_settings()
        self.current_path: Path | None = None
        #: The name of an opened tensor file (not a session: Save asks for a name), else None.
        self._tensor_name: str | None = None
        #: Replaced by tests: (parent, tensor file, guessed roles, current state) -> choice or None.
        self.choose_roles: RolesChooser = ask_roles
        self._closed = False
        self._loader = FileLoader(self)
        self._loader.loaded.connect(lambda _ticket, opened: self._on_read(opened))
        self._loader.failed.connect(lambda _ticket, exc: self._on_read_failed(exc))
        self._loader.busyChanged.connect(self._on_loading)
        self._opening: Path | None = None
        self.open_progress = OpenProgress(self.cancel_open)
        if isinstance(self.window, QMainWindow):
            self.window.statusBar().addPermanentWidget(self.open_progress)
        self._progress_timer = QTimer(self)
        self._progress_timer.setSingleShot(True)
        self._progress_timer.setInterval(OPEN_BUSY_MS)
        self._progress_timer.timeout.connect(lambda: self.open_progress.setVisible(self._loader.busy))

        session.undo_stack.cleanChanged.connect(self._on_clean_changed)
        if "[*]" not in self.window.windowTitle():
            # Where Qt shows the unsaved-changes marker.
            self.window.setWindowTitle(self.window.windowTitle() + "[*]")

        self.open_action = self._action(QKeySequence.StandardKey.Open, lambda: self.open_file())
        self.save_action = self._action(QKeySequence.StandardKey.Save, lambda: self.save())
        self.save_as_action = self._action(QKeySequence.StandardKey.SaveAs, lambda: self.save_as())
        self.recent_menu = QMenu(self.window)
        self.recent_menu.setToolTipsVisible(True)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)

        self.export_menu = QMenu(self.window)
        self.export_menu.setToolTipsVisible(True)
        self.export_actions: dict[str, QAction] = {}
        for key, slot in (
            ("weights.png", lambda: self.export_weights_image(suffix=".png")),
            ("weights.svg", lambda: self.export_weights_image(suffix=".svg")),
            ("weights.csv", lambda: self.export_array("weights", ".csv")),
            ("weights.npy", lambda: self.export_array("weights", ".npy")),
            ("output.csv", lambda: self.export_array("output", ".csv")),
            ("output.npy", lambda: self.export_array("output", ".npy")),
        ):
            action = QAction(self.window)
            action.triggered.connect(lambda _checked=False, f=slot: f())
            self.export_menu.addAction(action)
            self.export_actions[key] = action
        self.retranslate()
        session.languageChanged.connect(self.retranslate)

        menu = host.menu("file")
        # Above what is already there (Quit stays last), or appended to an empty menu.
        first = menu.actions()[0] if menu.actions() else None
        for item in (
            self.open_action,
            self.recent_menu,
            None,
            self.save_action,
            self.save_as_action,
            None,
            self.export_menu,
            None,
        ):
            if first is None:
                if item is None:
                    menu.addSeparator()
                elif isinstance(item, QMenu):
                    menu.addMenu(item)
                else:
                    menu.addAction(item)
            elif item is None:
                menu.insertSeparator(first)
            elif isinstance(item, QMenu):
                menu.insertMenu(first, item)
            else:
                menu.insertAction(first, item)

        # Autosave: a trailing throttle, started by the first change and not restarted by later
        # ones, so a burst of edits is saved within ``autosave_ms`` instead of being postponed
        # forever.
        self.autosave_timer = QSignalThrottler(QSignalThrottler.EmissionPolicy.Trailing, self)
        self.autosave_timer.setTimeout(autosave_ms)
        self.autosave_timer.triggered.connect(self._autosave_in_background)
        # The file is written on a thread of its own: an fsync on the GUI thread stalled it.
        self._autosave = AutosaveWriter(self)
        self._autosave.failed.connect(self._on_autosave_failed)
        session.documentChanged.connect(self._on_document_changed)
        session.on_shutdown(self.shutdown)

    # ------------------------------------------------------------------ helpers

    def _on_clean_changed(self, clean: bool) -> None:
        # The undo stack also reports while the window is being destroyed.
        if shiboken6.isValid(self.window):
            self.window.setWindowModified(not clean)

    def _action(self, key: QKeySequence.StandardKey, slot: Callable[[], object]) -> QAction:
        action = QAction(self.window)
        action.setShortcut(QKeySequence(key))
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def retranslate(self) -> None:
        """Texts of the File menu's entries in the current language."""
        for action, text, tip in (
            (
                self.open_action,
                translate("FileActions", "&Open…"),
                translate("FileActions", "Open a session (.attnviz) or a tensor file (.npy, .npz, .pt, .safetensors)"),
            ),
            (
                self.save_action,
                translate("FileActions", "&Save"),
                translate("FileActions", "Save the inputs and settings as a session (.attnviz)"),
            ),
            (
                self.save_as_action,
                translate("FileActions", "Save &As…"),
                translate("FileActions", "Save the session under a new name"),
            ),
            (
                self.export_actions["weights.png"],
                translate("FileActions", "Weights heatmaps as &PNG…"),
                translate("FileActions", "The attention-weight heatmaps as a PNG image"),
            ),
            (
                self.export_actions["weights.svg"],
                translate("FileActions", "Weights heatmaps as &SVG…"),
                translate("FileActions", "The attention-weight heatmaps as an SVG drawing"),
            ),
            (
                self.export_actions["weights.csv"],
                translate("FileActions", "Weights as &CSV…"),
                translate("FileActions", "Attention weights, one block per batch element"),
            ),
            (
                self.export_actions["weights.npy"],
                translate("FileActions", "Weights as &NumPy .npy…"),
                translate("FileActions", "Attention weights (batch, queries, keys)"),
            ),
            (
                self.export_actions["output.csv"],
                translate("FileActions", "Output as C&SV…"),
                translate("FileActions", "Attention output, one block per batch element"),
            ),
            (
                self.export_actions["output.npy"],
                translate("FileActions", "Output as N&umPy .npy…"),
                translate("FileActions", "Attention output (batch, queries, d_v)"),
            ),
        ):
            action.setText(text)
            action.setToolTip(tip)
            action.setStatusTip(tip)
        self.open_progress.retranslate()
        self.recent_menu.setTitle(translate("FileActions", "Open &Recent"))
        self.export_menu.setTitle(translate("FileActions", "&Export"))
        if self.current_path is not None or self._tensor_name is not None:
            self._update_title()  # "… (tensors)" in the new language

    def _refuse(self, title: str, message: str) -> None:
        QMessageBox.warning(self.window, title, message)

    def _status(self, text: str, ms: int = 8000) -> None:
        self.session.show_status(text, ms)

    def _start_dir(self) -> str:
        if self.current_path is not None:
            return str(self.current_path.parent)
        value = self.settings.value(LAST_DIR_KEY, "")
        return str(value) if value else str(Path.home())

    def _remember_dir(self, path: Path) -> None:
        self.settings.setValue(LAST_DIR_KEY, str(path.parent))

    def _set_current(self, path: Path | None) -> None:
        self.current_path = path
        self._tensor_name = None
        self._update_title()
        self.session.undo_stack.setClean()

    def _update_title(self) -> None:
        # "[*]" is where Qt shows the modified marker (setWindowModified).
        if self._tensor_name is not None:
            name = translate("FileActions", "{name} (tensors)").format(name=self._tensor_name)
        elif self.current_path is not None:
            name = self.current_path.name
        else:
            name = translate("FileActions", "untitled")
        self.window.setWindowTitle(f"{name}[*] — attnviz")

    # ------------------------------------------------------------------ opening

    def open_file(self, path: str | os.PathLike[str] | None = None) -> bool:
        """Open a session or a tensor file (asking for one when ``path`` is None).

        The file is read off the GUI thread; ``openFinished`` says how it ended. Returns False
        when the user cancelled the file dialog, True when the file is being opened.
        """
        if path is None:
            title = translate("FileActions", "Open session or tensors")
            chosen, _filter = QFileDialog.getOpenFileName(self.window, title, self._start_dir(), open_filter())
            if not chosen:
                return False
            path = chosen
        if self._closed:
            return False
        file_path = Path(path)
        if self._opening is not None:
            self.openFinished.emit(False)  # superseded: its result will be dropped
        self._opening = file_path
        document = self.session.document
        base, version, focus = document.state, document.version, self.session.selection.focus
        self.open_progress.name = file_path.name
        self.open_progress.retranslate()
        self._loader.start(lambda: read_file(file_path, base, version, focus))
        return True

    @property
    def opening(self) -> Path | None:
        """The file being opened now, if any."""
        return self._opening

    def cancel_open(self) -> None:
        """Stop opening the file being read: its result is dropped and the inputs stay as they are."""
        if self._opening is None:
            return
        name = self._opening.name
        self._opening = None
        self._loader.cancel()
        self._status(translate("FileActions", "Opening {name} cancelled").format(name=name))
        self.openFinished.emit(False)

    def _on_loading(self, busy: bool) -> None:
        if busy:
            self._progress_timer.start()
        else:
            self._progress_timer.stop()
            self.open_progress.hide()

    def _on_read_failed(self, exc: BaseException) -> None:
        file_path, self._opening = self._opening, None
        if file_path is None:
            return
        if isinstance(exc, AttnvizFileError):
            self._refuse(translate("FileActions", "Cannot open file"), error_text(exc))
            if not file_path.exists():
                self._forget_recent(file_path)
        else:  # a bug must not lose the user's session
            self._refuse(
                translate("FileActions", "Cannot open file"),
                translate("FileActions", "{name}: unexpected error: {error}").format(
                    name=file_path.name, error=f"{type(exc).__name__}: {exc}"
                ),
            )
        self.openFinished.emit(False)

    def _on_read(self, opened: OpenedFile) -> None:
        self._opening = None
        try:
            shown = self._state_of(opened)
        except AttnvizFileError as exc:
            self._refuse(translate("FileActions", "Cannot open file"), error_text(exc))
            shown = None
        if shown is None:
            self.openFinished.emit(False)
            return
        state, focus = shown
        file_path = opened.path
        text = message(QT_TRANSLATE_NOOP("FileActions", "Open {name}"), name=file_path.name)
        self.session.push(ReplaceState(state, text, focus))
        self._add_recent(file_path)
        self._remember_dir(file_path)
        if is_session_path(file_path):
            self._set_current(file_path)
        else:
            # Tensors are not a session: Save asks for a name rather than overwrite the file.
            self.current_path = None
            self._tensor_name = file_path.name
            self._update_title()
        notes = opened.notes
        summary = translate("FileActions", "Opened {name}").format(name=file_path.name)
        self._status(summary + (": " + "; ".join(tr_text(n) for n in notes) if notes else ""), 15000)
        self.openFinished.emit(True)

    def _state_of(self, opened: OpenedFile) -> tuple[State, Focus] | None:
        """The inputs ``opened`` gives and the head to show first, asking for the roles when its
        names do not tell (None: the user cancelled)."""
        tf = opened.tensors
        document = self.session.document
        focus = self.session.selection.focus
        unchanged = opened.base_version == document.version and opened.base_focus == focus
        if opened.state is not None and (tf is None or unchanged):
            return opened.state, opened.focus
        assert tf is not None
        roles, head, layer = opened.roles, None, None
        if opened.state is None:
            # The dialog previews a load that keeps the arrays the file lacks from the head on
            # show: it is given that head, as the book's input.
            answer = self.choose_roles(self.window, tf, roles, resize_state(document.state, focus=focus))
            if answer is None:
                return None
            roles, head, layer = answer
        # Built again from the inputs as they are now: arrays the file does not hold are kept.
        opened.notes.clear()
        state = state_from_tensor_file(
            tf, roles, head, document.state, layer=layer, notes=opened.notes, base_focus=focus
        )
        return state, tensor_file_focus(state, layer, head)

    # ------------------------------------------------------------------ saving

    def save(self) -> bool:
        """Save to the current session file, or ask for one (Save As)."""
        if self.current_path is None:
            return self.save_as()
        return self._save_to(self.current_path)

    def save_as(self, path: str | os.PathLike[str] | None = None) -> bool:
        if path is None:
            start = self.current_path or Path(self._start_dir()) / (translate("FileActions", "untitled") + ".attnviz")
            chosen, _filter = QFileDialog.getSaveFileName(
                self.window, translate("FileActions", "Save session"), str(start), session_filter()
            )
            if not chosen:
                return False
            path = chosen
        file_path = Path(path)
        if file_path.suffix.lower() != ".attnviz":
            file_path = file_path.with_name(file_path.name + ".attnviz")
        return self._save_to(file_path)

    def _save_to(self, path: Path) -> bool:
        try:
            save_state_file(path, self.session.document.state, self.session.selection.focus)
        except AttnvizFileError as exc:
            self._refuse(translate("FileActions", "Cannot save"), error_text(exc))
            return False
        self._set_current(path)
        self._add_recent(path)
        self._remember_dir(path)
        self._status(translate("FileActions", "Saved {path}").format(path=path))
        return True

    # ------------------------------------------------------------------ recent files

    def recent_files(self) -> list[str]:
        value: Any = self.settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # QSettings gives a lone string for a one-item list (INI)
            value = [value]
        return [str(v) for v in (value or []) if v]

    def _store_recent(self, paths: list[str]) -> None:
        self.settings.setValue(RECENT_KEY, paths[:MAX_RECENT])
        self.settings.sync()

    def _add_recent(self, path: Path) -> None:
        text = str(path.resolve())
        self._store_recent([text] + [p for p in self.recent_files() if p != text])

    def _forget_recent(self, path: Path) -> None:
        text = str(path.resolve())
        self._store_recent([p for p in self.recent_files() if p != text])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = self.recent_files()
        for index, text in enumerate(paths, start=1):
            path = Path(text)
            action = self.recent_menu.addAction(f"&{index % 10} {path.name}   —   {path.parent}")
            action.setToolTip(text)
            action.setData(text)
            action.triggered.connect(lambda _checked=False, p=text: self.open_file(p))
        if not paths:
            self.recent_menu.addAction(translate("FileActions", "No recent files")).setEnabled(False)
            return
        self.recent_menu.addSeparator()
        self.recent_menu.addAction(translate("FileActions", "&Clear list"), lambda: self._store_recent([]))

    # ------------------------------------------------------------------ exports

    def _current_view(self, what: str) -> ViewData | None:
        outcome = self.session.current_outcome()
        name = tr_text(WHAT_NAMES.get(what, what))
        if outcome is None:
            self._refuse(
                translate("FileActions", "Nothing to export"),
                translate(
                    "FileActions",
                    "There is no {what} for the current inputs yet; wait until the status bar says “up to date”.",
                ).format(what=name),
            )
            return None
        if outcome.view is None:
            why = translate("FileActions", "The current inputs give an error, so there is no {what}: {error}")
            self._refuse(
                translate("FileActions", "Nothing to export"), why.format(what=name, error=tr_text(outcome.error))
            )
            return None
        return outcome.view

    def _ask_export_path(self, title: str, default_name: str, file_filter: str, suffix: str) -> Path | None:
        start = Path(self._start_dir()) / default_name
        chosen, _filter = QFileDialog.getSaveFileName(self.window, title, str(start), file_filter)
        if not chosen:
            return None
        path = Path(chosen)
        return path if path.suffix.lower() == suffix else path.with_name(path.name + suffix)

    def export_weights_image(self, path: str | os.PathLike[str] | None = None, *, suffix: str = ".png") -> bool:
        """The weight heatmaps as shown (every batch element up to 4, else the selected one)."""
        view = self._current_view("attention map")
        if view is None:
            return False
        if path is None:
            file_filter = (
                translate("FileActions", "PNG image") + " (*.png)"
                if suffix == ".png"
                else translate("FileActions", "SVG drawing") + " (*.svg)"
            )
            chosen = self._ask_export_path(
                translate("FileActions", "Export weights heatmaps"), "weights" + suffix, file_filter, suffix
            )
            if chosen is None:
                return False
            path = chosen
        file_path = Path(path)
        n_batch = int(view.weights.shape[0])
        selected = min(self.session.selection.batch, n_batch - 1)
        batches = list(range(n_batch)) if n_batch <= _MAX_FIGURE_BATCH else [selected]
        title = translate("FileActions", "{name}: attention weights").format(
            name=self.current_path.name if self.current_path else "attnviz"
        )
        subtitle = figure_subtitle(self.session.document.state, self.session.selection.focus)
        colormap = self.session.colormap
        try:
            figure = build_weights_figure(view, batches=batches, title=title, subtitle=subtitle, colormap=colormap)
            try:
                figure.save(file_path)
            finally:
                figure.close()
        except (ExportError, ValueError) as exc:
            self._refuse(translate("FileActions", "Cannot export"), error_text(exc))
            return False
        self._remember_dir(file_path)
        self._status(translate("FileActions", "Exported {path}").format(path=file_path))
        return True

    def export_array(self, what: str, suffix: str, path: str | os.PathLike[str] | None = None) -> bool:
        """Export ``what`` ("weights" or "output") of every batch element as CSV or .npy."""
        view = self._current_view(what)
        if view is None:
            return False
        if path is None:
            file_filter = "CSV (*.csv)" if suffix == ".csv" else translate("FileActions", "NumPy array") + " (*.npy)"
            chosen = self._ask_export_path(
                translate("FileActions", "Export {what}").format(what=tr_text(WHAT_NAMES.get(what, what))),
                what + suffix,
                file_filter,
                suffix,
            )
            if chosen is None:
                return False
            path = chosen
        file_path = Path(path)
        try:
            export_view_arrays(view, what, file_path)
        except AttnvizFileError as exc:
            self._refuse(translate("FileActions", "Cannot export"), error_text(exc))
            return False
        self._remember_dir(file_path)
        self._status(
            translate("FileActions", "Exported {what} to {path}").format(
                what=tr_text(WHAT_NAMES.get(what, what)), path=file_path
            )
        )
        return True

    # ------------------------------------------------------------------ autosave

    def _on_document_changed(self, _edit: object) -> None:
        if not self._closed:
            self.autosave_timer.throttle()

    def _autosave_in_background(self) -> None:
        if not self._closed:
            # Copied here (arrays included), written on the writer's thread.
            self._autosave.submit(state_to_session(self.session.document.state, self.session.selection.focus))

    def autosave_now(self) -> bool:
        """Write the autosave and wait for it; a failure goes to the status bar (a dialog every
        few seconds would be worse than no autosave)."""
        if self._closed:
            return False
        self._autosave_in_background()
        return self._autosave.flush()

    def _on_autosave_failed(self, exc: BaseException) -> None:
        text = error_text(exc) if isinstance(exc, AttnvizFileError) else f"{type(exc).__name__}: {exc}"
        self._status(translate("FileActions", "Autosave failed: {error}").format(error=text), 15000)

    def shutdown(self) -> None:
        """Clean exit (the session ends): stop reading files and autosaving, and remove this
        window's autosave (nothing to recover)."""
        if self._closed:
            return
        self._closed = True
        self._opening = None
        self._loader.shutdown()  # a read still running ends first; its result is dropped
        self.autosave_timer.cancel()
        self._autosave.close(discard=True)  # a write still running ends first: it cannot bring the file back

    # ------------------------------------------------------------------ recovery

    def offer_restore(self) -> bool:
        """At start-up: offer the autosaves of windows that did not end cleanly, newest first.

        Yes restores one as one undoable edit, and its autosave becomes this window's own (the
        others stay for the next start); No, or an unreadable autosave, deletes the one offered
        and goes on to the next. Autosaves of windows still open are never offered or touched.
        """
        stale = stale_autosaves()
        try:
            while stale:
                slot = stale.pop(0)
                if self._offer(slot, len(stale)):
                    return True
                slot.discard()
            return False
        finally:
            for slot in stale:
                slot.release()  # not offered this time: a later start offers them

    def _offer(self, slot: AutosaveSlot, others: int) -> bool:
        """Ask about one stale autosave; True when it was restored (and adopted)."""
        unreadable = translate("FileActions", "Autosave unreadable")
        discarded = translate("FileActions", "{error}. It has been discarded.")
        try:
            saved = slot.read()
            restored = None if saved is None else session_to_state_and_focus(saved, source=slot.path, notes=[])
        except AttnvizFileError as exc:
            QMessageBox.warning(self.window, unreadable, discarded.format(error=error_text(exc)))
            return False
        if restored is None:
            return False
        state, focus = restored
        stamp = slot.modified()
        when = (
            time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))
            if stamp is not None
            else translate("FileActions", "recently")
        )
        question = translate(
            "FileActions", "attnviz did not close normally last time. Restore the inputs autosaved {when}?"
        ).format(when=when)
        if others:
            question += " " + translate(
                "FileActions",
                "Other windows that did not close normally left {n} more "
                "autosave(s): answer No to see the next one; after a Yes "
                "they are offered at the next start.",
            ).format(n=others)
        answer = QMessageBox.question(
            self.window,
            translate("FileActions", "Restore unsaved work?"),
            question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.Yes,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        self.session.push(ReplaceState(state, QT_TRANSLATE_NOOP("FileActions", "Restore autosaved inputs"), focus))
        # The restored work stays on disk, now as this window's autosave, until it is saved over.
        self._autosave.adopt(slot)
        return True


def install_file_actions(
    session: AppSession, host: Host, *, settings: QSettings | None = None, autosave_ms: int = AUTOSAVE_MS
) -> FileActions:
    """Add Open, Open Recent, Save, Save As and Export to the host's File menu and start autosave."""
    return FileActions(session, host, settings=settings, autosave_ms=autosave_ms)
