"""Reading typed and pasted numbers without Qt (``attnviz.text.numbers``): cells, spreadsheet
blocks, decimal commas, and refusals as translatable messages naming the cell."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.text import numbers as number_text
from attnviz.text.numbers import CellRule, format_compact, format_full, parse_block, parse_value
from attnviz.text.tr import Message, Source, exception_message

WHOLE = CellRule(integer=True)
COMMAS = CellRule(decimal_comma=True)  # as in Brazil
# Cells a user may paste: numbers in every spelling parse_value takes, and things it refuses.
TOKENS = [
    "0",
    "1.5",
    "-2",
    " 3.25 ",
    "−0.5",
    "–4",
    "1e3",
    "-1.5E-3",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "+.5",
    "1.",
    "1_000",
    "0,5",
    "1,5e2",
    "-0,25",
    "1,000",
    "",
    " ",
    "abc",
    "1.0.0",
    "0x10",
    "1e",
    "--1",
    "١٢",
]


# ---- parse_block ---------------------------------------------------------------------------------


def test_parse_block_spreadsheet_tsv() -> None:
    block = parse_block("1\t2\n3\t4\n")
    assert block.dtype == np.float64
    np.testing.assert_array_equal(block, [[1, 2], [3, 4]])


def test_parse_block_windows_line_endings_and_empty_cells_in_tsv() -> None:
    np.testing.assert_array_equal(parse_block("1\t2\r\n3\t4\r\n"), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="row 1, column 2"):
        parse_block("1\t\t3\n")


def test_parse_block_commas_and_whitespace() -> None:
    np.testing.assert_array_equal(parse_block("1, 2.5\n-3,4e1"), [[1, 2.5], [-3, 40]])
    np.testing.assert_array_equal(parse_block("1  2 3"), [[1, 2, 3]])
    np.testing.assert_array_equal(parse_block(" 1 2 3 \n4 5 6\n"), [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(parse_block("7\n8\n9\n"), [[7], [8], [9]])


def test_parse_block_integer() -> None:
    block = parse_block("1\t2\n3\t40\n", CellRule(integer=True, minimum=0))
    assert block.dtype == np.int64
    np.testing.assert_array_equal(block, [[1, 2], [3, 40]])


def test_parse_block_ragged_is_an_error() -> None:
    with pytest.raises(ValueError, match="row 2 has 1 cell, row 1 has 2 cells"):
        parse_block("1\t2\n3\n")


def test_parse_block_bad_cell_is_named() -> None:
    with pytest.raises(ValueError) as info:
        parse_block("1\t2\n3\tfoo\n")
    assert str(info.value) == "row 2, column 2: 'foo' is not a number"
    with pytest.raises(ValueError) as info:
        parse_block("1\t2.5\n", CellRule(integer=True, minimum=0, name="valid length"))
    assert str(info.value) == ("row 1, column 2: valid length must be a whole number ≥ 0, got '2.5'")
    with pytest.raises(ValueError, match="row 1, column 1"):
        parse_block("-1 2", CellRule(integer=True, minimum=0))


def test_parse_block_empty_is_an_error() -> None:
    with pytest.raises(ValueError):
        parse_block("")
    with pytest.raises(ValueError):
        parse_block("\n\n")


def test_parse_value() -> None:
    assert parse_value(" 2.5 ") == 2.5
    assert parse_value("\u22120.5") == -0.5  # typographic minus from a web page
    assert parse_value("1e2", WHOLE) == 100
    assert isinstance(parse_value("3", WHOLE), int)
    with pytest.raises(ValueError):
        parse_value("99999999999999999999999", WHOLE)


# ---- decimal commas --------------------------------------------------------------------------------


def test_decimal_commas_are_read_where_the_locale_writes_them() -> None:
    assert parse_value("0,5", COMMAS) == 0.5
    assert parse_value("−1,25e-3", COMMAS) == -0.00125
    assert parse_value("1,000", COMMAS) == 1.0  # in Brazil that is one, not a thousand
    assert parse_value("3,0", CellRule(integer=True, decimal_comma=True)) == 3
    with pytest.raises(ValueError):
        parse_value("1.000,5", COMMAS)  # a thousands separator is not a number of ours
    # Spreadsheets copy tab-separated cells with decimal commas; text lists use semicolons.
    np.testing.assert_array_equal(parse_block("0,5\t0,25\n1,5\t2\n", COMMAS), [[0.5, 0.25], [1.5, 2.0]])
    np.testing.assert_array_equal(parse_block("0,5;0,25", COMMAS), [[0.5, 0.25]])
    np.testing.assert_array_equal(parse_block("0,5 0,25\n1 2", COMMAS), [[0.5, 0.25], [1.0, 2.0]])


def test_commas_separate_cells_where_the_locale_writes_decimal_points() -> None:
    with pytest.raises(ValueError):
        parse_value("0,5")
    np.testing.assert_array_equal(parse_block("0.5,0.25"), [[0.5, 0.25]])


# ---- a block reads every cell as one cell is read ---------------------------------------------------


def reference(text: str, minimum: float | None, decimal_comma: bool) -> np.ndarray | str:
    """What reading every cell with parse_value gives: the array, or the first error's text."""
    if not text.strip():
        return "there is nothing to paste"
    rows = [line.split("\t") for line in text.split("\n")]
    try:
        return np.array(
            [
                [parse_value(cell, CellRule(minimum=minimum, decimal_comma=decimal_comma)) for cell in row]
                for row in rows
            ],
            dtype=np.float64,
        )
    except ValueError as err:
        return str(err)


@pytest.mark.parametrize("decimal_comma", [False, True])
@settings(max_examples=150, deadline=None)
@given(
    grid=st.lists(st.lists(st.sampled_from(TOKENS), min_size=3, max_size=3), min_size=1, max_size=4),
    minimum=st.sampled_from([None, 0.0]),
)
def test_a_pasted_block_reads_every_cell_as_parse_value_does(
    decimal_comma: bool, grid: list[list[str]], minimum: float | None
) -> None:
    text = "\n".join("\t".join(row) for row in grid)
    expected = reference(text, minimum, decimal_comma)
    try:
        got: np.ndarray | str = parse_block(text, CellRule(minimum=minimum, decimal_comma=decimal_comma))
    except ValueError as err:
        got = str(err)
    if isinstance(expected, str):
        assert isinstance(got, str) and got.endswith(expected), (got, expected)
    else:
        assert isinstance(got, np.ndarray), got
        np.testing.assert_array_equal(got, expected)


def test_a_big_paste_makes_no_python_call_per_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = number_text.parse_value

    def counted(text: str, *args: object, **kwargs: object) -> float | int:
        calls.append(text)
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(number_text, "parse_value", counted)
    values = np.random.default_rng(0).standard_normal((500, 500))
    text = "\n".join("\t".join(map(repr, row)) for row in values.tolist())
    np.testing.assert_array_equal(parse_block(text), values)
    assert calls == []  # was 250,000 parse_value calls: 0.4-1.1 s of the GUI thread
    with pytest.raises(ValueError, match="row 500, column 3: 'x' is not a number"):
        parse_block(text[: text.rfind("\n") + 1] + "1\t2\tx" + "\t0" * 497)
    assert calls  # a bad cell is still found and named cell by cell


# ---- refusals are messages the UI translates ---------------------------------------------------------


def test_a_refusal_is_a_message_with_its_template_and_values() -> None:
    with pytest.raises(ValueError) as info:
        parse_block("1\t2\n3\tfoo\n")
    refusal = exception_message(info.value)
    assert isinstance(refusal, Message)
    assert refusal.source == "row {r}, column {c}: {error}" and refusal.source.context == "TensorTable"
    assert (refusal.params["r"], refusal.params["c"]) == (2, 2)
    inner = refusal.params["error"]
    assert isinstance(inner, Message) and inner.source == "'{text}' is not a number" and inner.params["text"] == "foo"
    # The quantity's default name is marked for translation too, not frozen in English.
    with pytest.raises(ValueError) as info:
        parse_value("-1", CellRule(minimum=0))
    name = exception_message(info.value).params["name"]
    assert isinstance(name, Source) and name == "value" and name.context == "TensorTable"


def test_a_cell_with_control_characters_is_named_on_one_safe_line() -> None:
    with pytest.raises(ValueError) as info:
        parse_block("1\t\x1b[31mred\x0b\n")
    assert str(info.value) == "row 1, column 2: '\\x1b[31mred ' is not a number"


# ---- formatting ------------------------------------------------------------------------------------


def test_full_text_reads_back_to_the_same_value_and_compact_text_is_short() -> None:
    for value in (np.float32(0.1), np.float64(1 / 3), np.float64(1e-300)):
        assert value.dtype.type(parse_value(format_full(value))) == value
    assert format_full(np.int64(7)) == "7" and format_full(True) == "1"
    assert format_full(np.float32(0.1)) == "0.1" and format_full(np.float64(0.1)) == "0.1"
    assert format_full(3.0, integer=True) == "3"
    assert [format_compact(v, False) for v in (1 / 3, float("nan"), float("-inf"), 5)] == ["0.3333", "NaN", "-inf", "5"]
    assert format_compact(3.0, True) == "3"
