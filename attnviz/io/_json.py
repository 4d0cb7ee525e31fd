"""JSON as attnviz's own files hold it: every number finite, every name once per object.

Python's ``json`` reads ``NaN``, ``Infinity`` and ``-Infinity`` (which JSON does not have) and
reads ``1e400`` as infinity without a word; attnviz writes none of them (``allow_nan=False``),
so a file holding one was not written by attnviz and is refused, as other languages' parsers
refuse it. Two equal names in one object are refused too: ``json`` keeps the last, another
reader could keep the first.
"""

from __future__ import annotations

import json
import math
from typing import Any

from attnviz.io._safetensors import _RepeatedKey, _unique_keys

__all__ = ["NonFiniteNumber", "RepeatedName", "loads", "whole_or_float"]

RepeatedName = _RepeatedKey


class NonFiniteNumber(ValueError):
    """A number JSON does not allow: ``NaN``, ``Infinity``, or one too large for a float (``1e400``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _constant(name: str) -> Any:
    raise NonFiniteNumber(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NonFiniteNumber(text if len(text) <= 24 else text[:21] + "...")
    return value


def loads(text: str) -> Any:
    """``json.loads`` refusing non-finite numbers (:class:`NonFiniteNumber`) and repeated names
    (:class:`RepeatedName`, whose ``key`` is the name)."""
    return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_constant, parse_float=_finite)


def whole_or_float(value: object) -> float | None:
    """``value`` as a finite float when it is a JSON number (int or float, not bool) that one
    holds (``10**400`` does not), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
