"""Every engine argument validated: a clear AttentionInputError naming it, never a raw exception
from inside torch, never a silently wrong answer (issue 12, item 4)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.bench.reference import BookDotProductAttention
from attnviz.engine import AttentionInputError, attend, masked_softmax


def inputs(b=2, n=3, m=5, d=4):
    g = torch.Generator().manual_seed(0)
    return torch.randn(b, n, d, generator=g), torch.randn(b, m, d, generator=g), torch.randn(b, m, 2, generator=g)


@pytest.mark.parametrize("huge", [2.0**63, 1e30, 2.0**64])
def test_float_valid_lengths_beyond_int64_mean_all_keys_valid_as_in_the_book(huge):
    q, k, v = inputs()
    vl = torch.tensor([huge, 2.0])
    r = attend(q, k, v, vl)
    book = BookDotProductAttention(0.0).eval()
    torch.testing.assert_close(r.output, book(q, k, v, vl))
    torch.testing.assert_close(r.weights[0], attend(q, k, v).weights[0])
    assert any("1 valid length exceeds the 5 keys: treated as all keys valid" in w for w in r.diagnostics.warnings)
    assert r.diagnostics.valid_lens_over_keys.tolist() == [True, False]


@pytest.mark.parametrize("huge", [2**63, 2**64, np.uint64(2**63)])
def test_whole_valid_lengths_beyond_int64_are_clamped_too(huge):
    q, k, v = inputs()
    r = attend(q, k, v, np.array([huge, 2]) if isinstance(huge, np.uint64) else [huge, 2])
    torch.testing.assert_close(r.weights[0], attend(q, k, v).weights[0])
    assert r.diagnostics.valid_lens_over_keys.tolist() == [True, False]


@pytest.mark.parametrize(
    "kwargs, field, text",
    [
        (dict(dropout=True), "dropout", "dropout must be a probability between 0 and 1; got True"),
        (dict(dropout="0.5"), "dropout", "dropout must be a probability"),
        (dict(dropout=float("nan")), "dropout", "dropout must be a probability"),
        (dict(seed=1.5), "seed", "seed must be a whole number from 0 to 2^64 - 1; got 1.5"),
        (dict(seed=2**64), "seed", "seed must be a whole number from 0 to 2^64 - 1; got 18446744073709551616"),
        (dict(seed=-1), "seed", "seed must be a whole number"),
        (dict(seed=True), "seed", "seed must be a whole number"),
        (dict(seed="3"), "seed", "seed must be a whole number"),
        (dict(dropout_seed=2.5, dropout=0.5, train=True), "dropout_seed", "dropout_seed must be a whole number"),
        (dict(dropout_seed=2**64, dropout=0.5, train=True), "dropout_seed", "dropout_seed must be a whole number"),
        (dict(train="yes"), "train", "train must be True or False; got 'yes'"),
        (dict(allow_nonfinite=1), "allow_nonfinite", "allow_nonfinite must be True or False"),
        (dict(num_hiddens="8", scoring="additive"), "params", "num_hiddens must be a whole number >= 1"),
        (dict(keep=5), "keep", "unknown stage"),
        (dict(keep=["weights", 3]), "keep", "unknown stage"),
        (dict(memory_budget=-1), "memory_budget", "memory_budget must be a number of bytes > 0"),
        (dict(memory_budget="4GB"), "memory_budget", "memory_budget must be a number of bytes > 0"),
        (dict(valid_lens="3"), "valid_lens", "valid_lens must hold whole numbers; got str"),
        (dict(valid_lens=["a", "b"]), "valid_lens", "valid_lens must hold whole numbers; got list"),
        (dict(valid_lens=[True, False]), "valid_lens", "valid_lens must hold whole numbers, got dtype torch.bool"),
        (
            dict(scoring="additive", params={"W_q": "abc", "W_k": torch.zeros(8, 4), "w_v": torch.zeros(1, 8)}),
            "params",
            "parameter 'W_q' must be a tensor or array of numbers; got str",
        ),
        (dict(scoring="bilinear", params="W"), "params", "params must map parameter names to tensors; got str"),
        (
            dict(scoring="bilinear", params={"W": torch.zeros(4, 4, dtype=torch.bool)}),
            "params",
            "parameter 'W' must hold real numbers; got dtype torch.bool",
        ),
        (
            dict(scoring="bilinear", params={"W": torch.zeros(4, 4, device="meta")}),
            "params",
            "parameter 'W' must hold real numbers; got dtype torch.float32 on meta",
        ),
        (
            dict(queries=torch.randn(2, 3, 0), keys=torch.randn(2, 5, 0)),
            "shape",
            "queries must have at least one feature (d >= 1); got shape (2, 3, 0)",
        ),
        (dict(values=torch.randn(2, 5, 0)), "shape", "values must have at least one feature"),
        (
            dict(queries=torch.randn(2, 3, 4, device="meta")),
            "queries",
            "queries is on the 'meta' device, which holds no values",
        ),
        (
            dict(valid_lens=torch.tensor([1, 2], device="meta")),
            "valid_lens",
            "valid_lens is on the 'meta' device, which holds no values",
        ),
        (
            dict(attn_mask=torch.ones(3, 5, dtype=torch.bool, device="meta")),
            "mask",
            "attn_mask is on the 'meta' device, which holds no values",
        ),
        (dict(queries="abc"), "queries", "queries must be a numeric tensor or array; got str"),
        (dict(causal="yes"), "mask", "causal must be None, True, 'top_left' or 'bottom_right'; got 'yes'"),
        (dict(causal=[True]), "mask", "causal must be None"),
    ],
)
def test_each_bad_argument_is_named(kwargs, field, text):
    args = dict(zip(("queries", "keys", "values"), inputs()))
    args.update(kwargs)
    with pytest.raises(AttentionInputError) as info:
        attend(**args)
    assert text in str(info.value)
    assert info.value.field == field


def test_numpy_scalars_are_accepted_where_python_numbers_are():
    q, k, v = inputs()
    a = attend(q, k, v, seed=np.int64(3), dropout=np.float32(0.5), train=np.bool_(True), dropout_seed=np.uint8(1))
    b = attend(q, k, v, seed=3, dropout=0.5, train=True, dropout_seed=1)
    assert torch.equal(a.applied_weights, b.applied_weights)
    assert torch.equal(
        attend(q, k, v, seed=2**64 - 1, scoring="bilinear").weights,
        attend(q, k, v, seed=2**64 - 1, scoring="bilinear").weights,
    )


def test_inputs_that_require_grad_work_in_blocks_and_come_back_detached():
    g = torch.Generator().manual_seed(1)
    q = torch.randn(1, 2048, 64, generator=g, requires_grad=True)  # 2048 x 2048 scores: computed in blocks
    k = torch.randn(1, 2048, 64, generator=g, requires_grad=True)
    v = torch.randn(1, 2048, 8, generator=g)
    r = attend(q, k, v, torch.tensor([1500]), keep=("weights", "output"))
    assert not r.weights.requires_grad and not r.output.requires_grad
    expected = attend(q.detach(), k.detach(), v, torch.tensor([1500]), keep=("weights", "output"))
    assert torch.equal(r.output, expected.output)  # the same blocks, shapes and kernels: the same bits
    small = attend(q[:, :4], k[:, :4], v[:, :4])  # one block: the same rule
    assert not small.weights.requires_grad


def test_masked_softmax_refuses_what_is_not_a_float_tensor():
    with pytest.raises(AttentionInputError, match="X must be a floating-point tensor of scores; got dtype torch.int64"):
        masked_softmax(torch.ones(2, 3, 4, dtype=torch.int64), torch.tensor([1, 2]))
    with pytest.raises(AttentionInputError, match="X must be a floating-point tensor of scores; got list"):
        masked_softmax([[[1.0, 2.0]]], None)
    with pytest.raises(AttentionInputError, match="X must be a floating-point tensor of scores; got dtype torch.int64"):
        masked_softmax(torch.ones(2, 3, 4, dtype=torch.int64), None)
    with pytest.raises(AttentionInputError, match="'meta' device"):
        masked_softmax(torch.ones(2, 3, 4, device="meta"), torch.tensor([1, 2]))
    with pytest.raises(AttentionInputError, match="valid_lens must hold whole numbers; got str"):
        masked_softmax(torch.ones(2, 3, 4), "2")
    # Huge float valid lengths: all keys valid, exactly as the book.
    x = torch.randn(2, 3, 4)
    torch.testing.assert_close(masked_softmax(x, torch.tensor([2.0**63, 1.0]))[0], torch.softmax(x[0], -1))
