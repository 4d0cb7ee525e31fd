"""The lecture a clicker gives: Page Down / Page Up walk a lecture plan (``attnviz.teaching.lecture``).

``LectureClicker.step(+1 or -1)`` is the clicker's one entry: the slide on show takes the step
first when it can (the pipeline's walk, through ``AppSession.step_slide``; a lesson whose answer
is still hidden reveals it, an answer longer than the slide turns to its next page), else the
lecture moves to the plan's next or previous slide. The walk is entered at its first step going
forward (at its last going back) and hands the clicker on at both ends. A slide loaded from the
menus meanwhile moves the lecture there.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from attnviz.teaching.lecture import DEFAULT_PLAN, LecturePlan, LecturePlanError, Slide, load_plan, save_plan
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS
from attnviz.ui.app.host import Host
from attnviz.ui.app.session import AppSession
from attnviz.ui.i18n import translate
from attnviz.ui.views.docks import MASKING_LAB_DOCK, PIPELINE_DOCK, SCALING_LAB_DOCK
from attnviz.ui.views.lessons import LessonsController

__all__ = ["VIEW_DOCKS", "LectureClicker"]

#: The plan's views by their docks.
VIEW_DOCKS = {"masking-lab": MASKING_LAB_DOCK, "scaling-lab": SCALING_LAB_DOCK}


class LectureClicker(QObject):
    """Steps a lecture plan (``plan``; ``index`` the slide on show, None before the first)."""

    #: The slide on show changed (its index), or the plan did.
    slideChanged = Signal(int)

    def __init__(
        self, session: AppSession, host: Host, lessons: LessonsController, parent: QObject | None = None
    ) -> None:
        super().__init__(parent if parent is not None else host.widget())
        self.session = session
        self.host = host
        self.lessons = lessons
        self.plan: LecturePlan = DEFAULT_PLAN
        self.index: int | None = None
        self._going = False  # a slide of ours is being loaded: the example it loads is expected
        session.exampleChanged.connect(self._follow_example)
        self._follow_example(session.loaded_example())  # the window opened on one of its slides

    # ------------------------------------------------------------------ the clicker

    def step(self, direction: int) -> None:
        """One press of the clicker: the slide's own step if it has one left, else the next
        (``direction`` 1) or previous (-1) slide."""
        if self.session.step_slide(direction):
            return
        if self._answer_page(direction) or (direction > 0 and self._reveal_answer()):
            return
        self._sync()
        if self.index is None:
            target = 0 if direction > 0 else len(self.plan) - 1
        else:
            target = self.index + (1 if direction > 0 else -1)
        if not 0 <= target < len(self.plan):
            self.session.show_status(
                translate("Presenter", "The last slide of the lecture")
                if direction > 0
                else translate("Presenter", "The first slide of the lecture"),
                5000,
            )
            return
        self.go(target, backwards=direction < 0)

    def go(self, index: int, *, backwards: bool = False) -> None:
        """Show slide ``index`` of the plan (``backwards``: reached by Page Up, so a walk starts at
        its last step)."""
        slide = self.plan[index]
        self.index = index
        self._going = True
        try:
            self._show(slide, backwards)
        finally:
            self._going = False
        self.slideChanged.emit(index)

    def _show(self, slide: Slide, backwards: bool) -> None:
        session, host = self.session, self.host
        if slide.kind == "lesson":
            lesson = LESSONS[slide.name]
            if lesson.side_by_side is None:
                self._show_main_view()  # the lesson stands beside the weights
            self.lessons.load(slide.name)
            return
        if slide.kind in ("example", "walk") and session.loaded_example() != slide.name:
            session.load_preset(slide.name)
        if slide.kind == "example":
            self._show_main_view()
        elif slide.kind == "walk":
            dock = host.dock(PIPELINE_DOCK)
            if dock is None:
                return
            dock.show()
            dock.raise_()
            view = dock.view()
            view.set_walking(True)  # type: ignore[attr-defined]
            view.walk.enter(at_end=backwards)  # type: ignore[attr-defined]
        elif (dock := host.dock(VIEW_DOCKS[slide.name])) is not None:
            dock.show()
            dock.raise_()
            # A view split into pages on a slide starts at its first (at its last going back).
            pages = getattr(dock.view(), "slide_pages", None)
            if pages is not None:
                pages.enter(at_end=backwards)

    def _show_main_view(self) -> None:
        tabs = getattr(self.host.widget(), "tool_tabs", None)
        if tabs is not None:
            tabs.setCurrentIndex(0)

    def _reveal_answer(self) -> bool:
        """The lesson on show reveals its answer before the lecture moves on (True: it did now)."""
        lesson = self.lessons.lesson
        dock = self.lessons.dock
        if lesson is None or not dock.isVisible() or not dock.is_built:
            return False
        view = self.lessons.view
        if view.lesson is not lesson or view.answer_button.isChecked():
            return False
        view.answer_button.setChecked(True)
        return True

    def _answer_page(self, direction: int) -> bool:
        """A lesson's answer too long for one slide is shown a page at a time: the next (or
        previous) page first (True: it turned one now)."""
        dock = self.lessons.dock
        if self.lessons.lesson is None or not dock.isVisible() or not dock.is_built:
            return False
        return self.lessons.view.step_answer(direction)

    def _sync(self) -> None:
        """The slide on show may have been reached by hand (the walk started with its shortcut):
        the lecture goes on from there."""
        loaded = self.session.loaded_example()
        dock = self.host.dock(PIPELINE_DOCK)
        walking = (
            dock is not None
            and dock.is_built
            and getattr(dock, "is_current_tab", lambda: False)()
            and getattr(dock.view(), "walking", False)
        )
        if walking and loaded in PRESETS:
            walk = Slide("walk", loaded)
            if walk in self.plan.slides and (self.index is None or self.plan[self.index] != walk):
                self.index = self.plan.slides.index(walk)

    def _follow_example(self, name: str | None) -> None:
        if self._going:
            return
        found = self.plan.index_of_example(name, near=self.index or 0)
        if found is not None:
            self.index = found
            self.slideChanged.emit(found)

    # ------------------------------------------------------------------ the plan

    @property
    def position(self) -> tuple[int, int]:
        """(the slide on show counted from 1, or 0 before the first; the number of slides)."""
        return (0 if self.index is None else self.index + 1, len(self.plan))

    def set_plan(self, plan: LecturePlan) -> None:
        """Give the lecture from ``plan``, from its first slide on (the next Page Down)."""
        self.plan = plan
        self.index = None
        self._follow_example(self.session.loaded_example())
        self.slideChanged.emit(-1)

    def open_plan(self, path: str | Path) -> bool:
        """Give the lecture from the plan in ``path``; a bad file is refused in one line on the
        status bar (the lecture keeps its plan)."""
        try:
            plan = load_plan(path)
        except LecturePlanError as error:
            self.session.show_status(translate("Presenter", "Not a lecture plan: {reason}").format(reason=error), 12000)
            return False
        self.set_plan(plan)
        self.session.show_status(
            translate("Presenter", "Lecture plan opened: {count} slides").format(count=len(plan)), 8000
        )
        return True

    def save_plan(self, path: str | Path) -> bool:
        try:
            save_plan(self.plan, path)
        except OSError as error:
            self.session.show_status(
                translate("Presenter", "The lecture plan could not be saved: {reason}").format(
                    reason=error.strerror or error
                ),
                12000,
            )
            return False
        return True
