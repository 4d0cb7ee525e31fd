"""Copy as code: the current inputs and settings as a Python script, on the clipboard.

``install_copy_code(session, host)`` adds Edit › Copy as code (Ctrl+Shift+C) and a "Code"
toolbar with the same action. The script is ``attnviz.snippet.snippet_for_state`` of the document's
state: run, it rebuilds the inputs exactly and asserts it gets the weights the app shows. When
the inputs are too big to embed, their arrays go to a data file whose place the user chooses
(``ask_data_path`` is injectable so tests need no dialog); the script loads it by that path.
The check inside the script uses the result the compute thread made for the current inputs:
nothing is computed on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QToolBar, QWidget

from attnviz.snippet import DATA_FILE, save_snippet_data, snippet_data, snippet_for_state
from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host
from attnviz.ui.app.session import AppSession
from attnviz.ui.i18n import translate

__all__ = ["COPY_CODE_SHORTCUT", "AskPath", "CodeCopier", "ask_data_path_dialog", "install_copy_code"]

COPY_CODE_SHORTCUT = "Ctrl+Shift+C"

#: ``ask(parent, suggested_path) -> chosen path, or None when the user cancels``.
AskPath = Callable[[QWidget, str], "str | None"]


def ask_data_path_dialog(parent: QWidget, suggested: str) -> str | None:
    """Ask where to save the snippet's data file (a .npz); None when cancelled."""
    path, _filter = QFileDialog.getSaveFileName(
        parent,
        translate("CopyCode", "Save the data file the script loads"),
        suggested,
        translate("CopyCode", "NumPy archive (*.npz)"),
    )
    if not path:
        return None
    return path if path.lower().endswith(".npz") else path + ".npz"


class CodeCopier(QObject):
    """The action and toolbar that copy the current state as code (``copy()`` does it)."""

    def __init__(self, session: AppSession, host: Host, ask_data_path: AskPath | None = None) -> None:
        super().__init__(host.widget())
        self.session = session
        self.host = host
        self.ask_data_path: AskPath = ask_data_path or ask_data_path_dialog
        #: The last script copied and the data file written with it (None: none needed).
        self.last_code: str | None = None
        self.last_data_path: Path | None = None
        self.action = QAction(host.widget())
        self.action.setShortcut(QKeySequence(COPY_CODE_SHORTCUT))
        self.action.triggered.connect(lambda _checked=False: self.copy())
        edit_menu = host.menu("edit")
        edit_menu.addSeparator()
        edit_menu.addAction(self.action)
        self.toolbar: QToolBar = host.add_toolbar(QT_TRANSLATE_NOOP("CopyCode", "Code"), "codeToolBar")
        self.toolbar.addAction(self.action)
        self.retranslate()
        session.languageChanged.connect(self.retranslate)

    def retranslate(self) -> None:
        tip = translate(
            "CopyCode", "Copy a Python script that rebuilds these inputs and runs the same attention (Ctrl+Shift+C)"
        )
        self.action.setText(translate("CopyCode", "Copy as &code"))
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)
        self.toolbar.setToolTip(translate("CopyCode", "Copy the current inputs as a runnable script"))

    def copy(self) -> str | None:
        """Put the script on the clipboard; returns it (None when cancelled or failed)."""
        state, focus = self.session.document.state, self.session.selection.focus
        # The script's check embeds the weights the window shows: the compute thread already
        # made them, and computing them again here would freeze the window on a big input.
        outcome = self.session.current_outcome()
        if outcome is None:
            self._status(
                translate(
                    "CopyCode",
                    "Copy as code: these inputs are still being computed; try again "
                    "when the status bar says up to date",
                )
            )
            return None
        data_file = DATA_FILE
        data_path: Path | None = None
        if snippet_data(state, focus=focus):
            suggested = str(Path.home() / DATA_FILE)
            chosen = self.ask_data_path(self.host.widget(), suggested)
            if not chosen:
                self._status(
                    translate(
                        "CopyCode",
                        "Copy as code cancelled: these inputs are too big for the script "
                        "itself, so it needs a data file",
                    )
                )
                return None
            data_path = Path(chosen).expanduser().resolve()
            try:
                save_snippet_data(state, data_path, focus=focus)
            except OSError as exc:
                self._status(
                    translate("CopyCode", "Could not write the data file {path}: {error}").format(
                        path=data_path, error=exc.strerror or exc
                    )
                )
                return None
            # Forward slashes: the path goes into a Python string literal in the script.
            data_file = data_path.as_posix()
        try:
            code = snippet_for_state(state, data_file=data_file, outcome=outcome, focus=focus)
        except (ValueError, MemoryError) as exc:
            self._status(translate("CopyCode", "Could not write the script: {error}").format(error=exc))
            return None
        QGuiApplication.clipboard().setText(code)
        self.last_code, self.last_data_path = code, data_path
        lines = code.count("\n")
        if data_path is not None:
            done = translate(
                "CopyCode",
                "Copied a {lines}-line Python script that reproduces these weights; it loads "
                "its larger arrays from {path}",
            ).format(lines=lines, path=data_path)
        else:
            done = translate("CopyCode", "Copied a {lines}-line Python script that reproduces these weights").format(
                lines=lines
            )
        self._status(done)
        return code

    def _status(self, text: str) -> None:
        self.session.show_status(text, 12000)


def install_copy_code(session: AppSession, host: Host, ask_data_path: AskPath | None = None) -> CodeCopier:
    """Edit › Copy as code (Ctrl+Shift+C) and a Code toolbar; returns the copier."""
    return CodeCopier(session, host, ask_data_path)
