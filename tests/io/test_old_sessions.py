"""Sessions written by earlier versions (format 1 and 2, before the document always held a run;
3, before sessions kept what a run is compared with) still open, show the head they showed, and
give the outcome the version that wrote them computed: its masks exactly, its numbers up to the
order of the sums (``tests/data/sessions/README.md`` says how they were made). Saved again they
are version 3 (nothing compared) and open the same."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attnviz.compute import run_state
from attnviz.io.session_state import load_state_and_focus, save_state_file
from tests.float_tolerance import assert_reordered_close

SESSIONS = Path(__file__).resolve().parents[1] / "data" / "sessions"
NAMES = sorted(path.stem for path in SESSIONS.glob("*.attnviz"))


def _version(path: Path) -> int:
    with np.load(path, allow_pickle=False) as archive:
        return int(json.loads(str(archive["__session__"]))["version"])


@pytest.fixture(scope="module")
def expected() -> dict[str, np.ndarray]:
    with np.load(SESSIONS / "expected.npz", allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def test_every_kind_of_old_session_is_here():
    assert {_version(SESSIONS / f"{name}.attnviz") for name in NAMES} == {1, 2, 3}
    assert len(NAMES) == 5


@pytest.mark.parametrize("name", NAMES)
def test_an_old_session_opens_on_its_head_with_the_outcome_it_had(name, expected, tmp_path):
    notes: list[str] = []
    state, focus = load_state_and_focus(SESSIONS / f"{name}.attnviz", notes=notes)
    assert notes == []  # nothing ignored, nothing defaulted: every old field has its place
    assert focus == tuple(int(x) for x in expected[f"{name}/focus"])
    outcome = run_state(state, 0, focus)
    assert outcome.error is None, outcome.error
    # The mask exactly; the numbers up to the order of the sums: the expected ones were computed
    # once on another machine, whose kernels sum in their own order.
    for what in ("weights", "output", "mask"):
        assert_reordered_close(getattr(outcome.view, what), expected[f"{name}/{what}"], what)
    # Saved again: the new shape, the same outcome.
    path = tmp_path / "again.attnviz"
    save_state_file(path, state, focus)
    assert _version(path) == 3
    again, again_focus = load_state_and_focus(path)
    assert again_focus == focus
    np.testing.assert_array_equal(run_state(again, 0, again_focus).view.weights, outcome.view.weights)


def test_the_settings_causal_flag_and_scale_of_old_sessions_go_to_the_call_on_show():
    book, _ = load_state_and_focus(SESSIONS / "v1-dot-causal-scale-window-docs.attnviz")
    head = book.head_view()
    assert (head.causal, head.scale) == ("bottom_right", 0.25) and book.run.source == "book"
    model, focus = load_state_and_focus(SESSIONS / "v2-model-run.attnviz")
    # Saved at call 1 with causal turned off there: that call is no longer causal; call 0 is
    # as the model ran it, and each call keeps its own scale.
    assert model.head_view(focus).causal is None and model.head_view((0, 0)).causal == "top_left"
    assert model.run.calls[1].scale == 0.5 and model.run.calls[0].scale is None
    assert model.head_view(focus).queries[1, 2, 1] == 9.0  # the cell typed on head 2
