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

#: A mask_mod is evaluated over at most this many cells (per batch element and head of the
#: table, summed) to tell which skipped blocks it allows; past it the share is not measured.
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
        import torch

        from attnviz.engine.block_masks import table_blocks
        from attnviz.engine.mask_bound import EMPTY
        from attnviz.engine.mask_mods import MaskMod

        listed, (bq, bk), (n_q, n_k) = table_blocks(block_mask)
        skipped = ~listed
        if not bool(skipped.any()):
            return 0.0
        fn = block_mask.mask_mod
        if _noop(fn):
            return float(skipped.float().mean())
        n_b, n_h = listed.shape[0], listed.shape[1]
        if n_b * n_h * n_q * n_k > MAX_CHECKED_CELLS:
            return None
        described = MaskMod(fn)
        allows = torch.stack(
            [
                torch.stack(
                    [described.block_structure(n_q, n_k, (bq, bk), batch=b, head=h).states != EMPTY for h in range(n_h)]
                )
                for b in range(n_b)
            ]
        )
        return float((skipped & allows).float().mean())
    except Exception:  # noqa: BLE001 - a description only: a table or mask_mod it cannot read is not measured
        return None


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
