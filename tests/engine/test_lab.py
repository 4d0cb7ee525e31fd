"""The masking lab: every convention on one input, row classes, disagreements and their sentences."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.engine import MASK_MODES, AttentionInputError, attend
from attnviz.engine.lab import ROW_KINDS, compare_conventions


def inputs(b=2, n=3, m=5, d=4, dv=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(b, n, d, generator=g), torch.randn(b, m, d, generator=g), torch.randn(b, m, dv, generator=g))


def test_every_mask_mode_is_run_and_strict_is_the_reference():
    q, k, v = inputs()
    report = compare_conventions(q, k, v, torch.tensor([2, 5]))
    assert report.reference == "strict"
    assert list(report.conventions)[0] == "strict"
    assert set(report.conventions) == set(MASK_MODES)
    assert set(report.disagreements) == set(MASK_MODES) - {"strict"}
    for name, conv in report.conventions.items():
        # The lab calls attend with these tensors and this mode: the same kernels on the same
        # shapes, so the same bits on any machine.
        expected = attend(q, k, v, torch.tensor([2, 5]), mask_mode=name)
        torch.testing.assert_close(conv.weights, expected.weights, equal_nan=True, rtol=0, atol=0)
        torch.testing.assert_close(conv.output, expected.output, equal_nan=True, rtol=0, atol=0)
        assert conv.row_kinds.shape == (2, 3)
        assert set(conv.row_kinds.ravel()) <= set(ROW_KINDS)


def test_valid_length_zero_rows_by_convention_and_sentences_count_them():
    q, k, v = inputs()
    report = compare_conventions(q, k, v, torch.tensor([0, 3]))
    c = report.conventions
    assert report.empty_rows.tolist() == [[True] * 3, [False] * 3]
    assert c["d2l"].row_kinds[0].tolist() == ["uniform_over_padding"] * 3
    torch.testing.assert_close(c["d2l"].weights[0], torch.full((3, 5), 0.2))
    assert c["neg_inf"].row_kinds[0].tolist() == ["nan_row"] * 3
    assert c["sdpa"].row_kinds[0].tolist() == ["zero_row"] * 3
    assert c["strict"].row_kinds[0].tolist() == ["zero_row"] * 3
    for name in ("strict", "d2l", "neg_inf", "sdpa"):
        assert c[name].row_kinds[1].tolist() == ["ok"] * 3

    d2l = report.disagreements["d2l"]
    # Exactly the 3 empty rows differ, in every one of their 5 cells.
    assert d2l.cells.shape == (2, 3, 5)
    assert d2l.cells[0].all() and not d2l.cells[1].any()
    assert d2l.sentences == (
        "d2l: 3 rows with no valid key get uniform weights (1/5 each) over padding where strict gives zero weights",
    )
    assert report.disagreements["neg_inf"].sentences == (
        "neg_inf: 3 rows with no valid key get NaN weights where strict gives zero weights",
    )
    assert report.disagreements["sdpa"].agrees and report.disagreements["sdpa"].sentences == ()
    assert "sdpa" in report.agreeing() and "d2l" not in report.agreeing()

    # The sentence follows the numbers: two empty batch elements make it 6 rows.
    both = compare_conventions(q, k, v, torch.tensor([0, 0]))
    assert both.disagreements["d2l"].sentences[0].startswith("d2l: 6 rows with no valid key")


def test_any_two_conventions_compare_and_nan_equals_nan():
    q, k, v = inputs()
    report = compare_conventions(q, k, v, torch.tensor([0, 3]))
    sdpa_vs_book = report.compare("sdpa", "d2l")
    assert sdpa_vs_book.sentences == (
        "sdpa: 3 rows with no valid key get zero weights where d2l gives uniform weights (1/5 each) over padding",
    )
    same = report.compare("neg_inf", "neg_inf")
    assert same.agrees and not same.cells.any()
    nan_vs_zero = report.compare("neg_inf", "sdpa")
    assert int(nan_vs_zero.cells.sum()) == 15
    with pytest.raises(AttentionInputError, match="unknown convention 'nope'"):
        report.compare("nope")


def test_sdpa_convention_matches_pytorch_sdpa():
    q, k, v = inputs(m=6)
    lens = torch.tensor([[0, 2, 6], [1, 4, 3]])
    report = compare_conventions(q, k, v, lens)
    mask = torch.arange(6)[None, None, :] < lens[..., None]
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(report.conventions["sdpa"].output, expected)
    assert report.conventions["sdpa"].row_kinds[0, 0] == "zero_row"


def test_float_mask_and_inverted_mask_attend_padding():
    q, k, v = inputs()
    report = compare_conventions(q, k, v, torch.tensor([2, 4]))
    f01 = report.conventions["float01"]
    assert f01.row_kinds.tolist() == [["padding_attended"] * 3] * 2
    padding_weight = f01.weights[0, :, 2:].sum(-1)
    assert (padding_weight > 0.01).all()
    share = float(torch.cat([f01.weights[0, :, 2:].sum(-1), f01.weights[1, :, 4:].sum(-1)]).max())
    (sentence,) = report.disagreements["float01"].sentences
    assert sentence == (
        f"float01: 6 rows with valid keys put weight on 12 masked keys, up to {share:.3g} of a "
        "row's weight, where strict gives them none"
    )

    inv = report.disagreements["inverted"]
    assert report.conventions["inverted"].flags["keys_hidden"].all()
    assert "inverted: 6 rows give zero weight to 18 keys the mask allows, which strict weighs" in inv.sentences


def test_inverted_full_row_is_nan_with_its_cause():
    q, k, v = inputs()
    report = compare_conventions(q, k, v, torch.tensor([5, 2]))
    inv = report.conventions["inverted"]
    assert inv.row_kinds[0].tolist() == ["nan_row"] * 3
    assert inv.row_kinds[1].tolist() == ["padding_attended"] * 3
    assert report.disagreements["inverted"].sentences[0] == (
        "inverted: 3 rows with valid keys are NaN: every score the softmax sees is -inf, so it divides 0 by 0"
    )


def test_causal_runs_both_alignments_and_finds_future_keys():
    q, k, v = inputs(n=3, m=5)
    report = compare_conventions(q, k, v, causal="top_left")
    assert report.reference == "strict/top_left"
    assert set(report.conventions) == {f"{m}/{a}" for m in MASK_MODES for a in ("top_left", "bottom_right")}
    # Bottom-right puts query i at key i + 2: keys i+1 and i+2 (at most key 4) are the future.
    expected_future = torch.tensor([[k > i for k in range(5)] for i in range(3)])
    assert torch.equal(report.future[0], expected_future)
    br = report.conventions["strict/bottom_right"]
    assert br.row_kinds.tolist() == [["future_visible"] * 3] * 2
    extra = (br.weights > 0) & report.future
    assert int(extra.sum()) == 12
    share = float((br.weights * report.future).sum(-1).max())
    assert report.disagreements["strict/bottom_right"].sentences[0] == (
        f"strict/bottom_right: 6 rows attend to 12 future keys (after the query's top-left position), "
        f"up to {share:.3g} of a row's weight"
    )
    # Intended bottom-right: top-left hides keys that should be seen.
    br_report = compare_conventions(q, k, v, causal="bottom_right")
    tl = br_report.conventions["strict/top_left"]
    assert tl.row_kinds.tolist() == [["keys_hidden"] * 3] * 2
    assert (
        "strict/top_left: 6 rows give zero weight to 12 keys the mask allows"
        in br_report.disagreements["strict/top_left"].sentences[0]
    )


def test_causal_true_means_top_left():
    q, k, v = inputs()
    assert compare_conventions(q, k, v, causal=True).reference == "strict/top_left"


def test_fill_smaller_than_real_scores_sends_weight_to_padding():
    q = torch.tensor([[[1000.0, 1000.0]]])
    k = torch.tensor([[[-1000.0, -1000.0], [-900.0, -1000.0], [1.0, 2.0], [3.0, 4.0]]])
    v = torch.arange(8.0).reshape(1, 4, 2)
    report = compare_conventions(q, k, v, torch.tensor([2]), scoring="dot")
    d2l = report.conventions["d2l"]
    assert d2l.weights[0, 0].tolist() == [0.0, 0.0, 0.5, 0.5]
    assert report.conventions["strict"].weights[0, 0].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert d2l.row_kinds[0, 0] == "padding_attended" and bool(d2l.flags["keys_hidden"][0, 0])
    assert report.disagreements["d2l"].sentences == (
        "d2l: 1 row with valid keys puts weight on 2 masked keys, up to all of a row's weight, where strict gives them "
        "none",
        "d2l: 1 row gives zero weight to 1 key the mask allows, which strict weighs",
    )


def test_nan_in_masked_values_reaches_the_output_through_zero_weights():
    q, k, v = inputs()
    v[0, 3:] = math.nan
    report = compare_conventions(q, k, v, torch.tensor([3, 5]), allow_nonfinite=True)
    d2l = report.disagreements["d2l"]
    assert not d2l.cells.any()
    assert d2l.output_rows.tolist() == [[True] * 3, [False] * 3]
    assert d2l.sentences == (
        "d2l: 3 rows have a non-finite output although their weights match strict's: a NaN or Inf in the "
        "value vector of a key with zero weight gets through (0 x NaN = NaN)",
    )
    assert torch.isfinite(report.conventions["strict"].output).all()


def test_float16_book_fill_turns_empty_rows_nan():
    q, k, v = inputs()
    report = compare_conventions(q, k, v, torch.tensor([0, 4]), dtype="float16")
    assert report.conventions["d2l"].row_kinds[0].tolist() == ["nan_row"] * 3
    assert report.conventions["d2l"].row_kinds[1].tolist() == ["ok"] * 3
    assert report.atol == pytest.approx(16 * torch.finfo(torch.float16).eps)
    f32 = compare_conventions(q, k, v, torch.tensor([0, 4]))
    assert f32.conventions["d2l"].row_kinds[0].tolist() == ["uniform_over_padding"] * 3


def test_numpy_inputs_and_explicit_masks():
    q, k, v = (t.numpy() for t in inputs())
    kpm = np.array([[False, False, False, True, True], [False] * 5])
    report = compare_conventions(q, k, v, key_padding_mask=kpm)
    assert report.allowed[0, :, 3:].any().item() is False
    assert report.conventions["float01"].row_kinds[0].tolist() == ["padding_attended"] * 3
    assert report.conventions["float01"].row_kinds[1].tolist() == ["ok"] * 3


def test_no_mask_everything_agrees():
    q, k, v = inputs()
    report = compare_conventions(q, k, v)
    assert sorted(report.agreeing()) == sorted(set(MASK_MODES) - {"strict"})
    assert report.sentences() == []


def test_bad_arguments_give_clear_errors():
    q, k, v = inputs()
    with pytest.raises(AttentionInputError, match="do not pass mask_mode"):
        compare_conventions(q, k, v, mask_mode="d2l")
    with pytest.raises(AttentionInputError, match="causal must be"):
        compare_conventions(q, k, v, causal="diagonal")
    with pytest.raises(AttentionInputError, match="valid lengths must be >= 0"):
        compare_conventions(q, k, v, torch.tensor([-1, 2]))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 5),
    st.integers(1, 6),
    st.booleans(),
    st.integers(0, 2**31 - 1),
    st.sampled_from([None, "top_left", "bottom_right"]),
)
def test_sentences_count_what_the_numbers_show(b, n, m, two_d, seed, causal):
    g = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(b, n, 3, generator=g), torch.randn(b, m, 3, generator=g), torch.randn(b, m, 2, generator=g)
    lens = torch.randint(0, m + 1, (b, n) if two_d else (b,), generator=g)
    report = compare_conventions(q, k, v, lens, causal=causal)
    empty = int(report.empty_rows.sum())
    ref = report.reference
    book = "d2l" if causal is None else f"d2l/{causal}"
    sdpa = "sdpa" if causal is None else f"sdpa/{causal}"
    # The book's fill differs from the reference on exactly the rows with no valid key.
    d2l = report.disagreements[book]
    assert torch.equal(d2l.rows, report.empty_rows)
    assert report.disagreements[sdpa].agrees
    if empty:
        assert d2l.sentences == (
            f"{book}: {empty} row{'s' if empty != 1 else ''} with no valid key get uniform weights "
            f"(1/{m} each) over padding where {ref} gives zero weights",
        )
    else:
        assert d2l.sentences == ()
    for conv in report.conventions.values():
        # Row classes agree with the weights they describe.
        w = conv.weights
        nan_rows = torch.from_numpy(conv.row_kinds == "nan_row")
        assert torch.equal(nan_rows, torch.isnan(w).any(-1))
        forbidden = ((w > 0) & ~report.allowed).any(-1) & ~torch.isnan(w).any(-1)
        flagged = conv.flags["padding_attended"] | conv.flags["future_visible"] | conv.flags["uniform_over_padding"]
        assert torch.equal(forbidden, flagged)
