"""The window: a live model's mask cell flipped and a head ablated re-run the model; undo restores;
File › Compare with… a capture file."""

from __future__ import annotations

import numpy as np

from tests.ui.conftest import wait_current

from .models import batch, bert, llama


def _live_window(qtbot, model, inputs):
    import attnviz

    window = attnviz.show(model=model, inputs=inputs, block=False)
    qtbot.addWidget(window)
    wait_current(qtbot, window)
    from attnviz.ui.views.run_compare import RunCompareView, live_controller

    view = window.run_compare_dock.view()
    assert isinstance(view, RunCompareView)
    controller = live_controller(window.session)
    assert controller is not None
    qtbot.waitUntil(lambda: view.intervention is not None, timeout=30000)
    return window, view, controller


def test_a_flipped_mask_cell_reruns_the_model_and_undo_restores(qtbot):
    window, view, controller = _live_window(qtbot, llama(), batch())
    assert view.intervention.identical and view.comparison.max_weight_diff == 0.0
    assert "The model's output changed by up to 0" in view.output.text()
    # Call 0, head on show, batch 0: query 5 no longer sees key 0.
    window.session.set_focus(0, 1)
    view.chosen = None
    original = window.session.document.state.run.calls[0].masks.attn_mask
    shown = view.shown_count
    view.map_b.cellClicked.emit(5, 0, None)
    qtbot.waitUntil(lambda: view.shown_count > shown and not view.intervention.identical, timeout=30000)
    assert view.intervention.max_output_diff > 1e-4
    assert view.comparison.max_weight_diff > 1e-3 and view.comparison.calls[0].weights[0].max() > 1e-3
    assert "KL per position" in view.output.text()
    # The edit is the run's: the document holds the flipped mask.
    mask = window.session.document.state.run.calls[0].masks.attn_mask
    assert mask is not None and not mask[0, 0, 5, 0]
    shown = view.shown_count
    window.session.undo_stack.undo()
    qtbot.waitUntil(lambda: view.shown_count > shown and view.intervention.identical, timeout=30000)
    assert window.session.document.state.run.calls[0].masks.attn_mask is original


def test_ablating_a_head_from_the_heads_grid_changes_the_output(qtbot):
    window, view, controller = _live_window(qtbot, llama(), batch())
    window.heads_dock.show()
    heads = window.heads_dock.view()
    window.session.set_focus(1, 2)
    qtbot.waitUntil(lambda: heads.ablate_button.isVisible(), timeout=10000)
    assert heads.ablate_button.text() == "Ablate head 2"
    shown = view.shown_count
    heads.ablate_button.click()
    qtbot.waitUntil(lambda: view.shown_count > shown and not view.intervention.identical, timeout=30000)
    assert controller.ablations == {(1, 2)} and heads.ablate_button.text() == "Restore head 2"
    out = view.intervention.after_capture.calls[1].output
    assert not out[:, 2].any()
    shown = view.shown_count
    window.session.undo_stack.undo()
    qtbot.waitUntil(lambda: view.shown_count > shown and view.intervention.identical, timeout=30000)
    assert controller.ablations == set()


def test_compare_with_a_capture_file(qtbot, tmp_path):
    import torch

    import attnviz

    model = bert()
    inputs = batch()
    inverted = dict(inputs, attention_mask=1 - inputs["attention_mask"])
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(**inverted)
    path = tmp_path / "inverted.attnviz-capture"
    cap.save(path)
    window, view, _controller = _live_window(qtbot, model, inputs)
    shown = view.shown_count
    view.compare_with(path)
    qtbot.waitUntil(lambda: view.shown_count > shown and view.intervention is None, timeout=30000)
    assert view.comparison.max_weight_diff > 0.1
    assert "file" in view.title.text() and "2 calls" in view.title.text()
    assert np.isfinite(view.comparison.calls[0].weights).all()


def test_file_compare_with_sits_above_quit(qtbot):
    from attnviz.ui.app.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    texts = [a.text() for a in window.menu("file").actions()]
    assert texts[-1] == "&Quit" and texts.index("&Save") < texts.index("Compare &with…") < texts.index("&Quit")
    window.close()


def test_a_rerun_can_be_cancelled_and_the_last_result_stays(qtbot):
    window, view, controller = _live_window(qtbot, llama(), batch())
    shown, first = view.shown_count, view.intervention
    controller.toggle_ablation(0, 1)
    assert controller.running and view.cancel_button.isVisibleTo(view)
    view.cancel_button.click()
    assert not controller.running and not view.cancel_button.isVisibleTo(view)
    assert "Cancelled" in view.message.text()
    qtbot.wait(1500)  # the forward that was running ends unseen
    assert view.shown_count == shown and view.intervention is first
    # The next change runs again, with the ablation still on (cancelling drops a run, not an edit).
    controller.rerun()
    qtbot.waitUntil(lambda: view.shown_count > shown, timeout=30000)
    assert not view.intervention.identical and controller.ablations == {(0, 1)}
