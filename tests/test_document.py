"""The document: edits and their inverses, read-only arrays shared between states, snapshots
that copy nothing. Plain numpy, no Qt."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.state.document import Document, ReplaceState, SetBlock, SetSettings, State
from attnviz.teaching.presets import PRESETS


@pytest.fixture
def doc() -> Document:
    return Document(PRESETS["masked-softmax-1d"].build())


def test_arrays_are_read_only_and_a_caller_keeps_its_own(doc):
    state = doc.state
    head = state.head_view()
    for array in (head.queries, head.keys, head.values, state.lens_1d, state.lens_2d):
        assert not array.flags.writeable
    with pytest.raises(ValueError):
        head.queries[0, 0, 0] = 1.0
    mine = state.copy()  # a private copy to change and push back
    mine.lens_1d[0] = 1
    queries = np.array(head.queries)  # the caller's own array, given to a new state
    queries[0, 0, 0] = 42.0
    doc.apply(ReplaceState(State.from_tensors(queries, head.keys, head.values, mine.lens_1d, mine.lens_2d)))
    queries[0, 0, 0] = -1.0  # the document keeps what was pushed, not the caller's arrays
    mine.lens_1d[0] = 3
    assert doc.state.head_view().queries[0, 0, 0] == 42.0 and doc.state.lens_1d[0] == 1


def test_a_cell_edit_copies_only_the_array_it_changes(doc):
    before = doc.state
    inverse = doc.apply(SetBlock("keys", 1, 0, 0, np.array([[7.0]])))
    after = doc.state
    old, new = before.run.calls[0], after.run.calls[0]
    assert new.keys[1, 0, 0, 0] == 7.0 and old.keys[1, 0, 0, 0] != 7.0  # the old state is untouched
    assert new.keys is not old.keys
    assert new.queries is old.queries and new.values is old.values
    assert after.lens_1d is before.lens_1d and after.lens_2d is before.lens_2d
    assert not new.keys.flags.writeable
    doc.apply(inverse)
    np.testing.assert_array_equal(doc.state.head_view().keys, before.head_view().keys)


def test_valid_lengths_edit_the_array_the_lens_mode_shows(doc):
    doc.apply(SetBlock("valid_lens", 0, 1, 0, np.array([[3]])))
    assert doc.state.lens_1d.tolist()[1] == 3
    doc.apply(SetSettings({"lens_mode": "2d"}))
    lens_1d = doc.state.lens_1d
    doc.apply(SetBlock("valid_lens", 0, 0, 1, np.array([[1]])))
    assert doc.state.lens_2d[0, 1] == 1 and doc.state.lens_1d is lens_1d


def test_a_setting_copies_no_array_and_a_snapshot_copies_nothing(doc):
    before = doc.state
    doc.apply(SetSettings({"mask_mode": "strict"}))
    after = doc.state
    assert after.settings.mask_mode == "strict" and before.settings.mask_mode == "d2l"
    assert after.run is before.run
    snap = doc.snapshot()
    assert snap.version == doc.version and snap.state is doc.state and snap.focus == (0, 0)
    doc.apply(SetBlock("queries", 0, 0, 0, np.array([[5.0]])))
    assert snap.state.head_view().queries[0, 0, 0] != 5.0  # a later edit does not reach an earlier snapshot


def test_undo_of_a_replace_gives_back_the_very_state(doc):
    before = doc.state
    inverse = doc.apply(ReplaceState(PRESETS["dot-toy"].build()))
    doc.apply(inverse)
    assert doc.state.run is before.run and doc.state.settings == before.settings
