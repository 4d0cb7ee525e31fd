"""attnviz.check_invariance: each planted bug found, correct models silent (tiny random configs)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

import attnviz
from attnviz.capture import format_finding
from attnviz.compare.invariance import CHECKS

from .models import batch, bert, gpt2, llama, t5, transformers


def positions(inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    return (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)


def lines(findings: Any) -> str:
    return "\n".join(format_finding(f) for f in findings)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize(
    "build",
    [bert, gpt2, llama],
    ids=["bert", "gpt2", "llama-gqa"],
)
def test_correct_models_are_silent(build, side):
    inputs = batch(side=side)
    inputs["position_ids"] = positions(inputs)  # what generate() passes with left padding
    findings = attnviz.check_invariance(build(), inputs, CHECKS)
    assert list(findings) == [], lines(findings)


def test_t5_with_cross_attention_is_silent():
    inputs = batch()
    inputs["decoder_input_ids"] = torch.randint(1, 50, (3, 5), generator=torch.Generator().manual_seed(1))
    model = t5()
    findings = attnviz.check_invariance(model, inputs, CHECKS)
    assert list(findings) == [], lines(findings)
    assert not findings.notes  # every check applied


def test_left_padding_without_adjusted_positions_is_found():
    inputs = batch()  # no position_ids: GPT-2 counts positions from the first column, pads included
    (finding,) = attnviz.check_invariance(gpt2(), inputs, ("padding",))
    assert finding.kind == "padding" and finding.severity == "error"
    assert finding.call == 0 and finding.name == "transformer.h.0.attn"
    assert "positions were not adjusted" in finding.message and "position_ids" in finding.message
    # Every sequence moved: the real rows of each batch element are named, in the padded batch.
    assert finding.batch == (0, 1, 2) and finding.rows and min(finding.rows) >= 1


def test_padding_that_is_not_masked_is_found_on_the_right_too():
    model = bert()
    inputs = batch()
    inputs["position_ids"] = positions(inputs)
    original = model.forward

    def forward(**kwargs: Any) -> Any:  # a wrapper that loses the mask
        kwargs.pop("attention_mask", None)
        return original(**kwargs)

    model.forward = forward  # type: ignore[method-assign]
    model.forward.__signature__ = __import__("inspect").signature(original)  # type: ignore[attr-defined]
    # The batch as given is read against its own attention mask: one finding, both halves said.
    (finding,) = attnviz.check_invariance(model, inputs, ("padding",))
    assert finding.kind == "padding" and finding.call == 0 and finding.batch == (1, 2), lines([finding])
    assert "nothing masks the padding" in finding.message and "no real key is hidden" in finding.message
    # A batch without padding shows nothing as given: padded again on either side, it does.
    findings = attnviz.check_invariance(model, batch((6, 6, 6)), ("padding",))
    assert [f.kind for f in findings] == ["padding", "padding"], lines(findings)
    assert all("padding is not masked" in f.message for f in findings)


def top_left_step(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Any,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """A chunked-prefill bug: is_causal=True for any step of several queries, whatever the cache holds."""
    out = F.scaled_dot_product_attention(
        query, key, value, is_causal=query.shape[2] > 1, scale=scaling, enable_gqa=True
    )
    return out.transpose(1, 2).contiguous(), None


def test_a_top_left_causal_mask_in_cached_steps_is_found():
    t = transformers()
    t.AttentionInterface.register("attnviz_top_left", top_left_step)
    model = llama(implementation="attnviz_top_left")
    inputs = batch((6, 6, 6))
    findings = attnviz.check_invariance(model, inputs, ("kv_cache",))
    (finding,) = findings
    assert finding.kind == "kv_cache" and finding.call == 0 and finding.name == "model.layers.0.self_attn"
    assert "top-left" in finding.message and "2 token(s)" in finding.message
    assert finding.rows == (4, 5)  # the several-token step; the one-token step was right
    # Its full forward (no padding) is the correct model's: only the cache shows the bug.
    with torch.no_grad():
        assert torch.allclose(model(**inputs).logits, llama()(**inputs).logits, atol=1e-5)


def test_an_eager_path_without_a_causal_mask_is_found(monkeypatch):
    transformers()
    from transformers.models.llama import modeling_llama

    original = modeling_llama.create_causal_mask

    def no_mask_for_eager(config: Any, *args: Any, **kwargs: Any) -> Any:
        # The bug of record: the path taken when weights are asked for built no causal mask.
        return None if config._attn_implementation == "eager" else original(config, *args, **kwargs)

    monkeypatch.setattr(modeling_llama, "create_causal_mask", no_mask_for_eager)
    model = llama()
    inputs = batch((6, 6, 6))
    (finding,) = attnviz.check_invariance(model, inputs, ("implementations",))
    assert finding.kind == "implementations" and finding.call == 0, lines([finding])
    assert "the eager path lets queries see later keys that sdpa hides" in finding.message
    assert "causal mask is missing" in finding.message
    assert finding.rows == (0, 1, 2, 3, 4)  # the last row sees every key either way
    assert model.config._attn_implementation == "sdpa"  # put back
    assert list(attnviz.check_invariance(model, inputs, ("padding", "kv_cache"))) == []


def overflowing_fill(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Any,
    scaling: float = 1.0,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Eager attention whose mask is built as (1 - keep) * -1e9: -inf in float16."""
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    scores = query @ key.transpose(-1, -2) * scaling
    if attention_mask is not None:
        keep = (attention_mask > torch.finfo(attention_mask.dtype).min / 2).to(scores.dtype)
        bias = (1.0 - keep) * torch.tensor(-1e9, dtype=scores.dtype)
        attention_mask = bias
        scores = scores + bias
    weights = scores.softmax(-1)
    out = weights @ value
    return out.transpose(1, 2).contiguous(), weights


def test_a_float16_fill_that_overflows_is_found():
    t = transformers()
    from transformers import masking_utils

    t.AttentionInterface.register("attnviz_overflow", overflowing_fill)
    masking_utils.AttentionMaskInterface.register("attnviz_overflow", masking_utils.eager_mask)
    model = llama(implementation="attnviz_overflow")
    inputs = batch(side="left")
    inputs["position_ids"] = positions(inputs)
    findings = attnviz.check_invariance(model, inputs, ("dtype",), dtypes=("float16",))
    assert [f.kind for f in findings] == ["dtype"], lines(findings)
    (finding,) = findings
    assert finding.severity == "error" and "float16" in finding.message
    assert "inside the attention code" in finding.message and "finfo(scores.dtype).min" in finding.message
    assert finding.batch and finding.rows
    # float32 is fine: -1e9 is a number there.
    assert list(attnviz.check_invariance(model, inputs, ("padding",))) == []


def test_unknown_checks_and_inputs_are_refused():
    with pytest.raises(ValueError, match="'nope' is not among"):
        attnviz.check_invariance(gpt2(), batch(), ("nope",))
    with pytest.raises(ValueError, match="padding"):
        attnviz.check_invariance(gpt2(), batch(), "padding")
    with pytest.raises(TypeError, match="keyword arguments"):
        attnviz.check_invariance(gpt2(), torch.ones(2, 3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'nonsense' is not one of eager, .*sdpa"):
        attnviz.check_invariance(gpt2(), batch(), ("implementations",), implementations=("sdpa", "nonsense"))
    with pytest.raises(TypeError, match="not NoneType"):
        attnviz.check_invariance(None, batch())  # type: ignore[arg-type]


def test_checks_that_do_not_apply_are_said():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0).eval()

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = layer

        def forward(self, inputs_embeds: torch.Tensor) -> torch.Tensor:
            return self.layer(inputs_embeds)

    findings = attnviz.check_invariance(Wrapped(), {"inputs_embeds": torch.randn(2, 5, 16)}, CHECKS)
    assert list(findings) == []
    assert [n.split(":")[0] for n in findings.notes] == ["padding", "kv_cache", "implementations"]


def test_a_finding_of_the_output_alone_says_where():
    from attnviz.compare.invariance import InvarianceFinding

    finding = InvarianceFinding("kv_cache", "error", -1, "", "differs", (), (0, 2), (3, 4, 5), 3)
    assert format_finding(finding) == "error: the model's output, batch 0, 2, positions 3-5: differs"
    inside = InvarianceFinding("padding", "error", 1, "layer.1", "differs", (0, 1), (1,), (2,), 1)
    assert format_finding(inside) == "error: call 1 (layer.1), heads 0-1, batch 1, rows 2: differs"


def test_other_implementations_are_compared_with_sdpa_too():
    t = transformers()
    t.AttentionInterface.register("attnviz_top_left", top_left_step)
    model = llama()
    inputs = batch((6, 6, 6))
    # A registered implementation that ignores the padding mask (left padding: causal alone lets
    # real queries see the pads before them): found against SDPA, while eager agrees with it.
    findings = attnviz.check_invariance(
        model, batch(side="left"), ("implementations",), implementations=("eager", "sdpa", "attnviz_top_left")
    )
    assert [f.message.split(" path")[0] for f in findings] == ["the attnviz_top_left"], lines(findings)
    assert "padding or a window" in findings[0].message
    assert list(attnviz.check_invariance(model, inputs, ("implementations",))) == []
