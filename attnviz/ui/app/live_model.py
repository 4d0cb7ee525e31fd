"""A live model kept beside its session (``attnviz.show(model=model, inputs=inputs)``): its
controller, found from the session by any view that offers its edits (the comparison of runs
flips mask cells, the heads grid ablates heads), so no view reaches into another for it.

The controller is a child of the session (one at most): it goes with the session, and the model
with it. What the window does to the run is an edit of the document like any other (undone,
saved in a session); the comparison view's registered computation runs the model again."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from attnviz.state.document import ReplaceState
from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.session import AppSession

__all__ = ["LiveController", "LiveModels", "attach_live_model", "live_controller", "live_models"]


class LiveController(QObject):
    """A live model beside a session. The window's edits of its run are edits of the document
    like any other (undone, saved in a session): mask cells in the run's masks, ablated heads in
    ``State.ablated_heads``; the comparison view runs the model again with them."""

    def __init__(self, session: AppSession, live: Any) -> None:
        super().__init__(session)
        self.live = live

    @property
    def session(self) -> AppSession:
        session = self.parent()
        assert isinstance(session, AppSession)
        return session

    def is_ablated(self, layer: int, head: int) -> bool:
        return (layer, head) in self.session.document.state.ablated_heads

    def toggle_ablation(self, layer: int, head: int) -> None:
        """Ablate (or restore) ``head`` of call ``layer``: an undoable edit."""
        state = self.session.document.state
        ablated = (layer, head) in state.ablated_heads
        text = (
            QT_TRANSLATE_NOOP("RunCompare", "Restore an ablated head")
            if ablated
            else QT_TRANSLATE_NOOP("RunCompare", "Ablate a head")
        )
        heads = state.ablated_heads ^ {(layer, head)}
        self.session.push(ReplaceState(replace(state, ablated_heads=heads), text, Focus(layer, head)))

    def toggle_mask_cell(self, layer: int, batch: int, head: int, query: int, key: int) -> None:
        """Flip one mask cell of call ``layer`` in the run on show: an undoable edit."""
        from attnviz.compare.intervene import toggled_mask

        state = self.session.document.state
        run = toggled_mask(state.run, layer, batch, head, query, key)
        self.session.push(
            ReplaceState(
                replace(state, run=run),
                QT_TRANSLATE_NOOP("RunCompare", "Flip a mask cell"),
                Focus(layer, head),
            )
        )


class LiveModels(QObject):
    """Where a session keeps its live model (a child of the session, found by its type):
    ``controller``, and ``attached`` when a model is attached, so a view already built learns
    that its session has one now."""

    attached = Signal()

    def __init__(self, session: AppSession) -> None:
        super().__init__(session)
        self.controller: LiveController | None = None

    def attach(self, live: Any) -> LiveController:
        session = self.parent()
        assert isinstance(session, AppSession)
        if self.controller is not None:
            self.controller.deleteLater()  # its model goes with it
        self.controller = LiveController(session, live)
        self.attached.emit()
        return self.controller


def _found(session: AppSession) -> LiveModels | None:
    found = session.findChild(LiveModels, "", Qt.FindChildOption.FindDirectChildrenOnly)
    return found if isinstance(found, LiveModels) else None


def live_models(session: AppSession) -> LiveModels:
    """``session``'s keeper of its live model (made on first use)."""
    return _found(session) or LiveModels(session)


def attach_live_model(session: AppSession, live: Any) -> LiveController:
    """Keep ``live`` (an ``attnviz.intervene.LiveModel``) beside ``session``: edits re-run it."""
    return live_models(session).attach(live)


def live_controller(session: AppSession) -> LiveController | None:
    """The live model kept beside ``session``, if any."""
    found = _found(session)
    return None if found is None else found.controller
