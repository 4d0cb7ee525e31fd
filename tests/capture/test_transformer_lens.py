"""from_transformer_lens against TransformerLens itself (3.x HookedTransformer, 4.x TransformerBridge):
each variant's hook_pattern reproduced to 1e-6, padded batches included, with a finite, small
fidelity where the recomputation is exact. Skipped where TransformerLens is not installed (the CI's
second environment has 4.3.0; the pinned one 3.9.0 from a --target directory)."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import numpy as np
import pytest
import torch

from attnviz.capture import from_transformer_lens

tl = pytest.importorskip("transformer_lens", reason="TransformerLens is not installed (pip install transformer-lens)")

BASE = {"n_layers": 2, "d_model": 64, "n_heads": 4, "d_head": 16, "n_ctx": 32, "d_vocab": 100, "act_fn": "gelu"}
#: Every variant the issue names; each TransformerLens major version builds those it has.
VARIANTS: dict[str, dict[str, Any]] = {
    "causal": {},
    "bidirectional": {"attention_dir": "bidirectional"},
    "rotary": {"positional_embedding_type": "rotary", "rotary_dim": 16},
    "gqa": {"n_key_value_heads": 2},
    "alibi": {"positional_embedding_type": "alibi"},
    "soft_capped": {"attn_scores_soft_cap": 5.0},
    "local_window": {"attn_types": ["local", "global"], "window_size": 3},
    "sinks": {"use_attention_sinks": True},
}
#: TransformerLens 4's native bridge has no ALiBi and no sinks (it refuses them), and ignores
#: attn_types (its attention is global): those are TransformerLens 3 models only.
NOT_IN_4 = {"alibi", "local_window", "sinks"}
VERSION = importlib.metadata.version("transformer-lens")
MAJOR = int(VERSION.split(".")[0])
TOKENS = torch.randint(1, 100, (3, 7), generator=torch.Generator().manual_seed(0))
LEFT = torch.tensor([[1] * 7, [0, 0] + [1] * 5, [0] * 4 + [1] * 3])


def build(variant: str) -> Any:
    torch.manual_seed(0)
    if MAJOR >= 4:
        if variant in NOT_IN_4:
            pytest.skip(
                f"TransformerLens {VERSION}'s native bridge has no {variant} models "
                "(test_a_bridge_over_hugging_face_attention_reproduces_hook_pattern covers them on 4.x)"
            )
        from transformer_lens.config import TransformerBridgeConfig
        from transformer_lens.model_bridge.sources.native import boot

        return boot(TransformerBridgeConfig(**BASE, **VARIANTS[variant]))
    model = tl.HookedTransformer(tl.HookedTransformerConfig(**BASE, **VARIANTS[variant]))
    if variant == "sinks":  # zero sinks are a no-op: give them values
        for block in model.blocks:
            block.attn.sinks.data = torch.randn(BASE["n_heads"])
    return model.eval()


@pytest.mark.parametrize("padded", [False, True], ids=["full", "left_padded"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_reproduces_hook_pattern(variant: str, padded: bool) -> None:
    model = build(variant)
    mask = LEFT if padded else None
    with torch.no_grad():
        _, cache = model.run_with_cache(TOKENS, attention_mask=mask) if padded else model.run_with_cache(TOKENS)
    run = from_transformer_lens(cache, attention_mask=mask)  # the cache keeps its model
    assert [c.name for c in run.calls] == ["blocks.0.attn", "blocks.1.attn"]
    for i, call in enumerate(run.calls):
        pattern = cache[f"blocks.{i}.attn.hook_pattern"].double().numpy()
        if call.weights_only:
            weights = call.weights
        else:
            from attnviz.compute.engine_args import call_score_terms
            from attnviz.engine import attend

            q, k, v = (torch.from_numpy(a) for a in (call.queries, call.keys, call.values))
            weights = (
                attend(
                    q,
                    k,
                    v,
                    mask_mode="strict",
                    scale=call.scale,
                    enable_gqa=q.shape[1] != k.shape[1],
                    keep=("weights",),
                    allow_nonfinite=True,
                    score_terms=call_score_terms(call) or None,
                    **call.masks.as_kwargs(),
                )
                .weights.double()
                .numpy()
            )
            # Where it recomputes, the fidelity is finite and small (float32 model: 1e-5).
            assert call.fidelity is not None and np.isfinite(call.fidelity) and call.fidelity <= 1e-5, call.note
        assert np.isfinite(weights).all()
        # float32 softmax of the same scores: 1e-6 (weights are in [0, 1]).
        np.testing.assert_allclose(weights, pattern, atol=1e-6, rtol=0, err_msg=f"{variant} {call.name}: {call.note}")
    # Every variant the installed TransformerLens builds is recomputed, none falls back.
    assert not any(c.weights_only for c in run.calls), [c.note for c in run.calls]


@pytest.mark.parametrize("variant", ["causal", "rotary", "gqa"])
def test_a_model_is_captured_directly_with_queries_keys_values_and_its_causal_mask(variant: str) -> None:
    from attnviz.capture import capture_transformer_lens, diagnose_run

    model = build(variant)
    tokens = [[f"w{j}" if keep else "<pad>" for j, keep in enumerate(row)] for row in LEFT.tolist()]
    run = capture_transformer_lens(model, TOKENS, attention_mask=LEFT, tokens=tokens)
    with torch.no_grad():
        _, cache = model.run_with_cache(TOKENS, attention_mask=LEFT)
    assert len(run.calls) == 2 and run.editable
    for i, call in enumerate(run.calls):
        assert call.queries.shape == (3, 4, 7, 16) and call.masks.is_causal
        assert call.keys.shape[1] == (2 if variant == "gqa" else 4)
        np.testing.assert_array_equal(call.masks.attention_mask, LEFT.numpy())
        assert call.fidelity is not None and call.fidelity <= 1e-5, call.note
        np.testing.assert_allclose(call.output, cache[f"blocks.{i}.attn.hook_z"].transpose(1, 2).numpy(), atol=0)
    assert run.query_tokens[2, 0] == "<pad>"
    assert [f for f in diagnose_run(run) if f.severity == "error"] == []


def test_something_that_is_not_a_transformer_lens_model_is_refused_in_one_line() -> None:
    from attnviz.capture import capture_transformer_lens
    from attnviz.state.run import ModelRunError

    with pytest.raises(ModelRunError, match="Linear is not a TransformerLens model"):
        capture_transformer_lens(torch.nn.Linear(2, 2), TOKENS)


def hf_bridge(family: str, tmp_path: Any) -> Any:
    """A TransformerLens 4 bridge over a small random Hugging Face model (nothing downloaded:
    the config and a word-level tokenizer are written to ``tmp_path``)."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformer_lens.model_bridge import TransformerBridge

    words = Tokenizer(models.WordLevel({f"w{i}": i for i in range(100)}, unk_token="w0"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(
        tokenizer_object=words, pad_token="w0", bos_token="w1", eos_token="w2"
    ).save_pretrained(tmp_path)
    small = {"vocab_size": 100, "hidden_size": 32, "intermediate_size": 32, "num_hidden_layers": 2}
    heads = {"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8}
    torch.manual_seed(0)
    if family == "alibi":
        model = transformers.BloomForCausalLM(
            transformers.BloomConfig(vocab_size=100, hidden_size=32, n_layer=2, n_head=4)
        )
    elif family == "soft_capped_local_window":
        config = transformers.Gemma2Config(**small, **heads, attn_logit_softcapping=2.0, sliding_window=3)
        model = transformers.Gemma2ForCausalLM(config)
    else:  # sinks, with a local window on every other layer
        config = transformers.GptOssConfig(
            **small, **heads, num_local_experts=2, num_experts_per_tok=1, sliding_window=3
        )
        model = transformers.GptOssForCausalLM(config)
        for layer in model.model.layers:  # zero sinks are a no-op: give them values
            layer.self_attn.sinks.data = torch.randn(4)
    model.eval().config.architectures = [type(model).__name__]
    model.config.save_pretrained(tmp_path)
    tokenizer = transformers.PreTrainedTokenizerFast.from_pretrained(tmp_path)
    return TransformerBridge.boot_transformers(str(tmp_path), hf_model=model, tokenizer=tokenizer)


@pytest.mark.skipif(MAJOR < 4, reason="TransformerBridge.boot_transformers is TransformerLens 4's")
@pytest.mark.parametrize("family", ["alibi", "soft_capped_local_window", "sinks"])
def test_a_bridge_over_hugging_face_attention_reproduces_hook_pattern(family: str, tmp_path: Any) -> None:
    bridge = hf_bridge(family, tmp_path)
    with torch.no_grad():
        _, cache = bridge.run_with_cache(TOKENS, attention_mask=LEFT)
    run = from_transformer_lens(cache, attention_mask=LEFT)
    for i, call in enumerate(run.calls):
        pattern = cache[f"blocks.{i}.attn.hook_pattern"].numpy()
        if family == "alibi":
            # Bloom's ALiBi is Hugging Face's code: not recomputed, the model's weights as they are.
            assert call.weights_only and "ALiBi computed by" in call.note, call.note
            np.testing.assert_array_equal(call.weights, pattern)
        else:
            # Soft-capping, windows, sinks, GQA, rotary (hook_rot_q/k) and padding: recomputed.
            assert not call.weights_only and call.fidelity is not None and call.fidelity <= 1e-6, call.note
    if family != "alibi":
        assert "a local window of 3" in run.calls[0].note
        assert ("soft-capping" if family != "sinks" else "sinks") in run.calls[0].note
