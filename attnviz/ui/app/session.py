"""The application session: the one object every view and action works through.

It owns the document, the undo stack, the main compute scheduler, the outcome on show and the
selection (which batch element, and which call and head: the focus, which only the selection
holds), and says what changed with signals. Views and features get the session (and a ``Host``
to put their docks and menus in), never the main window, so they can be built and tested on
their own.

Signals, all on the GUI thread:

* ``documentChanged(edit)``: the document was edited (``edit`` is the ``Edit``, or None);
* ``outcomeShown(outcome)``: the result of the document's current version for the head on show
  has arrived (stale results never get this far: ``current_outcome`` is the one judge of
  staleness);
* ``selectionChanged(selection)``: another batch element, call or head was selected (choosing a
  head is not an edit: the undo stack does not see it);
* ``errorChanged(field, text)``: the current inputs give an error about ``field`` (None, None:
  they no longer do), so the panel that owns that field shows it;
* ``statusMessage(text, ms)``: a transient message for the status bar;
* ``busyChanged(bool)``, ``colormapChanged(name)``, ``colorRangeChanged(name)``,
  ``presentationChanged(on)``,
  ``languageChanged()`` (for objects that are not widgets: widgets get Qt's LanguageChange);
* intents any view may emit and follow, so views never reach into each other or the window:
  ``querySelected(row, add)`` (``select_query``: a query picked, on a map say) and
  ``rowsOutlined(rows)`` (``outline_rows``: query rows to look at, a finding's say);
* the presentation clicker's steps (Page Down / Page Up while presenting): one owner of the keys,
  the presenter bar, asks ``step_slide``; a view that is the slide on show (the pipeline's walk)
  claims the steps with ``claim_steps`` and gets them before the lessons do.

Views compute through ``register`` (``ui.app.computations``): a function of the snapshot, run
with the main computation or on a thread of its own, and only while the view is on show. The
main compute thread runs a ``compute.jobs.MainJob``: the main outcome and the computations of
the views on show that run with it.

``shutdown()`` is the one way the session ends: every compute thread it or a view started
(``register``) is stopped, the hooks registered with ``on_shutdown`` run (file reading and
autosave threads stop there), and the document listener is released. The main window calls it
when it closes, the application when it quits, and the interpreter when it exits with the window
still open (``_end_at_exit``).
"""

from __future__ import annotations

import atexit
import functools
import gc
import logging
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TypeVar

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QWidget

from attnviz.compute import Outcome, ViewData, run_snapshot
from attnviz.compute.jobs import Follows, Job, MainJob, MainRun, run_main
from attnviz.state.document import Document, Edit, Snapshot
from attnviz.state.run import Focus, HeadView, ModelRun
from attnviz.teaching.presets import DEFAULT_PRESET, PRESETS
from attnviz.text.safe import printable
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui import collector
from attnviz.ui.app.computations import Computation, Computations, Thread
from attnviz.ui.app.undo import DocumentCommand
from attnviz.ui.heatmap.colormaps import DEFAULT_COLORMAP, canonical_colormap_name
from attnviz.ui.scheduler import ComputeScheduler, in_app

__all__ = ["COLOR_RANGES", "DEFAULT_COLOR_RANGE", "AppSession", "Selection"]

_log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")

#: A replaced result is freed this long after the new one arrived: time for its paint.
_RELEASE_AFTER_MS = 100

#: How the colour scale of the attention weights is chosen: "batch" (0 to the largest weight of
#: the batch, shared by its maps), "map" (0 to each map's largest), "unit" (0 to 1) or "log"
#: (logarithmic, down to the smallest weight shown). Weights of 512 keys are all near 1/512: on
#: a 0-1 scale they would all be the colour of 0.
COLOR_RANGES: tuple[str, ...] = ("batch", "map", "unit", "log")
DEFAULT_COLOR_RANGE = "batch"
#: Undos and redos closer together than this are one burst, computed once when it ends: longer
#: than a held key's auto-repeat (25-33 per second), too short to notice after a single Ctrl+Z.
UNDO_SETTLE_MS = 60
#: Undo texts of edits that bring inputs from elsewhere (not an edit of the example on show).
OTHER_INPUTS = {"Show the given tensors", "Restore autosaved inputs"}


@dataclass(frozen=True)
class Selection:
    """What the user is looking at, shared by every view: an input of each view like an edit."""

    batch: int = 0
    #: The call (layer) and head on show (the focus): here only, not in the document; the
    #: compute thread gets it with each snapshot (0, 0 for the book's one head).
    layer: int = 0
    head: int = 0

    @property
    def focus(self) -> Focus:
        return Focus(self.layer, self.head)


#: The range of presentation mode's further text zoom (Ctrl+= / Ctrl+-).
TEXT_ZOOM_RANGE = (0.7, 1.8)


class AppSession(QObject):
    documentChanged = Signal(object)
    outcomeShown = Signal(object)
    selectionChanged = Signal(object)
    errorChanged = Signal(object, object)
    statusMessage = Signal(str, int)
    busyChanged = Signal(bool)
    colormapChanged = Signal(str)
    colorRangeChanged = Signal(str)
    presentationChanged = Signal(bool)
    #: Presentation mode's text scaled further (Ctrl+= / Ctrl+-): ``text_zoom``.
    textZoomChanged = Signal(float)
    languageChanged = Signal()
    querySelected = Signal(int, bool)
    rowsOutlined = Signal(object)
    #: The example on show changed (``loaded_example``: a preset or lesson name, or None).
    exampleChanged = Signal(object)
    #: The inputs on show were edited since their example was loaded, or are as loaded again
    #: (``example_edited``).
    exampleEdited = Signal(bool)

    def __init__(
        self,
        document: Document | None = None,
        *,
        preset: str = DEFAULT_PRESET,
        compute: Callable[[Snapshot], Outcome] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document if document is not None else Document(PRESETS[preset].build())
        #: The example the session started on (None: inputs given as a document).
        self.initial_example: str | None = preset if document is None else None
        self.undo_stack = QUndoStack(self)
        #: The main compute thread: the main outcome, then the views' computations that run with it.
        self.scheduler: ComputeScheduler[MainJob, MainRun] = ComputeScheduler(
            in_app(functools.partial(run_main, compute=compute or run_snapshot)), parent=self
        )
        self.scheduler.finished.connect(self._on_main_run)
        self.scheduler.failed.connect(self._on_main_crash)
        self.scheduler.busyChanged.connect(self.busyChanged)
        self.scheduler.busyChanged.connect(self._on_main_busy)
        #: Every view's registered computation (``register``).
        self.computations = Computations(self.snapshot, lambda: self.selection.batch, self._request_main, parent=self)
        self._extras_after = False  # main computations were asked for while the main thread ran
        self._shutdown_hooks: list[Callable[[], object]] = []
        # Frees replaced results off the GUI thread (see _on_outcome): started on first use.
        self._releaser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnviz-release")
        self.selection = Selection()
        #: True while the selection an edit moved goes out: its ``documentChanged`` follows (a
        #: listener that shows everything then need not on the selection too).
        self.applying_edit = False
        self.last_outcome: Outcome | None = None
        self.shown_version = -1
        #: Outcomes that arrived after the document or the head on show had moved on (for tests
        #: and the benchmark).
        self.dropped_outcomes = 0
        #: When the last snapshot went to the scheduler (the benchmark measures from it).
        self.submitted_at = time.perf_counter()
        self.colormap = DEFAULT_COLORMAP
        #: How the weight maps' colour scale is chosen (``COLOR_RANGES``).
        self.color_range = DEFAULT_COLOR_RANGE
        self.presenting = False
        #: How much further than presentation mode's own size its text is scaled (1: as designed).
        self.text_zoom = 1.0
        self._step_claims: list[tuple[object, Callable[[int], bool]]] = []
        self._computing = False
        self._editing = False
        self._closed = False
        self._error_field: str | None = None
        # Cycles of Qt wrappers are collected on this (the GUI) thread only, between events.
        collector.hold()  # released once, by shutdown
        self.document.subscribe(self._on_document_edit)
        self._example = self.initial_example
        self._example_edited = False
        # The stack's index moves after the edit is applied: the example is read then.
        self.undo_stack.indexChanged.connect(self._on_undo_index)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        _end_at_exit(self)

    # ------------------------------------------------------------------ edits

    def push(self, edit: Edit) -> None:
        """Apply ``edit`` through the undo stack: the only way the document changes."""
        self.undo_stack.push(
            DocumentCommand(self.document, edit, self._hold_computations, lambda: self.selection.focus)
        )

    def _hold_computations(self) -> None:
        """An undo or redo is being applied: every compute thread (the labs' too) waits until
        the steps stop coming for ``UNDO_SETTLE_MS``, then computes where they ended."""
        for scheduler in [self.scheduler, *self.computations.schedulers()]:
            scheduler.hold(UNDO_SETTLE_MS)

    def load_preset(self, name: str) -> None:
        from attnviz.state.document import ReplaceState

        preset = PRESETS[name]
        self.push(
            ReplaceState(
                preset.build(),
                message(QT_TRANSLATE_NOOP("MainWindow", "Load preset {title}"), title=preset.title, example=name),
            )
        )

    def _on_undo_index(self, _index: int) -> None:
        example = self._example_at_current_step()
        if example != self._example:
            self._example = example
            self.exampleChanged.emit(example)
        edited = self._edited_at_current_step()
        if edited != self._example_edited:
            self._example_edited = edited
            self.exampleEdited.emit(edited)

    def loaded_example(self) -> str | None:
        """The name of the preset or lesson whose inputs are on show, edited or not: the last one
        loaded before the undo stack's current step (an undo past its loading gives back the one
        before), or the one the session started on; None for a file's or a script's inputs.
        Found once per step of the undo stack (views ask at every draw)."""
        return self._example

    def example_edited(self) -> bool:
        """Whether the inputs on show were edited since their example was loaded (the numbers
        its description quotes may no longer hold); False when no example is on show."""
        return self._example_edited

    def _edited_at_current_step(self) -> bool:
        from attnviz.state.document import ReplaceState
        from attnviz.text.tr import Message

        index = self.undo_stack.index()
        if self._example is None or index == 0:
            return False
        edit = getattr(self.undo_stack.command(index - 1), "edit", None)
        text = getattr(edit, "text", None)
        if not isinstance(edit, ReplaceState) or not isinstance(text, Message):
            return True
        return text.params.get("example") != self._example

    def _example_at_current_step(self) -> str | None:
        from attnviz.state.document import ReplaceState
        from attnviz.text.tr import Message

        stack = self.undo_stack
        for index in range(stack.index() - 1, -1, -1):
            command = stack.command(index)
            edit = getattr(command, "edit", None)
            if not isinstance(edit, ReplaceState):
                continue
            text = edit.text
            if isinstance(text, Message) and "example" in text.params:
                return str(text.params["example"])
            if text in OTHER_INPUTS or getattr(getattr(text, "source", text), "context", "") == "FileActions":
                return None
            # Anything else replacing the state (a shape, a fill, new parameters) edits the example.
        return self.initial_example

    def _on_document_edit(self, edit: Edit | None) -> None:
        if self._closed:
            return
        state = self.document.state
        # An edit made on another head (an undo, a redo) brings that head back on show; else the
        # head on show stays, moved into the new run if it has fewer calls or heads.
        wanted = edit.focus if edit is not None and edit.focus is not None else self.selection.focus
        selection = self._selecting(state.run, wanted)
        if selection != self.selection:
            self.selection = selection
            self.applying_edit = True
            try:
                self.selectionChanged.emit(self.selection)
            finally:
                self.applying_edit = False
        # A view the edit brings on show (the heads grid, when a file of many heads opens) asks
        # for its computation while this runs: the submit below takes it in. Asked for on its
        # own, the same version was computed twice, the first result held while the second ran.
        self._editing = True
        try:
            self.documentChanged.emit(edit)
        finally:
            self._editing = False
        if self._computing:
            self.submit()
        self.computations.changed()

    # ------------------------------------------------------------------ selection and view options

    def set_batch(self, batch: int) -> None:
        batch = max(0, min(int(batch), self.document.state.run.batch_of(self.selection.layer) - 1))
        if batch != self.selection.batch:
            self.selection = replace(self.selection, batch=batch)
            self.selectionChanged.emit(self.selection)
            self.computations.changed()

    def set_focus(self, layer: int, head: int) -> None:
        """Show another head (or call) of the run: like picking a batch element, a choice of what
        to look at, not an edit (edits remember the head they were made on)."""
        selection = self._selecting(self.document.state.run, (layer, head))
        if selection.focus == self.selection.focus:
            return
        self.selection = selection
        self.selectionChanged.emit(self.selection)
        if self._computing:
            self.submit()
        self.computations.changed()

    def _selecting(self, run: ModelRun, focus: tuple[int, int]) -> Selection:
        """The selection with head ``focus`` on show, moved into ``run`` if it has fewer calls or
        heads; the batch element kept within that call's own batch (a windowed model's later
        calls have fewer elements than its first)."""
        layer, head = run.clamp(focus)
        batch = min(self.selection.batch, run.batch_of(layer) - 1)
        return replace(self.selection, batch=batch, layer=layer, head=head)

    def head_view(self) -> HeadView:
        """The head on show of the document as it is now (views of its arrays, no copy)."""
        return self.document.state.head_view(self.selection.focus)

    def snapshot(self) -> Snapshot:
        """The document as it is now and the head on show, for a compute thread."""
        return self.document.snapshot(self.selection.focus)

    def set_colormap(self, name: str) -> None:
        name = canonical_colormap_name(name)
        if name != self.colormap:
            self.colormap = name
            self.colormapChanged.emit(name)

    def set_color_range(self, name: str) -> None:
        if name not in COLOR_RANGES:
            raise ValueError(f"unknown colour range {name!r}: choose one of {', '.join(COLOR_RANGES)}")
        if name != self.color_range:
            self.color_range = name
            self.colorRangeChanged.emit(name)

    def set_presenting(self, on: bool) -> None:
        if bool(on) != self.presenting:
            self.presenting = bool(on)
            self.presentationChanged.emit(self.presenting)

    def set_text_zoom(self, zoom: float) -> None:
        """Scale presentation mode's text by ``zoom`` (kept within ``TEXT_ZOOM_RANGE``)."""
        low, high = TEXT_ZOOM_RANGE
        zoom = min(max(float(zoom), low), high)
        if abs(zoom - self.text_zoom) > 1e-9:
            self.text_zoom = zoom
            self.textZoomChanged.emit(zoom)

    @property
    def presentation_scale(self) -> float:
        """The scale of the maps' text: presentation mode's (times the zoom), or 1."""
        from attnviz.ui.heatmap import PRESENTATION_SCALE

        return PRESENTATION_SCALE * self.text_zoom if self.presenting else 1.0

    def show_status(self, text: str, ms: int = 8000) -> None:
        # One line, whatever the file and call names in it hold (a path's ESC, a line break).
        self.statusMessage.emit(printable(text), ms)

    # ------------------------------------------------------------------ intents between views

    def select_query(self, row: int, add: bool = False) -> None:
        """Query ``row`` of the head on show was picked (``add``: beside those picked before):
        the views that list queries select it (``querySelected``)."""
        self.querySelected.emit(int(row), bool(add))

    def claim_steps(self, owner: object, step: Callable[[int], bool] | None) -> None:
        """``owner`` takes the clicker's steps (``step(+1 or -1)`` returns whether it used the step)
        while it is the slide on show; ``None`` gives them back. The latest claim is asked first."""
        self._step_claims = [(o, f) for o, f in self._step_claims if o is not owner]
        if step is not None:
            self._step_claims.append((owner, step))

    def step_slide(self, direction: int) -> bool:
        """A step of the clicker: whether a claimant (the walk on show, say) took it; if none did,
        the caller steps the lessons. One key, one owner: two shortcuts on Page Down would be
        ambiguous to Qt, and neither would fire."""
        return any(step(direction) for _owner, step in reversed(self._step_claims))

    def outline_rows(self, rows: tuple[int, ...]) -> None:
        """Look at these query rows of the batch element and head on show: the weights maps
        outline them (``rowsOutlined``); an empty tuple takes the outlines away."""
        self.rowsOutlined.emit(tuple(int(r) for r in rows))

    # ------------------------------------------------------------------ computing

    def start(self) -> None:
        """Start computing (the window calls it once it has painted: the first computation
        imports PyTorch, and an import holds Python's lock most of the time)."""
        if not self._computing and not self._closed:
            self._computing = True
            self.submit()

    @property
    def computing(self) -> bool:
        return self._computing

    def submit(self) -> None:
        """Compute the main outcome of the document as it is now, for the head on show, and with
        it the computations of the views on show that run with it."""
        self.submitted_at = time.perf_counter()
        snapshot, batch = self.snapshot(), self.selection.batch
        self.scheduler.submit(MainJob(snapshot, batch, self.computations.main_extras(snapshot, batch, everything=True)))

    def _request_main(self) -> None:
        """Main computations want to run (a view came on show, or asked): with the main job that
        waits if there is one, after the one that runs, else now on the outcome on show."""
        if not self._computing or self._closed or self._editing:
            return  # start(), or the edit being applied (_on_document_edit), computes everything on show
        pending = self.scheduler.pending
        if pending is not None:
            more = self.computations.main_extras(pending.snapshot, pending.batch, everything=False)
            if more:
                self.scheduler.submit(replace(pending, extras=pending.extras + more))
        elif self.scheduler.running:
            self._extras_after = True
        elif self.is_current:
            assert self.last_outcome is not None
            snapshot, batch = self.snapshot(), self.selection.batch
            extras = self.computations.main_extras(snapshot, batch, everything=False)
            if extras:
                self.scheduler.submit(MainJob(snapshot, batch, extras, outcome=self.last_outcome))
        else:
            self.submit()

    def register(
        self,
        name: str,
        run: Callable[[Job[P]], R],
        *,
        thread: Thread = "own",
        follows: Follows = "head",
        auto: bool = True,
        params: P = None,  # type: ignore[assignment]  # None for a computation without parameters
    ) -> Computation[P, R]:
        """Register a view's computation (see ``ui.app.computations``): ``run(job)`` is Qt-free
        and never raises for bad input; it runs only while the computation is on show
        (``Computation.set_on_show``, which ``SessionView`` drives), on the main thread after the
        main computation (``thread="main"``, the job carries the main outcome) or on a
        latest-wins thread of its own, stopped with the session. A view has it run while it is on
        show with ``SessionView.while_shown``."""
        return Computation(self.computations, name, run, thread=thread, follows=follows, auto=auto, params=params)

    @property
    def busy(self) -> bool:
        return self.scheduler.busy

    @property
    def is_current(self) -> bool:
        """Whether what is on show is the result of the document as it is now, for the head on
        show now."""
        return self.last_outcome is not None and self.is_current_for(self.shown_version, self.last_outcome.focus)

    def is_current_for(self, version: int, focus: tuple[int, int]) -> bool:
        """Whether a result of document version ``version`` for head ``focus`` is current."""
        return version == self.document.version and tuple(focus) == self.selection.focus

    def current_outcome(self) -> Outcome | None:
        """The outcome of the document as it is now, for the head on show (None while it is
        being computed)."""
        return self.last_outcome if self.is_current else None

    def current_view(self) -> ViewData | None:
        """The arrays of the current outcome (None while computing or when it is an error)."""
        outcome = self.current_outcome()
        return outcome.view if outcome is not None else None

    @property
    def error_field(self) -> str | None:
        return self._error_field

    def _on_main_run(self, run: MainRun) -> None:
        if self._closed:
            return
        job, outcome = run.job, run.outcome
        if not self.is_current_for(outcome.version, outcome.focus) or (
            not run.computed and outcome is not self.last_outcome
        ):
            # The inputs or the head on show have moved on; a newer result is coming.
            self.dropped_outcomes += run.computed
            self.computations.drop({extra.key for extra in job.extras})
        else:
            # The views' results first: a view that draws the outcome finds them ready.
            self.computations.deliver(job.snapshot, job.batch, dict(run.results), dict(run.failures))
            if run.computed:
                self._show_outcome(outcome)

    def _on_main_busy(self, busy: bool) -> None:
        # The main thread is free: the main computations asked for while it ran go now.
        if not busy and not self._closed and (self._extras_after or self.computations.wants_main()):
            self._extras_after = False
            self._request_main()

    def _on_main_crash(self, job: MainJob, error: str) -> None:
        """The main computation raised (a bug: it reports errors as data): shown as its error."""
        outcome = job.outcome or Outcome(job.version, error=error, focus=job.snapshot.focus)
        failures = {extra.key: error for extra in job.extras}
        self._on_main_run(MainRun(job, outcome, computed=job.outcome is None, failures=failures))

    def _show_outcome(self, outcome: Outcome) -> None:
        previous = self.last_outcome  # released at the end, off this thread
        self.last_outcome = outcome
        first = self.shown_version < 0 and outcome.view is not None
        self.shown_version = outcome.version
        field = (outcome.error_field or "settings") if outcome.error else None
        if outcome.error or self._error_field is not None:
            self._error_field = field
            self.errorChanged.emit(field, outcome.error)
        self.outcomeShown.emit(outcome)
        if first:
            _freeze_startup_objects()
        # Every view now holds the new result; the old one is dropped off this thread.
        self.release_later(previous)

    def release_later(self, replaced: object) -> None:
        """Drop ``replaced`` (a result, pictures of one: hundreds of MiB at 4096x4096, ~50 ms to
        free) on the releaser's thread, not the GUI thread, and once what replaced it is painted:
        on a small machine the GUI thread painting while that much memory is unmapped stalled
        5-8 ms longer. The caller must hold no other reference to it."""
        held = [replaced]
        QTimer.singleShot(_RELEASE_AFTER_MS, self, lambda: self._release(held))

    def _release(self, held: list[object]) -> None:
        try:
            self._releaser.submit(held.clear)
        except RuntimeError:  # shutting down: drop it here
            held.clear()

    # ------------------------------------------------------------------ threads and the end

    def on_shutdown(self, hook: Callable[[], object]) -> None:
        """Call ``hook`` when the session ends (before the widgets go)."""
        self._shutdown_hooks.append(hook)

    @property
    def closed(self) -> bool:
        return self._closed

    def shutdown(self) -> None:
        """Stop every compute thread (a running computation finishes first), run the shutdown
        hooks, release the document. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.scheduler.shutdown()
        self.computations.shutdown()
        for hook in self._shutdown_hooks:
            hook()
        self._shutdown_hooks.clear()
        self._releaser.shutdown(wait=True)
        self.document.unsubscribe(self._on_document_edit)
        collector.release()
        app = QCoreApplication.instance()
        if app is not None:
            try:
                app.aboutToQuit.disconnect(self.shutdown)
            except (RuntimeError, TypeError):
                pass

    def retranslate(self) -> None:
        """The language changed (the window passes Qt's LanguageChange on): the Edit menu's
        "Undo <what>" texts follow, and views without a widget of their own are told."""
        for index in range(self.undo_stack.count()):
            command = self.undo_stack.command(index)
            if isinstance(command, DocumentCommand):
                command.retranslate()
        self.languageChanged.emit()


_sessions: weakref.WeakSet[AppSession] = weakref.WeakSet()


def _end_at_exit(session: AppSession) -> None:
    """Have ``session`` end, and its window go, before the interpreter does (if nothing else ends
    it first: a script or notebook may finish with the window open).

    Without this, a lab's thread still computing at exit finished into Qt objects already
    deleted, and PySide's own clean-up, which runs during finalisation, deleted the windows'
    pyqtgraph items when Python could no longer run their overrides (a segfault, 1 run in 5-10).
    The sessions end where ``concurrent.futures`` joins its threads, before any ``atexit``
    function: a computation finishing there may still import (the first one imports PyTorch),
    and what an import registers with ``atexit`` (PyTorch's finalizers) still runs after it.
    ``atexit`` itself where that hook is missing (it is private to the threading module).
    """
    if not _sessions:
        getattr(threading, "_register_atexit", atexit.register)(_end_sessions)
    _sessions.add(session)


def _end_sessions() -> None:
    sessions = list(_sessions)
    windows: list[QWidget] = []
    for session in sessions:
        if not shiboken6.isValid(session):
            continue
        session.shutdown()  # waits for every thread it or its views started
        window = session.parent()
        if isinstance(window, QWidget) and window.parent() is None:
            windows.append(window)
    for window in windows:
        if shiboken6.isValid(window):
            shiboken6.delete(window)  # with its pyqtgraph items, while their Python overrides still run


def _freeze_startup_objects() -> None:
    """Exempt everything alive after the first result from the cyclic garbage collector.

    By then Qt's wrappers, pyqtgraph and torch have created some 240,000 objects that live as
    long as the process. A full collection walks all of them on the GUI thread: 120-140 ms, a
    visible hitch in the middle of typing whenever Python decides to run one. ``gc.freeze``
    (meant for exactly this) moves them out of the collector's reach; later garbage is still
    collected (on the GUI thread, between events: ``ui/collector``). Freezing only relinks the
    collector's lists (no walk); a collection first would itself be the hitch, so the little
    garbage alive at this moment stays. Once per process.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
