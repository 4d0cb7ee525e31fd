"""The side-by-side view's computation: the same inputs under two settings, A and B. No Qt here.

``Comparison`` says what differs (a scoring function, a mask mode or a dtype, from
``attnviz.catalog``); ``variants`` makes the two states; ``run_pair`` computes both on the
compare thread (errors are data, as in ``run_state``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from attnviz import catalog
from attnviz.compute.attention import Outcome, run_state
from attnviz.document import Snapshot, State
from attnviz.tr import QT_TRANSLATE_NOOP

__all__ = [
    "COMPARE_KINDS",
    "EXERCISE_1",
    "Comparison",
    "PairOutcome",
    "PairSnapshot",
    "compare_choices",
    "run_pair",
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


@dataclass(frozen=True, kw_only=True)
class PairSnapshot(Snapshot):
    """What the compare thread computes: ``state`` is variant A, ``state_b`` variant B, both at
    head ``focus``.

    ``version`` is the view's request number (the scheduler only needs it to be increasing);
    ``doc_version`` the document version both variants were made from.
    """

    state_b: State
    doc_version: int
    comparison: Comparison


@dataclass(frozen=True)
class PairOutcome(Outcome):
    """Both outcomes of one request; ``version`` is the request number."""

    a: Outcome | None = None
    b: Outcome | None = None
    doc_version: int = -1
    comparison: Comparison | None = None


def run_pair(snapshot: Snapshot) -> Outcome:
    """Compute both variants (on the compare thread). Never raises: errors are data."""
    assert isinstance(snapshot, PairSnapshot)
    a = run_state(snapshot.state, snapshot.version, snapshot.focus)
    b = run_state(snapshot.state_b, snapshot.version, snapshot.focus)
    return PairOutcome(
        snapshot.version,
        a=a,
        b=b,
        doc_version=snapshot.doc_version,
        comparison=snapshot.comparison,
        seconds=a.seconds + b.seconds,
        focus=snapshot.focus,
    )
