"""Exceptions the engine raises. Each message says what was expected and what was given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from attnviz.text.tr import message

T = TypeVar("T")


class AttentionInputError(ValueError):
    """The inputs cannot be used: wrong shape, bad valid length, NaN, unknown option...

    ``field`` names what is wrong ("shape", "valid_lens", "queries", "keys", "values",
    "scoring", "mask", "params", "dtype", "dropout", "seed", "scale", "memory_budget", ...: the
    argument at fault), so an app can show the message next to it.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def input_error(text: str, field: str | None, **values: object) -> AttentionInputError:
    """An ``AttentionInputError`` about ``field`` saying ``text`` (a template marked with
    ``QT_TRANSLATE_NOOP``) filled with ``values``: ``raise input_error(...)``."""
    return AttentionInputError(message(text, **values) if values else text, field)


def choose(table: Mapping[str, T], key: object, text: str, field: str) -> T:
    """``table[key]``, else an ``AttentionInputError`` about ``field`` saying ``text`` (a template
    with ``{value}``, what was given, and ``{choices}``, the keys)."""
    try:
        return table[key]  # type: ignore[index]
    except (KeyError, TypeError):
        raise input_error(text, field, value=repr(key), choices=", ".join(table)) from None


class DeviceError(RuntimeError):
    """A compute device is missing or could not be used. The message names the device."""


class DeviceOutOfMemoryError(DeviceError):
    """The device ran out of memory. Falling back to the CPU is the caller's decision."""


class MemoryBudgetError(AttentionInputError):
    """The computation would need more memory than its budget; refused before allocating anything.

    ``needed`` and ``budget`` are in bytes. The message names both and what would fit.
    """

    def __init__(self, message: str, needed: int, budget: int) -> None:
        super().__init__(message, "memory_budget")
        self.needed = needed
        self.budget = budget
