"""Masks in every shape and convention PyTorch and Hugging Face code builds them, and what they mean."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnviz.engine import MASK_FINDING_KINDS, MASK_MODES, AttentionInputError, attend, inverted_padding

B, H, L, S, D = 2, 3, 5, 6, 4
MIN = torch.finfo(torch.float32).min


def qkv(seed=0, n=L, m=S):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(B, H, n, D, generator=g),
        torch.randn(B, H, m, D, generator=g),
        torch.randn(B, H, m, 3, generator=g),
    )


def random_mask(shape, seed=1):
    m = torch.rand(shape, generator=torch.Generator().manual_seed(seed)) > 0.35
    m[..., 0] = True  # no fully masked row here: those have their own tests
    return m


def additive(allowed, fill):
    return torch.zeros(allowed.shape).masked_fill(~allowed, fill)


SHAPES = [(L, S), (B, 1, 1, S), (B, 1, L, S), (B, H, L, S), (1, H, 1, S), (H, L, S)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_attn_mask_is_read_exactly_as_sdpa_reads_it(shape):
    q, k, v = qkv()
    allowed = random_mask(shape)
    for mask in (allowed, additive(allowed, float("-inf")), additive(allowed, MIN), additive(allowed, -1e9)):
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        for mode in ("sdpa", "d2l", "strict"):
            r = attend(q, k, v, attn_mask=mask, mask_mode=mode)
            torch.testing.assert_close(r.output, expected, msg=f"{mask.dtype} {mode}")
            assert torch.equal(r.mask, allowed.expand(B, H, L, S)), "the mask stage shows the keys masked"
            assert r.diagnostics.warnings == ()


def test_an_additive_bias_is_added_as_given():
    q, k, v = qkv()
    bias = torch.randn(H, L, S, generator=torch.Generator().manual_seed(2))  # ALiBi-like: no key masked
    r = attend(q, k, v, attn_mask=bias)
    torch.testing.assert_close(r.masked_scores, r.scores + bias)
    torch.testing.assert_close(r.output, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    assert r.mask.all() and r.diagnostics.warnings == ()


def test_key_padding_mask_reads_as_multihead_attention():
    q, k, v = qkv()
    ignore = torch.tensor([[False] * 4 + [True] * 2, [False] * 6])
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=~ignore[:, None, None, :])
    torch.testing.assert_close(attend(q, k, v, key_padding_mask=ignore).output, expected)
    # Float: added to the scores, as nn.MultiheadAttention does.
    torch.testing.assert_close(attend(q, k, v, key_padding_mask=additive(~ignore, float("-inf"))).output, expected)
    with pytest.raises(AttentionInputError, match=r"key_padding_mask must have shape \(2, 6\) \(batch, keys\)"):
        attend(q, k, v, key_padding_mask=ignore[:, None, None, :])
    with pytest.raises(AttentionInputError, match="key_padding_mask must be a boolean tensor .* got dtype torch.int64"):
        attend(q, k, v, key_padding_mask=ignore.long())


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.float32])
def test_hugging_face_attention_mask_one_means_attend(dtype):
    q, k, v = qkv()
    hf = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]]).to(dtype)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=hf.bool()[:, None, None, :])
    r = attend(q, k, v, attention_mask=hf)
    torch.testing.assert_close(r.output, expected)
    # The same 0/1 values expanded to (B, 1, L, S), as HF's custom 4-D masks are.
    expanded = hf[:, None, None, :].expand(B, 1, L, S)
    torch.testing.assert_close(attend(q, k, v, attention_mask=expanded).output, expected)


def test_attention_mask_values_must_be_zero_or_one():
    q, k, v = qkv()
    with pytest.raises(
        AttentionInputError,
        match="attention_mask must hold 0 and 1 .* got -3.40282e\\+38. An additive mask .* goes through attn_mask=",
    ):
        attend(q, k, v, attention_mask=additive(torch.ones(B, S, dtype=torch.bool).tril(), MIN))
    with pytest.raises(AttentionInputError, match=r"attention_mask must have shape \(2, 6\)"):
        attend(q, k, v, attention_mask=torch.ones(3, 6))


def test_left_padding_with_causal_masks_reproduce_sdpa():
    q, k, v = qkv(n=S)
    hf = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])  # left padding of the first sequence
    allowed = hf.bool()[:, None, None, :] & torch.ones(S, S, dtype=torch.bool).tril()
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    for kwargs in (
        dict(attention_mask=hf),
        dict(key_padding_mask=hf == 0),
        dict(attn_mask=additive(hf.bool()[:, None, None, :], float("-inf"))),
    ):
        r = attend(q, k, v, causal=True, mask_mode="sdpa", **kwargs)
        torch.testing.assert_close(r.output, expected, msg=str(kwargs))
        # The padded queries see no key at all: flagged, zero weights as SDPA gives them.
        assert r.diagnostics.empty_rows[0, :, :2].all() and r.diagnostics.empty_rows.sum() == 2 * H
        assert (r.weights[0, :, :2] == 0).all()


def test_every_source_combines():
    q, k, v = qkv()
    vl = torch.tensor([5, 6])
    kpm = torch.tensor([[True] + [False] * 5, [False] * 6])
    am = random_mask((B, 1, L, S), seed=7)
    hf = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]])
    bias = torch.randn(H, L, S, generator=torch.Generator().manual_seed(8))
    r = attend(
        q, k, v, vl, causal="bottom_right", attn_mask=am, key_padding_mask=kpm, attention_mask=hf, mask_mode="sdpa"
    )
    allowed = (
        (torch.arange(S) < vl[:, None])[:, None, None, :]
        & torch.ones(L, S, dtype=torch.bool).tril(1)
        & am
        & ~kpm[:, None, None, :]
        & hf.bool()[:, None, None, :]
    )
    torch.testing.assert_close(r.output, F.scaled_dot_product_attention(q, k, v, attn_mask=allowed))
    assert torch.equal(r.mask, allowed.expand(B, H, L, S))
    # An additive bias on top goes into the same softmax.
    r = attend(q, k, v, vl, causal="bottom_right", attn_mask=bias, key_padding_mask=kpm, mask_mode="sdpa")
    allowed = (
        (torch.arange(S) < vl[:, None])[:, None, None, :]
        & torch.ones(L, S, dtype=torch.bool).tril(1)
        & ~kpm[:, None, None, :]
    )
    torch.testing.assert_close(
        r.output, F.scaled_dot_product_attention(q, k, v, attn_mask=bias.masked_fill(~allowed, float("-inf")))
    )


def test_fully_masked_rows_are_what_sdpa_and_multihead_attention_give():
    """Measured on torch 2.13: SDPA gives zeros for a row with every key masked, boolean or -inf
    (its safe softmax); nn.MultiheadAttention with need_weights=True gives NaN; a 0/finfo.min
    row is uniform everywhere."""
    q, k, v = qkv()
    allowed = random_mask((B, 1, L, S))
    allowed[0, 0, 1] = False
    for mask in (allowed, additive(allowed, float("-inf"))):
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert (expected[0, :, 1] == 0).all()
        r = attend(q, k, v, attn_mask=mask, mask_mode="sdpa")
        torch.testing.assert_close(r.output, expected)
        assert r.diagnostics.empty_rows[0, :, 1].all() and r.diagnostics.empty_rows.sum() == H
        neg_inf = attend(q, k, v, attn_mask=mask, mask_mode="neg_inf")
        assert torch.isnan(neg_inf.weights[0, :, 1]).all()
    finite = additive(allowed, MIN)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=finite)
    r = attend(q, k, v, attn_mask=finite, mask_mode="sdpa")
    torch.testing.assert_close(r.output, expected)
    torch.testing.assert_close(r.weights[0, :, 1], torch.full((H, S), 1 / S))
    assert not r.diagnostics.empty_rows.any()
    assert r.diagnostics.fill_only_rows[0, :, 1].all() and r.diagnostics.fill_only_rows.sum() == H
    assert [f.kind for f in r.diagnostics.findings] == ["fill_only_rows"]


def test_multihead_attention_fully_padded_query_is_nan_as_neg_inf_mode():
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(3))
    kpm = torch.tensor([[True, True, True], [False, False, True]])
    with torch.no_grad():
        _, w = mha(x, x, x, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
    q, k, v = (
        F.linear(x, w_, b_).reshape(2, 3, 2, 4).transpose(1, 2)
        for w_, b_ in zip(mha.in_proj_weight.chunk(3), mha.in_proj_bias.chunk(3))
    )
    r = attend(q, k, v, key_padding_mask=kpm, mask_mode="neg_inf")
    torch.testing.assert_close(r.weights, w, equal_nan=True)
    assert torch.isnan(w[0]).all()


def test_shapes_that_do_not_broadcast_name_what_was_expected():
    q, k, v = qkv()
    for bad in ((L, S + 1), (3, 1, 1, S), (B, H, L, S, 1), (S,)):  # SDPA refuses 1-D masks too
        with pytest.raises(
            AttentionInputError,
            match=r"attn_mask of shape .* does not broadcast to \(2, 3, 5, 6\) "
            r"\(\.\.\., queries, keys\); expected a shape such as \(5, 6\), "
            r"\(2, 1, 1, 6\), \(2, 1, 5, 6\), \(2, 3, 5, 6\)",
        ) as info:
            attend(q, k, v, attn_mask=torch.ones(bad, dtype=torch.bool))
        assert info.value.field == "mask"


def test_bad_additive_values_and_dtypes_are_refused():
    q, k, v = qkv()
    for value in (float("nan"), float("inf")):
        with pytest.raises(AttentionInputError, match="attn_mask contains NaN or \\+inf"):
            attend(q, k, v, attn_mask=torch.full((L, S), value))
    with pytest.raises(AttentionInputError, match="attn_mask must be a boolean tensor .* attention_mask="):
        attend(q, k, v, attn_mask=torch.ones(L, S, dtype=torch.uint8))
    with pytest.raises(AttentionInputError, match="attn_mask must be a numeric tensor or array; got str"):
        attend(q, k, v, attn_mask="causal")


# ----------------------------------------------------------------------------- findings


def kinds(r):
    return [f.kind for f in r.diagnostics.findings]


def test_a_zero_one_float_passed_as_additive_is_reported():
    q, k, v = qkv()
    keep = torch.tensor([[1.0] * 4 + [0.0] * 2, [1.0] * 6])
    r = attend(q, k, v, attn_mask=keep[:, None, None, :])
    assert kinds(r) == ["float01_additive"]
    assert (
        "attn_mask is a float mask of 0s and 1s, which is added to the scores: it masks nothing"
        in r.diagnostics.warnings[0]
    )
    assert (r.weights[0, ..., 4:] > 0).all()  # masked nothing, as declared: added
    r = attend(q, k, v, key_padding_mask=1.0 - keep)
    assert kinds(r) == ["float01_additive"] and "(True = ignore)" in r.diagnostics.warnings[0]
    assert kinds(attend(q, k, v, attn_mask=torch.zeros(L, S))) == []  # all zero: a no-op, not a mistake


def test_an_inverted_padding_mask_that_hides_a_whole_sequence_is_reported():
    q, k, v = qkv()
    attend_mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])  # HF: 1 = attend
    # Passed as key_padding_mask (True = ignore): hides the real tokens, keeps the padding.
    r = attend(q, k, v, key_padding_mask=attend_mask.bool())
    assert kinds(r) == ["hides_whole_sequence"]
    f = r.diagnostics.findings[0]
    assert f.argument == "key_padding_mask" and f.batch_elements == (1,)
    assert "key_padding_mask hides every key of batch element(s) 1" in f.message
    assert "key_padding_mask reads True as ignore" in f.message and f.message in r.diagnostics.warnings
    # The right polarity: nothing to report.
    assert kinds(attend(q, k, v, key_padding_mask=attend_mask == 0)) == []
    assert kinds(attend(q, k, v, attention_mask=attend_mask)) == []
    # Inverted HF mask: 0 = attend read as 1 = attend.
    assert kinds(attend(q, k, v, attention_mask=1 - attend_mask)) == ["hides_whole_sequence"]
    assert kinds(attend(q, k, v, attn_mask=additive(attend_mask == 0, MIN)[:, None, None, :])) == [
        "hides_whole_sequence",
        "fill_only_rows",
    ]


def test_padding_declarations_that_are_opposites_are_reported():
    q, k, v = qkv()
    vl = torch.tensor([4, 3])  # every sequence padded: no whole sequence hidden by either mask
    padding = torch.arange(S)[None, :] >= vl[:, None]
    r = attend(q, k, v, vl, key_padding_mask=~padding)  # the padding mask is inverted
    assert kinds(r) == ["padding_inverted"]
    assert r.diagnostics.findings[0].batch_elements == (0, 1)
    assert (
        "valid_lens and key_padding_mask keep opposite keys of batch element(s) 0, 1"
        in r.diagnostics.findings[0].message
    )
    assert r.diagnostics.findings[0].message in r.diagnostics.warnings
    assert kinds(attend(q, k, v, vl, key_padding_mask=padding)) == []
    # The check the UI can run with the padding its token labels reveal:
    # a mask that lets each element attend exactly its padding, and one that is right.
    assert inverted_padding(padding, padding).tolist() == [True, True]
    assert inverted_padding(~padding, padding).tolist() == [False, False]


def test_additive_fills_that_overflow_in_half_precision_are_reported():
    q, k, v = qkv()
    allowed = torch.tensor([[True] * 4 + [False] * 2, [False] * 6])[:, None, None, :]
    mask = additive(allowed, MIN)
    for dtype in ("float16", "bfloat16"):
        r = attend(q, k, v, attn_mask=mask, dtype=dtype, mask_mode="sdpa")
        assert kinds(r)[0] == "additive_overflow" and r.diagnostics.findings[0].count == 8
        assert (
            f"8 finite values of attn_mask are beyond {dtype}'s range and became -inf"
            in r.diagnostics.findings[0].message
        )
        assert r.diagnostics.findings[0].message in r.diagnostics.warnings
        # Batch element 1 lost every key to -inf: an empty row now, zero weights under "sdpa".
        assert r.diagnostics.empty_rows[1].all() and (r.weights[1] == 0).all()
    assert kinds(
        attend(q, k, v, attn_mask=additive(allowed, torch.finfo(torch.float16).min), dtype="float16", mask_mode="sdpa")
    ) == ["hides_whole_sequence", "fill_only_rows"]
    both = attend(q, k, v, attn_mask=mask, key_padding_mask=additive(~allowed[:, 0, 0], MIN).float())
    assert "additive_sum_overflow" in kinds(both)


def test_every_finding_kind_is_documented():
    assert set(MASK_FINDING_KINDS) == {
        "float01_additive",
        "additive_overflow",
        "additive_sum_overflow",
        "hides_whole_sequence",
        "padding_inverted",
        "fill_only_rows",
    }


@pytest.mark.parametrize("mode", list(MASK_MODES))
def test_modes_apply_to_boolean_sources_and_add_the_bias_in_every_mode(mode):
    q, k, v = qkv()
    bias = torch.randn(L, S, generator=torch.Generator().manual_seed(9)).clamp(max=0)
    vl = torch.tensor([3, 6])
    with_bias = attend(q, k, v, vl, attn_mask=bias, mask_mode=mode)
    without = attend(q, k, v, vl, mask_mode=mode)
    torch.testing.assert_close(
        with_bias.masked_scores, MASK_MODES[mode].apply(without.scores + bias, without.mask), equal_nan=True
    )


def test_a_row_emptied_by_an_additive_mask_is_not_blamed_on_the_fill():
    q, k, v = qkv()
    allowed = random_mask((B, 1, L, S))
    allowed[1, 0, 2] = False
    r = attend(q, k, v, attn_mask=additive(allowed, float("-inf")))  # the book's mode: no boolean mask to fill
    assert torch.isnan(r.weights[1, :, 2]).all() and r.diagnostics.empty_rows.sum() == H
    assert r.diagnostics.warnings == (f"{H} rows of weights contain NaN",)
    with_lens = attend(q, k, v, torch.tensor([0, 6]), attn_mask=additive(allowed, float("-inf")))
    assert any("the book's -1e6 fill gives them uniform weights" in w for w in with_lens.diagnostics.warnings)
