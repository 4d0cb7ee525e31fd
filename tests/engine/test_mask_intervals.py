"""Key blocks classified on index ranges are sound (issue 33): a block said never allowed has no
allowed cell, one said always allowed no masked cell, for the arithmetic the ranges follow
(``+ - * // % abs``, comparisons, ``& | ~``); a function they cannot follow says so (None) and
is evaluated cell by cell. Every attn-gym mask_mod is checked the same way in test_attn_gym.py."""

from __future__ import annotations

import pytest
import torch

from attnviz.engine.mask_intervals import block_bounds

flex = pytest.importorskip("torch.nn.attention.flex_attention")

ZERO = torch.tensor(0)


def check_bounds(fn, n_q: int, n_k: int, block: int, heads: int = 1) -> bool:
    """True when the ranges could follow ``fn``; asserts soundness on every row block."""
    followed = False
    for h in range(heads):
        head = torch.tensor(h)
        dense = flex.create_mask(fn, 1, heads, n_q, n_k, device="cpu")[0, h]  # FlexAttention's own (vmap)
        for r0 in range(0, n_q, 5):
            r1 = min(n_q, r0 + 7)
            found = block_bounds(fn, ZERO, head, r0, r1, n_k, block)
            if found is None:
                continue
            followed = True
            can_true, can_false = found
            for j in range(len(can_true)):
                cells = dense[r0:r1, j * block : (j + 1) * block]
                assert bool(can_true[j]) or not bool(cells.any()), (fn, r0, j)
                assert bool(can_false[j]) or bool(cells.all()), (fn, r0, j)
    return followed


def window_abs(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 3


def chunked(b, h, q_idx, kv_idx):
    return (q_idx // 6 == kv_idx // 6) & ~(kv_idx > q_idx)


def strided(b, h, q_idx, kv_idx):
    return ((q_idx - kv_idx) % 4 == 0) | (kv_idx * 2 < h + 3) | (abs(kv_idx - 20) != 1)


def looked_up(b, h, q_idx, kv_idx):
    return torch.arange(64)[kv_idx] < q_idx


@pytest.mark.parametrize("fn", [window_abs, chunked, strided])
def test_arithmetic_the_ranges_follow_is_classified_soundly(fn) -> None:
    assert check_bounds(fn, 40, 37, 8, heads=2)


def test_a_function_indexing_a_tensor_is_left_to_its_cells() -> None:
    assert block_bounds(looked_up, ZERO, ZERO, 0, 8, 32, 8) is None
