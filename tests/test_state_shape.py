"""One shape of state: the book's input is a run of one call and one head, computed exactly as
the book's 3-D tensors were; a head is a view of the run; each call has its own causal flag and
scale, which the causal setting edits for the call on show."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz.compute import run_state
from attnviz.compute.heads import heads_of_focused_call, heads_on_show
from attnviz.compute.jobs import Job
from attnviz.state.document import Document, SetBlock, SetSettings, Snapshot, State, filled_state, resize_state
from attnviz.state.run import AttentionCall, Focus, MaskArguments, ModelRun
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS
from tests.float_tolerance import assert_reordered_close

BOOK = {f"preset {k}": p.build for k, p in PRESETS.items()} | {
    f"lesson {k}": v.preset.build for k, v in LESSONS.items()
}


def _attend_3d(state: State):
    """The attention of the book's 3-D tensors as it was computed before the state held a run:
    ``attend`` on (B, Q, d) queries with the settings, and nothing else."""
    import torch

    from attnviz.compute.convert import to_numpy
    from attnviz.engine import attend

    head, s = state.head_view(), state.settings
    assert head.masks is None and head.scale is None  # the book's presets have neither
    lens = state.valid_lens(head)
    with torch.no_grad():
        result = attend(
            torch.from_numpy(np.array(head.queries)),
            torch.from_numpy(np.array(head.keys)),
            torch.from_numpy(np.array(head.values)),
            None if lens is None else torch.from_numpy(np.array(lens)),
            scoring=s.scoring,
            mask_mode=s.mask_mode,
            causal=head.causal,
            params={k: torch.from_numpy(v) for k, v in state.params.items()} or None,
            num_hiddens=s.num_hiddens,
            seed=s.param_seed,
            dtype=s.dtype,
            device=s.device,
            allow_nonfinite=s.allow_nonfinite,
            dropout=s.dropout,
            train=s.train,
            dropout_seed=s.dropout_seed,
        )
    return {name: to_numpy(getattr(result, name)) for name in ("weights", "output", "mask", "scores")}


@pytest.mark.parametrize("name", sorted(BOOK))
def test_the_books_inputs_are_one_call_of_one_head_computed_exactly_as_before(name):
    state = BOOK[name]()
    run = state.run
    assert run.source == "book" and run.single_head and run.calls[0].queries.shape[1] == 1
    outcome = run_state(state)
    assert outcome.error is None, outcome.error
    for what, expected in _attend_3d(state).items():
        np.testing.assert_array_equal(getattr(outcome.view, what), expected, err_msg=what)
    # The heads grid of the book's one head is the main view's result, not computed again.
    heads = heads_on_show(Job(Snapshot(0, state), 0, None, main=outcome))
    assert heads is not None and heads.weights is not None and heads.weights.shape[1] == 1
    assert np.shares_memory(heads.weights, outcome.view.weights)


def test_a_head_view_is_a_view_of_the_run_not_a_copy():
    state = PRESETS["additive-toy"].build()
    head, call = state.head_view(), state.run.calls[0]
    for role in ("queries", "keys", "values"):
        assert np.shares_memory(getattr(head, role), getattr(call, role)), role
    assert head.queries.shape == (2, 1, 20) and head.keys.shape == (2, 10, 2)  # d_q != d_k: additive


def _two_calls() -> State:
    rng = np.random.default_rng(0)

    def qkv(lq: int, lk: int) -> list[np.ndarray]:
        # Two query heads sharing one key/value head (grouped-query attention).
        return [rng.standard_normal((2, h, n, 4)).astype(np.float32) for h, n in ((2, lq), (1, lk), (1, lk))]

    run = ModelRun(
        (
            AttentionCall("layer.0", *qkv(5, 5), MaskArguments(is_causal=True), scale=0.5),
            AttentionCall("layer.1", *qkv(3, 5), MaskArguments(is_causal=True, causal_alignment="bottom_right")),
        )
    )
    return State.from_run(run)


def test_each_call_keeps_its_own_causal_flag_and_the_setting_edits_the_call_on_show():
    doc = Document(_two_calls())
    # What the settings panel shows for each call: the call's own flag and scale, as the model ran it.
    assert doc.state.head_view((0, 1)).causal == "top_left" and doc.state.head_view((0, 1)).scale == 0.5
    assert doc.state.head_view((1, 0)).causal == "bottom_right" and doc.state.head_view((1, 0)).scale is None
    inverse = doc.apply(SetSettings({"causal": None}), Focus(0, 1))
    # Turned off on call 0, for every head of it; call 1 keeps its own.
    assert doc.state.head_view((0, 0)).causal is None and doc.state.head_view((1, 1)).causal == "bottom_right"
    off = run_state(doc.state, 0, (0, 1)).view
    assert off is not None and not np.all(np.triu(off.mask[0], 1) == 0)  # a future key is attended
    # The heads grid computes every head of the call with that flag: head 1 is the main view's
    # (every head at once: other matmul shapes, so up to the order of the sums).
    assert_reordered_close(heads_of_focused_call(doc.state, (0, 1)).weights[:, 1], off.weights)
    # The undo is made on call 0 even while call 1 is on show, and says so.
    assert inverse.focus == (0, 1)
    doc.apply(inverse, Focus(1, 0))
    assert doc.state.head_view((0, 0)).causal == "top_left" and doc.state.head_view((1, 0)).causal == "bottom_right"


def test_fills_and_shape_changes_work_on_the_head_on_show():
    state = _two_calls()
    filled = filled_state(state, "keys", "ones", focus=Focus(1, 1))
    assert (filled.head_view((1, 1)).keys == 1).all() and (filled.head_view((1, 0)).keys == 1).all()  # one kv head
    assert not (filled.head_view((0, 1)).keys == 1).all()
    book = resize_state(state, focus=Focus(1, 0), n_keys=4)
    head = book.head_view()
    assert book.run.single_head and head.keys.shape == (2, 4, 4) and head.causal == "bottom_right"
    np.testing.assert_array_equal(head.queries, state.head_view((1, 0)).queries)


def test_lengths_made_for_another_calls_queries_count_as_all_valid_and_edit_back_whole():
    state = _two_calls()
    state = replace(state, settings=replace(state.settings, lens_mode="2d"))
    assert state.lens_2d.shape == (2, 5)
    doc = Document(state)
    head = doc.state.head_view((1, 0))  # 3 queries: the (2, 5) lengths do not fit
    np.testing.assert_array_equal(doc.state.valid_lens(head), np.full((2, 3), 5))
    inverse = doc.apply(SetBlock("valid_lens", 0, 1, 2, np.array([[2]])), Focus(1, 0))
    assert doc.state.lens_2d.shape == (2, 3) and doc.state.lens_2d[1, 2] == 2
    doc.apply(inverse)
    np.testing.assert_array_equal(doc.state.lens_2d, state.lens_2d)
