"""What other tools already record, as a :class:`ModelRun`.

* A TransformerLens ``ActivationCache`` (any mapping with its hook names works; TransformerLens
  itself is not needed): ``blocks.{i}.attn.hook_q`` / ``hook_k`` / ``hook_v`` (B, L, H, d),
  ``hook_rot_q`` / ``hook_rot_k`` when the model rotates them (those are what the scores use),
  ``hook_z`` (B, L, H, d_v), the heads' output, and ``hook_pattern`` (B, H, L_q, L_k), the
  weights. A cache holds no masks: the caller says what the model applied (TransformerLens
  models are causal unless told otherwise, padding through ``attention_mask``), and the
  fidelity, measured against ``hook_z`` (or ``hook_pattern``), shows whether that was right.
* Hugging Face ``output_attentions``: one (B, H, L_q, L_k) weight tensor per layer and nothing
  else, so the calls are weights only; the note of each says what cannot be recomputed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..engine import attend
from ..model_run import AttentionCall, MaskArguments, ModelRun, ModelRunError
from ..tr import QT_TRANSLATE_NOOP, message
from .calls import largest_difference, recompute

__all__ = ["from_output_attentions", "from_transformer_lens"]

_HOOK = re.compile(r"blocks\.(\d+)\.attn\.hook_(q|k|v|rot_q|rot_k|z|pattern)")


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
    causal: bool = True,
    scale: float | None = None,
) -> ModelRun:
    """A TransformerLens ``ActivationCache`` (or a dict with its hook names) as a ModelRun.

    ``tokens``: the model's tokens (one sequence, or one per batch element). ``attention_mask``:
    Hugging Face's (B, L) 0/1 padding mask when the batch was padded. ``causal``: whether the
    model masks future positions (TransformerLens's default ``attention_dir="causal"``).
    ``scale``: what the dot products were multiplied by (default 1/sqrt(d_head)). Layers with
    only ``hook_pattern`` become weights-only calls.
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
    padding = None if attention_mask is None else _array(attention_mask)
    masks = MaskArguments(attention_mask=padding, is_causal=bool(causal))
    calls = []
    for index in sorted(layers):
        hooks = layers[index]
        name = f"blocks.{index}.attn"
        if not {"q", "k", "v"} <= hooks.keys():
            if "pattern" not in hooks:
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
                    hooks["pattern"],
                    QT_TRANSLATE_NOOP(
                        "Capture", "attention pattern only (hook_pattern): queries, keys and values were not cached"
                    ),
                )
            )
            continue
        q = _heads_first(hooks.get("rot_q", hooks["q"]))
        k = _heads_first(hooks.get("rot_k", hooks["k"]))
        v = _heads_first(hooks["v"])
        output = _heads_first(hooks["z"]) if "z" in hooks else None
        fidelity, note = _tl_fidelity(q, k, v, masks, scale, output, hooks.get("pattern"))
        calls.append(AttentionCall(name, q, k, v, masks, scale=scale, output=output, fidelity=fidelity, note=note))
    return _run(calls, tokens, "transformer_lens")


def _tl_fidelity(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    masks: MaskArguments,
    scale: float | None,
    output: np.ndarray | None,
    pattern: Any,
) -> tuple[float | None, str]:
    # TransformerLens fills masked scores with -inf: a row with no key left is NaN ("neg_inf").
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    gqa = tq.shape[1] != tk.shape[1]
    if output is not None:
        ours, _ = recompute(tq, tk, tv, masks.as_kwargs(), scale, gqa, "neg_inf")
        return largest_difference(ours, torch.from_numpy(output)), ""
    if pattern is not None:
        kwargs = masks.as_kwargs()
        result = attend(
            tq,
            tk,
            tv,
            mask_mode="neg_inf",
            scale=scale,
            enable_gqa=gqa,
            keep=("weights",),
            allow_nonfinite=True,
            **kwargs,
        )
        return largest_difference(result.weights, torch.from_numpy(_array(pattern))), QT_TRANSLATE_NOOP(
            "Capture", "fidelity measured on the weights (hook_pattern): the cache holds no hook_z"
        )
    return None, QT_TRANSLATE_NOOP("Capture", "not compared: the cache holds neither hook_z nor hook_pattern")


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
