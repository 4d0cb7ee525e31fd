"""Every attn-gym mask_mod and score_mod through ``attend`` and the long-context ``overview``,
against the dense reference FlexAttention's own functions give (issue 33): within 1e-5 (float32
inputs, softmax compared in float64; the reference is itself checked against ``flex_attention``
in tests/capture/test_capture_attn_gym.py).

Before: a mask_mod written for scalars (attn-gym's Flamingo cross-attention mask, any
``dense[b][h][q_idx][kv_idx]``) failed with an expand or size error, here and in a capture.
"""

from __future__ import annotations

import pytest
import torch

from attnviz.engine import attend, overview, tile
from attnviz.engine.errors import AttentionInputError
from attnviz.engine.mask_mods import MaskMod
from attnviz.engine.score_terms import ScoreMod

from .. import attn_gym_cases as cases

ATOL = 1e-5
SCALE = 0.35


@pytest.mark.parametrize("case", cases.MASK_CASES, ids=lambda c: c.name)
def test_every_attn_gym_mask_mod_through_attend_and_the_overview(case: cases.Case) -> None:
    fn = case.make()
    q, k, v = cases.qkv(case.n_q, case.n_k)
    expected, _output = cases.reference(q, k, v, mask_mod=fn, scale=SCALE)
    result = attend(q, k, v, mask_mode="sdpa", scale=SCALE, mask=MaskMod(fn), allow_nonfinite=True, keep="weights")
    weights = torch.as_tensor(result.weights).double().nan_to_num(0.0)
    torch.testing.assert_close(weights, expected, atol=ATOL, rtol=0)
    # The overview at one cell a bin is the matrix itself: batch 1, head 2 (per-(b, h) masks differ).
    ov = overview(q, k, mask=MaskMod(fn), bins=(case.n_q, case.n_k), scale=SCALE, batch=1, head=2)
    torch.testing.assert_close(ov.mean.double(), expected[1, 2], atol=ATOL, rtol=0)
    dense = cases.dense_mask(fn, case.n_q, case.n_k)[1, 2]
    assert torch.equal(ov.masked_share == 0, dense)


@pytest.mark.parametrize("case", cases.SCORE_CASES, ids=lambda c: c.name)
def test_every_attn_gym_score_mod_through_attend(case: cases.Case) -> None:
    fn = case.make()
    q, k, v = cases.qkv(case.n_q, case.n_k)
    expected, output = cases.reference(q, k, v, score_mod=fn, scale=SCALE)
    result = attend(q, k, v, mask_mode="sdpa", scale=SCALE, score_terms=ScoreMod(fn), keep=("weights", "output"))
    torch.testing.assert_close(torch.as_tensor(result.weights).double(), expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(torch.as_tensor(result.output).double(), output, atol=ATOL, rtol=0)


@pytest.mark.parametrize("case", cases.SCORE_CASES, ids=lambda c: c.name)
def test_every_attn_gym_score_mod_in_the_overview_and_a_tile(case: cases.Case) -> None:
    # Before: overview and tile took no score terms (ALiBi or soft-capping drawn 0.14-0.95 off).
    fn = case.make()
    q, k, v = cases.qkv(case.n_q, case.n_k)
    causal = cases.masks.causal_mask
    expected, _output = cases.reference(q, k, v, score_mod=fn, mask_mod=causal, scale=SCALE)
    ov = overview(
        q, k, mask=MaskMod(causal), score_terms=ScoreMod(fn), bins=(case.n_q, case.n_k), scale=SCALE, batch=1, head=2
    )
    torch.testing.assert_close(ov.mean.double(), expected[1, 2], atol=ATOL, rtol=0)
    region = tile(q, k, ov, slice(5, 30), slice(3, 17))
    torch.testing.assert_close(region.weights.double(), expected[1, 2, 5:30, 3:17], atol=ATOL, rtol=0)


def test_native_score_terms_in_the_overview_equal_attends() -> None:
    from attnviz.engine.score_terms import Alibi, ScoreBias, SoftCap, alibi_slopes

    q, k, v = cases.qkv(40, 40)
    bias = torch.randn(cases.H, 40, 40, generator=torch.Generator().manual_seed(9))
    terms = [ScoreBias(bias), Alibi(alibi_slopes(cases.H)), SoftCap(3.0)]
    weights = attend(q, k, v, mask_mode="sdpa", scale=SCALE, causal=True, score_terms=terms, keep="weights").weights
    ov = overview(q, k, causal=True, score_terms=terms, bins=(40, 40), scale=SCALE, batch=1, head=3, block_size=8)
    torch.testing.assert_close(ov.mean.double(), torch.as_tensor(weights)[1, 3].double(), atol=ATOL, rtol=0)


def test_a_mask_mod_indexing_a_tensor_per_element_is_evaluated_as_flex_attention_does() -> None:
    g = torch.Generator().manual_seed(5)
    table = torch.rand(cases.B, cases.H, 12, 20, generator=g) > 0.4

    def per_element(b, h, q_idx, kv_idx):
        return table[b][h][q_idx][kv_idx]

    q, k, v = cases.qkv(12, 20)
    result = attend(q, k, v, mask_mode="sdpa", mask=MaskMod(per_element), allow_nonfinite=True, keep="mask")
    assert torch.equal(torch.as_tensor(result.mask).bool(), table)


def test_a_mask_mod_that_fails_under_vmap_too_is_one_line_naming_it() -> None:
    def broken(b, h, q_idx, kv_idx):
        if q_idx > kv_idx:  # Python control flow on a tensor: FlexAttention refuses it as well
            return q_idx >= 0
        return kv_idx >= 0

    q, k, v = cases.qkv(8, 8)
    with pytest.raises(AttentionInputError, match=r"^mask_mod failed: .+") as info:
        attend(q, k, v, mask_mode="sdpa", mask=MaskMod(broken))
    assert "\n" not in str(info.value)


def test_each_window_convention_is_read_by_its_constructor() -> None:
    from attn_gym.masks import generate_sliding_window

    masking_utils = pytest.importorskip("transformers.masking_utils")

    from attnviz.engine.mask_mods import SlidingWindow

    n, window = 40, 6
    rows, cols = torch.arange(n)[:, None], torch.arange(n)[None, :]
    gym = cases.flex.create_mask(generate_sliding_window(window), 1, 1, n, n, device="cpu")[0, 0]
    hf_fn = masking_utils.and_masks(masking_utils.causal_mask_function, masking_utils.sliding_window_overlay(window))
    zero = torch.tensor(0)
    hf = hf_fn(zero, zero, rows, cols).expand(n, n)  # transformers' own functions, on index tensors
    ones = torch.ones(n, n)
    mistral = torch.triu(torch.tril(ones, diagonal=0), diagonal=-window).bool()  # Mistral's reference code
    for made, expected, keys in (
        (SlidingWindow.from_flex_attention(window), gym, window + 1),
        (SlidingWindow.from_hugging_face(window), hf, window),
        (SlidingWindow.from_mistral(window), mistral, window + 1),
    ):
        assert torch.equal(made.dense(n, n), expected)
        assert int(expected[-1].sum()) == keys
    assert torch.equal(SlidingWindow(window + 1, causal=True).dense(n, n), gym)  # the example


@pytest.mark.parametrize("case", cases.MASK_CASES, ids=lambda c: c.name)
def test_every_attn_gym_mask_mod_is_classified_soundly_on_ranges_or_left_to_its_cells(case: cases.Case) -> None:
    from .test_mask_intervals import check_bounds

    fn = case.make()
    check_bounds(fn, case.n_q, case.n_k, 8)


def _names(fn: object) -> set[str]:
    """The global and attribute names ``fn`` uses, with those of the cases module's own helpers it calls."""
    code = fn.__code__  # type: ignore[attr-defined]
    out = set(code.co_names)
    for name in code.co_names:
        helper = getattr(cases, name, None)
        if callable(helper) and getattr(helper, "__module__", "") == cases.__name__ and hasattr(helper, "__code__"):
            out |= _names(helper)
    return out


def test_every_mask_mod_and_score_mod_attn_gym_ships_is_a_case() -> None:
    # Issue 33's "every attn-gym mask_mod and score_mod": the generators attn-gym 0.0.17 ships,
    # each used by a case (the two once left out, MLA's rope score_mod and Graphormer's edge
    # bias, pass every check the others do), so a new one in a later attn-gym is not missed.
    shipped = {name for name in dir(cases.masks) if name.startswith("generate_")} | {"causal_mask"}
    shipped |= {name for name in dir(cases.mods) if name.startswith("generate_")}
    used: set[str] = set()
    for case in (*cases.MASK_CASES, *cases.SCORE_CASES):
        used |= _names(case.make)
    assert shipped - used - set(cases.LEFT_OUT) == set()
    assert {"generate_mla_rope_score_mod", "generate_graphormer_edge_bias"} <= used
