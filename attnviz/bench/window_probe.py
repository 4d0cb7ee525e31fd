"""The safety benchmark's one window probe: the main window in a capped child process opens a
file (File > Open) with some views on show, and reports the seconds until everything is idle
again, the peak MB above the window before the opening, and what the caller's ``report`` reads
of the window. ``safety.window_probe`` (hostile sessions, every lab open) and
``safety_outputs.window_compare_probe`` (a session's ``compared_with`` in Compare runs) are this
probe with other views and another report."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .children import child

__all__ = ["open_in_window"]

_OPEN = r"""
from PySide6.QtWidgets import QApplication, QMessageBox
app = QApplication([])
import torch
from attnviz.ui.window.main_window import MainWindow
session_path, headroom, docks, want_comparison, limit = sys.argv[1:6]
refusals = []
QMessageBox.warning = staticmethod(lambda _parent, title, text, *a: refusals.append(text))
window = MainWindow()
window.resize(1280, 720)
window.show()
session = window.session
views = [getattr(window, name) for name in json.loads(docks)]
for dock in views:
    dock.setFloating(True)  # each in a window of its own: all on show, all computing at once
    dock.show()
views = [dock.view() for dock in views]
compare_view = window.run_compare_dock.view()
long_view = window.long_dock.view()

def idle():
    # A call over the window's budget opens the long-context view: its overview counts too.
    streaming = window.long_dock.isVisible() and long_view.busy
    # (the view opens a frame after the refusal is shown: until then the opening is not over)
    outcome = session.last_outcome
    streaming = streaming or (outcome is not None and outcome.too_large and not window.long_dock.isVisible())
    busy = any(getattr(view, "busy", False) for view in views) or compare_view.compared.busy or streaming
    return session.is_current and not session.busy and not busy

deadline = time.monotonic() + 120
while not idle() and time.monotonic() < deadline:
    app.processEvents()
cap(int(headroom))
base = start_peak()
started = time.perf_counter()
finished = []
window.file_actions.openFinished.connect(finished.append)
window.file_actions.open_file(session_path)
while time.perf_counter() - started < float(limit):
    app.processEvents()
    if finished and idle() and (compare_view.comparison is not None or want_comparison != "1"):
        break
seconds = time.perf_counter() - started
found = {
    "opened": finished, "seconds": seconds, "peak_mb": peak_mb(base), "refusals": refusals,
    "main": session.last_outcome.error if session.last_outcome else None,
    "long_view": window.long_dock.isVisible() and long_view.result is not None,
}
"""


def open_in_window(
    session: Path,
    report: str,
    *,
    docks: Sequence[str] = (),
    comparison: bool = False,
    headroom_mb: int = 3072,
    limit_s: float = 120,
) -> dict[str, Any]:
    """The window opening ``session`` with the dock widgets named ``docks`` (attributes of the
    main window) floating and on show; waits until all is idle (and, with ``comparison``, until
    Compare runs shows the session's ``compared_with``), at most ``limit_s``. ``report``: Python
    run after, adding to the dict ``found`` (``window``, ``views``, ``compare_view`` in scope)."""
    with tempfile.TemporaryDirectory() as state:
        env = {"ATTNVIZ_STATE_DIR": state, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
        code = _OPEN + report + "\nprint(json.dumps(found))\n"
        args = (str(session), str(headroom_mb), json.dumps(list(docks)), "1" if comparison else "0", str(limit_s))
        return dict(child(code, *args, timeout=limit_s + 180, env=env))
