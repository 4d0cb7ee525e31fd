"""Compare two runs of a model: where, and by how much, their attention differs.

    cmp = attnviz.compare("before.attnviz-capture", cap_after)
    cmp.max_weight_diff            # the largest weight difference of any matched call
    for call in cmp.worst(5):      # the calls that differ most
        print(call.name, call.max_weight_diff, call.worst)
    cmp.only_a, cmp.only_b         # calls that could not be matched

``a`` and ``b`` are captures (``attnviz.capture``), capture files or :class:`ModelRun`. Calls
are matched by name, the k-th call of a name in ``a`` with the k-th of that name in ``b`` (a
capture names calls after their modules, so one model's runs match call for call). For each
matched call and each batch element and head: the largest difference of the weights (attnviz's
recomputation of each call, or the weights recorded) and of the heads' output (the model's own).
A matched pair of other shapes (another batch or sequence length) is listed with an infinite
difference: nothing of it can be compared position by position.

Differences follow :func:`attnviz.capture.calls.largest_difference`: NaN against NaN (and the same
infinity) is no difference, a NaN against a number an infinite one.
"""

from __future__ import annotations

import math
import os
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .model_run import AttentionCall, ModelRun
from .tr import QT_TRANSLATE_NOOP, message

__all__ = ["CallDifference", "Comparison", "as_run", "compare", "difference_map"]


@dataclass(frozen=True, eq=False)
class CallDifference:
    """One call of ``a`` matched with one of ``b``.

    ``weights`` and ``outputs``: (batch, heads) arrays, the largest absolute difference of each
    batch element and head (NaN where a side has no output to compare). ``note`` says why nothing
    could be compared (other shapes)."""

    name: str
    index_a: int
    index_b: int
    shape_a: tuple[int, int, int, int]
    shape_b: tuple[int, int, int, int]
    weights: np.ndarray
    outputs: np.ndarray
    note: str = ""

    def __repr__(self) -> str:
        where = f"{self.index_a}" if self.index_a == self.index_b else f"{self.index_a} and {self.index_b}"
        text = f"CallDifference({self.name!r}, call {where}, a {self.shape_a}, b {self.shape_b}"
        if self.note:
            return text + f", {self.note})"
        b, h = self.worst
        return (
            text + f", max weight diff {self.max_weight_diff:.3g} (batch {b}, head {h}),"
            f" max output diff {self.max_output_diff:.3g})"
        )

    @property
    def max_weight_diff(self) -> float:
        return _max(self.weights)

    @property
    def max_output_diff(self) -> float:
        return _max(self.outputs)

    @property
    def max_diff(self) -> float:
        return max(self.max_weight_diff, self.max_output_diff)

    @property
    def worst(self) -> tuple[int, int]:
        """(batch element, head) of the largest weight difference (of the output where weights agree)."""
        table = self.weights if self.max_weight_diff > 0 or not np.isfinite(self.outputs).any() else self.outputs
        if table.size == 0:
            return (0, 0)
        filled = np.where(np.isnan(table), -1.0, table)
        b, h = np.unravel_index(int(np.argmax(filled)), table.shape)
        return int(b), int(h)


@dataclass(frozen=True, eq=False)
class Comparison:
    """What :func:`compare` found: ``calls`` in ``a``'s order, the names found on one side only."""

    a: ModelRun
    b: ModelRun
    calls: tuple[CallDifference, ...]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:
        # What was found, never the runs' arrays (memory-mapped from capture files).
        worst = self.worst(1)
        text = (
            f"Comparison({len(self.calls)} call(s) matched, {len(self.only_a)} only in a, {len(self.only_b)} only in b,"
            f" max weight diff {self.max_weight_diff:.3g}, max output diff {self.max_output_diff:.3g}"
        )
        if worst:
            text += f", worst {worst[0].name!r}"
        return text + ")"

    @property
    def max_weight_diff(self) -> float:
        return max((c.max_weight_diff for c in self.calls), default=0.0)

    @property
    def max_output_diff(self) -> float:
        return max((c.max_output_diff for c in self.calls), default=0.0)

    @property
    def matched(self) -> bool:
        """Every call of each side has its partner."""
        return not self.only_a and not self.only_b

    def within(self, tol: float) -> bool:
        """Every call matched and no weight or output differs by more than ``tol``."""
        return self.matched and self.max_weight_diff <= tol and self.max_output_diff <= tol

    def worst(self, count: int | None = None) -> list[CallDifference]:
        """The calls that differ most first (calls that do not differ are left out)."""
        ordered = sorted((c for c in self.calls if c.max_diff > 0), key=lambda c: -c.max_diff)
        return ordered if count is None else ordered[:count]

    def call(self, name: str) -> CallDifference:
        for each in self.calls:
            if each.name == name:
                return each
        raise KeyError(name)


def compare(a: object, b: object) -> Comparison:
    """Compare two runs call by call (see the module's note). ``a`` and ``b``: a
    :class:`~attnviz.capture.Capture`, a capture file's path or a :class:`ModelRun`. Raises
    ``AttnvizFileError`` for a file that cannot be read, ``TypeError`` for anything else.

    Example::

        result = attnviz.compare("before.attnviz-capture", "after.attnviz-capture")
        print(result)                        # Comparison(24 call(s) matched, ..., max weight diff 3e-07, ...)
        result.worst(3)                      # the calls that differ most, each a CallDifference
        result.within(1e-5)                  # what ``attnviz diff --tol`` tests
    """
    run_a, run_b = as_run(a, "a"), as_run(b, "b")
    pairs, only_a, only_b = match_calls([c.name for c in run_a.calls], [c.name for c in run_b.calls])
    calls = tuple(_difference(run_a.calls[i], run_b.calls[j], i, j) for i, j in pairs)
    return Comparison(run_a, run_b, calls, tuple(only_a), tuple(only_b))


def as_run(value: object, name: str = "run") -> ModelRun:
    """A capture, a capture file or a run, as a :class:`ModelRun`."""
    if isinstance(value, ModelRun):
        return value
    if isinstance(value, (str, os.PathLike)):
        from .io import load_capture

        return load_capture(value)
    to_run = getattr(value, "to_run", None)
    if callable(to_run):
        run = to_run(fidelity=False)
        assert isinstance(run, ModelRun)
        return run
    raise TypeError(
        message(
            QT_TRANSLATE_NOOP("Compare", "compare: {name} must be a capture, a capture file or a ModelRun, not {type}"),
            name=name,
            type=type(value).__name__,
        )
    )


def match_calls(names_a: Sequence[str], names_b: Sequence[str]) -> tuple[list[tuple[int, int]], list[str], list[str]]:
    """Pairs (index in a, index in b) of the calls matched by name and order of that name, and
    the names left over on each side (in their run's order)."""
    waiting: dict[str, list[int]] = {}
    for j, name in enumerate(names_b):
        waiting.setdefault(name, []).append(j)
    pairs: list[tuple[int, int]] = []
    only_a: list[str] = []
    for i, name in enumerate(names_a):
        queue = waiting.get(name)
        if queue:
            pairs.append((i, queue.pop(0)))
        else:
            only_a.append(name)
    taken = {j for _i, j in pairs}
    only_b = [name for j, name in enumerate(names_b) if j not in taken]
    return pairs, only_a, only_b


def difference_map(comparison: Comparison, kind: str = "weights") -> tuple[np.ndarray, list[str]]:
    """(calls, heads) array of each matched call's largest difference per head (over its batch),
    NaN where a call has fewer heads; and the calls' names: the layers x heads map."""
    calls = comparison.calls
    heads = max((c.weights.shape[1] for c in calls), default=0)
    out = np.full((len(calls), heads), np.nan)
    for row, each in enumerate(calls):
        table = each.weights if kind == "weights" else each.outputs
        if table.size:
            with np.errstate(all="ignore"):
                out[row, : table.shape[1]] = np.where(np.isnan(table), -np.inf, table).max(axis=0)
            out[row][out[row] == -np.inf] = np.nan
    return out, [c.name for c in calls]


def call_weights(call: AttentionCall) -> np.ndarray:
    """(B, H, L_q, L_k) float64 weights of a call: recorded, else attnviz's recomputation."""
    if call.weights_only:
        assert call.weights is not None
        return np.asarray(call.weights, dtype=np.float64)
    from .capture.calls import recompute_call

    weights, _output = recompute_call(call)
    return weights.detach().double().numpy()


def _difference(a: AttentionCall, b: AttentionCall, i: int, j: int) -> CallDifference:
    shape_a, shape_b = a.shape, b.shape
    batch, heads = max(shape_a[0], shape_b[0]), max(shape_a[1], shape_b[1])
    if shape_a != shape_b:
        inf = np.full((batch, heads), math.inf)
        note = message(
            QT_TRANSLATE_NOOP("Compare", "{name}: (batch, heads, queries, keys) {a} against {b}: nothing compared"),
            name=a.name,
            a=shape_a,
            b=shape_b,
        )
        return CallDifference(a.name, i, j, shape_a, shape_b, inf, inf, note)
    weights = largest_per_head(call_weights(a), call_weights(b))
    if a.output is not None and b.output is not None and np.shape(a.output) == np.shape(b.output):
        outputs = largest_per_head(np.asarray(a.output), np.asarray(b.output))
    else:
        outputs = np.full((batch, heads), np.nan)
    return CallDifference(a.name, i, j, shape_a, shape_b, weights, outputs)


def elementwise_difference(a: Any, b: Any) -> np.ndarray:
    """|a - b| in float64, elementwise (same shapes), as ``capture.calls.difference`` defines it:
    NaN against NaN (or the same infinity) counts 0, NaN against a number infinity."""
    import torch

    from .capture.calls import difference

    x = torch.from_numpy(np.asarray(a, dtype=np.float64))
    y = torch.from_numpy(np.asarray(b, dtype=np.float64))
    return difference(x, y).numpy()


def largest_per_head(a: Any, b: Any) -> np.ndarray:
    """(B, H): the largest :func:`elementwise_difference` over the last two axes."""
    gap = elementwise_difference(a, b)
    if gap.ndim < 2:
        return gap.reshape(1, 1)
    lead = gap.reshape(*gap.shape[:-2], -1)
    if lead.shape[-1] == 0:
        return np.zeros(lead.shape[:-1])
    return lead.max(axis=-1).reshape(gap.shape[0], -1)


def _max(table: np.ndarray) -> float:
    values = table[~np.isnan(table)]
    return float(values.max()) if values.size else 0.0


class _CallableModule(types.ModuleType):
    """This module, callable as :func:`compare`: ``import attnviz.compare`` binds the name
    ``attnviz.compare`` to the module, which would otherwise hide the function."""

    def __call__(self, a: object, b: object) -> Comparison:
        return compare(a, b)


sys.modules[__name__].__class__ = _CallableModule
