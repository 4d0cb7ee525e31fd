"""Document edits as QUndoCommands, so Qt's undo stack drives undo and redo."""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from ..document import Document, Edit


class DocumentCommand(QUndoCommand):
    """Applies an Edit on redo and its inverse on undo; each apply hands back the other one."""

    def __init__(self, document: Document, edit: Edit) -> None:
        super().__init__(edit.text)
        self._document = document
        self._forward = edit
        self._backward: Edit | None = None

    def redo(self) -> None:
        self._backward = self._document.apply(self._forward)

    def undo(self) -> None:
        assert self._backward is not None
        self._forward = self._document.apply(self._backward)
