"""Spreading GUI work over frames, so that no frame holds it all.

A view that draws several heavy parts for one result (maps, lines, a tile) paints them in one
pass if it draws them in one go, and the event loop answers nothing meanwhile. ``next_frame``
runs the next part a frame later, once what was drawn is painted and the timers due by then
have run. (A 0 ms single shot is a posted call that Qt runs in the same turn, and a 1 ms one
often fires right after the paint, before other timers: the two paints then stall one frame
together.)
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

__all__ = ["FRAME_MS", "next_frame"]

#: A frame at 60 Hz, in milliseconds.
FRAME_MS = 16


def next_frame(owner: QObject, call: Callable[[], None]) -> None:
    """Run ``call`` a frame later, unless ``owner`` is deleted first."""
    QTimer.singleShot(FRAME_MS, owner, call)
