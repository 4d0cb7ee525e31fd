"""A file of many heads opens the heads grid, and the window computes the file once: the grid's
own request, made while the edit was being applied, ran the same version a second time, the
first result held while the second ran (+380 MB at 8 heads of 1400 tokens, issue 30)."""

from __future__ import annotations

import numpy as np

from attnviz.state.document import ReplaceState, State
from attnviz.state.run import AttentionCall, Focus, ModelRun
from tests.ui.conftest import wait_current


def test_a_model_that_opens_the_heads_grid_is_computed_once(qtbot, exposed_window) -> None:
    window = exposed_window
    session = window.session
    assert not window.heads_dock.isVisible()  # the grid comes on show with the model below
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 8, 40, 4)).astype(np.float32) for _ in range(3))
    run = ModelRun((AttentionCall("layer.0", q, k, v),), source="capture")
    started = session.scheduler.started_count
    session.push(ReplaceState(State.from_run(run), "a model", Focus(0, 0)))
    wait_current(qtbot, window)
    view = window.heads_dock.view()
    qtbot.waitUntil(lambda: view.shown_heads is not None and view.heads.current and not view.heads.busy)
    assert window.heads_dock.isVisible() and len(view.maps) == 8
    assert session.scheduler.started_count == started + 1
    np.testing.assert_allclose(view.shown_heads.weights[:, 0], session.current_outcome().view.weights, atol=1e-6)
