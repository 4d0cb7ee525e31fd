"""Autosave: a few seconds after a change (at most once per interval while the user types),
never on every keystroke, into this window's own autosave, written off the GUI thread
(``autosave.AutosaveWriter``) and removed when the session ends cleanly."""

from __future__ import annotations

from PySide6.QtCore import QObject
from superqt.utils import QSignalThrottler

from attnviz.io.errors import AttnvizFileError
from attnviz.io.session_state import state_to_session
from attnviz.ui.files.autosave import AutosaveWriter
from attnviz.ui.files.context import FileContext
from attnviz.ui.i18n import error_text, translate

__all__ = ["AUTOSAVE_MS", "Autosave"]


#: Autosave this long after the first unsaved change (further changes ride along).
AUTOSAVE_MS = 3000


class Autosave(QObject):
    """Follows the session's changes and keeps its autosave up to date."""

    def __init__(self, context: FileContext, autosave_ms: int = AUTOSAVE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context = context
        # A trailing throttle, started by the first change and not restarted by later ones, so
        # a burst of edits is saved within ``autosave_ms`` instead of being postponed forever.
        self.timer = QSignalThrottler(QSignalThrottler.EmissionPolicy.Trailing, self)
        self.timer.setTimeout(autosave_ms)
        self.timer.triggered.connect(self._save_in_background)
        # The file is written on a thread of its own: an fsync on the GUI thread stalled it.
        self.writer = AutosaveWriter(self)
        self.writer.failed.connect(self._on_failed)
        context.session.documentChanged.connect(self._on_document_changed)

    def _on_document_changed(self, _edit: object) -> None:
        if not self.context.closed:
            self.timer.throttle()

    def _save_in_background(self) -> None:
        if not self.context.closed:
            # Copied here (arrays included), written on the writer's thread.
            self.writer.submit(
                state_to_session(self.context.session.document.state, self.context.session.selection.focus)
            )

    def now(self) -> bool:
        """Write the autosave and wait for it; a failure goes to the status bar (a dialog every
        few seconds would be worse than no autosave)."""
        if self.context.closed:
            return False
        self._save_in_background()
        return self.writer.flush()

    def _on_failed(self, exc: BaseException) -> None:
        text = error_text(exc) if isinstance(exc, AttnvizFileError) else f"{type(exc).__name__}: {exc}"
        self.context.status(translate("FileActions", "Autosave failed: {error}").format(error=text), 15000)

    def close(self) -> None:
        """Stop autosaving and remove this window's autosave (nothing to recover): a write still
        running ends first, it cannot bring the file back."""
        self.timer.cancel()
        self.writer.close(discard=True)
