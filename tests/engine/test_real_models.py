"""attend() against real architectures' own attention, every layer and head, in every mask form.

Small random models are built in the test (nothing is downloaded): torch's MultiheadAttention and
TransformerEncoder with a key padding mask, and Hugging Face's BertModel (a padded encoder batch)
and GPT2Model (causal with right padding, left padding, and a KV-cache step with fewer queries
than keys). Q, K and V are taken from the models' projections with forward hooks, the models'
own masks with pre-hooks, and the weights and outputs must match to 1e-5 in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnviz.engine import attend

ATOL = 1e-5
MIN = torch.finfo(torch.float32).min


def close(actual: torch.Tensor, expected: torch.Tensor, what: str) -> None:
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0, msg=what)


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(B, L, H * d) -> (B, H, L, d)."""
    b, n, e = x.shape
    return x.reshape(b, n, heads, e // heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, L, d) -> (B, L, H * d)."""
    b, h, n, d = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d)


def padding_forms(attend_01: torch.Tensor, n_q: int) -> dict[str, dict[str, Any]]:
    """The same key padding in every form code builds it, as attend() arguments.

    ``attend_01`` is Hugging Face's (B, L_k) 0/1 mask, 1 = attend.
    """
    keep = attend_01.bool()
    b, n_k = keep.shape
    return {
        "hf attention_mask (B, L) int": dict(attention_mask=attend_01),
        "key_padding_mask (B, L) bool, True = ignore": dict(key_padding_mask=~keep),
        "key_padding_mask (B, L) float -inf": dict(key_padding_mask=torch.zeros(b, n_k).masked_fill(~keep, -torch.inf)),
        "attn_mask (B, 1, 1, L) bool": dict(attn_mask=keep[:, None, None, :]),
        "attn_mask (B, 1, L, L) bool": dict(attn_mask=keep[:, None, None, :].expand(b, 1, n_q, n_k)),
        "attn_mask (B, 1, 1, L) additive finfo.min": dict(
            attn_mask=torch.zeros(b, 1, 1, n_k).masked_fill(~keep[:, None, None, :], MIN)
        ),
    }


# ----------------------------------------------------------------------------- torch.nn


def test_multihead_attention_with_a_key_padding_mask_every_head():
    torch.manual_seed(0)
    b, n, e, heads = 3, 7, 16, 4
    mha = nn.MultiheadAttention(e, heads, batch_first=True).eval()
    x = torch.randn(b, n, e)
    attend_01 = torch.tensor([[1] * 7, [1] * 5 + [0] * 2, [1] * 2 + [0] * 5])
    with torch.no_grad():
        out, weights = mha(x, x, x, key_padding_mask=attend_01 == 0, need_weights=True, average_attn_weights=False)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    q, k, v = (split_heads(F.linear(x, w, bias), heads).detach() for w, bias in ((w_q, b_q), (w_k, b_k), (w_v, b_v)))
    forms = padding_forms(attend_01, n)
    forms["valid_lens (B,)"] = dict(valid_lens=attend_01.sum(-1))
    for name, kwargs in forms.items():
        r = attend(q, k, v, **kwargs)
        close(r.weights, weights, name)
        close(mha.out_proj(merge_heads(r.output)).detach(), out, name)


def test_transformer_encoder_with_a_key_padding_mask_every_layer():
    torch.manual_seed(1)
    b, n, e, heads = 3, 6, 16, 2
    layer = nn.TransformerEncoderLayer(e, heads, dim_feedforward=24, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    attend_01 = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] + [0] * 5])
    seen: list[tuple[torch.Tensor, torch.Tensor]] = []
    hooks = [
        mod.self_attn.register_forward_hook(
            lambda m, args, kwargs, out: seen.append((args[0].detach(), out[0].detach())), with_kwargs=True
        )
        for mod in encoder.layers
    ]
    # With gradients on, the encoder takes its plain path, which calls self_attn (the hooks see it).
    encoder(torch.randn(b, n, e), src_key_padding_mask=attend_01 == 0)
    for h in hooks:
        h.remove()
    assert len(seen) == 2
    for index, (mod, (x, expected)) in enumerate(zip(encoder.layers, seen)):
        mha = mod.self_attn
        q, k, v = (
            split_heads(F.linear(x, w, bias), heads).detach()
            for w, bias in zip(mha.in_proj_weight.chunk(3), mha.in_proj_bias.chunk(3))
        )
        for name, kwargs in padding_forms(attend_01, n).items():
            r = attend(q, k, v, **kwargs)
            close(mha.out_proj(merge_heads(r.output)).detach(), expected, f"layer {index}: {name}")


# ----------------------------------------------------------------------------- Hugging Face


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


class Recorder:
    """Hooks on each layer: the projections' outputs, the mask the attention got, what it returned."""

    def __init__(self) -> None:
        self.calls: dict[str, list[Any]] = {}
        self.handles: list[Any] = []

    def output_of(self, name: str, module: nn.Module, pick: Callable[[Any], Any] = lambda out: out) -> None:
        self.calls[name] = []
        self.handles.append(module.register_forward_hook(lambda m, a, out: self.calls[name].append(pick(out))))

    def input_of(self, name: str, module: nn.Module) -> None:
        self.calls[name] = []
        self.handles.append(
            module.register_forward_pre_hook(
                lambda m, args, kwargs: self.calls[name].append(
                    kwargs.get("attention_mask", args[1] if len(args) > 1 else None)
                    if name.startswith("mask")
                    else args[0]
                ),
                with_kwargs=True,
            )
        )

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def bert(transformers: Any, implementation: str) -> Any:
    config = transformers.BertConfig(
        vocab_size=60,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=40,
        max_position_embeddings=16,
        attn_implementation=implementation,
    )
    torch.manual_seed(2)
    return transformers.BertModel(config).eval()


def gpt2(transformers: Any, implementation: str) -> Any:
    config = transformers.GPT2Config(
        vocab_size=60,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=16,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation=implementation,
    )
    torch.manual_seed(3)
    return transformers.GPT2Model(config).eval()


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_bert_padded_batch_every_layer_and_head(transformers, implementation):
    model = bert(transformers, implementation)
    attend_01 = torch.tensor([[1] * 7, [1] * 5 + [0] * 2, [1] * 3 + [0] * 4])
    ids = torch.randint(1, 60, (3, 7), generator=torch.Generator().manual_seed(4))
    rec = Recorder()
    for i, layer in enumerate(model.encoder.layer):
        attn = layer.attention.self
        for part in ("query", "key", "value"):
            rec.output_of(f"{part}{i}", getattr(attn, part))
        rec.input_of(f"mask{i}", attn)
        rec.output_of(f"out{i}", attn, lambda out: out[0])
    with torch.no_grad():
        result = model(input_ids=ids, attention_mask=attend_01, output_attentions=implementation == "eager")
    rec.remove()
    heads = model.config.num_attention_heads
    for i in range(model.config.num_hidden_layers):
        q, k, v = (split_heads(rec.calls[f"{part}{i}"][0], heads) for part in ("query", "key", "value"))
        own = rec.calls[f"mask{i}"][0]  # what the model built: additive finfo.min (eager) or bool (sdpa)
        assert own.shape == (3, 1, 7, 7) and own.dtype == (torch.float32 if implementation == "eager" else torch.bool)
        forms = {
            "the model's own mask": dict(attn_mask=own),
            **padding_forms(attend_01, 7),
            "valid_lens (B,)": dict(valid_lens=attend_01.sum(-1)),
        }
        for name, kwargs in forms.items():
            for mode in ("d2l", "sdpa"):
                r = attend(q, k, v, mask_mode=mode, **kwargs)
                what = f"{implementation} layer {i}: {name}, {mode}"
                if implementation == "eager":
                    close(r.weights, result.attentions[i], what)
                close(merge_heads(r.output), rec.calls[f"out{i}"][0], what)
                assert not r.diagnostics.findings and not r.diagnostics.empty_rows.any()


def run_gpt2(
    model: Any, ids: torch.Tensor, attend_01: torch.Tensor, eager: bool, past: Any = None
) -> tuple[dict[str, list[Any]], Any]:
    rec = Recorder()
    for i, block in enumerate(model.h):
        rec.output_of(f"qkv{i}", block.attn.c_attn)
        rec.input_of(f"mask{i}", block.attn)
        rec.input_of(f"out{i}", block.attn.c_proj)  # the heads merged, before the output projection
    with torch.no_grad():
        result = model(
            input_ids=ids, attention_mask=attend_01, past_key_values=past, use_cache=True, output_attentions=eager
        )
    rec.remove()
    return rec.calls, result


def check_gpt2_layers(
    model: Any,
    calls: dict[str, list[Any]],
    result: Any,
    forms: dict[str, dict[str, Any]],
    query_padding: torch.Tensor,
    eager: bool,
    tag: str,
) -> None:
    heads, e = model.config.n_head, model.config.n_embd
    for i in range(model.config.n_layer):
        q = split_heads(calls[f"qkv{i}"][0].split(e, dim=2)[0], heads)
        cache = result.past_key_values.layers[i]
        k, v = cache.keys, cache.values  # the past keys and values, then this step's
        own = calls[f"mask{i}"][0]
        for name, kwargs in {"the model's own mask": dict(attn_mask=own), **forms}.items():
            # Eager code adds finfo.min, so a row with no key left gets uniform weights: what the
            # book's -1e6 fill gives (d2l). SDPA gives such a row zero weights: the "sdpa" mode.
            r = attend(q, k, v, mask_mode="d2l" if eager else "sdpa", **kwargs)
            what = f"{tag} layer {i}: {name}"
            rows = torch.ones(r.weights.shape[:-1], dtype=torch.bool)
            if not same_fill(name, kwargs, eager):
                # A row with no key left (a left-padded query) is spread over whatever fill the
                # form has: the model's own is one fill everywhere (finfo.min: uniform weights) or
                # SDPA's zero rows. Where a form's fill differs, those rows are flagged, and every
                # row that has a key left must match all the same.
                left = r.diagnostics.empty_rows | r.diagnostics.fill_only_rows
                assert not (left & ~query_padding[:, None, :]).any(), what  # padded queries only
                rows = ~left
            if eager:
                close(r.weights[rows], result.attentions[i][rows], what)
            close(merge_heads(r.output)[rows.all(1)], calls[f"out{i}"][0][rows.all(1)], what)


def same_fill(name: str, kwargs: dict[str, Any], eager: bool) -> bool:
    """Whether a form treats a row with no key left as the model does: eager code adds finfo.min
    (uniform weights over every key, which the book's -1e6 fill of a boolean mask also gives);
    SDPA gives such a row zero weights (so do a boolean mask and a -inf one under "sdpa")."""
    if "finfo.min" in name:
        return eager and "causal" not in kwargs  # one fill for padding and future keys alike
    if "-inf" in name:
        return not eager
    return True


def causal_forms(attend_01: torch.Tensor, n_q: int, alignment: str) -> dict[str, dict[str, Any]]:
    n_k = attend_01.shape[1]
    causal = torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)
    keep = attend_01.bool()[:, None, None, :] & causal
    forms = {name: dict(causal=alignment, **kwargs) for name, kwargs in padding_forms(attend_01, n_q).items()}
    forms["attn_mask (B, 1, Lq, Lk) bool, causal inside"] = dict(attn_mask=keep)
    forms["attn_mask (B, 1, Lq, Lk) additive finfo.min, causal inside"] = dict(
        attn_mask=torch.zeros(keep.shape).masked_fill(~keep, MIN)
    )
    return forms


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
@pytest.mark.parametrize("side", ["right", "left"])
def test_gpt2_causal_with_padding_every_layer_and_head(transformers, implementation, side):
    model = gpt2(transformers, implementation)
    eager = implementation == "eager"
    right = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])
    attend_01 = right if side == "right" else right.flip(-1)
    ids = torch.randint(1, 60, (3, 6), generator=torch.Generator().manual_seed(5))
    calls, result = run_gpt2(model, ids, attend_01, eager)
    forms = causal_forms(attend_01, 6, "top_left")
    if side == "right":
        forms["valid_lens (B,) and causal"] = dict(valid_lens=attend_01.sum(-1), causal=True)
    check_gpt2_layers(model, calls, result, forms, attend_01 == 0, eager, f"{implementation} {side} padding")


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_gpt2_kv_cache_step_with_fewer_queries_than_keys(transformers, implementation):
    model = gpt2(transformers, implementation)
    eager = implementation == "eager"
    prompt = torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]])  # left padded prompt
    g = torch.Generator().manual_seed(6)
    _, first = run_gpt2(model, torch.randint(1, 60, (2, 5), generator=g), prompt, eager)
    attend_01 = torch.cat([prompt, torch.ones(2, 2, dtype=torch.long)], dim=1)  # two new tokens: L_q 2, L_k 7
    calls, result = run_gpt2(
        model, torch.randint(1, 60, (2, 2), generator=g), attend_01, eager, past=first.past_key_values
    )
    assert result.past_key_values.layers[0].keys.shape[2] == 7
    check_gpt2_layers(
        model,
        calls,
        result,
        causal_forms(attend_01, 2, "bottom_right"),
        attend_01[:, 5:] == 0,
        eager,
        f"{implementation} KV-cache step",
    )
