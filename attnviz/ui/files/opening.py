"""Opening a session, a capture or a tensor file from the File menu.

Rules kept here:

* loading anything is ONE ``ReplaceState`` edit, so Undo brings the previous inputs back;
* files are read and parsed off the GUI thread (``loading.FileLoader``): the status bar shows
  what is being opened with a Cancel button, a newer Open supersedes one still reading, and
  ``finished(bool)`` says when it is over (True: the inputs were replaced);
* a refused file shows one line in a message box and leaves the document untouched;
* the roles of a tensor file whose names do not tell are asked through ``choose_roles``, which
  tests (and scripts) replace instead of clicking.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QMainWindow, QProgressBar, QPushButton, QWidget

from attnviz.io import TensorFile, guess_roles, is_capture_file, load_capture, load_tensor_file
from attnviz.io.errors import AttnvizFileError
from attnviz.io.names import display_name
from attnviz.io.session import is_session_path
from attnviz.io.session_state import load_state_and_focus
from attnviz.io.tensor_import import state_from_tensor_file, tensor_file_focus
from attnviz.state.document import ReplaceState, State, resize_state
from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.files.context import FileContext
from attnviz.ui.files.loading import FileLoader
from attnviz.ui.files.open_dialog import ask_roles, roles_complete
from attnviz.ui.files.recent import RecentFiles
from attnviz.ui.i18n import error_text, tr_text, translate

__all__ = ["OPEN_BUSY_MS", "FileOpener", "OpenProgress", "OpenedFile", "RolesChooser", "open_filter", "read_file"]

_TENSOR_PATTERNS = "*.npy *.npz *.pt *.pth *.safetensors"


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


def read_ranks(paths: list[Path]) -> OpenedFile:
    """Several captures: the ranks of one distributed run, merged (``attnviz.capture.merge``);
    a rank that does not line up is a refusal naming the first file (loader's thread)."""
    from attnviz.capture.merge import merge_runs
    from attnviz.io import CaptureFileError
    from attnviz.state.run import ModelRunError

    runs = [load_capture(p) for p in paths]
    try:
        run = merge_runs(runs)
    except ModelRunError as exc:
        raise CaptureFileError(paths[0], str(exc)) from exc
    note = message(QT_TRANSLATE_NOOP("FileActions", "{count} ranks merged"), count=len(paths))
    return OpenedFile(paths[0], State.from_run(run), notes=[note])


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


class FileOpener(QObject):
    """File > Open: asks for a file, reads it off the GUI thread and makes it the inputs."""

    #: An Open is over: True when the inputs were replaced (False: refused, cancelled, superseded).
    finished = Signal(bool)

    def __init__(self, context: FileContext, recent: RecentFiles, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.recent = recent
        #: Replaced by tests: (parent, tensor file, guessed roles, current state) -> choice or None.
        self.choose_roles: RolesChooser = ask_roles
        self.action = context.shortcut_action(QKeySequence.StandardKey.Open, lambda: self.open_file())
        self.loader = FileLoader(self)
        self.loader.loaded.connect(lambda _ticket, opened: self._on_read(opened))
        self.loader.failed.connect(lambda _ticket, exc: self._on_read_failed(exc))
        self.loader.busyChanged.connect(self._on_loading)
        self._opening: Path | None = None
        self.progress = OpenProgress(self.cancel_open)
        if isinstance(context.window, QMainWindow):
            context.window.statusBar().addPermanentWidget(self.progress)
        self._progress_timer = QTimer(self)
        self._progress_timer.setSingleShot(True)
        self._progress_timer.setInterval(OPEN_BUSY_MS)
        self._progress_timer.timeout.connect(lambda: self.progress.setVisible(self.loader.busy))

    def retranslate(self) -> None:
        tip = translate("FileActions", "Open a session (.attnviz) or a tensor file (.npy, .npz, .pt, .safetensors)")
        self.action.setText(translate("FileActions", "&Open…"))
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)
        self.progress.retranslate()

    def open_file(self, path: str | os.PathLike[str] | list[str] | None = None) -> bool:
        """Open a session or a tensor file (asking for one when ``path`` is None); several
        captures chosen at once are the ranks of one distributed run, merged.

        The file is read off the GUI thread; ``finished`` says how it ended. Returns False
        when the user cancelled the file dialog, True when the file is being opened.
        """
        if path is None:
            title = translate("FileActions", "Open session or tensors")
            chosen, _filter = QFileDialog.getOpenFileNames(
                self.context.window, title, self.context.start_dir(), open_filter()
            )
            if not chosen:
                return False
            path = chosen if len(chosen) > 1 else chosen[0]
        if self.context.closed:
            return False
        ranks = [Path(p) for p in path] if isinstance(path, list) else []
        file_path = ranks[0] if ranks else Path(path)  # type: ignore[arg-type]
        if self._opening is not None:
            self.finished.emit(False)  # superseded: its result will be dropped
        self._opening = file_path
        document = self.context.session.document
        base, version, focus = document.state, document.version, self.context.session.selection.focus
        self.progress.name = display_name(file_path)
        self.progress.retranslate()
        if len(ranks) > 1:
            self.loader.start(lambda: read_ranks(ranks))
        else:
            self.loader.start(lambda: read_file(file_path, base, version, focus))
        return True

    @property
    def opening(self) -> Path | None:
        """The file being opened now, if any."""
        return self._opening

    def cancel_open(self) -> None:
        """Stop opening the file being read: its result is dropped and the inputs stay as they are."""
        if self._opening is None:
            return
        name = display_name(self._opening)
        self._opening = None
        self.loader.cancel()
        self.context.status(translate("FileActions", "Opening {name} cancelled").format(name=name))
        self.finished.emit(False)

    def _on_loading(self, busy: bool) -> None:
        if busy:
            self._progress_timer.start()
        else:
            self._progress_timer.stop()
            self.progress.hide()

    def _on_read_failed(self, exc: BaseException) -> None:
        file_path, self._opening = self._opening, None
        if file_path is None:
            return
        if isinstance(exc, AttnvizFileError):
            self.context.refuse(translate("FileActions", "Cannot open file"), error_text(exc))
            if not file_path.exists():
                self.recent.forget(file_path)
        else:  # a bug must not lose the user's session
            self.context.refuse(
                translate("FileActions", "Cannot open file"),
                translate("FileActions", "{name}: unexpected error: {error}").format(
                    name=display_name(file_path), error=f"{type(exc).__name__}: {exc}"
                ),
            )
        self.finished.emit(False)

    def _on_read(self, opened: OpenedFile) -> None:
        self._opening = None
        try:
            shown = self._state_of(opened)
        except AttnvizFileError as exc:
            self.context.refuse(translate("FileActions", "Cannot open file"), error_text(exc))
            shown = None
        if shown is None:
            self.finished.emit(False)
            return
        state, focus = shown
        file_path = opened.path
        text = message(QT_TRANSLATE_NOOP("FileActions", "Open {name}"), name=display_name(file_path))
        self.context.session.push(ReplaceState(state, text, focus))
        self.recent.add(file_path)
        self.context.remember_dir(file_path)
        if is_session_path(file_path):
            self.context.set_current(file_path)
        else:
            # Tensors are not a session: Save asks for a name rather than overwrite the file.
            self.context.show_tensors(display_name(file_path))
        notes = opened.notes
        summary = translate("FileActions", "Opened {name}").format(name=display_name(file_path))
        self.context.status(summary + (": " + "; ".join(tr_text(n) for n in notes) if notes else ""), 15000)
        self.finished.emit(True)

    def _state_of(self, opened: OpenedFile) -> tuple[State, Focus] | None:
        """The inputs ``opened`` gives and the head to show first, asking for the roles when its
        names do not tell (None: the user cancelled)."""
        tf = opened.tensors
        document = self.context.session.document
        focus = self.context.session.selection.focus
        unchanged = opened.base_version == document.version and opened.base_focus == focus
        if opened.state is not None and (tf is None or unchanged):
            return opened.state, opened.focus
        assert tf is not None
        roles, head, layer = opened.roles, None, None
        if opened.state is None:
            # The dialog previews a load that keeps the arrays the file lacks from the head on
            # show: it is given that head, as the book's input.
            answer = self.choose_roles(self.context.window, tf, roles, resize_state(document.state, focus=focus))
            if answer is None:
                return None
            roles, head, layer = answer
        # Built again from the inputs as they are now: arrays the file does not hold are kept.
        opened.notes.clear()
        state = state_from_tensor_file(
            tf, roles, head, document.state, layer=layer, notes=opened.notes, base_focus=focus
        )
        return state, tensor_file_focus(state, layer, head)

    def shutdown(self) -> None:
        """Stop reading: a read still running ends first; its result is dropped."""
        self._opening = None
        self.loader.shutdown()
