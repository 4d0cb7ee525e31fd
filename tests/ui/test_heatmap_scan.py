"""Whole-map passes a block of rows at a time (``heatmap.scan``): the answers of the whole-array
spelling, with temporaries of one block whatever the map's size."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from attnviz.ui.app.results_panel import weight_levels
from attnviz.ui.heatmap import scan


def hostile(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Weights with zeros, negatives, NaN and infinities sprinkled in."""
    rng = np.random.default_rng(seed)
    a = rng.random(shape, dtype=np.float32)
    picks = rng.random(shape)
    a[picks < 0.05] = 0.0
    a[(picks >= 0.05) & (picks < 0.07)] = -1.0
    a[(picks >= 0.07) & (picks < 0.08)] = np.nan
    a[(picks >= 0.08) & (picks < 0.085)] = np.inf
    return a


@pytest.mark.parametrize("shape", [(0, 0), (7,), (3, 5, 7), (2, 3, 40, 33), (1000, 3)])
@pytest.mark.parametrize("sample", [4, 1 << 16])
def test_positive_values_are_the_filtered_arrays(monkeypatch, shape, sample) -> None:
    # Blocks of 50 cells: every shape here spans several, rows split where a block ends.
    monkeypatch.setattr(scan, "BLOCK_ELEMENTS", 50)
    a = hostile(shape, seed=len(shape) + sample)
    whole = a[np.isfinite(a) & (a > 0)]
    found = scan.positive_values(a, sample)
    assert found.total == whole.size
    step = max(1, whole.size // sample) if whole.size else 1
    np.testing.assert_array_equal(found.strided, whole[::step])  # the same elements, not a tolerance
    assert found.least == (float(whole.min()) if whole.size else np.inf)


def test_blocks_cover_every_cell_once_in_order(monkeypatch) -> None:
    monkeypatch.setattr(scan, "BLOCK_ELEMENTS", 64)
    a = np.arange(2 * 3 * 17 * 9).reshape(2, 3, 17, 9)
    np.testing.assert_array_equal(np.concatenate([b.ravel() for b in scan.blocks(a)]), a.ravel())
    wide = np.arange(3 * 1000).reshape(3, 1000)  # a row wider than a block: one row a block
    assert [b.shape for b in scan.blocks(wide)] == [(1, 1000)] * 3


def test_equal_is_array_equal_with_nan_equal(monkeypatch) -> None:
    monkeypatch.setattr(scan, "BLOCK_ELEMENTS", 50)
    a = hostile((3, 20, 30), seed=1)
    b = a.copy()
    assert scan.equal(a, b) and scan.equal(a, a)
    b[2, 19, 29] = 0.5 if a[2, 19, 29] != 0.5 else 0.25  # the last block differs
    assert not scan.equal(a, b)
    assert not scan.equal(a, a[:, :, :29])
    masks = a > 0.5
    assert scan.equal(masks, masks.copy()) and not scan.equal(masks, ~masks)


@pytest.mark.parametrize("color_range", ["batch", "log", "unit"])
def test_weight_levels_are_those_of_the_whole_spelling(color_range) -> None:
    """The levels as they were computed before (the filtered copy of every weight, a strided
    sample of it): the same numbers, bit for bit, since the same elements are picked."""
    a = hostile((4, 300, 200), seed=5)
    if color_range == "unit":
        assert weight_levels(a, a > 0, color_range) == (0.0, 1.0)
        return
    positive = a[np.isfinite(a) & (a > 0)]
    top = float(np.percentile(positive[:: positive.size // (1 << 16)], 99.5))
    expected = (0.0, top) if color_range == "batch" else (max(float(positive.min()), top * 1e-6), top)
    assert weight_levels(a, a > 0, color_range) == expected
    few = np.array([[0.25, np.nan], [0.5, -1.0]], np.float32)  # at most 1000: the maximum
    assert weight_levels(few, few > 0, "batch") == (0.0, 0.5)
    assert weight_levels(np.zeros((3, 3), np.float32), np.ones((3, 3), bool), "batch") == (0.0, 1.0)


def test_a_heads_grid_s_levels_and_comparison_stay_within_a_few_blocks() -> None:
    """8 heads of 1024 x 1024 (32 MiB of weights): the whole spelling made over 40 MiB of
    temporaries (masks, the filtered copy); a block's are a few MiB."""
    weights = np.random.default_rng(0).random((8, 1024, 1024), dtype=np.float32)
    other, mask = weights.copy(), np.ones(weights.shape, bool)
    tracemalloc.start()
    try:
        weight_levels(weights, mask, "log")
        assert scan.equal(weights, other)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20, f"{peak / 2**20:.1f} MiB of temporaries"
