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
from collections.abc import Callable
from typing import Any

from attnviz.io._safetensors import _RepeatedKey, _unique_keys
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["MAX_CONTAINERS", "NonFiniteNumber", "RepeatedName", "loads", "read_description", "whole_or_float"]

#: The objects and lists a file's description may hold, counted before parsing: dense JSON
#: ("[[],[],..." or "{},{},...") makes some 20 to 25 bytes of Python objects per character, so
#: this bounds what a hostile description makes the parser allocate. A capture header holds
#: some 20 per call and one per sequence of tokens, a session's manifest fewer.
MAX_CONTAINERS = 1_000_000

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


#: JSON has no infinity: a call's infinite fidelity (NaN in the model's output where attnviz has a
#: number, or the reverse) is written as this string, in sessions and capture files alike.
INFINITE_FIDELITY = "inf"


def fidelity_to_json(value: float | None) -> float | str | None:
    """A call's fidelity as the files write it (null, a number, or ``INFINITE_FIDELITY``)."""
    return INFINITE_FIDELITY if value is not None and math.isinf(value) else value


def fidelity_from_json(value: object) -> float | None:
    """A call's fidelity read back: infinity for ``INFINITE_FIDELITY``, a number as it is, None
    for anything else (the caller refuses it unless the value was null)."""
    return math.inf if value == INFINITE_FIDELITY else whole_or_float(value)


_REPEATED = QT_TRANSLATE_NOOP("FileErrors", "has a damaged {part}: the name '{name}' appears twice in one object")
_NOT_A_NUMBER = QT_TRANSLATE_NOOP("FileErrors", "has a damaged {part}: {value} is not a number JSON allows")


def read_description(
    raw: str | bytes,
    *,
    kind: str,
    part: str,
    format_name: str,
    known_version: int,
    fail: Callable[[str], Exception],
) -> dict[str, Any]:
    """The JSON description of one of attnviz's own files (a session's manifest, a capture's
    header): an object whose ``format`` is ``format_name`` and whose ``version`` is one this
    attnviz reads (at most ``known_version``). Anything else raises ``fail(reason)``, a line
    naming ``part`` (where the description is: "capture header") and ``kind`` ("session")."""
    containers = raw.count(b"{") + raw.count(b"[") if isinstance(raw, bytes) else raw.count("{") + raw.count("[")
    if containers > MAX_CONTAINERS:
        raise fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "has a {part} with {count} JSON objects and lists (at most {limit} allowed)"
                ),
                part=part,
                count=f"{containers:,}",
                limit=f"{MAX_CONTAINERS:,}",
            )
        )
    try:
        description = loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except RepeatedName as exc:
        raise fail(message(_REPEATED, part=part, name=exc.key)) from exc
    except NonFiniteNumber as exc:
        raise fail(message(_NOT_A_NUMBER, part=part, value=exc.text)) from exc
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "has a damaged {part} (not valid JSON)"), part=part)
        ) from exc
    if not isinstance(description, dict) or description.get("format") != format_name:
        raise fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "is not an attnviz {kind} ('format' is not \"{format}\")"),
                kind=kind,
                format=format_name,
            )
        )
    version = description.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "has an invalid {kind} format version: {version}"),
                kind=kind,
                version=repr(version),
            )
        )
    if version > known_version:
        raise fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "was written by a newer attnviz ({kind} format version {version}); this version reads "
                    "version {known} only",
                ),
                kind=kind,
                version=version,
                known=known_version,
            )
        )
    return description
