"""Messages are one line, safe for a terminal and of bounded length, whatever names a file holds.

File names, array names and setting keys come from outside: a newline in one must not split a
message, an escape sequence must not reach the terminal, a lone surrogate (an undecodable byte
of a file name) must not make printing fail, and ten thousand names must not make a 250 kB line.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from attnviz.io import AttnvizFileError, TensorFileError, load_tensor_file, save_session
from attnviz.io.session_state import load_state_file, state_to_session
from attnviz.io.tensor_import import state_from_tensor_file
from attnviz.teaching.presets import PRESETS
from attnviz.text.tr import MAX_LINE_CHARS, QT_TRANSLATE_NOOP, Message, joined, message, one_line


def refusal(path: Path) -> TensorFileError:
    with pytest.raises(TensorFileError) as caught:
        load_tensor_file(path)
    return caught.value


def check_line(text: str) -> None:
    assert len(text.splitlines()) == 1, text
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text), text
    text.encode("utf-8")  # no lone surrogates: printing cannot fail
    assert len(text) <= MAX_LINE_CHARS, len(text)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("two\nlines.npy", "two lines.npy"),
        ("tab\there.npy", "tab here.npy"),
        ("\x1b[2J\x1b[31mred.npy", "\\x1b[2J\\x1b[31mred.npy"),
        ("bell\x07.npy", "bell\\x07.npy"),
        ("csi\x9b2J.npy", "csi\\x9b2J.npy"),
        ("abc\u202egnp.npy", "abc\\u202egnp.npy"),  # a right-to-left override would show "abc.npy" reversed
        ("line\u2028sep.npy", "line sep.npy"),
        (os.fsdecode(b"caf\xe9.npy"), "caf\\xe9.npy"),  # Latin-1 bytes in a UTF-8 system: a lone surrogate
    ],
    ids=["newline", "tab", "ansi", "bell", "c1-csi", "bidi", "line-separator", "surrogate"],
)
def test_names_from_outside_reach_a_message_escaped(tmp_path: Path, name: str, shown: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"certainly not a tensor file")
    error = refusal(path)
    text = str(error)
    check_line(text)
    assert text.startswith(f"{shown}: "), text
    assert isinstance(error.args[0], Message)  # still translatable


def test_values_of_any_message_are_cleaned_when_it_is_made() -> None:
    made = message(
        QT_TRANSLATE_NOOP("FileNotes", "ignored the unknown setting '{name}'"), name="x\nwrote forged.png\x1b[0m"
    )
    assert made == "ignored the unknown setting 'x wrote forged.png\\x1b[0m'"
    assert made.params["name"] == "x wrote forged.png\\x1b[0m"  # what a translation is filled with


def test_a_session_setting_key_cannot_forge_lines_in_notes(tmp_path: Path) -> None:
    session = state_to_session(PRESETS["dot-toy"].build())
    session.settings["x\nwrote /tmp/forged.png\r\x1b[2K"] = 1
    save_session(tmp_path / "forged.attnviz", session)
    notes: list[str] = []
    load_state_file(tmp_path / "forged.attnviz", notes=notes)
    assert len(notes) == 1
    check_line(notes[0])
    assert "\\x1b[2K" in notes[0]


def test_a_long_value_is_elided_saying_how_much(tmp_path: Path) -> None:
    names = ", ".join(f"array_{i} (1,)" for i in range(20_000))
    error = AttnvizFileError(
        tmp_path / "many.npz",
        message(QT_TRANSLATE_NOOP("FileErrors", "holds array '{name}' that its manifest does not list"), name=names),
    )
    text = str(error)
    check_line(text)
    assert text.startswith("many.npz: holds array 'array_0 (1,), array_1 (1,)")
    assert text.endswith("array_19999 (1,)' that its manifest does not list")
    assert "characters left out" in text
    assert isinstance(error.args[0], Message)


def test_plain_text_is_bounded_too() -> None:
    text = one_line("x" * 3_000_000 + "\x1b")
    check_line(text)
    assert "characters left out" in text and text.endswith("\\x1b")


def test_joined_lists_say_how_many_were_left_out() -> None:
    items = [f"entry {i} (int, not a tensor)" for i in range(20_000)]
    listed = joined(items)
    assert len(listed) < 400
    assert listed.startswith("entry 0 (int, not a tensor), entry 1 (int, not a tensor)")
    assert listed.endswith("more")
    shown = int(listed.rsplit(" and ", 1)[1].split()[0].replace(",", ""))
    assert listed.count("(int, not a tensor)") + shown == 20_000
    assert joined(items[:3]) == ", ".join(items[:3])


def test_a_pt_with_twenty_thousand_skipped_entries_gives_a_short_note(tmp_path: Path) -> None:
    path = tmp_path / "many.pt"
    torch.save(
        {
            "queries": torch.ones(1, 2, 3),
            "keys": torch.ones(1, 4, 3),
            "values": torch.ones(1, 4, 2),
            **{f"step_{i}": None for i in range(20_000)},
        },
        path,
    )  # plain numbers would be read as values
    tf = load_tensor_file(path)
    assert len(tf.skipped) == 20_000
    notes: list[str] = []
    state_from_tensor_file(
        tf, {"queries": "queries", "keys": "keys", "values": "values"}, None, PRESETS["dot-toy"].build(), notes=notes
    )
    skipped = [n for n in notes if n.startswith("skipped ")]
    assert len(skipped) == 1
    check_line(skipped[0])
    assert "more" in skipped[0]
