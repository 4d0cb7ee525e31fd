"""File menu: open sessions and tensor files, save, recent files, exports, and autosave.

``install_file_actions(session, host)`` adds everything to the host's File menu (above Quit)
and returns the :class:`FileActions` that owns it. Each job lives in its own module and shares
one ``context.FileContext`` (the session, the window and its title, the settings, the file on
show):

* ``opening``: Open (read off the GUI thread, one undoable edit, Cancel, roles asked);
* ``saving``: Save and Save As;
* ``recent``: Open Recent;
* ``exporting``: Export (heatmaps as PNG/SVG, weights and output as CSV/.npy);
* ``autosaving``: this window's autosave, a few seconds after a change, removed at a clean exit;
* ``restoring``: at start-up, the autosaves of windows that did not end cleanly.

Dialogs go through ``QFileDialog``/``QMessageBox`` static methods and the ``choose_roles``
attribute, so tests (and scripts) replace them instead of clicking.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QMenu

from attnviz.ui.app.host import Host
from attnviz.ui.app.session import AppSession
from attnviz.ui.files.autosaving import AUTOSAVE_MS, Autosave
from attnviz.ui.files.context import FileContext
from attnviz.ui.files.exporting import Exports
from attnviz.ui.files.opening import FileOpener, RolesChooser
from attnviz.ui.files.recent import MAX_RECENT, RecentFiles
from attnviz.ui.files.restoring import offer_restore
from attnviz.ui.files.saving import SessionSaver
from attnviz.ui.preferences import default_settings

__all__ = ["AUTOSAVE_MS", "MAX_RECENT", "FileActions", "install_file_actions"]


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
        self.context = FileContext(session, self.window, settings if settings is not None else default_settings())
        self.settings = self.context.settings
        self.recent = RecentFiles(self.context, self.open_file)
        self.opener = FileOpener(self.context, self.recent, self)
        self.opener.finished.connect(self.openFinished)
        self.saver = SessionSaver(self.context, self.recent)
        self.exports = Exports(self.context)
        # The menu's entries, by the names users of the File menu know them.
        self.open_action = self.opener.action
        self.open_progress = self.opener.progress
        self.recent_menu = self.recent.menu
        self.save_action, self.save_as_action = self.saver.save_action, self.saver.save_as_action
        self.export_menu, self.export_actions = self.exports.menu, self.exports.actions
        self.retranslate()
        session.languageChanged.connect(self.retranslate)
        self._add_to_menu(host.menu("file"))
        self.autosave = Autosave(self.context, autosave_ms, self)
        session.on_shutdown(self.shutdown)

    def _add_to_menu(self, menu: QMenu) -> None:
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

    def retranslate(self) -> None:
        """Texts of the File menu's entries in the current language."""
        self.opener.retranslate()
        self.saver.retranslate()
        self.exports.retranslate()
        self.recent.retranslate()
        if self.context.current_path is not None or self.context.tensor_name is not None:
            self.context.update_title()  # "… (tensors)" in the new language

    @property
    def current_path(self) -> Path | None:
        """The session file the inputs were opened from or saved to, else None."""
        return self.context.current_path

    @property
    def choose_roles(self) -> RolesChooser:
        """Asks which array of a tensor file plays which role (replaced by tests)."""
        return self.opener.choose_roles

    @choose_roles.setter
    def choose_roles(self, chooser: RolesChooser) -> None:
        self.opener.choose_roles = chooser

    # ------------------------------------------------------------------ the jobs

    def open_file(self, path: str | os.PathLike[str] | list[str] | None = None) -> bool:
        """Open a session or a tensor file (asking for one when ``path`` is None), read off the
        GUI thread; ``openFinished`` says how it ended. False when the dialog was cancelled."""
        return self.opener.open_file(path)

    @property
    def opening(self) -> Path | None:
        """The file being opened now, if any."""
        return self.opener.opening

    def cancel_open(self) -> None:
        """Stop opening the file being read: its result is dropped and the inputs stay as they are."""
        self.opener.cancel_open()

    def save(self) -> bool:
        """Save to the current session file, or ask for one (Save As)."""
        return self.saver.save()

    def save_as(self, path: str | os.PathLike[str] | None = None) -> bool:
        return self.saver.save_as(path)

    def recent_files(self) -> list[str]:
        return self.recent.paths()

    def export_weights_image(self, path: str | os.PathLike[str] | None = None, *, suffix: str = ".png") -> bool:
        """The weight heatmaps as shown (every batch element up to 4, else the selected one)."""
        return self.exports.export_weights_image(path, suffix=suffix)

    def export_array(self, what: str, suffix: str, path: str | os.PathLike[str] | None = None) -> bool:
        """Export ``what`` ("weights" or "output") of every batch element as CSV or .npy."""
        return self.exports.export_array(what, suffix, path)

    def autosave_now(self) -> bool:
        """Write the autosave and wait for it (a failure goes to the status bar)."""
        return self.autosave.now()

    def offer_restore(self) -> bool:
        """At start-up: offer the autosaves of windows that did not end cleanly, newest first
        (``restoring.offer_restore``); True when one was restored."""
        return offer_restore(self.context, self.autosave.writer)

    def shutdown(self) -> None:
        """Clean exit (the session ends): stop reading files and autosaving, and remove this
        window's autosave (nothing to recover)."""
        if self.context.closed:
            return
        self.context.closed = True
        self.opener.shutdown()
        self.autosave.close()


def install_file_actions(
    session: AppSession, host: Host, *, settings: QSettings | None = None, autosave_ms: int = AUTOSAVE_MS
) -> FileActions:
    """Add Open, Open Recent, Save, Save As and Export to the host's File menu and start autosave."""
    return FileActions(session, host, settings=settings, autosave_ms=autosave_ms)
