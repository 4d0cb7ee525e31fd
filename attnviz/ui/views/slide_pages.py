"""A view's pages on a slide: what a slide cannot hold at slide size, split into pages the
clicker walks (issue 37: the masking lab's six maps, the scaling lab's plots and notes).

``SlidePages(view)`` holds the page on show (``page``, from 0, of ``count``). While presentation
mode is on it takes the clicker's steps (``AppSession.claim_steps``) as the pipeline's walk
does: Page Down shows the next page while there is one and then hands the clicker on to the
lecture's next slide, Page Up the same backwards. The lecture enters the view at its first page
going forward and at its last going back (``enter``). Off a slide a view has one page.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from attnviz.ui.app.session import AppSession

__all__ = ["SlidePages"]


class SlidePages(QObject):
    """The pages of ``view`` on a slide (see the module docstring). ``pageChanged(int)``: the
    page on show changed, or the number of pages did."""

    pageChanged = Signal(int)

    def __init__(self, session: AppSession, view: QWidget) -> None:
        super().__init__(view)
        self._session = session
        self._view = view
        self.count = 1
        self.page = 0
        self._at_end = False  # entered going back: the last page, however many there turn out to be
        self.follow_presentation(session.presenting)

    def follow_presentation(self, on: bool) -> None:
        """Take the clicker's steps while presenting (the view calls it from ``on_presentation``)."""
        self._session.claim_steps(self, self.step if on else None)
        if not on:
            self.show_page(0)

    def set_count(self, count: int) -> None:
        """``count`` pages from now on (the page on show kept where it still is one)."""
        count = max(1, int(count))
        if count == self.count:
            return
        self.count = count
        self.show_page(count - 1 if self._at_end else min(self.page, count - 1), keep_end=True)
        self.pageChanged.emit(self.page)

    def show_page(self, page: int, *, keep_end: bool = False) -> None:
        page = min(max(0, int(page)), self.count - 1)
        if not keep_end:
            self._at_end = False
        if page != self.page:
            self.page = page
            self.pageChanged.emit(page)

    def enter(self, at_end: bool = False) -> None:
        """The lecture came to the view: its first page (``at_end``: its last, reached by Page Up)."""
        self._at_end = at_end
        self.show_page(self.count - 1 if at_end else 0, keep_end=True)

    def step(self, direction: int) -> bool:
        """A step of the clicker: the next (``direction`` 1) or previous (-1) page, while the view
        is on show and has one; False hands the step on."""
        if not self._view.isVisible():
            return False
        target = self.page + (1 if direction > 0 else -1)
        if not 0 <= target < self.count:
            return False
        self.show_page(target)
        return True
