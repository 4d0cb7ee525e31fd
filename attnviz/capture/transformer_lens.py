"""What a TransformerLens model does in its attention, read from the model (no TransformerLens import).

TransformerLens 3 (``HookedTransformer``) and 4 (``TransformerBridge``; ``HookedTransformer`` is
gone) compute the scores differently from SDPA in ways a cache does not show: rotary applied
after ``hook_q``/``hook_k`` (TransformerLens 4's bridge caches no ``hook_rot_q``), soft-capping
before ALiBi, local windows, sink logits, and rows with every key masked set to 0 (never NaN).
:func:`layer_terms` reads them from the model (or its ``cfg``) so that
:func:`attnviz.capture.from_transformer_lens` recomputes a layer only where it can do so exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["LayerTerms", "layer_terms", "rotate"]


@dataclass
class LayerTerms:
    """One layer's attention as the model computes it: ``causal``, a local ``window`` (keys
    within ``window`` positions back), ``softcap`` (applied first, as TransformerLens does),
    ``alibi`` (H, L_q, L_k) added after it, ``sinks`` (one logit per head), ``scale`` (what the
    dot products are multiplied by), ``rotary``: the queries and keys are rotated after the hooks
    ``hook_q``/``hook_k``; ``unknown``: what the import cannot reproduce (None: nothing)."""

    causal: bool = True
    window: int | None = None
    softcap: float | None = None
    alibi: np.ndarray | None = None
    sinks: np.ndarray | None = None
    scale: float | None = None
    rotary: bool = False
    unknown: str | None = None
    #: Whether the padding mask reaches the scores: a HookedTransformer applies it with its causal
    #: mask only, so a bidirectional one attends to padding keys.
    masks_padding: bool = True
    #: attnviz's mask mode for rows with every key masked: TransformerLens makes them 0
    #: ("strict"); Hugging Face code under a bridge fills with the dtype's minimum, so they are
    #: uniform over the keys, as a finite fill makes them ("d2l").
    empty_rows: str = "strict"


def model_of(cache: Any, model: Any) -> Any:
    """The model given, else the one an ``ActivationCache`` keeps (``cache.model``), else None."""
    if model is not None:
        return model
    return getattr(cache, "model", None)


def _native_attention(model: Any, layer: int) -> Any:
    """TransformerLens 4's native attention module of ``layer`` (it holds ``scale``, ``causal``,
    ``rotary`` and ``attn_scores_soft_cap``), or None (a HookedTransformer, a HF-backed bridge)."""
    blocks = getattr(model, "blocks", None)
    if blocks is None or layer >= len(blocks):
        return None
    attn = getattr(blocks[layer], "attn", None)
    if attn is None or not hasattr(attn, "modules"):
        return None
    for module in attn.modules():
        if all(hasattr(module, name) for name in ("scale", "causal", "rotary", "attn_scores_soft_cap")):
            return module
    return None


def layer_terms(model: Any, layer: int, query_length: int, key_length: int) -> LayerTerms | None:
    """What ``model``'s ``layer`` applies to its scores; None without a model or config."""
    cfg = getattr(model, "cfg", None)
    if cfg is None:
        return None
    native = _native_attention(model, layer)
    if native is not None:
        cap = float(native.attn_scores_soft_cap)
        return LayerTerms(
            causal=bool(native.causal),
            softcap=cap if cap > 0 else None,
            scale=1.0 / float(native.scale),
            rotary=native.rotary is not None,
        )
    blocks = getattr(model, "blocks", None)
    attn = getattr(blocks[layer], "attn", None) if blocks is not None and layer < len(blocks) else None
    hf = _hf_attention(attn)
    if hf is not None:
        return _hf_terms(hf)
    kind = getattr(cfg, "positional_embedding_type", "standard")
    causal = getattr(cfg, "attention_dir", "causal") == "causal"
    terms = LayerTerms(causal=causal, masks_padding=causal)
    if attn is None:
        terms.unknown = f"the model has no blocks[{layer}].attn to read its terms from"
        return terms
    if getattr(attn, "attn_type", "global") == "local":
        terms.window = int(cfg.window_size)
    cap = float(getattr(cfg, "attn_scores_soft_cap", -1.0) or -1.0)
    terms.softcap = cap if cap > 0 else None
    scale = getattr(attn, "attn_scale", None)
    terms.scale = 1.0 / float(scale) if scale else None
    terms.rotary = kind == "rotary"
    create_alibi: Any = getattr(type(attn), "create_alibi_bias", None)
    if kind == "alibi" and create_alibi is None:
        # A bridge over another library's attention: its ALiBi is that library's code.
        terms.unknown = f"ALiBi computed by {type(attn).__name__}'s own code"
    elif kind == "alibi":
        # The model's own function, cut as it cuts it (the last L_q queries, the first L_k keys).
        alibi = create_alibi(cfg.n_heads, key_length, torch.device("cpu"))
        terms.alibi = alibi[:, -query_length:, :key_length].double().numpy()
    elif kind not in ("standard", "rotary", "shortformer"):
        terms.unknown = f"positional_embedding_type={kind!r}"
    if getattr(cfg, "use_logn_attn", False):
        terms.unknown = "use_logn_attn"
    if getattr(cfg, "use_attention_sinks", False) and getattr(attn, "sinks", None) is not None:
        terms.sinks = attn.sinks.detach().double().cpu().numpy().reshape(-1)
    return terms


def _hf_attention(attn: Any) -> Any:
    """The Hugging Face attention module a TransformerLens 4 bridge wraps (it holds ``scaling``),
    or None."""
    if attn is None or not hasattr(attn, "modules") or hasattr(attn, "apply_rotary"):
        return None  # a HookedTransformer's own attention
    for module in attn.modules():
        if module is not attn and isinstance(getattr(module, "scaling", None), float):
            return module
    return None


def _hf_terms(module: Any) -> LayerTerms:
    """What a Hugging Face attention module applies, from its own attributes (as the capture of a
    transformers model reads them): scaling, sliding window, soft-capping, sinks, causality."""
    config = getattr(module, "config", None)
    cap = getattr(module, "attn_logit_softcapping", None) or getattr(config, "attn_logit_softcapping", None)
    window = getattr(module, "sliding_window", None)
    sinks = getattr(module, "sinks", None)
    terms = LayerTerms(
        causal=bool(getattr(module, "is_causal", True)),
        window=int(window) if isinstance(window, int) and window > 0 else None,
        softcap=float(cap) if cap else None,
        sinks=None if not isinstance(sinks, torch.Tensor) else sinks.detach().double().cpu().numpy().reshape(-1),
        scale=float(module.scaling),
        rotary=False,  # a bridge over Hugging Face code caches hook_rot_q/hook_rot_k where it rotates
        empty_rows="d2l",
    )
    return terms


def rotate(
    model: Any, layer: int, q: torch.Tensor, k: torch.Tensor, attention_mask: Any, position_ids: Any
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``hook_q`` and ``hook_k`` (B, L, H, d) rotated as ``model``'s ``layer`` rotates them, or
    None where the model offers no way to (the import then shows ``hook_pattern``)."""
    native = _native_attention(model, layer)
    if native is not None and native.rotary is not None:
        positions = None if position_ids is None else torch.as_tensor(position_ids)
        rq, rk = native.rotary.apply_rope(q.transpose(1, 2), k.transpose(1, 2), position_ids=positions)
        return rq.transpose(1, 2), rk.transpose(1, 2)
    blocks = getattr(model, "blocks", None)
    attn = getattr(blocks[layer], "attn", None) if blocks is not None else None
    apply = getattr(attn, "apply_rotary", None)
    if apply is None:
        return None
    mask = None if attention_mask is None else torch.as_tensor(attention_mask)
    # A HookedTransformer rotates with positions counted from each row's first real token.
    return apply(q, 0, mask), apply(k, 0, mask)


def window_mask(window: int, query_length: int, key_length: int) -> np.ndarray:
    """(L_q, L_k) True where a key is within ``window`` positions back of its query (bottom-right)."""
    q = np.arange(key_length - query_length, key_length)[:, None]
    k = np.arange(key_length)[None, :]
    return k > q - window


def default_scale(d_head: int) -> float:
    return 1.0 / math.sqrt(d_head)
