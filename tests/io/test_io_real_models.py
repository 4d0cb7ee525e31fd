"""Model files written from small real architectures, opened as the app opens them, match the
models' own attention: weights and outputs to 1e-5 in float32, every layer and head.

The models are built in the test (nothing is downloaded): torch's MultiheadAttention and
TransformerEncoder with a key padding mask, Hugging Face's BertModel (a padded encoder batch) and
GPT2Model (causal with right padding, left padding, and a KV-cache step with fewer queries than
keys). Their Q, K, V and masks are captured with the engine tests' hooks (tests/engine/
test_real_models.py), written to .npz, .safetensors and .pt files with every mask form code
builds, tokens and flags, then loaded with ``load_tensor_file`` + ``guess_roles`` +
``state_from_tensor_file`` (what the window and ``attnviz render`` do) and computed with
``compute.run_state`` for each head of each layer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnviz.cli.render import render_main
from attnviz.compute.attention import run_state
from attnviz.io import guess_roles, load_tensor_file
from attnviz.io.tensor_import import NO_SETTINGS_NOTE, state_from_tensor_file
from attnviz.teaching.presets import DEFAULT_PRESET, PRESETS
from tests.engine.test_real_models import (
    MIN,
    Recorder,
    bert,
    causal_forms,
    gpt2,
    merge_heads,
    padding_forms,
    run_gpt2,
    split_heads,
)

ATOL = 1e-5
FORMATS = (".npz", ".safetensors", ".pt")
BASE = PRESETS[DEFAULT_PRESET].build()  # the additive toy: nothing of it may show through


def write_model_file(path: Path, arrays: Mapping[str, np.ndarray], extra: Mapping[str, Any]) -> None:
    """Arrays of numbers, plus tokens (lists of strings) and plain values (``is_causal``,
    ``causal``, ``scale``) as each format keeps them: unicode and 0-d arrays in an .npz, JSON
    and strings in .safetensors metadata, lists and Python values in a .pt."""
    suffix = path.suffix
    if suffix == ".npz":
        np.savez(path, **arrays, **{k: np.array(v) for k, v in extra.items()})
    elif suffix == ".safetensors":
        from safetensors.numpy import save_file

        metadata = {
            k: json.dumps(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in extra.items()
        }
        save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(path), metadata=metadata)
    else:
        torch.save({**{k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in arrays.items()}, **extra}, path)


def as_file_arrays(kwargs: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``attend()`` mask arguments as a file holds them: each under its argument's name (which
    says what it means), ``causal=`` as the file's ``causal``."""
    arrays: dict[str, np.ndarray] = {}
    extra: dict[str, Any] = {}
    for name, value in kwargs.items():
        if name == "causal":
            extra["causal"] = "top_left" if value is True else value
        else:
            arrays[name] = value.numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    return arrays, extra


def check_file(
    path: Path,
    weights: list[torch.Tensor] | None,
    outputs: list[torch.Tensor],
    query_padding: torch.Tensor,
    tokens: list[list[str]],
    what: str,
) -> int:
    """Open ``path`` as the app does and compare every head of every layer with the model's
    ``weights`` (B, H, L_q, L_k) and merged-head ``outputs`` (B, L_q, H * d) per layer. Rows
    with no key left (a padded query under a causal mask) are spread over whatever fill a form
    has, so they are left out, and must be padded queries. Returns the largest difference."""
    tf = load_tensor_file(path)
    notes: list[str] = []
    state = state_from_tensor_file(tf, guess_roles(tf), None, BASE, notes=notes)
    assert NO_SETTINGS_NOTE in notes, (what, notes)
    assert state.settings.scoring == "scaled_dot" and state.params == {}
    first = state.head_view()
    assert first.key_tokens is not None and first.key_tokens.tolist() == tokens
    if first.n_queries == first.n_keys:
        assert first.query_tokens is not None and first.query_tokens.tolist() == tokens
    else:  # a KV-cache step: 'tokens' labels the keys, and the queries' labels are asked for
        assert first.query_tokens is None and any("give query_tokens" in n for n in notes), notes
    run = state.run
    assert run.layers == len(outputs)
    padding = query_padding.numpy()
    worst = 0.0
    for layer in range(run.layers):
        for head in range(run.heads(layer)):
            outcome = run_state(state, 0, (layer, head))
            assert outcome.error is None and outcome.view is not None, (what, outcome.error)
            view = outcome.view
            left = ~view.mask.any(-1)  # (B, L_q): rows with no key left
            assert not (left & ~padding).any(), f"{what} layer {layer} head {head}"
            rows = ~left
            place = f"{what}: layer {layer}, head {head}"
            if weights is not None:
                expected = weights[layer][:, head].numpy()
                np.testing.assert_allclose(view.weights[rows], expected[rows], atol=ATOL, rtol=0, err_msg=place)
                worst = max(worst, float(np.abs(view.weights[rows] - expected[rows]).max()))
            d = view.output.shape[-1]
            expected_out = outputs[layer][..., head * d : (head + 1) * d].numpy()
            np.testing.assert_allclose(view.output[rows], expected_out[rows], atol=ATOL, rtol=0, err_msg=place)
            worst = max(worst, float(np.abs(view.output[rows] - expected_out[rows]).max()))
    return worst


def words(batch: int, length: int, padding: torch.Tensor) -> list[list[str]]:
    return [[("[PAD]" if padding[b, i] else f"w{b}_{i}") for i in range(length)] for b in range(batch)]


# ----------------------------------------------------------------------------- Hugging Face


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.mark.parametrize("suffix", FORMATS)
@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_bert_padded_batch_files_in_every_mask_form(transformers, implementation, suffix, tmp_path):
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
    heads, layers = model.config.num_attention_heads, model.config.num_hidden_layers
    qkv = {
        name: torch.stack([split_heads(rec.calls[f"{part}{i}"][0], heads) for i in range(layers)]).numpy()
        for name, part in (("q", "query"), ("k", "key"), ("v", "value"))
    }  # (layers, B, H, L, d)
    own = [rec.calls[f"mask{i}"][0] for i in range(layers)]  # additive finfo.min (eager) or bool (sdpa)
    keep = attend_01.bool()
    forms: dict[str, dict[str, Any]] = {
        "the model's own mask, per layer (layers, B, 1, L, L)": dict(attn_mask=torch.stack(own)),
        **padding_forms(attend_01, 7),
        "attn_mask (B, H, L, L) bool": dict(attn_mask=keep[:, None, None, :].expand(3, heads, 7, 7)),
        "mask (B, L) int: Hugging Face's": dict(mask=attend_01),
        "mask (B, 1, 1, L) bool: SDPA's": dict(mask=keep[:, None, None, :]),
        "src_key_padding_mask (B, L) bool": dict(src_key_padding_mask=~keep),
        "valid_lens (B,)": dict(valid_lens=attend_01.sum(-1)),
    }
    tokens = words(3, 7, ~keep)
    weights = list(result.attentions) if implementation == "eager" else None
    outputs = [rec.calls[f"out{i}"][0] for i in range(layers)]
    for name, kwargs in forms.items():
        arrays, extra = as_file_arrays(kwargs)
        path = tmp_path / f"bert{suffix}"
        write_model_file(path, {**qkv, **arrays}, {**extra, "tokens": tokens})
        check_file(path, weights, outputs, ~keep, tokens, f"{implementation} {suffix} {name}")


def gpt2_files(model: Any, calls: dict[str, list[Any]], result: Any) -> tuple[dict[str, np.ndarray], list[Any]]:
    """(layers, B, H, L, d) queries, keys and values of every layer, and each layer's own mask."""
    heads, e = model.config.n_head, model.config.n_embd
    layers = model.config.n_layer
    q = torch.stack([split_heads(calls[f"qkv{i}"][0].split(e, dim=2)[0], heads) for i in range(layers)])
    k = torch.stack([result.past_key_values.layers[i].keys for i in range(layers)])
    v = torch.stack([result.past_key_values.layers[i].values for i in range(layers)])
    return {"q": q.numpy(), "k": k.numpy(), "v": v.numpy()}, [calls[f"mask{i}"][0] for i in range(layers)]


def check_gpt2(
    model: Any,
    calls: dict[str, list[Any]],
    result: Any,
    attend_01: torch.Tensor,
    n_q: int,
    alignment: str,
    eager: bool,
    suffix: str,
    tmp_path: Path,
    tag: str,
) -> None:
    qkv, own = gpt2_files(model, calls, result)
    forms = causal_forms(attend_01, n_q, alignment)
    if own[0] is not None:
        forms["the model's own mask"] = dict(attn_mask=own[0])
    n_k = attend_01.shape[1]
    keep = attend_01.bool()[:, None, None, :] & torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)
    forms["attn_mask (B, H, Lq, Lk) bool, causal inside"] = dict(attn_mask=keep.expand(-1, model.config.n_head, -1, -1))
    forms["mask (B, L) int and is_causal"] = dict(mask=attend_01, causal=alignment)
    tokens = words(attend_01.shape[0], n_k, attend_01 == 0)
    weights = list(result.attentions) if eager else None
    outputs = [calls[f"out{i}"][0] for i in range(model.config.n_layer)]
    for name, kwargs in forms.items():
        arrays, extra = as_file_arrays(kwargs)
        path = tmp_path / f"gpt2{suffix}"
        write_model_file(path, {**qkv, **arrays}, {**extra, "tokens": tokens})
        check_file(path, weights, outputs, attend_01[:, n_k - n_q :] == 0, tokens, f"{tag} {suffix}: {name}")


@pytest.mark.parametrize("suffix", FORMATS)
@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
@pytest.mark.parametrize("side", ["right", "left"])
def test_gpt2_causal_padded_files_in_every_mask_form(transformers, implementation, side, suffix, tmp_path):
    model = gpt2(transformers, implementation)
    eager = implementation == "eager"
    right = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])
    attend_01 = right if side == "right" else right.flip(-1)
    ids = torch.randint(1, 60, (3, 6), generator=torch.Generator().manual_seed(5))
    calls, result = run_gpt2(model, ids, attend_01, eager)
    check_gpt2(
        model, calls, result, attend_01, 6, "top_left", eager, suffix, tmp_path, f"{implementation} {side} padding"
    )


@pytest.mark.parametrize("suffix", FORMATS)
@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_gpt2_kv_cache_step_files_with_fewer_queries_than_keys(transformers, implementation, suffix, tmp_path):
    model = gpt2(transformers, implementation)
    eager = implementation == "eager"
    prompt = torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]])  # left padded prompt
    g = torch.Generator().manual_seed(6)
    _, first = run_gpt2(model, torch.randint(1, 60, (2, 5), generator=g), prompt, eager)
    attend_01 = torch.cat([prompt, torch.ones(2, 2, dtype=torch.long)], dim=1)  # two new tokens: L_q 2, L_k 7
    calls, result = run_gpt2(
        model, torch.randint(1, 60, (2, 2), generator=g), attend_01, eager, past=first.past_key_values
    )
    check_gpt2(
        model, calls, result, attend_01, 2, "bottom_right", eager, suffix, tmp_path, f"{implementation} KV-cache step"
    )


def test_gpt2_without_padding_a_square_causal_mask_and_is_causal(transformers, tmp_path):
    """The (L_q, L_k) form, and SDPA's is_causal flag as a .pt's plain value and in metadata."""
    model = gpt2(transformers, "eager")
    attend_01 = torch.ones(2, 6, dtype=torch.long)
    calls, result = run_gpt2(
        model, torch.randint(1, 60, (2, 6), generator=torch.Generator().manual_seed(8)), attend_01, True
    )
    qkv, _ = gpt2_files(model, calls, result)
    tokens = words(2, 6, attend_01 == 0)
    outputs = [calls[f"out{i}"][0] for i in range(model.config.n_layer)]
    square = np.tril(np.ones((6, 6), dtype=bool))
    for suffix in FORMATS:
        for arrays, extra in (
            ({"attn_mask": square}, {}),
            ({}, {"is_causal": True}),
            ({"attn_mask": np.where(square, 0.0, float(MIN)).astype(np.float32)}, {}),
        ):
            path = tmp_path / f"square{suffix}"
            write_model_file(path, {**qkv, **arrays}, {**extra, "tokens": tokens[0]})  # one sequence for all
            check_file(
                path, list(result.attentions), outputs, attend_01 == 0, [tokens[0]] * 2, f"{suffix} {sorted(arrays)}"
            )


def test_a_hugging_face_style_file_renders_its_heads_with_only_the_head_given(transformers, tmp_path, capsys):
    """``q``, ``k``, ``v`` (B, H, L, d), ``attention_mask`` 0/1 (B, L) and ``tokens``: render
    --head N --out weights.npy writes exactly the model's probabilities of that head."""
    model = bert(transformers, "eager")
    attend_01 = torch.tensor([[1] * 7, [1] * 4 + [0] * 3])
    ids = torch.randint(1, 60, (2, 7), generator=torch.Generator().manual_seed(9))
    rec = Recorder()
    attn = model.encoder.layer[1].attention.self
    for part in ("query", "key", "value"):
        rec.output_of(part, getattr(attn, part))
    with torch.no_grad():
        result = model(input_ids=ids, attention_mask=attend_01, output_attentions=True)
    rec.remove()
    heads = model.config.num_attention_heads
    path = tmp_path / "bert_layer1.npz"
    np.savez(
        path,
        q=split_heads(rec.calls["query"][0], heads).numpy(),
        k=split_heads(rec.calls["key"][0], heads).numpy(),
        v=split_heads(rec.calls["value"][0], heads).numpy(),
        attention_mask=attend_01.numpy(),
        tokens=np.array(words(2, 7, attend_01 == 0)),
    )
    for head in range(heads):
        out = tmp_path / f"head{head}.npy"
        assert render_main(["--load", str(path), "--head", str(head), "--out", str(out)]) == 0
        printed = capsys.readouterr()
        assert printed.err == "" and f"wrote {out}" in printed.out
        assert (
            "note: the file brings no scoring settings: scaled dot-product scoring, as real models use" in printed.out
        )
        np.testing.assert_allclose(np.load(out), result.attentions[1][:, head].numpy(), atol=ATOL, rtol=0)
    grid = tmp_path / "all.npy"
    assert render_main(["--load", str(path), "--heads", "all", "--batch", "1", "--out", str(grid)]) == 0
    np.testing.assert_allclose(np.load(grid), result.attentions[1][1].numpy(), atol=ATOL, rtol=0)


# ----------------------------------------------------------------------------- torch.nn


def test_multihead_attention_files_with_a_key_padding_mask(tmp_path):
    torch.manual_seed(0)
    b, n, e, heads = 3, 7, 16, 4
    mha = nn.MultiheadAttention(e, heads, batch_first=True).eval()
    x = torch.randn(b, n, e)
    attend_01 = torch.tensor([[1] * 7, [1] * 5 + [0] * 2, [1] * 2 + [0] * 5])
    with torch.no_grad():
        out, weights = mha(x, x, x, key_padding_mask=attend_01 == 0, need_weights=True, average_attn_weights=False)
    q, k, v = (
        split_heads(F.linear(x, w, bias), heads).detach()
        for w, bias in zip(mha.in_proj_weight.chunk(3), mha.in_proj_bias.chunk(3))
    )
    tokens = words(b, n, attend_01 == 0)
    for suffix in FORMATS:
        for name, kwargs in padding_forms(attend_01, n).items():
            arrays, extra = as_file_arrays(kwargs)
            path = tmp_path / f"mha{suffix}"
            write_model_file(
                path, {"q": q.numpy(), "k": k.numpy(), "v": v.numpy(), **arrays}, {**extra, "tokens": tokens}
            )
            tf = load_tensor_file(path)
            state = state_from_tensor_file(tf, guess_roles(tf), None, BASE)
            assert state.run.heads(0) == heads
            per_head = []
            for head in range(heads):
                view = run_state(state, 0, (0, head)).view
                assert view is not None
                np.testing.assert_allclose(
                    view.weights, weights[:, head].numpy(), atol=ATOL, rtol=0, err_msg=f"{suffix} {name} head {head}"
                )
                per_head.append(torch.from_numpy(view.output))
            # The heads' outputs, merged and projected as the module does, are the module's output.
            merged = mha.out_proj(merge_heads(torch.stack(per_head, dim=1))).detach()
            np.testing.assert_allclose(merged.numpy(), out.numpy(), atol=ATOL, rtol=0, err_msg=f"{suffix} {name}")


def test_transformer_encoder_layers_in_one_file_with_a_per_layer_mask(tmp_path):
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
    encoder(torch.randn(b, n, e), src_key_padding_mask=attend_01 == 0)
    for h in hooks:
        h.remove()
    qkv = []
    for mod, (x, _) in zip(encoder.layers, seen, strict=True):
        mha = mod.self_attn
        qkv.append(
            [
                split_heads(F.linear(x, w, bias), heads).detach()
                for w, bias in zip(mha.in_proj_weight.chunk(3), mha.in_proj_bias.chunk(3))
            ]
        )
    arrays = {name: torch.stack([layer_qkv[i] for layer_qkv in qkv]).numpy() for i, name in enumerate("qkv")}
    ignore = (attend_01 == 0).numpy()
    for suffix in FORMATS:
        for masks in (
            {"src_key_padding_mask": ignore},
            {"key_padding_mask": np.stack([ignore, ignore])},
        ):  # (layers, B, L): one per layer
            path = tmp_path / f"encoder{suffix}"
            write_model_file(path, {**arrays, **masks}, {"tokens": words(b, n, attend_01 == 0)})
            tf = load_tensor_file(path)
            state = state_from_tensor_file(tf, guess_roles(tf), None, BASE)
            assert state.run.layers == 2
            for index, (mod, (_, expected)) in enumerate(zip(encoder.layers, seen, strict=True)):
                per_head = []
                for head in range(heads):
                    view = run_state(state, 0, (index, head)).view
                    assert view is not None
                    per_head.append(torch.from_numpy(view.output))
                merged = mod.self_attn.out_proj(merge_heads(torch.stack(per_head, dim=1))).detach()
                np.testing.assert_allclose(
                    merged.numpy(),
                    expected.numpy(),
                    atol=ATOL,
                    rtol=0,
                    err_msg=f"{suffix} {sorted(masks)} layer {index}",
                )
