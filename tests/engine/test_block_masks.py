"""A FlexAttention ``BlockMask`` and a bare mask_mod are accepted wherever a mask is, and the
blocks a block table leaves out are masked as the kernel skips them (issue 33; before: refused,
and a table built with ``mask_mod = noop`` was ignored in silence, up to 0.68 of a row's weight
shown in blocks the kernel never computed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.engine import attend, overview
from attnviz.engine.errors import AttentionInputError

flex = pytest.importorskip("torch.nn.attention.flex_attention")

ATOL = 1e-5
B, H, N, D, BLOCK = 1, 2, 32, 8, 8


def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


@pytest.fixture(autouse=True)
def eager_flex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(flex, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


def _qkv() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, N, D, generator=g) for _ in range(3))  # type: ignore[return-value]


def _listed(h: int, i: int) -> list[int]:
    """The key blocks query block ``i`` of head ``h`` lists: its own and the first (a block-local
    pattern with global keys), head 1 also the one before its own."""
    return sorted({0, i, max(0, i - h)})


def _hand_built_table() -> object:
    """A block table built by hand, mask_mod = noop."""
    n_b = N // BLOCK
    indices = [[_listed(h, i) + [0] * (n_b - len(_listed(h, i))) for i in range(n_b)] for h in range(H)]
    counts = [[len(_listed(h, i)) for i in range(n_b)] for h in range(H)]
    return flex.BlockMask.from_kv_blocks(
        torch.tensor([counts], dtype=torch.int32),
        torch.tensor([indices], dtype=torch.int32),
        BLOCK_SIZE=BLOCK,
        seq_lengths=(N, N),
    )


def test_a_hand_built_block_table_masks_the_blocks_the_kernel_skips() -> None:
    # The reference: the table's blocks as FlexAttention's GPU kernels compute them (PyTorch's
    # CPU implementation computes every block, so flex_attention here is no reference for it).
    q, k, v = _qkv()
    allowed = torch.zeros(B, H, N, N, dtype=torch.bool)
    for h in range(H):
        for i in range(N // BLOCK):
            for j in _listed(h, i):
                allowed[:, h, i * BLOCK : (i + 1) * BLOCK, j * BLOCK : (j + 1) * BLOCK] = True
    scores = (q.double() @ k.double().transpose(-1, -2)) * D**-0.5
    expected = torch.softmax(scores.masked_fill(~allowed, -torch.inf), -1)
    block_mask = _hand_built_table()
    result = attend(q, k, v, mask_mode="sdpa", mask=block_mask, keep=("weights", "output"))
    weights = torch.as_tensor(result.weights)
    torch.testing.assert_close(weights.double(), expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(torch.as_tensor(result.output).double(), expected @ v.double(), atol=ATOL, rtol=0)
    ov = overview(q, k, mask=block_mask, bins=(N, N), head=1)
    torch.testing.assert_close(ov.mean.double(), expected[0, 1], atol=ATOL, rtol=0)


def test_a_block_mask_from_create_block_mask_and_a_bare_mask_mod_read_the_same() -> None:
    q, k, v = _qkv()
    block_mask = flex.create_block_mask(causal, None, None, N, N, device="cpu", BLOCK_SIZE=BLOCK)
    expected = flex.flex_attention(q, k, v, block_mask=block_mask)
    for mask in (block_mask, causal):
        result = attend(q, k, v, mask_mode="sdpa", mask=mask, keep="output")
        torch.testing.assert_close(torch.as_tensor(result.output), expected, atol=ATOL, rtol=0)


def test_anything_else_as_a_mask_is_one_line() -> None:
    q, k, v = _qkv()
    with pytest.raises(
        AttentionInputError,
        match=r"^a mask combines Mask descriptions only \(or a FlexAttention BlockMask, a mask_mod function\); got str",
    ):
        attend(q, k, v, mask="causal")  # type: ignore[arg-type]


def _expected(allowed: torch.Tensor, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    scores = (q.double() @ k.double().transpose(-1, -2)) * D**-0.5
    return torch.softmax(scores.masked_fill(~allowed, -torch.inf), -1)


def _table_allowed() -> torch.Tensor:
    allowed = torch.zeros(B, H, N, N, dtype=torch.bool)
    for h in range(H):
        for i in range(N // BLOCK):
            for j in _listed(h, i):
                allowed[:, h, i * BLOCK : (i + 1) * BLOCK, j * BLOCK : (j + 1) * BLOCK] = True
    return allowed


@pytest.mark.parametrize("form", ["block_mask", "mask_mod"])
def test_every_engine_entry_that_takes_a_mask_takes_a_block_mask_and_a_mask_mod(form: str) -> None:
    # Issue 33: "a BlockMask and a bare mask_mod accepted wherever a mask is". Each entry is
    # checked against the mask it must amount to, built here by hand.
    from attnviz.engine import make_mask, tile, weight_row
    from attnviz.engine.lab import compare_conventions
    from attnviz.engine.mask_spec import AttnMask
    from attnviz.engine.scaling import current_point, tanh_saturation

    q, k, v = _qkv()
    if form == "block_mask":
        mask, allowed = _hand_built_table(), _table_allowed()
    else:
        mask, allowed = causal, torch.ones(N, N, dtype=torch.bool).tril().expand(B, H, N, N)
    expected = _expected(allowed, q, k)
    # make_mask: the description's dense mask per head.
    for h in range(H):
        assert torch.equal(make_mask(mask=mask).dense(N, N, head=h), allowed[0, h])
    # overview, then tile and weight_row from its statistics (a tile's mask is its overview's).
    for h in range(H):
        ov = overview(q, k, mask=mask, bins=(N, N), head=h)
        torch.testing.assert_close(ov.mean.double(), expected[0, h], atol=ATOL, rtol=0)
        region = tile(q, k, ov, slice(3, 20), slice(0, 30))
        torch.testing.assert_close(region.weights.double(), expected[0, h, 3:20, :30], atol=ATOL, rtol=0)
        assert torch.equal(region.allowed, allowed[0, h, 3:20, :30])
        torch.testing.assert_close(weight_row(q, k, ov, 17).double(), expected[0, h, 17], atol=ATOL, rtol=0)
    # The masking lab (through attend): its reference mode's mask is the given one.
    report = compare_conventions(q[:, 0], k[:, 0], v[:, 0], mask=mask)  # (B, L, d): head 0's mask
    assert torch.equal(report.allowed, allowed[:, 0])
    # The scaling lab's statistics count the allowed pairs only: the same as the dense mask's.
    q3, k3, head0 = q[:, 0], k[:, 0], AttnMask(allowed[:, 0])
    assert current_point(q3, k3, mask=mask) == current_point(q3, k3, mask=head0)
    saturation = tanh_saturation(q3, k3, mask=mask)
    dense = tanh_saturation(q3, k3, mask=head0)
    assert saturation.n_values == dense.n_values and np.array_equal(saturation.pre_counts, dense.pre_counts)
