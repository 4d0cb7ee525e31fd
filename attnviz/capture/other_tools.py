"""What other tools already record, as a :class:`ModelRun`.

* A TransformerLens ``ActivationCache`` (any mapping with its hook names works; TransformerLens
  itself is not needed): ``blocks.{i}.attn.hook_q`` / ``hook_k`` / ``hook_v`` (B, L, H, d),
  ``hook_rot_q`` / ``hook_rot_k`` when the model rotates them (those are what the scores use),
  ``hook_z`` (B, L, H, d_v), the heads' output, and ``hook_pattern`` (B, H, L_q, L_k), the
  model's own weights. A cache holds no masks and no score terms: they are read from the model
  (TransformerLens 3's ``HookedTransformer``, 4's ``TransformerBridge``; ``transformer_lens.py``),
  else the caller says them. A layer is recomputed only where that reproduces ``hook_pattern``;
  elsewhere it is ``hook_pattern`` itself, and its note says why.
  :func:`capture_transformer_lens` runs such a model and reads its hooks.
* Hugging Face ``output_attentions``: one (B, H, L_q, L_k) weight tensor per layer and nothing
  else, so the calls are weights only; the note of each says what cannot be recomputed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from attnviz.state.run import AttentionCall, CallTerm, MaskArguments, ModelRun, ModelRunError
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from ..compute.engine_args import call_score_terms
from ..engine import attend
from . import transformer_lens as tl
from .calls import largest_difference

__all__ = ["capture_transformer_lens", "from_output_attentions", "from_transformer_lens"]

_HOOK = re.compile(r"blocks\.(\d+)\.attn\.hook_(q|k|v|rot_q|rot_k|z|pattern|attn_scores)")


def _array(value: Any) -> np.ndarray:
    """A CPU numpy copy of a tensor or array (bfloat16 widened to float32, which is exact)."""
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy().copy()
    return np.array(value)


def _heads_first(value: Any) -> np.ndarray:
    """TransformerLens's (B, L, H, d) (or (L, H, d) without a batch) as (B, H, L, d)."""
    a = _array(value)
    if a.ndim == 3:
        a = a[None]
    return np.ascontiguousarray(a.transpose(0, 2, 1, 3))


def from_transformer_lens(
    cache: Mapping[str, Any],
    *,
    tokens: object = None,
    attention_mask: object = None,
    causal: bool | None = None,
    scale: float | None = None,
    model: Any = None,
    position_ids: object = None,
) -> ModelRun:
    """A TransformerLens ``ActivationCache`` (or a dict with its hook names) as a ModelRun.

    ``tokens``: the model's tokens (one sequence, or one per batch element). ``attention_mask``:
    Hugging Face's (B, L) 0/1 padding mask when the batch was padded. ``model``: the
    ``HookedTransformer`` (TransformerLens 3) or ``TransformerBridge`` (4) that made the cache
    (default: the one an ``ActivationCache`` keeps): its causal mask, local windows, rotary,
    ALiBi, soft-capping, sinks and scale are read from it. Without one, ``causal`` (default True)
    and ``scale`` (default 1/sqrt(d_head)) say what the model did. ``position_ids``: the
    positions a bridge was run with, when not 0..L-1.

    A layer is recomputed from its queries, keys and values only where that is exact: its
    recomputation must reproduce ``hook_pattern`` (and ``hook_z``) within 1e-4. Elsewhere the
    layer is ``hook_pattern`` itself, the model's own weights, shown as such, and the call's note
    says why (a rotary model without ``hook_rot_q``/``hook_rot_k`` or a model to rotate with, a
    term the import does not know, assumptions that do not hold). Rows with every key masked are
    0, as TransformerLens makes them.
    """
    layers: dict[int, dict[str, Any]] = {}
    for key in list(cache.keys()):  # an ActivationCache is a mapping with keys(), not always iterable
        match = _HOOK.fullmatch(str(key))
        if match:
            layers.setdefault(int(match.group(1)), {})[match.group(2)] = cache[key]
    if not layers:
        raise ModelRunError(
            QT_TRANSLATE_NOOP(
                "Capture",
                "no TransformerLens attention hooks found (blocks.0.attn.hook_q, hook_k, hook_v, hook_pattern)",
            )
        )
    owner = tl.model_of(cache, model)
    padding = None if attention_mask is None else _array(attention_mask)
    calls = []
    for index in sorted(layers):
        hooks = layers[index]
        name = f"blocks.{index}.attn"
        pattern = hooks.get("pattern")
        if not {"q", "k", "v"} <= hooks.keys():
            if pattern is None:
                raise ModelRunError(
                    message(
                        QT_TRANSLATE_NOOP(
                            "Capture", "{name}: the cache holds neither hook_q, hook_k and hook_v nor hook_pattern"
                        ),
                        name=name,
                    )
                )
            calls.append(
                _weights_only(
                    name,
                    pattern,
                    QT_TRANSLATE_NOOP(
                        "Capture",
                        "attention pattern only (hook_pattern, the model's own weights): queries, keys and values "
                        "were not cached",
                    ),
                )
            )
            continue
        calls.append(_tl_layer(name, index, hooks, owner, padding, causal, scale, position_ids))
    return _run(calls, tokens, "transformer_lens")


def capture_transformer_lens(
    model: Any,
    input: Any,
    *,
    attention_mask: Any = None,
    tokens: object = None,
    position_ids: object = None,
    **kwargs: Any,
) -> ModelRun:
    """Run a TransformerLens ``HookedTransformer`` (3.x) or ``TransformerBridge`` (4.x) on
    ``input`` (token ids, or what its forward takes) and record every attention layer from its
    hooks: queries, keys and values (rotated as the model rotates them), its causal mask and
    local windows, the padding of ``attention_mask``, its score terms; checked against
    ``hook_pattern`` and ``hook_z`` as :func:`from_transformer_lens` does. (``attnviz.capture``
    sees only such a model's softmax: weights.) ``kwargs`` go to ``run_with_cache``."""
    run_with_cache = getattr(model, "run_with_cache", None)
    if not callable(run_with_cache):
        raise ModelRunError(
            message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "{type} is not a TransformerLens model (no run_with_cache): use attnviz.capture(model)",
                ),
                type=type(model).__name__,
            )
        )
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask

    def attention_hooks(name: str) -> bool:
        return _HOOK.fullmatch(name) is not None

    with torch.no_grad():
        _, cache = run_with_cache(input, names_filter=attention_hooks, **kwargs)
    return from_transformer_lens(
        cache, tokens=tokens, attention_mask=attention_mask, model=model, position_ids=position_ids
    )


# A recomputation this close to hook_pattern / hook_z (float32 models) is the model's computation.
_EXACT = 1e-4


def _tl_layer(
    name: str,
    index: int,
    hooks: dict[str, Any],
    owner: Any,
    padding: np.ndarray | None,
    causal: bool | None,
    scale: float | None,
    position_ids: object,
) -> AttentionCall:
    pattern = hooks.get("pattern")
    q_tl, k_tl = (torch.as_tensor(hooks[h]).detach().cpu() for h in ("q", "k"))
    n_q, n_k = q_tl.shape[-3], k_tl.shape[-3]
    terms = tl.layer_terms(owner, index, n_q, n_k) if owner is not None else None
    if terms is None:
        terms = tl.LayerTerms(causal=True if causal is None else causal, rotary=False)
    if causal is not None:
        terms.causal = causal
    if scale is not None:
        terms.scale = scale
    how: list[str] = []
    why = terms.unknown
    if "rot_q" in hooks and "rot_k" in hooks:
        q_used, k_used = hooks["rot_q"], hooks["rot_k"]
        how.append(QT_TRANSLATE_NOOP("Capture", "rotary from hook_rot_q/hook_rot_k"))
    elif terms.rotary:
        rotated = tl.rotate(owner, index, q_tl, k_tl, padding, position_ids)
        if rotated is None:
            why = why or QT_TRANSLATE_NOOP(
                "Capture",
                "a rotary model whose cache holds no hook_rot_q/hook_rot_k, and no model to rotate them with "
                "(pass model=)",
            )
            q_used, k_used = q_tl, k_tl
        else:
            q_used, k_used = rotated
            how.append(QT_TRANSLATE_NOOP("Capture", "rotary applied as the model applies it"))
    else:
        q_used, k_used = q_tl, k_tl
    q, k, v = _heads_first(q_used), _heads_first(k_used), _heads_first(hooks["v"])
    window = None if terms.window is None else tl.window_mask(terms.window, n_q, n_k)
    if padding is not None and not terms.masks_padding:
        how.append(QT_TRANSLATE_NOOP("Capture", "padding keys not masked, as the model does not mask them"))
    used_padding = padding if terms.masks_padding else None
    masks = MaskArguments(attn_mask=window, attention_mask=used_padding, is_causal=terms.causal)
    call_terms: list[CallTerm] = []
    if terms.softcap is not None:
        call_terms.append(CallTerm("softcap", "softcap", cap=terms.softcap))
        how.append(QT_TRANSLATE_NOOP("Capture", "soft-capping"))
    if terms.alibi is not None:
        call_terms.append(CallTerm("bias", "ALiBi", values=terms.alibi[None]))
        how.append(QT_TRANSLATE_NOOP("Capture", "ALiBi"))
    if window is not None:
        how.append(message(QT_TRANSLATE_NOOP("Capture", "a local window of {n}"), n=terms.window))
    if terms.sinks is not None:
        how.append(QT_TRANSLATE_NOOP("Capture", "sinks"))
    output = _heads_first(hooks["z"]) if "z" in hooks else None
    call = AttentionCall(
        name, q, k, v, masks, scale=terms.scale, output=output, terms=tuple(call_terms), sinks=terms.sinks
    )
    fidelity = _tl_fidelity(call, output, pattern, terms.empty_rows)
    if pattern is not None and (why is not None or fidelity is None or not fidelity <= _EXACT):
        if why is None:
            why = message(
                QT_TRANSLATE_NOOP("Capture", "recomputing from hook_q, hook_k and hook_v differs by {value:.3g}"),
                value=fidelity if fidelity is not None else math.inf,
            )
        return _weights_only(
            name,
            pattern,
            message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "the model's own weights (hook_pattern), not recomputed: {why}",
                ),
                why=why,
            ),
        )
    if why is not None:
        note = message(QT_TRANSLATE_NOOP("Capture", "not exact: {why}"), why=why)
    else:
        against = "hook_z" if output is not None else "hook_pattern"
        note = message(
            QT_TRANSLATE_NOOP("Capture", "recomputed from hook_q, hook_k, hook_v ({how}), checked against {hook}"),
            how=", ".join(how) if how else QT_TRANSLATE_NOOP("Capture", "no score terms"),
            hook=against + (" and hook_pattern" if pattern is not None and output is not None else ""),
        )
    return replace(call, fidelity=fidelity, note=note)


def _tl_fidelity(call: AttentionCall, output: np.ndarray | None, pattern: Any, empty_rows: str) -> float | None:
    """The largest difference of attnviz's recomputation from ``hook_z`` and ``hook_pattern``.
    ``empty_rows``: the mask mode that treats rows with every key masked as the model does
    (TransformerLens sets them to 0, never NaN: "strict")."""
    tq, tk, tv = (torch.from_numpy(a) for a in (call.queries, call.keys, call.values))
    result = attend(
        tq,
        tk,
        tv,
        mask_mode=empty_rows,
        scale=call.scale,
        enable_gqa=tq.shape[1] != tk.shape[1],
        keep=("weights", "output"),
        allow_nonfinite=True,
        score_terms=call_score_terms(call) or None,
        **call.masks.as_kwargs(),
    )
    gaps = []
    if output is not None:
        gaps.append(largest_difference(result.output, torch.from_numpy(output)))
    if pattern is not None:
        gaps.append(largest_difference(result.weights, torch.from_numpy(_array(pattern))))
    return max(gaps) if gaps else None


def from_output_attentions(
    attentions: Sequence[Any], *, tokens: object = None, names: Sequence[str] | None = None
) -> ModelRun:
    """Hugging Face ``outputs.attentions`` (one (B, H, L_q, L_k) tensor per layer) as a run of
    weights-only calls named ``names`` (default "layer 0", "layer 1"...)."""
    if isinstance(attentions, torch.Tensor) or not len(attentions):
        raise ModelRunError(
            QT_TRANSLATE_NOOP(
                "Capture",
                "output_attentions must be the tuple of per-layer weight tensors the model returned "
                "(outputs.attentions): run the model with output_attentions=True and attn_implementation="
                '"eager"',
            )
        )
    if names is not None and len(names) != len(attentions):
        raise ModelRunError(
            message(
                QT_TRANSLATE_NOOP("Capture", "{names} names for {layers} layers"),
                names=len(names),
                layers=len(attentions),
            )
        )
    note = QT_TRANSLATE_NOOP(
        "Capture",
        "attention weights only (output_attentions): queries, keys, values, masks and "
        "the output were not recorded, so nothing can be recomputed or edited",
    )
    calls = [
        _weights_only(
            names[i] if names is not None else message(QT_TRANSLATE_NOOP("Capture", "layer {index}"), index=i), w, note
        )
        for i, w in enumerate(attentions)
    ]
    return _run(calls, tokens, "output_attentions")


def _weights_only(name: str, weights: Any, note: str) -> AttentionCall:
    if weights is None:
        raise ModelRunError(
            message(
                QT_TRANSLATE_NOOP(
                    "Capture", "{name} holds no weights (None): was the model run with output_attentions=True?"
                ),
                name=name,
            )
        )
    return AttentionCall(name, None, None, None, weights=_array(weights), note=note)


def _run(calls: list[AttentionCall], tokens: object, source: str) -> ModelRun:
    batch = calls[0].shape[0]
    shaped = ModelRun.broadcast_tokens(tokens, batch) if tokens is not None else None  # type: ignore[arg-type]
    return ModelRun(tuple(calls), shaped, shaped, source=source)  # type: ignore[arg-type]
