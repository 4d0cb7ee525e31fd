"""The window's mask doctor shows what a run could not be checked for (``Diagnosis.notes``),
not only its findings (issue 34)."""

from __future__ import annotations

import torch

import attnviz
from attnviz.capture import diagnose_run
from attnviz.state.document import ReplaceState, State
from attnviz.state.run import Focus, ModelRun
from tests.capture.test_doctor_positions import rotate_unseen
from tests.compare import bug_models as bugs
from tests.ui.conftest import wait_current


def unchecked_step() -> ModelRun:
    """A cached step of a rotary decoder whose new token repeats none in its cache and whose
    rotation has frequencies of no rotary table: its positions cannot be read from the capture."""
    model = bugs.RotaryDecoder()
    inputs = bugs.padded((6, 6, 6))
    ids = inputs["input_ids"]
    new = next(t for t in range(1, bugs.VOCAB) if not bool((ids[:, :4] == t).any()))
    arguments = bugs.cached_step(model, inputs, 4, torch.full_like(ids[:, :1], new))
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**arguments)
    return cap.to_run()


def test_the_doctor_view_shows_the_diagnosis_notes(qtbot, window, monkeypatch):
    monkeypatch.setattr(bugs, "rotate", rotate_unseen)  # positions the capture cannot read
    run = unchecked_step()
    expected = diagnose_run(run)
    assert expected == [] and expected.notes  # nothing wrong found, something not checked
    window.session.push(ReplaceState(State.from_run(run), "a model", Focus(0, 0)))
    wait_current(qtbot, window)
    window.doctor_dock.show()
    window.doctor_dock.raise_()
    view = window.doctor_dock.view()
    qtbot.waitUntil(lambda: view.findings is not None, timeout=30000)
    assert not view.notes.isHidden()
    text = view.notes.text()
    assert text.startswith("Note: positions not checked in the cached step(s) of call(s) 0, 1"), text
    assert "attnviz check --checks kv_cache" in text
    assert "could not be checked" in view.summary.text()
