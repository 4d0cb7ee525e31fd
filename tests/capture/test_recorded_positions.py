"""The positions a model's rotary or position embedding is called with, read at capture
(``attnviz.capture.recorded_positions``), and kept in capture files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import attnviz
from attnviz.capture.recorded_positions import (
    LEARNED,
    MAYBE_LEARNED,
    ROTARY,
    is_position_module,
    positions_from_angles,
    positions_from_table,
    read_positions,
)
from attnviz.io.capture_file import CaptureFileError, load_capture
from tests.compare import fresh_bugs as fresh


def test_position_modules_are_found_by_meaning():
    rope = fresh.Rope(8)
    assert is_position_module(rope, "rope") == ROTARY  # holds inv_freq
    assert is_position_module(nn.Embedding(8, 4), "transformer.wpe") == LEARNED
    assert is_position_module(nn.Embedding(8, 4), "embed") == MAYBE_LEARNED
    # A layer named like rotary but holding weights is no table of rotations.
    assert is_position_module(fresh.HandBlock(), "blocks.0") is None
    assert is_position_module(type("RotaryLayer", (nn.Linear,), {})(2, 2), "x") is None


def test_a_rotary_modules_tables_give_its_positions_back():
    rope = fresh.Rope(8)
    for start in (0, 5, 300):
        tables = rope(4, start)
        read = read_positions(ROTARY, rope, (4, start), {}, tables)
        np.testing.assert_array_equal(read, [[start, start + 1, start + 2, start + 3]])
    # Half-precision tables round the angle too much: the arguments are read instead (none here).
    half = tuple(t.half() for t in rope(4, 7))
    assert read_positions(ROTARY, rope, (4, 7), {}, half) is None
    # Rotated queries and keys are no tables: cos^2 + sin^2 is not constant.
    q = torch.randn(1, 2, 4, 8)
    assert read_positions(ROTARY, rope, (), {}, (q, q * 2)) is None


def test_ids_that_count_are_positions_and_token_ids_are_not():
    emb = nn.Embedding(10, 4)
    counting = torch.tensor([[0, 1, 2, 3], [0, 0, 0, 1]])
    assert read_positions(MAYBE_LEARNED, emb, (counting,), {}, None).tolist() == counting.tolist()
    tokens = torch.tensor([[5, 2, 9, 1]])
    assert read_positions(MAYBE_LEARNED, emb, (tokens,), {}, None) is None
    # Counting ids the model was given as its tokens are its tokens.
    assert read_positions(MAYBE_LEARNED, emb, (counting,), {}, None, (counting.clone(),)) is None


def test_positions_times_inverse_frequencies_are_read():
    inv = 1.0 / 500 ** (torch.arange(0, 8, 2).float() / 8)
    t = torch.arange(3, 7).float()
    np.testing.assert_array_equal(positions_from_angles(torch.outer, (t, inv)), [[3, 4, 5, 6]])
    batched = torch.tensor([[0, 1, 2], [4, 5, 6]])[:, None, :, None].float()
    np.testing.assert_array_equal(positions_from_angles(torch.Tensor.mul, (batched, inv)), [[0, 1, 2], [4, 5, 6]])
    # Increasing inverse frequencies are read too; relative distances (negative) are not positions.
    np.testing.assert_array_equal(positions_from_angles(torch.outer, (t, inv.flip(0))), [[3, 4, 5, 6]])
    assert positions_from_angles(torch.outer, (t - 5, inv)) is None
    # Frequencies of no geometric sequence (learned) only with whole positions that count.
    assert positions_from_angles(torch.outer, (t, torch.tensor([0.3, 1.0, 0.7]))).tolist() == [[3, 4, 5, 6]]
    assert positions_from_angles(torch.outer, (t * 0.5, torch.tensor([0.3, 1.0, 0.7]))) is None


def test_rows_of_a_rotary_table_picked_by_position_are_read():
    inv = 1.0 / 500 ** (torch.arange(0, 8, 2).float() / 8)
    angles = torch.outer(torch.arange(32).float(), inv)
    freqs_cis = torch.polar(torch.ones_like(angles), angles)
    np.testing.assert_array_equal(positions_from_table((freqs_cis, slice(4, 7))), [[4, 5, 6]])
    cos = torch.cat([angles.cos(), angles.cos()], -1)
    ids = torch.tensor([[0, 1, 2], [2, 3, 4]])
    np.testing.assert_array_equal(positions_from_table((cos, ids)), ids.numpy())
    assert positions_from_table((torch.randn(32, 8), slice(0, 3))) is None


def test_positions_survive_a_capture_file_and_a_bad_entry_is_refused(tmp_path: Path):
    model, inputs = fresh.hand_restart_twin()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**inputs)
    path = tmp_path / "run.attnviz-capture"
    cap.save(path)
    call = load_capture(path).calls[0]
    assert call.positions_from == "rotary" and call.positions.tolist() == [list(range(7))]
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[16:24])[0]
    header = json.loads(raw[24 : 24 + size])
    assert header["version"] == 3
    header["calls"][0]["positions_from"] = "guessed"
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (size - len(text))
    assert len(text) == size
    (tmp_path / "bad.attnviz-capture").write_bytes(raw[:24] + text + raw[24 + size :])
    with pytest.raises(CaptureFileError, match="invalid positions"):
        load_capture(tmp_path / "bad.attnviz-capture")
