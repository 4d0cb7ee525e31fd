"""attnviz.show: tensors, runs and files from a script open the window on them."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ui.conftest import wait_current


def _close(qtbot, window) -> None:
    qtbot.addWidget(window)
    wait_current(qtbot, window)


def test_show_tensors_with_heads_masks_and_tokens_without_blocking(qtbot):
    import torch

    import attnviz

    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    window = attnviz.show(q, k, v, attention_mask=mask, tokens=["a", "b", "c", "d", "e"], head=2, block=False)
    _close(qtbot, window)
    state = window.session.document.state
    assert (state.run.layers, state.run.heads(0), window.session.selection.head) == (1, 4, 2)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None].bool())
    np.testing.assert_allclose(window.session.current_view().output, expected[:, 2].numpy(), atol=1e-5)
    window.tool_tabs.setCurrentIndex(0)  # a run of heads opens on them; the main maps draw when shown
    assert window.results.maps[0].col_labels == ["a", "b", "c", "d", "e"]


def test_show_five_dimensional_tensors_gives_one_call_per_layer(qtbot):
    import attnviz

    rng = np.random.default_rng(0)
    qkv = [rng.standard_normal((3, 1, 2, 4, 8)).astype(np.float32) for _ in range(3)]
    window = attnviz.show(*qkv, is_causal=True, layer=1, block=False)
    _close(qtbot, window)
    state = window.session.document.state
    focus = window.session.selection.focus
    assert state.run.layers == 3 and focus.layer == 1 and state.head_view(focus).causal == "top_left"


def test_show_refuses_what_it_cannot_show_with_a_clear_error():
    from attnviz.cli.viewer import tensors_to_run

    with pytest.raises(ValueError, match="must be"):
        tensors_to_run(np.zeros(3), np.zeros(3), np.zeros(3))
    import attnviz

    with pytest.raises(TypeError, match="attnviz.show takes"):
        attnviz.show(42, block=False)
