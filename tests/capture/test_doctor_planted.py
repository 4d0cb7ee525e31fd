"""The mask doctor on a hand-written SDPA model with one planted mask bug at a time: it finds
exactly the planted bug (its kind, in the calls it was planted in) and nothing on the correct
models."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from torch import nn

import attnviz
from attnviz.capture import diagnose_run, format_finding
from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

from .models import KEEP, TOKENS, TinySdpa, ids
from .sweep_support import captured_family

MIN = torch.finfo(torch.float32).min
CAUSAL = torch.ones(6, 6, dtype=torch.bool).tril()
PADDING = KEEP[:, None, None, :]  # (B, 1, 1, L_k), True = attend: the right padding mask


def additive(allowed: torch.Tensor) -> torch.Tensor:
    return torch.zeros(allowed.shape).masked_fill(~allowed, MIN)


SCENARIOS: dict[str, tuple[list[tuple[torch.Tensor | None, bool]], set[tuple[str, int]]]] = {
    "correct encoder": ([(PADDING, False)] * 3, set()),
    "correct decoder": ([(PADDING & CAUSAL, False)] * 3, set()),
    "correct decoder, additive finfo.min": ([(additive(PADDING & CAUSAL), False)] * 3, set()),
    "mask shaped (B, 1, L, 1)": ([(KEEP[:, None, :, None], False)] * 3, {("broadcast_axis", i) for i in range(3)}),
    "key padding convention given to SDPA": ([(~PADDING, False)] * 3, {("inverted_polarity", i) for i in range(3)}),
    "0/1 float mask added": ([(PADDING.float(), False)] * 3, {("float01_additive", i) for i in range(3)}),
    "padding paired with padding": (
        [((KEEP[:, :, None] == KEEP[:, None, :])[:, None], False)] * 3,
        {("padding_attends_padding", i) for i in range(3)},
    ),
    "no mask on a padded batch": ([(None, False)] * 3, {("padding_attended", i) for i in range(3)}),
    "finfo.min added twice": (
        [(additive(PADDING) + additive(CAUSAL), False)] * 3,
        {("additive_overflow", i) for i in range(3)},
    ),
    "one layer without its causal mask": (
        [(PADDING & CAUSAL, False), (PADDING, False), (PADDING & CAUSAL, False)],
        {("future_attended", 1)},
    ),
    "causal mask off by one (tril(-1))": (
        [(PADDING & CAUSAL.tril(-1), False)] * 3,
        {("empty_rows", i) for i in range(3)},
    ),
}


def diagnose(masks: list[tuple[torch.Tensor | None, bool]]) -> set[tuple[str, int]]:
    model = TinySdpa()
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), masks)
    run = cap.to_run()
    findings = diagnose_run(run)
    for f in findings:
        assert f.name == run.calls[f.call].name and "\n" not in format_finding(f)
    return {(f.kind, f.call) for f in findings}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_doctor_finds_exactly_the_planted_bug(scenario):
    masks, expected = SCENARIOS[scenario]
    assert diagnose(masks) == expected


def test_severities_locations_and_sentences():
    model = TinySdpa()
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), [(KEEP[:, None, :, None], False), (PADDING & CAUSAL.tril(-1), False), (None, False)])
    findings = {f.kind: f for f in diagnose_run(cap.to_run())}
    broadcast = findings["broadcast_axis"]
    # Elements 1 and 2 have padding: their padding query rows are hidden, 2 + 4 rows of 2 heads.
    assert broadcast.severity == "error" and broadcast.batch == (1, 2) and broadcast.rows == (2, 3, 4, 5)
    assert broadcast.count == (2 + 4) * 2 and "(B, 1, 1, L_k)" in broadcast.message
    assert "zeros" in broadcast.message  # what SDPA produced for the hidden rows
    empty = findings["empty_rows"]
    assert empty.severity == "warning" and empty.rows == (0,) and empty.count == 3 * 2 and "zeros" in empty.message
    attended = findings["padding_attended"]
    assert attended.severity == "error" and attended.batch == (1, 2) and attended.name == "layers.2"
    line = format_finding(broadcast)
    assert line.startswith("error: call 0 (layers.0), batch 1-2, rows 2-5: attn_mask of shape (3, 1, 6, 1)")


@pytest.mark.parametrize("fill, outcome", [("bool", "came out as zeros"), ("finfo.min", "spread them evenly")])
def test_what_the_model_made_of_rows_with_no_key(fill, outcome):
    allowed = PADDING & CAUSAL.tril(-1)
    model = TinySdpa()
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), [(allowed if fill == "bool" else additive(allowed), False)] * 3)
    findings = diagnose_run(cap.to_run())
    assert [f.kind for f in findings] == ["empty_rows"] * 3 and outcome in findings[0].message


def test_inverted_polarity_seen_through_the_tokens_alone():
    """Every sequence padded: no sequence is hidden whole, so only the tokens tell the mask is inverted."""
    keep = torch.tensor([[1] * 5 + [0], [1] * 4 + [0] * 2, [1] * 2 + [0] * 4]).bool()
    tokens = [[f"w{j}" if keep[i, j] else "<pad>" for j in range(6)] for i in range(3)]
    model = TinySdpa()
    with attnviz.capture(model, tokens=tokens) as cap, torch.no_grad():
        model(ids(), [((~keep)[:, None, None, :], False)] * 3)
    run = cap.to_run()
    findings = diagnose_run(run)
    assert {(f.kind, f.batch) for f in findings} == {("inverted_polarity", (0, 1, 2))}
    assert "attn_mask reads True as attend" in findings[0].message
    # Without the tokens (or with pad tokens it does not know), nothing tells.
    assert diagnose_run(run, pad_tokens=("[PAD]",)) == []


def test_float16_fill_cast_from_float32_overflows():
    """A float32 finfo.min mask handed to a float16 model becomes -inf (SDPA takes it as it is)."""
    model = TinySdpa().half()
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), [(additive(PADDING & CAUSAL), False)] * 3)
    findings = diagnose_run(cap.to_run())
    assert {(f.kind, f.call) for f in findings} == {("additive_overflow", i) for i in range(3)}
    assert "float16" in findings[0].message and findings[0].severity == "warning"


def test_kv_cache_step_with_top_left_causal_alignment():
    model = TinySdpa()
    keep = torch.ones(3, 8, dtype=torch.bool)
    bottom_right = torch.ones(2, 8, dtype=torch.bool).tril(6)
    for step_masks, expected in (
        ([(None, True)] * 3, {("causal_alignment", i) for i in (3, 4, 5)}),
        ([(bottom_right & keep[:, None, None, :], False)] * 3, set()),
        ([(torch.ones(2, 8, dtype=torch.bool).tril(), False)] * 3, {("causal_alignment", i) for i in (3, 4, 5)}),
    ):
        with attnviz.capture(model) as cap, torch.no_grad():
            _, past = model(ids(), [(None, True)] * 3)
            model(ids(length=2, seed=1), step_masks, past=past)
        run = cap.to_run()
        assert [c.shape[2:] for c in run.calls] == [(6, 6)] * 3 + [(2, 8)] * 3
        assert [c.name for c in run.calls][3:] == ["layers.0 #2", "layers.1 #2", "layers.2 #2"]
        assert {(f.kind, f.call) for f in diagnose_run(run)} == expected


def test_nan_rows_of_nn_multihead_attention_are_errors():
    """With need_weights=True, nn.MultiheadAttention softmaxes -inf rows into NaN."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(2, 5, 8)
    # An off-by-one causal mask in nn.MultiheadAttention's convention (True = masked): the first
    # query is left no key at all.
    strictly_earlier = torch.ones(5, 5, dtype=torch.bool).triu()
    with attnviz.capture(mha) as cap, torch.no_grad():
        out, _ = mha(x, x, x, attn_mask=strictly_earlier)
    assert torch.isnan(out[:, 0]).all()
    (finding,) = diagnose_run(cap.to_run())
    assert (finding.kind, finding.severity, finding.rows) == ("empty_rows", "error", (0,)) and "NaN" in finding.message


def test_weights_only_calls_are_read_through_their_weights():
    """output_attentions holds no masks: a key with weight 0 was masked."""
    scores = torch.randn(3, 2, 6, 6, generator=torch.Generator().manual_seed(0))
    causal = torch.softmax(scores.masked_fill(~(PADDING & CAUSAL), -torch.inf), -1)
    leaky = torch.softmax(scores.masked_fill(~PADDING, -torch.inf), -1)  # a layer that forgot its causal mask
    run = attnviz.capture.from_output_attentions([causal, causal, causal], tokens=TOKENS)
    assert run.calls[0].weights_only and diagnose_run(run) == []
    run = attnviz.capture.from_output_attentions([causal, leaky, causal], tokens=TOKENS)
    assert {(f.kind, f.call) for f in diagnose_run(run)} == {("future_attended", 1)}


def test_lengths_stand_in_for_tokens():
    model = TinySdpa()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(ids(), [(~PADDING, False)] * 3)
    run = cap.to_run()
    # Without tokens the engine still sees a padding mask that hides all of sequence 0.
    assert {f.kind for f in diagnose_run(run)} == {"inverted_polarity"}
    findings = diagnose_run(run, lengths=KEEP.sum(-1).numpy())
    assert {f.batch for f in findings} == {(0, 1, 2)}


def test_the_doctor_is_fast_on_a_six_layer_run():
    rng = np.random.default_rng(0)
    b, h, n, d = 8, 12, 128, 32
    keep = np.arange(n)[None] < rng.integers(n // 2, n + 1, b)[:, None]
    mask = keep[:, None, None, :]
    tokens = np.where(keep, "w", "[PAD]")
    calls = tuple(
        AttentionCall(
            f"encoder.layer.{i}.attention.self",
            *(rng.standard_normal((b, h, n, d), np.float32) for _ in range(3)),
            MaskArguments(attn_mask=mask),
            output=rng.standard_normal((b, h, n, d), np.float32),
        )
        for i in range(6)
    )
    run = ModelRun(calls, tokens, tokens)
    diagnose_run(run)
    start = time.perf_counter()
    assert diagnose_run(run) == []
    assert time.perf_counter() - start < 0.5


def test_masks_built_again_for_long_runs_give_the_same_findings(monkeypatch):
    import attnviz.capture.doctor as doctor

    masks, expected = SCENARIOS["one layer without its causal mask"]
    monkeypatch.setattr(doctor, "_KEEP_ELEMENTS", 0)  # nothing kept from the first pass to the second
    assert diagnose(masks) == expected


def test_a_mask_joined_from_two_fill_conventions_is_no_overflow():
    """DeepSeek V4 joins its finfo.min mask with -inf over its compressed keys (another block of
    keys): -inf beside finfo.min, but in different keys, so not two fills added; silent. The same
    values added in one key's column (the overflow) are still found."""
    joined = torch.cat([additive(PADDING & CAUSAL), torch.full((3, 1, 6, 2), float("-inf"))], dim=-1)
    joined[..., -1] = 0.0  # each query keeps a compressed key: no row is left without one
    model = TinyJoined()
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), joined)
    assert not [f for f in diagnose_run(cap.to_run()) if f.kind == "additive_overflow"]
    added = joined.clone()
    added[..., 0, 5] = float("-inf")  # two fills added in one key's column: -inf beside its finfo.min
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), added)
    assert [f.kind for f in diagnose_run(cap.to_run())].count("additive_overflow") == 1


class TinyJoined(torch.nn.Module):
    """One SDPA call over the tokens' keys and two more (a compressed cache), the mask given."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(50, 8)
        self.extra = torch.nn.Parameter(torch.randn(1, 1, 2, 8))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)[:, None]  # (B, 1, L, 8)
        keys = torch.cat([x, self.extra.expand(x.shape[0], 1, 2, 8)], dim=2)
        return torch.nn.functional.scaled_dot_product_attention(x, keys, keys, attn_mask=mask)


def test_keys_appended_after_the_tokens_are_no_future_to_a_causal_stack():
    """DeepSeek V4's compressed-attention layer attends to its tokens and then to compressed
    entries appended after them (8 tokens, 10 keys): its queries were read at positions 0..7, so
    no key is cached before them and the extra keys have no position; the doctor had read them
    as later tokens (a missing causal mask, on the full --open sweep). The same call read at
    positions 2..9 (a cached step) is still checked bottom-right aligned, and then it sees the
    future."""
    import dataclasses

    transformers = pytest.importorskip("transformers")
    cap, _built = captured_family(transformers, "deepseek_v4")
    run = cap.to_run()
    longer = [i for i, c in enumerate(run.calls) if c.shape[-1] > c.shape[-2] > 1]
    assert longer, [c.shape for c in run.calls]
    index = longer[0]
    assert run.calls[index].positions is not None
    assert not [f for f in diagnose_run(run) if f.kind == "future_attended"]
    shifted = run.calls[index].positions + 2
    calls = list(run.calls)
    calls[index] = dataclasses.replace(calls[index], positions=shifted)
    cached = dataclasses.replace(run, calls=tuple(calls))
    assert [f.call for f in diagnose_run(cached) if f.kind == "future_attended"] == [index]
