"""Session files: round trip, plain-numpy readability, atomic saves, refusals (autosave: test_io_autosave)."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.lib.format as npformat
import pytest

import attnviz.io._npy as npy_module
from attnviz.io import Session, SessionFileError, load_session, save_session
from attnviz.io.session import FORMAT_NAME, FORMAT_VERSION

SETTINGS: dict[str, Any] = {
    "scoring": "scaled_dot",
    "temperature": 0.5,
    "head": 2,
    "show_stages": ["scores", "weights"],
    "view": {"colormap": "viridis", "range": [0.0, 1.0], "locked": True, "note": None},
    "title": "Ünïcode ✓",
}


@pytest.fixture
def session(sample_arrays: dict[str, np.ndarray]) -> Session:
    return Session(arrays=sample_arrays, settings=SETTINGS)


def check_refusal(error: SessionFileError, path: Path, needle: str) -> None:
    message = str(error)
    assert "\n" not in message and message.startswith(f"{path.name}: "), message
    assert needle in message, f"{needle!r} not in {message!r}"


def refused(path: Path, needle: str, **limits: int) -> None:
    with pytest.raises(SessionFileError) as info:
        load_session(path, **limits)
    check_refusal(info.value, path, needle)


def test_round_trip(tmp_path: Path, session: Session) -> None:
    path = tmp_path / "work.attnviz"
    save_session(path, session)
    loaded = load_session(path)
    assert loaded.settings == SETTINGS
    assert list(loaded.arrays) == list(session.arrays)
    for name, array in session.arrays.items():
        assert loaded.arrays[name].dtype == array.dtype
        np.testing.assert_array_equal(loaded.arrays[name], array)
    assert loaded.arrays["valid_lens"].dtype == np.int64
    assert loaded.arrays["mask"].dtype == np.bool_


def test_torch_tensors_are_stored_as_arrays(tmp_path: Path) -> None:
    import torch

    path = tmp_path / "t.attnviz"
    save_session(path, Session(arrays={"q": torch.ones(2, 3, requires_grad=True), "n": torch.tensor([2])}))
    loaded = load_session(path)
    np.testing.assert_array_equal(loaded.arrays["q"], np.ones((2, 3), np.float32))
    assert loaded.arrays["n"].dtype == np.int64


def test_empty_session_and_tuple_settings(tmp_path: Path) -> None:
    path = tmp_path / "empty.attnviz"
    save_session(path, Session(settings={"shape": (2, 3)}))
    loaded = load_session(path)
    assert loaded.arrays == {}
    assert loaded.settings == {"shape": [2, 3]}  # JSON has no tuples


def test_plain_numpy_can_read_it(tmp_path: Path, session: Session) -> None:
    path = tmp_path / "work.attnviz"
    save_session(path, session)
    with np.load(path, allow_pickle=False) as archive:
        manifest = json.loads(str(archive["__session__"]))
        assert archive["__session__"].shape == ()
        assert manifest == {
            "format": FORMAT_NAME,
            "version": 1,  # no model: readable by attnviz versions that know format 1 only
            "settings": SETTINGS,
            "arrays": list(session.arrays),
        }
    save_session(path, Session(session.arrays, SETTINGS, model={"layer": 0}))
    with np.load(path, allow_pickle=False) as archive:
        manifest = json.loads(str(archive["__session__"]))
        # A run, nothing compared: readable by the readers of format 3.
        assert manifest["version"] == 3 and manifest["model"] == {"layer": 0}
        assert sorted(archive.files) == sorted(["__session__", *session.arrays])
        np.testing.assert_array_equal(archive["queries"], session.arrays["queries"])
    save_session(path, Session(session.arrays, SETTINGS, model={"layer": 0, "ablated_heads": [[0, 1]]}))
    with np.load(path, allow_pickle=False) as archive:
        assert json.loads(str(archive["__session__"]))["version"] == FORMAT_VERSION == 4


def test_documented_example_runs(tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = (Path(__file__).parents[2] / "attnviz" / "io" / "SESSION_FORMAT.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", doc, re.S)
    assert example is not None
    assert len(example.group(1).strip().splitlines()) <= 5
    save_session(tmp_path / "work.attnviz", session)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(example.group(1), namespace)  # our own documentation
    assert list(namespace["arrays"]) == list(session.arrays)
    np.testing.assert_array_equal(namespace["arrays"]["keys"], session.arrays["keys"])


# --- atomic saving ----------------------------------------------------------------------------


def test_failed_replace_leaves_previous_file_and_no_temporaries(
    tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "work.attnviz"
    save_session(path, session)
    before = path.read_bytes()

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    changed = Session(arrays={"other": np.ones(3)}, settings={"x": 1})
    with pytest.raises(SessionFileError) as info:
        save_session(path, changed)
    check_refusal(info.value, path, "No space left on device")
    monkeypatch.undo()

    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["work.attnviz"]
    assert load_session(path).settings == SETTINGS


def test_crash_in_the_middle_of_writing(tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "work.attnviz"
    save_session(path, session)
    before = path.read_bytes()
    real_write = npy_module.write_npy
    calls = {"n": 0}

    def write_then_die(stream: Any, array: np.ndarray) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # not even an Exception: cleanup must still happen
        real_write(stream, array)

    monkeypatch.setattr(npy_module, "write_npy", write_then_die)
    with pytest.raises(KeyboardInterrupt):
        save_session(path, session)
    assert calls["n"] == 3
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["work.attnviz"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_permissions_new_replaced_and_private(tmp_path: Path, session: Session) -> None:
    old_umask = os.umask(0o022)
    try:
        path = tmp_path / "new.attnviz"
        save_session(path, session)
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        path.chmod(0o640)
        save_session(path, session)
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
        save_session(tmp_path / "private.attnviz", session, private=True)
        assert stat.S_IMODE((tmp_path / "private.attnviz").stat().st_mode) == 0o600
    finally:
        os.umask(old_umask)


# --- refusing to save what cannot round-trip --------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "needle"),
    [
        ({"a": {1, 2}}, "settings['a'] is a set"),
        ({"a": float("nan")}, "settings['a'] is nan"),
        ({"a": [1, float("inf")]}, "settings['a'][1] is inf"),
        ({"a": {1: "x"}}, "has the key 1"),
        ({"a": np.float32(1.0)}, "float32"),
        ({"a": object()}, "is a object"),
        ([1, 2], "settings must be a dict"),
    ],
)
def test_unserialisable_settings_are_refused(tmp_path: Path, settings: Any, needle: str) -> None:
    path = tmp_path / "s.attnviz"
    with pytest.raises(SessionFileError) as info:
        save_session(path, Session(settings=settings))
    check_refusal(info.value, path, needle)
    assert not path.exists()


@pytest.mark.parametrize(
    ("arrays", "needle"),
    [
        ({"__session__": np.ones(2)}, "'__session__'"),
        ({"": np.ones(2)}, "named ''"),
        ({"o": np.array([None, 1])}, "Python objects"),
        ({"c": np.ones(2, np.complex64)}, "complex"),
        ({"s": np.array(["text"])}, "text"),
    ],
)
def test_unstorable_arrays_are_refused(tmp_path: Path, arrays: dict[str, Any], needle: str) -> None:
    path = tmp_path / "s.attnviz"
    with pytest.raises(SessionFileError) as info:
        save_session(path, Session(arrays=arrays))
    check_refusal(info.value, path, needle)
    assert not path.exists()


# --- refusing to load -------------------------------------------------------------------------


def write_archive(path: Path, manifest: Any, arrays: dict[str, np.ndarray], *, raw_manifest: str | None = None) -> Path:
    text = raw_manifest if raw_manifest is not None else json.dumps(manifest)
    with zipfile.ZipFile(path, "w") as archive:
        with archive.open("__session__.npy", "w") as member:
            npformat.write_array(member, np.array(text), allow_pickle=False)
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w") as member:
                npformat.write_array(member, array, allow_pickle=True)
    return path


def manifest(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"format": FORMAT_NAME, "version": 1, "settings": {}, "arrays": ["q"]}
    base.update(changes)
    return base


@pytest.mark.parametrize(
    ("content", "arrays", "needle"),
    [
        (manifest(), {"q": np.ones(2)}, None),  # control: this one is valid
        (
            manifest(version=5),
            {"q": np.ones(2)},
            "written by a newer attnviz (session format version 5); this version reads version 4 only",
        ),
        (manifest(version="1"), {"q": np.ones(2)}, "invalid session format version: '1'"),
        (manifest(version=0), {"q": np.ones(2)}, "invalid session format version"),
        (manifest(format="something-else"), {"q": np.ones(2)}, "is not an attnviz session"),
        (
            manifest(),
            {"q": np.ones(2), "extra": np.ones(1)},
            "holds array 'extra' that its manifest does not list",
        ),
        (manifest(arrays=["q", "k"]), {"q": np.ones(2)}, "is missing array 'k'"),
        (manifest(arrays=["q", "q"]), {"q": np.ones(2)}, "lists the same array twice"),
        (manifest(arrays="q"), {"q": np.ones(2)}, "damaged array list"),
        (manifest(settings=[1]), {"q": np.ones(2)}, "damaged settings"),
        ([1, 2], {}, "is not an attnviz session"),
        (manifest(), {"q": np.array([object()], dtype=object)}, "array 'q' holds Python objects"),
    ],
)
def test_invalid_sessions(tmp_path: Path, content: Any, arrays: dict[str, np.ndarray], needle: str | None) -> None:
    path = write_archive(tmp_path / "bad.attnviz", content, arrays)
    if needle is None:
        np.testing.assert_array_equal(load_session(path).arrays["q"], np.ones(2))
    else:
        refused(path, needle)


def test_bad_json_and_bad_manifest_member(tmp_path: Path) -> None:
    refused(write_archive(tmp_path / "a.attnviz", None, {}, raw_manifest="{not json"), "not valid JSON")
    path = tmp_path / "b.attnviz"
    with zipfile.ZipFile(path, "w") as archive, archive.open("__session__.npy", "w") as member:
        npformat.write_array(member, np.ones(3))
    refused(path, "should be a single text string")


def test_unexpected_non_array_member(tmp_path: Path) -> None:
    path = write_archive(tmp_path / "x.attnviz", manifest(), {"q": np.ones(2)})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("run.sh", "rm -rf ~")
    refused(path, "unexpected member 'run.sh'")


def test_not_a_session(tmp_path: Path, sample_arrays: dict[str, np.ndarray]) -> None:
    with open(tmp_path / "plain.attnviz", "wb") as handle:  # a path would get ".npz" appended
        np.savez(handle, **sample_arrays)  # type: ignore[arg-type]
    refused(tmp_path / "plain.attnviz", "no '__session__' member")
    np.save(tmp_path / "one.npy", np.ones(2))
    refused(tmp_path / "one.npy", "not a complete zip archive")
    refused(tmp_path / "missing.attnviz", "does not exist")
    (tmp_path / "empty.attnviz").touch()
    refused(tmp_path / "empty.attnviz", "is empty")
    refused(tmp_path, "is a directory")


def test_truncated_and_oversized_sessions(tmp_path: Path, session: Session) -> None:
    path = tmp_path / "work.attnviz"
    save_session(path, session)
    refused(path, "array 'queries' holds 24 elements", max_elements=10)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    refused(path, "truncated or damaged")


def test_huge_member_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.attnviz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("__session__.npy", "w") as member:
            npformat.write_array(member, np.array(json.dumps(manifest())))
        with archive.open("q.npy", "w") as member:
            npformat.write_array_header_2_0(member, {"descr": "<f8", "fortran_order": False, "shape": (10**9,)})
            member.write(b"\0" * 1000)
    refused(path, "array 'q' holds 1,000,000,000 elements (8.0 GB), more than the 67,108,864 allowed")
