"""Block sparsity a FlexAttention call's block table holds that its recording does not honour.

A ``BlockMask`` masks twice: its ``mask_mod`` cell by cell, and its block table, which lists
the key blocks each query block computes (a table built by hand, ``mask_mod = noop``, is the
whole mask). FlexAttention's GPU kernels skip every block the table leaves out, and attnviz
reads the table for such a call (``engine.block_masks``). PyTorch's CPU ``flex_attention``
computes every block and ignores the table, so a CPU call is recorded, recomputed and shown
as it ran: with its mask_mod alone. ``unhonoured_share`` measures what that leaves out: the
share of the table's blocks it skips while the mask_mod allows some cell in them (blocks the
mask_mod empties anyway change nothing); the call's note and the doctor say it.
"""

from __future__ import annotations

from typing import Any

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["MAX_CHECKED_CELLS", "describe_table", "table_note", "unhonoured_share"]

#: A mask_mod is evaluated cell by cell over at most this many cells (in the skipped blocks its
#: index ranges cannot settle, summed over the table) to tell which it allows; past it the share
#: is not measured.
MAX_CHECKED_CELLS = 2**24


def _noop(fn: Any) -> bool:
    return getattr(fn, "__name__", "") == "noop_mask"


def unhonoured_share(block_mask: Any, on_gpu: bool) -> float | None:
    """The share (0..1) of ``block_mask``'s blocks, over its table's batch elements and heads,
    that the table skips while its mask_mod allows some cell of them: what PyTorch's CPU
    ``flex_attention`` computes and a GPU skips. None on a GPU (the table is honoured), for a
    table that cannot be read, or a mask_mod too large to check (``MAX_CHECKED_CELLS``)."""
    if on_gpu:
        return None
    try:
        listed, block, lengths = _table(block_mask)
        skipped = ~listed
        if not bool(skipped.any()):
            return 0.0
        fn = block_mask.mask_mod
        if _noop(fn):
            return float(skipped.float().mean())
        allowed = _allowed_anywhere(fn, skipped, block, lengths)
        return None if allowed is None else float(allowed.float().mean())
    except Exception:  # noqa: BLE001 - a description only: a table or mask_mod it cannot read is not measured
        return None


def _table(block_mask: Any) -> Any:
    from attnviz.engine.block_masks import table_blocks

    return table_blocks(block_mask)


def _allowed_anywhere(fn: Any, skipped: Any, block: tuple[int, int], lengths: tuple[int, int]) -> Any:
    """(B, H, query blocks, key blocks) bool: the ``skipped`` blocks where ``fn`` allows some
    cell. Each query block's key blocks are first classified on index ranges (the overview's
    interval arithmetic, no cell evaluated); only blocks it cannot settle are evaluated cell by
    cell, at most ``MAX_CHECKED_CELLS`` in all (past it: None, not measured)."""
    import torch

    from attnviz.engine.mask_intervals import block_bounds
    from attnviz.engine.mask_mods import MaskMod

    (bq, bk), (n_q, n_k) = block, lengths
    out = torch.zeros_like(skipped)
    budget = MAX_CHECKED_CELLS
    for b in range(skipped.shape[0]):
        for h in range(skipped.shape[1]):
            bound = None
            for i in range(skipped.shape[2]):
                row = skipped[b, h, i]
                r0, r1 = i * bq, min(n_q, (i + 1) * bq)
                if r0 >= r1 or not bool(row.any()):
                    continue
                bounds = block_bounds(fn, torch.tensor(b), torch.tensor(h), r0, r1, n_k, bk)
                can_true, can_false = (row, row) if bounds is None else bounds
                out[b, h, i] = row & can_true & ~can_false  # allowed in every cell
                for j in (row & can_true & can_false).nonzero().flatten().tolist():  # not settled on ranges
                    c0, c1 = j * bk, min(n_k, (j + 1) * bk)
                    budget -= (r1 - r0) * (c1 - c0)
                    if budget < 0:
                        return None
                    if bound is None:
                        bound = MaskMod(fn).bind(n_q, n_k, batch=b, head=h)
                    out[b, h, i, j] = bool(bound.region(r0, r1, c0, c1).any())
    return out


def describe_table(block_mask: Any, on_gpu: bool) -> tuple[str, float | None]:
    """(the call's note, ``unhonoured_share``) of a call given ``block_mask``."""
    unhonoured = unhonoured_share(block_mask, on_gpu)
    return table_note(block_mask, on_gpu, unhonoured), unhonoured


def table_note(block_mask: Any, on_gpu: bool, unhonoured: float | None) -> str:
    """The call's note on its block mask: its block size and sparsity as FlexAttention reports
    them; on the CPU, that the blocks its table skips were computed, and how many of them the
    mask_mod alone allows (what is shown there but skipped on a GPU)."""
    try:
        size = block_mask.BLOCK_SIZE
        sparsity = float(block_mask.sparsity())
    except Exception:  # noqa: BLE001 - a description only
        return ""
    text = message(
        QT_TRANSLATE_NOOP(
            "Capture", "FlexAttention block mask: blocks of {rows} x {cols}, {sparsity}% of blocks skipped"
        ),
        rows=size[0],
        cols=size[1],
        sparsity=f"{max(sparsity, 0.0):.1f}",
    )
    if on_gpu or sparsity <= 0.0:
        return text
    if unhonoured:
        return message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "{text} on a GPU; on the CPU flex_attention computed every block: {share}% of blocks, which its "
                "block table skips and its mask_mod ({name}) allows, are computed and shown here (block sparsity "
                "that is not in the mask_mod is ignored on the CPU)",
            ),
            text=text,
            share=f"{100 * unhonoured:.1f}",
            name=getattr(block_mask.mask_mod, "__name__", "mask_mod"),
        )
    return message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "{text} on a GPU; on the CPU flex_attention computed every block, so only its mask_mod masks (as recorded)",
        ),
        text=text,
    )
