"""CSV export: documented layout, exact round trip through np.loadtxt, refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnviz.io import TensorFileError, save_csv


def test_2d_float32_round_trips_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((4, 6)).astype(np.float32)
    path = tmp_path / "w.csv"
    save_csv(path, weights)
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and all(line.count(",") == 5 for line in lines)
    np.testing.assert_array_equal(np.loadtxt(path, delimiter=",", dtype=np.float32), weights)


def test_float64_and_special_values(tmp_path: Path) -> None:
    values = np.array([[1 / 3, -0.0, np.inf], [np.nan, 1e-300, -2.5]])
    save_csv(tmp_path / "f.csv", values)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "f.csv", delimiter=","), values)


def test_3d_is_written_as_commented_blocks(tmp_path: Path) -> None:
    scores = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4) / 7
    path = tmp_path / "scores.csv"
    save_csv(path, scores)
    lines = path.read_text().splitlines()
    assert lines[0] == "# batch 0: 3 rows x 4 columns"
    assert lines[4] == "# batch 1: 3 rows x 4 columns"
    assert len(lines) == 8
    restored = np.loadtxt(path, delimiter=",", ndmin=2).reshape(2, 3, 4)
    np.testing.assert_array_equal(restored, scores)


def test_bool_int_and_1d(tmp_path: Path) -> None:
    save_csv(tmp_path / "m.csv", np.array([[True, False], [False, True]]))
    assert (tmp_path / "m.csv").read_text() == "1,0\n0,1\n"
    save_csv(tmp_path / "l.csv", np.array([5, 2, 7]))
    assert (tmp_path / "l.csv").read_text() == "5,2,7\n"


@pytest.mark.parametrize(
    ("array", "needle"),
    [
        (np.zeros((1, 2, 3, 4)), "1-D, 2-D or 3-D"),
        (np.zeros(()), "1-D, 2-D or 3-D"),
        (np.ones(2, np.complex64), "complex"),
    ],
)
def test_refusals(tmp_path: Path, array: np.ndarray, needle: str) -> None:
    with pytest.raises(TensorFileError, match=needle):
        save_csv(tmp_path / "x.csv", array)
    assert not (tmp_path / "x.csv").exists()
