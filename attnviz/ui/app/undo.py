"""Document edits as QUndoCommands, so Qt's undo stack drives undo and redo."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QUndoCommand

from attnviz.state.catalog import role_word
from attnviz.state.document import Document, Edit, SetBlock
from attnviz.state.run import Focus
from attnviz.ui.i18n import tr_text, translate


def command_text(edit: Edit) -> str:
    """The text the Edit menu shows for ``edit`` ("Undo <text>"), in the current language.

    Texts made with ``attnviz.text.tr`` markers are translated; a typed or pasted block is described
    here (the document's own text for it is English only); anything else is shown as it is.
    """
    if isinstance(edit, SetBlock):
        role = tr_text(role_word(edit.role))
        cells = int(edit.block.size)
        if cells == 1:
            return translate("Undo", "Edit 1 cell of {role}").format(role=role)
        return translate("Undo", "Edit {n} cells of {role}").format(n=cells, role=role)
    return tr_text(edit.text)


class DocumentCommand(QUndoCommand):
    """Applies an Edit on redo and its inverse on undo; each apply hands back the other one.

    ``focus`` says which head is on show when it is applied (an edit of a head's tensors is made
    there; the inverse remembers it, so an undo brings that head back). ``on_replay`` is called
    before an undo or a redo (not before the first apply, when the edit is pushed): the session
    holds its computations then, so a burst of them computes once.
    """

    def __init__(
        self,
        document: Document,
        edit: Edit,
        on_replay: Callable[[], None] | None = None,
        focus: Callable[[], Focus] = Focus,
    ) -> None:
        super().__init__(command_text(edit))
        self._document = document
        self._forward = edit
        self._backward: Edit | None = None
        self._on_replay = on_replay
        self._focus = focus

    @property
    def edit(self) -> Edit:
        """The edit this command applies on redo (after an undo, the one that redoes it)."""
        return self._forward

    def retranslate(self) -> None:
        """Describe the edit again in the current language (after a language switch)."""
        self.setText(command_text(self._forward))

    def redo(self) -> None:
        if self._backward is not None:
            self._replaying()
        self._backward = self._document.apply(self._forward, self._focus())

    def undo(self) -> None:
        assert self._backward is not None
        self._replaying()
        self._forward = self._document.apply(self._backward, self._focus())

    def _replaying(self) -> None:
        if self._on_replay is not None:
            self._on_replay()
