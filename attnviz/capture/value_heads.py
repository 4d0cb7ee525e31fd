"""How a model's own attention code grouped its KV heads, read from the product that follows
its softmax (``weights @ values``).

A path that records only its weights (``paths/softmax.py``) shows no keys or values: with
grouped-query attention the code expanded its KV heads to the query heads before it used them,
and the grouping it chose is invisible in the weights. The product that follows the softmax
multiplies those weights by the expanded values, though, and the function mode sees it: the
heads of those values that are copies of one another are the KV heads, and which query heads
share a copy is the grouping the code used (``h // groups`` for ``repeat_interleave``, SDPA's
``enable_gqa`` and transformers' ``repeat_kv``; ``h % kv`` for a ``repeat`` that tiles them).

Copies are exact (the same numbers moved), so they are compared exactly; heads that are not
copies differ. torch only.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["PRODUCT_FUNCTIONS", "value_heads"]

#: The products attention code multiplies its weights by its values with.
PRODUCT_FUNCTIONS: frozenset[Any] = frozenset(
    {torch.matmul, torch.Tensor.__matmul__, torch.Tensor.matmul, torch.bmm, torch.Tensor.bmm, torch.einsum}
)


def _operands(func: Any, args: tuple[Any, ...]) -> list[Any]:
    if func is torch.einsum:
        rest = list(args[1:])
        if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
            rest = list(rest[0])
        return rest
    return list(args[:2])


def value_heads(weights_shape: tuple[int, ...], func: Any, args: tuple[Any, ...]) -> tuple[int, ...] | None:
    """For a product of weights of ``weights_shape`` (B, H, L_q, L_k) by values: the KV head each
    query head read (numbered in order of first use), when the values' heads are copies of fewer
    KV heads; None when the product is not weights times values, or its values hold no copies
    (no grouped-query attention, or the KV heads were not expanded)."""
    operands = _operands(func, args)
    if len(operands) != 2 or not all(isinstance(t, torch.Tensor) for t in operands):
        return None
    weights, values = operands
    b, h, n_q, n_k = weights_shape
    if h < 2 or weights.numel() != b * h * n_q * n_k or tuple(weights.shape[-2:]) != (n_q, n_k):
        return None
    if values.dim() < 2 or values.shape[-2] != n_k or values.numel() % (b * h * n_k):
        return None
    if func is torch.einsum and not _plain_product(args[0]):
        return None
    v = values.detach().reshape(b, h, n_k, -1)
    # One comparison of every head with the first answers most models (no copy of head 0: no
    # grouping); then one per KV head.
    labels = [-1] * h
    kv = 0
    for head in range(h):
        if labels[head] >= 0:
            continue
        rest = [other for other in range(head, h) if labels[other] < 0]
        same = (v[:, rest] == v[:, head : head + 1]).flatten(2).all(-1).all(0).tolist()
        members = [other for other, equal in zip(rest, same) if equal]
        if len(members) < 2:
            return None  # a head with no copy: not KV heads expanded (each serves >= 2 query heads)
        for other in members:
            labels[other] = kv
        kv += 1
    return tuple(labels) if kv < h else None


def _plain_product(equation: Any) -> bool:
    """An einsum of weights by values: "...qk,...kd->...qd" (the key axis summed)."""
    if not isinstance(equation, str) or "->" not in equation:
        return False
    inputs, out = equation.replace(" ", "").split("->")
    parts = inputs.split(",")
    if len(parts) != 2 or len(parts[0]) < 2 or len(parts[1]) < 2:
        return False
    summed = parts[0][-1]
    return parts[1][-2] == summed and summed not in out
