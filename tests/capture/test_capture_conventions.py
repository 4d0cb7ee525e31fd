"""Calls as the model means them (issue 35): each convention checked against the model's own
reported weights (transformers' ``output_attentions``), on tiny random configs built here.

Tolerances: float32 computations of the same weights by different kernels (our engine against
the model's matmul and softmax) agree to a few ulps of 1; 1e-5 leaves room for reductions
ordered differently and is far below the gaps the issue reports (0.52 for Granite's sinks)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import attnviz

transformers = pytest.importorskip("transformers")

TOL = 1e-5


def _captured(model: torch.nn.Module, **inputs: object) -> tuple[attnviz.Capture, object]:
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(**inputs, output_attentions=True)
    return cap, out


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_learned_queries_of_batch_one_broadcast_against_the_keys_batch(implementation: str) -> None:
    # A Q-Former's learned queries (batch 1) attend to every batch element's keys (granite_speech):
    # the call is the kernel's broadcast computation, one map per batch element.
    torch.manual_seed(0)
    config = transformers.Blip2QFormerConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        encoder_hidden_size=16,
        cross_attention_frequency=1,
    )
    config._attn_implementation = implementation
    model = transformers.Blip2QFormerModel(config).eval()
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(
            query_embeds=torch.randn(1, 4, 32),
            encoder_hidden_states=torch.randn(3, 5, 16),
            output_attentions=implementation == "eager",
        )
    cross = [c for c in cap.calls if "crossattention" in c.name]
    assert len(cross) == 1
    call = cross[0]
    assert call.weights().shape == (3, 2, 4, 5)
    assert "broadcast against batch 3" in call.note
    assert call.fidelity is not None and call.fidelity < TOL
    if implementation == "eager":
        assert torch.allclose(call.weights(), out.cross_attentions[0], atol=TOL)
    run = cap.to_run()
    assert run.calls[1].shape == (3, 2, 4, 5)


def _longformer() -> torch.nn.Module:
    """A one-layer Longformer of window 4 (w = 2 on each side), random weights."""
    config = transformers.LongformerConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        attention_window=4,
        vocab_size=50,
        max_position_embeddings=64,
    )
    return transformers.LongformerModel(config).eval()


@pytest.mark.parametrize("global_tokens", [False, True])
def test_longformer_band_is_drawn_as_the_band_of_its_square_map(global_tokens: bool) -> None:
    torch.manual_seed(0)
    model = _longformer()
    ids = torch.randint(3, 50, (2, 8))
    inputs: dict[str, object] = {"input_ids": ids}
    if global_tokens:
        g = torch.zeros(2, 8, dtype=torch.long)
        g[0, 0] = g[1, 5] = 1
        inputs["global_attention_mask"] = g
    cap, out = _captured(model, **inputs)
    assert len(cap.calls) == 1  # the global rows' own softmax is not a call of its own
    call = cap.calls[0]
    dense = call.weights()
    assert dense.shape == (2, 2, 8, 8)
    local = out.attentions[0]  # (B, H, L, G + 2w + 1), the model's own
    n_global = local.shape[-1] - 5
    w = 2
    expected = torch.zeros(2, 2, 8, 8)
    for b, h, i, j in itertools.product(range(2), range(2), range(8), range(2 * w + 1)):
        key = i - w + j
        if 0 <= key < 8:
            expected[b, h, i, key] += local[b, h, i, n_global + j]
    if global_tokens:
        for b, position in ((0, 0), (1, 5)):
            expected[b, :, :, position] += local[b, :, :, 0]  # every query's weight on the global key
            # The global query's own row: the model's second softmax, over every key.
            expected[b, :, position, :] = out.global_attentions[0][b, :, :, 0]
        assert "global key column" in call.note
    assert torch.allclose(dense, expected, atol=TOL)
    assert "banded attention" in call.note
    rows = dense.sum(-1)  # every row a distribution over its band and the global keys
    assert torch.allclose(rows, torch.ones_like(rows), atol=TOL)
    assert cap.to_run().calls[0].shape == (2, 2, 8, 8)


def test_longformer_padded_query_rows_are_zero_as_the_model_makes_them() -> None:
    """Longformer zeroes a padded query's row after its softmax (``is_index_masked``); the band
    read back from the call's map is the model's own band in every row, padded rows too."""
    from attnviz.bench.sweep_check import unmatched_maps

    torch.manual_seed(0)
    model = _longformer()
    ids = torch.randint(3, 50, (2, 7))  # padded to 8 inside the model, reported at 7
    mask = torch.tensor([[1] * 7, [1] * 4 + [0] * 3])
    cap, out = _captured(model, input_ids=ids, attention_mask=mask)
    call = cap.calls[0]
    dense = call.weights()
    assert torch.all(dense[1, :, 4:7] == 0)  # the padded queries' rows, as the model zeroes them
    assert "padded query rows zeroed" in call.note
    assert unmatched_maps(cap.calls, [("attentions[0]", out.attentions[0])]) == []


def test_longformer_masked_query_rows_are_zero_on_their_global_keys_too() -> None:
    """A masked query's row (the upstream tester's random mask puts them mid-sequence) is zeroed by
    the model whole, its global key columns too: they were placed after the zeroing and left a
    third to a half of a row on the global key (the doctor read the rows as no distribution)."""
    torch.manual_seed(0)
    model = _longformer()
    ids = torch.randint(3, 50, (2, 8))
    mask = torch.tensor([[0, 1, 0, 0, 1, 0, 1, 1], [1] * 8])
    g = torch.zeros(2, 8, dtype=torch.long)
    g[:, 6] = 1
    cap, out = _captured(model, input_ids=ids, attention_mask=mask, global_attention_mask=g)
    dense = cap.calls[0].weights()
    masked_rows = [0, 2, 3, 5]
    assert torch.all(dense[0, :, masked_rows] == 0)
    local = out.attentions[0]  # (B, H, L, G + 2w + 1): the model's rows of the masked queries are zero
    assert torch.all(local[0, :, masked_rows] == 0)
    live = dense[0, :, [1, 4]].sum(-1)
    assert torch.allclose(live, torch.ones_like(live), atol=TOL)


def test_granite_sinks_after_the_softmax_keep_the_models_convention() -> None:
    torch.manual_seed(0)
    config = transformers.GraniteSWAConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=37,
        vocab_size=50,
        sliding_window=3,
        max_position_embeddings=64,
        eos_token_id=None,
    )
    config._attn_implementation = "eager"
    model = transformers.GraniteSWAForCausalLM(config).eval()
    with torch.no_grad():
        for module in model.modules():
            if hasattr(module, "sinks"):
                module.sinks.normal_()  # zeros at init: made to matter
    cap, out = _captured(model, input_ids=torch.randint(3, 50, (2, 8)))
    assert len(cap.calls) == 2
    for call, reported in zip(cap.calls, out.attentions, strict=True):
        assert call.sinks_after_softmax
        assert "sinks applied after the softmax" in call.note
        assert torch.allclose(call.weights(), reported, atol=TOL)
        assert call.fidelity is not None and call.fidelity < TOL
        # The sink's share is real: with it in the softmax, rows would sum to less than 1.
        assert float(call._result(("weights",)).weights.sum(-1).max()) < 1 - 1e-3


def test_gpt_oss_sinks_inside_the_softmax_keep_theirs() -> None:
    torch.manual_seed(0)
    config = transformers.GptOssConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        intermediate_size=32,
        num_local_experts=2,
        num_experts_per_tok=1,
        vocab_size=50,
        layer_types=["full_attention"],
    )
    config._attn_implementation = "eager"
    model = transformers.GptOssForCausalLM(config).eval()
    with torch.no_grad():
        for module in model.modules():
            if hasattr(module, "sinks"):
                module.sinks.normal_()
    cap, out = _captured(model, input_ids=torch.randint(3, 50, (1, 6)))
    call = cap.calls[0]
    assert call.sinks is not None and not call.sinks_after_softmax
    assert torch.allclose(call.weights(), out.attentions[0], atol=TOL)


@pytest.mark.parametrize("quant_mode", [True, False])
def test_an_integer_softmax_is_recorded_as_the_weights(quant_mode: bool) -> None:
    torch.manual_seed(0)
    config = transformers.IBertConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        vocab_size=50,
        quant_mode=quant_mode,
    )
    model = transformers.IBertModel(config).eval()
    cap, out = _captured(model, input_ids=torch.randint(3, 50, (2, 7)))
    assert [c.name for c in cap.calls] == ["encoder.layer.0.attention.self", "encoder.layer.1.attention.self"]
    for call, reported in zip(cap.calls, out.attentions, strict=True):
        assert call.weights_only and "IntSoftmax" in call.note
        # The very tensor the model returned, copied: no kernel between them.
        assert torch.equal(call.weights(), reported)


class _PaddedEncoder(torch.nn.Module):
    """Padded query rows NaN, as NeMo's ASR encoders leave them."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 24)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.proj(x).view(b, n, 3, 2, 4).permute(2, 0, 3, 1, 4)
        pad = torch.arange(n)[None, :] >= lengths[:, None]
        q = q.masked_fill(pad[:, None, :, None], float("nan"))
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=~pad[:, None, None, :])


def test_nan_query_rows_are_shown_and_marked_never_refused(tmp_path) -> None:
    from attnviz.cli.render import render_main
    from attnviz.state.document import State

    torch.manual_seed(0)
    model = _PaddedEncoder().eval()
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(torch.randn(2, 6, 8), torch.tensor([6, 4]))
    path = tmp_path / "nan.attnviz-capture"
    cap.save(path)
    state = State.from_run(attnviz.io.load_capture(path))
    assert state.settings.allow_nonfinite
    out = tmp_path / "weights.npy"
    assert render_main(["--load", str(path), "--out", str(out), "--batch", "1"]) == 0
    weights = np.load(out)
    assert np.isnan(weights[..., 4:, :]).all() and np.isfinite(weights[..., :4, :]).all()
    assert render_main(["--load", str(path), "--out", str(tmp_path / "w.png"), "--batch", "1"]) == 0


def test_finite_runs_keep_the_model_settings() -> None:
    from attnviz.state.document import MODEL_SETTINGS, State

    torch.manual_seed(0)
    model = _PaddedEncoder().eval()
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(torch.randn(2, 6, 8), torch.tensor([6, 6]))
    assert State.from_run(cap.to_run()).settings == MODEL_SETTINGS


def test_wavlm_gated_position_bias_through_the_functional_mha_is_reproduced() -> None:
    # WavLM calls F.multi_head_attention_forward itself, its gated relative position bias as
    # attn_mask; the weights it reports are the heads' average (average_attn_weights=True) in
    # every head: that was the "1e-2 not reproduced", now a call with its heads and a note.
    torch.manual_seed(0)
    config = transformers.WavLMConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        num_buckets=16,
        max_bucket_distance=20,
    )
    model = transformers.WavLMModel(config).eval()
    mask = torch.ones(2, 400, dtype=torch.long)
    mask[1, 300:] = 0
    cap, out = _captured(model, input_values=torch.randn(2, 400), attention_mask=mask)
    assert [c.kind for c in cap.calls] == ["multihead_attention"] * 2
    for call, reported in zip(cap.calls, out.attentions, strict=True):
        assert not call.weights_only
        assert call.path.function == "torch.nn.functional.multi_head_attention_forward"
        assert call.fidelity is not None and call.fidelity < TOL
        assert "average" in call.note
        weights = call.weights()
        assert torch.allclose(weights.mean(1, keepdim=True).expand_as(reported), reported, atol=TOL)
        assert not torch.allclose(weights[:, 0], weights[:, 1], atol=1e-3)  # the heads differ


def test_nn_multihead_attention_is_recorded_once_through_its_functional_call() -> None:
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad(), attnviz.capture(mha) as cap:
        mha(x, x, x, need_weights=True)
    assert [c.path.function for c in cap.calls] == ["torch.nn.MultiheadAttention.forward"]


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_t5gemma2_merged_self_and_cross_attention_says_its_two_key_blocks(implementation: str) -> None:
    torch.manual_seed(0)
    text = dict(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=64,
        query_pre_attn_scalar=16,
        sliding_window=8,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
    )
    vision = dict(
        hidden_size=16, intermediate_size=20, num_hidden_layers=1, num_attention_heads=2, image_size=16, patch_size=8
    )
    config = transformers.T5Gemma2Config(
        encoder=dict(
            text_config=text,
            vision_config=vision,
            mm_tokens_per_image=4,
            boi_token_index=60,
            eoi_token_index=61,
            image_token_index=62,
        ),
        decoder=text,
        image_token_index=62,
        eoi_token_index=61,
    )
    for sub in (config, config.encoder, config.decoder, config.encoder.text_config):
        sub._attn_implementation = implementation
    model = transformers.T5Gemma2Model(config).eval()
    ids, decoder_ids = torch.randint(3, 50, (2, 7)), torch.randint(3, 50, (2, 5))
    decoder_tokens, encoder_tokens = [f"d{i}" for i in range(5)], [f"e{i}" for i in range(7)]
    with torch.no_grad(), attnviz.capture(model, tokens=decoder_tokens, encoder_tokens=encoder_tokens) as cap:
        out = model(input_ids=ids, decoder_input_ids=decoder_ids, output_attentions=implementation == "eager")
    merged = next(c for c in cap.calls if c.name.startswith("decoder."))
    assert merged.self_keys == 5 and merged.shape == (2, 2, 5, 12)
    assert "keys 0-4 are the decoder's own, the next 7 the encoder's" in merged.note
    assert merged.fidelity is not None and merged.fidelity < TOL
    if implementation == "eager":
        weights = merged.weights()  # the model's two maps are the two column blocks of one softmax
        assert torch.allclose(weights[..., :5], out.decoder_attentions[0], atol=TOL)
        assert torch.allclose(weights[..., 5:], out.cross_attentions[0], atol=TOL)
    run = cap.to_run()
    call = next(c for c in run.calls if c.name == merged.name)
    assert list(call.key_tokens[0]) == decoder_tokens + encoder_tokens
    assert list(call.query_tokens[0]) == decoder_tokens
