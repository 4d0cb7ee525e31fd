"""BigBird's block-sparse attention (``BigBirdBlockSparseAttention``, BigBird-Pegasus's too): its
softmaxes run over gathered blocks (the first and last query blocks over every key; the others
over their sliding window of three key blocks, the first and last (global) key blocks and a few
random ones), pieces that are no (L, L) map by themselves.

Recorded, at the module's end (the recorder's ``_leave_module``), as one call of the (L, L) map
the model means: its queries, keys and values (the module's own projections of the hidden states
it was given), a boolean mask of the keys each query's softmax gathers, and a score term, the
log of how many times the softmax gathers each key (in eval mode every random block is block 0,
which the global block already holds: that key's exponential counts 1 + r times). The mask and
the counts are read from the model's own function run on zero queries and keys and the identity
as values (row q of its output is then the count of each key over the row's total, whatever its
random blocks and masks); the call's output is the model's own function on the real values with
every query row kept. So ``weights()`` is the map the output mixes (rows sum to 1), checked like
any call; the model's ``output_attentions`` keeps a repeated block once (its rows sum to less than
1): that map is the call's weights over the counts (``assembled``)."""

from __future__ import annotations

import functools
import math
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .. import shaping
from ..calls import CapturedCall, Term
from .base import Recorder, flag

# The score term's name: the log of how many times the model's softmax gathers each key.
REPEATS = "block repeats"
# Columns of the identity run through the model's function at a time (its memory is linear in them).
_COLUMNS = 256
_ARGUMENTS = ("hidden_states", "band_mask", "from_mask", "to_mask", "from_blocked_mask", "to_blocked_mask")


def is_block_sparse(module: nn.Module | None) -> bool:
    """Whether ``module`` is block-sparse attention of BigBird's (its softmaxes are pieces)."""
    return module is not None and callable(getattr(module, "bigbird_block_sparse_attention", None))


def assembled(call: Any, weights: torch.Tensor) -> torch.Tensor | None:
    """``weights`` of a block-sparse call (its map, repeats summed) as the model assembles its
    ``output_attentions``: each repeated key once (weights over the repeat counts); None for a
    call of another path."""
    term = next((t for t in getattr(call, "terms", []) if t.kind == "bias" and t.name == REPEATS), None)
    if term is None or term.values is None:
        return None
    return weights / term.values.to(weights.dtype).exp().expand_as(weights)


def leave(capture: Recorder, module: nn.Module, output: Any) -> None:
    """At the end of a block-sparse module's forward: the (B, H, L, L) map it means, recorded."""
    if not is_block_sparse(module) or not isinstance(output, tuple) or len(output) < 2:
        return
    probs = output[1]
    if not isinstance(probs, torch.Tensor) or probs.dim() != 4 or probs.shape[-1] != probs.shape[-2]:
        return
    given = capture._local.given[-1] if capture._local.given else ((), {})
    capture._guarded(functools.partial(_record, capture, module, probs.detach(), output[0], given))


def _arguments(given: tuple[Any, Any]) -> dict[str, Any] | None:
    args, kwargs = given
    bound = dict(zip(_ARGUMENTS, args))
    bound.update({k: kwargs[k] for k in _ARGUMENTS if k in kwargs})
    if not all(isinstance(bound.get(k), torch.Tensor) for k in _ARGUMENTS):
        return None
    return bound


def _run(module: Any, bound: dict[str, Any], q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The model's own block-sparse function on ``q``, ``k``, ``v`` with every query row kept
    (its ``from_mask``, which zeroes padded queries' output after the attention, all ones):
    (B, H, L, d_v)."""
    b, h, n, d = q.shape
    size = module.block_size
    context, _ = module.bigbird_block_sparse_attention(
        q,
        k,
        v,
        bound["band_mask"],
        torch.ones_like(bound["from_mask"]),
        bound["to_mask"],
        bound["from_blocked_mask"],
        bound["to_blocked_mask"],
        h,
        module.num_random_blocks,
        d,
        size,
        size,
        b,
        n,
        n,
        module.seed,
        None,
        None,
    )
    return context.transpose(1, 2)  # the function returns (B, L, H, d_v)


def _counts(module: Any, bound: dict[str, Any], q: torch.Tensor) -> torch.Tensor:
    """(B, H, L, L): how many times each query's softmax gathers each key (0: not gathered, or
    masked), from the model's own function on zero scores and the identity's columns as values
    (a row's output is then each key's count over the row's total); the smallest count in a row
    is 1 (a query's own sliding block is gathered once)."""
    b, h, n, _ = q.shape
    zeros = torch.zeros_like(q)
    share = q.new_zeros(b, h, n, n)
    for start in range(0, n, _COLUMNS):
        width = min(_COLUMNS, n - start)
        eye = q.new_zeros(n, width)
        eye[start : start + width] = torch.eye(width, dtype=q.dtype, device=q.device)
        share[..., start : start + width] = _run(module, bound, zeros, zeros, eye.expand(b, h, n, width))
    smallest = torch.where(share > 0, share, torch.full_like(share, math.inf)).amin(-1, keepdim=True)
    counts = share / smallest
    return torch.where(share > 0, counts.round(), torch.zeros_like(counts))


def _record(capture: Recorder, module: nn.Module, probs: torch.Tensor, context: Any, given: tuple[Any, Any]) -> None:
    bound = _arguments(given)
    if bound is None or not isinstance(context, torch.Tensor):
        _record_weights(capture, module, probs)
        return
    hidden = bound["hidden_states"]
    b, n, _ = hidden.shape
    heads, d = int(module.num_attention_heads), int(module.attention_head_size)  # type: ignore[arg-type]

    def split(layer: Any) -> torch.Tensor:
        return layer(hidden).view(b, n, heads, d).transpose(1, 2)

    with torch.no_grad():
        q, k, v = split(module.query), split(module.key), split(module.value)
        counts = _counts(module, bound, q)
        out = _run(module, bound, q, k, v)
        # The real rows of that output are the forward's own (a check that the rerun is the forward)
        kept = bound["from_mask"].reshape(b, 1, n, 1).bool()
        model_out = context.detach().reshape(b, n, heads, -1).transpose(1, 2)
        rerun_gap = float(((out - model_out).abs() * kept).max()) if kept.any() else 0.0
    repeated = int((counts > 1).any(-1).sum())
    note = message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "block-sparse attention of its own ({module}, blocks of {block}): each query's softmax over the key "
            "blocks it gathers (global, sliding window, {random} random), as the (L, L) map they mean, zero "
            "elsewhere; a block gathered twice counts twice (the score term 'block repeats', in eval mode every "
            "random block is the first: {repeated} query rows), so rows sum to 1 where the model's "
            "output_attentions keeps it once; the model zeroes padded queries' output after the attention, and "
            "its output_attentions keeps, in their rows, the random copies of a block (which its mask zeroes "
            "for a padded query) in place of the copy their softmax weighs",
        ),
        module=type(module).__name__,
        block=module.block_size,
        random=module.num_random_blocks,
        repeated=repeated,
    )
    if rerun_gap > 1e-4:
        note = message(
            QT_TRANSLATE_NOOP("Capture", "{note}; the model's function rerun differs from its forward by {gap}"),
            note=note,
            gap=f"{rerun_gap:.1e}",
        )
    terms = [Term("bias", REPEATS, values=shaping.copy(counts.clamp_min(1).log()))]
    mask = counts > 0
    # The tokens the model pads (its ``to_mask``, the same tokens as its queries): the call's key
    # padding, which its map already masks; the doctor and the sweep read padded query rows by it.
    padded = bound["to_mask"].reshape(b, n) == 0
    ctx = capture._context()
    capture._add(
        lambda: CapturedCall(
            "",
            "softmax",
            shaping.copy(q),
            shaping.copy(k),
            shaping.copy(v),
            q.dtype,
            scale=1.0 / math.sqrt(d),
            output=shaping.copy(out),
            note=note,
            terms=terms,
            path=CallPath("module", f"{type(module).__module__}.{type(module).__name__}", weights_requested=flag(True)),
            cross=ctx["cross"],
            encoder=ctx["encoder"],
            module_key=ctx["module_key"],
        ),
        ctx["base"],
        [q, k, v, out, counts],
        mask,
        padded if bool(padded.any()) else None,
    )


def _record_weights(capture: Recorder, module: nn.Module, probs: torch.Tensor) -> None:
    """The map the model assembled, weights only: its arguments were not the ones expected."""
    name = type(module).__name__
    note = message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "block-sparse attention of its own ({module}, blocks of {block}): the {n} x {n} map the model assembles "
            "from its global, sliding-window and {random} random key blocks per query block, zero elsewhere (a "
            "random block that repeats one already attended, as in eval mode, is kept once: such rows sum to less "
            "than 1 while the output mixes both); its queries, keys and values are not visible to a capture "
            "(weights only)",
        ),
        module=name,
        block=getattr(module, "block_size", "?"),
        random=getattr(module, "num_random_blocks", "?"),
        n=probs.shape[-1],
    )
    context = capture._context()
    capture._add(
        lambda: CapturedCall(
            "",
            "softmax",
            None,
            None,
            None,
            probs.dtype,
            recorded_weights=shaping.copy(probs),
            note=note,
            path=CallPath(
                "module", f"{type(module).__module__}.{name}", weights_requested=flag(True), weights_only=True
            ),
            cross=context["cross"],
            encoder=context["encoder"],
            module_key=context["module_key"],
        ),
        context["base"],
        [probs],
        None,
    )
