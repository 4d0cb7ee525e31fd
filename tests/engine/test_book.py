"""The drop-in modules reproduce the book's code and its printed outputs."""

from __future__ import annotations

import math

import pytest
import torch

from attnviz.bench.reference import (
    BookAdditiveAttention,
    BookDotProductAttention,
    BookLazyAdditiveAttention,
    book_masked_softmax,
)
from attnviz.engine import AdditiveAttention, AttentionInputError, DotProductAttention, masked_softmax

# The chapter's printed PyTorch outputs (valid lengths [2, 3] and [[1, 3], [2, 4]]). Their inputs
# were unseeded random numbers; feeding the log of the printed weights as scores (with junk in
# the padded positions) must print the same weights back.
PRINTED_1D = [
    [[0.5667, 0.4333, 0, 0], [0.6657, 0.3343, 0, 0]],
    [[0.2451, 0.3035, 0.4514, 0], [0.4595, 0.2742, 0.2663, 0]],
]
PRINTED_2D = [[[1.0, 0, 0, 0], [0.3734, 0.1832, 0.4434, 0]], [[0.5169, 0.4831, 0, 0], [0.3576, 0.1722, 0.1807, 0.2894]]]


def _logits_from_printed(printed: list) -> torch.Tensor:
    w = torch.tensor(printed)
    junk = torch.tensor([[[7.0, -3.0, 11.0, 5.0]]]).expand_as(w)
    return torch.where(w > 0, torch.log(w.clamp_min(1e-30)), junk)


@pytest.mark.parametrize(
    "printed, valid_lens",
    [
        (PRINTED_1D, torch.tensor([2, 3])),
        (PRINTED_2D, torch.tensor([[1, 3], [2, 4]])),
    ],
)
def test_masked_softmax_prints_the_books_outputs(printed, valid_lens):
    out = masked_softmax(_logits_from_printed(printed), valid_lens)
    torch.testing.assert_close(out, torch.tensor(printed), atol=6e-5, rtol=0)
    assert "0.0000" in str(out) and out.shape == (2, 2, 4)


def _toy():
    torch.manual_seed(7)
    queries = torch.normal(0, 1, (2, 1, 20))
    keys = torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    return queries, keys, values, torch.tensor([2, 6])


def test_additive_toy_prints_what_the_book_prints():
    queries, keys, values, valid_lens = _toy()
    attention = AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.1)
    attention.eval()
    out = attention(queries, keys, values, valid_lens)
    torch.testing.assert_close(out, torch.tensor([[[2.0, 3, 4, 5]], [[10.0, 11, 12, 13]]]))
    weights = attention.attention_weights
    torch.testing.assert_close(weights[0, 0, :2], torch.full((2,), 0.5))
    torch.testing.assert_close(weights[1, 0, :6], torch.full((6,), 1 / 6))
    assert (weights[0, 0, 2:] == 0).all() and (weights[1, 0, 6:] == 0).all()


def test_dot_product_toy_prints_what_the_book_prints():
    _, keys, values, valid_lens = _toy()
    queries = torch.normal(0, 1, (2, 1, 2))
    attention = DotProductAttention(dropout=0.5)
    attention.eval()
    out = attention(queries, keys, values, valid_lens)
    torch.testing.assert_close(out, torch.tensor([[[2.0, 3, 4, 5]], [[10.0, 11, 12, 13]]]))


@pytest.mark.parametrize(
    "make", [lambda: AdditiveAttention(num_hiddens=8, dropout=0.1), lambda: AdditiveAttention(8, 0.1)]
)
def test_current_edition_additive_toy_prints_what_the_book_prints(make):
    # The current edition writes AdditiveAttention(num_hiddens=8, dropout=0.1) and lets the
    # layers learn the key size (2) and query size (20) from the first call.
    queries, keys, values, valid_lens = _toy()
    attention = make()
    attention.eval()
    out = attention(queries, keys, values, valid_lens)
    assert out.shape == (2, 1, 4)
    torch.testing.assert_close(out, torch.tensor([[[2.0, 3, 4, 5]], [[10.0, 11, 12, 13]]]))
    assert attention.W_q.weight.shape == (8, 20) and attention.W_k.weight.shape == (8, 2)
    assert attention.w_v.weight.shape == (1, 8)


def test_current_edition_random_toy_equals_the_books_lazy_module():
    # The current edition's own toy: random keys and values, so only the shape is printed;
    # seeded alike, our lazy layers draw the book's parameters and give its output.
    torch.manual_seed(3)
    queries, keys = torch.normal(0, 1, (2, 1, 20)), torch.normal(0, 1, (2, 10, 2))
    values, valid_lens = torch.normal(0, 1, (2, 10, 4)), torch.tensor([2, 6])
    torch.manual_seed(11)
    ours = AdditiveAttention(num_hiddens=8, dropout=0.1).eval()
    out = ours(queries, keys, values, valid_lens)
    torch.manual_seed(11)
    book = BookLazyAdditiveAttention(num_hiddens=8, dropout=0.1).eval()
    expected = book(queries, keys, values, valid_lens)
    assert out.shape == (2, 1, 4)
    for name in ("W_q", "W_k", "w_v"):
        torch.testing.assert_close(getattr(ours, name).weight, getattr(book, name).weight, rtol=0, atol=0)
    # float32, one tanh and two small matmuls apart: a few ulps of the output's magnitude.
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)


def test_lazy_additive_state_dict_loads_into_the_older_signature():
    queries, keys, values, valid_lens = _toy()
    lazy = AdditiveAttention(num_hiddens=8, dropout=0.0).eval()
    keys = keys * torch.linspace(0.5, 2, 10)[None, :, None]  # distinct keys: weights that differ
    first = lazy(queries, keys, values, valid_lens)
    sized = AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.0).eval()
    sized.load_state_dict(lazy.state_dict())
    torch.testing.assert_close(sized(queries, keys, values, valid_lens), first)


@pytest.mark.parametrize(
    "args, kwargs",
    [((), {"num_hiddens": 8}), ((2, 20, 8), {}), ((), {"key_size": 2, "num_hiddens": 8, "dropout": 0.1})],
)
def test_additive_names_both_signatures_when_neither_fits(args, kwargs):
    with pytest.raises(TypeError, match=r"\(num_hiddens, dropout\) or \(key_size, query_size, num_hiddens, dropout\)"):
        AdditiveAttention(*args, **kwargs)


def _random_case(seed: int, two_d: bool, n_q: int = 5, n_k: int = 7):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(3, n_q, 6, generator=g) * 3
    k = torch.randn(3, n_k, 6, generator=g) * 3
    v = torch.randn(3, n_k, 4, generator=g)
    if two_d:
        vl = torch.randint(0, n_k + 3, (3, n_q), generator=g)
    else:
        vl = torch.randint(0, n_k + 3, (3,), generator=g)
    return q, k, v, vl


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("two_d", [False, True])
def test_masked_softmax_equals_book_on_random_inputs(seed, two_d):
    _, _, _, vl = _random_case(seed, two_d)
    X = torch.randn(3, 5, 7, generator=torch.Generator().manual_seed(seed)) * 4
    expected = book_masked_softmax(X.clone(), vl)
    torch.testing.assert_close(masked_softmax(X, vl), expected)
    torch.testing.assert_close(masked_softmax(X, None), book_masked_softmax(X.clone(), None))


def test_masked_softmax_leaves_the_callers_tensor_alone():
    X = torch.randn(2, 2, 4)
    before = X.clone()
    masked_softmax(X, torch.tensor([1, 2]))
    assert torch.equal(X, before)
    # ...whereas the book's code does write into it: the reason for the difference.
    book_masked_softmax(X, torch.tensor([1, 2]))
    assert (X == -1e6).any()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("two_d", [False, True])
def test_additive_module_equals_book_with_loaded_state_dict(seed, two_d):
    q, k, v, vl = _random_case(seed, two_d)
    q = torch.randn(3, 5, 9, generator=torch.Generator().manual_seed(seed + 100))
    book = BookAdditiveAttention(key_size=6, query_size=9, num_hiddens=8, dropout=0.2).eval()
    ours = AdditiveAttention(key_size=6, query_size=9, num_hiddens=8, dropout=0.2).eval()
    ours.load_state_dict(book.state_dict())  # strict: same parameter names and shapes
    torch.testing.assert_close(ours(q, k, v, vl), book(q, k, v, vl))
    torch.testing.assert_close(ours.attention_weights, book.attention_weights)


def test_additive_module_in_blocks_equals_one_block():
    q, k, v, vl = _random_case(3, True, n_q=37, n_k=11)
    ours = AdditiveAttention(6, 6, 8, 0.0).eval()
    whole = ours(q, k, v, vl)
    ours.block_elements = 3 * 11 * 8 * 4  # four query rows per block
    torch.testing.assert_close(ours(q, k, v, vl), whole)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("two_d", [False, True])
def test_dot_product_module_equals_book(seed, two_d):
    q, k, v, vl = _random_case(seed, two_d)
    book = BookDotProductAttention(0.3).eval()
    ours = DotProductAttention(0.3).eval()
    torch.testing.assert_close(ours(q, k, v, vl), book(q, k, v, vl))
    torch.testing.assert_close(ours(q, k, v), book(q, k, v))


def test_training_mode_dropout_matches_book_under_same_seed():
    q, k, v, vl = _random_case(1, False)
    book, ours = BookDotProductAttention(0.5).train(), DotProductAttention(0.5).train()
    torch.manual_seed(3)
    expected = book(q, k, v, vl)
    torch.manual_seed(3)
    torch.testing.assert_close(ours(q, k, v, vl), expected)


def test_modules_backpropagate():
    q, k, v, vl = _random_case(2, False)
    q = q[..., :6].clone().requires_grad_(True)
    attention = AdditiveAttention(6, 6, 4, 0.0)
    attention(q, k, v, vl).sum().backward()
    assert q.grad is not None and attention.W_q.weight.grad is not None


@pytest.mark.parametrize(
    "valid_lens, message",
    [
        (torch.tensor([2.5, 1.0]), "whole numbers"),
        (torch.tensor([-1, 2]), ">= 0"),
        (torch.tensor([1, 2, 3]), "shape"),
    ],
)
def test_masked_softmax_rejects_bad_valid_lengths(valid_lens, message):
    with pytest.raises(AttentionInputError, match=message):
        masked_softmax(torch.randn(2, 2, 4), valid_lens)


def test_dot_product_module_names_the_dimension_mismatch():
    with pytest.raises(AttentionInputError, match="d_q = 3, d_k = 2"):
        DotProductAttention(0.0)(torch.randn(1, 2, 3), torch.randn(1, 4, 2), torch.randn(1, 4, 1))


def test_half_precision_masked_softmax_matches_book_nan_for_empty_rows():
    X = torch.randn(2, 2, 4).half()
    ours = masked_softmax(X, torch.tensor([0, 2]))
    book = book_masked_softmax(X.clone(), torch.tensor([0, 2]))
    assert torch.isnan(ours[0]).all() and torch.isnan(book[0]).all()
    torch.testing.assert_close(ours[1], book[1])
    assert math.isclose(float(ours[1, 0].float().sum()), 1.0, rel_tol=1e-3)
