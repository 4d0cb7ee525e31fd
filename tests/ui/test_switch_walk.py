"""A language switch deletes nothing Qt may still walk (``switch_watch``): the segfaults in
``install_language`` (full suite, 2 CPUs) are most likely a use after free inside Qt's delivery
of LanguageChange (not proven); this checks the whole window for the deletions that cause one."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QWidget

from attnviz.state.document import ReplaceState, State
from attnviz.state.run import AttentionCall, Focus, ModelRun
from attnviz.ui.i18n import install_language
from tests.ui.conftest import wait_current
from tests.ui.switch_watch import watch_switch


class _Deleter(QWidget):
    """Deletes ``victim`` when the language changes (a sibling Qt has already walked: no crash,
    but the kind of deletion the watch must report)."""

    def __init__(self, parent: QWidget, victim: QWidget) -> None:
        super().__init__(parent)
        self.victim: QWidget | None = victim

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange and self.victim is not None:
            import shiboken6

            shiboken6.delete(self.victim)
            self.victim = None
        super().changeEvent(event)


def test_the_watch_reports_a_sibling_deleted_during_the_walk(qtbot, qapp) -> None:
    top = QWidget()
    qtbot.addWidget(top)
    first = QWidget(top)  # before the deleter in the list Qt walks: visited already, so safe here
    _Deleter(top, first)
    try:
        report = watch_switch(lambda: install_language(qapp, "pt_BR"))
    finally:
        install_language(qapp, "en")
    assert report.hazards == ["QWidget in QWidget, deleted while Qt walks it or its siblings"]


def test_switching_the_window_s_language_deletes_nothing_qt_may_still_walk(qtbot, exposed_window, qapp) -> None:
    window = exposed_window
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 4, 12, 3)).astype(np.float32) for _ in range(3))
    window.session.push(
        ReplaceState(
            State.from_run(ModelRun((AttentionCall("layer.0", q, k, v),), source="capture")), "a model", Focus(0, 0)
        )
    )
    wait_current(qtbot, window)
    for dock in (window.compare_dock, window.masking_lab_dock, window.pipeline_dock, window.heads_dock):
        dock.show()
    window.set_presentation_mode(True)  # the presenter bar rebuilds its menus on a switch
    qtbot.wait(50)
    try:
        for code in ("pt_BR", "en", "pt_BR"):
            report = watch_switch(lambda code=code: window.set_language(code))
            assert report.walked > 1000 and report.deleted  # the presenter's menu entries at least
            assert report.hazards == []
    finally:
        window.set_language("en")
        window.set_presentation_mode(False)
