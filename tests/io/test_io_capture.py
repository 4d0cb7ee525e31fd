"""Capture files: what is saved comes back (lazily, memory-mapped, read-only), and a damaged or
hostile file is refused in one line before anything is mapped."""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attnviz.io import CaptureFileError, Session, is_capture_file, load_capture, save_capture, save_session
from attnviz.io.capture_file import MAGIC, MAX_HEADER_BYTES
from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

ROOT = Path(__file__).resolve().parents[2]


def run_with_everything() -> ModelRun:
    rng = np.random.default_rng(0)
    b, h, n = 2, 4, 5
    shared = np.ones((b, 1, 1, n), bool)
    shared[1, ..., 3:] = False

    def qkv(hkv: int = h, dtype: Any = np.float32) -> list[np.ndarray]:
        return [rng.standard_normal((b, heads, n, 8)).astype(dtype) for heads in (h, hkv, hkv)]

    calls = (
        AttentionCall(
            "encoder.layer.0",
            *qkv(),
            MaskArguments(attn_mask=shared),
            scale=0.25,
            output=rng.standard_normal((b, h, n, 8)).astype(np.float32),
            fidelity=3e-7,
        ),
        AttentionCall(
            "encoder.layer.1",
            *qkv(hkv=2),
            MaskArguments(attn_mask=shared, is_causal=True),
            output=rng.standard_normal((b, h, n, 8)).astype(np.float32),
            fidelity=math.inf,
            note="NaN where the model had numbers",
            dtype="bfloat16",
        ),
        AttentionCall(
            "mha",
            *qkv(dtype=np.float16),
            MaskArguments(
                attn_mask=np.zeros((n, n), np.float16),
                key_padding_mask=np.array([[False] * 5, [False] * 3 + [True] * 2]),
                attention_mask=np.array([[1] * 5, [1, 1, 1, 0, 0]], np.int64),
            ),
        ),
        AttentionCall("weights only", None, None, None, weights=rng.random((b, h, n, n)), note="weights"),
    )
    tokens = ModelRun.broadcast_tokens(["a", "b", "c", "d", "é"], b)
    return ModelRun(calls, tokens, tokens, source="capture")


def test_round_trip_memory_mapped_and_read_only(tmp_path):
    run = run_with_everything()
    path = tmp_path / "run.attnviz-capture"
    save_capture(path, run)
    assert is_capture_file(path) and path.read_bytes().startswith(MAGIC)
    loaded = load_capture(path)
    assert loaded.source == "capture" and loaded.query_tokens.tolist() == run.query_tokens.tolist()
    for old, new in zip(run.calls, loaded.calls):
        assert (new.name, new.scale, new.note, new.dtype, new.masks.is_causal) == (
            old.name,
            old.scale,
            old.note,
            old.dtype,
            old.masks.is_causal,
        )
        assert new.fidelity == old.fidelity
        for role in ("queries", "keys", "values", "output", "weights"):
            a, b = getattr(old, role), getattr(new, role)
            assert (a is None) == (b is None)
            if a is not None:
                assert isinstance(b, np.memmap) and not b.flags.writeable and b.dtype == a.dtype
                np.testing.assert_array_equal(a, b)
        for role in ("attn_mask", "key_padding_mask", "attention_mask"):
            a, b = getattr(old.masks, role), getattr(new.masks, role)
            assert (a is None) == (b is None)
            if a is not None:
                assert isinstance(b, np.memmap) and b.dtype == a.dtype
                np.testing.assert_array_equal(a, b)
    # The mask the first two calls share is stored once.
    assert np.shares_memory(loaded.calls[0].masks.attn_mask, loaded.calls[1].masks.attn_mask)


def test_a_session_and_a_capture_are_told_apart_by_content(tmp_path):
    session = tmp_path / "work.attnviz"
    save_session(session, Session(arrays={"queries": np.zeros((1, 2, 3))}, settings={}))
    capture = tmp_path / "capture.attnviz"  # the issue's own example name
    save_capture(capture, run_with_everything())
    assert is_capture_file(capture) and not is_capture_file(session)
    assert len(load_capture(capture).calls) == 4
    with pytest.raises(CaptureFileError, match="zip archive"):
        load_capture(session)


_CHILD = r"""
import json, sys
from attnviz.io import load_capture

def rss():
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith("VmRSS:")) / 1024

before = rss()
run = load_capture(sys.argv[1])
opened = rss()
corner = float(run.calls[0].queries[0, 0, 0, 0])  # one page of one array
print(json.dumps({"open_mb": opened - before, "touched_mb": rss() - before, "type": type(run.calls[0].keys).__name__}))
"""


def test_a_large_capture_is_not_read_when_opened(tmp_path):
    b, h, n, d = 1, 8, 1024, 1024  # 32 MiB per array, 128 MiB in all
    big = np.lib.format.open_memmap(tmp_path / "q.npy", mode="w+", dtype=np.float32, shape=(b, h, n, d))
    big[:] = 1.0
    run = ModelRun((AttentionCall("big", big, big, big, output=big),))
    path = tmp_path / "big.attnviz-capture"
    save_capture(path, run)
    del big, run
    assert path.stat().st_size > 128 * 2**20
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["type"] == "memmap"
    assert figures["open_mb"] < 16 and figures["touched_mb"] < 16, figures


# ----------------------------------------------------------------------------- hostile files


def write(path: Path, header: Any, data: bytes = b"", *, length: int | None = None, raw: bytes | None = None) -> Path:
    text = raw if raw is not None else json.dumps(header).encode()
    text += b" " * (-(len(MAGIC) + 8 + len(text)) % 64)
    path.write_bytes(MAGIC + struct.pack("<Q", len(text) if length is None else length) + text + data)
    return path


def header(**call: Any) -> dict[str, Any]:
    arrays = {
        role: {"dtype": "F32", "shape": [1, 1, 2, 2], "offset": 64 * i}
        for i, role in enumerate(("queries", "keys", "values"))
    }
    return {
        "format": "attnviz-capture",
        "version": 1,
        "source": "capture",
        "query_tokens": None,
        "key_tokens": None,
        "calls": [{"name": "c", "arrays": arrays, **call}],
    }


DATA = b"\0" * (3 * 64)


def raw(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def refused(path: Path, *needles: str) -> str:
    with pytest.raises(CaptureFileError) as info:
        load_capture(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"{path.name}: "), text
    for needle in needles:
        assert needle in text, text
    return text


def test_a_valid_hand_made_file_loads(tmp_path):
    run = load_capture(write(tmp_path / "ok", header(), DATA))
    assert run.calls[0].shape == (1, 1, 2, 2)


def with_array(**entry: Any) -> dict[str, Any]:
    h = header()
    h["calls"][0]["arrays"]["values"] = {"dtype": "F32", "shape": [1, 1, 2, 2], "offset": 128, **entry}
    return h


@pytest.mark.parametrize(
    "case, needles",
    [
        (lambda p: write(p, header(), DATA[:130]), ("truncated or lies", "values")),
        (lambda p: write(p, with_array(offset=1 << 40), DATA), ("truncated or lies",)),
        (lambda p: write(p, with_array(offset=64, shape=[1, 1, 2, 4]), DATA), ("overlapping",)),
        (lambda p: write(p, with_array(offset=64, dtype="I32"), DATA), ("overlapping",)),
        (lambda p: write(p, with_array(offset=65), DATA), ("multiple of 64",)),
        (lambda p: write(p, with_array(offset=-64), DATA), ("invalid offset",)),
        (lambda p: write(p, with_array(offset=True), DATA), ("invalid offset",)),
        (lambda p: write(p, with_array(shape=[1, 1, 2**62, 2**62]), DATA), ("truncated or lies",)),
        (lambda p: write(p, with_array(shape=[1, 1, 0, 2]), DATA), ("invalid shape",)),
        (lambda p: write(p, with_array(shape=[1, 1, 1, 1, 1]), DATA), ("invalid shape",)),
        (lambda p: write(p, with_array(dtype="BF16"), DATA), ("unsupported dtype",)),
        (lambda p: write(p, with_array(dtype="O"), DATA), ("unsupported dtype",)),
        (lambda p: write(p, with_array(extra=1), DATA), ("damaged entry",)),
        (lambda p: write(p, header(), DATA, length=MAX_HEADER_BYTES + 1), ("at most",)),
        (lambda p: write(p, header(), DATA, length=2**64 - 1), ("at most",)),
        (lambda p: write(p, header(), b"", length=10_000), ("larger than the file",)),
        (
            lambda p: write(
                p, None, DATA, raw=json.dumps(header(scale=1)).replace('"scale": 1', '"scale": NaN').encode()
            ),
            ("NaN is not a number JSON allows",),
        ),
        (
            lambda p: write(p, None, DATA, raw=json.dumps(header()).replace('"keys"', '"queries"').encode()),
            ("'queries' appears twice",),
        ),
        (lambda p: write(p, {**header(), "calls": header()["calls"] * 2}, DATA), ("two calls named 'c'",)),
        (lambda p: write(p, None, DATA, raw=b"[" * 100_000 + b"]" * 100_000), ("not valid JSON",)),
        (lambda p: write(p, None, DATA, raw=b"[" + b"[]," * 1_100_000 + b"[]]"), ("JSON objects and lists",)),
        (lambda p: write(p, None, DATA, raw=b"\xff\xfe{"), ("not valid JSON",)),
        (lambda p: write(p, [], DATA), ("'format' is not",)),
        (lambda p: write(p, {**header(), "version": 4}, DATA), ("newer attnviz",)),
        (lambda p: write(p, {**header(), "version": "1"}, DATA), ("invalid capture format version",)),
        (lambda p: write(p, {**header(), "source": "pickle"}, DATA), ("unknown source",)),
        (lambda p: write(p, {**header(), "more": 1}, DATA), ("unknown entry 'more'",)),
        (lambda p: write(p, header(scale=-1.0), DATA), ("call 0: 'scale' is -1.0; expected null or a number > 0",)),
        (lambda p: write(p, header(fidelity="NaN"), DATA), ("call 0: 'fidelity' is",)),
        (lambda p: write(p, header(is_causal=1), DATA), ("call 0: 'is_causal' is 1; expected true or false",)),
        (lambda p: write(p, header(dtype="int8"), DATA), ("call 0: 'dtype' is 'int8'",)),
        (lambda p: write(p, {**header(), "calls": []}, DATA), ("no calls",)),
        (lambda p: write(p, {**header(), "query_tokens": [["a"], ["b", "c"]]}, DATA), ("damaged query_tokens",)),
        (lambda p: write(p, {**header(), "query_tokens": [["a", "b", "c"]]}, DATA), ("query_tokens have shape",)),
        (lambda p: write(p, with_array(shape=[1, 2, 2, 2], offset=128), DATA + b"\0" * 64), ("do not fit",)),
        (lambda p: raw(p, b""), ("first bytes do not match",)),
        (lambda p: raw(p, MAGIC + b"\1\0"), ("ends before its header length",)),
        (lambda p: raw(p, b"PK\3\4" + b"\0" * 40), ("zip archive",)),
    ],
)
def test_hostile_and_damaged_files_are_refused_in_one_line(tmp_path, case, needles):
    refused(case(tmp_path / "bad.attnviz-capture"), *needles)


def test_a_mask_that_does_not_fit_its_call_is_refused(tmp_path):
    h = header()
    h["calls"][0]["arrays"]["attn_mask"] = {"dtype": "BOOL", "shape": [1, 1, 3, 2], "offset": 192}
    refused(write(tmp_path / "mask", h, DATA + b"\1" * 64), "mask attn_mask of shape (1, 1, 3, 2)")
    h["calls"][0]["arrays"]["attn_mask"] = {"dtype": "I64", "shape": [1, 1, 2, 2], "offset": 192}
    refused(write(tmp_path / "mask", h, DATA + b"\0" * 64), "dtype int64")


def test_a_directory_and_a_missing_file(tmp_path):
    refused(tmp_path, "directory")
    refused(tmp_path / "missing", "does not exist")


def test_random_damage_to_a_header_is_always_a_one_line_refusal(tmp_path):
    good = tmp_path / "good"
    save_capture(good, run_with_everything())
    blob = bytearray(good.read_bytes())
    header_end = len(MAGIC) + 8 + struct.unpack("<Q", blob[len(MAGIC) : len(MAGIC) + 8])[0]
    rng = np.random.default_rng(1)
    loaded = 0
    for i in range(300):
        bad = bytearray(blob)
        for at in rng.integers(0, header_end, rng.integers(1, 4)):
            bad[at] = int(rng.integers(0, 256))
        path = tmp_path / f"bad{i}"
        path.write_bytes(bytes(bad))
        try:
            load_capture(path)
            loaded += 1  # a change that keeps the file valid (a letter of a name, a digit of a number)
        except CaptureFileError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(f"bad{i}: ")
    assert loaded < 300


def test_saving_refuses_what_cannot_be_stored_and_leaves_nothing_behind(tmp_path):
    run = run_with_everything()
    twice = ModelRun((run.calls[0], run.calls[0]))
    with pytest.raises(CaptureFileError, match="two calls are named 'encoder.layer.0'"):
        save_capture(tmp_path / "twice", twice)
    nan_scale = ModelRun((replace(run.calls[0], scale=math.nan),))
    with pytest.raises(CaptureFileError, match="cannot be written"):
        save_capture(tmp_path / "nan", nan_scale)
    assert list(tmp_path.iterdir()) == []


def _alibi_run(slopes: np.ndarray) -> ModelRun:
    from attnviz.state.run import CallTerm

    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 2, 4, 8)).astype(np.float32) for _ in range(3))
    return ModelRun((AttentionCall("attn", q, k, v, terms=(CallTerm("alibi", "ALiBi", values=slopes),)),))


def test_an_alibi_term_is_version_3_and_its_slopes_are_checked(tmp_path):
    # Issue 33: a recognised ALiBi score_mod is kept as one slope per head (format version 3,
    # written only when a file holds it: every other file stays version 2).
    plain = tmp_path / "plain.attnviz-capture"
    save_capture(plain, run_with_everything())
    assert b'"version":2' in plain.read_bytes()[:200]
    path = tmp_path / "alibi.attnviz-capture"
    save_capture(path, _alibi_run(np.array([0.5, 0.25])))
    assert b'"version":3' in path.read_bytes()[:200]
    (term,) = load_capture(path).calls[0].terms
    assert term.kind == "alibi" and np.array_equal(term.values, [0.5, 0.25])
    # The same file claiming version 2 is refused: version 2 has no "alibi".
    older = tmp_path / "older.attnviz-capture"
    older.write_bytes(path.read_bytes().replace(b'"version":3', b'"version":2', 1))
    refused(older, "has an invalid 'terms' in call 'attn'")
    for slopes in (np.array([0.5, 0.25, 1.0]), np.array([0.5, np.inf])):
        bad = tmp_path / "bad.attnviz-capture"
        save_capture(bad, _alibi_run(slopes))
        refused(bad, "has ALiBi slopes of shape", "one finite number per head (2)")


def test_sinks_of_another_shape_are_refused_naming_both_shapes_a_file_may_hold(tmp_path):
    # Sinks are one logit per head (H,) (gpt-oss) or one per query of each head (B, H, L_q)
    # (Inkling 2): the refusal names both, not "one per head" alone.
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, 2, 4, 8)).astype(np.float32) for _ in range(3))
    for good in (np.zeros(2, np.float32), np.zeros((1, 2, 4), np.float32)):
        path = tmp_path / "good.attnviz-capture"
        save_capture(path, ModelRun((AttentionCall("attn", q, k, v, sinks=good),)))
        assert load_capture(path).calls[0].sinks.shape == good.shape
    for bad in (np.zeros(3, np.float32), np.zeros((1, 2), np.float32), np.zeros(2, np.int64)):
        path = tmp_path / "bad.attnviz-capture"
        save_capture(path, ModelRun((AttentionCall("attn", q, k, v, sinks=bad),)))  # checked when read
        refused(
            path, f"has sinks of shape {bad.shape} in call 'attn'", "floating-point", "one per head (2,)", "(1, 2, 4)"
        )
