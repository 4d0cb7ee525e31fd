"""The window: a live model's mask cell flipped and a head ablated re-run the model; undo restores;
File › Compare with… a capture file."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ui.conftest import wait_current

from .models import batch, bert, llama


def _live_window(qtbot, model, inputs):
    import attnviz

    window = attnviz.show(model=model, inputs=inputs, block=False)
    qtbot.addWidget(window)
    wait_current(qtbot, window)
    from attnviz.ui.app.live_model import live_controller
    from attnviz.ui.views.run_compare import RunCompareView

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
    # The comparison runs while its tab is on show: the heads grid's tab hides it.
    assert view.shown_count == shown
    window.run_compare_dock.show()
    qtbot.waitUntil(lambda: view.shown_count > shown and not view.intervention.identical, timeout=30000)
    assert window.session.document.state.ablated_heads == {(1, 2)}
    assert heads.ablate_button.text() == "Restore head 2"
    out = view.intervention.after_capture.calls[1].output
    assert not out[:, 2].any()
    shown = view.shown_count
    window.session.undo_stack.undo()
    qtbot.waitUntil(lambda: view.shown_count > shown and view.intervention.identical, timeout=30000)
    assert window.session.document.state.ablated_heads == frozenset()


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
    from attnviz.ui.window.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    texts = [a.text() for a in window.menu("file").actions()]
    assert texts[-1] == "&Quit" and texts.index("&Save") < texts.index("Compare &with…") < texts.index("&Quit")
    window.close()


def test_a_rerun_can_be_cancelled_and_the_last_result_stays(qtbot):
    window, view, controller = _live_window(qtbot, llama(), batch())
    shown, first = view.shown_count, view.intervention
    controller.toggle_ablation(0, 1)
    qtbot.waitUntil(lambda: view.compared.busy, timeout=10000)
    assert view.cancel_button.isVisibleTo(view)
    view.cancel_button.click()
    assert not view.cancel_button.isVisibleTo(view)
    assert "Cancelled" in view.message.text()
    qtbot.wait(1500)  # the forward that was running ends unseen
    assert view.shown_count == shown and view.intervention is first
    # Asked again, it runs with the ablation still on (cancelling drops a run, not an edit).
    view.compared.request()
    qtbot.waitUntil(lambda: view.shown_count > shown, timeout=30000)
    assert not view.intervention.identical and window.session.document.state.ablated_heads == {(0, 1)}


def test_a_session_keeps_the_ablated_heads_and_mask_edits_and_reopens_them_on_the_live_model(qtbot, tmp_path):
    model, inputs = llama(), batch()
    window, view, controller = _live_window(qtbot, model, inputs)
    controller.toggle_ablation(1, 2)
    window.session.set_focus(0, 1)
    view.chosen = None
    view.map_b.cellClicked.emit(5, 0, None)  # query 5 no longer sees key 0
    qtbot.waitUntil(lambda: window.session.undo_stack.count() == 2 and view.compared.current, timeout=10000)
    qtbot.waitUntil(lambda: not view.compared.busy, timeout=30000)
    edited = view.intervention.max_output_diff
    assert edited > 1e-4
    path = tmp_path / "edited.attnviz"
    assert window.file_actions.save_as(str(path))
    window.close()

    # The same model live again, the session opened on it: the edits are back, and so is the output change.
    again, again_view, _controller = _live_window(qtbot, model, inputs)
    assert again_view.intervention.identical
    with qtbot.waitSignal(again.file_actions.openFinished, timeout=10000) as finished:
        assert again.file_actions.open_file(str(path))
    assert finished.args == [True]
    state = again.session.document.state
    assert state.ablated_heads == {(1, 2)}
    mask = state.run.calls[0].masks.attn_mask
    assert mask is not None and not mask[0, 0, 5, 0]
    qtbot.waitUntil(lambda: not again_view.intervention.identical, timeout=30000)
    assert again_view.intervention.max_output_diff == pytest.approx(edited)
    assert not again_view.intervention.after_capture.calls[1].output[:, 2].any()
    # Undo takes the opened session back to the captured run.
    again.session.undo_stack.undo()
    qtbot.waitUntil(lambda: again_view.intervention.identical, timeout=30000)
    again.close()


def test_a_session_keeps_the_compared_file_and_says_when_it_is_gone(qtbot, tmp_path):
    import torch

    import attnviz
    from attnviz.ui.window.main_window import MainWindow

    model, inputs = bert(), batch()
    inverted = dict(inputs, attention_mask=1 - inputs["attention_mask"])
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(**inverted)
    capture_path = tmp_path / "inverted.attnviz-capture"
    cap.save(capture_path)
    window, view, _controller = _live_window(qtbot, model, inputs)
    view.compare_with(capture_path)
    qtbot.waitUntil(lambda: view.intervention is None and view.comparison is not None, timeout=30000)
    assert view.close_button.isVisibleTo(view)
    compared = view.comparison.max_weight_diff
    session_path = tmp_path / "compared.attnviz"
    assert window.file_actions.save_as(str(session_path))
    window.close()

    # Opened in a window without the model: the comparison with the file is back.
    plain = MainWindow()
    qtbot.addWidget(plain)
    plain.show()
    with qtbot.waitSignal(plain.file_actions.openFinished, timeout=10000):
        assert plain.file_actions.open_file(str(session_path))
    assert plain.session.document.state.compared_with == str(capture_path)
    # It opens on the comparison (the heads and layers x heads come up for a model, then it).
    shown = plain.run_compare_dock.view()
    qtbot.waitUntil(lambda: shown.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: shown.comparison is not None, timeout=30000)
    assert shown.comparison.max_weight_diff == pytest.approx(compared)
    assert "file" in shown.title.text() and shown.close_button.isVisibleTo(shown)
    # Stop comparing: an undoable edit; the view has nothing to compare then.
    shown.close_button.click()
    qtbot.waitUntil(lambda: shown.comparison is None, timeout=10000)
    assert plain.session.document.state.compared_with is None and not shown.close_button.isVisibleTo(shown)
    plain.session.undo_stack.undo()
    qtbot.waitUntil(lambda: shown.comparison is not None, timeout=30000)
    # The file gone: said in the view, next to the maps; the window keeps working.
    capture_path.unlink()
    plain.session.set_focus(1, 0)
    with qtbot.waitSignal(plain.file_actions.openFinished, timeout=10000):
        assert plain.file_actions.open_file(str(session_path))
    qtbot.waitUntil(lambda: shown.message.isVisibleTo(shown) and "⚠" in shown.message.text(), timeout=30000)
    assert "inverted.attnviz-capture" in shown.message.text()
    plain.close()


def test_a_live_model_goes_with_its_session(qtbot):
    """A session keeps its live model as a child: nothing it keeps (the controller, the model)
    holds the session back, and a new model attached replaces the old one."""
    import gc
    import weakref

    from attnviz.ui.app.live_model import attach_live_model, live_controller
    from attnviz.ui.app.session import AppSession

    class Live:
        run = None

    session = AppSession()
    assert live_controller(session) is None
    first = attach_live_model(session, Live())
    second = attach_live_model(session, Live())
    assert live_controller(session) is second and second.session is session
    qtbot.waitUntil(lambda: not _alive(first), timeout=5000)  # the replaced one is deleted
    gone = weakref.ref(session)
    model = weakref.ref(second.live)
    session.shutdown()
    del session, second
    gc.collect()
    assert gone() is None and model() is None


def _alive(obj) -> bool:  # noqa: ANN001
    import shiboken6

    return shiboken6.isValid(obj)
