"""Watch a language switch for the deletions that can crash Qt's walk of the widgets.

On a LanguageChange Qt sends the event to every top-level widget, and each widget passes it to
a *copy* of its list of children after its own ``changeEvent`` ran. An object deleted while that
walk is under way is safe only if Qt will not visit it any more: deleted from a ``changeEvent``
(our ``retranslate``), it must be in that widget's own subtree, never the widget itself, one of
its ancestors, or a child of one (in a copied list still being walked). Deleted on another
thread, it is never safe. ``watch_switch`` records every QObject the switch deletes and which
of these it was. The segfaults in ``install_language`` seen in the full suite (their frame is
Qt's delivery of LanguageChange in ``sendPostedEvents``) are most likely this kind of crash, a
use after free; that is not proven (none was reproduced, and no such deletion has been found
in the window yet). This is what a test can check deterministically, where the crash itself
needs the freed memory to have been reused.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication

__all__ = ["SwitchReport", "watch_switch"]


@dataclass
class SwitchReport:
    """What a switch deleted: every object (class name, parent's class name), and the hazards."""

    deleted: list[str] = field(default_factory=list)
    hazards: list[str] = field(default_factory=list)
    walked: int = 0


def _ptr(o: QObject | None) -> int | None:
    return None if o is None else int(shiboken6.getCppPointer(o)[0])


def _walks_on_the_stack() -> list[tuple[int | None, set[int | None]]]:
    """For each ``changeEvent`` or ``event`` running on the Python stack: its receiver and the
    receiver's ancestors, whose copied lists of children Qt is walking."""
    walks = []
    frame = sys._getframe()
    while frame is not None:
        me = frame.f_locals.get("self") if frame.f_code.co_name in ("changeEvent", "event") else None
        if isinstance(me, QObject) and shiboken6.isValid(me):
            ancestors: set[int | None] = set()
            up = me.parent()
            while up is not None:
                ancestors.add(_ptr(up))
                up = up.parent()
            walks.append((_ptr(me), ancestors))
        frame = frame.f_back
    return walks


def watch_switch(switch: Callable[[], object]) -> SwitchReport:
    """Run ``switch`` (a call of ``install_language``) and report what it deleted."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    objects: list[QObject] = []
    for top in app.topLevelWidgets():
        objects.append(top)
        objects.extend(top.findChildren(QObject))
    report = SwitchReport(walked=len(objects))
    connections = []
    for obj in objects:
        me, parent = _ptr(obj), _ptr(obj.parent())
        name = f"{type(obj).__name__} in {type(obj.parent()).__name__ if obj.parent() is not None else '-'}"

        def deleted(*_args: object, me: int | None = me, parent: int | None = parent, name: str = name) -> None:
            report.deleted.append(name)
            if threading.current_thread() is not threading.main_thread():
                report.hazards.append(f"{name}, deleted on {threading.current_thread().name}")
                return
            for receiver, ancestors in _walks_on_the_stack():
                # The receiver's own children are copied after its changeEvent: those are safe.
                if me == receiver or me in ancestors or parent in ancestors:
                    report.hazards.append(f"{name}, deleted while Qt walks it or its siblings")
                    return

        obj.destroyed.connect(deleted)
        connections.append((obj, deleted))
    try:
        switch()
    finally:
        for obj, slot in connections:
            if shiboken6.isValid(obj):
                obj.destroyed.disconnect(slot)
    return report
