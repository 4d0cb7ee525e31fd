"""Eager attention is captured (issue 23): every attention layer of BERT, Llama, Gemma 2 (with
soft-capping), BLOOM (ALiBi), GPT-J, GPT-Neo and DeBERTa-v2 under attn_implementation="eager" is
a recorded call whose weights equal the model's output_attentions to 1e-5 on real query rows;
the calls made through transformers' attention interface keep Q, K, V, the mask and the score
terms and are recomputed to 1e-5; the others (attention code of the model's own) keep their
weights, say so, and the mask the model built. GPT-J is of the second kind up to transformers 5.23
and of the first from 5.24 (``through_the_interface``). Before: 0 calls under eager.

Small random configs, built here; nothing is downloaded."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run
from attnviz.io import load_capture

ATOL = 1e-5

#: Two sequences of 7 tokens, the second left padded by 2 (a causal model's usual batch).
IDS = torch.tensor([[5, 17, 33, 8, 21, 40, 9], [0, 0, 12, 7, 30, 44, 3]])
MASK = torch.tensor([[1] * 7, [0, 0] + [1] * 5])
TOKENS = [[f"w{i}" if k else "<pad>" for i, k in enumerate(row)] for row in MASK.tolist()]


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def build(transformers: Any, family: str, implementation: str = "eager") -> Any:
    t = transformers
    small = {"vocab_size": 60}
    configs = {
        "bert": lambda: t.BertConfig(
            **small, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32
        ),
        "llama": lambda: t.LlamaConfig(
            **small,
            hidden_size=32,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        ),
        "gemma2": lambda: t.Gemma2Config(
            **small,
            hidden_size=32,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            attn_logit_softcapping=2.0,
            sliding_window=4,
        ),
        "bloom": lambda: t.BloomConfig(**small, hidden_size=32, n_layer=2, n_head=4),
        "gptj": lambda: t.GPTJConfig(
            **small, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=16, bos_token_id=0, eos_token_id=0
        ),
        "gpt_neo": lambda: t.GPTNeoConfig(
            **small,
            hidden_size=32,
            num_layers=2,
            num_heads=4,
            attention_types=[[["global", "local"], 1]],
            window_size=4,
            max_position_embeddings=16,
            bos_token_id=0,
            eos_token_id=0,
        ),
        "deberta_v2": lambda: t.DebertaV2Config(
            **small,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=32,
            relative_attention=True,
            pos_att_type=["p2c", "c2p"],
            max_position_embeddings=16,
        ),
    }
    config = configs[family]()
    config._attn_implementation = implementation
    torch.manual_seed(0)
    return t.AutoModel.from_config(config).eval()


#: Families whose attention goes through transformers' interface (Q, K, V recorded) and those
#: with attention code of their own (weights recorded at their softmax).
INTERFACE = ["bert", "llama", "gemma2"]
OWN_CODE = ["bloom", "gptj", "gpt_neo", "deberta_v2"]


def through_the_interface(transformers: Any, family: str) -> bool:
    """Whether ``family``'s eager attention is an interface call (Q, K, V recorded) on the
    installed transformers: GPT-J had attention code of its own up to 5.23 and moved to the
    attention interface in 5.24, so its calls are checked as the version makes them."""
    from packaging.version import Version

    if family == "gptj":
        return Version(transformers.__version__).release >= (5, 24)
    return family in INTERFACE


@pytest.mark.parametrize("family", INTERFACE + OWN_CODE)
def test_every_eager_layer_is_a_call_whose_weights_are_the_models(transformers, family):
    model = build(transformers, family)
    with torch.no_grad():
        reference = model(input_ids=IDS, attention_mask=MASK, output_attentions=True)
        plain = reference.last_hidden_state
        with attnviz.capture(model, tokens=TOKENS) as cap:
            out = model(input_ids=IDS, attention_mask=MASK, output_attentions=True)
    assert torch.equal(out.last_hidden_state, plain)  # the capture changes nothing
    assert len(cap.calls) == len(reference.attentions) == 2, [c.name for c in cap.calls]
    assert not cap.warnings
    real = MASK.bool()[:, None, :, None]  # real query rows of each batch element
    for call, theirs in zip(cap.calls, reference.attentions):
        ours = call.weights()
        assert ours.shape == theirs.shape
        gap = (ours.double() - theirs.double()).abs().masked_fill(~real, 0).max()
        assert float(gap) <= ATOL, (call.name, float(gap))
        assert call.path.weights_requested is True
        if through_the_interface(transformers, family):
            assert call.kind == "attention_interface" and call.path.implementation == "eager"
            assert call.fidelity is not None and call.fidelity <= ATOL, (call.name, call.fidelity)
            assert call.attn_mask is not None  # the mask the model built, as eager adds it
        else:
            assert call.weights_only and call.path.implementation == "module" and "weights only" in call.note
            assert call.path.weights_only and call.fidelity is None
    run = cap.to_run()
    assert all(c.query_tokens is not None and c.query_tokens.shape == (2, 7) for c in run.calls)
    # No false alarm from the doctor on a correct model (left padding's empty rows are benign).
    errors = [f for f in diagnose_run(run) if f.severity == "error"]
    if family == "gpt_neo":
        # GPT-Neo given no position_ids counts its learned positions over the left pads: the
        # positions its embedding was called with (recorded at capture) say so, rightly.
        assert [(f.kind, f.batch) for f in errors] == [("positions", (1,))], errors
        errors = []
    assert errors == []


def test_gemma2_soft_capping_is_a_score_term_of_the_call_and_of_the_file(transformers, tmp_path):
    model = build(transformers, "gemma2")
    with torch.no_grad():
        for layer in model.layers:  # scores that reach the cap (a small random model's are tiny)
            layer.self_attn.q_proj.weight *= 60
            layer.self_attn.k_proj.weight *= 60
    with torch.no_grad(), attnviz.capture(model, tokens=TOKENS) as cap:
        model(input_ids=IDS, attention_mask=MASK)
    call = cap.calls[0]
    assert [(t.kind, t.cap) for t in call.terms] == [("softcap", 2.0)]
    assert call.fidelity <= ATOL
    # The cap matters here: without it the weights would be others.
    capped = call.weights()
    terms = list(call.terms)
    call.terms.clear()
    assert float((call.weights() - capped).abs().max()) > 1e-2
    call.terms.extend(terms)
    run = cap.to_run()
    cap.save(tmp_path / "gemma2.attnviz-capture")
    back = load_capture(tmp_path / "gemma2.attnviz-capture")
    assert [(t.kind, t.cap) for t in back.calls[1].terms] == [("softcap", 2.0)]
    assert back.calls[1].path.implementation == "eager"
    from attnviz.capture import recompute_call

    weights, output = recompute_call(back.calls[1])
    np.testing.assert_allclose(output.numpy(), run.calls[1].output, atol=ATOL, rtol=0)


def test_the_sdpa_path_of_the_same_models_is_recorded_with_its_path(transformers):
    for family in ("bert", "llama"):
        model = build(transformers, family, "sdpa")
        with torch.no_grad(), attnviz.capture(model) as cap:
            model(input_ids=IDS, attention_mask=MASK)
        assert [c.path.implementation for c in cap.calls] == ["sdpa", "sdpa"]
        assert all("sdpa_attention_forward" in c.path.function for c in cap.calls)
        assert all(c.fidelity <= ATOL for c in cap.calls)


def test_a_boolean_mask_an_eager_function_adds_is_recorded_as_added(transformers):
    """A 4-D boolean mask passed through to an eager function (as Grounding DINO gives its BERT
    text backbone) is added to the scores as 0 and 1, masking nothing: the call records what was
    added (fidelity exact, where it was 0.2 with the mask read as keep/drop) and the doctor names
    the bug."""
    model = build(transformers, "bert")
    ids = torch.tensor([[5, 17, 33, 8, 21], [12, 7, 30, 0, 0]])
    keep = torch.tensor([[1] * 5, [1, 1, 1, 0, 0]]).bool()[:, None, None, :].expand(2, 1, 5, 5)
    tokens = [["a", "b", "c", "d", "e"], ["a", "b", "c", "[PAD]", "[PAD]"]]
    with torch.no_grad(), attnviz.capture(model, tokens=tokens) as cap:
        reference = model(input_ids=ids, attention_mask=keep, output_attentions=True)
    assert len(cap.calls) == 2
    for call, theirs in zip(cap.calls, reference.attentions):
        assert call.attn_mask is not None and call.attn_mask.dtype == torch.float32
        assert call.fidelity is not None and call.fidelity <= ATOL
        assert "0 and 1" in call.note
        torch.testing.assert_close(call.weights(), theirs, atol=ATOL, rtol=0)
    errors = [f for f in diagnose_run(cap.to_run()) if f.severity == "error"]
    assert len(errors) == 2 and all("masks nothing" in f.message for f in errors)
