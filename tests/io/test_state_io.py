"""State <-> session files and user tensor files (attnviz.io.state_io)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attnviz.document import MAX_BATCH, Settings, State, make_state
from attnviz.io import Session, SessionFileError, TensorFile, TensorFileError, load_session, save_session
from attnviz.io.state_io import (
    CAUSAL_NAMES,
    DTYPE_NAMES,
    MASK_MODE_NAMES,
    SCORING_NAMES,
    StateFileError,
    load_state_file,
    save_state_file,
    session_to_state,
    state_from_tensor_file,
    state_to_session,
    tensor_file_focus,
)
from attnviz.presets import PRESETS

ROOT = Path(__file__).parents[2]


def assert_same_state(a: State, b: State) -> None:
    ha, hb = a.head_view(), b.head_view()
    for name, x, y in (
        *((role, getattr(ha, role), getattr(hb, role)) for role in ("queries", "keys", "values")),
        ("lens_1d", a.lens_1d, b.lens_1d),
        ("lens_2d", a.lens_2d, b.lens_2d),
    ):
        assert x.shape == y.shape, name
        np.testing.assert_array_equal(x, y, err_msg=name)
    assert (ha.causal, ha.scale) == (hb.causal, hb.scale) and a.run.source == b.run.source
    assert a.settings == b.settings
    assert sorted(a.params) == sorted(b.params)
    for name in a.params:
        assert a.params[name].dtype == b.params[name].dtype
        np.testing.assert_array_equal(a.params[name], b.params[name])


def odd_state() -> State:
    """Every setting off its default, parameters present, lens arrays that differ."""
    rng = np.random.default_rng(7)
    queries = rng.standard_normal((3, 2, 4))
    queries[0, 0, 0] = np.nan  # a debugging tool must keep what the user typed
    state = State.from_tensors(
        queries,
        rng.standard_normal((3, 5, 3)),
        rng.standard_normal((3, 5, 2)),
        np.array([5, 0, 3]),
        np.array([[1, 2], [3, 4], [5, 0]]),
        causal="bottom_right",
        scale=0.5,
    )
    state.settings = Settings(
        scoring="bilinear",
        mask_mode="neg_inf",
        lens_mode="2d",
        device="cuda:1",
        dtype="bfloat16",
        dropout=0.25,
        train=True,
        dropout_seed=9,
        num_hiddens=16,
        param_seed=3,
        allow_nonfinite=True,
    )
    state.params = {"W": rng.standard_normal((4, 3)).astype(np.float32)}
    return state


# ------------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_survives_a_file_round_trip(tmp_path: Path, name: str) -> None:
    state = PRESETS[name].build()
    path = tmp_path / f"{name}.attnviz"
    save_state_file(path, state)
    notes: list[str] = []
    loaded = load_state_file(path, notes=notes)
    assert_same_state(state, loaded)
    assert notes == []


def test_every_setting_array_and_parameter_round_trips(tmp_path: Path) -> None:
    state = odd_state()
    path = tmp_path / "odd.attnviz"
    save_state_file(path, state)
    loaded = load_state_file(path)
    assert_same_state(state, loaded)
    assert np.isnan(loaded.head_view().queries[0, 0, 0])
    # Readable without attnviz, under the documented names.
    with np.load(path, allow_pickle=False) as z:
        assert set(z.files) == {
            "__session__",
            "run/0/queries",
            "run/0/keys",
            "run/0/values",
            "lens_1d",
            "lens_2d",
            "params/W",
        }
        assert z["run/0/queries"].shape == (3, 1, 2, 4)  # the book's input: one call of one head


def test_state_to_session_copies(tmp_path: Path) -> None:
    state = odd_state()
    session = state_to_session(state)
    state.lens_1d[0] = 123
    keys = state.run.calls[0].keys
    assert keys is not None and keys.flags.writeable  # the caller's own array, not yet frozen
    keys[0, 0, 0, 0] = 123.0
    assert session.arrays["run/0/keys"][0, 0, 0, 0] != 123.0 and session.arrays["lens_1d"][0] != 123
    call = session.model["calls"][0]
    assert call["is_causal"] and call["causal_alignment"] == "bottom_right" and call["scale"] == 0.5
    assert session.model["source"] == "book" and "causal" not in session.settings
    assert session.settings["dropout"] == 0.25


def test_unknown_settings_and_arrays_are_ignored_with_notes_missing_ones_defaulted() -> None:
    session = state_to_session(odd_state())
    session.settings["colormap"] = "magma"  # from a newer version, say
    del session.settings["dropout_seed"]
    del session.arrays["lens_1d"]
    session.arrays["attention_probe"] = np.zeros(3)
    notes: list[str] = []
    state = session_to_state(session, notes=notes)
    assert state.settings.dropout_seed == Settings().dropout_seed
    assert state.settings.scoring == "bilinear"
    np.testing.assert_array_equal(state.lens_1d, [5, 5, 5])  # "every key valid"
    text = " | ".join(notes)
    assert "unknown setting 'colormap'" in text
    assert "dropout_seed" in text
    assert "lens_1d" in text
    assert "attention_probe" in text


def test_integer_dropout_and_float_whole_lengths_are_accepted() -> None:
    session = state_to_session(PRESETS["dot-toy"].build())
    session.settings["dropout"] = 0
    session.arrays["lens_1d"] = np.array([2.0, 6.0])
    state = session_to_state(session)
    assert state.settings.dropout == 0.0 and isinstance(state.settings.dropout, float)
    assert state.lens_1d.dtype == np.int64
    np.testing.assert_array_equal(state.lens_1d, [2, 6])


# ------------------------------------------------------------------------------- refusals


def version_1(state: State) -> Session:
    """``state`` (the book's) as attnviz wrote it before format 3: the tensors at the top, the
    causal flag and scale among the settings."""
    head = state.head_view()
    arrays = {role: np.array(getattr(head, role)) for role in ("queries", "keys", "values")}
    arrays.update(lens_1d=state.lens_1d, lens_2d=state.lens_2d)
    arrays.update({f"params/{k}": v for k, v in state.params.items()})
    return Session(arrays, {**state.settings.as_dict(), "causal": head.causal, "scale": head.scale})


def _broken(change) -> Session:  # noqa: ANN001 - a small mutator
    session = version_1(PRESETS["additive-toy"].build())
    change(session)
    return session


def test_a_version_1_session_opens_as_the_books_run() -> None:
    state = odd_state()
    notes: list[str] = []
    loaded = session_to_state(version_1(state), notes=notes)
    assert_same_state(state, loaded)
    assert notes == []


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (lambda s: s.arrays.pop("values"), ["no 'values' array"]),
        (
            lambda s: s.arrays.__setitem__("keys", np.zeros((3, 10, 2))),
            ["batch sizes disagree", "(2, 1, 20)", "(3, 10, 2)"],
        ),
        (lambda s: s.arrays.__setitem__("values", np.zeros((2, 9, 4))), ["keys (2, 10, 2)", "values (2, 9, 4)"]),
        (lambda s: s.arrays.__setitem__("queries", np.zeros((1, 20))), ["'queries' must be 3-D", "(1, 20)"]),
        (lambda s: s.arrays.__setitem__("queries", np.zeros((2, 1, 20), dtype=bool)), ["real numbers", "bool"]),
        (
            lambda s: s.arrays.__setitem__("lens_2d", np.zeros((2, 3), dtype=np.int64)),
            ["'lens_2d' has shape (2, 3)", "(2, 1)"],
        ),
        (lambda s: s.arrays.__setitem__("lens_1d", np.array([2.5, 6.0])), ["whole numbers", "2.5"]),
        (lambda s: s.arrays.__setitem__("lens_1d", np.array([np.nan, 6.0])), ["whole numbers", "nan"]),
        (lambda s: s.arrays.__setitem__("mask", np.ones((2, 1, 10), dtype=bool)), ["'mask'", "masks/attn_mask"]),
        (lambda s: s.arrays.__setitem__("params/W_q", np.zeros((8, 20), dtype=bool)), ["params/W_q", "real numbers"]),
        (lambda s: s.settings.__setitem__("scoring", "cosine"), ["'scoring' is 'cosine'", "additive"]),
        (lambda s: s.settings.__setitem__("mask_mode", None), ["'mask_mode' is None"]),
        (lambda s: s.settings.__setitem__("causal", "top"), ["'causal' is 'top'", "bottom_right"]),
        (lambda s: s.settings.__setitem__("scale", -1), ["'scale' is -1", "above 0"]),
        (lambda s: s.settings.__setitem__("lens_mode", "3d"), ["'lens_mode' is '3d'"]),
        (lambda s: s.settings.__setitem__("dtype", "int8"), ["'dtype' is 'int8'"]),
        (lambda s: s.settings.__setitem__("dropout", 1.5), ["'dropout' is 1.5", "0 to 1"]),
        (lambda s: s.settings.__setitem__("train", "yes"), ["'train' is 'yes'"]),
        (lambda s: s.settings.__setitem__("num_hiddens", 0), ["'num_hiddens' is 0"]),
        (lambda s: s.settings.__setitem__("param_seed", True), ["'param_seed' is True"]),
        (lambda s: s.settings.__setitem__("device", ""), ["'device'"]),
        (lambda s: s.settings.__setitem__("allow_nonfinite", "no"), ["'allow_nonfinite' is 'no'", "bool"]),
        (lambda s: s.arrays.__setitem__("queries", np.zeros((MAX_BATCH + 1, 1, 2))), ["batch sizes disagree"]),
    ],
)
def test_inconsistent_old_sessions_are_refused_with_one_line(tmp_path: Path, change, needles: list[str]) -> None:  # noqa: ANN001
    path = tmp_path / "bad.attnviz"
    save_session(path, _broken(change))
    with pytest.raises(SessionFileError) as info:
        load_state_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("bad.attnviz: "), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


def _broken_run(change) -> Session:  # noqa: ANN001 - a small mutator
    session = state_to_session(PRESETS["additive-toy"].build())
    change(session)
    return session


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (lambda s: s.arrays.pop("run/0/values"), ["damaged model description", "only queries, keys found"]),
        (
            lambda s: s.arrays.__setitem__("run/0/keys", np.zeros((3, 1, 10, 2))),
            ["damaged model description", "batch", "(3, 1, 10, 2)"],
        ),
        (lambda s: s.model.__setitem__("calls", []), ["'calls' must be a non-empty list"]),
        (lambda s: s.model.__setitem__("head", 1), ["the head shown, 1 of call 0, is not in the model"]),
        (
            lambda s: s.model["calls"][0].__setitem__("causal_alignment", "middle"),
            ["'causal_alignment' is 'middle'"],
        ),
        (
            lambda s: s.arrays.__setitem__("lens_2d", np.zeros((2, 3), dtype=np.int64)),
            ["'lens_2d' has shape (2, 3)", "(2, 1)"],
        ),
        (
            lambda s: s.arrays.__setitem__("run/0/queries", np.zeros((MAX_BATCH + 1, 1, 1, 2))),
            ["batch"],
        ),
    ],
)
def test_inconsistent_sessions_are_refused_with_one_line(tmp_path: Path, change, needles: list[str]) -> None:  # noqa: ANN001
    path = tmp_path / "bad.attnviz"
    save_session(path, _broken_run(change))
    with pytest.raises(SessionFileError) as info:
        load_state_file(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith("bad.attnviz: "), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


def test_sizes_beyond_the_editor_limits_are_refused() -> None:
    state = make_state(batch=MAX_BATCH + 1, n_queries=1, n_keys=2, d_q=2, d_k=2, d_v=2)
    with pytest.raises(SessionFileError, match=f"batch size is {MAX_BATCH + 1}, more than the {MAX_BATCH}"):
        session_to_state(state_to_session(state), source="big.attnviz")
    empty = make_state(batch=1, n_queries=0, n_keys=2, d_q=2, d_k=2, d_v=2)
    with pytest.raises(SessionFileError, match="number of queries is 0"):
        session_to_state(state_to_session(empty))


def test_a_session_file_of_another_kind_stays_a_session_error(tmp_path: Path) -> None:
    path = tmp_path / "x.attnviz"
    path.write_bytes(b"not a zip at all")
    with pytest.raises(SessionFileError, match=r"^x\.attnviz: "):
        load_state_file(path)


def test_known_names_match_the_engine() -> None:
    # state_io spells them out so the GUI thread need not import torch; they must not drift.
    from attnviz.engine import CAUSAL_ALIGNMENTS, DTYPES, MASK_MODES, SCORINGS

    assert set(SCORING_NAMES) == set(SCORINGS)
    assert set(MASK_MODE_NAMES) == set(MASK_MODES)
    assert set(CAUSAL_NAMES) == set(CAUSAL_ALIGNMENTS)
    assert set(DTYPE_NAMES) == set(DTYPES)


def test_importing_state_io_loads_neither_torch_nor_qt() -> None:
    code = (
        "import sys, attnviz.io.state_io\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'PySide6', 'pyqtgraph')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


# --------------------------------------------------------------------------- tensor files


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


def test_a_session_loaded_from_disk_keeps_its_dtypes_of_parameters(tmp_path: Path) -> None:
    path = tmp_path / "p.attnviz"
    save_state_file(path, odd_state())
    assert load_session(path).arrays["params/W"].dtype == np.float32
    assert load_state_file(path).params["W"].dtype == np.float32
