"""Issue 22's loose ends of the readers: tokens bounded before numpy stores them (points 2, 5),
non-finite numbers that round-trip where a format allows them and are refused where it does not
(points 3, 6), and the session manifest's values of the wrong type (point 9). Every refusal is
one line naming the file."""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attnviz.bench.safety import HOSTILE_PEAK_MB, probe_load, width_bomb_capture, width_bomb_session
from attnviz.io import (
    CaptureFileError,
    Session,
    SessionFileError,
    claim_autosave,
    load_capture,
    load_session,
    save_capture,
    save_session,
)
from attnviz.io._limits import MAX_LABEL_CHARS
from attnviz.io.capture_file import ALIGNMENT, MAGIC
from attnviz.io.session_state import load_state_file, save_state_file, session_to_state, state_to_session
from attnviz.state.document import State
from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the peak")


def small_run(fidelity: float | None = 1e-7, tokens: list[str] | None = None) -> ModelRun:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 4, 3)).astype(np.float32) for _ in range(3))
    call = AttentionCall("layer 0", q, k, v, MaskArguments(), output=q.copy(), fidelity=fidelity)
    labels = None if tokens is None else np.array([tokens])
    return ModelRun((call,), labels, labels, source="capture")


def rewrite_capture_header(path: Path, change: Any) -> None:
    """Apply ``change(header_text) -> header_text`` to a capture file's JSON header."""
    raw = path.read_bytes()
    start = len(MAGIC) + 8
    (length,) = struct.unpack("<Q", raw[len(MAGIC) : start])
    text = change(raw[start : start + length].decode()).encode()
    text += b" " * (-(start + len(text)) % ALIGNMENT)
    path.write_bytes(MAGIC + struct.pack("<Q", len(text)) + text + raw[start + length :])


def session_with_model(path: Path, **model_changes: Any) -> Path:
    save_state_file(path, State.from_run(small_run()))
    session = load_session(path)
    for key, value in model_changes.items():
        if key == "call":
            session.model["calls"][0].update(value)
        else:
            session.model[key] = value
    save_session(path, session)
    return path


def one_line_naming(exc: BaseException, name: str) -> str:
    text = str(exc)
    assert "\n" not in text and text.startswith(f"{name}: "), text
    return text


# ----------------------------------------------------------------------------- point 2: width bombs


@linux_only
@pytest.mark.parametrize("build", [width_bomb_capture, width_bomb_session], ids=["capture", "session"])
def test_one_wide_token_among_short_ones_is_refused_before_numpy_pads_them(tmp_path: Path, build: Any) -> None:
    path = build(tmp_path / ("bomb.attnviz-capture" if build is width_bomb_capture else "bomb.attnviz"))
    result = probe_load(path, headroom_mb=1024)  # numpy's padded copy alone would be 3.6 GB
    assert result.error is not None and result.error.split(": ", 1)[1].startswith(f"{path.name}: "), result
    assert "1,000,000 characters wide (labels of at most 256 are read)" in result.error
    assert result.peak_mb < HOSTILE_PEAK_MB, result


def test_tokens_longer_than_a_label_are_shortened_when_written_and_read_back(tmp_path: Path) -> None:
    long = "y" * 1000
    run = small_run(tokens=[long, "b", "c", "d"])
    save_capture(tmp_path / "run.attnviz-capture", run)
    shortened = "y" * (MAX_LABEL_CHARS - 1) + "\u2026"
    assert load_capture(tmp_path / "run.attnviz-capture").query_tokens[0].tolist() == [shortened, "b", "c", "d"]
    save_state_file(tmp_path / "run.attnviz", State.from_run(run))
    loaded = load_state_file(tmp_path / "run.attnviz")
    assert loaded.run.key_tokens[0, 0] == shortened


# ----------------------------------------------------------------------------- point 3: infinite fidelity


def test_a_capture_with_infinite_fidelity_saves_as_a_session_and_autosaves(tmp_path: Path) -> None:
    save_capture(tmp_path / "nan.attnviz-capture", small_run(fidelity=math.inf))
    state = State.from_run(load_capture(tmp_path / "nan.attnviz-capture"))
    save_state_file(tmp_path / "nan.attnviz", state)
    loaded = load_state_file(tmp_path / "nan.attnviz")
    assert loaded.run.calls[0].fidelity == math.inf
    slot = claim_autosave(tmp_path / "autosaves")
    try:
        slot.write(state_to_session(state))
        restored = slot.read()
        assert restored is not None
        assert session_to_state(restored, source=slot.path).run.calls[0].fidelity == math.inf
    finally:
        slot.discard()


# ----------------------------------------------------------------------------- point 6: 1e400 and friends


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1E999", "NaN", "Infinity"])
def test_json_numbers_past_a_float_are_refused_like_nan_in_a_capture(tmp_path: Path, number: str) -> None:
    path = tmp_path / "scale.attnviz-capture"
    save_capture(path, small_run())
    rewrite_capture_header(path, lambda text: text.replace('"scale":null', f'"scale":{number}'))
    with pytest.raises(CaptureFileError) as caught:
        load_capture(path)
    assert "is not a number JSON allows" in one_line_naming(caught.value, path.name)


def test_an_integer_too_large_for_a_float_is_an_invalid_scale(tmp_path: Path) -> None:
    path = tmp_path / "scale.attnviz-capture"
    save_capture(path, small_run())
    rewrite_capture_header(path, lambda text: text.replace('"scale":null', '"scale":' + "9" * 400))
    with pytest.raises(CaptureFileError, match="call 0: 'scale' is .*; expected null or a number > 0"):
        load_capture(path)


@pytest.mark.parametrize("number", ["1e400", "NaN", "-Infinity"])
def test_json_numbers_past_a_float_are_refused_in_a_session(tmp_path: Path, number: str) -> None:
    path = session_with_model(tmp_path / "s.attnviz", call={"scale": 0.5})
    session = load_session(path)
    text = json.dumps(
        {
            "format": "attnviz-session",
            "version": 2,
            "settings": session.settings,
            "arrays": list(session.arrays),
            "model": session.model,
        }
    ).replace("0.5", number)
    members = {"__session__": np.array(text), **session.arrays}
    np.savez(path.with_suffix(".npz"), **members)
    path.with_suffix(".npz").rename(path)
    with pytest.raises(SessionFileError) as caught:
        load_session(path)
    assert "is not a number JSON allows" in one_line_naming(caught.value, path.name)


# ----------------------------------------------------------------------------- points 5 and 9: the manifest


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"calls": [5]}, "call 0 is 5, not an object"),
        ({"call": {"is_causal": "false"}}, "call 0: 'is_causal' is 'false'; expected true or false"),
        ({"call": {"name": ["a", "b"]}}, "call 0: 'name' is ['a', 'b']; expected a non-empty string"),
        ({"call": {"fidelity": -1}}, "call 0: 'fidelity' is -1; expected null, \"inf\" or a number >= 0"),
        ({"call": {"fidelity": "nan"}}, "call 0: 'fidelity' is 'nan'"),
        ({"call": {"scale": "2"}}, "call 0: 'scale' is '2'; expected null or a number > 0"),
        ({"call": {"note": 3}}, "call 0: 'note' is 3; expected a string"),
        ({"layer": 1.9}, "'layer' is 1.9; expected a whole number"),
        ({"head": True}, "'head' is True; expected a whole number"),
    ],
)
def test_manifest_values_of_the_wrong_type_are_refused_not_converted(
    tmp_path: Path, changes: dict[str, Any], needle: str
) -> None:
    path = session_with_model(tmp_path / "typed.attnviz", **changes)
    with pytest.raises(SessionFileError) as caught:
        load_state_file(path)
    assert needle in one_line_naming(caught.value, path.name)


def test_what_no_check_foresaw_is_still_a_refusal_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = session_with_model(tmp_path / "odd.attnviz")

    def broken(*_args: object) -> None:
        raise AttributeError("'int' object has no attribute 'get'")

    monkeypatch.setattr("attnviz.io.session_state._run_from_session", broken)
    with pytest.raises(SessionFileError) as caught:
        load_state_file(path)
    assert "is damaged ('int' object has no attribute 'get')" in one_line_naming(caught.value, path.name)


# ----------------------------------------------------------------------------- what is saved opens again


def test_a_session_of_many_tokens_opens_again_and_one_past_the_bound_is_not_written(tmp_path: Path) -> None:
    b, n = 16, 4096  # 131,072 tokens: past the manifest's old bound of 1 Mi characters
    q = np.zeros((b, 1, n, 1), np.float32)
    tokens = np.array([[f"tok{i}" for i in range(n)]] * b)
    run = ModelRun((AttentionCall("c", q, q, q, MaskArguments()),), tokens, tokens, source="capture")
    save_state_file(tmp_path / "many.attnviz", State.from_run(run))
    loaded = load_state_file(tmp_path / "many.attnviz")
    assert loaded.run.query_tokens.shape == (b, n)
    huge = Session(arrays={"queries": np.zeros((1, 1, 1))}, settings={}, model={"x": "y" * (9 * 2**20)})
    with pytest.raises(SessionFileError, match="cannot be written: its description would be 9,437,"):
        save_session(tmp_path / "huge.attnviz", huge)
    assert not (tmp_path / "huge.attnviz").exists()


def test_a_manifest_of_a_million_lists_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "lists.attnviz"
    text = '{"format": "attnviz-session", "version": 1, "arrays": [], "settings": {"x": [' + "[]," * 1_200_000 + "[]]}}"
    np.savez(tmp_path / "lists.npz", __session__=np.array(text))
    (tmp_path / "lists.npz").rename(path)
    with pytest.raises(SessionFileError) as caught:
        load_session(path)
    assert "with 1,200,005 JSON objects and lists (at most 1,000,000 allowed)" in one_line_naming(
        caught.value, path.name
    )
