"""Every attn-gym mask_mod and score_mod through a capture of ``flex_attention`` (imported by name
in a helper module, and called through its module), recomputed, and round-tripped through a file,
against the dense reference (issue 33): within 1e-5.

flex_attention runs here without its compile (FlexAttention's own debug switch,
``_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG``: the HigherOrderOperator evaluated eagerly, the same
numbers), which keeps each case well under a second; the reference is checked against that output
first.
"""

from __future__ import annotations

import pytest
import torch

import attnviz
from attnviz.capture import recompute_call
from attnviz.io import load_capture

from .. import attn_gym_cases as cases
from . import name_imports

flex = cases.flex
ATOL = 1e-5
SCALE = 0.35


@pytest.fixture(autouse=True)
def eager_flex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(flex, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


def _round_trip(case: cases.Case, tmp_path, *, mask_mod=None, score_mod=None) -> None:
    q, k, v = cases.qkv(case.n_q, case.n_k)
    block_mask = None
    if mask_mod is not None:
        block_mask = flex.create_block_mask(mask_mod, cases.B, cases.H, case.n_q, case.n_k, device="cpu", BLOCK_SIZE=8)
    weights, output = cases.reference(q, k, v, mask_mod=mask_mod, score_mod=score_mod, scale=SCALE)
    with torch.no_grad(), attnviz.capture() as cap:
        by_name = name_imports.run_flex(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=SCALE)
        by_attribute = flex.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=SCALE)
    for out in (by_name, by_attribute):  # the reference is FlexAttention's
        torch.testing.assert_close(out.double(), output, atol=ATOL, rtol=0)
    assert [call.kind for call in cap.calls] == ["flex_attention"] * 2, cap.warnings
    for call in cap.calls:
        assert call.fidelity is not None and call.fidelity <= ATOL, (call.fidelity, call.note)
        torch.testing.assert_close(call.weights().double().nan_to_num(0.0), weights, atol=ATOL, rtol=0)
    cap.save(tmp_path / "gym.attnviz-capture")
    for call in load_capture(tmp_path / "gym.attnviz-capture").calls:
        reopened, reopened_output = recompute_call(call)
        torch.testing.assert_close(reopened.double().nan_to_num(0.0), weights, atol=ATOL, rtol=0)
        torch.testing.assert_close(reopened_output.double(), output, atol=ATOL, rtol=0)
        assert call.fidelity is not None and call.fidelity <= ATOL, (call.fidelity, call.note)


@pytest.mark.parametrize("case", cases.MASK_CASES, ids=lambda c: c.name)
def test_every_attn_gym_mask_mod_is_captured_recomputed_and_kept_in_a_file(case: cases.Case, tmp_path) -> None:
    _round_trip(case, tmp_path, mask_mod=case.make())


@pytest.mark.parametrize("case", cases.SCORE_CASES, ids=lambda c: c.name)
def test_every_attn_gym_score_mod_is_captured_recomputed_and_kept_in_a_file(case: cases.Case, tmp_path) -> None:
    _round_trip(case, tmp_path, score_mod=case.make())
