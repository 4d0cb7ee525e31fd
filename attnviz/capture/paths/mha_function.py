"""``torch.nn.functional.multi_head_attention_forward`` called by a model's own code, not by
nn.MultiheadAttention (WavLM passes its gated relative position bias to it as ``attn_mask``):
recorded like that module's forward, with the heads from the SDPA call made inside, else
projected again from the weights it was given, and its output compared after the output
projection it applies. A call from nn.MultiheadAttention is that module's (``mha.py``)."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP

from .. import shaping
from ..calls import CapturedCall
from .base import Hub, Installed, MhaFrame, Recorder, Swap

_F = torch.nn.functional


class MhaFunctionPath:
    name = "multi_head_attention_forward"

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        pass  # nothing of a model's own

    def install(self, hub: Hub, installed: Installed) -> None:
        frames = hub.frames
        original = _F.multi_head_attention_forward
        signature = inspect.signature(original)

        def multi_head_attention_forward(*args: Any, **kwargs: Any) -> Any:
            recipients = hub.recipients() if frames.mha is None and not frames.depth else []
            if not recipients:  # nn.MultiheadAttention's own call, or no capture wants it
                return original(*args, **kwargs)
            frame = frames.mha = MhaFrame()  # its inner SDPA call and softmax are its own
            try:
                result = original(*args, **kwargs)
            finally:
                frames.mha = None
            for capture in recipients:
                capture._guarded(functools.partial(record, capture, signature, args, kwargs, frame, result))
            return result

        multi_head_attention_forward.__doc__ = original.__doc__
        installed.swaps.append(
            Swap(_F, "multi_head_attention_forward", original, multi_head_attention_forward, _F.__name__)
        )


def record(
    capture: Recorder,
    signature: inspect.Signature,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    frame: MhaFrame,
    result: Any,
) -> None:
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    if a["bias_k"] is not None or a["bias_v"] is not None or a["add_zero_attn"] or a["static_k"] is not None:
        raise NotImplementedError(
            "multi_head_attention_forward with bias_k, bias_v, add_zero_attn or static keys adds keys of its own; "
            "its calls are not recorded"
        )
    query, key = a["query"], a["key"]
    batched = query.dim() == 3
    heads = int(a["num_heads"])
    kpm, attn_mask = a["key_padding_mask"], a["attn_mask"]
    if kpm is not None and not batched:
        kpm = kpm.unsqueeze(0)
    module_output = None
    if frame.inner is not None:
        inner, out = frame.inner
        q, k, v = inner["query"], inner["key"], inner["value"]
    else:
        with torch.no_grad():
            q, k, v = _project(a, heads)
        out = None
        # (L, B, E) or (L, E) as the function returned it: (B, L, E) here.
        module_output = result[0].transpose(0, 1) if batched else result[0].unsqueeze(0)
    if isinstance(attn_mask, torch.Tensor) and attn_mask.dim() == 3:
        attn_mask = attn_mask.reshape(q.shape[0], heads, *attn_mask.shape[1:])  # (B * H, L, S): (B, H, L, S)
    dropout = float(a["dropout_p"]) if a["training"] else 0.0
    notes = []
    if a["need_weights"] and a["average_attn_weights"] and heads > 1:
        notes.append(
            QT_TRANSLATE_NOOP(
                "Capture",
                "the function returned its heads' average weights (average_attn_weights=True): a map the model "
                "reports from it is that average (in every head, for WavLM); each head here is its own",
            )
        )
    context = capture._context()
    weights = [] if out is not None else [a["out_proj_weight"], a["out_proj_bias"]]
    capture._add(
        lambda: CapturedCall(
            "",
            "multihead_attention",
            shaping.copy(q),
            shaping.copy(k),
            shaping.copy(v),
            q.dtype,
            is_causal=bool(a["is_causal"]),
            dropout_p=dropout,
            output=shaping.copy(out),
            module_output=shaping.copy(module_output),
            out_proj=None
            if out is not None
            else (shaping.copy(a["out_proj_weight"]), shaping.copy(a["out_proj_bias"])),
            note="; ".join(notes),
            path=CallPath(
                "multihead_attention",
                "torch.nn.functional.multi_head_attention_forward",
                weights_requested=bool(a["need_weights"]),
            ),
            cross=context["cross"] or query is not key,
            encoder=context["encoder"],
            module_key=context["module_key"],
        ),
        context["base"],
        [q, k, v, out, module_output, *weights],
        attn_mask,
        kpm,
    )


def _project(a: dict[str, Any], heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The heads (B, H, L, d) the function computes from its inputs and projection weights, with
    its own in-projection functions."""
    query, key, value = a["query"], a["key"], a["value"]
    if query.dim() == 2:  # unbatched (L, E)
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
    if not a["use_separate_proj_weight"]:
        q, k, v = _F._in_projection_packed(query, key, value, a["in_proj_weight"], a["in_proj_bias"])  # type: ignore[attr-defined]
    else:
        bias = a["in_proj_bias"]
        b_q, b_k, b_v = bias.chunk(3) if bias is not None else (None, None, None)
        q, k, v = _F._in_projection(  # type: ignore[attr-defined]
            query, key, value, a["q_proj_weight"], a["k_proj_weight"], a["v_proj_weight"], b_q, b_k, b_v
        )

    def split(x: torch.Tensor) -> torch.Tensor:
        n, b, e = x.shape
        return x.reshape(n, b * heads, e // heads).transpose(0, 1).reshape(b, heads, n, e // heads)

    return split(q), split(k), split(v)


PATH = MhaFunctionPath()
