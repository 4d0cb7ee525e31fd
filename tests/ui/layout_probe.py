"""Builds every view of the app on one screen size, in both languages and both themes, and
reports what does not fit: a window larger than the screen or growing by itself, a text that is
elided or clipped (its font metrics against its width), a text left at normal size in
presentation mode. Run by tests/ui/test_layout.py in a child process per screen size (the
offscreen platform's screen is fixed per process):

    QT_QPA_PLATFORM=offscreen:configfile=screen.json python tests/ui/layout_probe.py OUT.json [SHOTS] [--window-only]

Prints nothing; writes {"problems": [...], "checked": n} to OUT.json. With a folder SHOTS, it
also saves a screenshot of each state there; with --window-only it checks only that the window
fits the screen and keeps its size (for screens too small for every text).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from PySide6.QtCore import QEventLoop, QPoint, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QPainter, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QGroupBox,
    QLabel,
    QScrollArea,
    QTabBar,
    QToolButton,
    QWidget,
)

# Lessons and views the probe opens, in order.
LESSON = "pitfall-zero-length"
TABS = ("pipelineDock", "compareDock", "maskingLabDock", "scalingLabDock")
#: The teaching views checked as slides (presentation mode) here; the pipeline's slides and
#: stage walk are checked by the pipeline's own probe functions.
SLIDE_TABS = ("compareDock", "maskingLabDock", "scalingLabDock")
PIPELINE_PAGE = "pipelineDockPage"
#: The views of a model's run, checked on a small padded run with tokens (after the lesson).
MODEL_TABS = ("heads", "model_overview", "tokens", "doctor", "long_context")


def wait(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def settle(window, timeout_ms: int = 60000) -> None:  # noqa: ANN001
    """Let every computation of the session and of the open views finish, and lay out."""
    waited = 0
    while waited < timeout_ms:
        busy = window.session.busy or not window.session.is_current
        for tool in window.tools():
            view = tool.view() if tool.is_built else None
            busy = busy or bool(getattr(view, "busy", False))
        if not busy:
            break
        wait(20)
        waited += 20
    # Deferred calls (a turn or a frame: a tab opening, a line drawn a frame after its map) and
    # the paints they cause (a view whose plots appear one per frame says it is busy meanwhile);
    # then until the docks stop moving: a slide's panels are fitted a turn after the font
    # reaches them, and under a loaded machine that took longer than one wait.
    wait(40)
    for _ in range(25):
        before = [d.geometry() for d in window.findChildren(QDockWidget) if d.isVisible()]
        wait(40)
        if before == [d.geometry() for d in window.findChildren(QDockWidget) if d.isVisible()]:
            break


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _rich_width(label: QLabel) -> float:
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setHtml(label.text())
    return doc.idealWidth()


def _longest_word_width(label: QLabel) -> float:
    text = label.text()
    if label.textFormat() != 0 and ("<" in text or "&" in text):  # rich text: its plain words
        doc = QTextDocument()
        doc.setHtml(text)
        text = doc.toPlainText()
    metrics = QFontMetricsF(label.font())
    words = re.split(r"[\s\u200b]+", text)
    return max((metrics.horizontalAdvance(w) for w in words if w), default=0.0)


def _shown(widget: QWidget, window: QWidget) -> bool:
    return widget.isVisible() and widget.width() > 0


def _clipped_sideways(widget: QWidget) -> bool:
    """Part of the widget's width is hidden by a parent that cannot be scrolled sideways (a scroll
    area without a horizontal scroll bar, a splitter pane too narrow for it)."""
    visible = widget.visibleRegion().boundingRect()
    if visible.isEmpty() or visible.width() >= widget.width() - 1:
        return False
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            return parent.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        parent = parent.parentWidget()
    return True


def text_problems(window: QWidget, where: str) -> list[str]:
    """Texts that do not fit their widget, anywhere in ``window`` (and its own windows)."""
    problems: list[str] = []
    roots = [
        window,
        *[
            w
            for w in QApplication.topLevelWidgets()
            if w.isVisible() and w is not window and w.parentWidget() is window
        ],
    ]
    for root in roots:
        for label in root.findChildren(QLabel):
            if (
                not _shown(label, root)
                or not label.text()
                or label.pixmap() is not None
                and not label.pixmap().isNull()
            ):
                continue
            if isinstance(label.parentWidget(), QAbstractScrollArea):
                continue
            margin = 2 * label.margin() + label.contentsMargins().left() + label.contentsMargins().right()
            room = label.width() - margin + 1
            if label.wordWrap():
                need = _longest_word_width(label)
            elif label.textFormat() == 1 or (label.textFormat() != 0 and "<" in label.text()):
                need = _rich_width(label)
            else:
                need = QFontMetricsF(label.font()).horizontalAdvance(_plain(label.text()))
            if need > room + 1:
                problems.append(f"{where}: label {_plain(label.text())[:60]!r} needs {need:.0f} px, has {room:.0f}")
        for widget in [
            *root.findChildren(QAbstractButton),
            *root.findChildren(QComboBox),
            *root.findChildren(QAbstractSpinBox),
        ]:
            if _shown(widget, root) and not isinstance(widget.parentWidget(), QTabBar) and _clipped_sideways(widget):
                text = (
                    widget.text()
                    if isinstance(widget, QAbstractButton)
                    else (widget.currentText() if isinstance(widget, QComboBox) else widget.text())
                )
                problems.append(f"{where}: {type(widget).__name__} {_plain(text)!r} is cut off at the side")
        for button in root.findChildren(QAbstractButton):
            if not _shown(button, root) or not button.text() or isinstance(button.parentWidget(), QTabBar):
                continue
            need = button.sizeHint().width()
            if (
                isinstance(button, QToolButton)
                and button.parentWidget() is not None
                and button.parentWidget().inherits("QToolBar")
            ):
                need = button.minimumSizeHint().width()
            if need > button.width() + 1:
                problems.append(f"{where}: button {_plain(button.text())!r} needs {need} px, has {button.width()}")
        for box in root.findChildren(QComboBox):
            if not _shown(box, root) or not box.currentText():
                continue
            need = QFontMetricsF(box.font()).horizontalAdvance(box.currentText()) + 30  # frame and arrow
            if need > box.width() + 1:
                problems.append(f"{where}: combo box {box.currentText()!r} needs {need:.0f} px, has {box.width()}")
        for group in root.findChildren(QGroupBox):
            if _shown(group, root) and group.title():
                need = QFontMetricsF(group.font()).horizontalAdvance(_plain(group.title())) + 16
                if need > group.width() + 1:
                    problems.append(
                        f"{where}: group {_plain(group.title())!r} needs {need:.0f} px, has {group.width()}"
                    )
        for bar in root.findChildren(QTabBar):
            if not _shown(bar, root):
                continue
            scrolling = [b for b in bar.findChildren(QToolButton) if b.isVisible()]
            if scrolling:
                names = [_plain(bar.tabText(i)) for i in range(bar.count())]
                problems.append(f"{where}: tab bar {names} does not fit ({bar.width()} px): scroll arrows")
            for i in range(bar.count()):
                if bar.tabRect(i).width() + 1 < bar.tabSizeHint(i).width():
                    problems.append(f"{where}: tab {_plain(bar.tabText(i))!r} is cut")
        problems += heatmap_problems(root, where)
        problems += map_layout_problems(root, where) + map_problems(root, where)
    return problems


def heatmap_problems(root: QWidget, where: str) -> list[str]:
    from attnviz.ui.heatmap import HeatmapWidget

    problems = []
    for heatmap in root.findChildren(HeatmapWidget):
        if not heatmap.isVisible() or heatmap.values is None or heatmap.values.size == 0:
            continue
        title = heatmap.plot_item.titleLabel
        if title.isVisible() and title.text:
            doc = QTextDocument()
            doc.setHtml(title.text)
            font = QFont(title.item.font())
            lines = re.split("[\n\u2028]", doc.toPlainText())  # a long title wraps onto lines
            need = max(QFontMetricsF(font).horizontalAdvance(line) for line in lines)
            room = heatmap.plot_item.width()
            if need > room + 1:
                problems.append(f"{where}: heatmap title {doc.toPlainText()!r} needs {need:.0f} px, has {room:.0f}")
        ticks = heatmap.colorbar.axis._tickLevels  # noqa: SLF001 - the ticks set_data gave it
        if not ticks or not ticks[0]:
            problems.append(f"{where}: a colour bar without labels ({heatmap.plot_item.titleLabel.text!r})")
    return problems


def _scrolls(widget: QWidget, orientation: Qt.Orientation) -> bool:
    """Whether a scroll area above ``widget`` can bring its hidden part into sight that way."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            policy = (
                parent.horizontalScrollBarPolicy()
                if orientation == Qt.Orientation.Horizontal
                else parent.verticalScrollBarPolicy()
            )
            return policy != Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        parent = parent.parentWidget()
    return False


def _clip_rect(widget: QWidget) -> QRect:
    """The part of ``widget`` its parents leave in sight, in its own coordinates (what
    ``visibleRegion`` gives less its opaque children: a map whose graphics view covers it whole
    has an empty visible region, seen or not)."""
    rect = widget.rect()
    parent = widget.parentWidget()
    while parent is not None:
        if not parent.isVisible():
            return QRect()
        rect = rect.intersected(parent.rect().translated(-widget.mapTo(parent, QPoint(0, 0))))
        parent = parent.parentWidget()
    return rect


def map_problems(root: QWidget, where: str) -> list[str]:
    """Every map on show in ``root``, whole: every row and column of its matrix inside its widget and
    not hidden by a parent that cannot scroll to it, its title inside the widget, its colour bar
    inside the widget with labels on show that do not overlap. (``heatmap_problems`` checks the
    title's width against its plot, which is not enough: a plot wider than its widget is cut.)
    A reusable check: run on any window or widget, for any view."""
    from attnviz.ui.heatmap import HeatmapWidget

    problems = []
    for heatmap in root.findChildren(HeatmapWidget):
        if heatmap.isVisible() and heatmap.values is not None and heatmap.values.size:
            # A map below the fold is looked at where the user would scroll to see it: pyqtgraph
            # lays out a colour bar's labels when it first paints them.
            scroll = heatmap.parentWidget()
            while scroll is not None and not isinstance(scroll, QScrollArea):
                scroll = scroll.parentWidget()
            if scroll is not None and _clip_rect(heatmap).isEmpty():
                scroll.ensureWidgetVisible(heatmap, 0, 0)
                wait(40)
            problems += _one_map_problems(heatmap, where)
    return problems


def _one_map_problems(heatmap: QWidget, where: str) -> list[str]:  # a HeatmapWidget
    view = heatmap.findChild(QAbstractScrollArea)  # the pyqtgraph view inside the widget
    if view is None:
        return []
    problems = []
    name = heatmap.title or heatmap.accessibleName()
    rows, cols = heatmap.values.shape[:2]
    box = heatmap.plot_item.getViewBox()
    (x0, x1), (y0, y1) = box.viewRange()
    if x0 > 0.01 or x1 < cols - 0.01 or y0 > 0.01 or y1 < rows - 0.01:
        problems.append(f"{where}: map {name!r} shows part of its range ({x0:.1f}-{x1:.1f}, {y0:.1f}-{y1:.1f})")
    # The view's viewport in the heatmap widget's coordinates, and what of the widget is seen.
    offset = view.viewport().mapTo(heatmap, view.viewport().rect().topLeft())
    seen = view.viewport().rect().translated(offset)
    visible = _clip_rect(heatmap)

    def place(scene_rect: QRectF) -> QRect:
        return view.mapFromScene(scene_rect).boundingRect().translated(offset)

    for horizontal, n in ((True, cols), (False, rows)):
        orientation = Qt.Orientation.Horizontal if horizontal else Qt.Orientation.Vertical
        hidden = 0
        for i in range(n):
            cell = QRectF(i, 0, 1, rows) if horizontal else QRectF(0, i, cols, 1)
            centre = place(box.mapViewToScene(cell).boundingRect()).center()
            inside = seen.contains(centre) and (visible.contains(centre) or _scrolls(heatmap, orientation))
            hidden += not inside
        if hidden:
            what = "columns" if horizontal else "rows"
            problems.append(f"{where}: map {name!r} shows {n - hidden} of its {n} {what}")
    title = heatmap.plot_item.titleLabel
    if title.isVisible() and title.text:
        rect = place(title.item.sceneBoundingRect())
        if rect.left() < seen.left() - 1 or rect.right() > seen.right() + 1:
            problems.append(f"{where}: map {name!r}: its title is cut by the widget's edge")
    bar = heatmap.colorbar
    if bar.isVisible() and bar.scene() is not None:
        rect = place(bar.sceneBoundingRect())
        if rect.right() > seen.right() + 1 or rect.left() < seen.left() - 1:
            problems.append(f"{where}: map {name!r}: its colour bar is cut or out of sight")
        # The labels pyqtgraph draws, where it draws them: none at all, or two overlapping, is a
        # bar that cannot be read.
        image = QImage(8, 8, QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        try:
            specs = bar.axis.generateDrawSpecs(painter)
        finally:
            painter.end()
        texts = [] if specs is None else [place(bar.axis.mapRectToScene(r)) for r, _flags, _text in specs[2]]
        if not texts:
            problems.append(f"{where}: map {name!r}: its colour bar has no labels on show")
        if any(a.intersects(b) for i, a in enumerate(texts) for b in texts[i + 1 :]):
            problems.append(f"{where}: map {name!r}: its colour bar's labels overlap")
        if any(r.right() > seen.right() + 1 for r in texts):
            problems.append(f"{where}: map {name!r}: its colour bar's labels are cut")
    return problems


def map_layout_problems(root: QWidget, where: str) -> list[str]:
    """Every map on show, whole: its plot and colour bar inside the widget's own view (pyqtgraph
    lays a plot out wider than a narrow widget and the view cuts its right side off), the widget
    not hidden by a parent, every row and column in the view range and at least a few pixels
    wide, a colour bar with labels."""
    from attnviz.ui.heatmap import HeatmapWidget

    problems = []
    for heatmap in root.findChildren(HeatmapWidget):
        if not heatmap.isVisible() or heatmap.values is None or heatmap.values.size == 0:
            continue
        if _inside(heatmap, PIPELINE_PAGE):
            continue  # the pipeline's maps have checks of their own (its slides and stage walk)
        name = heatmap.plot_item.titleLabel.text or heatmap.objectName() or "untitled"
        view = heatmap._view  # noqa: SLF001 - the graphics view the plot is laid out in
        scene = view.mapFromScene(heatmap.plot_item.sceneBoundingRect()).boundingRect()
        if scene.right() > view.viewport().width() + 2 or scene.bottom() > view.viewport().height() + 2:
            problems.append(
                f"{where}: map {name!r} is laid out {scene.width()}x{scene.height()} px in a view of "
                f"{view.viewport().width()}x{view.viewport().height()}: its right or bottom is cut"
            )
        visible = heatmap.visibleRegion().boundingRect()
        if visible.width() < heatmap.width() - 2 and _clipped_sideways(heatmap):
            problems.append(f"{where}: map {name!r} is cut at the side ({visible.width()} of {heatmap.width()} px)")
        rows, cols = heatmap.values.shape
        (x0, x1), (y0, y1) = heatmap.plot_item.getViewBox().viewRange()
        if x0 > 0.01 or x1 < cols - 0.01 or y0 > 0.01 or y1 < rows - 0.01:
            problems.append(f"{where}: map {name!r} shows part of its {rows}x{cols} cells")
        box = heatmap.plot_item.getViewBox().sceneBoundingRect()
        if rows <= 64 and cols <= 64 and (box.width() / cols < 4 or box.height() / rows < 4):
            problems.append(f"{where}: map {name!r} has cells under 4 px ({box.width():.0f}x{box.height():.0f} px)")
        ticks = heatmap.colorbar.axis._tickLevels  # noqa: SLF001 - the ticks set_data gave it
        if heatmap.colorbar.isVisible() and (not ticks or not ticks[0]):
            problems.append(f"{where}: map {name!r} has a colour bar without labels")
    return problems


def _inside(widget: QWidget, object_name: str) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if parent.objectName() == object_name:
            return True
        parent = parent.parentWidget()
    return False


def presentation_problems(window: QWidget, where: str) -> list[str]:
    """Presentation mode's promises: the output beside the weights, and the presenter bar."""
    problems = []
    if not window.output.isVisible() or window.output.visibleRegion().isEmpty():
        problems.append(f"{where}: the output is not on screen beside the weights")
    if not window.presenter.isVisible():
        problems.append(f"{where}: no presenter bar")
    return problems


def font_problems(window: QWidget, where: str, normal_pt: float) -> list[str]:
    """In presentation mode: every visible text at least 1.5 times the normal size."""
    problems = []
    roots = [window, *[w for w in QApplication.topLevelWidgets() if w.isVisible() and w.parentWidget() is window]]
    for root in roots:
        for widget in [*root.findChildren(QLabel), *root.findChildren(QAbstractButton)]:
            if not widget.isVisible() or not widget.text():
                continue
            size = widget.font().pointSizeF()
            if size < 1.5 * normal_pt - 0.01:
                problems.append(
                    f"{where}: {type(widget).__name__} {_plain(widget.text())[:50]!r} stays at "
                    f"{size:.1f} pt in presentation mode (normal {normal_pt:.1f} pt)"
                )
    return problems


def sideways_problems(window: QWidget, where: str) -> list[str]:
    """A view wider than its tab scrolls sideways: on a projector part of it is out of sight
    (texts cut at the edge, a map behind the scroll bar)."""
    problems = []
    for page in window.findChildren(QScrollArea):
        name = page.objectName()
        if name.endswith("Page") and page.isVisible() and page.horizontalScrollBar().isVisible():
            inner = page.widget().minimumSizeHint().width() if page.widget() is not None else -1
            problems.append(
                f"{where}: {name} scrolls sideways (its view needs {inner} px, the tab is {page.viewport().width()} px)"
            )
    return problems


def window_problems(window: QWidget, where: str, size0: tuple[int, int]) -> list[str]:
    problems = []
    free = window.screen().availableGeometry()
    frame = window.frameGeometry()
    if frame.width() > free.width() or frame.height() > free.height():
        problems.append(
            f"{where}: the window ({frame.width()}x{frame.height()}) exceeds the screen "
            f"({free.width()}x{free.height()})"
        )
    if (window.width(), window.height()) != size0:
        problems.append(
            f"{where}: the window resized itself from {size0[0]}x{size0[1]} to {window.width()}x{window.height()}"
        )
    return problems


#: The pipeline in presentation mode: the issue's example, every stage and the walk at each step.
PIPELINE_PRESET = "masked-softmax-2d"


def pipeline_presentation(
    window, tag: str, size0: tuple[int, int], shots: Path | None, window_only: bool
) -> tuple[list[str], int]:  # noqa: ANN001
    """The pipeline on ``PIPELINE_PRESET`` in presentation mode, in both languages: every stage at
    once, then the walk at every step with its code beside it (a lesson docked, as in a lecture)."""
    from attnviz.ui.i18n import install_language

    app = QApplication.instance()
    problems: list[str] = []
    checked = 0
    window.session.load_preset(PIPELINE_PRESET)
    dock = window.dock("pipelineDock")
    dock.show()
    settle(window)
    view = dock.view()
    for language in ("en", "pt_BR"):
        install_language(app, language)
        window.set_presentation_mode(True)
        looks = [("stages", None)] + [("walk", stage) for stage in view.walk.stages]
        for what, stage in looks:
            view.set_walking(stage is not None)
            view.set_code_visible(stage is not None)
            if stage is not None:
                view.walk.show_stage(stage)
            settle(window)
            where = f"{tag} {language} presentation pipeline {what} {stage or ''}".rstrip()
            problems += window_problems(window, where, size0)
            if not window_only:
                problems += text_problems(window, where)  # maps included
            if shots is not None:
                window.grab().save(str(shots / f"{where.replace(' ', '-')}.png"))
            checked += 1
        view.set_walking(False)
        view.set_code_visible(False)
        window.set_presentation_mode(False)
        settle(window)
    install_language(app, "en")
    return problems, checked


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    window_only = "--window-only" in sys.argv  # small screens: the window must fit; texts may scroll
    out = Path(args[0])
    shots = Path(args[1]) if len(args) > 1 else None
    app = QApplication(sys.argv[:1])
    from attnviz.ui import theme
    from attnviz.ui.i18n import install_language
    from attnviz.ui.window.main_window import MainWindow

    screen = app.primaryScreen().availableGeometry()
    tag = f"{screen.width()}x{screen.height()}"
    problems: list[str] = []
    checked = 0
    normal_pt = app.font().pointSizeF()
    window = MainWindow()
    window.show()
    settle(window)
    size0 = (window.width(), window.height())

    def look_at(what: str) -> list[str]:
        """The view on show, once settled: the window's size, and its texts unless window_only."""
        settle(window)
        where = f"{tag} {what}"
        found = window_problems(window, where, size0)
        if not window_only:
            found += text_problems(window, where) + sideways_problems(window, where)
        if shots is not None:
            window.grab().save(str(shots / f"{tag}-{what.replace(' ', '-')}.png"))
        return found

    def open_view(name: str) -> None:
        """Open a view as its shortcut does (the menus are hidden in presentation mode): its
        action, which brings an open one forward too."""
        action = window.dock(name).toggleViewAction()
        if action.isChecked():
            window.dock(name).raise_()
        else:
            action.trigger()

    def look_at_slide(what: str) -> list[str]:
        """A view in presentation mode: it fits, reads, and its maps are whole and large."""
        found = look_at(what)
        if not window_only:
            found += font_problems(window, f"{tag} {what}", normal_pt)
        return found

    if not window_only:
        # The lecture's first slide: the masked softmax with 2-D valid lengths, in presentation
        # mode: every title whole, every row and column of both maps, the output beside them.
        window.session.load_preset("masked-softmax-2d")
        window.set_presentation_mode(True)
        settle(window)
        where = f"{tag} masked-softmax-2d presentation"
        problems += window_problems(window, where, size0) + text_problems(window, where)
        problems += presentation_problems(window, where) + font_problems(window, where, normal_pt)
        shapes = [m.values.shape for m in window.results.maps if m.isVisible() and m.values is not None]
        if shapes != [(2, 4), (2, 4)]:
            problems.append(f"{where}: the weights maps on show are {shapes}, not both batch elements' 2x4")
        if not window.output.heatmap.isVisible() or window.output.heatmap.values is None:
            problems.append(f"{where}: the output map is not on show")
        if shots is not None:
            window.grab().save(str(shots / f"{tag}-masked-softmax-2d-presentation.png"))
        window.set_presentation_mode(False)
        settle(window)
        checked += 1
    window.lessons.load(LESSON)
    window.lessons.view.answer_button.setChecked(True)
    for language in ("en", "pt_BR"):
        install_language(app, language)
        for mode in ("light", "dark"):
            theme.apply_theme(mode)
            for tab in ("main", *TABS):
                if tab == "main":
                    window.tool_tabs.setCurrentIndex(0)
                else:
                    window.dock(tab).show()
                problems += look_at(f"{language} {mode} {tab}")
                checked += 1
            window.tool_tabs.setCurrentIndex(0)
            window.set_presentation_mode(True)
            settle(window)
            where = f"{tag} {language} {mode} presentation"
            problems += window_problems(window, where, size0)
            if not window_only:
                problems += text_problems(window, where)
                problems += font_problems(window, where, normal_pt)
                problems += presentation_problems(window, where)
            if shots is not None:
                window.grab().save(str(shots / f"{tag}-{language}-{mode}-presentation.png"))
            checked += 1
            if not window_only and mode == "light":
                # Every view as a slide, reached without leaving (its shortcut's action).
                for tab in SLIDE_TABS:
                    open_view(tab)
                    problems += look_at_slide(f"{language} {mode} presentation {tab}")
                    checked += 1
                window.tool_tabs.setCurrentIndex(0)
            window.set_presentation_mode(False)
            settle(window)
    problems_, checked_ = pipeline_presentation(window, tag, size0, shots, window_only)
    problems += problems_
    checked += checked_
    from attnviz.bench.app_bench import model_run_state
    from attnviz.state.document import ReplaceState

    # An engineer's working set, not a teacher's: the teaching views closed (all ten views open
    # at once do not fit one row of tabs at 1280 px; Qt then scrolls the tab bar).
    for tab in TABS:
        window.dock(tab).hide()
    window.session.push(ReplaceState(model_run_state(2, 4, 16, 2), "a model's run"))
    for language in ("en", "pt_BR"):
        install_language(app, language)
        for mode in ("light", "dark"):
            theme.apply_theme(mode)
            for tab in MODEL_TABS:
                window.dock(tab).show()
                problems += look_at(f"{language} {mode} {tab}")
                checked += 1
            if mode == "light" and not window_only:
                window.set_presentation_mode(True)
                for tab in MODEL_TABS:
                    open_view(tab)
                    problems += look_at_slide(f"{language} {mode} presentation {tab}")
                    checked += 1
                window.set_presentation_mode(False)
                settle(window)
    install_language(app, "en")
    theme.apply_theme("light")
    window.close()
    out.write_text(json.dumps({"problems": problems, "checked": checked}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
