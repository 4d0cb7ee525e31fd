"""How far a snippet's numbers are from the app's: the weights, the output and every stage.

The tests run the PyTorch snippet in the suite, the bench (``python -m attnviz.bench snippets``)
every framework in its own environment; both record each stage with ``harness.run_traced`` and
compare here against what ``compute.run_state`` showed. Plain numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .base import Snippet
from .inputs import SnippetInput

if TYPE_CHECKING:
    from ..compute import ViewData

__all__ = ["STAGE_TOLERANCE", "TOLERANCE", "differences", "reference_stages", "spans_json"]

#: The largest difference of weights (each in [0, 1]) that counts as equal, per dtype: float32
#: is the issue's 1e-6; half precisions round to 3 (float16) or 2 (bfloat16) decimal digits.
TOLERANCE: dict[str, float] = {"float64": 1e-12, "float32": 1e-6, "float16": 1e-3, "bfloat16": 1e-2}
#: The same for the stages before the weights, relative to max(1, |value|), in a framework other
#: than PyTorch: its matrix products sum in another order, and a dot product of d terms then
#: differs by a few roundings of its dtype (2e-6 for d = 32 in float32), which the softmax
#: mostly absorbs.
STAGE_TOLERANCE: dict[str, float] = {dtype: 10 * tolerance for dtype, tolerance in TOLERANCE.items()}


def spans_json(snippet: Snippet) -> dict[str, list[dict[str, Any]]]:
    """What ``harness.run_traced`` needs: per stage, the last line of each span and its variable."""
    return {
        stage: [{"last": span.last, "variable": span.variable} for span in spans]
        for stage, spans in snippet.stage_spans.items()
    }


def reference_stages(inp: SnippetInput, view: ViewData) -> dict[str, np.ndarray]:
    """The app's value of every stage for ``inp`` (additive hidden features computed here, in
    float64, from the same parameters: the engine never keeps them whole)."""
    stages = {
        "raw_scores": view.raw_scores,
        "scores": view.scores,
        "masked_scores": view.masked_scores,
        "weights": view.weights,
        "applied_weights": view.applied_weights,
        "output": view.output,
    }
    if inp.bias is None:
        # With an additive mask the app's mask stage also reads the bias (keys at -1e4 or below
        # count as masked); the snippet's mask is the boolean one alone.
        stages["mask"] = view.mask
    if inp.scoring == "additive":
        q = inp.queries @ inp.params["W_q"].astype(np.float64).T
        k = inp.keys @ inp.params["W_k"].astype(np.float64).T
        stages["hidden_features"] = np.tanh(q[:, :, None, :] + k[:, None, :, :])
    return stages


def differences(captured: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray]) -> dict[str, float]:
    """The largest difference per stage both have, relative to max(1, |the app's value|): the
    absolute difference for weights, which lie in [0, 1], the relative one for big scores. inf
    where NaN or ±inf sit in different places or the shapes disagree; 0/1 for masks. Captured
    arrays are broadcast to the reference's shape first (a mask of (batch, 1, keys) stands for
    every query)."""
    out: dict[str, float] = {}
    for stage, ref in reference.items():
        if stage not in captured:
            continue
        got = np.asarray(captured[stage])
        try:
            got = np.broadcast_to(got, ref.shape)
        except ValueError:
            out[stage] = float("inf")
            continue
        out[stage] = _max_difference(got, np.asarray(ref))
    return out


def _max_difference(got: np.ndarray, ref: np.ndarray) -> float:
    if ref.dtype == bool or got.dtype == bool:
        return float(np.any(got.astype(bool) != ref.astype(bool)))
    a, b = got.astype(np.float64), ref.astype(np.float64)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return float("inf")
    same_inf = np.isinf(a) | np.isinf(b)
    if not np.array_equal(a[same_inf], b[same_inf]):
        return float("inf")
    finite = ~(np.isnan(a) | same_inf)
    if not finite.any():
        return 0.0
    return float(np.max(np.abs(a[finite] - b[finite]) / np.maximum(1.0, np.abs(b[finite]))))
