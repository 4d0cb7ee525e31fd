"""How close two computations of the same arithmetic are when the hardware sums in another order.

A BLAS kernel picks its blocking and vector width from the shapes and the CPU: MKL takes other code
paths on Intel and AMD, AVX2 and AVX-512. A product over a block of rows, over a batch of another
size, or on another machine, is the same sum in another order: equal to within a few units in the
last place, not bit for bit (an AMD EPYC gives 2-7e-16 between a float64 block of rows and the full
product). Bitwise equality is only promised where the same kernel computes the same shapes on the
same machine (a copy, a second run of one call); everywhere else tests compare with these.

The tolerances are a few hundred units in the last place of the dtype, for values of order one
(attention weights, scores of unit-variance inputs): far below any real mistake (a wrong block of
a bias, a row masked twice, a head swapped move a weight by 1e-3 or more) and far above the
reordering of a dot product of a few dozen terms (about ``sqrt(d) * eps`` relative).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

# (rtol, atol) per dtype: float64's eps is 2.2e-16, float32's 1.2e-7, half precision's 1e-3/8e-3.
_TOLERANCES = {
    "float64": (1e-12, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (1e-2, 1e-3),
    "bfloat16": (5e-2, 1e-2),
}


def tolerance(dtype: Any) -> tuple[float, float]:
    """(rtol, atol) for results of ``dtype`` (a torch or numpy dtype) summed in another order."""
    name = str(dtype).removeprefix("torch.")
    return _TOLERANCES[name]


def assert_reordered_close(actual: Any, expected: Any, msg: str = "") -> None:
    """``actual`` is ``expected`` up to the order of the sums (NaN where it has NaN, -inf where it
    has -inf; booleans and integers exactly)."""
    if isinstance(actual, torch.Tensor) or isinstance(expected, torch.Tensor):
        a, e = torch.as_tensor(actual), torch.as_tensor(expected)
        if not e.is_floating_point():
            assert torch.equal(a, e), msg
            return
        rtol, atol = tolerance(e.dtype)
        torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True, msg=msg or None)
        return
    a, e = np.asarray(actual), np.asarray(expected)
    if not np.issubdtype(e.dtype, np.floating):
        np.testing.assert_array_equal(a, e, err_msg=msg)
        return
    assert a.dtype == e.dtype, (msg, a.dtype, e.dtype)
    rtol, atol = tolerance(e.dtype)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)
