"""Attention functions imported by name are recorded (issue 33; before: 0 calls, and the
warning said the model called neither SDPA nor flex_attention).

``from torch.nn.attention.flex_attention import flex_attention`` and
``from torch.nn.functional import scaled_dot_product_attention``, held at module level, in a
closure and in a helper module other than the model's, with and without a model given to
``capture``: each call recorded once (the attribute call too, never twice), recomputed within
1e-5, and PyTorch left as it was after the capture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

import attnviz

flex = pytest.importorskip("torch.nn.attention.flex_attention")

from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: E402
from torch.nn.functional import scaled_dot_product_attention  # noqa: E402

from . import name_imports  # noqa: E402

ATOL = 1e-5


def closure() -> Callable[[torch.Tensor], tuple[Any, Any]]:
    """The functions held only by a closure's cells."""
    held_flex, held_sdpa = flex_attention, scaled_dot_product_attention

    def attend(q: torch.Tensor) -> tuple[Any, Any]:
        return held_flex(q, q, q, score_mod=shift), held_sdpa(q, q, q, is_causal=True)

    return attend


def shift(score: torch.Tensor, b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor):
    return score + 0.25 * (kv_idx - q_idx)


def causal(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
    return kv_idx <= q_idx


class HelperModel(nn.Module):
    """A model whose attention runs in a helper module other than the one defining its class."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, q: torch.Tensor, block_mask: object) -> tuple[Any, Any]:
        q = self.proj(q)
        return name_imports.run_flex(q, q, q, block_mask=block_mask), name_imports.run_sdpa(q, q, q)


@pytest.fixture(scope="module")
def queries() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(1, 2, 16, 8)


@pytest.mark.parametrize("with_model", [False, True], ids=["no model", "a model"])
def test_name_imported_calls_in_a_closure_and_a_helper_module_are_recorded_once(queries, with_model) -> None:
    model = HelperModel().eval() if with_model else None
    attend = closure()
    block_mask = create_block_mask(causal, None, None, 16, 16, device="cpu", BLOCK_SIZE=8)
    with torch.no_grad(), attnviz.capture(model) as cap:
        attend(queries)
        name_imports.run_flex(queries, queries, queries, block_mask=block_mask)
        name_imports.run_sdpa(queries, queries, queries, scale=0.5)
        torch.nn.functional.scaled_dot_product_attention(queries, queries, queries)
        flex.flex_attention(queries, queries, queries)
        if model is not None:
            model(queries, block_mask)
    kinds = [call.kind for call in cap.calls]
    expected = ["flex_attention", "scaled_dot_product_attention"] * 2
    expected += ["scaled_dot_product_attention", "flex_attention"]
    if model is not None:
        expected += ["flex_attention", "scaled_dot_product_attention"]
    assert kinds == expected, (kinds, cap.warnings)
    assert not cap.warnings
    for call in cap.calls:
        assert call.fidelity is not None and call.fidelity <= ATOL, (call.name, call.fidelity)
    assert [t.kind for t in cap.calls[0].terms] == ["score_mod"] and cap.calls[2].mask_mod is causal
    assert cap.calls[3].scale == 0.5
    if model is not None:
        assert cap.calls[-2].name.startswith("HelperModel"), cap.calls[-2].name


def test_pytorch_is_left_as_it_was_after_the_capture(queries) -> None:
    code = flex_attention.__code__
    with attnviz.capture() as cap:
        flex_attention(queries, queries, queries)
        assert flex_attention.__code__ is not code  # hooked while open
    assert len(cap.calls) == 1
    assert flex_attention.__code__ is code and flex.flex_attention is flex_attention
    assert "__signature__" not in flex_attention.__dict__
    assert torch.nn.functional.scaled_dot_product_attention is scaled_dot_product_attention
    assert not torch.overrides._is_torch_function_mode_enabled()
    # Outside a capture nothing is recorded and nothing is wrapped.
    with attnviz.capture() as later:
        pass
    scaled_dot_product_attention(queries, queries, queries)
    assert later.calls == []


def test_a_hand_built_block_table_on_the_cpu_is_said_and_recomputed_as_it_ran(monkeypatch) -> None:
    monkeypatch.setattr(flex, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)
    # PyTorch's CPU flex_attention computes every block a table skips: the call says so, and is
    # recomputed as it ran (its mask_mod alone), where a GPU call would be masked by the table.
    q, k, v = torch.randn(3, 2, 4, 16, 8, generator=torch.Generator().manual_seed(0))
    table = flex.BlockMask.from_kv_blocks(
        torch.ones(1, 1, 2, dtype=torch.int32),
        torch.tensor([[[[0, 0], [1, 0]]]], dtype=torch.int32),
        BLOCK_SIZE=8,
        seq_lengths=(16, 16),
    )
    with torch.no_grad(), attnviz.capture() as cap:
        flex.flex_attention(q, k, v, block_mask=table)
    (call,) = cap.calls
    assert "on the CPU flex_attention computed every block" in call.note, call.note
    assert call.mask_mod is None and call.fidelity is not None and call.fidelity <= ATOL
