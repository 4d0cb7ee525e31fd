"""Other tools' recordings as model runs: a TransformerLens ActivationCache (a plain dict of
tensors shaped exactly as TransformerLens names and shapes them; TransformerLens itself is not
needed) and Hugging Face output_attentions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run, from_output_attentions, from_transformer_lens
from attnviz.state.run import ModelRunError

B, L, H, D = 3, 6, 4, 8
LEFT = torch.tensor([[1] * 6, [0] * 2 + [1] * 4, [0] * 4 + [1] * 2])  # left padded, as TransformerLens pads


def tl_cache(layers: int = 2, with_z: bool = True, rotary: bool = False) -> dict[str, torch.Tensor]:
    """What TransformerLens's run_with_cache keeps for a causal model: hook_q/k/v and hook_z
    (batch, pos, head_index, d_head), hook_pattern (batch, head_index, query_pos, key_pos); masked
    scores filled with -inf, a padding query with no key left set to 0 (as TransformerLens 3 and 4
    do, never NaN), scaled by 1/sqrt(d_head)."""
    g = torch.Generator().manual_seed(0)
    cache: dict[str, torch.Tensor] = {"hook_embed": torch.randn(B, L, H * D, generator=g)}
    allowed = torch.ones(L, L, dtype=torch.bool).tril() & LEFT.bool()[:, None, None, :]
    for i in range(layers):
        q, k, v = (torch.randn(B, L, H, D, generator=g) for _ in range(3))
        used_q, used_k = (q * 1.5, k * 0.5) if rotary else (q, k)  # stand-ins for rotated q and k
        scores = torch.einsum("bqhd,bkhd->bhqk", used_q, used_k) / math.sqrt(D)
        pattern = torch.softmax(scores.masked_fill(~allowed, -torch.inf), -1)
        pattern = torch.where(torch.isnan(pattern), 0.0, pattern)  # TransformerLens zeroes empty rows
        z = torch.einsum("bhqk,bkhd->bqhd", pattern, v)
        cache.update(
            {
                f"blocks.{i}.attn.hook_q": q,
                f"blocks.{i}.attn.hook_k": k,
                f"blocks.{i}.attn.hook_v": v,
                f"blocks.{i}.attn.hook_pattern": pattern,
                f"blocks.{i}.hook_resid_pre": torch.randn(B, L, H * D),
            }
        )
        if rotary:
            cache[f"blocks.{i}.attn.hook_rot_q"], cache[f"blocks.{i}.attn.hook_rot_k"] = used_q, used_k
        if with_z:
            cache[f"blocks.{i}.attn.hook_z"] = z
    return cache


TOKENS = [[("<pad>" if not keep else f"w{j}") for j, keep in enumerate(row)] for row in LEFT.tolist()]


@pytest.mark.parametrize("rotary", [False, True])
def test_a_transformer_lens_cache_is_reproduced(rotary):
    run = from_transformer_lens(tl_cache(rotary=rotary), tokens=TOKENS, attention_mask=LEFT)
    assert run.source == "transformer_lens" and [c.name for c in run.calls] == ["blocks.0.attn", "blocks.1.attn"]
    call = run.calls[0]
    assert call.queries.shape == (B, H, L, D) and call.output.shape == (B, H, L, D)
    assert call.masks.is_causal and call.masks.attention_mask.shape == (B, L)
    # The padding queries with no key left are 0 in both (never NaN): the fidelity is finite.
    assert all(c.fidelity <= 1e-5 for c in run.calls), [c.fidelity for c in run.calls]
    assert not any(c.weights_only for c in run.calls)
    assert run.query_tokens[2, 0] == "<pad>"
    # Before: NaN rows (an error the doctor showed on a correct model); TransformerLens makes them 0.
    assert [f for f in diagnose_run(run) if f.severity == "error"] == []


def test_wrong_assumptions_show_in_the_fidelity():
    run = from_transformer_lens(tl_cache(), attention_mask=LEFT, causal=False)
    # Not exact: the layers are hook_pattern, the model's own weights, and the note says why.
    assert all(c.weights_only and "differs by" in c.note for c in run.calls), [c.note for c in run.calls]
    np.testing.assert_array_equal(run.calls[0].weights, tl_cache()["blocks.0.attn.hook_pattern"].numpy())
    # Without hook_pattern there is nothing exact to show: the recomputation stays, its fidelity says it.
    cache = {k: v for k, v in tl_cache().items() if not k.endswith("hook_pattern")}
    run = from_transformer_lens(cache, attention_mask=LEFT, causal=False)
    assert all(c.fidelity > 1e-2 for c in run.calls)


def test_without_hook_z_the_pattern_is_compared_and_a_pattern_alone_is_weights_only():
    run = from_transformer_lens(tl_cache(with_z=False), attention_mask=LEFT)
    assert run.calls[0].output is None and run.calls[0].fidelity <= 1e-6 and "hook_pattern" in run.calls[0].note
    cache = {k: v for k, v in tl_cache().items() if k.endswith("hook_pattern")}
    run = from_transformer_lens(cache)
    assert not run.editable and run.calls[0].weights.shape == (B, H, L, L)
    with pytest.raises(ModelRunError, match="no TransformerLens attention hooks"):
        from_transformer_lens({"hook_embed": torch.zeros(1)})


def test_hugging_face_output_attentions_are_weights_only():
    transformers = pytest.importorskip("transformers", reason="transformers is a test dependency")
    config = transformers.BertConfig(
        vocab_size=60,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=40,
        max_position_embeddings=16,
        attn_implementation="eager",
    )
    torch.manual_seed(2)
    model = transformers.BertModel(config).eval()
    keep = torch.tensor([[1] * 7, [1] * 5 + [0] * 2, [1] * 3 + [0] * 4])
    tokens = [["[PAD]" if not k else f"w{j}" for j, k in enumerate(row)] for row in keep.tolist()]
    with torch.no_grad():
        out = model(input_ids=torch.randint(1, 60, (3, 7)), attention_mask=keep, output_attentions=True)
    run = from_output_attentions(out.attentions, tokens=tokens)
    assert run.source == "output_attentions" and [c.name for c in run.calls] == ["layer 0", "layer 1"]
    assert all(c.weights_only and "nothing can be recomputed" in c.note for c in run.calls)
    assert diagnose_run(run) == []
    named = attnviz.capture.from_output_attentions(out.attentions, names=["a", "b"])
    assert [c.name for c in named.calls] == ["a", "b"]
    with pytest.raises(ModelRunError, match="output_attentions=True"):
        from_output_attentions((None, None))
    with pytest.raises(ModelRunError, match="outputs.attentions"):
        from_output_attentions(out.attentions[0])
