"""FlexAttention calls are captured (issue 23; before: nothing, and the warning did not name it).

A module calling ``flex_attention`` with a causal + padding block mask and a ``score_mod`` is
recorded with its mask_mod, score_mod, scale and GQA, and recomputed to 1e-5; the same mask_mod
reaches the long-context overview through the app's state; a file keeps the mask it amounts
to. flex_attention runs eagerly on the CPU in torch 2.13 (a compile with the "eager" backend:
about a second the first time, no C++ compiler), which is what these tests use.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import attnviz
from attnviz.io import load_capture

flex = pytest.importorskip("torch.nn.attention.flex_attention")

ATOL = 1e-5
B, H, H_KV, N, D = 2, 4, 2, 24, 8
LENGTHS = torch.tensor([N, 15])


def causal_padding(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
    return (kv_idx <= q_idx) & (kv_idx < LENGTHS[b])


def relative(score: torch.Tensor, b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor):
    return score + 0.1 * (h + 1) * (kv_idx - q_idx)


class FlexLayer(nn.Module):
    """Projections, flex_attention (called through its module, as documented), an output."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(16, H * D)
        self.kv = nn.Linear(16, 2 * H_KV * D)

    def forward(self, x: torch.Tensor, block_mask: object) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q(x).view(b, n, H, D).transpose(1, 2)
        k, v = (t.view(b, n, H_KV, D).transpose(1, 2) for t in self.kv(x).chunk(2, -1))
        out = flex.flex_attention(q, k, v, score_mod=relative, block_mask=block_mask, scale=0.3, enable_gqa=True)
        return out.transpose(1, 2).reshape(b, n, H * D)


@pytest.fixture(scope="module")
def recorded() -> tuple[attnviz.capture.Capture, torch.Tensor]:
    torch.manual_seed(0)
    model = FlexLayer().eval()
    x = torch.randn(B, N, 16)
    block_mask = flex.create_block_mask(causal_padding, B, None, N, N, device="cpu", BLOCK_SIZE=8)
    with torch.no_grad():
        plain = model(x, block_mask)
        with attnviz.capture(model) as cap:
            out = model(x, block_mask)
    assert torch.equal(out, plain)
    return cap, x


def test_a_flex_call_with_a_block_mask_and_a_score_mod_is_recomputed(recorded):
    cap, _x = recorded
    (call,) = cap.calls
    assert call.kind == "flex_attention" and call.path.implementation == "flex_attention"
    assert call.mask_mod is causal_padding and [t.kind for t in call.terms] == ["score_mod"]
    assert call.scale == 0.3 and call.enable_gqa and call.keys.shape[1] == H_KV
    assert "blocks of 8 x 8" in call.note
    assert call.fidelity is not None and call.fidelity <= ATOL, call.fidelity
    # The weights attnviz computes: the causal + padding mask and the bias per head, as written.
    weights = call.weights()
    keys = torch.repeat_interleave(call.keys, H // H_KV, 1)
    scores = call.queries @ keys.transpose(-1, -2) * 0.3
    rows, cols = torch.arange(N)[:, None], torch.arange(N)[None, :]
    scores = scores + 0.1 * torch.arange(1, H + 1)[:, None, None] * (cols - rows)
    allowed = (cols <= rows) & (cols < LENGTHS[:, None, None, None])
    expected = torch.softmax(scores.masked_fill(~allowed, -torch.inf), -1)
    torch.testing.assert_close(weights, expected, atol=ATOL, rtol=0)
    assert not bool(weights[1, :, :, 15:].any())


def test_the_long_context_view_gets_the_same_mask_mod(recorded):
    from attnviz.compute.engine_args import state_mask
    from attnviz.engine import overview
    from attnviz.state.document import State

    cap, _x = recorded
    state = State.from_run(cap.to_run())
    view = state.head_view((0, 1))
    mask = state_mask(state, view)
    ov = overview(
        torch.from_numpy(view.queries), torch.from_numpy(view.keys), mask=mask, bins=(N, N), scale=0.3, batch=1
    )
    allowed = (torch.arange(N)[None, :] <= torch.arange(N)[:, None]) & (torch.arange(N)[None, :] < 15)
    np.testing.assert_array_equal(ov.masked_share.numpy() == 0, allowed.numpy())


def test_a_file_keeps_the_mask_and_the_bias_they_amount_to(recorded, tmp_path):
    cap, _x = recorded
    cap.save(tmp_path / "flex.attnviz-capture")
    run = load_capture(tmp_path / "flex.attnviz-capture")
    (call,) = run.calls
    assert call.masks.attn_mask.dtype == bool and call.masks.attn_mask.shape == (B, H, N, N)
    # The score_mod adds 0.1 (h + 1) (kv_idx - q_idx): recognised as ALiBi, kept as its slopes.
    assert [t.kind for t in call.terms] == ["alibi"] and call.fidelity <= ATOL
    np.testing.assert_allclose(call.terms[0].values, 0.1 * np.arange(1, H + 1), rtol=1e-6)
    from attnviz.capture import recompute_call

    weights, output = recompute_call(call)
    torch.testing.assert_close(weights, cap.calls[0].weights(), atol=ATOL, rtol=0)
    np.testing.assert_allclose(output.numpy(), call.output, atol=ATOL, rtol=0)
