"""attnviz.capture on real architectures built in the test: Hugging Face BERT and GPT-2 under
attn_implementation="sdpa", torch's TransformerEncoder and MultiheadAttention (both of its paths).
Every call is recorded once, named after its module, reproduced by the engine to 1e-5 (float32),
and the model computes exactly what it computes without the capture."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnviz
from attnviz.capture import diagnose_run

from .models import KEEP, TOKENS, TinySdpa, ids

ATOL = 1e-5


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def padded_batch(b: int, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, list[list[str]]]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(n // 3, n, (b,), generator=g)
    lengths[0] = n
    keep = torch.arange(n)[None] < lengths[:, None]
    tokens = [[f"t{i}" if keep[r, i] else "[PAD]" for i in range(n)] for r in range(b)]
    return torch.randint(1, 60, (b, n), generator=g), keep.long(), tokens


def test_a_six_layer_twelve_head_bert_on_a_padded_batch(transformers):
    config = transformers.BertConfig(
        vocab_size=60,
        hidden_size=96,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=128,
        max_position_embeddings=32,
        attn_implementation="sdpa",
    )
    torch.manual_seed(0)
    model = transformers.BertModel(config).eval()
    input_ids, attention_mask, tokens = padded_batch(4, 16, 1)
    with torch.no_grad():
        plain = model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        with attnviz.capture(model, tokens=tokens) as cap:
            captured = model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    assert torch.equal(plain, captured)
    assert [c.name for c in cap.calls] == [f"encoder.layer.{i}.attention.self" for i in range(6)]
    assert all(c.fidelity is not None and c.fidelity <= ATOL for c in cap.calls), [c.fidelity for c in cap.calls]
    assert cap.calls[0].queries.shape == (4, 12, 16, 8) and cap.calls[0].attn_mask.dtype == torch.bool
    assert cap.calls[1].attn_mask is cap.calls[0].attn_mask  # one mask for every layer, kept once
    assert not cap.warnings
    run = cap.to_run()
    assert run.source == "capture" and run.layers == 6 and run.heads(0) == 12
    assert run.query_tokens.shape == (4, 16) and run.query_tokens[1, -1] in ("[PAD]", "t15")
    assert all(call.fidelity <= ATOL and call.output is not None for call in run.calls)
    assert diagnose_run(run) == []


def gpt2(transformers: Any) -> Any:
    config = transformers.GPT2Config(
        vocab_size=60,
        n_embd=32,
        n_layer=3,
        n_head=4,
        n_positions=32,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="sdpa",
    )
    torch.manual_seed(3)
    return transformers.GPT2Model(config).eval()


@pytest.mark.parametrize("side", ["right", "left"])
def test_gpt2_causal_with_padding_then_a_kv_cache_step(transformers, side):
    model = gpt2(transformers)
    right = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])
    attend_01 = right if side == "right" else right.flip(-1)
    tokens = [["<pad>" if not keep else f"w{i}" for i, keep in enumerate(row)] for row in attend_01.tolist()]
    g = torch.Generator().manual_seed(5)
    prompt, step = torch.randint(1, 60, (3, 6), generator=g), torch.randint(1, 60, (3, 2), generator=g)
    with torch.no_grad():
        first = model(input_ids=prompt, attention_mask=attend_01, use_cache=True)
        plain = model(
            input_ids=step,
            attention_mask=torch.cat([attend_01, torch.ones(3, 2, dtype=torch.long)], 1),
            past_key_values=first.past_key_values,
            use_cache=True,
        ).last_hidden_state
        with attnviz.capture(model, tokens=tokens) as cap:
            first = model(input_ids=prompt, attention_mask=attend_01, use_cache=True)
            out = model(
                input_ids=step,
                attention_mask=torch.cat([attend_01, torch.ones(3, 2, dtype=torch.long)], 1),
                past_key_values=first.past_key_values,
                use_cache=True,
            ).last_hidden_state
    assert torch.equal(plain, out)
    assert [c.name for c in cap.calls] == [f"h.{i}.attn" for i in range(3)] + [f"h.{i}.attn #2" for i in range(3)]
    assert [tuple(c.queries.shape[2:3]) + tuple(c.keys.shape[2:3]) for c in cap.calls] == [(6, 6)] * 3 + [(2, 8)] * 3
    assert all(c.fidelity <= ATOL for c in cap.calls), [c.fidelity for c in cap.calls]
    # Left padding leaves the padding queries before the first real token no key at all; SDPA gives
    # them zeros, and padding whose output is discarded is not worth a finding. Left padded without
    # position_ids, GPT-2's learned positions count the pads: its wpe was called with them
    # (recorded at capture), and that is named, rightly.
    found = diagnose_run(cap.to_run())
    if side == "left":
        assert [(f.kind, f.severity, f.call, f.batch) for f in found] == [("positions", "error", 0, (1, 2))]
    else:
        assert found == []


def test_transformer_encoder_with_key_padding_in_inference_mode():
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=24, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    x = torch.randn(3, 6, 16)
    causal = torch.ones(6, 6, dtype=torch.bool).triu(1)  # True = masked; one tensor for both layers
    with torch.inference_mode():
        fast = encoder(x, mask=causal, src_key_padding_mask=~KEEP)  # the fused fast path
        with attnviz.capture(encoder, tokens=TOKENS) as cap:
            captured = encoder(x, mask=causal, src_key_padding_mask=~KEEP)
    assert torch.backends.mha.get_fastpath_enabled()  # switched back on
    # The capture runs the same attention through code it can see: equal up to rounding.
    torch.testing.assert_close(captured, fast, atol=1e-5, rtol=0)
    assert [c.name for c in cap.calls] == ["layers.0.self_attn", "layers.1.self_attn"]
    assert all(c.kind == "multihead_attention" and c.fidelity <= ATOL for c in cap.calls)
    assert cap.calls[0].key_padding_mask is not None and cap.calls[0].output.shape == (3, 2, 6, 8)
    assert cap.calls[0].attn_mask is cap.calls[1].attn_mask
    quick = cap.to_run(fidelity=False)  # what was not checked yet stays unchecked
    assert [c.fidelity for c in quick.calls] == [c._fidelity for c in cap.calls]
    run = cap.to_run()
    assert run.calls[0].masks.key_padding_mask.shape == (3, 6) and diagnose_run(run) == []
    assert run.calls[0].masks.attn_mask is run.calls[1].masks.attn_mask  # still one mask


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_default_need_weights_path(batch_first):
    torch.manual_seed(2)
    mha = nn.MultiheadAttention(16, 4, batch_first=batch_first).eval()
    x = torch.randn(3, 6, 16) if batch_first else torch.randn(6, 3, 16)
    causal = torch.ones(6, 6, dtype=torch.bool).triu(1)  # True = masked, as nn.MultiheadAttention reads it
    with attnviz.capture(mha) as cap:
        out, weights = mha(x, x, x, key_padding_mask=~KEEP, attn_mask=causal, average_attn_weights=False)
    (call,) = cap.calls
    assert call.name == "MultiheadAttention"  # the model itself: named after its class
    assert call.output is None and call.module_output is not None and call.fidelity <= ATOL
    assert "recomputation" in call.note
    run = cap.to_run()
    (c,) = run.calls
    assert c.masks.attn_mask.dtype == bool and bool(c.masks.attn_mask[0, 0])  # SDPA's convention: True = attend
    # The recomputed heads, pooled with the module's own weights, are the module's heads.
    v = torch.from_numpy(c.values)
    torch.testing.assert_close(torch.from_numpy(c.output), weights @ v, atol=ATOL, rtol=0)


def test_multihead_attention_cross_attention_with_separate_projections_and_an_unbatched_input():
    torch.manual_seed(3)
    mha = nn.MultiheadAttention(8, 2, kdim=5, vdim=3).eval()
    q, k, v = torch.randn(4, 8), torch.randn(7, 5), torch.randn(7, 3)
    with attnviz.capture() as cap, torch.no_grad():
        mha(q, k, v, need_weights=False)
        mha(q, k, v)
    assert [c.name for c in cap.calls] == ["call 0", "call 1"]
    assert [c.queries.shape for c in cap.calls] == [(1, 2, 4, 4)] * 2 and cap.calls[0].keys.shape == (1, 2, 7, 4)
    assert all(c.fidelity <= ATOL for c in cap.calls)


def test_sdpa_inside_multihead_attention_is_recorded_once():
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 3, 8)
    with attnviz.capture() as cap:
        mha(x, x, x, need_weights=False)
    (call,) = cap.calls
    assert call.kind == "multihead_attention" and call.output is not None and call.fidelity <= ATOL


def test_the_model_is_unchanged_and_gradients_flow():
    model = TinySdpa()
    masks = [(KEEP[:, None, None, :], False)] * 3
    out, _ = model(ids(), masks)
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    with attnviz.capture(model) as cap:
        again, _ = model(ids(), masks)
        again.sum().backward()
    assert torch.equal(out, again)
    assert all(torch.equal(g, p.grad) for g, p in zip(grads, model.parameters()))
    assert not any(c.queries.requires_grad for c in cap.calls) and len(cap.calls) == 3


@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode])
def test_no_grad_and_inference_mode(context):
    model = TinySdpa()
    with context(), attnviz.capture(model) as cap:
        model(ids(), [(KEEP[:, None, None, :], False)] * 3)
    assert len(cap.calls) == 3 and not cap.calls[0].queries.is_inference()
    run = cap.to_run()
    assert all(c.fidelity <= ATOL for c in run.calls)


def test_everything_is_put_back_after_an_exception():
    sdpa, forward = F.scaled_dot_product_attention, nn.MultiheadAttention.forward
    model = TinySdpa()
    with pytest.raises(ValueError, match="boom"), attnviz.capture(model) as cap:
        model(ids(), [(None, False)] * 3)
        raise ValueError("boom")
    assert F.scaled_dot_product_attention is sdpa and nn.MultiheadAttention.forward is forward
    assert torch.backends.mha.get_fastpath_enabled()
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())
    assert len(cap.calls) == 3
    # A model whose own forward raises inside the capture: the hooks still unwind.
    with pytest.raises(RuntimeError), attnviz.capture(model):
        model(ids(), [(torch.ones(2, 2, dtype=torch.bool), False)] * 3)  # a mask that does not broadcast
    assert F.scaled_dot_product_attention is sdpa


def test_the_memory_budget_stops_recording_and_says_so():
    model = TinySdpa()
    one_call = 4 * 3 * 2 * 6 * 8 * 4  # q, k, v and output, float32
    with attnviz.capture(model, memory_budget=2.5 * one_call) as cap, torch.no_grad():
        out, _ = model(ids(), [(None, False)] * 3)
    assert len(cap.calls) == 2 and cap.recorded_bytes <= 2.5 * one_call
    assert any("recording stopped at attention call 2" in w for w in cap.warnings)
    assert any("1 attention call was not recorded" in w for w in cap.warnings)
    assert torch.equal(out, model(ids(), [(None, False)] * 3)[0])


def test_modules_restricts_what_is_recorded():
    model = TinySdpa()
    with attnviz.capture(model, modules=["layers.1", "*s.2"]) as cap, torch.no_grad():
        model(ids(), [(None, False)] * 3)
    assert [c.name for c in cap.calls] == ["layers.1", "layers.2"]
    with attnviz.capture(model, modules=[model.layers[0]]) as cap, torch.no_grad():
        model(ids(), [(None, False)] * 3)
    assert [c.name for c in cap.calls] == ["layers.0"]
    with pytest.raises(ValueError, match="names no module"):
        attnviz.capture(model, modules=["encoder.*"])
    with pytest.raises(ValueError, match="pass the model"):
        attnviz.capture(modules=["layers.0"])


def test_gqa_three_d_inputs_dropout_and_no_call():
    g = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(2, 4, 5, 8, generator=g),
        torch.randn(2, 2, 7, 8, generator=g),
        torch.randn(2, 2, 7, 8, generator=g),
    )
    with attnviz.capture() as cap:
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True, scale=0.3)
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True, dropout_p=0.5)
    assert cap.calls[0].fidelity <= ATOL and cap.calls[0].enable_gqa and cap.calls[0].scale == 0.3
    assert cap.calls[1].fidelity is None and "dropout" in cap.calls[1].note
    with attnviz.capture() as cap:
        F.scaled_dot_product_attention(q[:, 0], k[:, 0], v[:, 0], attn_mask=torch.ones(2, 5, 7, dtype=torch.bool))
    run = cap.to_run()
    assert run.calls[0].queries.shape == (2, 1, 5, 8) and run.calls[0].masks.attn_mask.shape == (2, 1, 5, 7)
    assert run.calls[0].fidelity <= ATOL
    with attnviz.capture(TinySdpa()) as cap:
        pass
    assert cap.calls == [] and "no attention call was recorded" in cap.warnings[0]
    with pytest.raises(RuntimeError, match="records once"), cap:
        pass


def test_bfloat16_is_kept_as_float32_and_says_so():
    model = TinySdpa().to(torch.bfloat16)
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), [(KEEP[:, None, None, :], False)] * 3)
    run = cap.to_run()
    assert run.calls[0].queries.dtype == "float32" and run.calls[0].dtype == "bfloat16"
    assert run.calls[0].fidelity < 1e-2  # the model rounds to bfloat16; attnviz computes in float32
