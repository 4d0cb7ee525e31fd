"""Numbers as people type and paste them: one cell's text, a block copied from a spreadsheet or
a text file, and the full-precision text that reads back to exactly the value it was made from.

The tables of the UI read every edit through here (``attnviz.ui.tables.tensor_table``); nothing
here imports Qt, so it is tested and used without a window. What Qt alone knows is passed in:
``decimal_comma`` says whether the user's locale writes decimals with a comma (pt-BR: "0,5").

A refusal is a ``ValueError`` whose message is a ``Message`` (``attnviz.text.tr``): the English, and
the template and values the UI translates when it shows it (``attnviz.ui.i18n.error_text``). In
a block it names the 1-based row and column of the first cell that is not a number.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, exception_message, message, plural

__all__ = [
    "ANY_NUMBER",
    "CellRule",
    "format_compact",
    "format_full",
    "minimum_message",
    "parse_block",
    "parse_value",
    "whole_number_message",
]

# Spreadsheets and web pages sometimes hand over a typographic minus; float() rejects it, and a
# user who copied "−0.5" means -0.5.
_MINUS_SIGNS_TEXT = ("\u2212", "\u2013")
_MINUS_SIGNS = str.maketrans(dict.fromkeys(_MINUS_SIGNS_TEXT, "-"))
# A number written with a decimal comma ("0,5", "-1,25e-3"): read as such where the locale
# writes decimals that way (Brazil: the spin boxes show "0,50", spreadsheets copy "0,5").
_DECIMAL_COMMA_NUMBER = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
_INT64 = np.iinfo(np.int64)


@dataclass(frozen=True)
class CellRule:
    """What the cells of a table take, and how messages name their value."""

    #: Whole numbers only (read as int64), else any float ("nan" and "inf" included).
    integer: bool = False
    #: The smallest value a cell takes (inclusive; NaN never satisfies it), None: any.
    minimum: float | None = None
    #: How messages name the value ("valid length"); a marked source is translated when shown.
    name: str = QT_TRANSLATE_NOOP("TensorTable", "value")
    #: The locale writes decimals with a comma (pt-BR: "0,5"): commas are decimals, not separators.
    decimal_comma: bool = False


#: Any float, in a locale that writes decimal points.
ANY_NUMBER = CellRule()


def _fmt_bound(bound: float) -> str:
    """Write a minimum the way a person would: 0 rather than 0.0."""
    return f"{bound:g}"


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def whole_number_message(rule: CellRule, text: str) -> Message:
    """Why ``text`` is no value for a cell of whole numbers (at least the rule's minimum)."""
    if rule.minimum is None:
        whole = QT_TRANSLATE_NOOP("TensorTable", "{name} must be a whole number, got '{text}'")
        return message(whole, name=rule.name, text=text)
    at_least = QT_TRANSLATE_NOOP("TensorTable", "{name} must be a whole number ≥ {bound}, got '{text}'")
    return message(at_least, name=rule.name, bound=_fmt_bound(rule.minimum), text=text)


def minimum_message(rule: CellRule, text: str) -> Message:
    """Why ``text`` is no value for a cell that holds at least the rule's minimum (not None)."""
    assert rule.minimum is not None
    at_least = QT_TRANSLATE_NOOP("TensorTable", "{name} must be ≥ {bound}, got '{text}'")
    return message(at_least, name=rule.name, bound=_fmt_bound(rule.minimum), text=text)


def _not_a_number(text: str) -> Message:
    return message(QT_TRANSLATE_NOOP("TensorTable", "'{text}' is not a number"), text=text)


def parse_value(text: str, rule: CellRule = ANY_NUMBER) -> float | int:
    """Parse one cell's text into a number, or raise ``ValueError`` with a message for people.

    Float cells accept anything ``float()`` does, including "nan", "inf" and "-inf" (they are
    legitimate when debugging). Integer cells accept whole numbers, also written as "3.0" or
    "1e2", and reject NaN and infinities. Where the rule says ``decimal_comma`` (pt-BR), "0,5"
    is 0.5. The minimum is inclusive; NaN never satisfies it.
    """
    stripped = text.strip().translate(_MINUS_SIGNS)
    if not stripped:
        raise ValueError(message(QT_TRANSLATE_NOOP("TensorTable", "an empty cell is not a number")))
    if "," in stripped and rule.decimal_comma and _DECIMAL_COMMA_NUMBER.fullmatch(stripped):
        stripped = stripped.replace(",", ".")
    minimum = rule.minimum
    if rule.integer:
        value: float | int
        try:
            # int() first so that large integers stay exact instead of passing through a float.
            value = int(stripped)
        except ValueError:
            try:
                as_float = float(stripped)
            except ValueError:
                raise ValueError(_not_a_number(text)) from None
            if not as_float.is_integer():  # also false for NaN and infinities
                raise ValueError(whole_number_message(rule, text)) from None
            value = int(as_float)
        if minimum is not None and value < minimum:
            raise ValueError(whole_number_message(rule, text))
        if not _INT64.min <= value <= _INT64.max:
            raise ValueError(
                message(QT_TRANSLATE_NOOP("TensorTable", "'{text}' is too large for a whole number"), text=text)
            )
        return value
    try:
        result = float(stripped)
    except ValueError:
        raise ValueError(_not_a_number(text)) from None
    if minimum is not None and not result >= minimum:  # written so that NaN fails the test
        raise ValueError(minimum_message(rule, text))
    return result


def _cells(n: int) -> Message:
    return plural(n, QT_TRANSLATE_NOOP("TensorTable", "{n} cell"), QT_TRANSLATE_NOOP("TensorTable", "{n} cells"))


def _split_cells(line: str, separator: str | None) -> list[str]:
    if separator is None:
        return line.split()
    return line.split(separator)


def parse_block(text: str, rule: CellRule = ANY_NUMBER) -> np.ndarray:
    """Parse clipboard text into a 2-D array: int64 when the rule says ``integer``, else float64.

    Rows are separated by newlines (``\\n``, ``\\r\\n`` or ``\\r``) and cells by tabs, which is
    what spreadsheets put on the clipboard. Text without tabs may use commas, and text without
    tabs or commas may use any whitespace, so a column copied from a text file or a NumPy
    printout also pastes. With the rule's ``decimal_comma`` ("0,5"), cells may be written so and lists
    without tabs are separated by semicolons or whitespace instead. Trailing newlines are
    ignored. Ragged rows and bad cells raise ``ValueError`` naming the 1-based row and column of
    the pasted block.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    if not normalized.strip():
        raise ValueError(message(QT_TRANSLATE_NOOP("TensorTable", "there is nothing to paste")))
    separator: str | None
    if "\t" in normalized:
        separator = "\t"
    elif rule.decimal_comma:
        # Commas are decimals here; lists use semicolons (as spreadsheets in such locales do).
        separator = ";" if ";" in normalized else None
    elif "," in normalized:
        separator = ","
    else:
        separator = None
    rows = [_split_cells(line, separator) for line in normalized.split("\n")]
    width = len(rows[0])
    for r, cells in enumerate(rows, start=1):
        problem = None
        if separator is None and not cells:
            problem = message(QT_TRANSLATE_NOOP("TensorTable", "row {r} is empty"), r=r)
        elif len(cells) != width:
            problem = message(
                QT_TRANSLATE_NOOP("TensorTable", "rows have different lengths: row {r} has {cells}, row 1 has {first}"),
                r=r,
                cells=_cells(len(cells)),
                first=_cells(width),
            )
        if problem is not None:
            _parse_cells(rows[: r - 1], rule)  # a bad cell above is reported first
            raise ValueError(problem)
    if not rule.integer:
        fast = _floats(rows, width, rule, any(sign in normalized for sign in _MINUS_SIGNS_TEXT))
        if fast is not None:
            return fast
    return np.array(_parse_cells(rows, rule), dtype=np.int64 if rule.integer else np.float64)


def _parse_cells(rows: list[list[str]], rule: CellRule) -> list[list[float | int]]:
    """``parse_value`` of every cell; the first bad one raises, naming its row and column."""
    parsed: list[list[float | int]] = []
    for r, cells in enumerate(rows, start=1):
        row: list[float | int] = []
        for c, cell in enumerate(cells, start=1):
            try:
                row.append(parse_value(cell, rule))
            except ValueError as err:
                where = QT_TRANSLATE_NOOP("TensorTable", "row {r}, column {c}: {error}")
                raise ValueError(message(where, r=r, c=c, error=exception_message(err))) from None
        parsed.append(row)
    return parsed


def _floats(rows: list[list[str]], width: int, rule: CellRule, minus_signs: bool) -> np.ndarray | None:
    """The cells as a (rows, width) float64 array, each read exactly as ``parse_value`` reads it,
    or None when some cell is not a number ``parse_value`` takes (``_parse_cells`` then says which).

    ``parse_value`` costs about 1.5 µs a cell, most of it in its per-cell clean-up: a 500 x 500
    paste blocked the window for 0.4-1.1 s. Here the clean-up is done only where it is needed
    (``minus_signs``: the text has typographic minus signs) and the minimum is checked on the array.
    """
    cells = [cell for row in rows for cell in row]
    if minus_signs:
        cells = [cell.translate(_MINUS_SIGNS) for cell in cells]
    if rule.decimal_comma:
        cells = [_decimal_point(cell) if "," in cell else cell for cell in cells]
    try:
        values = np.array(list(map(float, cells)), dtype=np.float64)  # float() skips surrounding spaces
    except ValueError:
        return None
    if rule.minimum is not None and not bool((values >= rule.minimum).all()):  # NaN fails, as in parse_value
        return None
    return values.reshape(len(rows), width)


def _decimal_point(cell: str) -> str:
    stripped = cell.strip()
    return stripped.replace(",", ".") if _DECIMAL_COMMA_NUMBER.fullmatch(stripped) else cell


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def format_full(value: Any, integer: bool = False) -> str:
    """Text that parses back to exactly ``value`` in its own dtype.

    ``str`` of a NumPy scalar is the shortest text that round-trips in that dtype, so a float32
    0.1 reads "0.1" rather than "0.10000000149011612" and still comes back bit-identical.
    """
    if integer or isinstance(value, (int, np.integer, bool, np.bool_)):
        as_float = float(value)
        if math.isfinite(as_float) and as_float.is_integer():
            return str(int(value))
    if isinstance(value, np.floating):
        return str(value)
    return repr(float(value))


def format_compact(value: float | int, integer: bool) -> str:
    """A cell's value as a table shows it: four significant digits, whole numbers without ".0"."""
    if isinstance(value, (bool, int)):
        return str(int(value))
    if math.isnan(value):
        return "NaN"
    if integer and value.is_integer():  # integer table stored as floats: show 3, not 3.0
        return str(int(value))
    return f"{value:.4g}"  # also gives "inf" and "-inf"
