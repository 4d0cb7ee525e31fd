"""Which head is on show is the session's selection, not the document: choosing one is not an
undo step, a result computed for another head is never shown as current, edits and settings of
a call stay with it, and an undo brings back the head it was made on."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from attnviz.compute import run_snapshot, run_state
from attnviz.state.document import Document, ReplaceState, SetBlock, SetSettings, Snapshot, State
from attnviz.state.run import AttentionCall, Focus, MaskArguments, ModelRun
from tests.ui.conftest import wait_current


def make_run(layers: int = 2, heads: int = 3) -> ModelRun:
    rng = np.random.default_rng(5)
    b, n, d = 2, 5, 4
    calls = tuple(
        AttentionCall(
            f"layer.{i}",
            *(rng.standard_normal((b, heads, n, d)).astype(np.float32) for _ in range(3)),
            MaskArguments(is_causal=i == 0),
        )
        for i in range(layers)
    )
    return ModelRun(calls)


def test_choosing_a_head_is_not_an_undo_step_and_a_stale_heads_result_is_never_current(qtbot):
    from attnviz.ui.app.session import AppSession

    started, release = threading.Event(), threading.Event()

    def compute(snapshot: Snapshot):
        if snapshot.focus == (0, 1):  # head 1 takes its time: head 2 is picked meanwhile
            started.set()
            release.wait(20)
        return run_snapshot(snapshot)

    state = State.from_run(make_run())
    session = AppSession(Document(state), compute=compute)
    shown: list = []
    selections: list = []
    session.outcomeShown.connect(shown.append)
    session.selectionChanged.connect(selections.append)
    try:
        session.start()
        qtbot.waitUntil(lambda: session.is_current and not session.busy, timeout=30000)
        steps, version = session.undo_stack.count(), session.document.version
        session.set_focus(0, 1)
        assert selections[-1].focus == (0, 1) and session.current_outcome() is None  # head 0's is not head 1's
        assert started.wait(20)
        session.set_focus(0, 2)  # while head 1 is being computed
        assert session.current_outcome() is None and not session.is_current
        before = len(shown)
        release.set()
        qtbot.waitUntil(lambda: session.is_current and not session.busy, timeout=30000)
        # Head 1's result arrived and was dropped: never shown, never current.
        assert session.dropped_outcomes >= 1
        assert [o.focus for o in shown[before:]] == [(0, 2)]
        current = session.current_outcome()
        assert current is not None and current.focus == (0, 2)
        np.testing.assert_array_equal(current.view.weights, run_state(state, 0, (0, 2)).view.weights)
        # Nothing was edited: no undo step, no new document version.
        assert session.undo_stack.count() == steps and session.document.version == version
    finally:
        release.set()
        session.shutdown()


def test_undo_and_redo_of_an_edit_bring_its_head_back(qtbot):
    from attnviz.ui.app.session import AppSession

    session = AppSession(Document(State.from_run(make_run())))
    try:
        session.set_focus(1, 2)
        session.push(SetBlock("keys", 0, 0, 0, np.array([[7.0]])))  # made on head 2 of call 1
        assert session.document.state.head_view((1, 2)).keys[0, 0, 0] == 7
        session.set_focus(0, 0)
        session.undo_stack.undo()
        assert session.selection.focus == (1, 2) and session.document.state.head_view((1, 2)).keys[0, 0, 0] != 7
        session.set_focus(0, 1)
        session.undo_stack.redo()
        assert session.selection.focus == (1, 2) and session.document.state.head_view((1, 2)).keys[0, 0, 0] == 7
        # A new input with fewer heads: the head on show moves into it.
        session.push(ReplaceState(State.from_run(make_run(layers=1, heads=2))))
        assert session.selection.focus == (0, 1)
        session.undo_stack.undo()  # the whole run back, and the head that was on show with it
        assert session.selection.focus == (1, 2)
    finally:
        session.shutdown()


@pytest.fixture
def window(qtbot):
    from attnviz.ui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    wait_current(qtbot, win)
    return win


def test_the_causal_setting_is_the_calls_own_and_follows_the_layer_on_show(qtbot, window):
    causal = window.controls.settings.combos["causal"]
    window.session.push(ReplaceState(State.from_run(make_run()), "a model", Focus(0, 0)))
    wait_current(qtbot, window)
    assert causal.currentData() == "top_left"  # call 0 is causal, as the model ran it
    window.session.set_focus(1, 0)
    wait_current(qtbot, window)
    assert causal.currentData() is None  # call 1 is not
    assert window.session.current_view().mask.all()
    # Turned on for call 1 (every head of it), from the settings panel.
    causal.setCurrentIndex(causal.findData("bottom_right"))
    wait_current(qtbot, window)
    assert window.session.document.state.head_view((1, 2)).causal == "bottom_right"
    window.session.set_focus(1, 2)  # another head of the same call: the same flag
    wait_current(qtbot, window)
    assert causal.currentData() == "bottom_right" and not window.session.current_view().mask.all()
    window.session.set_focus(0, 1)  # call 0: its own flag, untouched
    wait_current(qtbot, window)
    assert causal.currentData() == "top_left"
    window.session.set_focus(1, 0)  # back to call 1: the user's choice is still there
    wait_current(qtbot, window)
    assert causal.currentData() == "bottom_right"
    window.session.set_focus(0, 0)
    window.session.undo_stack.undo()  # the change was made on call 1: undone there, shown there
    wait_current(qtbot, window)
    assert window.session.selection.layer == 1 and causal.currentData() is None
    assert window.session.document.state.head_view((0, 0)).causal == "top_left"
    # The undo menu says what was changed, not which head was looked at.
    assert window.session.undo_stack.count() == 2 and isinstance(
        window.session.undo_stack.command(1), type(window.session.undo_stack.command(0))
    )


def test_a_setting_of_the_run_applies_to_every_call(qtbot, window):
    window.session.push(ReplaceState(State.from_run(make_run()), "a model", Focus(1, 1)))
    wait_current(qtbot, window)
    window.session.push(SetSettings({"mask_mode": "strict"}))
    wait_current(qtbot, window)
    assert window.session.document.state.settings.mask_mode == "strict"
    window.session.set_focus(0, 0)
    wait_current(qtbot, window)
    assert window.controls.settings.combos["mask_mode"].currentData() == "strict"
