"""The side-by-side view's computation: the same inputs under two settings, A and B. No Qt here.

``Comparison`` says what differs (a scoring function, a mask mode or a dtype, from
``attnviz.state.catalog``); ``variants`` makes the two states; ``run_comparison`` computes both, as
the side-by-side view's computation (a ``compute.jobs.Job`` whose parameters are the
comparison); errors are data, as in ``run_state``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from attnviz.compute.attention import Outcome, run_state
from attnviz.compute.jobs import Job
from attnviz.state import catalog
from attnviz.state.document import State
from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP

__all__ = [
    "COMPARE_KINDS",
    "EXERCISE_1",
    "Comparison",
    "PairOutcome",
    "compare_choices",
    "run_comparison",
    "variants",
]

#: What can differ between A and B: the Settings field and its caption.
COMPARE_KINDS: dict[str, str] = {
    "scoring": QT_TRANSLATE_NOOP("CompareView", "Scoring function"),
    "mask_mode": QT_TRANSLATE_NOOP("CompareView", "Mask mode"),
    "dtype": QT_TRANSLATE_NOOP("CompareView", "Dtype"),
}


def compare_choices(what: str) -> dict[str, str]:
    """The choices for ``what`` (name -> marked label), as the catalogue has them now (a scoring
    function registered later is among them)."""
    if what == "scoring":
        return {info.name: info.label for info in catalog.SCORINGS.values()}
    if what == "mask_mode":
        return {info.name: info.label for info in catalog.MASK_MODES.values()}
    return dict(catalog.DTYPE_OPTIONS)


@dataclass(frozen=True)
class Comparison:
    """Compare ``what`` (a Settings field in COMPARE_KINDS) set to ``a`` against ``b``."""

    what: str
    a: str
    b: str

    def __post_init__(self) -> None:
        if self.what not in COMPARE_KINDS:
            raise ValueError(f"cannot compare {self.what!r}: choose one of {', '.join(COMPARE_KINDS)}")
        choices = compare_choices(self.what)
        for side, value in (("A", self.a), ("B", self.b)):
            if value not in choices:
                raise ValueError(
                    f"{side}: {value!r} is not a {COMPARE_KINDS[self.what].lower()}; choose one of {', '.join(choices)}"
                )

    def choice_label(self, side: str) -> str:
        """The (marked) label of side ``side``'s choice ("A" or "B")."""
        return compare_choices(self.what)[self.a if side == "A" else self.b]


EXERCISE_1 = Comparison("scoring", "additive", "scaled_dot")


def variants(state: State, comparison: Comparison) -> tuple[State, State]:
    """Two copies of ``state`` that differ only in the compared setting.

    Learned parameters belong to one scoring function: a variant with another scoring function
    starts from its own seeded parameters, as switching the setting in the app does.
    """
    out = []
    for value in (comparison.a, comparison.b):
        changed: dict[str, Any] = {comparison.what: value}
        params = {} if comparison.what == "scoring" and value != state.settings.scoring else state.params
        out.append(replace(state, settings=replace(state.settings, **changed), params=params))
    return out[0], out[1]


@dataclass(frozen=True)
class PairOutcome:
    """Both outcomes of one comparison, of document version ``version`` and head ``focus``."""

    a: Outcome
    b: Outcome
    comparison: Comparison
    version: int
    focus: Focus = Focus()

    @property
    def seconds(self) -> float:
        return self.a.seconds + self.b.seconds


def run_comparison(job: Job[Comparison]) -> PairOutcome:
    """Both variants of ``job``'s snapshot under the comparison ``job.params`` (on the view's
    thread). Never raises: errors are data."""
    snapshot = job.snapshot
    state_a, state_b = variants(snapshot.state, job.params)
    a = run_state(state_a, snapshot.version, snapshot.focus)
    b = run_state(state_b, snapshot.version, snapshot.focus)
    return PairOutcome(a, b, job.params, snapshot.version, snapshot.focus)
