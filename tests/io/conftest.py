"""Shared helpers for the attnviz.io tests.

There is deliberately no ``__init__.py`` here: as a package this directory would be imported
as ``io`` and clash with the standard library. Test files are named ``test_io_*`` so their
module names stay unique across the suite.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from attnviz.io import AttnvizFileError, TensorFileError, load_tensor_file


@pytest.fixture
def sample_arrays() -> dict[str, np.ndarray]:
    """One array per role and per common dtype, with distinct values so mix-ups show."""
    rng = np.random.default_rng(1234)
    return {
        "queries": rng.standard_normal((2, 3, 4)).astype(np.float32),
        "keys": rng.standard_normal((2, 5, 4)),  # float64
        "values": rng.standard_normal((2, 5, 6)).astype(np.float16),
        "valid_lens": np.array([5, 2], dtype=np.int64),
        "mask": rng.random((2, 3, 5)) > 0.5,
        "counts": np.arange(6, dtype=np.int32).reshape(2, 3),
        "small": np.array([0, 255, 7], dtype=np.uint8),
    }


def check_refusal(error: AttnvizFileError, path: Path, *needles: str) -> None:
    """A refusal is one line, names the file first, and says what is wrong."""
    message = str(error)
    assert "\n" not in message
    assert message.startswith(f"{path.name}: "), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


@pytest.fixture
def refused() -> Callable[..., TensorFileError]:
    """``refused(path, *needles, **limits)``: load must raise TensorFileError naming the problem."""

    def run(path: Path, *needles: str, **limits: int) -> TensorFileError:
        with pytest.raises(TensorFileError) as info:
            load_tensor_file(path, **limits)
        assert type(info.value) is TensorFileError
        check_refusal(info.value, path, *needles)
        return info.value

    return run


@pytest.fixture
def cut_in_half() -> Callable[[Path], Path]:
    def run(path: Path) -> Path:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        assert os.path.getsize(path) == len(data) // 2
        return path

    return run
