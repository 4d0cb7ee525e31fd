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
            pytest.skip(f"TransformerLens {VERSION}'s native bridge has no {variant} models")
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
