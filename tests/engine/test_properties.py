"""Properties over random inputs (hypothesis)."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.bench.reference import BookDotProductAttention
from attnviz.engine import attend

dims = st.integers(min_value=1, max_value=6)


@st.composite
def cases(draw, two_d: bool | None = None):
    b, n, m, d, dv = draw(dims), draw(dims), draw(dims), draw(dims), draw(dims)
    seed = draw(st.integers(0, 2**31 - 1))
    scale = draw(st.sampled_from([0.1, 1.0, 10.0]))
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, n, d, generator=g) * scale
    k = torch.randn(b, m, d, generator=g) * scale
    v = torch.randn(b, m, dv, generator=g)
    use_2d = draw(st.booleans()) if two_d is None else two_d
    vl = torch.randint(0, m + 2, (b, n) if use_2d else (b,), generator=g)
    return q, k, v, vl


@settings(max_examples=60, deadline=None)
@given(
    cases(),
    st.sampled_from(["d2l", "strict", "sdpa"]),
    st.sampled_from(["scaled_dot", "dot", "gaussian", "additive", "bilinear"]),
)
def test_rows_sum_to_one_over_valid_keys_and_zero_on_masked(case, mode, scoring):
    q, k, v, vl = case
    r = attend(q, k, v, vl, mask_mode=mode, scoring=scoring)
    w, mask = r.weights, r.mask
    empty = r.diagnostics.empty_rows
    assert (w[mask.logical_and(~empty.unsqueeze(-1)).logical_not() & ~empty.unsqueeze(-1)] == 0).all()
    sums = (w * mask).sum(-1)
    torch.testing.assert_close(sums[~empty], torch.ones_like(sums[~empty]))
    if mode == "d2l":
        torch.testing.assert_close(w[empty], torch.full_like(w[empty], 1 / k.shape[1]))
    else:
        assert (w[empty] == 0).all()
    assert not torch.isnan(w).any()


@settings(max_examples=60, deadline=None)
@given(cases(), st.integers(0, 2**31 - 1))
def test_strict_output_ignores_padded_keys_and_values(case, seed):
    q, k, v, vl = case
    r = attend(q, k, v, vl, mask_mode="strict")
    # Replace the content of every key/value no query may attend to with garbage.
    unused = ~r.mask.any(1)  # (B, K)
    g = torch.Generator().manual_seed(seed)
    k2, v2 = k.clone(), v.clone()
    k2[unused] = torch.randn(k2[unused].shape, generator=g) * 1e4
    v2[unused] = torch.randn(v2[unused].shape, generator=g) * 1e4
    v2[unused] = v2[unused].nan_to_num() + float("nan")  # even NaN
    r2 = attend(q, k2, v2, vl, mask_mode="strict", allow_nonfinite=True)
    torch.testing.assert_close(r2.output, r.output)
    torch.testing.assert_close(r2.weights, r.weights)


@settings(max_examples=40, deadline=None)
@given(cases())
def test_d2l_mode_equals_the_books_code(case):
    q, k, v, vl = case
    book = BookDotProductAttention(0.0).eval()
    torch.testing.assert_close(attend(q, k, v, vl).output, book(q, k, v, vl), atol=1e-5, rtol=1e-4)


@settings(max_examples=40, deadline=None)
@given(cases())
def test_strict_equals_sdpa_wherever_a_row_has_a_key(case):
    # In float64: with scores in the hundreds (scale 10), float32's rounding alone differs
    # between two correct softmaxes by more than the tolerance (1.7e-5 was found).
    q, k, v, vl = (t.double() if t.is_floating_point() else t for t in case)
    r = attend(q, k, v, vl, mask_mode="strict")
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=r.mask)
    torch.testing.assert_close(r.output, expected, atol=1e-5, rtol=1e-4)
