"""Heads as the model means them, every call kept, tokens per axis (issue 23).

* a Llama GQA one-token decode step, which transformers runs with its query heads folded into
  the query axis, is recorded (and rendered) as 4 heads x 1 query, equal to the model's weights;
* multi-query keys (B, 1, L, d) passed to SDPA without enable_gqa are broadcast as SDPA does and
  the call's fidelity is computed (before: None);
* a windowed model's calls of another batch (Swin's batch x windows) are all kept and saved;
* an encoder-decoder's cross-attention calls get the decoder's tokens on their queries and the
  encoder's on their keys, and tokens of another length are said at the call, never an error at
  save().
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnviz
from attnviz.capture import diagnose_run
from attnviz.cli.render import render_main
from attnviz.io import load_capture

ATOL = 1e-5


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def llama(transformers: Any, implementation: str) -> Any:
    config = transformers.LlamaConfig(
        vocab_size=60,
        hidden_size=32,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    config._attn_implementation = implementation
    torch.manual_seed(0)
    return transformers.LlamaModel(config).eval()


def test_a_gqa_decode_step_is_four_heads_of_one_query_equal_to_the_models_weights(transformers, tmp_path):
    ids = torch.tensor([[5, 17, 33, 8, 21], [0, 0, 12, 7, 30]])
    mask = torch.tensor([[1] * 5, [0, 0, 1, 1, 1]])  # left padding: a mask, so SDPA gets no enable_gqa
    step = torch.tensor([[9], [11]])
    step_mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.long)], 1)
    sdpa, eager = llama(transformers, "sdpa"), llama(transformers, "eager")
    with torch.no_grad():
        past = sdpa(input_ids=ids, attention_mask=mask, use_cache=True).past_key_values
        with attnviz.capture(sdpa) as cap:
            sdpa(input_ids=step, attention_mask=step_mask, past_key_values=past, use_cache=True)
        past_eager = eager(input_ids=ids, attention_mask=mask, use_cache=True).past_key_values
        theirs = eager(
            input_ids=step, attention_mask=step_mask, past_key_values=past_eager, output_attentions=True
        ).attentions
    assert len(cap.calls) == 2
    for call, weights in zip(cap.calls, theirs):
        # transformers passed SDPA (2, 2 kv heads, 2 folded queries, 8): shown as the model means it.
        assert call.path.packed_gqa and call.queries.shape == (2, 4, 1, 8) and call.keys.shape == (2, 2, 6, 8)
        assert "folded" in call.note
        assert call.fidelity <= ATOL
        torch.testing.assert_close(call.weights(), weights, atol=ATOL, rtol=0)
    cap.save(tmp_path / "step.attnviz-capture")
    run = load_capture(tmp_path / "step.attnviz-capture")
    assert run.calls[1].shape == (2, 4, 1, 6) and run.calls[1].path.packed_gqa
    out = tmp_path / "heads.npy"
    assert (
        render_main(
            [
                "--load",
                str(tmp_path / "step.attnviz-capture"),
                "--layer",
                "1",
                "--heads",
                "all",
                "--batch",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    drawn = np.load(out)
    assert drawn.shape == (4, 1, 6)  # heads x 1 row
    np.testing.assert_allclose(drawn, theirs[1][1].numpy(), atol=ATOL, rtol=0)


def test_multi_query_keys_are_broadcast_across_heads_as_sdpa_does(transformers):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 5, 8, generator=g)
    k, v = torch.randn(2, 1, 5, 8, generator=g), torch.randn(2, 1, 5, 8, generator=g)
    keep = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])[:, None, None, :]
    with attnviz.capture() as cap:
        F.scaled_dot_product_attention(q, k, v, attn_mask=keep)  # no enable_gqa: SDPA broadcasts the one head
    (call,) = cap.calls
    assert call.fidelity is not None and call.fidelity <= ATOL
    assert diagnose_run(cap.to_run()) == []
    # Falcon's multi-query attention, through transformers.
    config = transformers.FalconConfig(
        vocab_size=60,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        multi_query=True,
        new_decoder_architecture=False,
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    falcon = transformers.FalconModel(config).eval()
    with torch.no_grad(), attnviz.capture(falcon) as cap:
        falcon(input_ids=torch.randint(1, 60, (2, 6)), attention_mask=torch.tensor([[1] * 6, [1] * 4 + [0] * 2]))
    assert [c.keys.shape[1] for c in cap.calls] == [1, 1]
    assert all(c.fidelity is not None and c.fidelity <= ATOL for c in cap.calls)


def test_a_windowed_models_calls_of_every_batch_are_kept_and_saved(transformers, tmp_path):
    config = transformers.SwinConfig(
        image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4
    )
    torch.manual_seed(0)
    swin = transformers.SwinModel(config).eval()
    with torch.no_grad(), attnviz.capture(swin) as cap:
        swin(pixel_values=torch.randn(2, 3, 32, 32))
    run = cap.to_run()
    # Stage 1: 2 images x 4 windows; stage 2: 2 images x 1 window. Before: the second was dropped.
    assert [c.shape for c in run.calls] == [(8, 2, 16, 16), (2, 2, 16, 16)] and not cap.warnings
    assert all(c.fidelity <= ATOL for c in run.calls)
    cap.save(tmp_path / "swin.attnviz-capture")
    back = load_capture(tmp_path / "swin.attnviz-capture")
    assert [c.shape for c in back.calls] == [(8, 2, 16, 16), (2, 2, 16, 16)] and back.batch == 8
    assert back.batch_of(1) == 2 and back.head_view(1, 1).batch == 2


def test_cross_attention_calls_carry_decoder_and_encoder_tokens(transformers, tmp_path):
    config = transformers.BartConfig(
        vocab_size=60,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    bart = transformers.BartModel(config).eval()
    enc = torch.randint(3, 60, (2, 7))
    enc_mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2])
    dec = torch.randint(3, 60, (2, 4))
    encoder_tokens = [[f"e{i}" if k else "<pad>" for i, k in enumerate(row)] for row in enc_mask.tolist()]
    decoder_tokens = ["<s>", "d1", "d2", "d3"]
    with torch.no_grad(), attnviz.capture(bart, tokens=decoder_tokens, encoder_tokens=encoder_tokens) as cap:
        bart(input_ids=enc, attention_mask=enc_mask, decoder_input_ids=dec)
    names = [c.name for c in cap.calls]
    assert names == ["encoder.layers.0.self_attn", "decoder.layers.0.self_attn", "decoder.layers.0.encoder_attn"]
    cap.save(tmp_path / "bart.attnviz-capture")  # tokens of other lengths: never a failure at save
    run = load_capture(tmp_path / "bart.attnviz-capture")
    encoder_call, decoder_call, cross = run.calls
    assert encoder_call.query_tokens.tolist() == encoder_call.key_tokens.tolist() == encoder_tokens
    assert decoder_call.query_tokens[1].tolist() == decoder_tokens == decoder_call.key_tokens[0].tolist()
    assert cross.query_tokens[0].tolist() == decoder_tokens and cross.key_tokens.tolist() == encoder_tokens
    view = run.head_view(2, 0)
    assert view.tokens(1) == (decoder_tokens, encoder_tokens[1])
    # The doctor reads the encoder's padding on the cross-attention keys: the model masks it, so nothing.
    assert [f for f in diagnose_run(run) if f.severity == "error"] == []


def test_tokens_that_fit_no_axis_are_said_at_the_call_not_at_save(tmp_path):
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(16, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    decoder = nn.TransformerDecoder(layer, num_layers=1).eval()
    tgt, memory = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    with torch.no_grad(), attnviz.capture(decoder, tokens=["a", "b", "c"], encoder_tokens=["m"] * 4) as cap:
        decoder(tgt, memory)
    run = cap.to_run()
    self_attn, cross = run.calls
    assert cap.calls[1].cross and self_attn.query_tokens[0].tolist() == ["a", "b", "c"]
    assert cross.query_tokens is not None and cross.key_tokens is None  # 4 encoder tokens for 5 keys
    assert "do not fit its 5 keys" in cross.note
    assert any("do not fit every axis" in w for w in cap.warnings)
    cap.save(tmp_path / "decoder.attnviz-capture")
    assert load_capture(tmp_path / "decoder.attnviz-capture").calls[1].key_tokens is None
