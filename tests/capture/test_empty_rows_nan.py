"""Rows whose every key is masked, as a model's eager code computes them (issue 35): a plain
softmax over -inf gives NaN there, SDPA's kernel zeros. attnviz's recomputation follows SDPA's
rule first; a call whose output is NaN on exactly those rows is compared again with the plain
softmax's and said so in its note (the three NeMo ASR encoders were "off by inf" on eager)."""

from __future__ import annotations

import math

import pytest
import torch

from attnviz.capture.calls import CapturedCall

from .sweep_support import captured_family


def _call(output_nan: bool) -> CapturedCall:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 4, 8, generator=g) for _ in range(3))
    mask = torch.zeros(1, 1, 4, 4)
    mask[..., 2, :] = -math.inf  # query 2 has no key
    weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(8) + mask, dim=-1)  # row 2: NaN
    out = weights @ v
    if not output_nan:
        out = out.nan_to_num(0.0)  # as SDPA's kernel gives it
    return CapturedCall("call", "attention_interface", q, k, v, q.dtype, attn_mask=mask, output=out)


def test_an_eager_softmaxs_nan_rows_are_reproduced_and_said() -> None:
    call = _call(output_nan=True)
    assert call.fidelity is not None and call.fidelity < 1e-6
    assert "every key of 2 query row(s) is masked" in call.note


def test_sdpas_zero_rows_are_reproduced_without_a_note() -> None:
    call = _call(output_nan=False)
    assert call.fidelity is not None and call.fidelity < 1e-6
    assert call.note == ""


def test_a_nan_row_the_mask_does_not_explain_stays_off() -> None:
    call = _call(output_nan=True)
    assert call.output is not None
    call.output[0, 0, 1] = math.nan  # a row with keys left: no reading explains it
    assert call.fidelity == math.inf


def test_nemotron_asr_streaming_on_eager_is_exact_and_says_why_its_rows_are_nan() -> None:
    # transformers' eager encoder reads its float mask (0 = attend) as boolean and masks every
    # key: every row of the first layer is NaN in the model's own output (SDPA runs right).
    transformers = pytest.importorskip("transformers")
    cap, _built = captured_family(transformers, "nemotron_asr_streaming")
    first = cap.calls[0]
    assert first.output is not None and bool(torch.isnan(first.output).all())
    assert first.fidelity == 0.0 and "is masked: the model's softmax gives NaN there" in first.note
    assert all(c.fidelity is not None and c.fidelity < 1e-4 for c in cap.calls)
