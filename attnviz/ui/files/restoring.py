"""Offering, at start-up, the autosaves of windows that did not end cleanly (never those of
windows still open, in this process or another)."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QMessageBox

from attnviz.io import AutosaveSlot, stale_autosaves
from attnviz.io.errors import AttnvizFileError
from attnviz.io.session_state import session_to_state_and_focus
from attnviz.state.document import ReplaceState
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.files.autosave import AutosaveWriter
from attnviz.ui.files.context import FileContext
from attnviz.ui.i18n import error_text, translate

__all__ = ["offer_restore"]


def offer_restore(context: FileContext, writer: AutosaveWriter) -> bool:
    """At start-up: offer the autosaves of windows that did not end cleanly, newest first.

    Yes restores one as one undoable edit, and its autosave becomes this window's own (the
    others stay for the next start); No, or an unreadable autosave, deletes the one offered
    and goes on to the next. Autosaves of windows still open are never offered or touched.
    """
    stale = stale_autosaves()
    try:
        while stale:
            slot = stale.pop(0)
            if _offer(context, writer, slot, len(stale)):
                return True
            slot.discard()
        return False
    finally:
        for slot in stale:
            slot.release()  # not offered this time: a later start offers them


def _offer(context: FileContext, writer: AutosaveWriter, slot: AutosaveSlot, others: int) -> bool:
    """Ask about one stale autosave; True when it was restored (and adopted)."""
    unreadable = translate("FileActions", "Autosave unreadable")
    discarded = translate("FileActions", "{error}. It has been discarded.")
    try:
        saved = slot.read()
        restored = None if saved is None else session_to_state_and_focus(saved, source=slot.path, notes=[])
    except AttnvizFileError as exc:
        QMessageBox.warning(context.window, unreadable, discarded.format(error=error_text(exc)))
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
        context.window,
        translate("FileActions", "Restore unsaved work?"),
        question,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.Yes,
    )
    if answer != QMessageBox.StandardButton.Yes:
        return False
    context.session.push(ReplaceState(state, QT_TRANSLATE_NOOP("FileActions", "Restore autosaved inputs"), focus))
    # The restored work stays on disk, now as this window's autosave, until it is saved over.
    writer.adopt(slot)
    return True
