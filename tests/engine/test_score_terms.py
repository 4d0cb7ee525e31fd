"""Score terms beyond a bias and a cap: ALiBi's slopes, a FlexAttention score_mod evaluated
densely, attention sinks in the softmax; and the ``modified_scores`` stage they fill. Each
against a dense reference written out here, in blocks of rows as in one block."""

from __future__ import annotations

import math

import pytest
import torch

import attnviz.engine.core as attend_impl
from attnviz.engine import (
    STAGES,
    Alibi,
    AttentionInputError,
    Causal,
    ScoreBias,
    ScoreMod,
    Sinks,
    SoftCap,
    alibi_slopes,
    attend,
    estimate_memory,
)
from tests.float_tolerance import assert_reordered_close

B, H, N, D = 2, 4, 24, 8


def inputs(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, N, D, generator=g, dtype=torch.float64) for _ in range(3))  # type: ignore[return-value]


def scaled(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ k.transpose(-1, -2) / math.sqrt(D)


def test_the_modified_scores_stage_sits_between_the_scores_and_the_mask():
    assert STAGES.index("scores") < STAGES.index("modified_scores") < STAGES.index("mask")
    q, k, v = inputs()
    plain = attend(q, k, v)
    assert plain.modified_scores is plain.scores  # no term: the same tensor, nothing kept twice
    bias = torch.randn(N, N, dtype=torch.float64)
    r = attend(q, k, v, score_terms=ScoreBias(bias))
    torch.testing.assert_close(r.modified_scores, scaled(q, k) + bias, rtol=0, atol=1e-12)
    torch.testing.assert_close(r.scores, scaled(q, k), rtol=0, atol=1e-12)
    with_terms = estimate_memory(q.shape, k.shape, v.shape, dtype=q.dtype, modified=True)
    without = estimate_memory(q.shape, k.shape, v.shape, dtype=q.dtype)
    assert with_terms.stages["modified_scores"] == B * H * N * N * 8 and "modified_scores" not in without.stages


def test_alibi_adds_slope_times_distance_per_head(monkeypatch):
    q, k, v = inputs(1)
    slopes = alibi_slopes(H)
    assert torch.allclose(slopes, torch.tensor([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8], dtype=torch.float64))
    distance = (torch.arange(N)[None, :] - torch.arange(N)[:, None]).double()
    bias = slopes[:, None, None] * distance
    causal = torch.ones(N, N, dtype=torch.bool).tril()
    expected = torch.softmax((scaled(q, k) + bias).masked_fill(~causal, -math.inf), -1)
    r = attend(q, k, v, mask=Causal(), score_terms=Alibi(slopes), mask_mode="strict")
    torch.testing.assert_close(r.weights, expected, rtol=0, atol=1e-12)
    monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", 5 * N)
    blocked = attend(q, k, v, mask=Causal(), score_terms=Alibi(slopes), mask_mode="strict")
    # Blocks of rows are other matmul shapes: the same sums in another order, not bit for bit.
    assert_reordered_close(blocked.weights, r.weights)
    # BLOOM adds slope x key position: a constant per row, the same weights.
    bloom = attend(q, k, v, mask=Causal(), score_terms=ScoreBias(slopes[:, None, None] * torch.arange(N).double()))
    torch.testing.assert_close(bloom.weights, r.weights, rtol=0, atol=1e-12)
    assert torch.allclose(alibi_slopes(6)[:4], alibi_slopes(4)) and alibi_slopes(6).shape == (6,)


def test_a_score_mod_is_evaluated_as_flex_attention_evaluates_it(monkeypatch):
    q, k, v = inputs(2)
    table = torch.randn(B, H, N, N, dtype=torch.float64)
    lens = torch.tensor([N, 15])

    def score_mod(score, b, h, q_idx, kv_idx):
        # Chained indexing of a captured tensor, as Hugging Face's flex path writes it.
        return torch.tanh(score / 5.0) * 5.0 + table[b][h][q_idx][kv_idx] + 0.01 * (q_idx - kv_idx).to(score.dtype)

    ref = torch.tanh(scaled(q, k) / 5.0) * 5.0 + table
    ref = ref + 0.01 * (torch.arange(N)[:, None] - torch.arange(N)[None, :]).double()
    keep = torch.arange(N)[None, :] < lens[:, None]
    expected = torch.softmax(ref.masked_fill(~keep[:, None, None, :], -math.inf), -1)
    r = attend(q, k, v, valid_lens=lens, score_terms=ScoreMod(score_mod), mask_mode="neg_inf")
    torch.testing.assert_close(r.weights, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(r.modified_scores, ref, rtol=0, atol=1e-12)
    monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", 7 * N)
    blocked = attend(q, k, v, valid_lens=lens, score_terms=ScoreMod(score_mod), mask_mode="neg_inf")
    assert_reordered_close(blocked.weights, r.weights)  # blocks are other matmul shapes


def test_sinks_take_part_in_the_softmax_and_leave_rows_below_one():
    q, k, v = inputs(3)
    sinks = torch.tensor([0.5, -1.0, 2.0, 0.0], dtype=torch.float64)
    logits = scaled(q, k)
    combined = torch.cat([logits, sinks[None, :, None, None].expand(B, H, N, 1)], -1)
    expected = torch.softmax(combined, -1)[..., :N]
    r = attend(q, k, v, score_terms=[SoftCap(30.0), Sinks(sinks)])
    capped = torch.cat([torch.tanh(logits / 30) * 30, sinks[None, :, None, None].expand(B, H, N, 1)], -1)
    torch.testing.assert_close(r.weights, torch.softmax(capped, -1)[..., :N], rtol=0, atol=1e-12)
    plain = attend(q, k, v, score_terms=Sinks(sinks))
    torch.testing.assert_close(plain.weights, expected, rtol=0, atol=1e-12)
    assert bool((plain.weights.sum(-1) < 1).all())
    torch.testing.assert_close(plain.output, expected @ v, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("terms", "words"),
    [
        (lambda: Alibi(torch.ones(3)), "one finite slope per head"),
        (lambda: Sinks([1.0, float("nan"), 0, 0]), "one finite sink logit per head"),
        (lambda: ScoreMod("tanh"), "score_mod must be a function"),
        (lambda: ScoreMod(lambda s, b, h, q, kv: s[0]), "score_mod"),
        (lambda: ScoreMod(lambda s, b, h, q, kv: 1 / 0), "score_mod failed: ZeroDivisionError"),
    ],
)
def test_bad_terms_are_named(terms, words):
    q, k, v = inputs()
    with pytest.raises(AttentionInputError, match=words) as info:
        attend(q, k, v, score_terms=terms())
    assert info.value.field == "score_terms"
