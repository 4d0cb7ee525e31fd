"""Scores that overflow from finite inputs are found (issue 22, point 4): ``attend`` counts them in
``diagnostics.overflowed_scores`` and says so in one warning, and no Python warning is printed.
Before, queries of 3e38 gave NaN weights with lines about NaN rows only, and ``scale=1e300``
skipped the look for NaN/Inf scores altogether (the inputs were small)."""

from __future__ import annotations

import warnings

import pytest
import torch

from attnviz.engine import attend

K = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(0))
V = torch.randn(2, 6, 3, generator=torch.Generator().manual_seed(1))


def overflow_lines(result) -> list[str]:  # noqa: ANN001
    return [w for w in result.diagnostics.warnings if "overflowed to Inf or NaN" in w]


@pytest.mark.parametrize(
    ("queries", "kwargs", "needle"),
    [
        (torch.full((2, 3, 4), 3e38), {}, "the largest is 3e+38, the scores multiplied by 0.5"),
        (torch.randn(2, 3, 4), {"scale": 1e300}, "the scores multiplied by 1e+300"),
        (torch.randn(2, 3, 4), {"scale": 1e300, "mask_mode": "sdpa", "valid_lens": torch.tensor([3, 6])}, "1e+300"),
        (torch.full((2, 3, 4), 1e39, dtype=torch.float64), {"dtype": "float32"}, "the largest is 1e+39"),
        (torch.full((2, 3, 4), 1e300, dtype=torch.float64), {"scoring": "dot"}, "in float64"),
    ],
    ids=["3e38", "scale", "scale-masked", "cast", "float64"],
)
def test_overflowing_scores_are_counted_and_said_once(queries: torch.Tensor, kwargs: dict, needle: str) -> None:
    keys = K.double() * 1e10 if queries.dtype == torch.float64 and "dtype" not in kwargs else K
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = attend(queries, keys, V.to(keys.dtype), **kwargs)
    diagnostics = result.diagnostics
    assert diagnostics.overflowed_scores > 0 and bool(torch.isnan(result.weights).any())
    lines = overflow_lines(result)
    assert len(lines) == 1 and "although every input is finite" in lines[0] and needle in lines[0], lines
    assert lines[0].startswith(f"{diagnostics.overflowed_scores} scores overflowed to Inf or NaN in")


def test_inputs_that_cannot_overflow_say_nothing() -> None:
    result = attend(torch.randn(2, 3, 4), K, V, scale=2.0)
    assert result.diagnostics.overflowed_scores == 0 and result.diagnostics.warnings == ()


def test_an_infinite_input_is_not_called_an_overflow() -> None:
    q = torch.randn(2, 3, 4)
    q[0, 0, 0] = torch.inf
    result = attend(q, K, V, allow_nonfinite=True)
    assert result.diagnostics.overflowed_scores == 0 and not overflow_lines(result)
    assert any("overflowed to Inf in float32" in w for w in result.diagnostics.warnings)
