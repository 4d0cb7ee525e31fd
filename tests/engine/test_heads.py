"""attend() with leading dimensions (heads, layers), grouped-query attention and SDPA's scale."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attnviz.engine.core as attend_impl
from attnviz.engine import STAGES, AttentionInputError, attend
from tests.float_tolerance import assert_reordered_close


def heads(b=2, h=3, n=5, m=7, d=4, dv=6, h_kv=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(b, h, n, d, generator=g),
        torch.randn(b, h_kv or h, m, d, generator=g),
        torch.randn(b, h_kv or h, m, dv, generator=g),
    )


def test_every_stage_and_diagnostic_takes_the_leading_dimensions():
    q, k, v = heads()
    vl = torch.tensor([3, 7])
    r = attend(q, k, v, vl, causal="bottom_right")
    for name in ("raw_scores", "scores", "mask", "masked_scores", "weights", "applied_weights"):
        assert getattr(r, name).shape == (2, 3, 5, 7), name
    assert r.output.shape == (2, 3, 5, 6)
    d = r.diagnostics
    for name in ("empty_rows", "nan_rows", "row_sums", "entropy", "max_weight"):
        assert getattr(d, name).shape == (2, 3, 5), name
    assert r.applied_weights is r.weights  # still shared, not copied
    # Each head is the 3-D computation of that head, valid lengths shared by the heads: the
    # masks exactly; the numbers up to the order of the sums (a batch of 6 matrices against one
    # of 2 may take other kernels: not bit for bit).
    for h in range(3):
        one = attend(q[:, h], k[:, h], v[:, h], vl, causal="bottom_right")
        for name in STAGES:
            assert_reordered_close(getattr(r, name)[:, h], getattr(one, name), name)
        assert_reordered_close(d.entropy[:, h], one.diagnostics.entropy)


def test_five_leading_dimensions_layers_batch_heads():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 2, 4, 8, generator=g) for _ in range(3))
    r = attend(q, k, v, mask_mode="sdpa", causal=True)
    torch.testing.assert_close(r.output, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert r.weights.shape == (2, 3, 2, 4, 4)


def test_three_d_results_keep_their_shape_and_values():
    g = torch.Generator().manual_seed(2)
    q, k, v = torch.randn(2, 5, 4, generator=g), torch.randn(2, 7, 4, generator=g), torch.randn(2, 7, 3, generator=g)
    r = attend(q, k, v, torch.tensor([3, 7]))
    assert r.weights.shape == (2, 5, 7) and r.diagnostics.row_sums.shape == (2, 5)
    torch.testing.assert_close(r.weights, torch.softmax(r.masked_scores, -1))


@pytest.mark.parametrize("mode", ["d2l", "sdpa"])
def test_blocked_heads_equal_one_block(monkeypatch, mode):
    q, k, v = heads(b=2, h=3, n=9, m=11)
    vl = torch.tensor([[1, 2, 3, 4, 0, 6, 7, 8, 11], [11, 10, 9, 8, 7, 6, 5, 4, 3]])
    am = torch.rand(2, 1, 9, 11, generator=torch.Generator().manual_seed(3)) > 0.3
    bias = torch.randn(3, 9, 11, generator=torch.Generator().manual_seed(4))
    kwargs = dict(mask_mode=mode, attn_mask=am, key_padding_mask=bias[1, :2].clamp(max=0))
    whole = attend(q, k, v, vl, **kwargs)
    for elements in (11 * 4, 11 * 9 * 2, 11 * 20):  # rows of one head; two heads; uneven groups
        monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", elements)
        blocked = attend(q, k, v, vl, **kwargs)
        for name in STAGES:
            torch.testing.assert_close(getattr(blocked, name), getattr(whole, name), equal_nan=True, msg=name)
        for name in ("row_sums", "entropy", "empty_rows", "fill_only_rows"):
            torch.testing.assert_close(
                getattr(blocked.diagnostics, name), getattr(whole.diagnostics, name), equal_nan=True, msg=name
            )
        assert math.isclose(blocked.diagnostics.logit_variance, whole.diagnostics.logit_variance, rel_tol=1e-5)


def test_prefix_lengths_are_shared_by_the_heads_of_each_batch_element(monkeypatch):
    q, k, v = heads(b=3, h=2, n=6, m=8)
    vl = torch.tensor([0, 3, 8])
    whole = attend(q, k, v, vl)
    monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", 8 * 4)
    blocked = attend(q, k, v, vl)
    for name in STAGES:
        torch.testing.assert_close(getattr(blocked, name), getattr(whole, name), msg=name)
    assert whole.diagnostics.empty_rows[0].all() and not whole.diagnostics.empty_rows[1:].any()
    assert (whole.weights[1, :, :, 3:] == 0).all() and not whole.mask[1, :, :, 3:].any()


def test_grouped_query_attention_matches_sdpa_enable_gqa():
    q, _, _ = heads(h=6, seed=5)
    _, k, v = heads(h=6, h_kv=2, seed=6)
    r = attend(q, k, v, enable_gqa=True, mask_mode="sdpa", causal=True)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    torch.testing.assert_close(r.output, expected)
    # repeat_interleave: query heads 0-2 share key/value head 0, heads 3-5 head 1.
    torch.testing.assert_close(r.weights[:, 2], attend(q[:, 2], k[:, 0], v[:, 0], causal=True).weights)
    torch.testing.assert_close(r.weights[:, 3], attend(q[:, 3], k[:, 1], v[:, 1], causal=True).weights)
    assert r.weights.shape == (2, 6, 5, 7)


def test_grouped_query_attention_refusals_name_the_heads():
    q, _, _ = heads(h=6)
    _, k, v = heads(h=4, h_kv=4)
    with pytest.raises(AttentionInputError, match="6 query heads, 4 key/value heads"):
        attend(q, k, v, enable_gqa=True)
    _, k2, v2 = heads(h=2, h_kv=2)
    with pytest.raises(AttentionInputError, match="pass enable_gqa=True"):
        attend(q, k2, v2)
    with pytest.raises(AttentionInputError, match="enable_gqa must be True or False"):
        attend(q, k2, v2, enable_gqa="yes")
    with pytest.raises(AttentionInputError, match="queries and keys must have the same leading dimensions"):
        attend(torch.randn(2, 3, 6, 5, 4), torch.randn(2, 2, 6, 7, 4), torch.randn(2, 2, 6, 7, 1), enable_gqa=True)


def test_scale_multiplies_dot_products_as_sdpa():
    q, k, v = heads()
    r = attend(q, k, v, scale=0.25, mask_mode="sdpa")
    torch.testing.assert_close(r.output, F.scaled_dot_product_attention(q, k, v, scale=0.25))
    torch.testing.assert_close(r.scores, r.raw_scores * 0.25)
    assert r.scale == 4.0  # the divisor the scores were brought down by
    dot = attend(q, k, v, scoring="dot", scale=1.5)
    torch.testing.assert_close(dot.scores, q @ k.transpose(-1, -2) * 1.5)
    assert dot.raw_scores is not dot.scores
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, "0.5"):
        with pytest.raises(AttentionInputError, match="scale must be a finite number > 0") as info:
            attend(q, k, v, scale=bad)
        assert info.value.field == "scale"
    with pytest.raises(AttentionInputError, match="'additive' scoring has no scale"):
        attend(q, k, v, scoring="additive", scale=0.5)


def test_mismatched_leading_dimensions_are_named():
    q, k, v = heads()
    with pytest.raises(AttentionInputError, match=r"as many dimensions; got shapes \(2, 3, 5, 4\), \(2, 7, 4\)"):
        attend(q, k[:, 0], v[:, 0])
    with pytest.raises(AttentionInputError, match="keys and values must have the same leading dimensions"):
        attend(q, k, v[:, :2])
