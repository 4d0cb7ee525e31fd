"""State <-> session files (attnviz.io.session_state), settings checked by their declarations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.io import Session, SessionFileError, load_session, save_session
from attnviz.io.session_state import load_state_file, save_state_file, session_to_state, state_to_session
from attnviz.state.document import MAX_BATCH, Settings, State, make_state
from attnviz.teaching.presets import PRESETS

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
        (lambda s: s.settings.__setitem__("allow_nonfinite", "no"), ["'allow_nonfinite' is 'no'", "true or false"]),
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


@pytest.mark.parametrize("module", ["attnviz.io.session_state", "attnviz.io.tensor_import", "attnviz.state.settings"])
def test_importing_the_file_layer_loads_neither_torch_nor_qt(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'PySide6', 'pyqtgraph')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_a_session_loaded_from_disk_keeps_its_dtypes_of_parameters(tmp_path: Path) -> None:
    path = tmp_path / "p.attnviz"
    save_state_file(path, odd_state())
    assert load_session(path).arrays["params/W"].dtype == np.float32
    assert load_state_file(path).params["W"].dtype == np.float32


# ------------------------------------------------------------------------------- what a run is compared with


def _compared_state(tmp_path: Path) -> State:
    from dataclasses import replace

    from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

    g = np.random.default_rng(2)
    q, k, v = (g.standard_normal((2, 3, 4, 2)).astype(np.float32) for _ in range(3))
    run = ModelRun(
        tuple(AttentionCall(f"layers.{i}.attn", q, k, v, MaskArguments(is_causal=True)) for i in range(2)),
        source="capture",
    )
    return replace(
        State.from_run(run), ablated_heads=frozenset({(1, 2), (0, 0)}), compared_with=str(tmp_path / "other.capture")
    )


def test_ablated_heads_and_the_compared_file_round_trip_as_version_4(tmp_path: Path) -> None:
    import json

    state = _compared_state(tmp_path)
    path = tmp_path / "s.attnviz"
    save_state_file(path, state)
    with np.load(path, allow_pickle=False) as archive:
        manifest = json.loads(str(archive["__session__"]))
    assert manifest["version"] == 4
    assert manifest["model"]["ablated_heads"] == [[0, 0], [1, 2]]
    back = load_state_file(path)
    assert back.ablated_heads == {(0, 0), (1, 2)} and back.compared_with == state.compared_with
    # Neither: a version 3 session, opened with neither.
    from dataclasses import replace

    save_state_file(path, replace(state, ablated_heads=frozenset(), compared_with=None))
    with np.load(path, allow_pickle=False) as archive:
        assert json.loads(str(archive["__session__"]))["version"] == 3
    plain = load_state_file(path)
    assert plain.ablated_heads == frozenset() and plain.compared_with is None


def test_a_relative_compared_file_is_the_sessions_neighbour(tmp_path: Path) -> None:
    session = state_to_session(_compared_state(tmp_path))
    session.model["compared_with"] = "runs/other.attnviz-capture"
    (tmp_path / "work").mkdir()
    path = tmp_path / "work" / "s.attnviz"
    save_session(path, session)
    assert load_state_file(path).compared_with == str(tmp_path / "work" / "runs" / "other.attnviz-capture")


@pytest.mark.skipif(os.name == "nt", reason="three leading slashes are a share on Windows")
def test_three_leading_slashes_are_a_local_path_on_posix(tmp_path: Path) -> None:
    session = state_to_session(_compared_state(tmp_path))
    session.model["compared_with"] = "///srv/runs/other.attnviz-capture"
    path = tmp_path / "s.attnviz"
    save_session(path, session)
    assert load_state_file(path).compared_with == "///srv/runs/other.attnviz-capture"


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("ablated_heads", [[1, 3]], "the ablated head 3 of call 1 is not in the model"),
        ("ablated_heads", [[2, 0]], "the ablated head 0 of call 2 is not in the model"),
        ("ablated_heads", [[0, 1, 2]], "expected a [call, head] pair"),
        ("ablated_heads", [[0, 1.5]], "expected a whole number"),
        ("ablated_heads", [[True, 1]], "expected a whole number"),
        ("ablated_heads", {"0": 1}, "expected a list of [call, head] pairs"),
        ("compared_with", 7, "expected the path of a capture file"),
        ("compared_with", "", "expected the path of a capture file"),
        ("compared_with", "x" * 5000, "expected the path of a capture file"),
        ("compared_with", "a\0b", "expected the path of a capture file"),
        ("compared_with", "\\\\server\\share\\x.attnviz-capture", "expected the path of a capture file"),
        ("compared_with", "//server/share/x.attnviz-capture", "expected the path of a capture file"),
        ("compared_with", "/\\server\\share\\x.attnviz-capture", "expected the path of a capture file"),
        ("compared_with", "\\/server/share/x.attnviz-capture", "expected the path of a capture file"),
        ("compared_with", "\\??\\UNC\\server\\share\\x.attnviz-capture", "expected the path of a capture file"),
        ("compared_with", "\\\\?\\UNC\\server\\share\\x", "expected the path of a capture file"),
        ("compared_with", "\\\\.\\PhysicalDrive0", "expected the path of a capture file"),
    ],
)
def test_a_wrong_comparison_entry_is_refused_with_one_line(
    tmp_path: Path, key: str, value: object, needle: str
) -> None:
    session = state_to_session(_compared_state(tmp_path))
    session.model[key] = value
    path = tmp_path / "bad.attnviz"
    save_session(path, session)
    with pytest.raises(SessionFileError) as info:
        load_state_file(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith("bad.attnviz: ") and needle in message, message
