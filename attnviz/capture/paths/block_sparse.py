"""BigBird's block-sparse attention (``BigBirdBlockSparseAttention``, BigBird-Pegasus's too): its
softmaxes run over gathered blocks (the first and last query blocks over every key; the others
over their sliding window of three key blocks, the first and last (global) key blocks and a few
random ones), pieces that are no (L, L) map and whose random blocks a capture cannot place. The
model itself assembles those pieces into the (B, H, L, L) map it means (zero outside the blocks
each query attends) and returns it from the module: that map is recorded, weights only, at the
module's end (the recorder's ``_leave_module``); its softmaxes are not recorded apart."""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .. import shaping
from ..calls import CapturedCall
from .base import Recorder, flag


def is_block_sparse(module: nn.Module | None) -> bool:
    """Whether ``module`` is block-sparse attention of BigBird's (its softmaxes are pieces)."""
    return module is not None and callable(getattr(module, "bigbird_block_sparse_attention", None))


def leave(capture: Recorder, module: nn.Module, output: Any) -> None:
    """At the end of a block-sparse module's forward: the (B, H, L, L) map it returned, recorded."""
    if not is_block_sparse(module) or not isinstance(output, tuple) or len(output) < 2:
        return
    probs = output[1]
    if not isinstance(probs, torch.Tensor) or probs.dim() != 4 or probs.shape[-1] != probs.shape[-2]:
        return
    capture._guarded(functools.partial(_record, capture, module, probs.detach()))


def _record(capture: Recorder, module: nn.Module, probs: torch.Tensor) -> None:
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
