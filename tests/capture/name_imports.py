"""A helper module holding the attention functions by name, as model code and attn-gym's
examples import them (bound at import, before any capture opens): issue 33."""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.attention.flex_attention import flex_attention
from torch.nn.functional import scaled_dot_product_attention


def run_flex(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, **kwargs: Any) -> Any:
    return flex_attention(q, k, v, **kwargs)


def run_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, **kwargs: Any) -> Any:
    return scaled_dot_product_attention(q, k, v, **kwargs)
