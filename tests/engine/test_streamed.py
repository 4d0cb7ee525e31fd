"""``engine.streamed.weight_blocks``: the weights a comparison streams are ``attend``'s, block by
block, for every mask form, score term, mask mode and grouped-query layout."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from attnviz.engine import Alibi, MaskMod, ScoreBias, ScoreMod, Sinks, SlidingWindow, SoftCap, attend
from attnviz.engine.streamed import weight_blocks
from tests.float_tolerance import assert_reordered_close

B, H, Q, K, D = 2, 4, 7, 9, 3


def _inputs(dtype: torch.dtype = torch.float32, kv_heads: int = H, n_q: int = Q, n_k: int = K, d: int = D):
    g = torch.Generator().manual_seed(5)
    q = torch.randn(B, H, n_q, d, generator=g).to(dtype)
    k = torch.randn(B, kv_heads, n_k, d, generator=g).to(dtype)
    v = torch.randn(B, kv_heads, n_k, 2, generator=g).to(dtype)
    return q, k, v


def _masks() -> dict[str, dict[str, Any]]:
    g = torch.Generator().manual_seed(9)
    boolean = torch.rand(B, H, Q, K, generator=g) > 0.4
    boolean[0, 1, 2] = False  # a row with no key: its weights are 0 under "sdpa"
    additive = torch.randn(B, 1, Q, K, generator=g)
    additive[1, 0, 3] = -torch.inf  # an additive -inf row empties it too
    additive[0, 0, :, 4] = -torch.inf
    return {
        "none": {},
        "causal top-left": {"causal": "top_left"},
        "causal bottom-right": {"causal": "bottom_right"},
        "boolean per head": {"attn_mask": boolean},
        "additive with -inf": {"attn_mask": additive},
        "padding both ways": {
            "key_padding_mask": torch.arange(K)[None, :] >= torch.tensor([[K], [K - 3]]),
            "attention_mask": (torch.arange(K)[None, :] < torch.tensor([[K - 1], [K]])).long(),
        },
        "mask_mod by head": {"mask": MaskMod(lambda b, h, q, kv: (kv <= q) | (h == 1))},
        "window and boolean": {"mask": SlidingWindow(3, causal=True), "attn_mask": boolean},
        "causal with additive": {"causal": True, "attn_mask": additive},
    }


def _terms() -> dict[str, list[Any]]:
    g = torch.Generator().manual_seed(2)
    return {
        "bias per head": [ScoreBias(torch.randn(1, H, Q, K, generator=g))],
        "soft cap then ALiBi": [SoftCap(2.0), Alibi(torch.tensor([0.5, 0.25, 0.125, 0.0625]))],
        "score_mod": [ScoreMod(lambda s, b, h, q, kv: s + 0.1 * h * (q - kv))],
        "sinks": [Sinks(torch.tensor([0.0, 1.0, -1.0, 3.0]))],
    }


def _streamed(q, k, v, rows: int | None, **kwargs: Any) -> torch.Tensor:
    lead = q.shape[:-2]
    n = int(torch.tensor(lead).prod())
    out = torch.zeros((n, q.shape[-2], k.shape[-2]), dtype=torch.float64)
    written = torch.zeros((n, q.shape[-2]), dtype=torch.int64)
    seen = []
    for element, r0, r1, block in weight_blocks(q, k, v, rows=rows, **kwargs):
        seen.append((element, r0))
        out[element, r0:r1] = block.double()
        written[element, r0:r1] += 1
    # Every row of every element once, element by element and rows in order.
    assert seen == sorted(seen) and bool((written == 1).all())
    return out.reshape(*lead, q.shape[-2], k.shape[-2])


def _attend(q, k, v, **kwargs: Any) -> torch.Tensor:
    kwargs.setdefault("mask_mode", "sdpa")
    return attend(q, k, v, keep=(), allow_nonfinite=True, **kwargs).weights.double()


@pytest.mark.parametrize("name", list(_masks()))
@pytest.mark.parametrize("rows", [1, 3, None])
def test_every_mask_form_gives_attends_weights(name: str, rows: int | None) -> None:
    q, k, v = _inputs()
    kwargs = _masks()[name]
    assert_reordered_close(_streamed(q, k, v, rows, **kwargs).float(), _attend(q, k, v, **kwargs).float(), name)


@pytest.mark.parametrize("name", list(_terms()))
def test_every_score_term_gives_attends_weights(name: str) -> None:
    q, k, v = _inputs()
    kwargs = {"score_terms": _terms()[name], "attn_mask": _masks()["boolean per head"]["attn_mask"]}
    assert_reordered_close(_streamed(q, k, v, 2, **kwargs).float(), _attend(q, k, v, **kwargs).float(), name)


@pytest.mark.parametrize("mode", ["d2l", "strict", "neg_inf", "sdpa", "float01", "inverted"])
def test_every_mask_mode_gives_attends_weights(mode: str) -> None:
    q, k, v = _inputs()
    kwargs = {"attn_mask": _masks()["boolean per head"]["attn_mask"], "mask_mode": mode}
    assert_reordered_close(_streamed(q, k, v, 4, **kwargs).float(), _attend(q, k, v, **kwargs).float(), mode)


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_grouped_query_heads_share_their_keys_as_in_attend(kv_heads: int) -> None:
    q, k, v = _inputs(kv_heads=kv_heads)
    kwargs = {"enable_gqa": True, "causal": True}
    assert_reordered_close(_streamed(q, k, v, 3, **kwargs).float(), _attend(q, k, v, **kwargs).float())


@pytest.mark.parametrize(
    ("dtype", "kwargs"),
    [
        (torch.float64, {"scale": 0.3}),
        (torch.float32, {"scale": 1.0}),  # a scale of 1: the multiplication is skipped
        (torch.float16, {"dtype": torch.float32}),  # half precision computed in float32, as captures are
    ],
)
def test_scale_and_dtype_as_in_attend(dtype: torch.dtype, kwargs: dict[str, Any]) -> None:
    q, k, v = _inputs(dtype)
    streamed = next(weight_blocks(q, k, v, rows=Q, **kwargs))[3]
    expected = attend(q, k, v, keep=(), mask_mode="sdpa", **kwargs).weights
    assert streamed.dtype == expected.dtype
    assert_reordered_close(streamed, expected[0, 0])


def test_one_dimension_is_not_divided_and_keeps_attends_values() -> None:
    # d = 1: sqrt(d) = 1, the division skipped; the weights are still attend's.
    q, k, v = _inputs(d=1)
    assert_reordered_close(_streamed(q, k, v, None).float(), _attend(q, k, v).float())


def test_blocks_are_a_few_rows_of_long_keys_never_the_matrix() -> None:
    q, k, v = _inputs(n_q=600, n_k=5000)
    shapes = {tuple(block.shape) for _e, _r0, _r1, block in weight_blocks(q[:1, :1], k[:1, :1], v[:1, :1])}
    # 2^18 weights a block: 52 rows of 5000 keys (the last block shorter).
    assert max(rows for rows, _keys in shapes) * 5000 <= 1 << 18 and {keys for _rows, keys in shapes} == {5000}


def test_refusals_are_attends() -> None:
    q, k, v = _inputs()
    from attnviz.engine import AttentionInputError

    with pytest.raises(AttentionInputError, match="scale"):
        next(weight_blocks(q, k, v, scale=-1.0))
    with pytest.raises(AttentionInputError):
        next(weight_blocks(q, k[..., :2], v))
