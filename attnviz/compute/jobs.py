"""What a view's computation is given, and what the main compute thread runs. No Qt here.

A view asks for its computation by registering a function of a ``Job`` with the session
(``AppSession.register``): the document's snapshot (the state and the head on show), the batch
element on show, the view's own parameters, and, for a computation that runs with the main one,
the main ``Outcome`` of that snapshot. The main compute thread runs a ``MainJob``: the main
outcome (or the one already current, when only the views' computations are wanted) and then
every computation of a view on show that asked to run with it (``run_main``).

A function registered here must not raise for bad input (errors are data, as in ``run_state``);
should it raise all the same, ``run_main`` reports the failure for that computation only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from attnviz.compute.attention import Outcome, run_snapshot
from attnviz.state.document import Snapshot
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

__all__ = ["FOLLOWS", "Extra", "Follows", "Job", "MainJob", "MainRun", "run_main"]

P = TypeVar("P")

#: What a computation's result depends on, and so when it is out of date: the document
#: ("document": the whole run, as the mask doctor reads it), the head on show too ("head"), or
#: the batch element on show as well ("selection").
Follows = Literal["document", "head", "selection"]
FOLLOWS: tuple[Follows, ...] = ("document", "head", "selection")


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Job(Generic[P]):
    """The inputs of one run of a view's computation.

    ``should_stop`` turns True once a newer request of the same computation was made (or the
    session ended): a long computation checks it between steps and gives up.
    """

    snapshot: Snapshot
    batch: int
    params: P
    #: The main computation's outcome of ``snapshot`` (computations run with it; else None).
    main: Outcome | None = None
    should_stop: Callable[[], bool] = _never


@dataclass(frozen=True)
class Extra:
    """A view's computation that runs on the main compute thread, after the main outcome, as
    ``run(Job(snapshot, batch, params, main=outcome))``; its result goes back under ``key``."""

    key: str
    run: Callable[[Job[Any]], object]
    params: object = None


@dataclass(frozen=True)
class MainJob:
    """What the main compute thread runs: the main outcome of ``snapshot``, or, when ``outcome``
    is given (it is the current one already), only the ``extras``."""

    snapshot: Snapshot
    batch: int = 0
    extras: tuple[Extra, ...] = ()
    outcome: Outcome | None = None

    @property
    def version(self) -> int:
        return self.snapshot.version


@dataclass(frozen=True)
class MainRun:
    """The main compute thread's answer: the outcome (``computed``: made by this run, not
    passed in), each extra's result by key, and why an extra has none (``failures``)."""

    job: MainJob
    outcome: Outcome
    computed: bool
    results: Mapping[str, object] = field(default_factory=dict)
    failures: Mapping[str, str] = field(default_factory=dict)


def run_main(job: MainJob, compute: Callable[[Snapshot], Outcome] = run_snapshot) -> MainRun:
    """The main outcome (``compute``, unless the job brings it) and then every extra with it;
    never raises: an extra that fails is reported in ``failures`` and the others still run."""
    computed = job.outcome is None
    outcome = compute(job.snapshot) if job.outcome is None else job.outcome
    results: dict[str, object] = {}
    failures: dict[str, str] = {}
    for extra in job.extras:
        try:
            results[extra.key] = extra.run(Job(job.snapshot, job.batch, extra.params, main=outcome))
        except Exception as exc:  # noqa: BLE001 - one view's failure must not take the others' results
            failures[extra.key] = message(
                QT_TRANSLATE_NOOP("Errors", "unexpected error: {error}"),
                error=f"{type(exc).__name__}: {exception_message(exc)}",
            )
    return MainRun(job, outcome, computed, results, failures)
