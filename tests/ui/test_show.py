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


@pytest.mark.parametrize("form", ["block_mask", "mask_mod", "description"])
def test_show_takes_a_block_mask_a_mask_mod_and_a_description_as_mask(qtbot, form):
    # Issue 33: attnviz.show accepts wherever a mask is what attend(mask=) takes. The expected
    # weights are SDPA's with the dense mask each form amounts to, built here by hand.
    import torch

    import attnviz
    from attnviz.engine import SlidingWindow

    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    n, block = 16, 4
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 2, n, 8), torch.randn(1, 2, n, 8), torch.randn(1, 2, n, 8)
    rows, cols = torch.arange(n)[:, None], torch.arange(n)[None, :]
    if form == "block_mask":
        # A table built by hand (mask_mod = noop): each query block sees its own block and block 0.
        n_b = n // block
        listed = [sorted({0, i}) for i in range(n_b)]
        mask = flex.BlockMask.from_kv_blocks(
            torch.tensor([[[len(ks) for ks in listed]]], dtype=torch.int32),
            torch.tensor([[[ks + [0] * (n_b - len(ks)) for ks in listed]]], dtype=torch.int32),
            BLOCK_SIZE=block,
            seq_lengths=(n, n),
        )
        allowed = (cols // block == rows // block) | (cols < block)
    elif form == "mask_mod":

        def mask(b, h, q_idx, kv_idx):
            return (kv_idx <= q_idx) & (q_idx - kv_idx < 3)

        allowed = (cols <= rows) & (rows - cols < 3)
    else:
        mask = SlidingWindow(3, causal=True)
        allowed = (cols <= rows) & (rows - cols < 3)
    window = attnviz.show(q, k, v, mask=mask, head=1, block=False)
    _close(qtbot, window)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    np.testing.assert_allclose(window.session.current_view().output, expected[:, 1].numpy(), atol=1e-5)
    assert window.session.document.state.run.calls[0].masks.mask_mod is not None


def test_save_session_keeps_a_mask_given_as_a_mask_mod(tmp_path):
    # A session keeps arrays: the mask_mod as the boolean attn_mask it amounts to (before, a live
    # mask_mod was dropped from the session in silence).
    import attnviz
    from attnviz.io.session_state import load_state_and_focus

    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 6, 4)).astype(np.float32) for _ in range(3))

    def banded(b, h, q_idx, kv_idx):
        return abs(q_idx - kv_idx) <= h

    path = attnviz.save_session(tmp_path / "banded.attnviz", q, k, v, mask=banded)
    state, _focus = load_state_and_focus(path)
    kept = np.asarray(state.run.calls[0].masks.attn_mask)
    rows, cols = np.arange(6)[:, None], np.arange(6)[None, :]
    assert kept.dtype == np.bool_ and kept.shape == (1, 2, 6, 6)
    for h in range(2):
        assert np.array_equal(kept[0, h], np.abs(rows - cols) <= h)
