"""Small models built in the tests (nothing is downloaded), and the padded batch they read."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

#: Three sequences of 6 tokens, right padded: the first has no padding at all.
KEEP = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4]).bool()
TOKENS = [[f"w{j}" if KEEP[i, j] else "[PAD]" for j in range(6)] for i in range(3)]


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    b, n, e = x.shape
    return x.reshape(b, n, heads, e // heads).transpose(1, 2)


class Layer(nn.Module):
    """q, k, v projections, torch SDPA with the mask given, an output projection; past keys and
    values are put before this step's (a KV cache)."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None,
        is_causal: bool,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, Any]:
        q, k, v = (split_heads(t, self.heads) for t in self.qkv(x).chunk(3, dim=-1))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
        b, h, n, d = o.shape
        return x + self.out(o.transpose(1, 2).reshape(b, n, h * d)), (k, v)


class TinySdpa(nn.Module):
    """An embedding and a stack of ``Layer``: each layer gets its own (mask, is_causal)."""

    def __init__(self, layers: int = 3, width: int = 16, heads: int = 2, vocab: int = 30) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList(Layer(width, heads) for _ in range(layers))

    def forward(
        self, ids: torch.Tensor, masks: list[tuple[torch.Tensor | None, bool]], past: list[Any] | None = None
    ) -> tuple[torch.Tensor, list[Any]]:
        x = self.embed(ids)
        cache = []
        for i, (layer, (mask, causal)) in enumerate(zip(self.layers, masks)):
            x, kv = layer(x, mask, causal, None if past is None else past[i])
            cache.append(kv)
        return x, cache


def ids(batch: int = 3, length: int = 6, seed: int = 0) -> torch.Tensor:
    return torch.randint(1, 30, (batch, length), generator=torch.Generator().manual_seed(seed))


def small_bigbird(transformers: Any, attention_type: str = "block_sparse") -> Any:
    """A 2-layer BigBird of blocks of 2 and one random block, random weights, in eval mode."""
    config = transformers.BigBirdConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        vocab_size=100,
        max_position_embeddings=128,
        block_size=2,
        num_random_blocks=1,
        attention_type=attention_type,
    )
    torch.manual_seed(0)
    return transformers.BigBirdModel(config).eval()
