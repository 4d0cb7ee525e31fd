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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnviz.state.run import AttentionCall, ModelRun
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "CallDifference",
    "Comparison",
    "as_run",
    "compare",
    "difference_map",
    "head_weight_blocks",
    "head_weights",
    "largest_gap",
    "one_head_call",
]


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
    def outputs_compared(self) -> bool:
        """Whether both sides recorded this call's outputs (else ``outputs`` is NaN throughout)."""
        return bool(self.outputs.size) and not bool(np.isnan(self.outputs).all())

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
    def outputs_compared(self) -> bool:
        """Whether some matched call's outputs were recorded on both sides."""
        return any(c.outputs_compared for c in self.calls)

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
        from attnviz.io import load_capture

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
    """(B, H, L_q, L_k) float64 weights of a call: recorded, else attnviz's recomputation. Holds
    the whole call at once: :func:`head_weights` is one head's, which is what a view shows."""
    if call.weights_only:
        assert call.weights is not None
        return np.asarray(call.weights, dtype=np.float64)
    from attnviz.capture.calls import recompute_call

    weights, _output = recompute_call(call)
    return weights.detach().double().numpy()


def head_weights(call: AttentionCall, head: int) -> Any:
    """(B, L_q, L_k) weights of one head of a call, as a torch tensor of the call's float dtype:
    recorded (a view, no copy), else attnviz's recomputation of that head alone (the call's
    masks, score terms and sinks cut to it), so a comparison holds one head, never the call."""
    import torch

    from attnviz.compute.convert import tensor_view

    if call.weights_only:
        assert call.weights is not None
        return tensor_view(call.weights[:, head])
    from attnviz.capture.calls import recompute_call

    weights, _output = recompute_call(one_head_call(call, head))
    return torch.as_tensor(weights).detach()[:, 0]


def one_head_call(call: AttentionCall, head: int) -> AttentionCall:
    """``call`` cut to its query head ``head`` (and the key/value head serving it): a call of one
    head whose masks and score terms keep a head axis of one."""
    from dataclasses import replace

    from attnviz.compute.engine_args import shifted_score_mod
    from attnviz.state.run import shifted_mask_mod

    assert call.queries is not None and call.keys is not None and call.values is not None
    kv = call.kv_head(head)

    def cut(array: np.ndarray | None) -> np.ndarray | None:
        if array is None or array.ndim < 4 or array.shape[-3] == 1:
            return array  # no head axis, or one that broadcasts over every head
        return array[..., head : head + 1, :, :]

    masks = replace(
        call.masks,
        attn_mask=cut(call.masks.attn_mask),
        attention_mask=cut(call.masks.attention_mask),
        mask_mod=None if call.masks.mask_mod is None else shifted_mask_mod(call.masks.mask_mod, head),
    )
    terms = tuple(
        replace(
            term,
            # ALiBi's values are one slope per head: the head's own.
            values=term.values[head : head + 1]
            if term.kind == "alibi" and term.values is not None
            else cut(term.values),
            fn=None if term.fn is None else shifted_score_mod(term.fn, head),
        )
        for term in call.terms
    )
    sinks = None if call.sinks is None else np.asarray(call.sinks)
    if sinks is not None:  # per head (H,), or per query of each head (B, H, L_q)
        sinks = sinks[:, head : head + 1] if sinks.ndim == 3 else sinks.reshape(-1)[head : head + 1]
    return replace(
        call,
        queries=call.queries[:, head : head + 1],
        keys=call.keys[:, kv : kv + 1],
        values=call.values[:, kv : kv + 1],
        masks=masks,
        terms=terms,
        sinks=sinks,
        output=None,
        weights=None,
        fidelity=None,
    )


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
    # One head at a time, a block of rows at a time: each side's weights of a block are computed
    # (or read) and compared, then forgotten, so the peak is a few blocks' temporaries whatever
    # the length (two (1, 8, 4096, 4096) calls took 2.8 GB whole, 54.8 s through attend per head).
    from attnviz.engine.streamed import CACHE_ELEMENTS

    rows = max(1, CACHE_ELEMENTS // max(1, shape_a[3]))

    def one_head(head: int) -> np.ndarray:
        largest = np.zeros(batch)
        for (element, _r0, _r1, x), (_e, _s0, _s1, y) in zip(
            head_weight_blocks(a, head, rows), head_weight_blocks(b, head, rows), strict=True
        ):
            largest[element] = max(largest[element], largest_gap(x, y))
        return largest

    weights = np.stack(_on_one_thread(one_head, heads), axis=1) if heads else np.zeros((batch, 0))
    outputs = np.full((batch, heads), np.nan)
    if a.output is not None and b.output is not None and np.shape(a.output) == np.shape(b.output):
        for head in range(heads):
            outputs[:, head] = largest_per_row_block(a.output[:, head], b.output[:, head])
    return CallDifference(a.name, i, j, shape_a, shape_b, weights, outputs)


def _on_one_thread(work: Any, heads: int) -> list[np.ndarray]:
    """``work(head)`` for every head, on a thread of its own that runs torch on one thread
    (``torch.set_num_threads`` is per thread: the caller's setting is left alone). A block's
    operations are too short to share among threads: each ends in a barrier, and on a loaded
    machine a barrier waits for a thread the system has put aside (issue 30's long diff under a
    load of 15 on 2 cores: 20-40 s on two threads, 2.5 s on one; about 0.8 s of CPU on one)."""
    from concurrent.futures import ThreadPoolExecutor

    import torch

    with ThreadPoolExecutor(1, initializer=torch.set_num_threads, initargs=(1,)) as pool:
        return list(pool.map(work, range(heads)))


def head_weight_blocks(call: AttentionCall, head: int, rows: int) -> Iterator[tuple[int, int, int, Any]]:
    """(batch element, r0, r1, weights (r1 - r0, L_k)) of one head of a call, ``rows`` query rows
    at a time, batch element by batch element: recorded (views, no copy), else recomputed as
    ``recompute_call`` computes them (``engine.streamed.weight_blocks``, no stage kept whole)."""
    from attnviz.compute.convert import tensor_view

    n_batch, _heads, n_q, _n_k = call.shape
    if call.weights_only:
        assert call.weights is not None
        for element in range(n_batch):
            for r0 in range(0, n_q, rows):
                r1 = min(n_q, r0 + rows)
                yield element, r0, r1, tensor_view(call.weights[element, head, r0:r1])
        return
    from attnviz.capture.calls import call_arguments
    from attnviz.engine.streamed import weight_blocks

    q, k, v, kwargs = call_arguments(one_head_call(call, head))
    # One head: the flattened elements are the batch elements.
    yield from weight_blocks(q, k, v, rows=rows, **kwargs)


#: Elements of one block of a streamed difference: 1 Mi, 8 MiB in float64 per temporary.
_BLOCK_ELEMENTS = 1 << 20


def largest_gap(x: Any, y: Any) -> float:
    """The largest :func:`elementwise_difference` of two tensors of one shape (0 when empty).

    The difference is taken in the wider of the two dtypes (float32 weights: exact where they
    are within a factor 2 of each other, else within 2^-24 of the difference, plenty against any
    tolerance a diff is given), min and max in one pass; only a block whose extremes are not
    finite holds a NaN or an infinity, and needs ``difference``'s rules for them."""
    import torch

    from attnviz.capture.calls import difference

    if x.numel() == 0:
        return 0.0
    low, high = torch.aminmax(torch.sub(x, y))
    top = max(float(high), -float(low))
    if not math.isfinite(top):
        top = float(difference(x, y).max())
    return top


def largest_per_row_block(a: Any, b: Any) -> np.ndarray:
    """(B,): the largest :func:`elementwise_difference` of each batch element of two (B, rows,
    columns) arrays or tensors of one shape, computed a block of rows at a time (the temporaries
    of a block, never of the whole)."""
    import torch

    x, y = torch.as_tensor(a), torch.as_tensor(b)
    n_batch, n_rows = int(x.shape[0]), int(x.shape[1])
    columns = max(1, int(np.prod(x.shape[2:], dtype=np.int64)))
    largest = np.zeros(n_batch)
    if n_rows == 0 or x.numel() == 0:
        return largest
    step = max(1, _BLOCK_ELEMENTS // columns)
    for e in range(n_batch):
        for start in range(0, n_rows, step):
            largest[e] = max(largest[e], largest_gap(x[e, start : start + step], y[e, start : start + step]))
    return largest


def elementwise_difference(a: Any, b: Any) -> np.ndarray:
    """|a - b| in float64, elementwise (same shapes), as ``capture.calls.difference`` defines it:
    NaN against NaN (or the same infinity) counts 0, NaN against a number infinity."""
    import torch

    from attnviz.capture.calls import difference

    x, y = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
    shape = tuple(x.shape)
    if not shape or x.numel() == 0:
        return difference(x, y).numpy()
    out = np.empty(shape, dtype=np.float64)
    # A block of leading rows at a time: difference()'s float64 temporaries stay a block's.
    flat_x, flat_y, flat = x.reshape(shape[0], -1), y.reshape(shape[0], -1), out.reshape(shape[0], -1)
    step = max(1, _BLOCK_ELEMENTS // max(1, flat.shape[1]))
    for start in range(0, flat.shape[0], step):
        flat[start : start + step] = difference(flat_x[start : start + step], flat_y[start : start + step]).numpy()
    return out


def _max(table: np.ndarray) -> float:
    values = table[~np.isnan(table)]
    return float(values.max()) if values.size else 0.0


class _CallableModule(types.ModuleType):
    """This module, callable as :func:`compare`: ``import attnviz.compare`` binds the name
    ``attnviz.compare`` to the module, which would otherwise hide the function."""

    def __call__(self, a: object, b: object) -> Comparison:
        return compare(a, b)


sys.modules[__name__].__class__ = _CallableModule
