"""Global-local attention of a model's own: PEGASUS-X's encoder self-attention. Its tokens are cut
into blocks; each block's queries run one softmax over G global tokens (learned, not in the
sequence) and the keys of their own block, (B, H, blocks, block, G + block). Recorded as what it
means, the (B, H, L, G + L) map over the global tokens then every token, zero outside a query's
block: the keys axis its other softmax (the global tokens' queries over the global tokens and
every token, (B, H, G, G + L), recorded as it is) shares. L is the sequence as the module gets
it: padded to a multiple of the block, and, in a layer that staggers its blocks, half a block of
padding before it.

The softmax adapter hands a softmax of such a module here (``recognise``, then ``dense``); the
sweep's check reads the map back in the model's blocks (``blocks``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

# The attribute of a call recorded here that holds its ``Layout``.
LAYOUT = "_attnviz_global_local"


@dataclass(frozen=True)
class Layout:
    """How a global-local call's (L, G + L) map folds into the model's blocks."""

    global_len: int
    block: int


def recognise(module: nn.Module | None, weights: torch.Tensor) -> bool:
    """Whether ``weights`` is the blocked softmax of a global-local attention module
    (B, H, blocks, block, G + block)."""
    return is_global_local(module) and weights.dim() == 5 and weights.shape[-1] > weights.shape[-2]


def dense(weights: torch.Tensor) -> tuple[torch.Tensor, Layout, str]:
    """The blocked ``weights`` as the (B, H, L, G + L) map they mean, its layout and the call's
    note."""
    b, h, blocks, block, width = weights.shape
    g = width - block
    n = blocks * block
    probs = weights.detach()
    out = probs.new_zeros(b, h, n, g + n)
    out[..., :g] = probs[..., :g].reshape(b, h, n, g)
    for index in range(blocks):
        rows = slice(index * block, (index + 1) * block)
        out[..., rows, g + index * block : g + (index + 1) * block] = probs[:, :, index, :, g:]
    note = message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "global-local attention of its own: each block of {block} queries over the {g} global tokens (the "
            "first {g} keys, learned, not in the sequence) and the keys of its block, drawn as the {n} x {width} "
            "map they mean (zero outside the block); the sequence as the module gets it, padded to a multiple of "
            "the block (and by half a block first in a layer that staggers its blocks)",
        ),
        block=block,
        g=g,
        n=n,
        width=g + n,
    )
    return out, Layout(g, block), note


def is_global_local(module: nn.Module | None) -> bool:
    return module is not None and callable(getattr(module, "compute_local_attention_representations", None))


def padded_keys(module: nn.Module | None, kwargs: dict[str, Any], b: int, width: int) -> torch.Tensor | None:
    """(B, G + L): the keys a global-local module's additive ``attention_mask`` (B, L) rules out
    (the sequence's padding; the global tokens never), as the key padding mask of either of its
    calls, ``width`` keys wide; None when none (or another module)."""
    mask = kwargs.get("attention_mask")
    if not is_global_local(module) or not isinstance(mask, torch.Tensor) or mask.dim() != 2:
        return None
    if mask.shape[0] != b or mask.shape[1] > width or not bool((mask < 0).any()):
        return None
    global_len = width - mask.shape[1]
    return torch.cat([torch.zeros(b, global_len, dtype=torch.bool, device=mask.device), mask < 0], dim=1)


def layout_of(call: Any) -> Layout | None:
    found = getattr(call, LAYOUT, None)
    return found if isinstance(found, Layout) else None


def blocks(call: Any, weights: torch.Tensor) -> torch.Tensor | None:
    """A global-local call's (B, H, L, G + L) ``weights`` as the model reports them, (B, H,
    blocks, block, G + block); None for a call of another path."""
    lay = layout_of(call)
    if lay is None:
        return None
    b, h, n, _ = weights.shape
    g, block = lay.global_len, lay.block
    count = n // block
    parts = [
        torch.cat(
            [
                weights[..., index * block : (index + 1) * block, :g],
                weights[..., index * block : (index + 1) * block, g + index * block : g + (index + 1) * block],
            ],
            dim=-1,
        )
        for index in range(count)
    ]
    return torch.stack(parts, dim=2)
