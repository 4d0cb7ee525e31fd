"""Lengths a family's attention needs before it runs the way it is built for: BigBird's (and
BigBird-Pegasus's) block-sparse attention falls back to full attention unless the sequence is
longer than ``(5 + 2 * num_random_blocks) * block_size`` tokens, so the sweep's 8 tokens would
never reach it. A plan of text just past that length, from the config's own block size and
random blocks (the second row's last tokens padding, as the usual text plan's), comes first."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_inputs import BATCH, PADDED, _text_ids, _vocab

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]


def block_sparse_length(config: Any) -> int | None:
    """The shortest length (a whole number of blocks) at which a block-sparse config's attention
    runs block-sparse: one block more than its fallback's limit; None for any other config."""
    if getattr(config, "attention_type", None) != "block_sparse":
        return None
    size, random = getattr(config, "block_size", None), getattr(config, "num_random_blocks", None)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (size, random)):
        return None
    assert isinstance(size, int) and isinstance(random, int)
    return (6 + 2 * random) * size


def block_sparse_plans(config: Any, params: Any) -> Iterator[Plan]:
    """Text long enough for block-sparse attention (``block_sparse_length``), within the model's
    positions; nothing for another config or one whose positions are fewer."""
    import torch

    length = block_sparse_length(config)
    positions = getattr(config, "max_position_embeddings", None) or getattr(
        config, "max_encoder_position_embeddings", None
    )
    if length is None or "input_ids" not in params or (isinstance(positions, int) and length > positions):
        return

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        out: dict[str, Any] = {"input_ids": _text_ids(config, _vocab(config), length, g)}
        if "attention_mask" in params:
            mask = torch.ones(BATCH, length, dtype=torch.long)
            mask[1, -PADDED:] = 0
            out["attention_mask"] = mask
        if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
            out["decoder_input_ids"] = _text_ids(config, _vocab(config), 5, torch.Generator().manual_seed(1))
        return out

    yield f"text of {length} tokens (block-sparse attention's length)", ["text"], make
