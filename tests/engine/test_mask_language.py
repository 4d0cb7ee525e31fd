"""One mask language: ``attend`` and ``overview`` bind the same ``Mask`` description and agree
with a dense reference built from each source's definition; score terms change the scores
between scaling and masking; the mask's cost is counted by ``attend``'s own estimate."""

from __future__ import annotations

import math

import pytest
import torch

import attnviz.engine.core as attend_impl
from attnviz.engine import (
    AttentionInputError,
    AttentionMask,
    AttnMask,
    Causal,
    Documents,
    KeyPaddingMask,
    MaskMod,
    MemoryBudgetError,
    ScoreBias,
    SlidingWindow,
    SoftCap,
    ValidLength,
    attend,
    estimate_memory,
    overview,
    tile,
)
from tests.float_tolerance import assert_reordered_close

B, H, H_KV, N, D = 2, 4, 2, 40, 8
WINDOW = 7


def inputs(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, N, D, generator=g, dtype=torch.float64)
    k = torch.randn(B, H_KV, N, D, generator=g, dtype=torch.float64)
    v = torch.randn(B, H_KV, N, 5, generator=g, dtype=torch.float64)
    return q, k, v


def documents() -> torch.Tensor:
    """Batch element 0 packed into runs (ranges), batch element 1 scattered (a predicate)."""
    packed = torch.tensor([0] * 12 + [1] * 20 + [2] * 8)
    scattered = torch.tensor([0, 1] * 20)
    return torch.stack([packed, scattered])


def padding() -> torch.Tensor:
    """Hugging Face's 0/1: right padding for element 0, left padding for element 1 (its first
    queries see only padding through the causal window: empty rows)."""
    pad = torch.ones(B, N, dtype=torch.long)
    pad[0, -6:] = 0
    pad[1, :5] = 0
    return pad


def reference_allowed(ids: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
    """(B, H, Q, K) from the definitions: causal, a causal window, same document, not padding."""
    q, k = torch.arange(N)[:, None], torch.arange(N)[None, :]
    rule = (k <= q) & (q - k < WINDOW)
    allowed = rule[None] & (ids[:, :, None] == ids[:, None, :]) & (pad[:, None, :] == 1)
    return allowed[:, None].expand(B, H, N, N)


def reference_weights(q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor, bias: torch.Tensor | None = None):
    """Softmax over the allowed keys in float64, empty rows zero; keys repeated for GQA."""
    keys = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    s = (q @ keys.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if bias is not None:
        s = s + bias
    masked = s.masked_fill(~allowed, -math.inf)
    empty = ~allowed.any(-1, keepdim=True)
    w = torch.softmax(masked.masked_fill(empty, 0.0), -1).masked_fill(~allowed, 0.0)
    return w.masked_fill(empty, 0.0)


def test_attend_and_overview_bind_one_description_and_agree_with_a_dense_reference():
    q, k, v = inputs()
    ids, pad = documents(), padding()
    mask = Causal() & SlidingWindow(WINDOW) & Documents(ids) & AttentionMask(pad)
    allowed = reference_allowed(ids, pad)
    expected = reference_weights(q, k, allowed)
    assert (~allowed.any(-1)).any() and allowed.any()  # empty rows and attended ones

    r = attend(q, k, v, mask=mask, mask_mode="strict", enable_gqa=True)
    torch.testing.assert_close(r.mask, allowed)
    torch.testing.assert_close(r.weights, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(r.diagnostics.empty_rows, ~allowed.any(-1))

    for b in range(B):
        for h in range(H):
            ov = overview(q, k, batch=b, head=h, mask=mask, bins=(N, N))  # one cell per bin
            torch.testing.assert_close(ov.masked_share, (~allowed[b, h]).double())
            torch.testing.assert_close(ov.mean, expected[b, h], rtol=0, atol=1e-12)
            torch.testing.assert_close(ov.stats.empty_rows, ~allowed[b, h].any(-1))
            t = tile(q, k, ov)
            torch.testing.assert_close(t.allowed, allowed[b, h])
            torch.testing.assert_close(t.weights, expected[b, h], rtol=0, atol=1e-12)


def test_blocks_of_rows_and_heads_give_what_one_block_gives(monkeypatch):
    """The rules are evaluated per batch element and head in attend's blocks: elements several
    at a time, then rows of one element at a time."""
    q, k, v = inputs(1)
    mask = Causal() & SlidingWindow(WINDOW) & Documents(documents()) & AttentionMask(padding())
    mask = mask & MaskMod(lambda b, h, qi, ki: (qi + ki + h) % 5 != 0)
    whole = attend(q, k, v, mask=mask, enable_gqa=True)
    for elements in (3 * N * N, 7 * N):  # three elements per block; seven rows per block
        monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", elements)
        blocked = attend(q, k, v, mask=mask, enable_gqa=True)
        assert torch.equal(blocked.mask, whole.mask)  # booleans: the rules, exactly
        # Blocks are other matmul shapes: the same sums in another order, not bit for bit.
        for name in ("masked_scores", "weights", "output"):
            assert_reordered_close(getattr(blocked, name), getattr(whole, name), name)


def test_the_keyword_forms_build_the_description_mask_is():
    q, k, v = inputs(2)
    q, k, v = q[:, :2], k, v  # two query heads, two key heads
    g = torch.Generator().manual_seed(3)
    lens = torch.tensor([30, 12])
    bias = torch.randn(B, 1, N, N, generator=g, dtype=torch.float64).masked_fill(
        torch.rand(N, N, generator=g) < 0.2, -1e9
    )
    ignore = torch.zeros(B, N, dtype=torch.bool)
    ignore[1, -3:] = True
    for mode in ("d2l", "sdpa", "float01"):
        keywords = attend(q, k, v, lens, causal="bottom_right", attn_mask=bias, key_padding_mask=ignore, mask_mode=mode)
        described = attend(
            q,
            k,
            v,
            mask=AttnMask(bias) & KeyPaddingMask(ignore) & ValidLength(lens) & Causal("bottom_right"),
            mask_mode=mode,
        )
        # One mask built two ways, then the same scores, softmax and product on the same shapes:
        # the same kernels, so the same bits on any machine.
        for name in ("mask", "masked_scores", "weights", "output"):
            assert torch.equal(getattr(keywords, name), getattr(described, name)), (mode, name)
        assert keywords.diagnostics.warnings == described.diagnostics.warnings


def test_an_additive_mask_is_added_in_the_overview_as_in_attend():
    """A float attn_mask (a position bias, -inf above the diagonal) is added to the scores by the
    overview and its tiles exactly as attend adds it."""
    q, k, v = inputs(4)
    qi, ki = torch.arange(N)[:, None], torch.arange(N)[None, :]
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625], dtype=torch.float64)[None, :, None, None]
    alibi = (-(qi - ki).abs() * slopes).masked_fill(ki > qi, -math.inf).expand(B, H, N, N)
    r = attend(q, k, v, attn_mask=alibi, mask_mode="strict", enable_gqa=True)
    expected = reference_weights(q, k, (ki <= qi).expand(B, H, N, N), alibi.masked_fill(ki > qi, 0.0))
    torch.testing.assert_close(r.weights, expected, rtol=0, atol=1e-12)
    for b, h in ((0, 0), (1, 3)):
        ov = overview(q, k, batch=b, head=h, mask=AttnMask(alibi), bins=(N, N))
        torch.testing.assert_close(ov.mean, expected[b, h], rtol=0, atol=1e-12)
        torch.testing.assert_close(tile(q, k, ov, slice(3, 30), slice(1, 20)).weights, expected[b, h, 3:30, 1:20])


def test_attend_needs_a_row_per_batch_element_where_the_overview_picks_its_own():
    q, k, v = inputs()
    three = torch.zeros(3, N, dtype=torch.long)
    with pytest.raises(AttentionInputError, match="documents has 3 batch elements for a batch of 2") as info:
        attend(q, k, v, mask=Documents(three), enable_gqa=True)
    assert info.value.field == "mask"
    ov = overview(q[0, 0], k[0, 0], mask=Documents(three), bins=(N, N))  # one matrix: row 0 of the ids
    assert ov.masked_share.sum() == 0
    with pytest.raises(AttentionInputError, match="Mask descriptions only"):
        attend(q, k, v, mask="causal", enable_gqa=True)


def test_the_estimate_counts_what_the_mask_keeps_and_no_dense_copy_of_a_rule():
    q, k, v = (t[:1, 0] for t in inputs())  # (1, N, d)
    base = estimate_memory(q.shape, k.shape, v.shape, dtype=torch.float64, masked=True).total
    # A window is a rule: bound without any (Q, K) tensor, so the plain estimate is its cost.
    attend(q, k, v, mask=SlidingWindow(WINDOW, causal=True), memory_budget=base)
    # A float attn_mask is kept converted to the compute dtype, and counted.
    bias = torch.zeros(1, N, N, dtype=torch.float32)
    with pytest.raises(MemoryBudgetError):
        attend(q, k, v, mask=AttnMask(bias), memory_budget=base + N * N * 8 - 1)
    attend(q, k, v, mask=AttnMask(bias), memory_budget=base + N * N * 8)


# --------------------------------------------------------------------------- score terms


def test_a_score_bias_and_soft_capping_apply_between_scaling_and_masking(monkeypatch):
    q, k, v = inputs(5)
    g = torch.Generator().manual_seed(6)
    bias = 3 * torch.randn(H, N, N, generator=g, dtype=torch.float64)  # per head, shared by the batch
    cap = 2.5
    causal = torch.ones(N, N, dtype=torch.bool).tril().expand(B, H, N, N)
    keys = k.repeat_interleave(H // H_KV, dim=1)
    scores = (q @ keys.transpose(-1, -2)) / math.sqrt(D)
    capped = torch.tanh((scores + bias) / cap) * cap
    expected = torch.softmax(capped.masked_fill(~causal, -math.inf), -1)

    terms = [ScoreBias(bias), SoftCap(cap)]
    r = attend(q, k, v, mask=Causal(), score_terms=terms, mask_mode="strict", enable_gqa=True)
    torch.testing.assert_close(r.weights, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(r.scores, scores, rtol=0, atol=1e-12)  # the scaled scores, before the terms
    torch.testing.assert_close(r.masked_scores[causal], capped[causal], rtol=0, atol=1e-12)
    assert (r.masked_scores.abs()[causal] < cap).all()
    # Without a mask the softmax still sees the terms.
    plain = attend(q, k, v, score_terms=terms, enable_gqa=True)
    torch.testing.assert_close(plain.weights, torch.softmax(capped, -1), rtol=0, atol=1e-12)
    torch.testing.assert_close(plain.masked_scores, capped, rtol=0, atol=1e-12)
    # Blocks of rows take their own part of the bias.
    monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", 6 * N)
    blocked = attend(q, k, v, mask=Causal(), score_terms=terms, mask_mode="strict", enable_gqa=True)
    assert_reordered_close(blocked.weights, r.weights)  # other matmul shapes: not bit for bit
    # With 1-D valid lengths (the book's fill in place) the terms apply too.
    lens = torch.tensor([10, 33])
    book = attend(q, k, v, lens, score_terms=SoftCap(cap), enable_gqa=True)
    filled = (torch.tanh(scores / cap) * cap).masked_fill(torch.arange(N) >= lens[:, None, None, None], -1e6)
    torch.testing.assert_close(book.weights, torch.softmax(filled, -1), rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("terms", "words"),
    [
        (lambda: [ScoreBias(torch.tensor([[float("nan")]]))], "not finite"),
        (lambda: [ScoreBias(torch.full((N, N), -math.inf))], "never masks"),
        (lambda: [ScoreBias(torch.zeros(3, N, N))], "does not broadcast"),
        (lambda: [SoftCap(0.0)], "soft cap must be a finite number > 0"),
        (lambda: "tanh", "score_terms must be ScoreTerm descriptions"),
    ],
)
def test_bad_score_terms_are_named(terms, words):
    q, k, v = inputs()
    with pytest.raises(AttentionInputError, match=words) as info:
        attend(q, k, v, score_terms=terms(), enable_gqa=True)
    assert info.value.field == "score_terms"


@pytest.mark.parametrize(
    ("mask", "words"),
    [
        (lambda: Documents("abc"), "documents must be a numeric tensor or array; got str"),
        (lambda: ValidLength("abc"), "valid_lens must hold whole numbers; got str"),
        (lambda: AttnMask(object()), "attn_mask must be a numeric tensor or array; got object"),
    ],
)
def test_a_description_of_something_that_is_not_a_tensor_is_named(mask, words):
    q, k, v = inputs()
    for run in (lambda: attend(q, k, v, mask=mask(), enable_gqa=True), lambda: overview(q, k, mask=mask())):
        with pytest.raises(AttentionInputError, match=words):
            run()
