"""A view's computations, registered with the session: the one way a view computes.

A view registers a Qt-free function of a ``compute.jobs.Job`` (``AppSession.register``; the
view base's ``while_shown`` ties it to the view's visibility) and says

* where it runs: ``"main"``, on the main compute thread right after the main computation, with
  its outcome (every head of the call on show, pictures of big maps: what a view must have with
  the result it draws); or ``"own"``, on a latest-wins thread of its own (the labs, the layers x
  heads overview, long context, the mask doctor: heavy, they must not delay the main view);
* what it follows (``compute.jobs.Follows``), which says when its result is out of date;
* whether it is ``auto``: computed again whenever what it follows changes (else only when the
  view asks, ``Computation.request``, with parameters of its own).

It runs only while its view is on show (``Computation.set_on_show``): a hidden view's
computation is not run, and once the view is shown again it is requested for the current
snapshot. A result reaches the view (``on_result``) only if it answers the latest request and
is still current for what the computation follows; a result that is not is dropped.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast

from PySide6.QtCore import QObject, Signal

from attnviz.compute.jobs import FOLLOWS, Extra, Follows, Job
from attnviz.state.document import Snapshot
from attnviz.ui.scheduler import ComputeScheduler, in_app

__all__ = ["KEEP", "Computation", "Computations", "Thread"]

_log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")

#: Where a computation runs (see the module docstring).
Thread = Literal["main", "own"]
#: What a result is current for: the document version, then the head, then the batch element.
Key = tuple[object, ...]


class _Keep:
    """``request()`` without parameters: the last ones given stay."""


KEEP = _Keep()


def key_of(follows: Follows, snapshot: Snapshot, batch: int) -> Key:
    """What a result of ``snapshot`` (with ``batch`` on show) is current for, under ``follows``."""
    if follows == "document":
        return (snapshot.version,)
    if follows == "head":
        return (snapshot.version, tuple(snapshot.focus))
    return (snapshot.version, tuple(snapshot.focus), batch)


@dataclass(frozen=True, eq=False)
class _Ask(Generic[P]):
    """One request on a computation's own thread."""

    serial: int
    key: Key
    job: Job[P]


class Computation(QObject, Generic[P, R]):
    """A computation registered by a view (see the module docstring).

    ``arrived_at`` is when the last current result reached the GUI thread (``time.perf_counter``),
    ``runs`` how many times it was asked to run. ``scheduler`` is its own thread (None for one
    that runs with the main computation). The results are the view's to keep: a big one held
    here as well could not be freed off the GUI thread when it is replaced.
    """

    busyChanged = Signal(bool)

    def __init__(
        self,
        registry: Computations,
        name: str,
        run: Callable[[Job[P]], R],
        *,
        thread: Thread,
        follows: Follows,
        auto: bool,
        params: P,
    ) -> None:
        super().__init__(registry)
        registry.add(self)
        if follows not in FOLLOWS:
            raise ValueError(f"a computation follows one of {', '.join(FOLLOWS)}, not {follows!r}")
        self.name = name
        #: Unique within the session: the main thread hands results back under it.
        self.key = f"{name}#{next(registry._serials)}"
        self.runs_on: Thread = thread
        self.follows: Follows = follows
        self.auto = auto
        self._registry = registry
        self._run = run
        self._params = params
        self._on_show = False
        self._wanted = False  # asked for while not on show (or for the next main job)
        self._serial = 0  # the latest request (own thread)
        self._asked: Key | None = None  # what the latest request was for
        self._awaiting = False  # the latest request has not been answered yet
        self._slots: list[Callable[[R], None]] = []
        self._failure_slots: list[Callable[[str], None]] = []
        self.arrived_at = 0.0
        self.runs = 0
        self.scheduler: ComputeScheduler[_Ask[P], tuple[_Ask[P], R | None]] | None = None
        if thread == "own":
            self.scheduler = ComputeScheduler(in_app(self._answer), parent=self)
            self.scheduler.finished.connect(self._on_answer)
            self.scheduler.failed.connect(self._on_crash)

    # ------------------------------------------------------------------ the view's side

    def on_result(self, slot: Callable[[R], None]) -> None:
        """Call ``slot(result)`` with every current result, on the GUI thread."""
        self._slots.append(slot)

    def on_failure(self, slot: Callable[[str], None]) -> None:
        """Call ``slot(message)`` when the function raised instead of returning (a bug: results
        carry their errors as data); without one the failure is logged."""
        self._failure_slots.append(slot)

    @property
    def params(self) -> P:
        return self._params

    @property
    def on_show(self) -> bool:
        return self._on_show

    @property
    def busy(self) -> bool:
        """Whether the latest request waits for its result (one replaced, or cancelled, and still
        running on the computation's thread does not count: its result will not be shown)."""
        return self._awaiting

    @property
    def current(self) -> bool:
        """Whether the latest request is for what the session shows now."""
        return self._asked == self._registry.key(self.follows)

    def set_on_show(self, on: bool) -> None:
        """The view went on show (True) or off it. On show again, an out-of-date automatic
        computation, or one asked for meanwhile, is requested for the current snapshot."""
        if on == self._on_show:
            return
        self._on_show = on
        if on and (self._wanted or (self.auto and not self.current)):
            self._submit()

    def request(self, params: P | _Keep = KEEP) -> None:
        """Compute for the session's current snapshot (with ``params``, kept for the requests
        that follow): latest wins. Not on show, it runs when the view is shown."""
        if not isinstance(params, _Keep):
            self._params = params
        if not self._on_show:
            self._wanted = True
            return
        self._submit()

    def cancel(self) -> None:
        """Drop the latest request of a computation on its own thread: its result is not
        delivered (what runs ends unseen) and nothing is asked again until what it follows
        changes or the view asks (``request``)."""
        if self.scheduler is None:
            return
        self._serial += 1
        self._wanted = False
        self._set_awaiting(False)

    # ------------------------------------------------------------------ running

    def _submit(self) -> None:
        self._wanted = False
        if self.runs_on == "main":
            self._wanted = True  # taken by the session's next main job (main_extras)
            self._registry.request_main()
            return
        assert self.scheduler is not None
        snapshot, batch = self._registry.snapshot(), self._registry.batch()
        self._serial += 1
        serial = self._serial
        registry = self._registry

        def should_stop() -> bool:
            return serial != self._serial or registry.closed

        self._asked = key_of(self.follows, snapshot, batch)
        self.runs += 1
        self._set_awaiting(True)
        self.scheduler.submit(_Ask(serial, self._asked, Job(snapshot, batch, self._params, should_stop=should_stop)))

    def _answer(self, ask: _Ask[P]) -> tuple[_Ask[P], R | None]:
        """On the computation's thread. A request replaced or cancelled while it waited is not
        run (its answer, None, is dropped: ``_on_answer`` sees the newer serial)."""
        if ask.serial != self._serial:
            return ask, None
        return ask, self._run(ask.job)

    def _on_answer(self, answer: tuple[_Ask[P], R | None]) -> None:
        ask, result = answer
        if ask.serial == self._serial:  # so it was run: the placeholder None is for stale ones
            self._deliver(cast(R, result), ask.key)
        # else: a newer request is on its way

    def _on_crash(self, ask: _Ask[P], error: str) -> None:
        if ask.serial == self._serial:
            self._fail(error)

    def _as_extra(self, key: Key) -> Extra:
        """This computation for the main thread's next job, which is for ``key``."""
        self._wanted = False
        self._asked = key
        self.runs += 1
        self._set_awaiting(True)
        return Extra(self.key, self._run, self._params)

    def _set_awaiting(self, awaiting: bool) -> None:
        if awaiting != self._awaiting:
            self._awaiting = awaiting
            self.busyChanged.emit(awaiting)

    def _deliver(self, result: R, key: Key) -> None:
        if key == self._asked:
            self._set_awaiting(False)
        if key != self._registry.key(self.follows):
            return  # what it follows has moved on: the newer request is made, or will be on show
        self.arrived_at = time.perf_counter()
        for slot in list(self._slots):
            slot(result)

    def _fail(self, error: str) -> None:
        self._set_awaiting(False)
        if not self._failure_slots:
            _log.error("computation %r failed: %s", self.name, error)
        for slot in list(self._failure_slots):
            slot(error)


class Computations(QObject):
    """The session's registered computations (``AppSession.computations``).

    ``snapshot`` and ``batch`` read what the session shows now; ``request_main`` asks the
    session for a main job with the main computations that want to run (``main_extras``).
    """

    def __init__(
        self,
        snapshot: Callable[[], Snapshot],
        batch: Callable[[], int],
        request_main: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.snapshot = snapshot
        self.batch = batch
        self.request_main = request_main
        self.closed = False
        self._serials = itertools.count()
        self._all: list[Computation[Any, Any]] = []

    def add(self, computation: Computation[Any, Any]) -> None:
        self._all.append(computation)

    def unregister(self, computation: Computation[Any, Any]) -> None:
        if computation in self._all:
            self._all.remove(computation)
            computation.set_on_show(False)

    def __iter__(self) -> Any:
        return iter(list(self._all))

    def key(self, follows: Follows) -> Key:
        return key_of(follows, self.snapshot(), self.batch())

    def schedulers(self) -> list[ComputeScheduler[Any, Any]]:
        return [c.scheduler for c in self._all if c.scheduler is not None]

    # ------------------------------------------------------------------ what changed

    def changed(self) -> None:
        """The document, the head or the batch element on show changed: automatic computations
        on show that are out of date run again (the main ones go with the next main job)."""
        main = False
        for computation in list(self._all):
            if computation.on_show and computation.auto and not computation.current:
                if computation.runs_on == "main":
                    computation._wanted = True
                    main = True
                else:
                    computation._submit()
        if main:
            self.request_main()

    # ------------------------------------------------------------------ the main thread

    def main_extras(self, snapshot: Snapshot, batch: int, *, everything: bool) -> tuple[Extra, ...]:
        """The main computations the next main job runs (for ``snapshot`` and ``batch``): those
        asked for, and, with ``everything`` (a new main outcome), every automatic one on show."""
        extras = []
        for computation in self._all:
            if computation.runs_on != "main" or not computation.on_show:
                continue
            if computation._wanted or (everything and computation.auto):
                extras.append(computation._as_extra(key_of(computation.follows, snapshot, batch)))
        return tuple(extras)

    def wants_main(self) -> bool:
        """Whether a main computation on show waits to be put in a main job."""
        return any(c.runs_on == "main" and c.on_show and c._wanted for c in self._all)

    def deliver(self, snapshot: Snapshot, batch: int, results: dict[str, object], failures: dict[str, str]) -> None:
        """Hand each main computation its result of a main job (of ``snapshot`` and ``batch``)."""
        for computation in list(self._all):
            if computation.key in results:
                computation._deliver(results[computation.key], key_of(computation.follows, snapshot, batch))
            elif computation.key in failures:
                computation._fail(failures[computation.key])

    def drop(self, keys: set[str]) -> None:
        """A main job's results were not delivered (it was out of date): its computations wait
        no more for them."""
        for computation in self._all:
            if computation.key in keys:
                computation._set_awaiting(False)

    def shutdown(self) -> None:
        self.closed = True
        for scheduler in self.schedulers():
            scheduler.shutdown()
