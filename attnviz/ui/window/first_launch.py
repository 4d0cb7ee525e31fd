"""The first launch offers Help > First steps, once: a newcomer sees where to start, and the
choice is remembered in the preferences (``help/first_steps_offered``), so it never comes back."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from attnviz.ui.views.presenter import show_first_steps

__all__ = ["FIRST_STEPS_OFFERED", "offer_first_steps"]

#: The preference that says First steps was offered.
FIRST_STEPS_OFFERED = "help/first_steps_offered"


def offer_first_steps(window: QWidget, settings: QSettings) -> bool:
    """Show First steps over ``window`` unless it was offered before; True when shown."""
    if settings.value(FIRST_STEPS_OFFERED, False, type=bool):
        return False
    settings.setValue(FIRST_STEPS_OFFERED, True)
    settings.sync()
    show_first_steps(window)
    return True
