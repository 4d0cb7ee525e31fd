"""The labs' computations: the masking lab (every convention) and the scaling lab (why 1/sqrt(d)).

``run_masking_lab`` and ``run_scaling_lab`` take a document ``Snapshot`` and return a result
tagged with its version, which is what a latest-wins compute thread runs. They never raise for
bad input: an error becomes data (``.error``, ``.error_field``), like ``run_state``. Both read
the document's settings and its one mask description (``engine_args.state_mask``) the way the
main computation does, so the labs show the same numbers as the main heatmaps. No Qt here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from attnviz.compute.convert import tensor_view, to_numpy
from attnviz.compute.engine_args import state_mask
from attnviz.state.document import Snapshot
from attnviz.state.run import Focus, HeadView
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

#: A lab's outcome type.
LabResult = TypeVar("LabResult")

if TYPE_CHECKING:
    from attnviz.engine.lab import LabReport
    from attnviz.engine.scaling import TanhSaturation

__all__ = [
    "ConventionView",
    "LabOutcome",
    "ScalingOutcome",
    "curves_for",
    "run_masking_lab",
    "run_scaling_lab",
]


# --------------------------------------------------------------------------- computations

# Messages are made on the compute thread and shown later: marked, and translated when shown.
_OUT_OF_MEMORY = QT_TRANSLATE_NOOP("LabWorker", "out of memory on this computer: use a smaller input")


def _unexpected(exc: Exception) -> str:
    return message(QT_TRANSLATE_NOOP("LabWorker", "unexpected error: {error}"), error=f"{type(exc).__name__}: {exc}")


def _out_of_memory(exc: BaseException) -> bool:
    """The allocator's own failure (PyTorch's "DefaultCPUAllocator: can't allocate memory" is a
    RuntimeError), told apart from other errors, so the lab says out of memory, not "unexpected"."""
    try:
        from attnviz.engine.devices import is_out_of_memory
        from attnviz.engine.errors import DeviceOutOfMemoryError
    except Exception:  # noqa: BLE001 - a broken install: then it is not recognised
        return isinstance(exc, MemoryError)
    return isinstance(exc, DeviceOutOfMemoryError) or is_out_of_memory(exc)


def _failed(outcome: Callable[..., LabResult], snapshot: Snapshot, exc: Exception) -> LabResult:
    """The outcome of a lab that failed where nothing should: running out of memory is said of
    the inputs' shape, anything else as unexpected."""
    if _out_of_memory(exc):
        return outcome(snapshot.version, error=_OUT_OF_MEMORY, error_field="shape", focus=snapshot.focus)
    return outcome(snapshot.version, error=_unexpected(exc), focus=snapshot.focus)


def _head(snapshot: Snapshot) -> tuple[HeadView, Any, Any, Any, dict[str, Any] | None]:
    """The snapshot's head on show, its queries, keys and values as tensors, and the learnable
    parameters (None: none)."""
    import torch

    state = snapshot.state
    view = state.head_view(snapshot.focus)
    params = {k: torch.from_numpy(np.asarray(v)) for k, v in state.params.items()} or None
    return view, tensor_view(view.queries), tensor_view(view.keys), tensor_view(view.values), params


@dataclass(frozen=True)
class ConventionView:
    """One convention of a masking-lab result, as numpy arrays ready to draw.

    ``weights`` (B, Q, K); ``cells`` (B, Q, K) bool: weights that differ from the reference (all
    False for the reference itself); ``output_rows`` (B, Q) bool: rows whose output differs;
    ``row_kinds`` (B, Q) str (``engine.lab.ROW_KINDS``); ``sentences``: what differs, in words.
    """

    name: str
    mask_mode: str
    causal: str | None
    label: str
    weights: np.ndarray
    cells: np.ndarray
    output_rows: np.ndarray
    row_kinds: np.ndarray
    sentences: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        return not (self.cells.any() or self.output_rows.any())


@dataclass(frozen=True)
class LabOutcome:
    """The masking lab for one document version and head (``focus``): every convention, or an
    error.

    ``report`` is the engine's ``LabReport`` (torch tensors); ``conventions`` the same as numpy,
    reference first; ``allowed`` (B, Q, K) the intended mask; ``empty_rows`` (B, Q).
    """

    version: int
    report: LabReport | None = None
    reference: str = ""
    conventions: dict[str, ConventionView] = field(default_factory=dict)
    allowed: np.ndarray | None = None
    empty_rows: np.ndarray | None = None
    error: str | None = None
    error_field: str | None = None
    focus: Focus = Focus()

    def sentences(self) -> list[str]:
        return [s for c in self.conventions.values() for s in c.sentences]


def run_masking_lab(snapshot: Snapshot) -> LabOutcome:
    """``engine.lab.compare_conventions`` on the snapshot, with the document's settings.

    Runs on the CPU whatever the document's device: the lab is about conventions, and a dozen
    small runs on a busy GPU would gain nothing. Dropout is left out (it would make every
    convention differ at random).
    """
    state = snapshot.state
    s = state.settings
    try:
        import torch

        from attnviz.engine import AttentionInputError
        from attnviz.engine.lab import compare_conventions

        view, q, k, v, params = _head(snapshot)
        try:
            with torch.no_grad():
                # The main view's mask but its causal setting, which the lab tries in both alignments.
                report = compare_conventions(
                    q,
                    k,
                    v,
                    causal=view.causal,
                    mask=state_mask(state, view, causal=False),
                    scoring=s.scoring,
                    dtype=s.dtype,
                    params=params,
                    num_hiddens=s.num_hiddens,
                    seed=s.param_seed,
                    allow_nonfinite=s.allow_nonfinite,
                )
        except AttentionInputError as exc:
            return LabOutcome(
                snapshot.version, error=exception_message(exc), error_field=exc.field, focus=snapshot.focus
            )
        conventions: dict[str, ConventionView] = {}
        for name, conv in report.conventions.items():
            diff = report.disagreements.get(name)
            zeros = np.zeros(tuple(conv.weights.shape), dtype=bool)
            conventions[name] = ConventionView(
                name=name,
                mask_mode=conv.mask_mode,
                causal=conv.causal,
                label=conv.label,
                weights=to_numpy(conv.weights),
                cells=zeros if diff is None else to_numpy(diff.cells),
                output_rows=np.asarray(zeros.any(-1)) if diff is None else to_numpy(diff.output_rows),
                row_kinds=conv.row_kinds,
                sentences=() if diff is None else diff.sentences,
            )
        return LabOutcome(
            snapshot.version,
            report,
            report.reference,
            conventions,
            to_numpy(report.allowed),
            to_numpy(report.empty_rows),
            focus=snapshot.focus,
        )
    except Exception as exc:  # noqa: BLE001 - a lab must never take the app down
        return _failed(LabOutcome, snapshot, exc)


#: Curves cost about the same for every number of keys: samples x keys stays near this.
_CURVE_BUDGET = 4096 * 64
_MAX_SAMPLES = 4096
#: Largest softmax width the curves are drawn for.
_MAX_CURVE_KEYS = 4096


@lru_cache(maxsize=16)
def curves_for(n_keys: int) -> dict[str, np.ndarray]:
    """``scaling_curves`` for a softmax over ``n_keys`` keys (cached: up to about a second each)."""
    from attnviz.engine.scaling import scaling_curves

    n = max(1, min(int(n_keys), _MAX_CURVE_KEYS))
    # At most the default 4096 samples: each also draws a query of 1024 numbers, so more samples
    # for a narrow softmax would cost memory (131072 x 1024 floats is 1 GB) for no visible gain.
    samples = max(64, min(_MAX_SAMPLES, _CURVE_BUDGET // n))
    return scaling_curves(n_keys=n, samples=samples)


@dataclass(frozen=True)
class ScalingOutcome:
    """The scaling lab for one document version and head (``focus``).

    ``curves``: ``scaling_curves`` for the current mean number of allowed keys (rounded);
    ``point``: ``current_point`` for the current inputs, or None with ``point_note`` saying why;
    ``saturation``: ``tanh_saturation`` when the scoring is additive (else None, with
    ``saturation_note``). ``error`` only when nothing could be computed.
    """

    version: int
    curves: dict[str, np.ndarray] | None = None
    point: dict[str, float] | None = None
    point_note: str | None = None
    saturation: TanhSaturation | None = None
    saturation_note: str | None = None
    scoring: str = ""
    error: str | None = None
    error_field: str | None = None
    focus: Focus = Focus()


def run_scaling_lab(snapshot: Snapshot) -> ScalingOutcome:
    """``current_point`` (and, for additive scoring, ``tanh_saturation``) for the snapshot, and
    the curves they are drawn on."""
    state = snapshot.state
    s = state.settings
    try:
        from attnviz.engine import AttentionInputError
        from attnviz.engine.scaling import current_point, tanh_saturation

        view, q, k, _v, params = _head(snapshot)
        mask = state_mask(state, view)
        point: dict[str, float] | None = None
        note: str | None = None
        try:
            point = current_point(q, k, mask=mask)
        except AttentionInputError as exc:
            note = exception_message(exc)
        n_keys = view.n_keys
        if point is not None and math.isfinite(point["n_keys"]):
            n_keys = round(point["n_keys"])
        curves = curves_for(max(1, n_keys))
        saturation = None
        sat_note: str | None = None
        if s.scoring == "additive":
            try:
                saturation = tanh_saturation(q, k, params, num_hiddens=s.num_hiddens, seed=s.param_seed, mask=mask)
            except AttentionInputError as exc:
                sat_note = exception_message(exc)
        else:
            sat_note = QT_TRANSLATE_NOOP(
                "LabWorker",
                "tanh saturation concerns additive attention: choose the additive scoring function to see it",
            )
        return ScalingOutcome(
            snapshot.version, curves, point, note, saturation, sat_note, s.scoring, focus=snapshot.focus
        )
    except Exception as exc:  # noqa: BLE001 - a lab must never take the app down
        return _failed(ScalingOutcome, snapshot, exc)
