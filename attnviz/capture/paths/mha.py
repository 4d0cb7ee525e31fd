"""``nn.MultiheadAttention.forward``: records the masks as the module was given them, and the
heads from the SDPA call made inside (which is not recorded twice); where no SDPA call is seen,
Q, K and V projected again from the module's weights."""

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


class MhaPath:
    name = "multihead_attention"

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        pass  # nothing of a model's own

    def install(self, hub: Hub, installed: Installed) -> None:
        frames = hub.frames
        mha_forward = nn.MultiheadAttention.__dict__["forward"]
        signature = inspect.signature(mha_forward)

        def forward(module: nn.MultiheadAttention, *args: Any, **kwargs: Any) -> Any:
            recipients = hub.recipients() if frames.mha is None and not frames.depth else []
            if not recipients:
                return mha_forward(module, *args, **kwargs)
            if module.bias_k is not None or module.add_zero_attn:
                for capture in recipients:
                    capture._guarded(lambda: _refuse(module))
                frames.mha = MhaFrame()  # refused whole: nothing it calls inside is recorded either
                try:
                    return mha_forward(module, *args, **kwargs)
                finally:
                    frames.mha = None
            frame = frames.mha = MhaFrame()
            try:
                result = mha_forward(module, *args, **kwargs)
            finally:
                frames.mha = None
            fastpath = hub.fastpath_was_enabled
            for capture in recipients:
                capture._guarded(
                    functools.partial(record, capture, module, signature, args, kwargs, frame, result, fastpath)
                )
            return result

        installed.swaps.append(Swap(nn.MultiheadAttention, "forward", mha_forward, forward, "nn.MultiheadAttention"))


def record(
    capture: Recorder,
    module: nn.MultiheadAttention,
    signature: inspect.Signature,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    frame: MhaFrame,
    result: Any,
    fastpath_was_enabled: bool,
) -> None:
    """One nn.MultiheadAttention forward: its own masks and flags, the inner SDPA call's heads
    (else projected again), and whether the fused fast path would have run without the capture."""
    bound = signature.bind(module, *args, **kwargs)
    bound.apply_defaults()
    given = bound.arguments
    query = given["query"]
    batched = query.dim() == 3
    kpm, attn_mask = given["key_padding_mask"], given["attn_mask"]
    fast = shaping.mha_fast_path(module, query, given["key"], given["value"], attn_mask, kpm, fastpath_was_enabled)
    if kpm is not None and not batched:
        kpm = kpm.unsqueeze(0)
    if attn_mask is not None and attn_mask.dim() == 3 and not batched:
        attn_mask = attn_mask.unsqueeze(0)  # (H, L, S) of an unbatched input: (1, H, L, S)
    module_output = None
    if frame.inner is not None:
        inner, out = frame.inner
        q, k, v = inner["query"], inner["key"], inner["value"]
    else:
        with torch.no_grad():
            q, k, v = shaping.project(module, query, given["key"], given["value"])
        out = None
        # (L, B, E) or (B, L, E) or (L, E) as the module returned it: (B, L, E) here.
        module_output = (
            result[0]
            if batched and module.batch_first
            else (result[0].transpose(0, 1) if batched else result[0].unsqueeze(0))
        )
    context = capture._context()
    note = ""
    if fast:
        note = QT_TRANSLATE_NOOP(
            "Capture",
            "without the capture nn.MultiheadAttention would have taken its fused fast path (which reads a "
            "float mask as a boolean one); the capture ran its Python path",
        )
    need_weights = bool(given["need_weights"])
    weights = [] if out is not None else [module.out_proj.weight, module.out_proj.bias]
    capture._add(
        lambda: CapturedCall(
            "",
            "multihead_attention",
            shaping.copy(q),
            shaping.copy(k),
            shaping.copy(v),
            q.dtype,
            is_causal=bool(given["is_causal"]),
            dropout_p=module.dropout if module.training else 0.0,
            output=shaping.copy(out),
            module_output=shaping.copy(module_output),
            out_proj=None
            if out is not None
            else (shaping.copy(module.out_proj.weight), shaping.copy(module.out_proj.bias)),
            note=note,
            path=CallPath(
                "multihead_attention",
                "torch.nn.MultiheadAttention.forward",
                weights_requested=need_weights,
                fast_path=fast,
            ),
            cross=context["cross"] or given["query"] is not given["key"],
            encoder=context["encoder"],
            module_key=context["module_key"],
        ),
        context["base"],
        [q, k, v, out, module_output, *weights],
        attn_mask,
        kpm,
    )


def _refuse(module: nn.MultiheadAttention) -> None:
    raise NotImplementedError(
        "nn.MultiheadAttention with add_bias_kv or add_zero_attn adds keys of its own; its calls are not recorded"
    )


PATH = MhaPath()
