"""Runs of issue 23 in the window: a call's score terms are a stage of their own in the pipeline
(shown only for a call that has them) and computed by every view; calls of another batch (a
windowed model's) keep the batch element on show within their own."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.state.document import ReplaceState, State
from attnviz.state.run import AttentionCall, CallTerm, Focus, MaskArguments, ModelRun
from tests.ui.conftest import wait_current


def termed_run() -> ModelRun:
    rng = np.random.default_rng(0)
    b, h, n, d = 2, 2, 5, 4
    q, k, v = (rng.standard_normal((b, h, n, d)).astype(np.float32) * 3 for _ in range(3))
    bias = rng.standard_normal((1, h, n, n)).astype(np.float32)
    plain = AttentionCall("layers.0.attn", q, k, v, MaskArguments(is_causal=True))
    termed = AttentionCall(
        "layers.1.attn",
        q,
        k,
        v,
        MaskArguments(is_causal=True),
        terms=(CallTerm("bias", "position_bias", values=bias), CallTerm("softcap", "softcap", cap=1.5)),
    )
    windows = AttentionCall("layers.2.attn", q[:1], k[:1], v[:1])  # another batch
    return ModelRun((plain, termed, windows), source="capture")


def load(qtbot, win, run: ModelRun, focus: Focus) -> None:
    win.session.push(ReplaceState(State.from_run(run), "a model", focus))
    wait_current(qtbot, win)


def test_the_score_terms_are_a_stage_of_their_own(window, qtbot):
    dock = window.pipeline_dock
    dock.show()
    qtbot.waitUntil(lambda: dock.view().isVisible())
    view = dock.view()
    run = termed_run()
    load(qtbot, window, run, Focus(0, 1))
    dock.raise_()  # a model brings its heads and layers to the front
    qtbot.waitUntil(view.isVisible)
    assert view.cards["modified_scores"].isHidden()  # no terms, no stage
    window.session.set_focus(1, 1)
    wait_current(qtbot, window)
    qtbot.waitUntil(lambda: not view.cards["modified_scores"].isHidden())
    scores = view.stage_values("scores")
    expected = np.tanh((scores + run.calls[1].terms[0].values[0, 1]) / 1.5) * 1.5
    np.testing.assert_allclose(view.stage_values("modified_scores"), expected, atol=1e-5)
    # What the softmax saw is the modified scores, masked: the weights follow the terms.
    masked = view.stage_values("masked_scores")
    allowed = np.tril(np.ones((5, 5), bool))
    np.testing.assert_allclose(masked[allowed], expected[allowed], atol=1e-5)
    # The heads grid computes the same head with the same terms.
    heads = window.heads_dock
    heads.raise_()
    grid = heads.view()
    qtbot.waitUntil(lambda: grid.shown_heads is not None and grid.shown_heads.layer == 1 and len(grid.maps) == 2)
    outcome = window.session.current_outcome()
    assert grid.shown_heads is not None and grid.shown_heads.weights is not None
    np.testing.assert_allclose(grid.shown_heads.weights[:, 1], outcome.view.weights, atol=1e-6)
    window.session.set_focus(0, 0)
    wait_current(qtbot, window)
    dock.raise_()
    qtbot.waitUntil(lambda: view.isVisible() and view.cards["modified_scores"].isHidden())


def test_a_call_of_a_smaller_batch_keeps_the_batch_element_within_it(window, qtbot):
    run = termed_run()
    load(qtbot, window, run, Focus(0, 0))
    window.session.set_batch(1)
    assert window.session.selection.batch == 1
    window.session.set_focus(2, 0)  # one element in this call
    wait_current(qtbot, window)
    assert window.session.selection.batch == 0
    assert window.inputs.batch.maximum() == 0
    window.session.set_batch(1)
    assert window.session.selection.batch == 0
    outcome = window.session.current_outcome()
    assert outcome.error is None and outcome.view.weights.shape == (1, 5, 5)


@pytest.fixture
def window(exposed_window):
    return exposed_window


def test_the_ranks_of_a_distributed_run_open_at_once_merged(host, qtbot, tmp_path, monkeypatch):
    from dataclasses import replace

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from attnviz.io import save_capture
    from attnviz.state.run import Shard
    from attnviz.ui.files.file_actions import install_file_actions

    refused: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda _p, _title, text, *_a: refused.append(text)))
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    actions = install_file_actions(host.session, host, settings=settings)
    run = termed_run()
    one = replace(run, calls=run.calls[:2])
    paths = []
    for rank in range(2):
        paths.append(tmp_path / f"rank{rank}.attnviz-capture")
        save_capture(paths[-1], replace(one, shard=Shard(rank, 2, "data")))
    with qtbot.waitSignal(actions.openFinished, timeout=10000) as finished:
        assert actions.open_file([str(p) for p in paths])
    assert finished.args == [True]
    merged = host.session.document.state.run
    assert merged.layers == 2 and merged.calls[0].shape == (4, 2, 5, 5)
    assert "2 ranks merged" in host.statusBar().currentMessage()
    # A rank missing is refused in one line, and the run on show stays.
    with qtbot.waitSignal(actions.openFinished, timeout=10000) as finished:
        actions.open_file([str(paths[0]), str(paths[0])])
    assert finished.args == [False] and host.session.document.state.run is merged
    assert len(refused) == 1 and "each of 0 to 1 once" in refused[0] and "\n" not in refused[0]
    actions.shutdown()


def test_the_walk_steps_through_the_score_terms_of_a_call_that_has_them(window, qtbot):
    dock = window.pipeline_dock
    dock.show()
    qtbot.waitUntil(lambda: dock.view().isVisible())
    view = dock.view()
    run = termed_run()
    load(qtbot, window, run, Focus(1, 1))
    dock.raise_()
    qtbot.waitUntil(view.isVisible)
    view.set_walking(True)
    walk = view.walk
    qtbot.waitUntil(lambda: "modified_scores" in walk.stages)
    assert walk.stages[:4] == ("raw_scores", "scores", "modified_scores", "mask")
    walk.show_stage("modified_scores")
    np.testing.assert_allclose(walk.now.values, view.stage_values("modified_scores"), atol=1e-6)
    # The masked scores are computed from the scores with the terms, shown beside them.
    walk.show_stage("masked_scores")
    np.testing.assert_allclose(walk.before.values, view.stage_values("modified_scores"), atol=1e-6)
    # Through a soft cap the what-if (× of the scaled scores added to the masked) would be wrong:
    # a call with terms has none.
    assert not walk.scale_slider.isEnabled() and walk.what_if is None
    # A call without terms: no such step, the what-if back.
    window.session.set_focus(0, 1)
    wait_current(qtbot, window)
    qtbot.waitUntil(lambda: "modified_scores" not in walk.stages)
    assert walk.scale_slider.isEnabled()
