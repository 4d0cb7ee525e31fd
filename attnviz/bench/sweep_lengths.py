"""Lengths a family's attention needs before it runs the way it is built for: BigBird's (and
BigBird-Pegasus's) block-sparse attention falls back to full attention unless the sequence is
longer than ``(5 + 2 * num_random_blocks) * block_size`` tokens, so the sweep's 8 tokens would
never reach it. A plan of text just past that length, from the config's own block size and
random blocks (the second row's last tokens padding, as the usual text plan's), comes first.
Reformer's local and LSH attention run in chunks only past their chunk length (64 tokens): its
plan is text of four chunks, hashed twice (``chunked_plans``)."""

from __future__ import annotations

import math
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


def chunked_length(config: Any) -> int | None:
    """Four chunks of a Reformer config's attention (the least common multiple of its local and
    LSH chunk lengths, the multiple the model pads its input to): chunks that each look one back
    make a band, not the whole map; None for any other config."""
    if not isinstance(getattr(config, "attn_layers", None), (list, tuple)):
        return None
    sizes = [getattr(config, f"{kind}_attn_chunk_length", None) for kind in set(config.attn_layers)]
    whole = [v for v in sizes if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    if not whole or len(whole) != len(sizes):
        return None
    return 4 * math.lcm(*whole)


def _text_plan(config: Any, params: Any, length: int, extra: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    import torch

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        out: dict[str, Any] = {"input_ids": _text_ids(config, _vocab(config), length, g), **extra}
        if "attention_mask" in params:
            mask = torch.ones(BATCH, length, dtype=torch.long)
            mask[1, -PADDED:] = 0
            out["attention_mask"] = mask
        if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
            out["decoder_input_ids"] = _text_ids(config, _vocab(config), 5, torch.Generator().manual_seed(1))
        return out

    return make


def _positions(config: Any) -> Any:
    return getattr(config, "max_position_embeddings", None) or getattr(config, "max_encoder_position_embeddings", None)


def chunked_plans(config: Any, params: Any) -> Iterator[Plan]:
    """Text of ``chunked_length`` tokens (its LSH attention hashed twice where the forward takes
    ``num_hashes``: one call per round), within the model's positions; nothing for another config."""
    length = chunked_length(config)
    positions = _positions(config)
    if length is None or "input_ids" not in params or (isinstance(positions, int) and length > positions):
        return
    extra = {"num_hashes": 2} if "num_hashes" in params and "lsh" in config.attn_layers else {}
    yield f"text of {length} tokens (four attention chunks)", ["text"], _text_plan(config, params, length, extra)


def block_sparse_plans(config: Any, params: Any) -> Iterator[Plan]:
    """Text long enough for block-sparse attention (``block_sparse_length``), within the model's
    positions; nothing for another config or one whose positions are fewer."""

    length = block_sparse_length(config)
    positions = _positions(config)
    if length is None or "input_ids" not in params or (isinstance(positions, int) and length > positions):
        return
    yield f"text of {length} tokens (block-sparse attention's length)", ["text"], _text_plan(config, params, length, {})
