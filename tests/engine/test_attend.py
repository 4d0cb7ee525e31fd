"""attend(): stages, scoring functions, mask sources and modes, dtypes, diagnostics."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attnviz.engine.core as attend_impl
from attnviz.bench.reference import BookAdditiveAttention, BookDotProductAttention
from attnviz.engine import (
    MASK_MODES,
    SCORINGS,
    STAGES,
    AttentionInputError,
    attend,
)


def inputs(b=2, n=5, m=7, d=4, dv=3, seed=0, dk=None):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(b, n, d, generator=g),
        torch.randn(b, m, dk or d, generator=g),
        torch.randn(b, m, dv, generator=g),
    )


def test_stages_chain_together():
    q, k, v = inputs()
    r = attend(q, k, v, torch.tensor([3, 7]))
    torch.testing.assert_close(r.raw_scores, torch.bmm(q, k.transpose(1, 2)))
    torch.testing.assert_close(r.scores, r.raw_scores / 2.0)
    assert r.mask.dtype == torch.bool and r.mask[0, :, :3].all() and not r.mask[0, :, 3:].any()
    assert (r.masked_scores[0, :, 3:] == -1e6).all()
    torch.testing.assert_close(r.weights, torch.softmax(r.masked_scores, -1))
    assert r.applied_weights is r.weights
    torch.testing.assert_close(r.output, r.weights @ v)
    assert r.scale == 2.0 and r.dtype == "float32" and r.device == "cpu"


def test_matches_book_dot_product_and_additive_in_eval():
    q, k, v = inputs(n=6, m=9)
    vl = torch.tensor([[1, 2, 3, 4, 9, 12], [0, 5, 5, 5, 5, 5]])
    book = BookDotProductAttention(0.5).eval()
    expected = book(q, k, v, vl)
    r = attend(q, k, v, vl)
    torch.testing.assert_close(r.output, expected)
    torch.testing.assert_close(r.weights, book.attention_weights)

    q2 = torch.randn(2, 6, 11)
    add = BookAdditiveAttention(4, 11, 8, 0.1).eval()
    params = {"W_q": add.W_q.weight.detach(), "W_k": add.W_k.weight.detach(), "w_v": add.w_v.weight.detach()}
    r = attend(q2, k, v, vl, scoring="additive", params=params, num_hiddens=8)
    torch.testing.assert_close(r.output, add(q2, k, v, vl).detach())


def test_blocked_computation_equals_single_block(monkeypatch):
    q, k, v = inputs(b=3, n=41, m=13)
    vl = torch.randint(0, 14, (3, 41), generator=torch.Generator().manual_seed(1))
    for scoring in SCORINGS:
        kk = k if SCORINGS[scoring].same_dim else torch.randn(3, 13, 6)
        whole = attend(q, kk, v, vl, scoring=scoring, causal="bottom_right")
        monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", 3 * 13 * 5)  # five rows per block
        blocked = attend(q, kk, v, vl, scoring=scoring, causal="bottom_right")
        monkeypatch.undo()
        for name in STAGES:
            torch.testing.assert_close(getattr(blocked, name), getattr(whole, name), msg=f"{scoring} {name}")
        torch.testing.assert_close(blocked.diagnostics.entropy, whole.diagnostics.entropy)
        assert math.isclose(blocked.diagnostics.logit_variance, whole.diagnostics.logit_variance, rel_tol=1e-6)


def test_each_scoring_function_computes_its_formula():
    q, k, v = inputs(b=1, n=3, m=4, d=5)
    r = attend(q, k, v, scoring="dot")
    torch.testing.assert_close(r.scores, q @ k.transpose(1, 2))
    assert r.raw_scores is r.scores and r.scale is None
    r = attend(q, k, v, scoring="gaussian")
    torch.testing.assert_close(r.scores, -0.5 * torch.cdist(q, k) ** 2, atol=1e-5, rtol=1e-5)
    r = attend(q, k, v, scoring="summation")
    torch.testing.assert_close(r.scores, q.sum(-1, keepdim=True) + k.sum(-1)[:, None, :])
    k7 = torch.randn(1, 4, 7)
    r = attend(q, k7, v, scoring="bilinear", seed=5)
    W = r.params["W"]
    assert W.shape == (5, 7)
    torch.testing.assert_close(r.scores, q @ W @ k7.transpose(1, 2))
    r = attend(q, k7, v, scoring="additive", num_hiddens=6, seed=5)
    p = r.params
    feats = torch.tanh((q @ p["W_q"].T).unsqueeze(2) + (k7 @ p["W_k"].T).unsqueeze(1))
    torch.testing.assert_close(r.scores, (feats @ p["w_v"].T).squeeze(-1))


def test_learnable_parameters_are_seeded_and_replaceable():
    q, k, v = inputs(dk=3)
    a = attend(q, k, v, scoring="additive", seed=1)
    b = attend(q, k, v, scoring="additive", seed=1)
    c = attend(q, k, v, scoring="additive", seed=2)
    assert torch.equal(a.weights, b.weights) and not torch.equal(a.weights, c.weights)
    replaced = {name: torch.zeros_like(t) for name, t in a.params.items()}
    r = attend(q, k, v, scoring="additive", params=replaced)
    torch.testing.assert_close(r.weights, torch.full_like(r.weights, 1 / 7))
    with pytest.raises(AttentionInputError, match=r"'W_q' must have shape \(8, 4\)"):
        attend(q, k, v, scoring="additive", params={**replaced, "W_q": torch.zeros(8, 5)})


def test_exercise_one_changed_keys_make_additive_and_dot_disagree():
    q, k, v = inputs(b=1, n=2, m=10, d=2)
    same_keys = torch.ones_like(k)
    add = attend(q, same_keys, v, scoring="additive")
    dot = attend(q, same_keys, v, scoring="scaled_dot")
    torch.testing.assert_close(add.weights, dot.weights)  # identical keys: both uniform
    add = attend(q, k, v, scoring="additive")
    dot = attend(q, k, v, scoring="scaled_dot")
    assert (add.weights - dot.weights).abs().max() > 1e-2


# ----------------------------------------------------------------- masks: sources and modes


def test_causal_alignments_differ_when_queries_and_keys_differ():
    q, k, v = inputs(b=1, n=3, m=5)
    tl = attend(q, k, v, causal="top_left").mask[0]
    br = attend(q, k, v, causal="bottom_right").mask[0]
    assert tl.tolist() == [[j <= i for j in range(5)] for i in range(3)]
    assert br.tolist() == [[j <= i + 2 for j in range(5)] for i in range(3)]
    assert torch.equal(attend(q, k, v, causal=True).mask, attend(q, k, v, causal="top_left").mask)


def test_top_left_causal_equals_sdpa_is_causal():
    q, k, v = inputs(b=2, n=6, m=6)
    r = attend(q, k, v, causal=True, mask_mode="sdpa")
    torch.testing.assert_close(r.output, F.scaled_dot_product_attention(q, k, v, is_causal=True))


def test_mask_sources_combine():
    q, k, v = inputs(b=2, n=3, m=5)
    kpm = torch.tensor([[False, False, False, False, True], [True, False, False, False, False]])
    am = torch.ones(3, 5, dtype=torch.bool)
    am[1, 1] = False
    r = attend(q, k, v, torch.tensor([4, 5]), attn_mask=am, key_padding_mask=kpm, causal="bottom_right")
    expected = torch.ones(2, 3, 5, dtype=torch.bool)
    expected[0, :, 4:] = False
    expected[:, :, :] &= torch.tensor([[j <= i + 2 for j in range(5)] for i in range(3)])
    expected[:, 1, 1] = False
    expected &= ~kpm[:, None, :]
    assert torch.equal(r.mask, expected)
    w = r.weights
    assert (w[~expected] == 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3))


def test_key_padding_mask_equals_the_same_valid_lengths():
    q, k, v = inputs()
    kpm = torch.arange(7)[None, :] >= torch.tensor([[3], [6]])
    a = attend(q, k, v, key_padding_mask=kpm, mask_mode="strict")
    b = attend(q, k, v, torch.tensor([3, 6]), mask_mode="strict")
    torch.testing.assert_close(a.weights, b.weights)


@pytest.mark.parametrize("causal", [None, True])
def test_strict_and_sdpa_modes_equal_pytorch_sdpa(causal):
    q, k, v = inputs(b=2, n=6, m=6)
    vl = torch.tensor([[2, 3, 6, 6, 1, 4], [6, 5, 4, 3, 2, 1]])
    allowed = attend(q, k, v, vl, causal=causal).mask
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    for mode in ("strict", "sdpa"):
        torch.testing.assert_close(attend(q, k, v, vl, causal=causal, mask_mode=mode).output, expected)


def test_modes_on_a_row_with_no_valid_key():
    q, k, v = inputs(b=2, n=2, m=4)
    vl = torch.tensor([0, 2])
    d2l = attend(q, k, v, vl)
    torch.testing.assert_close(d2l.weights[0], torch.full((2, 4), 0.25))  # uniform over padding
    strict = attend(q, k, v, vl, mask_mode="strict")
    assert (strict.weights[0] == 0).all() and (strict.output[0] == 0).all()
    assert strict.diagnostics.empty_rows[0].all() and not strict.diagnostics.empty_rows[1].any()
    neg_inf = attend(q, k, v, vl, mask_mode="neg_inf")
    assert torch.isnan(neg_inf.weights[0]).all() and neg_inf.diagnostics.nan_rows[0].all()
    sdpa = attend(q, k, v, vl, mask_mode="sdpa")
    torch.testing.assert_close(sdpa.output, F.scaled_dot_product_attention(q, k, v, attn_mask=d2l.mask))
    for r in (strict, d2l, sdpa):
        assert not torch.isnan(r.output).any()
    assert any("uniform weights" in w for w in d2l.diagnostics.warnings)


def test_float01_mask_masks_nothing_and_inverted_attends_padding():
    q, k, v = inputs(b=1, n=2, m=4)
    vl = torch.tensor([2])
    wrong = attend(q, k, v, vl, mask_mode="float01")
    assert (wrong.weights[0, :, 2:] > 0).all()
    torch.testing.assert_close(wrong.masked_scores, wrong.scores + wrong.mask.float())
    inverted = attend(q, k, v, vl, mask_mode="inverted")
    assert (inverted.weights[0, :, :2] == 0).all() and (inverted.weights[0, :, 2:] > 0).all()
    assert any("nothing is masked" in w for w in wrong.diagnostics.warnings)


def test_scores_below_the_fill_are_reported():
    q = torch.full((1, 1, 1), 2000.0)
    k = torch.tensor([[[-1000.0], [-1000.0], [5.0]]])
    v = torch.randn(1, 3, 2)
    r = attend(q, k, v, torch.tensor([2]), scoring="dot")
    assert r.weights[0, 0, 2] > 0.99  # the padded key wins: -1e6 is not small enough
    assert any("below the -1e6 fill" in w for w in r.diagnostics.warnings)


def test_nan_in_a_padded_value_leaks_in_book_mode_but_not_strict():
    q, k, v = inputs(b=1, n=2, m=4)
    v = v.clone()
    v[0, 3, 0] = float("nan")
    with pytest.raises(AttentionInputError, match=r"values contains NaN at index \(0, 3, 0\)"):
        attend(q, k, v, torch.tensor([2]))
    book = attend(q, k, v, torch.tensor([2]), allow_nonfinite=True)
    assert torch.isnan(book.output[0, :, 0]).all()
    strict = attend(q, k, v, torch.tensor([2]), mask_mode="strict", allow_nonfinite=True)
    assert not torch.isnan(strict.output).any()


# ----------------------------------------------------------------- dtypes, devices, dropout


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_dtypes(dtype):
    q, k, v = inputs()
    r = attend(q, k, v, torch.tensor([3, 7]), dtype=dtype)
    assert r.dtype == dtype and r.weights.dtype == getattr(torch, dtype)
    ref = attend(q.double(), k.double(), v.double(), torch.tensor([3, 7]))
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 5e-3, "bfloat16": 3e-2}[dtype]
    torch.testing.assert_close(r.weights.double(), ref.weights, atol=tol, rtol=0)


def test_float16_fill_overflow_is_reported_not_hidden():
    q, k, v = inputs()
    r = attend(q, k, v, torch.tensor([0, 7]), dtype="float16")
    assert torch.isinf(r.masked_scores[0]).all()
    assert torch.isnan(r.weights[0]).all()
    d = r.diagnostics
    assert d.nan_rows[0].all() and d.nan_weights == 5 * 7
    assert any("overflows to -inf" in w for w in d.warnings)
    bf = attend(q, k, v, torch.tensor([0, 7]), dtype="bfloat16")
    assert not torch.isnan(bf.weights).any()  # -1e6 fits in bfloat16


def test_float16_score_overflow_is_reported():
    q = torch.full((1, 1, 4), 200.0)
    k = torch.full((1, 3, 4), 200.0)
    r = attend(q, k, torch.randn(1, 3, 2), scoring="dot", dtype="float16")
    assert r.diagnostics.inf_scores == 3
    assert any("overflowed to Inf" in w for w in r.diagnostics.warnings)


def test_dropout_is_reproducible_and_only_in_training():
    q, k, v = inputs(n=50, m=40)
    a = attend(q, k, v, dropout=0.5, train=True, dropout_seed=3)
    b = attend(q, k, v, dropout=0.5, train=True, dropout_seed=3)
    c = attend(q, k, v, dropout=0.5, train=True, dropout_seed=4)
    assert torch.equal(a.applied_weights, b.applied_weights)
    assert not torch.equal(a.applied_weights, c.applied_weights)
    dropped = a.applied_weights == 0
    assert 0.4 < dropped.float().mean() < 0.6
    torch.testing.assert_close(a.applied_weights[~dropped], a.weights[~dropped] * 2)
    torch.testing.assert_close(a.output, a.applied_weights @ v)
    e = attend(q, k, v, dropout=0.5, train=False)
    assert e.applied_weights is e.weights


def test_keep_limits_the_stages():
    q, k, v = inputs()
    r = attend(q, k, v, torch.tensor([1, 2]), keep=("mask",))
    assert r.raw_scores is None and r.scores is None and r.masked_scores is None
    assert r.mask is not None and r.weights is not None and r.output is not None
    with pytest.raises(KeyError, match="not kept"):
        r.stage("scores")
    with pytest.raises(AttentionInputError, match="unknown stage"):
        attend(q, k, v, keep=("sores",))


def test_missing_device_is_named():
    from attnviz.engine import DeviceError

    q, k, v = inputs()
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(DeviceError, match="device 'cuda' is not available: this machine has no CUDA device"):
        attend(q, k, v, device="cuda")
    r = attend(q, k, v, device="auto")
    assert r.device in ("cpu", "mps")


def test_out_of_memory_is_named(monkeypatch):
    import attnviz.engine.scoring as scoring
    from attnviz.engine import DeviceOutOfMemoryError

    def boom(*args, **kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 4.00 GiB")

    monkeypatch.setattr(scoring.ScaledDotProduct, "scores", boom)
    q, k, v = inputs()
    with pytest.raises(DeviceOutOfMemoryError, match="out of memory on cpu for batch 2, 5 queries x 7 keys"):
        attend(q, k, v)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu():
    q, k, v = inputs(b=2, n=64, m=80)
    vl = torch.tensor([10, 80])
    cpu = attend(q, k, v, vl)
    gpu = attend(q, k, v, vl, device="cuda")
    assert gpu.device.startswith("cuda")
    torch.testing.assert_close(gpu.cpu().weights, cpu.weights, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(gpu.cpu().output, cpu.output, atol=1e-5, rtol=1e-4)


# ----------------------------------------------------------------- diagnostics


def test_diagnostics_values():
    q, k, v = inputs(b=1, n=2, m=4)
    r = attend(q, k, v, torch.tensor([[4, 9]]))
    d = r.diagnostics
    w = r.weights
    torch.testing.assert_close(d.row_sums, w.sum(-1))
    torch.testing.assert_close(d.max_weight, w.amax(-1))
    torch.testing.assert_close(d.entropy, -(w * w.log()).sum(-1))
    assert d.valid_lens_over_keys.tolist() == [[False, True]]
    assert any(s.startswith("1 valid length exceeds the 4 keys") for s in d.warnings)
    s = r.scores.flatten()
    assert math.isclose(d.logit_variance, float(s.var(unbiased=False)), rel_tol=1e-5)
    assert math.isclose(d.raw_logit_variance, float(r.raw_scores.flatten().var(unbiased=False)), rel_tol=1e-5)


def test_logit_variance_grows_with_d_unless_scaled():
    g = torch.Generator().manual_seed(0)
    for d in (4, 256):
        q, k = torch.randn(1, 64, d, generator=g), torch.randn(1, 64, d, generator=g)
        r = attend(q, k, torch.randn(1, 64, 1, generator=g))
        assert 0.7 < r.diagnostics.logit_variance < 1.3
        assert 0.7 * d < r.diagnostics.raw_logit_variance < 1.3 * d


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(queries=torch.randn(2, 3, 4), keys=torch.randn(2, 5, 3)), r"d_q = 4, d_k = 3"),
        (dict(keys=torch.randn(3, 5, 4)), r"batch sizes differ: queries 2, keys 3, values 2"),
        (dict(values=torch.randn(2, 6, 2)), r"5 keys but 6 values"),
        (dict(valid_lens=torch.tensor([1, 2, 3])), r"valid_lens must have shape \(2,\) or \(2, 3\).*got shape \(3,\)"),
        (dict(valid_lens=torch.tensor([-1, 2])), r"must be >= 0; got -1"),
        (dict(valid_lens=torch.tensor([1.5, 2.0])), r"whole numbers; got 1.5"),
        (dict(queries=torch.tensor([[[float("nan")] * 4] * 3] * 2)), r"queries contains NaN"),
        (dict(scoring="cosine"), r"unknown scoring function 'cosine': expected one of .*scaled_dot"),
        (dict(mask_mode="loose"), r"unknown mask_mode 'loose': expected one of d2l, strict"),
        (dict(queries=torch.randn(3, 4)), r"queries must be 3-D .* got shape \(3, 4\)"),
        (dict(causal="diagonal"), r"causal must be"),
        # A float attn_mask is additive (as SDPA reads it); an integer one has no PyTorch meaning.
        (dict(attn_mask=torch.ones(3, 5, dtype=torch.int64)), r"attn_mask must be a boolean tensor"),
        (dict(dropout=1.5), r"dropout must be a probability"),
        (dict(dtype="int8"), r"dtype must be one of float32"),
    ],
)
def test_bad_input_raises_a_clear_value_error(kwargs, message):
    args = dict(queries=torch.randn(2, 3, 4), keys=torch.randn(2, 5, 4), values=torch.randn(2, 5, 2))
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        attend(**args)


def test_valid_length_above_the_keys_behaves_like_the_book():
    q, k, v = inputs(b=1)
    torch.testing.assert_close(attend(q, k, v, torch.tensor([100])).weights, attend(q, k, v).weights)


def test_float_valid_lengths_with_whole_values_are_accepted():
    q, k, v = inputs()
    torch.testing.assert_close(
        attend(q, k, v, torch.tensor([2.0, 3.0])).weights, attend(q, k, v, torch.tensor([2, 3])).weights
    )


def test_every_mode_is_documented():
    for mode in MASK_MODES.values():
        assert mode.label and len(mode.description) > 40


@pytest.mark.parametrize("mode", list(MASK_MODES))
def test_blocked_prefix_path_equals_single_block(monkeypatch, mode):
    q, k, v = inputs(b=3, n=23, m=9)
    vl = torch.tensor([0, 4, 12])
    whole = attend(q, k, v, vl, mask_mode=mode)
    monkeypatch.setattr(attend_impl, "BLOCK_ELEMENTS", 9 * 4)  # four rows per block
    blocked = attend(q, k, v, vl, mask_mode=mode)
    for name in STAGES:
        torch.testing.assert_close(getattr(blocked, name), getattr(whole, name), equal_nan=True, msg=name)
    for name in ("row_sums", "entropy", "max_weight", "empty_rows", "nan_rows"):
        torch.testing.assert_close(
            getattr(blocked.diagnostics, name), getattr(whole.diagnostics, name), equal_nan=True, msg=name
        )
    assert blocked.diagnostics.warnings == whole.diagnostics.warnings
    assert math.isclose(blocked.diagnostics.logit_variance, whole.diagnostics.logit_variance, rel_tol=1e-5)
    w = whole.weights
    expected_entropy = torch.special.entr(w).sum(-1)
    ok = ~torch.isnan(expected_entropy)
    torch.testing.assert_close(whole.diagnostics.entropy[ok], expected_entropy[ok], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mode", ["d2l", "strict"])
def test_single_batch_prefix_path_keeps_the_scores_intact(mode):
    q, k, v = inputs(b=1, n=4, m=6)
    r = attend(q, k, v, torch.tensor([2]), mask_mode=mode)
    torch.testing.assert_close(r.scores, torch.bmm(q, k.transpose(1, 2)) / 2.0)  # not overwritten
    fill = -1e6 if mode == "d2l" else float("-inf")
    assert (r.masked_scores[..., 2:] == fill).all()
    torch.testing.assert_close(r.masked_scores[..., :2], r.scores[..., :2])
    torch.testing.assert_close(r.diagnostics.entropy, torch.special.entr(r.weights).sum(-1))
    empty = attend(q, k, v, torch.tensor([0]), mask_mode=mode)
    assert empty.diagnostics.empty_rows.all()
    expected = math.log(6) if mode == "d2l" else 0.0
    torch.testing.assert_close(empty.diagnostics.entropy, torch.full((1, 4), expected))
