"""Which key blocks a ``mask_mod`` can allow, found without evaluating it cell by cell.

The function is called once per block of query rows with interval stand-ins for its indices:
``q_idx`` the rows' range, ``kv_idx`` one range per key block. Integer arithmetic (``+ - *``,
``//`` and ``%`` by a positive number, ``abs``), comparisons and ``& | ~`` on their results are
evaluated on the ranges, soundly: a block said "never" has no allowed cell, one said "always"
no masked cell. A function that does anything else (indexes a tensor, calls a torch function)
raises, and is evaluated cell by cell as before. This is how a user's sliding window mask_mod
skips the blocks it empties as cheaply as the native ``SlidingWindow``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


class Unsupported(Exception):
    """The function did something the ranges cannot follow."""


def _const(value: object) -> Span:
    if isinstance(value, Span):
        return value
    if isinstance(value, bool):
        raise Unsupported
    if isinstance(value, int):
        t = torch.tensor(value)
        return Span(t, t)
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_floating_point():
        t = value.reshape(()).long().cpu()
        return Span(t, t)
    raise Unsupported


class Span:
    """Integers in [lo, hi] (tensors broadcast: one range per key block)."""

    def __init__(self, lo: torch.Tensor, hi: torch.Tensor) -> None:
        self.lo, self.hi = lo, hi

    def __add__(self, other: object) -> Span:
        o = _const(other)
        return Span(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __sub__(self, other: object) -> Span:
        o = _const(other)
        return Span(self.lo - o.hi, self.hi - o.lo)

    def __rsub__(self, other: object) -> Span:
        return _const(other) - self

    def __neg__(self) -> Span:
        return Span(-self.hi, -self.lo)

    def __mul__(self, other: object) -> Span:
        o = _const(other)
        corners = torch.stack(torch.broadcast_tensors(self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi))
        return Span(corners.amin(0), corners.amax(0))

    __rmul__ = __mul__

    def __floordiv__(self, other: object) -> Span:
        o = _const(other)
        if not bool((o.lo == o.hi).all()) or not bool((o.lo > 0).all()):
            raise Unsupported
        return Span(torch.div(self.lo, o.lo, rounding_mode="floor"), torch.div(self.hi, o.lo, rounding_mode="floor"))

    def __mod__(self, other: object) -> Span:
        o = _const(other)
        if not bool((o.lo == o.hi).all()) or not bool((o.lo > 0).all()):
            raise Unsupported
        m = o.lo
        same = torch.div(self.lo, m, rounding_mode="floor") == torch.div(self.hi, m, rounding_mode="floor")
        lo, hi = torch.remainder(self.lo, m), torch.remainder(self.hi, m)
        return Span(torch.where(same, lo, 0), torch.where(same, hi, m - 1))

    def abs(self) -> Span:
        lo = torch.where(self.lo >= 0, self.lo, torch.where(self.hi <= 0, -self.hi, 0))
        return Span(lo, torch.maximum(self.lo.abs(), self.hi.abs()))

    __abs__ = abs

    # comparisons: (can be true, can be false)
    def __lt__(self, other: object) -> Maybe:
        o = _const(other)
        return Maybe(self.lo < o.hi, self.hi >= o.lo)

    def __le__(self, other: object) -> Maybe:
        o = _const(other)
        return Maybe(self.lo <= o.hi, self.hi > o.lo)

    def __gt__(self, other: object) -> Maybe:
        return _const(other) < self

    def __ge__(self, other: object) -> Maybe:
        return _const(other) <= self

    def __eq__(self, other: object) -> Maybe:  # type: ignore[override]
        o = _const(other)
        overlap = (self.lo <= o.hi) & (o.lo <= self.hi)
        single = (self.lo == self.hi) & (o.lo == o.hi) & (self.lo == o.lo)
        return Maybe(overlap, ~single)

    def __ne__(self, other: object) -> Maybe:  # type: ignore[override]
        return ~(self == other)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise Unsupported  # Python control flow on an index: FlexAttention refuses it too

    def __getattr__(self, name: str) -> Any:
        raise Unsupported


class Maybe:
    """Per block: whether some cell can be True (``can_true``) and some False (``can_false``)."""

    def __init__(self, can_true: torch.Tensor, can_false: torch.Tensor) -> None:
        self.can_true, self.can_false = can_true, can_false

    def __and__(self, other: object) -> Maybe:
        o = _maybe(other)
        return Maybe(self.can_true & o.can_true, self.can_false | o.can_false)

    __rand__ = __and__

    def __or__(self, other: object) -> Maybe:
        o = _maybe(other)
        return Maybe(self.can_true | o.can_true, self.can_false & o.can_false)

    __ror__ = __or__

    def __invert__(self) -> Maybe:
        return Maybe(self.can_false, self.can_true)

    def __eq__(self, other: object) -> Maybe:  # type: ignore[override]
        o = _maybe(other)
        both_true = self.can_true & o.can_true
        both_false = self.can_false & o.can_false
        differ = (self.can_true & o.can_false) | (self.can_false & o.can_true)
        return Maybe(both_true | both_false, differ)

    def __ne__(self, other: object) -> Maybe:  # type: ignore[override]
        return ~(self == other)

    __hash__ = None  # type: ignore[assignment]

    def logical_not(self) -> Maybe:
        return ~self

    def __bool__(self) -> bool:
        raise Unsupported

    def __getattr__(self, name: str) -> Any:
        raise Unsupported


def _maybe(value: object) -> Maybe:
    if isinstance(value, Maybe):
        return value
    # A bool tensor only: a Python bool may be what a comparison the ranges do not define fell
    # back to (identity), which would be no bound at all.
    if isinstance(value, torch.Tensor) and value.dtype == torch.bool and value.numel() == 1:
        v = value.reshape(()).cpu()
        return Maybe(v, ~v)
    raise Unsupported


def block_bounds(
    fn: Callable[..., Any], b: torch.Tensor, h: torch.Tensor, r0: int, r1: int, n_k: int, block: int
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(can_true, can_false) per key block of ``block`` keys for rows r0:r1, or None when the
    function cannot be followed on ranges (then every cell is evaluated)."""
    starts = torch.arange(0, n_k, block)
    q = Span(torch.tensor(r0), torch.tensor(r1 - 1))
    kv = Span(starts, torch.clamp(starts + block - 1, max=n_k - 1))
    try:
        out = _maybe(fn(b.cpu(), h.cpu(), q, kv))
    except Exception:  # noqa: BLE001 - anything the ranges cannot follow: evaluated cell by cell
        return None
    n_kb = len(starts)
    return out.can_true.expand(n_kb).clone(), out.can_false.expand(n_kb).clone()
