"""Damaged files of every format raise only TensorFileError/SessionFileError, never anything else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz.io import (
    Session,
    SessionFileError,
    TensorFileError,
    load_session,
    load_tensor_file,
    save_arrays,
    save_session,
)

ARRAYS = {
    "q": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
    "lens": np.array([1, 2]),
    "m": np.eye(2, dtype=bool),
}


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("originals")
    for suffix in ("npz", "pt", "safetensors"):
        save_arrays(folder / f"a.{suffix}", ARRAYS)
    save_arrays(folder / "a.npy", {"q": ARRAYS["q"]})
    save_session(folder / "a.attnviz", Session(ARRAYS, {"k": [1, 2]}))
    torch.save({"q": torch.ones(3, 4)}, folder / "legacy.pt", _use_new_zipfile_serialization=False)
    return {path.name: path.read_bytes() for path in folder.iterdir()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_files_are_refused_cleanly(tmp_path: Path, originals: dict[str, bytes], data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(originals)))
    content = bytearray(originals[name])
    how = data.draw(st.sampled_from(["flip", "cut", "insert"]))
    position = data.draw(st.integers(0, len(content) - 1))
    if how == "flip":
        content[position] ^= data.draw(st.integers(1, 255))
    elif how == "cut":
        del content[position:]
    else:
        content[position:position] = data.draw(st.binary(min_size=1, max_size=16))
    path = tmp_path / name
    path.write_bytes(bytes(content))
    loader = load_session if name.endswith(".attnviz") else load_tensor_file
    try:
        loader(path)
    except (TensorFileError, SessionFileError) as error:
        assert "\n" not in str(error) and str(error).startswith(f"{name}: ")
