"""Gives the chapter's lecture by Page Down alone, in presentation mode, and reports every slide
that does not fit or read: the layout probe's checks (layout_probe.py) at every press, from the
lecture plan's first slide to its last, in English and then in Portuguese. Run by
tests/ui/test_lecture.py in a child process per screen size (the offscreen platform's screen is
fixed per process):

    QT_QPA_PLATFORM=offscreen:configfile=screen.json python tests/ui/lecture_probe.py OUT.json [SHOTS] [--slide-font F]

``--slide-font F`` gives the lecture at presentation font factor F instead of the app's
(``PRESENTATION_FONT``): what a larger slide type would break, before it is made the default.

Writes {"problems": [...], "slides": [...], "presses": n} to OUT.json: what was on show after
each press (the slide, the walk's step, whether a lesson's answer was revealed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QScrollArea,
    QTabBar,
    QWidget,
)

sys.path.insert(0, str(Path(__file__).parent))

from layout_probe import (  # noqa: E402 - the probe's own folder first
    font_problems,
    presentation_problems,
    settle,
    sideways_problems,
    text_problems,
    wait,
    window_problems,
)

#: More presses than any plan of the chapter needs; the lecture must end before.
MAX_PRESSES = 200


#: Scroll areas inside views that must not scroll on a slide either (besides every view's page).
NEVER_SCROLLED = ("maskingLabMaps", "walkExplanation")


#: The least height of a capital letter on a slide, in pixels at 1280x720 and above: what the
#: back row of a lecture room reads (issue 37; a slide's usual minimum of 24-28 pt at 96 dpi).
MIN_CAPITAL_PX = 20.0


def _slide_texts(window: QWidget) -> list[tuple[QWidget, str]]:
    """Every text of the slide and the widget that draws it: labels, buttons, the text a list
    shows, a group's title, a spin box's number, the tabs of a tab bar on show."""
    texts: list[tuple[QWidget, str]] = []
    for widget in [*window.findChildren(QLabel), *window.findChildren(QAbstractButton)]:
        texts.append((widget, widget.text()))
    texts += [(box, box.currentText()) for box in window.findChildren(QComboBox)]
    texts += [(group, group.title()) for group in window.findChildren(QGroupBox)]
    texts += [(spin, spin.text()) for spin in window.findChildren(QAbstractSpinBox)]
    for bar in window.findChildren(QTabBar):
        texts += [(bar, bar.tabText(i)) for i in range(bar.count())]
    return texts


def small_capitals(window: QWidget, where: str) -> list[str]:
    """Every visible text of the slide (``_slide_texts``) with capitals at least
    ``MIN_CAPITAL_PX`` high, measured as Qt draws them (the font's cap height); one problem per
    slide naming its smallest text."""
    smallest: tuple[float, str] | None = None
    for widget, text in _slide_texts(window):
        if not text or not widget.isVisible() or widget.visibleRegion().isEmpty():
            continue
        cap = QFontMetricsF(widget.font()).capHeight()
        if cap < MIN_CAPITAL_PX - 0.05 and (smallest is None or cap < smallest[0]):
            smallest = (cap, f"{type(widget).__name__} {text[:40]!r}")
    if smallest is None:
        return []
    return [f"{where}: capitals {smallest[0]:.1f} px high (at least {MIN_CAPITAL_PX:.0f}): {smallest[1]}"]


def scrolled_out(window: QWidget, where: str) -> list[str]:
    """Nothing on a slide may need the mouse to be seen: no view's page, not the lesson panel
    and not the masking lab's six maps scroll down (a revealed answer below the screen, a walk's
    explanation, a lab's maps)."""
    problems = []
    for area in window.findChildren(QScrollArea):
        name = area.objectName()
        lesson = area is getattr(window.lessons.view, "answer_scroll", None) if window.lessons.dock.is_built else False
        page = name.endswith("Page") or name in NEVER_SCROLLED
        if not (page or lesson) or not area.isVisible() or area.visibleRegion().isEmpty():
            continue
        bar = area.verticalScrollBar()
        if bar.isVisible() and bar.maximum() > 0:
            what = "the lesson panel" if lesson else name
            problems.append(f"{where}: {what} scrolls down ({bar.maximum()} px out of sight)")
    return problems


def on_show(window: QWidget) -> str:
    clicker = window.presenter.clicker
    slide = clicker.plan[clicker.index] if clicker.index is not None else None
    text = f"{slide.kind} {slide.name}" if slide is not None else "none"
    dock = window.dock("pipelineDock")
    if slide is not None and slide.kind == "walk" and dock.is_built:
        text += f" step {dock.view().walk.stage}"
    if slide is not None and slide.kind == "view":
        from attnviz.ui.views.lecture_clicker import VIEW_DOCKS

        pages = getattr(window.dock(VIEW_DOCKS[slide.name]).view(), "slide_pages", None)
        if pages is not None and pages.count > 1:
            text += f" page {pages.page + 1}"  # a view split into pages on a slide (issue 37)
    if slide is not None and slide.kind == "lesson":
        view = window.lessons.view
        text += " answer" if view.answer_shown else " question"
        if view.answer_shown and len(view.answer_pages) > 1:
            # An answer longer than the slide: Page Down shows it a page at a time.
            text += f" {view.answer_page + 1}/{len(view.answer_pages)}"
    return text


def give_lecture(window: QWidget, tag: str, language: str, normal_pt: float, shots: Path | None) -> tuple[list, list]:
    clicker = window.presenter.clicker
    problems: list[str] = []
    slides: list[str] = []
    size0 = (window.width(), window.height())
    clicker.go(0)
    for press in range(MAX_PRESSES):
        settle(window)
        # A map's colour bar is laid out for its new labels a few frames after its data (side
        # by side's difference, once both sides are computed): the slide as the class sees it.
        wait(150)
        shown = on_show(window)
        if slides and shown == slides[-1]:
            break  # the last slide: Page Down has nothing left to show
        slides.append(shown)
        where = f"{tag} {language} {press:02d} {shown}"
        problems += window_problems(window, where, size0) + text_problems(window, where)
        problems += font_problems(window, where, normal_pt) + sideways_problems(window, where)
        problems += scrolled_out(window, where) + small_capitals(window, where)
        if shown.startswith("example"):
            problems += presentation_problems(window, where)
        if shots is not None:
            window.grab().save(str(shots / f"{tag}-{language}-{press:02d}.png"))
        QTest.keyClick(window, Qt.Key.Key_PageDown)
    else:
        problems.append(f"{tag} {language}: the lecture did not end after {MAX_PRESSES} presses")
    return problems, slides


def main() -> int:
    args = sys.argv[1:]
    factor = None
    if "--slide-font" in args:
        at = args.index("--slide-font")
        factor = float(args[at + 1])
        del args[at : at + 2]
    out = Path(args[0])
    shots = Path(args[1]) if len(args) > 1 else None
    app = QApplication(sys.argv[:1])
    from attnviz.ui.i18n import install_language
    from attnviz.ui.window import presentation
    from attnviz.ui.window.main_window import MainWindow

    if factor is not None:
        presentation.PRESENTATION_FONT = factor

    screen = app.primaryScreen().availableGeometry()
    tag = f"{screen.width()}x{screen.height()}"
    normal_pt = app.font().pointSizeF()
    window = MainWindow()
    window.show()
    settle(window)
    # F5 first, then every lesson is loaded during presentation mode (its panel was cut).
    window.set_presentation_mode(True)
    settle(window)
    problems: list[str] = []
    slides: dict[str, list[str]] = {}
    for language in ("en", "pt_BR"):
        install_language(app, language)
        settle(window)
        found, slides[language] = give_lecture(window, tag, language, normal_pt, shots)
        problems += found
    window.set_presentation_mode(False)
    install_language(app, "en")
    window.close()
    wait(300)  # what the close deferred (its threads' last results) ends before the interpreter does
    out.write_text(json.dumps({"problems": problems, "slides": slides}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
