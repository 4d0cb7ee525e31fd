"""Every attn-gym mask_mod and score_mod through a capture of ``flex_attention`` (imported by name
in a helper module, and called through its module), recomputed, and round-tripped through a file,
against the dense reference (issue 33): within 1e-5.

flex_attention runs here without its compile (FlexAttention's own debug switch,
``_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG``: the HigherOrderOperator evaluated eagerly, the same
numbers), which keeps each case well under a second; the reference is checked against that output
first.
"""

from __future__ import annotations

import numpy as np
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


def _score_case(name: str) -> cases.Case:
    return next(case for case in cases.SCORE_CASES if case.name == name)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("tanh_softcap", "softcap"), ("alibi", "alibi"), ("sandwich", "bias"), ("graphormer_spatial", "bias")],
)
def test_a_recognised_score_mod_is_saved_as_its_term_and_recomputes_edited_inputs(
    name: str, kind: str, tmp_path
) -> None:
    # Issue 33: a capture's score_mod that is a soft cap, ALiBi or a bias is kept in the file as
    # that term (before: a soft cap was kept as what it did to the recorded scores only, so the
    # reopened call with other queries was recomputed without it).
    from dataclasses import replace

    case = _score_case(name)
    score_mod = case.make()
    q, k, v = cases.qkv(case.n_q, case.n_k)
    with torch.no_grad(), attnviz.capture() as cap:
        name_imports.run_flex(q, k, v, score_mod=score_mod, scale=SCALE)
    cap.save(tmp_path / "gym.attnviz-capture")
    call = load_capture(tmp_path / "gym.attnviz-capture").calls[0]
    assert [term.kind for term in call.terms] == [kind], call.terms
    term = call.terms[0]
    if kind == "softcap":
        assert term.cap == 2.0
    elif kind == "alibi":  # attn-gym's slopes: exp2(-(h + 1) * 8 / H), in float32
        expected = torch.exp2(-((torch.arange(cases.H) + 1) * 8.0 / cases.H))
        np.testing.assert_allclose(term.values, expected.double().numpy(), rtol=1e-7, atol=0)
        from attnviz.compare import one_head_call  # a head of its own takes its own slope

        whole, _ = recompute_call(call)
        for head in range(cases.H):
            alone, _ = recompute_call(one_head_call(call, head))
            torch.testing.assert_close(alone[:, 0], whole[:, head], atol=ATOL, rtol=0)
    else:
        assert term.values is not None and term.values.ndim == 4
    # Other queries and keys than the recorded ones: the term recomputes what the model would.
    q2, k2, _ = cases.qkv(case.n_q, case.n_k, seed=7)
    edited = replace(call, queries=q2.numpy(), keys=k2.numpy(), output=None, fidelity=None)
    weights, output = recompute_call(edited)
    ref_weights, ref_output = cases.reference(q2, k2, v, score_mod=score_mod, scale=SCALE)
    torch.testing.assert_close(weights.double(), ref_weights, atol=ATOL, rtol=0)
    torch.testing.assert_close(output.double(), ref_output, atol=ATOL, rtol=0)


def test_an_unrecognised_score_mod_is_kept_as_its_effect_and_said() -> None:
    # attn-gym's GELU activation is none of the terms: the file keeps what it did to the
    # recorded scores (as before), and the note says an edit is recomputed without it.
    from attnviz.io.storable import storable

    case = _score_case("gelu_activation")
    q, k, v = cases.qkv(case.n_q, case.n_k)
    with torch.no_grad(), attnviz.capture() as cap:
        name_imports.run_flex(q, k, v, score_mod=case.make(), scale=SCALE)
    call = storable(cap.to_run()).calls[0]
    assert [term.kind for term in call.terms] == ["bias"]
    assert "the file keeps what it did to the recorded scores" in call.note


def test_attn_gym_vsa_block_mask_is_read_from_its_table_and_its_cpu_call_named_by_the_doctor() -> None:
    # attn-gym's VSA block mask holds its whole top-k sparsity in the block table (mask_mod = noop):
    # attend reads it as FlexAttention's GPU kernels compute it (the reference: attn-gym's own
    # VSA mask_mod of the same top-k), while PyTorch's CPU flex_attention computes every block,
    # which the captured call's note and the doctor say (issue 33).
    from attnviz.capture import diagnose_run
    from attnviz.engine import attend

    tiles, top_k, tile = 4, 2, 8
    g = torch.Generator().manual_seed(8)
    topk = torch.rand(cases.B, cases.H, tiles, tiles, generator=g).argsort(-1)[..., :top_k]
    block_mask = cases.masks.create_vsa_block_mask(topk, tile, tiles)
    q, k, v = cases.qkv(tiles * tile, tiles * tile)
    weights, _output = cases.reference(q, k, v, mask_mod=cases.masks.generate_vsa_mask_mod(topk, tile), scale=SCALE)
    result = attend(q, k, v, mask_mode="sdpa", scale=SCALE, mask=block_mask, keep="weights")
    torch.testing.assert_close(torch.as_tensor(result.weights).double(), weights, atol=ATOL, rtol=0)
    with torch.no_grad(), attnviz.capture() as cap:
        out = flex.flex_attention(q, k, v, block_mask=block_mask, scale=SCALE)
    dense, _ = cases.reference(q, k, v, scale=SCALE)  # the CPU computed every block
    torch.testing.assert_close(out.double(), dense @ v.double(), atol=ATOL, rtol=0)
    (call,) = cap.calls
    assert call.path.unhonoured_blocks == pytest.approx(1 - top_k / tiles)
    assert call.fidelity is not None and call.fidelity <= ATOL
    found = [f for f in diagnose_run(cap.to_run()) if f.kind == "block_table"]
    assert len(found) == 1 and "skips 50.0% of blocks that its mask_mod allows" in found[0].message
