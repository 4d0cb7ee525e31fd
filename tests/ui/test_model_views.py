"""A model's heads and layers in the window: the pickers, the heads grid, the layers x heads
overview, tokens on the axes and padding queries marked."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.state.document import ReplaceState, SetBlock, State
from attnviz.state.run import AttentionCall, Focus, MaskArguments, ModelRun
from tests.ui.conftest import wait_current

TOKENS = [["[CLS]", "the", "cat", "sat", "[SEP]", "[PAD]"], ["[CLS]", "a", "dog", "ran", "far", "[SEP]"]]


def make_run(layers: int = 3, heads: int = 4, *, mask_padding: bool = True, seed: int = 0) -> ModelRun:
    rng = np.random.default_rng(seed)
    b, n, d = 2, 6, 8
    pad = np.array([[1, 1, 1, 1, 1, 0 if mask_padding else 1], [1] * 6])
    calls = tuple(
        AttentionCall(
            f"encoder.layer.{i}.attention.self",
            rng.standard_normal((b, heads, n, d)).astype(np.float32),
            rng.standard_normal((b, heads, n, d)).astype(np.float32),
            rng.standard_normal((b, heads, n, d)).astype(np.float32),
            MaskArguments(attention_mask=pad),
        )
        for i in range(layers)
    )
    tokens = np.array(TOKENS)
    return ModelRun(calls, query_tokens=tokens, key_tokens=tokens, source="file")


@pytest.fixture
def window(exposed_window):
    return exposed_window


def load(qtbot, win, run: ModelRun, layer: int = 0, head: int = 0) -> None:
    win.session.push(ReplaceState(State.from_run(run), "a model", Focus(layer, head)))
    wait_current(qtbot, win)


def test_a_model_opens_its_heads_and_every_head_is_one_click_away(qtbot, window):
    run = make_run()
    load(qtbot, window, run)
    heads = window.heads_dock
    # A model arrived: its heads are open, the layers x heads overview in front of them.
    assert heads.isVisible() and window.overview_dock.view().isVisible()
    heads.raise_()
    view = heads.view()
    qtbot.waitUntil(lambda: len(view.maps) == 4 and view.draw_count > 0)
    # One colour scale for every head; the head on show is marked.
    assert len({m.levels for m in view.maps}) == 1
    assert view.maps[0].title.startswith("▶")
    view.maps[2].clicked.emit()
    wait_current(qtbot, window)
    sel = window.session.selection
    assert (sel.layer, sel.head) == (0, 2) and window.inputs.head.value() == 2
    np.testing.assert_array_equal(window.inputs.models["queries"].array(), run.calls[0].queries[0, 2])
    qtbot.waitUntil(lambda: view.maps[2].title.startswith("▶") and not view.maps[0].title.startswith("▶"))
    # The grid's head 2 is exactly the main view's weights for it.
    outcome = window.session.current_outcome()
    qtbot.waitUntil(lambda: view.shown_heads is not None and view.heads.current and not view.heads.busy)
    np.testing.assert_allclose(view.shown_heads.weights[:, 2], outcome.view.weights, atol=1e-6)


def test_the_layer_picker_shows_short_names_and_moves_every_view(qtbot, window):
    run = make_run()
    load(qtbot, window, run)
    combo = window.inputs.layer
    assert [combo.itemText(i) for i in range(combo.count())] == ["layer.0", "layer.1", "layer.2"]
    combo.setCurrentIndex(2)
    wait_current(qtbot, window)
    assert window.session.selection.layer == 2
    np.testing.assert_array_equal(window.inputs.models["keys"].array(), run.calls[2].keys[0, 0])


def test_edits_stay_with_their_head_and_undo_returns_to_it(qtbot, window):
    run = make_run()
    load(qtbot, window, run, head=1)
    window.session.push(SetBlock("queries", 0, 0, 0, np.array([[5.0]])))
    window.session.set_focus(0, 3)
    wait_current(qtbot, window)
    assert window.inputs.models["queries"].array()[0, 0] != 5
    window.session.set_focus(0, 1)
    wait_current(qtbot, window)
    assert window.inputs.models["queries"].array()[0, 0] == 5
    window.session.set_focus(1, 0)
    window.session.undo_stack.undo()
    wait_current(qtbot, window)
    assert (window.session.selection.layer, window.session.selection.head) == (0, 1)
    assert window.inputs.models["queries"].array()[0, 0] != 5


def test_tokens_label_the_axes_and_the_hover_and_padding_queries_are_hatched(qtbot, window):
    load(qtbot, window, make_run())
    window.tool_tabs.setCurrentIndex(0)  # a model opens its heads in front; the main maps draw when shown
    heatmap = window.results.maps[0]
    assert heatmap.col_labels == TOKENS[0] and heatmap.row_labels == TOKENS[0]
    from attnviz.ui.app.results_panel import hover_text

    view = window.session.current_view()
    assert "'cat'" in hover_text(view, 0, 2, 1) and "'the'" in hover_text(view, 0, 2, 1)
    # The [PAD] query of batch 0 attends real keys (its weights are not 0) but is marked.
    assert view.padded_rows[0].tolist() == [False] * 5 + [True] and not view.padded_rows[1].any()
    assert "padding query" in hover_text(view, 0, 5, 0)
    assert not heatmap.allowed[5].any() and heatmap.values[5, :5].sum() == pytest.approx(1, abs=1e-5)
    assert window.inputs.models["queries"].headerData(2, 2, 0) in ("2 cat",)  # Qt.Vertical, DisplayRole


def test_the_overview_finds_attention_to_padding_only_when_padding_is_not_masked(qtbot, window):
    load(qtbot, window, make_run(mask_padding=True))
    window.overview_dock.show()
    window.overview_dock.raise_()  # over the heads grid, which a model opens
    view = window.overview_dock.view()
    qtbot.waitUntil(lambda: view.statistics is not None, timeout=20000)
    stats = view.statistics
    assert stats.values["padding"].shape == (3, 2, 4)
    assert np.nanmax(stats.values["padding"]) == 0  # [PAD] is masked everywhere
    load(qtbot, window, make_run(mask_padding=False))
    qtbot.waitUntil(lambda: view.statistics is not stats and view.statistics is not None, timeout=20000)
    leaked = view.statistics.values["padding"][:, 0]
    assert (leaked > 0.01).all()  # every head of batch 0 gives the unmasked [PAD] weight
    # A click on a cell shows that head.
    view.heatmap.cellClicked.emit(1, 3, None)
    wait_current(qtbot, window)
    assert (window.session.selection.layer, window.session.selection.head) == (1, 3)


def test_the_heads_grid_does_not_draw_while_hidden(qtbot, window):
    load(qtbot, window, make_run())
    window.heads_dock.raise_()
    view = window.heads_dock.view()
    qtbot.waitUntil(lambda: view.draw_count > 0)
    window.heads_dock.hide()
    count = view.draw_count
    window.session.set_focus(0, 3)
    wait_current(qtbot, window)
    assert view.draw_count == count
    window.heads_dock.show()
    qtbot.waitUntil(lambda: view.draw_count == count + 1)


def test_a_shape_change_sets_the_model_aside_and_undo_brings_it_back(qtbot, window):
    load(qtbot, window, make_run())
    window.controls.shapes.shapeChanged.emit({"n_queries": 4})
    wait_current(qtbot, window)
    state = window.session.document.state
    assert state.run.single_head and not window.inputs.head.isVisibleTo(window.inputs)
    assert state.head_view().queries.shape == (2, 4, 8)  # the head on show, as the book's input
    window.session.undo_stack.undo()
    wait_current(qtbot, window)
    assert window.session.document.state.run.layers == 3 and window.inputs.head.isVisibleTo(window.inputs)


def test_token_sums_and_top_keys_are_the_weights_of_the_selection():
    from attnviz.ui.views.tokens import token_sums, top_keys

    w = np.array([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7], [np.nan, np.nan, np.nan]])
    sent, received = token_sums(w, [0, 1], [2])
    np.testing.assert_allclose(sent, [0.6, 0.7, 0.7])
    np.testing.assert_allclose(received, [0.0, 0.7, 0.0])  # a NaN row receives nothing
    assert top_keys(w, 1, 2) == [(2, 0.7), (1, 0.2)]
    assert [k for k, _ in top_keys(w, 2, 3)] == [0, 1, 2]


def test_the_tokens_view_follows_a_click_on_the_map_and_searches(qtbot, window):
    from PySide6.QtCore import Qt

    load(qtbot, window, make_run())
    window.tokens_dock.show()
    window.tokens_dock.raise_()
    view = window.tokens_dock.view()
    qtbot.waitUntil(lambda: view.draw_count > 0)
    # Nothing selected yet: each plot says how to fill it; the top-k caption's "&p" is a shortcut.
    assert view.sent_plot.plotItem.titleLabel.text.startswith("Select queries")
    assert view.k_caption.buddy() is view.top_k
    # A click on a cell of a main weights map picks its query (shift-click adds it).
    window.results.maps[0].cellClicked.emit(2, 0, Qt.KeyboardModifier.NoModifier)
    window.results.maps[0].cellClicked.emit(3, 1, Qt.KeyboardModifier.ShiftModifier)
    assert view.queries.selected() == [2, 3]
    weights = window.session.current_view().weights[0]
    np.testing.assert_allclose(view.sums[0], weights[[2, 3]].sum(axis=0), atol=1e-6)
    assert view.top.rowCount() == 5 and view.top.item(0, 1).text() in TOKENS[0]
    assert view.sent_plot.plotItem.titleLabel.text.startswith("Attention the selected queries")
    view.keys.search.setText("cat")
    assert view.keys.proxy.rowCount() == 1
    view.keys.list.selectAll()
    qtbot.waitUntil(lambda: view.keys.selected() == [2])
    np.testing.assert_allclose(view.sums[1], weights[:, 2], atol=1e-6)


def test_the_calls_table_lists_each_call_with_its_masks_and_fidelity(qtbot, window):
    import dataclasses

    run = make_run()
    calls = list(run.calls)
    calls[1] = dataclasses.replace(calls[1], fidelity=2.5e-7)
    load(qtbot, window, dataclasses.replace(run, calls=tuple(calls)))
    window.overview_dock.show()
    window.overview_dock.raise_()
    view = window.overview_dock.view()
    qtbot.waitUntil(lambda: view.calls.rowCount() == 3)
    assert view.calls.item(0, 0).text() == "layer.0" and view.calls.item(0, 3).text() == "attention_mask"
    assert view.calls.item(1, 4).text() == "2.5e-07" and view.calls.item(0, 4).text() == "not checked"
    view.calls.cellClicked.emit(2, 0)
    wait_current(qtbot, window)
    assert window.session.selection.layer == 2


def test_recorded_weights_only_are_shown_as_recorded_and_cannot_be_edited(qtbot, window):
    from attnviz.capture import from_output_attentions

    rng = np.random.default_rng(0)
    raw = rng.random((2, 3, 4, 4))
    raw[:, :, :, 3] = 0.0  # the last key masked by the model
    weights = raw / raw.sum(axis=-1, keepdims=True)
    run = from_output_attentions([weights, weights[:, ::-1]], tokens=["a", "b", "c", "[PAD]"])
    load(qtbot, window, run)
    view = window.session.current_view()
    np.testing.assert_allclose(view.weights, weights[:, 0], rtol=1e-6)
    assert not view.mask[:, :, 3].any() and np.isnan(view.raw_scores).all()
    assert any("recorded its attention weights only" in w for w in view.warnings)
    assert not window.inputs.models["queries"].request_edit(0, 0, np.array([[1.0]]))
    window.heads_dock.raise_()
    heads = window.heads_dock.view()
    qtbot.waitUntil(lambda: len(heads.maps) == 3)
    np.testing.assert_allclose(heads.maps[2].values, weights[0, 2], rtol=1e-6)
    window.session.set_focus(1, 0)
    wait_current(qtbot, window)
    np.testing.assert_allclose(window.session.current_view().weights, weights[:, ::-1][:, 0], rtol=1e-6)


def test_the_doctor_lists_a_planted_bug_and_a_click_outlines_its_rows(qtbot, window):
    # A (B, 1, L, 1) padding mask: the broadcast-axis bug hides whole query rows.
    run = make_run(layers=2)
    pad = np.array([[1, 1, 1, 1, 1, 0], [1] * 6], bool)
    import dataclasses

    wrong = MaskArguments(attn_mask=pad[:, None, :, None])
    calls = (dataclasses.replace(run.calls[0], masks=wrong), run.calls[1])
    load(qtbot, window, dataclasses.replace(run, calls=calls))
    window.doctor_dock.show()
    window.doctor_dock.raise_()
    view = window.doctor_dock.view()
    qtbot.waitUntil(lambda: view.findings is not None, timeout=30000)
    kinds = {f.kind for f in view.findings}
    assert "broadcast_axis" in kinds and all(f.call == 0 for f in view.findings if f.severity == "error")
    assert view.table.rowCount() == len(view.findings) and "error" in view.table.item(0, 0).text()
    view.table.cellClicked.emit(0, 2)
    wait_current(qtbot, window)
    assert window.tool_tabs.currentIndex() == 0 and window.session.selection.layer == 0
    finding = view._ordered[0]
    if finding.rows:
        assert any(m.highlighted_rows for m in window.results.maps)


def test_the_heads_grid_and_render_stripe_padding_queries_and_the_grid_picks_the_batch(qtbot, window):
    """Padding query rows are hatched in the heads grid and in ``render``'s maps as in the main
    view (they were striped in the main view only), and the grid has its own batch picker."""
    from attnviz.ui.heatmap import HeatmapWidget
    from attnviz.ui.heatmap.weights import show_weights

    load(qtbot, window, make_run())
    window.heads_dock.show()  # in front of the layers x heads overview a run of layers opens
    grid = window.heads_dock.view()
    qtbot.waitUntil(lambda: bool(grid.maps) and grid.maps[0].values is not None, timeout=20000)
    for heatmap in grid.maps:
        assert not heatmap.allowed[5].any()  # the [PAD] query of batch 0, every head
        assert heatmap.values[5, :5].sum() == pytest.approx(1, abs=1e-5)  # its weights still drawn
    figure_map = HeatmapWidget()
    show_weights(figure_map, window.session.current_view(), 0)  # what render and export draw
    assert not figure_map.allowed[5].any() and figure_map.show_masked_values
    grid.batch.setValue(1)
    assert window.session.selection.batch == 1
    qtbot.waitUntil(lambda: grid.maps[0].allowed is None or grid.maps[0].allowed[5].any(), timeout=20000)
    window.session.set_batch(0)
    assert grid.batch.value() == 0
