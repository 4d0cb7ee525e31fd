"""File menu: open sessions and tensor files, save, recent files, exports, and autosave.

``install_file_actions(window)`` adds everything to ``window.file_menu`` (above Quit) and returns
the :class:`FileActions` that owns it (also stored as ``window.file_actions``).

Rules kept here:

* loading anything is ONE ``ReplaceState`` edit, so Undo brings the previous inputs back;
* a refused file shows one line in a message box and leaves the document untouched;
* dialogs go through ``QFileDialog``/``QMessageBox`` static methods and the ``choose_roles``
  attribute, so tests (and scripts) replace them instead of clicking;
* autosave writes a few seconds after a change (at most once per interval while the user types),
  never on every keystroke, and is removed on a clean exit; ``offer_restore`` brings it back
  after a crash.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMessageBox, QWidget

from ..document import ReplaceState, State
from ..io import (
    TensorFile,
    autosave_path,
    clear_autosave,
    guess_roles,
    load_tensor_file,
    read_autosave,
    write_autosave,
)
from ..io.errors import AttnvizFileError
from .app_settings import default_settings
from ..io.state_io import is_session_path, load_state_file, save_state_file, session_to_state, state_to_session
from .export import ExportError, build_weights_figure, export_view_arrays, figure_subtitle
from .open_dialog import ask_roles, roles_complete

__all__ = ["AUTOSAVE_MS", "MAX_RECENT", "FileActions", "install_file_actions", "offer_restore"]

#: Autosave this long after the first unsaved change (further changes ride along).
AUTOSAVE_MS = 3000
MAX_RECENT = 10
RECENT_KEY = "recentFiles"
LAST_DIR_KEY = "lastDirectory"
OPEN_FILTER = ("Sessions and tensor files (*.attnviz *.npy *.npz *.pt *.pth *.safetensors);;"
               "attnviz sessions (*.attnviz);;Tensor files (*.npy *.npz *.pt *.pth *.safetensors);;All files (*)")
SESSION_FILTER = "attnviz session (*.attnviz)"
#: The app shows every batch element up to this many (results_panel.MAX_GRID), else the selected one.
_MAX_FIGURE_BATCH = 4

RolesChooser = Callable[[QWidget, TensorFile, dict[str, str], State], tuple[dict[str, str], int | None] | None]


class FileActions(QObject):
    """The File-menu actions of one main window, and its autosave."""

    def __init__(self, window: QWidget, *, settings: QSettings | None = None,
                 autosave_ms: int = AUTOSAVE_MS) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings if settings is not None else default_settings()
        self.current_path: Path | None = None
        #: Replaced by tests: (parent, tensor file, guessed roles, current state) -> choice or None.
        self.choose_roles: RolesChooser = ask_roles
        self._closed = False

        undo_stack = window.undo_stack  # type: ignore[attr-defined]
        undo_stack.cleanChanged.connect(self._on_clean_changed)
        if "[*]" not in window.windowTitle():
            # Where Qt shows the unsaved-changes marker.
            window.setWindowTitle(window.windowTitle() + "[*]")

        self.open_action = self._action("&Open…", QKeySequence.StandardKey.Open,
                                        "Open a session (.attnviz) or a tensor file (.npy, .npz, .pt, .safetensors)",
                                        lambda: self.open_file())
        self.save_action = self._action("&Save", QKeySequence.StandardKey.Save,
                                        "Save the inputs and settings as a session (.attnviz)", lambda: self.save())
        self.save_as_action = self._action("Save &As…", QKeySequence.StandardKey.SaveAs,
                                           "Save the session under a new name", lambda: self.save_as())
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setToolTipsVisible(True)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)

        self.export_menu = QMenu("&Export", window)
        self.export_menu.setToolTipsVisible(True)
        self.export_actions: dict[str, QAction] = {}
        for key, text, tip, slot in (
            ("weights.png", "Weights heatmaps as &PNG…", "The attention-weight heatmaps as a PNG image",
             lambda: self.export_weights_image(suffix=".png")),
            ("weights.svg", "Weights heatmaps as &SVG…", "The attention-weight heatmaps as an SVG drawing",
             lambda: self.export_weights_image(suffix=".svg")),
            ("weights.csv", "Weights as &CSV…", "Attention weights, one block per batch element",
             lambda: self.export_array("weights", ".csv")),
            ("weights.npy", "Weights as &NumPy .npy…", "Attention weights (batch, queries, keys)",
             lambda: self.export_array("weights", ".npy")),
            ("output.csv", "Output as C&SV…", "Attention output, one block per batch element",
             lambda: self.export_array("output", ".csv")),
            ("output.npy", "Output as N&umPy .npy…", "Attention output (batch, queries, d_v)",
             lambda: self.export_array("output", ".npy")),
        ):
            action = QAction(text, window)
            action.setToolTip(tip)
            action.setStatusTip(tip)
            action.triggered.connect(lambda _checked=False, f=slot: f())
            self.export_menu.addAction(action)
            self.export_actions[key] = action

        menu: QMenu = window.file_menu  # type: ignore[attr-defined]
        # Above what is already there (Quit stays last); None appends to an empty menu.
        first = menu.actions()[0] if menu.actions() else None
        for item in (self.open_action, self.recent_menu, None, self.save_action, self.save_as_action, None,
                     self.export_menu, None):
            if item is None:
                menu.insertSeparator(first)
            elif isinstance(item, QMenu):
                menu.insertMenu(first, item)
            else:
                menu.insertAction(first, item)

        # Autosave: single-shot, started by the first change and not restarted by later ones, so
        # a burst of edits is saved within ``autosave_ms`` instead of being postponed forever.
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(autosave_ms)
        self.autosave_timer.timeout.connect(self.autosave_now)
        window.document.subscribe(self._on_document_changed)  # type: ignore[attr-defined]
        window.installEventFilter(self)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------------ helpers

    def _on_clean_changed(self, clean: bool) -> None:
        # The undo stack also reports while the window is being destroyed.
        if shiboken6.isValid(self.window):
            self.window.setWindowModified(not clean)

    def _action(self, text: str, key: QKeySequence.StandardKey, tip: str, slot: Callable[[], object]) -> QAction:
        action = QAction(text, self.window)
        action.setShortcut(QKeySequence(key))
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _refuse(self, title: str, message: str) -> None:
        QMessageBox.warning(self.window, title, message)

    def _status(self, text: str, ms: int = 8000) -> None:
        status = getattr(self.window, "statusBar", None)
        if callable(status):
            status().showMessage(text, ms)

    def _start_dir(self) -> str:
        if self.current_path is not None:
            return str(self.current_path.parent)
        value = self.settings.value(LAST_DIR_KEY, "")
        return str(value) if value else str(Path.home())

    def _remember_dir(self, path: Path) -> None:
        self.settings.setValue(LAST_DIR_KEY, str(path.parent))

    def _set_current(self, path: Path | None) -> None:
        self.current_path = path
        name = path.name if path is not None else "untitled"
        # "[*]" is where Qt shows the modified marker (setWindowModified).
        self.window.setWindowTitle(f"{name}[*] — attnviz")
        self.window.undo_stack.setClean()  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ opening

    def open_file(self, path: str | os.PathLike[str] | None = None) -> bool:
        """Open a session or a tensor file (asking for one when ``path`` is None).

        Returns True when the inputs were replaced; on a refusal shows why and changes nothing.
        """
        if path is None:
            chosen, _filter = QFileDialog.getOpenFileName(self.window, "Open session or tensors",
                                                          self._start_dir(), OPEN_FILTER)
            if not chosen:
                return False
            path = chosen
        file_path = Path(path)
        notes: list[str] = []
        try:
            if is_session_path(file_path):
                state = load_state_file(file_path, notes=notes)
            else:
                loaded = self._state_from_tensors(file_path, notes)
                if loaded is None:
                    return False  # the user cancelled the roles dialog
                state = loaded
        except AttnvizFileError as exc:
            self._refuse("Cannot open file", str(exc))
            if not file_path.exists():
                self._forget_recent(file_path)
            return False
        except Exception as exc:  # noqa: BLE001 - a bug must not lose the user's session
            self._refuse("Cannot open file", f"{file_path.name}: unexpected error: {type(exc).__name__}: {exc}")
            return False
        self.window.push(ReplaceState(state, f"Open {file_path.name}"))  # type: ignore[attr-defined]
        self._add_recent(file_path)
        self._remember_dir(file_path)
        if is_session_path(file_path):
            self._set_current(file_path)
        else:
            # Tensors are not a session: Save asks for a name rather than overwrite the file.
            self.current_path = None
            self.window.setWindowTitle(f"{file_path.name} (tensors)[*] — attnviz")
        summary = f"Opened {file_path.name}"
        self._status(summary + (": " + "; ".join(notes) if notes else ""), 15000)
        return True

    def _state_from_tensors(self, path: Path, notes: list[str]) -> State | None:
        from ..io.state_io import state_from_tensor_file

        tf = load_tensor_file(path)
        base: State = self.window.document.state  # type: ignore[attr-defined]
        roles = guess_roles(tf)
        head: int | None = None
        if not roles_complete(tf, roles):
            answer = self.choose_roles(self.window, tf, roles, base)
            if answer is None:
                return None
            roles, head = answer
        return state_from_tensor_file(tf, roles, head, base, notes=notes)

    # ------------------------------------------------------------------ saving

    def save(self) -> bool:
        """Save to the current session file, or ask for one (Save As)."""
        if self.current_path is None:
            return self.save_as()
        return self._save_to(self.current_path)

    def save_as(self, path: str | os.PathLike[str] | None = None) -> bool:
        if path is None:
            start = self.current_path or Path(self._start_dir()) / "untitled.attnviz"
            chosen, _filter = QFileDialog.getSaveFileName(self.window, "Save session", str(start), SESSION_FILTER)
            if not chosen:
                return False
            path = chosen
        file_path = Path(path)
        if file_path.suffix.lower() != ".attnviz":
            file_path = file_path.with_name(file_path.name + ".attnviz")
        return self._save_to(file_path)

    def _save_to(self, path: Path) -> bool:
        try:
            save_state_file(path, self.window.document.state)  # type: ignore[attr-defined]
        except AttnvizFileError as exc:
            self._refuse("Cannot save", str(exc))
            return False
        self._set_current(path)
        self._add_recent(path)
        self._remember_dir(path)
        self._status(f"Saved {path}")
        return True

    # ------------------------------------------------------------------ recent files

    def recent_files(self) -> list[str]:
        value = self.settings.value(RECENT_KEY, [])
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
            self.recent_menu.addAction("No recent files").setEnabled(False)
            return
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("&Clear list", lambda: self._store_recent([]))

    # ------------------------------------------------------------------ exports

    def _current_view(self, what: str) -> object | None:
        window = self.window
        outcome = window.last_outcome  # type: ignore[attr-defined]
        if outcome is None or window.shown_version != window.document.version:  # type: ignore[attr-defined]
            self._refuse("Nothing to export", f"There is no {what} for the current inputs yet; "
                         "wait until the status bar says “up to date”.")
            return None
        if outcome.view is None:
            self._refuse("Nothing to export", f"The current inputs give an error, so there is no {what}: "
                         f"{outcome.error}")
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
            file_filter = "PNG image (*.png)" if suffix == ".png" else "SVG drawing (*.svg)"
            chosen = self._ask_export_path("Export weights heatmaps", "weights" + suffix, file_filter, suffix)
            if chosen is None:
                return False
            path = chosen
        file_path = Path(path)
        window = self.window
        n_batch = int(view.weights.shape[0])  # type: ignore[attr-defined]
        selected = min(window.inputs.batch.value(), n_batch - 1)  # type: ignore[attr-defined]
        batches = list(range(n_batch)) if n_batch <= _MAX_FIGURE_BATCH else [selected]
        title = f"{self.current_path.name if self.current_path else 'attnviz'}: attention weights"
        subtitle = figure_subtitle(window.document.state)  # type: ignore[attr-defined]
        colormap = window.results.colormap.currentData()  # type: ignore[attr-defined]
        try:
            figure = build_weights_figure(view, batches=batches, title=title, subtitle=subtitle,  # type: ignore[arg-type]
                                          colormap=colormap)
            try:
                figure.save(file_path)
            finally:
                figure.close()
        except (ExportError, ValueError) as exc:
            self._refuse("Cannot export", str(exc))
            return False
        self._remember_dir(file_path)
        self._status(f"Exported {file_path}")
        return True

    def export_array(self, what: str, suffix: str, path: str | os.PathLike[str] | None = None) -> bool:
        """Export ``what`` ("weights" or "output") of every batch element as CSV or .npy."""
        view = self._current_view(what)
        if view is None:
            return False
        if path is None:
            file_filter = "CSV (*.csv)" if suffix == ".csv" else "NumPy array (*.npy)"
            chosen = self._ask_export_path(f"Export {what}", what + suffix, file_filter, suffix)
            if chosen is None:
                return False
            path = chosen
        file_path = Path(path)
        try:
            export_view_arrays(view, what, file_path)  # type: ignore[arg-type]
        except AttnvizFileError as exc:
            self._refuse("Cannot export", str(exc))
            return False
        self._remember_dir(file_path)
        self._status(f"Exported {what} to {file_path}")
        return True

    # ------------------------------------------------------------------ autosave

    def _on_document_changed(self, _edit: object) -> None:
        if not self._closed and not self.autosave_timer.isActive():
            self.autosave_timer.start()

    def autosave_now(self) -> bool:
        """Write the autosave now; a failure goes to the status bar (a dialog every few seconds
        would be worse than no autosave)."""
        if self._closed:
            return False
        try:
            write_autosave(state_to_session(self.window.document.state))  # type: ignore[attr-defined]
        except AttnvizFileError as exc:
            self._status(f"Autosave failed: {exc}", 15000)
            return False
        return True

    def shutdown(self) -> None:
        """Clean exit: stop autosaving and remove the autosave (nothing to recover)."""
        if self._closed:
            return
        self._closed = True
        self.autosave_timer.stop()
        clear_autosave()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close:
            # Decide after the window has handled the close: if something vetoed it (a future
            # "save changes?" question), the window is still visible and the autosave stays.
            QTimer.singleShot(0, self._after_close)
        return False

    def _after_close(self) -> None:
        if not self.window.isVisible():
            self.shutdown()


def install_file_actions(window: QWidget, *, settings: QSettings | None = None,
                         autosave_ms: int = AUTOSAVE_MS) -> FileActions:
    """Add Open, Open Recent, Save, Save As and Export to ``window.file_menu`` and start autosave.

    Installing twice returns the first installation (with ``settings`` and ``autosave_ms``
    applied), so a window that installs its own and a test that installs again share one menu.
    """
    existing = getattr(window, "file_actions", None)
    if isinstance(existing, FileActions):
        if settings is not None:
            existing.settings = settings
        existing.autosave_timer.setInterval(autosave_ms)
        return existing
    actions = FileActions(window, settings=settings, autosave_ms=autosave_ms)
    window.file_actions = actions  # type: ignore[attr-defined]
    return actions


def offer_restore(window: QWidget) -> bool:
    """At start-up: if an autosave exists (the last run did not exit cleanly), ask whether to
    restore it. Yes pushes it as one undoable edit; No (or an unreadable autosave) deletes it."""
    try:
        session = read_autosave()
    except AttnvizFileError as exc:
        QMessageBox.warning(window, "Autosave unreadable", f"{exc}. It has been discarded.")
        clear_autosave()
        return False
    if session is None:
        return False
    path = autosave_path()
    try:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
    except OSError:
        when = "recently"
    answer = QMessageBox.question(
        window, "Restore unsaved work?",
        f"attnviz did not close normally last time. Restore the inputs autosaved {when}?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes)
    if answer != QMessageBox.StandardButton.Yes:
        clear_autosave()
        return False
    notes: list[str] = []
    try:
        state = session_to_state(session, source=path, notes=notes)
    except AttnvizFileError as exc:
        QMessageBox.warning(window, "Autosave unreadable", f"{exc}. It has been discarded.")
        clear_autosave()
        return False
    window.push(ReplaceState(state, "Restore autosaved inputs"))  # type: ignore[attr-defined]
    return True
