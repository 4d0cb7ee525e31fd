"""attn-gym's mask_mods and score_mods at small sizes, and the dense reference a FlexAttention
call amounts to (issue 33; see /work/shared/PEERS.md): scores ``q @ k^T * scale``, the score_mod
per element under vmap over (b, h, q, kv) as FlexAttention applies it, the mask from
``create_mask``, the softmax in float64.

Each case says the (L_q, L_k) it is written for; L_q != L_k for the cross-attention and tree
masks. A case that attn-gym ships and this list leaves out would say why in ``LEFT_OUT`` (none does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch

attn_gym = pytest.importorskip("attn_gym")
flex = pytest.importorskip("torch.nn.attention.flex_attention")

from attn_gym import masks, mods  # noqa: E402

B, H, D = 2, 4, 8
#: vmap over kv_idx, q_idx, h, b (innermost first), as FlexAttention applies a score_mod.
_VMAP_DIMS = ((0, None, None, None, 0), (0, None, None, 0, None), (0, None, 0, None, None), (0, 0, None, None, None))


def _seed(n: int) -> torch.Generator:
    return torch.Generator().manual_seed(n)


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], Any]
    n_q: int = 32
    n_k: int = 32


def _offsets(lengths: list[int]) -> torch.Tensor:
    return masks.document_mask.length_to_offsets(lengths, "cpu")


def _tree() -> torch.Tensor:
    parents = torch.tensor([-1, 0, 0, 1, 1, 2, 3, 3])
    return masks.build_tree_ancestor_matrix(parents, device="cpu")


MASK_CASES = [
    Case("causal", lambda: masks.causal_mask),
    Case("sliding_window", lambda: masks.generate_sliding_window(5)),
    Case("prefix_lm", lambda: masks.generate_prefix_lm_mask(6)),
    Case("document", lambda: masks.generate_doc_mask_mod(masks.causal_mask, _offsets([10, 7, 15]))),
    Case("packed_causal_document", lambda: masks.generate_packed_causal_doc_mask_mod(_offsets([9, 13, 10]))),
    Case("dilated_sliding_window", lambda: masks.generate_dilated_sliding_window(6, 2)),
    Case(
        "global_sliding_window",
        lambda: masks.generate_global_sliding_window(3, torch.arange(32) % 11 == 0),
    ),
    Case("natten", lambda: masks.generate_natten(8, 4, 3, 3)),
    Case("tiled_natten", lambda: masks.generate_tiled_natten(8, 4, 3, 3, 2, 2)),
    Case("morton_natten", lambda: masks.generate_morton_natten(8, 4, 3, 3)),
    Case("block_diffusion", lambda: masks.generate_block_diffusion_mask(16, 4)),
    Case(
        "shared_prefix",
        lambda: masks.generate_shared_prefix_mask_mod(_offsets([8, 12, 12]), torch.tensor([0, 0, 0])),
    ),
    Case("sta_2d", lambda: masks.generate_sta_mask_mod_2d((4, 6), (2, 4), (2, 2), text_seq_len=8)),
    Case("sta_3d", lambda: masks.generate_sta_mask_mod_3d((2, 2, 6), (1, 2, 4), (1, 2, 2), text_seq_len=8)),
    Case("svg_spatial", lambda: masks.generate_spatial_head_mask_mod(4, 4, 7, 1, round_width=4)),
    Case("svg_temporal", lambda: masks.generate_temporal_head_mask_mod(4, 4, 7, 1)),
    Case("batchify", lambda: masks.batchify_mask_mod(masks.causal_mask, 8)),
    Case(
        "flamingo_cross_attention",
        lambda: masks.generate_vision_cross_attention_mask_mod(torch.tensor([[0, 10], [4, 20], [18, 24]]), 4),
        n_q=24,
        n_k=12,
    ),
    Case("jetspec_tree_causal", lambda: masks.generate_jetspec_tree_causal_mask_mod(6, _tree()), n_q=8, n_k=14),
    Case("jetspec_training", lambda: masks.generate_jetspec_training_mask_mod(6, 4), n_q=16, n_k=22),
    Case(
        "vsa_per_batch_head",
        lambda: masks.generate_vsa_mask_mod(torch.randint(0, 4, (B, H, 4, 2), generator=_seed(3)), 8),
    ),
]


def _graph_distances() -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 5, (B, 32, 32), generator=g)


SCORE_CASES = [
    Case("alibi", lambda: mods.generate_alibi_bias(H)),
    Case("tanh_softcap", lambda: mods.generate_tanh_softcap(2)),
    Case("sandwich", lambda: mods.generate_sandwich_bias(H, 32, d_bar=16)),
    Case(
        "graphormer_spatial",
        lambda: mods.generate_graphormer_spatial_bias(
            torch.randn(H, 5, generator=torch.Generator().manual_seed(2)), _graph_distances()
        ),
    ),
    Case("gelu_activation", lambda: mods.generate_activation_score_mod()),
    Case("mla_rope", lambda: _mla_rope()),
    Case("graphormer_edge", lambda: _graphormer_edge()),
]

#: What attn-gym ships that the cases leave out, and why: nothing (the last two, MLA's rope
#: score_mod and Graphormer's edge bias, were left out until issue 33 found them supported).
LEFT_OUT: dict[str, str] = {}


def _mla_rope() -> Any:
    """DeepSeek's MLA layout: a rope part per query head, one shared by every head for the keys
    (attn-gym reads key head ``h // num_heads``: 0 for every query head when ``num_heads`` is
    the number of query heads, as with DeepSeek's 128 heads and ``num_heads // 128`` key heads)."""
    g = torch.Generator().manual_seed(4)
    query_rope = torch.randn(B, H, 32, 4, generator=g)
    key_rope = torch.randn(B, 1, 32, 4, generator=g)
    return mods.generate_mla_rope_score_mod(query_rope, key_rope, H, scale=0.3)


def _graphormer_edge() -> Any:
    """A random undirected graph of 32 nodes per batch element, 3 edge types, paths of up to 3 hops."""
    g = torch.Generator().manual_seed(6)
    adjacency = torch.rand(B, 32, 32, generator=g) > 0.85
    adjacency = adjacency | adjacency.transpose(1, 2)
    edge_types = torch.randint(0, 3, (B, 32, 32), generator=g)
    path_types, path_lengths = mods.shortest_path_edge_types(adjacency, edge_types, 3)
    return mods.generate_graphormer_edge_bias(torch.randn(H, 3, 3, generator=g), path_types, path_lengths)


def qkv(n_q: int, n_k: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(B, H, n_q, D, generator=g),
        torch.randn(B, H, n_k, D, generator=g),
        torch.randn(B, H, n_k, D, generator=g),
    )


def dense_mask(mask_mod: Any, n_q: int, n_k: int) -> torch.Tensor:
    """(B, H, L_q, L_k) bool, as FlexAttention builds it."""
    return flex.create_mask(mask_mod, B, H, n_q, n_k, device="cpu")


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, mask_mod: Any = None, score_mod: Any = None, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights, output) in float64: the score_mod under vmap over (b, h, q, kv), then the mask."""
    scores = q.double() @ k.double().transpose(-1, -2) * scale
    n_q, n_k = scores.shape[-2:]
    if score_mod is not None:
        fn = score_mod
        for dims in _VMAP_DIMS:
            fn = torch.vmap(fn, in_dims=dims)
        scores = fn(scores, torch.arange(B), torch.arange(H), torch.arange(n_q), torch.arange(n_k))
    if mask_mod is not None:
        scores = scores.masked_fill(~dense_mask(mask_mod, n_q, n_k), -torch.inf)
    weights = torch.softmax(scores, -1).nan_to_num(0.0)
    return weights, weights @ v.double()
