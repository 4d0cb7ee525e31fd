"""The model-run data model: shapes checked, heads viewed without copies, edits written back."""

import numpy as np
import pytest

from attnviz.state.run import AttentionCall, MaskArguments, ModelRun, ModelRunError


def _call(h: int = 4, hkv: int = 2, name: str = "layer.0", **kw) -> AttentionCall:
    rng = np.random.default_rng(0)
    return AttentionCall(name, rng.random((2, h, 3, 5)), rng.random((2, hkv, 6, 5)), rng.random((2, hkv, 6, 7)), **kw)


def test_a_head_view_slices_the_head_and_its_key_value_group_without_copying():
    run = ModelRun((_call(),))
    f = run.head_view(0, 3)
    call = run.calls[0]
    assert np.shares_memory(f.queries, call.queries) and f.queries.shape == (2, 3, 5)
    assert np.shares_memory(f.keys, call.keys) and np.shares_memory(f.values, call.values)
    np.testing.assert_array_equal(f.keys, call.keys[:, 1])  # heads 2 and 3 share kv head 1
    np.testing.assert_array_equal(run.head_view(0, 1).values, call.values[:, 0])
    assert f.focus == (0, 3) and f.dims == {"batch": 2, "n_queries": 3, "n_keys": 6, "d_q": 5, "d_k": 5, "d_v": 7}
    with pytest.raises(IndexError):
        run.head_view(0, 4)


def test_head_masks_drop_a_head_axis_and_keep_padding_masks():
    attn = np.zeros((2, 4, 3, 6), bool)
    attn[:, 2] = True
    pad = np.array([[1, 1, 1, 1, 0, 0], [1] * 6])
    run = ModelRun((_call(masks=MaskArguments(attn_mask=attn, attention_mask=pad, is_causal=True)),))
    m = run.calls[0].head_masks(2)
    assert m.attn_mask.shape == (2, 3, 6) and m.attn_mask.all()
    assert m.attention_mask is pad and m.is_causal
    assert run.calls[0].head_masks(1).as_kwargs()["causal"] is True
    # A head view carries the masks as arrays and the causal flag as the call's own.
    view = run.head_view(0, 2)
    assert view.masks is not None and not view.masks.is_causal and view.causal == "top_left"
    np.testing.assert_array_equal(view.masks.attn_mask, m.attn_mask)
    # A broadcast head axis of 1 serves every head.
    run = ModelRun((_call(masks=MaskArguments(attn_mask=attn[:, 2:3])),))
    assert run.head_view(0, 0).masks.attn_mask.all()


def test_with_head_copies_one_array_and_forgets_the_models_output():
    run = ModelRun((_call(output=np.zeros((2, 4, 3, 7)), fidelity=0.0), _call(name="layer.1")))
    edited = run.with_head(0, 3, "keys", np.full((2, 6, 5), 9.0))
    assert (edited.calls[0].keys[:, 1] == 9).all() and not (run.calls[0].keys == 9).any()
    assert edited.calls[0].queries is run.calls[0].queries and edited.calls[1] is run.calls[1]
    assert edited.calls[0].output is None and edited.calls[0].fidelity is None
    assert not edited.calls[0].keys.flags.writeable


@pytest.mark.parametrize(
    "bad, words",
    [
        (dict(keys=np.zeros((2, 3, 6, 5))), "heads"),  # 3 kv heads do not divide 4
        (dict(keys=np.zeros((1, 2, 6, 5))), "batch"),
        (dict(values=np.zeros((2, 2, 5, 7))), "length"),
        (dict(keys=np.zeros((2, 2, 6, 4))), "size"),
        (dict(queries=np.zeros((2, 3, 5))), "(batch, heads, length, size)"),
        (dict(values=None), "come together"),
    ],
)
def test_shapes_that_do_not_fit_are_refused_in_one_line(bad, words):
    with pytest.raises(ModelRunError, match=words.replace("(", r"\(").replace(")", r"\)")):
        ModelRun((_call().__class__(**{**_call().__dict__, **bad}),))


def test_tokens_are_broadcast_and_checked_against_the_lengths():
    run = ModelRun(
        (_call(),),
        query_tokens=ModelRun.broadcast_tokens(["a", "b", "c"], 2),
        key_tokens=ModelRun.broadcast_tokens([["x"] * 6, ["y"] * 6], 2),
    )
    assert run.tokens(1) == (["a", "b", "c"], ["y"] * 6)
    with pytest.raises(ModelRunError, match="query_tokens"):
        ModelRun((_call(),), query_tokens=ModelRun.broadcast_tokens(["a", "b"], 2))


def test_weights_only_calls_show_weights_but_have_no_tensors():
    call = AttentionCall("layer.0", None, None, None, weights=np.full((2, 4, 3, 3), 1 / 3))
    run = ModelRun((call,), source="output_attentions")
    assert not run.editable and run.calls[0].shape == (2, 4, 3, 3)
    view = run.head_view(0, 1)  # zeros of one column keep the shapes, read-only and costing nothing
    assert view.weights_only and view.queries.shape == (2, 3, 1) and view.keys.shape == (2, 3, 1)
    assert not view.queries.any() and not view.queries.flags.writeable


def test_a_session_keeps_the_run_the_head_shown_edits_masks_and_tokens(tmp_path):
    from attnviz.io.session_state import load_state_and_focus, save_state_file
    from attnviz.state.document import Document, SetBlock, State
    from attnviz.state.run import Focus

    pad = np.array([[1, 1, 1, 1, 0, 0], [1] * 6])
    run = ModelRun(
        (
            _call(masks=MaskArguments(attention_mask=pad)),
            _call(name="layer.1", masks=MaskArguments(is_causal=True), scale=0.5),
        ),
        key_tokens=ModelRun.broadcast_tokens(list("abcdef"), 2),
    )
    doc = Document(State.from_run(run))
    doc.apply(SetBlock("queries", 1, 0, 0, np.array([[42.0]]), Focus(1, 2)))
    save_state_file(tmp_path / "s.attnviz", doc.state, Focus(1, 2))
    back, shown = load_state_and_focus(tmp_path / "s.attnviz")
    head = back.head_view(shown)
    assert shown == (1, 2) and head.causal == "top_left" and head.scale == 0.5
    assert head.queries[1, 0, 0] == 42 and back.run.calls[1].queries[1, 2, 0, 0] == 42
    np.testing.assert_array_equal(back.run.calls[0].masks.attention_mask, pad)
    assert head.tokens(0)[1] == list("abcdef") and back.run.calls[0].name == "layer.0"


def test_undo_of_an_edit_on_another_head_goes_back_to_that_head():
    from attnviz.state.document import Document, SetBlock, State
    from attnviz.state.run import Focus

    doc = Document(State.from_run(ModelRun((_call(),))))
    inverse = doc.apply(SetBlock("keys", 0, 0, 0, np.array([[7.0]])), Focus(0, 1))
    assert inverse.focus == (0, 1)  # the edit remembers the head it was made on
    assert doc.state.head_view((0, 3)).keys[0, 0, 0] != 7  # kv head 1: not the edited kv head 0
    redo = doc.apply(inverse, Focus(0, 3))  # undone while head 3 is on show: applied to head 1
    assert redo.focus == (0, 1) and doc.state.run.calls[0].keys[0, 0, 0, 0] != 7
    doc.apply(redo, Focus(0, 3))
    assert doc.state.head_view((0, 1)).keys[0, 0, 0] == 7 and doc.state.head_view((0, 3)).keys[0, 0, 0] != 7


@pytest.mark.parametrize("head", [0, 3])
def test_the_app_computes_a_focused_head_as_sdpa_did(head):
    import torch

    from attnviz.compute.attention import run_state
    from attnviz.state.document import State

    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)
    pad = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=pad[:, None, None, :].bool(), scale=0.3, enable_gqa=True
    )
    run = ModelRun(
        (AttentionCall("l0", q.numpy(), k.numpy(), v.numpy(), MaskArguments(attention_mask=pad.numpy()), scale=0.3),)
    )
    outcome = run_state(State.from_run(run), 0, (0, head))
    assert outcome.error is None
    np.testing.assert_allclose(outcome.view.output, out[:, head].numpy(), atol=1e-6)
    assert (outcome.view.weights[0, :, 3:] == 0).all()


def test_short_names_drop_what_every_call_shares():
    calls = tuple(_call(name=f"encoder.layer.{i}.attention.self") for i in range(3))
    assert ModelRun(calls).short_names() == ["layer.0", "layer.1", "layer.2"]
    assert ModelRun((_call(name="a.x"), _call(name="b.y"))).short_names() == ["a.x", "b.y"]
    assert ModelRun((_call(name="only"),)).short_names() == ["only"]
    assert ModelRun((_call(name="call 0"), _call(name="call 1"))).short_names() == ["call 0", "call 1"]


def test_a_long_input_with_long_context_masks_is_refused_as_too_large_before_any_mask_is_built():
    """With a sliding window on, the full matrix path binds the window as a rule (no dense mask):
    over the memory budget, attend's own estimate refuses it as "too large" (the window then
    opens the long-context view), and nothing of that size is allocated."""
    n, budget, said = 3000, 100e6, "memory budget"
    from dataclasses import replace as _replace

    from attnviz.compute.attention import run_state
    from attnviz.engine import set_default_memory_budget
    from attnviz.state.document import make_state

    state = make_state(1, n, n, 8, 8, 8)
    state.settings = _replace(state.settings, scoring="scaled_dot", lens_mode="none", window=64)
    set_default_memory_budget(budget)
    try:
        outcome = run_state(state)
    finally:
        set_default_memory_budget(None)
    assert outcome.too_large, outcome.error
    assert said in outcome.error and "long-context overview" in outcome.error


@pytest.mark.parametrize("attn_mask", [None, "bool", "additive"])
def test_every_head_of_the_call_is_computed_as_the_main_view_computes_the_head_on_show(attn_mask):
    """The heads grid (every head at once) and the main view (one head) share how settings,
    model masks and long-context masks become ``attend`` arguments: with a sliding window on
    top of a padding mask (and of an attn_mask, boolean or additive), head 2 in the grid is
    exactly the main view's weights."""
    from dataclasses import replace as _replace

    from attnviz.compute.attention import run_state
    from attnviz.compute.heads import heads_of_focused_call
    from attnviz.state.document import State

    rng = np.random.default_rng(3)
    b, h, n, d = 2, 4, 7, 8
    pad = np.array([[1] * 5 + [0] * 2, [1] * 7])
    causal = np.tril(np.ones((n, n), bool))[None, None]
    extra = {
        None: {},
        "bool": {"attn_mask": np.broadcast_to(causal, (b, 1, n, n)).copy()},
        "additive": {"attn_mask": np.where(causal, 0.0, -1e9).astype(np.float32).repeat(b, 0)},
    }[attn_mask]
    call = AttentionCall(
        "layer.0",
        *(rng.standard_normal((b, h, n, d)).astype(np.float32) for _ in range(3)),
        MaskArguments(attention_mask=pad, **extra),
    )
    state = State.from_run(ModelRun((call,)))
    state.settings = _replace(state.settings, scoring="scaled_dot", lens_mode="none", window=3)
    outcome = run_state(state, 0, (0, 2))
    heads = heads_of_focused_call(state, (0, 2), outcome.view)  # the heads grid's computation
    assert outcome.error is None and heads.error is None
    np.testing.assert_allclose(heads.weights[:, 2], outcome.view.weights, atol=1e-6)
    # The window masks something: without it the weights differ.
    plain = run_state(_replace(state, settings=_replace(state.settings, window=0)), 0, (0, 2))
    assert not np.allclose(plain.view.weights, outcome.view.weights)
