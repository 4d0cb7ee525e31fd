"""A user's tensor file as a State (attnviz.io.tensor_import)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attnviz.io import TensorFile, TensorFileError
from attnviz.io.tensor_import import StateFileError, state_from_tensor_file, tensor_file_focus
from attnviz.teaching.presets import PRESETS


def tensor_file(tmp_path: Path, **arrays: np.ndarray) -> TensorFile:
    return TensorFile(tmp_path / "user.npz", "npz", dict(arrays))


BASE = PRESETS["additive-toy"].build()  # (2, 1, 20) queries, (2, 10, 2) keys, (2, 10, 4) values


def test_2d_arrays_get_a_batch_axis_and_missing_lengths_mean_all_valid(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    notes: list[str] = []
    state = state_from_tensor_file(
        tensor_file(tmp_path, q=q, k=k, v=v), {"queries": "q", "keys": "k", "values": "v"}, None, BASE, notes=notes
    )
    head = state.head_view()
    assert head.queries.shape == (1, 3, 4) and head.keys.shape == (1, 5, 4) and head.values.shape == (1, 5, 2)
    np.testing.assert_array_equal(head.queries[0], q)
    assert head.queries.dtype == np.float64 and state.run.single_head
    assert state.settings.lens_mode == "none"
    np.testing.assert_array_equal(state.lens_1d, [5])
    np.testing.assert_array_equal(state.lens_2d, [[5, 5, 5]])
    assert state.params == {}  # the file brings no parameters
    # The file brings no settings: a real model's scoring, not the additive toy's, and it says so.
    assert BASE.settings.scoring == "additive" and state.settings.scoring == "scaled_dot"
    assert any("every key is valid" in n for n in notes)
    assert "the file brings no scoring settings: scaled dot-product scoring, as real models use" in notes


def test_4d_arrays_make_a_model_run_showing_the_chosen_head(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 4, 3, 8)).astype(np.float32)
    k = rng.standard_normal((2, 4, 6, 8)).astype(np.float32)
    v = rng.standard_normal((2, 4, 6, 5)).astype(np.float32)
    tf = tensor_file(tmp_path, q=q, k=k, v=v)
    roles = {"queries": "q", "keys": "k", "values": "v"}
    notes: list[str] = []
    first = state_from_tensor_file(tf, roles, None, BASE, notes=notes)  # no head: head 0, said
    assert first.run.heads(0) == 4 and tensor_file_focus(first, None, None) == (0, 0)
    assert "the file has 4 heads: head 0 is shown" in notes
    with pytest.raises(StateFileError, match=r"head 4 is out of range: layer 0 has 4 heads \(0 to 3\)"):
        state_from_tensor_file(tf, roles, 4, BASE)
    state = state_from_tensor_file(tf, roles, 2, BASE)
    focus = tensor_file_focus(state, None, 2)
    head = state.head_view(focus)
    np.testing.assert_array_equal(head.queries, q[:, 2])
    np.testing.assert_array_equal(head.keys, k[:, 2])
    np.testing.assert_array_equal(head.values, v[:, 2])
    assert state.run.heads(0) == 4 and focus == (0, 2)
    # A head out of a 4-D array still replaces only the inputs chosen, keeping the rest.
    only = state_from_tensor_file(tensor_file(tmp_path, k=np.zeros((2, 3, 10, 2))), {"keys": "k"}, 1, BASE)
    assert only.run.single_head and only.head_view().keys.shape == (2, 10, 2)
    assert tensor_file_focus(only, None, 1) == (0, 0)
    with pytest.raises(StateFileError, match=r"'k' \(keys\) has shape \(2, 3, 10, 2\).*head from 0 to 2"):
        state_from_tensor_file(tensor_file(tmp_path, k=np.zeros((2, 3, 10, 2))), {"keys": "k"}, None, BASE)


def test_valid_lengths_1d_and_2d_pick_the_lens_mode(tmp_path: Path) -> None:
    q, k, v = np.zeros((2, 3, 4)), np.zeros((2, 5, 4)), np.zeros((2, 5, 1))
    one = state_from_tensor_file(
        tensor_file(tmp_path, q=q, k=k, v=v, n=np.array([4, 2], dtype=np.int32)),
        {"queries": "q", "keys": "k", "values": "v", "valid_lens": "n"},
        None,
        BASE,
    )
    assert one.settings.lens_mode == "1d"
    np.testing.assert_array_equal(one.lens_1d, [4, 2])
    np.testing.assert_array_equal(one.lens_2d, [[4, 4, 4], [2, 2, 2]])
    per_query = np.array([[1, 2, 3], [5, 4, 0]])
    two = state_from_tensor_file(
        tensor_file(tmp_path, q=q, k=k, v=v, n=per_query),
        {"queries": "q", "keys": "k", "values": "v", "valid_lens": "n"},
        None,
        BASE,
    )
    assert two.settings.lens_mode == "2d"
    np.testing.assert_array_equal(two.lens_2d, per_query)
    # An unbatched (n, d) input with one length per query.
    solo = state_from_tensor_file(
        tensor_file(tmp_path, q=q[0], k=k[0], v=v[0], n=np.array([1, 2, 3])),
        {"queries": "q", "keys": "k", "values": "v", "valid_lens": "n"},
        None,
        BASE,
    )
    assert solo.settings.lens_mode == "2d"
    np.testing.assert_array_equal(solo.lens_2d, [[1, 2, 3]])


def test_roles_left_out_keep_the_current_arrays(tmp_path: Path) -> None:
    new_keys = np.full((2, 10, 2), 3.0)
    state = state_from_tensor_file(tensor_file(tmp_path, keys=new_keys), {"keys": "keys"}, None, BASE)
    head, base = state.head_view(), BASE.head_view()
    np.testing.assert_array_equal(head.keys, new_keys)
    np.testing.assert_array_equal(head.queries, base.queries)
    np.testing.assert_array_equal(head.values, base.values)
    # Same batch, queries and keys: the valid lengths and lens mode stay as they were.
    np.testing.assert_array_equal(state.lens_1d, BASE.lens_1d)
    assert state.settings == BASE.settings


@pytest.mark.parametrize(
    ("arrays", "roles", "needles"),
    [
        (
            {"k": np.zeros((2, 7, 2))},
            {"keys": "k"},
            ["keys (2, 7, 2) and values (2, 10, 4)", "values kept from the current inputs"],
        ),
        (
            {"q": np.zeros((3, 1, 20))},
            {"queries": "q"},
            ["batch sizes disagree", "queries (3, 1, 20)", "keys (2, 10, 2)"],
        ),
        (
            {"q": np.zeros((2, 1, 20)), "n": np.array([1, 2, 3])},
            {"queries": "q", "valid_lens": "n"},
            ["valid lengths 'n' have shape (3,)", "queries (2, 1, d)", "(2,) or (2, 1)"],
        ),
        ({"n": np.array([[1.5], [2.0]])}, {"valid_lens": "n"}, ["whole numbers", "1.5"]),
        ({"q": np.zeros(20)}, {"queries": "q"}, ["'q' (queries) has shape (20,)"]),
        (
            {"q": np.zeros((2, 2, 1, 1, 20))},
            {"queries": "q"},
            ["'q' (queries) has shape (2, 2, 1, 1, 20) (layers, batch, heads, n, d): a model's layers load with"],
        ),
        ({"q": np.zeros((2, 1, 20), dtype=bool)}, {"queries": "q"}, ["real numbers", "bool"]),
        (
            {"q": np.zeros((2, 1, 20)), "m": np.ones((2, 10), dtype=bool)},
            {"queries": "q", "mask": "m"},
            ["'m' (mask) comes with queries, keys and values from the same file", "keys, values were not chosen"],
        ),
        ({"m": np.ones((2, 10), dtype=bool)}, {"mask": "m"}, ["no array was chosen for queries"]),
        (
            {"q": np.zeros((2, 1, 20)), "attention_mask": np.ones((2, 1))},
            {"queries": "q", "valid_lens": "attention_mask"},
            ["'attention_mask' is a mask by its name, not valid lengths: choose it as attention_mask"],
        ),
        ({"q": np.zeros((2, 1, 20))}, {"queries": "nope"}, ["no array named 'nope'"]),
        ({"q": np.zeros((2, 1, 20))}, {}, ["no array was chosen"]),
        ({"q": np.zeros((2, 1, 20))}, {"weights": "q"}, ["'weights' is not a role"]),
    ],
)
def test_tensor_files_that_do_not_fit_are_refused_naming_the_shapes(
    tmp_path: Path, arrays: dict[str, np.ndarray], roles: dict[str, str], needles: list[str]
) -> None:
    with pytest.raises(StateFileError) as info:
        state_from_tensor_file(tensor_file(tmp_path, **arrays), roles, None, BASE)
    message = str(info.value)
    assert isinstance(info.value, TensorFileError)
    assert "\n" not in message and message.startswith("user.npz: "), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


def test_parameters_survive_only_when_dq_and_dk_are_unchanged(tmp_path: Path) -> None:
    base = replace(BASE)
    base.params = {"W_q": np.ones((8, 20)), "W_k": np.ones((8, 2)), "w_v": np.ones((1, 8))}
    kept = state_from_tensor_file(tensor_file(tmp_path, v=np.zeros((2, 10, 7))), {"values": "v"}, None, base)
    assert sorted(kept.params) == ["W_k", "W_q", "w_v"]
    dropped = state_from_tensor_file(tensor_file(tmp_path, k=np.zeros((2, 10, 3))), {"keys": "k"}, None, base)
    assert dropped.params == {}


def test_dot_scoring_with_unequal_dims_loads_with_a_note(tmp_path: Path) -> None:
    base = PRESETS["dot-toy"].build()
    notes: list[str] = []
    state = state_from_tensor_file(
        tensor_file(tmp_path, q=np.zeros((2, 1, 3))), {"queries": "q"}, None, base, notes=notes
    )
    assert state.head_view().queries.shape == (2, 1, 3)
    assert any("d_q = d_k" in n for n in notes)
