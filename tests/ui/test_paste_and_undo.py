"""Big pastes and bursts of undo/redo: one edit, one computation (reading the pasted text
without a Python call per cell is tested in tests/test_number_text.py)."""

from __future__ import annotations

import numpy as np

from attnviz.state.document import ReplaceState, SetBlock, resize_state

from .conftest import wait_current, wait_session


def test_a_500_by_500_paste_is_one_edit(window, qtbot) -> None:
    session = window.session
    session.push(ReplaceState(resize_state(session.document.state, batch=1, n_queries=500, d_q=500), "big"))
    wait_current(qtbot, window)
    values = np.random.default_rng(1).standard_normal((500, 500))
    view = window.inputs.views["queries"]
    view.setCurrentIndex(view.model().index(0, 0))
    before = session.head_view().queries
    version, depth, started = session.document.version, session.undo_stack.count(), session.scheduler.started_count
    assert view.paste("\n".join("\t".join(map(repr, row)) for row in values.tolist()))
    assert session.document.version == version + 1 and session.undo_stack.count() == depth + 1
    np.testing.assert_array_equal(session.head_view().queries[0], values)
    wait_current(qtbot, window)
    assert session.scheduler.started_count == started + 1
    session.undo_stack.undo()
    np.testing.assert_array_equal(session.head_view().queries, before)


def test_a_burst_of_undos_and_redos_computes_once_where_it_ends(window, qtbot) -> None:
    session = window.session
    for i in range(6):
        session.push(SetBlock("keys", 0, 0, 0, np.array([[float(i)]])))
    wait_current(qtbot, window)
    # A view's computation on a thread of its own (a lab's) follows the same rule.
    lab = session.register("a lab", lambda job: job.snapshot.version)
    lab_results: list[int] = []
    lab.on_result(lab_results.append)
    lab.set_on_show(True)  # what its view does when it is shown
    qtbot.waitUntil(lambda: not lab.busy, timeout=5000)
    lab_results.clear()
    lab_started = lab.scheduler.started_count
    started = session.scheduler.started_count
    for _ in range(6):
        window.undo_action.trigger()
    for _ in range(4):
        window.redo_action.trigger()
    # Every step is applied at once (the tables and the Edit menu follow), only the computing waits.
    assert session.head_view().keys[0, 0, 0] == 3.0
    wait_current(qtbot, window)
    qtbot.waitUntil(lambda: not lab.busy, timeout=5000)
    assert session.scheduler.started_count == started + 1  # was 2: the first step's, then the last
    assert session.last_outcome.version == session.document.version
    assert lab.scheduler.started_count == lab_started + 1 and lab_results == [session.document.version]


def test_a_single_undo_still_computes_promptly(window, qtbot) -> None:
    session = window.session
    session.push(SetBlock("keys", 0, 0, 0, np.array([[9.0]])))
    wait_current(qtbot, window)
    window.undo_action.trigger()
    wait_session(qtbot, session, timeout=5000)
    assert session.last_outcome.version == session.document.version
