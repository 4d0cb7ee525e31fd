"""FlexAttention's ``BlockMask`` and a bare ``mask_mod`` read as mask descriptions (``as_mask``).

A ``BlockMask`` is more than its ``mask_mod``: FlexAttention computes only the key blocks its
block table lists for each query block (``kv_num_blocks``/``kv_indices``: partial blocks, where
the mask_mod decides cell by cell; ``full_kv_num_blocks``/``full_kv_indices``: full blocks,
where it is not called at all) and skips every other block. So a block table built by hand
(``mask_mod = noop``) masks what it leaves out. ``as_mask`` reads the table: a cell is allowed
when its block is full, or partial and the mask_mod allows it, exactly as the kernel computes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .errors import input_error
from .mask_mods import Mask, MaskMod


def is_block_mask(value: object) -> bool:
    """Duck-typed: FlexAttention's ``BlockMask`` (torch need not have FlexAttention)."""
    return all(hasattr(value, name) for name in ("kv_num_blocks", "kv_indices", "BLOCK_SIZE", "mask_mod"))


def as_mask(value: object) -> Mask | None:
    """``value`` as a description: a ``Mask`` as it is, a ``BlockMask`` read with its block table,
    a function as a FlexAttention ``mask_mod``; None stays None. Anything else is one line."""
    if value is None or isinstance(value, Mask):
        return value
    if is_block_mask(value):
        return MaskMod(block_mask_mod(value))
    if callable(value):
        return MaskMod(value)
    raise input_error(
        QT_TRANSLATE_NOOP(
            "Errors",
            "a mask combines Mask descriptions only (or a FlexAttention BlockMask, a mask_mod function); got {type}",
        ),
        "mask",
        type=type(value).__name__,
    )


def table_blocks(block_mask: Any) -> tuple[torch.Tensor, tuple[int, int], tuple[int, int]]:
    """(listed, (block_q, block_k), (L_q, L_k)): ``listed`` (B, H, query blocks, key blocks) bool,
    the blocks ``block_mask``'s table computes (partial or full), for its table's own B and H."""
    table = _tables(block_mask)
    listed = table[0] if table[1] is None else table[0] | table[1]
    return listed, table[2], table[3]


def _tables(block_mask: Any) -> tuple[torch.Tensor, torch.Tensor | None, tuple[int, int], tuple[int, int]]:
    """(partial, full or None, block size, sequence lengths) of ``block_mask``'s table."""
    bq, bk = (int(x) for x in block_mask.BLOCK_SIZE)
    n_q, n_k = (int(x) for x in block_mask.seq_lengths)
    n_qb, n_kb = -(-n_q // bq), -(-n_k // bk)
    partial = _dense(block_mask.kv_num_blocks, block_mask.kv_indices, n_qb, n_kb)
    full_num = getattr(block_mask, "full_kv_num_blocks", None)
    full_idx = getattr(block_mask, "full_kv_indices", None)
    full = _dense(full_num, full_idx, n_qb, n_kb) if full_num is not None and full_idx is not None else None
    return partial, full, (bq, bk), (n_q, n_k)


def as_mask_mod(value: object, n_q: int, n_k: int) -> Callable[..., torch.Tensor] | None:
    """``value`` (anything ``as_mask`` takes) as a FlexAttention ``mask_mod`` for an (n_q, n_k)
    call, where a recorded call keeps its mask (``MaskArguments.mask_mod``): a function as it
    is, a ``BlockMask`` as its kernel computes it (``block_mask_mod``), a description bound to
    each (batch element, head) it is asked for; None stays None."""
    if value is None or (callable(value) and not isinstance(value, Mask) and not is_block_mask(value)):
        return value
    if is_block_mask(value):
        return block_mask_mod(value)
    described = as_mask(value)
    assert described is not None
    bound: dict[tuple[int, int], Any] = {}

    def description(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        key = (int(b), int(h))
        if key not in bound:
            bound[key] = described.bind(n_q, n_k, batch=key[0], head=key[1])
        return bound[key].evaluate(q_idx, kv_idx)

    description.__name__ = type(described).__name__
    return description


def block_mask_mod(block_mask: Any) -> Callable[..., torch.Tensor]:
    """The mask_mod FlexAttention's kernel amounts to for ``block_mask``: its block table and its
    own mask_mod (skipped where it is FlexAttention's ``noop_mask``), indexable per element."""
    partial, full, (bq, bk), _lengths = _tables(block_mask)
    inner = block_mask.mask_mod
    noop = getattr(inner, "__name__", "") == "noop_mask"
    n_b, n_h = partial.shape[0], partial.shape[1]

    def kernel_mask(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        bb, hh = b % n_b, h % n_h  # a table of batch or heads 1 serves every one
        qb, kb = q_idx // bq, kv_idx // bk
        listed = partial[bb, hh][qb, kb]
        out = listed if noop else listed & inner(b, h, q_idx, kv_idx)
        return out if full is None else out | full[bb, hh][qb, kb]

    kernel_mask.__name__ = f"block_mask_{getattr(inner, '__name__', 'mask_mod')}"
    return kernel_mask


def _dense(num: torch.Tensor, indices: torch.Tensor, n_qb: int, n_kb: int) -> torch.Tensor:
    """(B, H, n_qb, n_kb) bool: the blocks a (num_blocks, indices) table lists per query block."""
    num, indices = num.cpu(), indices.cpu().long()
    valid = torch.arange(indices.shape[-1]) < num[..., None]
    dense = torch.zeros((*indices.shape[:-1], n_kb + 1), dtype=torch.bool)
    dense.scatter_(-1, torch.where(valid, indices, n_kb), True)  # unlisted slots land in a spare column
    return dense[..., :n_qb, :n_kb]
