"""``torch.nn.functional.scaled_dot_product_attention``: a wrapper that calls the original with
the same arguments and hands each call to the captures it belongs to. A call made inside
nn.MultiheadAttention or a transformers attention function is that call's (kept on its frame,
recorded once, with the path that led to it); one made inside flex_attention or a recorded
function of a model's own is not a call of its own."""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP

from .. import broadcasting, shaping
from ..calls import CapturedCall
from . import merged
from .base import Hub, Installed, InterfaceFrame, Recorder, Swap, flag, function_name, sdpa_arguments

_F = torch.nn.functional


class SdpaPath:
    name = "sdpa"

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        pass  # nothing of a model's own

    def install(self, hub: Hub, installed: Installed) -> None:
        frames = hub.frames
        sdpa_original = installed.sdpa = _F.scaled_dot_product_attention

        def sdpa(*args: Any, **kwargs: Any) -> Any:
            # The original, marked as running: the function mode lets it through.
            frames.in_sdpa += 1
            try:
                return sdpa_original(*args, **kwargs)
            finally:
                frames.in_sdpa -= 1

        def scaled_dot_product_attention(*args: Any, **kwargs: Any) -> Any:
            mha, interface = frames.mha, frames.interface
            if (
                hub.interventions
                and interface is None
                and not frames.depth
                and (mha is None or mha.inner is None)
                and (edited := hub._intervene_sdpa(args, kwargs, sdpa)) is not None
            ):
                (args, kwargs), out = ((), edited[0]), edited[1]
            else:
                out = sdpa(*args, **kwargs)
            if mha is not None:
                if mha.inner is None:  # the call nn.MultiheadAttention makes inside: recorded as that module's
                    mha.inner = (sdpa_arguments(args, kwargs), out)
                return out
            if interface is not None:
                if interface.inner is None:  # the call a transformers attention function makes inside
                    interface.inner = (sdpa_arguments(args, kwargs), out)
                return out
            if frames.depth:
                return out
            for capture in hub.recipients():
                capture._guarded(functools.partial(record, capture, sdpa_arguments(args, kwargs), out, None))
            return out

        scaled_dot_product_attention.__doc__ = sdpa_original.__doc__
        installed.sdpa_wrapper = scaled_dot_product_attention
        installed.swaps.append(
            Swap(_F, "scaled_dot_product_attention", sdpa_original, scaled_dot_product_attention, _F.__name__)
        )


def record(capture: Recorder, given: dict[str, Any], out: Any, frame: InterfaceFrame | None) -> None:
    """One SDPA call (``given``: its arguments by name); ``frame``: the transformers attention
    function that made it, whose path and packed GQA it carries."""
    q, k, v, mask = given["query"], given["key"], given["value"], given["attn_mask"]
    if not all(isinstance(t, torch.Tensor) and not t.is_nested for t in (q, k, v, out)):
        raise TypeError("nested or non-tensor inputs are not recorded")
    enable_gqa = bool(given["enable_gqa"])
    packed = False
    note = ""
    path = CallPath(
        "sdpa", "torch.nn.functional.scaled_dot_product_attention", sdpa_backend=shaping.sdpa_backend(given)
    )
    if frame is not None:
        unfolded = shaping.unpack_gqa(frame.arguments["query"], q, k, mask, out)
        if unfolded is not None:
            q, mask, out = unfolded
            enable_gqa = packed = True
        path = CallPath(
            frame.implementation,
            function_name(frame.function),
            weights_requested=flag(frame.arguments.get("output_attentions")),
            sdpa_backend=path.sdpa_backend,
            packed_gqa=packed,
        )
        if packed:
            note = QT_TRANSLATE_NOOP(
                "Capture",
                "a GQA decode step transformers ran with its query heads folded into the query axis: shown "
                "unfolded, one query per head",
            )
    q, k, v, one_kv_head, broadcast_note = broadcasting.broadcast(q, k, v)
    enable_gqa = enable_gqa or one_kv_head
    note = "; ".join(n for n in (note, broadcast_note) if n)
    own_keys = merged.self_keys(capture, k.shape[-2]) if frame is not None and k.dim() == 4 else 0
    if own_keys:
        note = "; ".join(n for n in (note, merged.note(own_keys, k.shape[-2])) if n)
    context = capture._context()
    capture._add(
        lambda: CapturedCall(
            "",
            "scaled_dot_product_attention",
            shaping.copy(q),
            shaping.copy(k),
            shaping.copy(v),
            q.dtype,
            is_causal=bool(given["is_causal"]),
            scale=None if given["scale"] is None else float(given["scale"]),
            dropout_p=float(given["dropout_p"]),
            enable_gqa=enable_gqa,
            output=shaping.copy(out),
            note=note,
            self_keys=own_keys,
            path=path,
            cross=context["cross"],
            encoder=context["encoder"],
            module_key=context["module_key"],
        ),
        context["base"],
        [q, k, v, out],
        mask,
    )


PATH = SdpaPath()
