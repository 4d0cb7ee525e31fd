"""The mask doctor is silent on masks that are right though not causal (issue 35): Gemma 3's
bidirectional image blocks, PaliGemma's prefix-LM mask, Mistral's and Gemma 2's sliding windows,
Llama 4's chunked attention. Each family is a tiny random config (the sweep's ``shrink``, no
download) run on the sweep's own inputs (image tokens as many as the model's vision features,
the second row right padded by two tokens) under capture; the test first checks that the
recorded call holds the mask's own shape (a key after the query allowed in an image block, a key
beyond the window or the chunk hidden), so a capture that lost the mask cannot pass silently."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import attnviz
from attnviz.bench import capture_sweep, sweep_inputs
from attnviz.capture import diagnose_run, format_finding

WINDOW = 4


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def captured(transformers: Any, family: str, implementation: str, **config_args: Any) -> tuple[Any, Any, Any]:
    """(capture, inputs, config) of one forward on the sweep's inputs, tokens labelled, padding
    named "[PAD]"."""
    config = transformers.CONFIG_MAPPING[family](**config_args)
    capture_sweep.shrink(config)
    torch.manual_seed(0)
    model = capture_sweep._build(config, implementation)
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    ids, mask = built.inputs["input_ids"], built.inputs["attention_mask"]
    tokens = [[f"t{int(t)}" if m else "[PAD]" for t, m in zip(row, keep)] for row, keep in zip(ids, mask)]
    with torch.no_grad(), attnviz.capture(model, tokens=tokens) as cap:
        model(**built.inputs)
    return cap, built.inputs, config


def text_calls(cap: Any, length: int) -> list[Any]:
    """The language model's self-attention calls: queries and keys as long as the text."""
    calls = [c for c in cap.calls if c.shape[2] == length and c.shape[3] == length]
    assert calls, f"no call over the {length} text tokens among {[c.shape for c in cap.calls]}"
    return calls


def silent(cap: Any) -> None:
    findings = diagnose_run(cap.to_run())
    assert not findings, "\n".join(format_finding(f) for f in findings)


def allowed(call: Any) -> torch.Tensor:
    """(L_q, L_k) of the first batch element (no padding) and first head: which keys got weight."""
    return call.weights()[0, 0] > 0


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_gemma3_bidirectional_image_blocks(transformers, implementation):
    cap, inputs, config = captured(transformers, "gemma3", implementation)
    ids = inputs["input_ids"][0]
    image = (ids == config.image_token_id).nonzero().flatten()
    assert len(image) >= 4
    first, last = int(image[0]), int(image[-1])
    for call in text_calls(cap, ids.shape[0]):
        seen = allowed(call)
        assert seen[first, last], "the image block's first token must see its last one"
        assert not seen[first - 1, first], "a text token before the image must not see it"
        assert not seen[last + 1 : last + 3].triu(last + 2).any()
    silent(cap)


def test_paligemma_prefix_lm(transformers):
    cap, inputs, _ = captured(transformers, "paligemma", "eager")
    types = inputs["token_type_ids"][0]
    prefix = int((types == 0).sum())
    assert 0 < prefix < types.shape[0] - 1
    for call in text_calls(cap, types.shape[0]):
        seen = allowed(call)
        assert seen[0, prefix - 1], "the prefix is bidirectional"
        assert not seen[prefix, prefix + 1], "the suffix is causal"
    silent(cap)


@pytest.mark.parametrize(
    ("family", "implementation", "args"),
    [
        ("mistral", "sdpa", {"sliding_window": WINDOW}),
        ("mistral", "eager", {"sliding_window": WINDOW}),
        ("gemma2", "eager", {"sliding_window": WINDOW}),  # Gemma 2 offers no SDPA path
    ],
)
def test_sliding_windows(transformers, family, implementation, args):
    cap, inputs, _ = captured(transformers, family, implementation, **args)
    length = inputs["input_ids"].shape[1]
    windowed = 0
    for call in text_calls(cap, length):
        seen = allowed(call)
        assert not seen.triu(1).any(), "causal"
        windowed += not seen[length - 1, 0]
    assert windowed, "some layer hides the keys beyond its window"
    silent(cap)


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_llama4_chunked_attention(transformers, implementation):
    cap, inputs, _ = captured(transformers, "llama4_text", implementation, attention_chunk_size=WINDOW)
    length = inputs["input_ids"].shape[1]
    chunked = 0
    for call in text_calls(cap, length):
        seen = allowed(call)
        assert not seen.triu(1).any(), "causal"
        # A chunked layer: the first query of the second chunk sees only itself.
        chunked += bool(seen[WINDOW, WINDOW]) and not seen[WINDOW, WINDOW - 1]
    assert chunked, "some layer attends within its chunk only"
    silent(cap)
