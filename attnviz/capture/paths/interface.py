"""transformers' ``AttentionInterface`` (when transformers is imported): ``get_interface`` and
item lookup return the function the model asked for (``eager_attention_forward`` or a registered
one: "sdpa", "flex_attention", "flash_attention_2", a user's) wrapped, so that each call is
recorded with what it received (Q, K, V, the mask, scaling, dropout, soft-capping, the sliding
window, sinks, a position bias) and what it returned. An SDPA call made inside is that call's
(recorded once, by the SDPA adapter, with the path that led to it)."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .. import broadcasting, shaping
from ..block_tables import describe_table
from ..calls import CapturedCall, Term
from . import merged, sdpa
from .base import MISSING, Hub, Installed, InterfaceFrame, Recorder, Swap, flag, function_name
from .flex import is_block_mask, live_mask_mod

_INTERFACE_MODULE = "transformers.modeling_utils"


class InterfacePath:
    name = "attention_interface"

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        pass  # nothing of a model's own

    def install(self, hub: Hub, installed: Installed) -> None:
        interface_module = sys.modules.get(_INTERFACE_MODULE)
        interface = getattr(interface_module, "AttentionInterface", None) if interface_module is not None else None
        if not isinstance(interface, type):
            return
        interface_type: Any = interface
        get_interface = interface.__dict__.get("get_interface", MISSING)
        getitem = interface.__dict__.get("__getitem__", MISSING)
        base_get_interface = interface_type.get_interface
        base_getitem = interface_type.__getitem__

        def traced_get_interface(self_: Any, attn_implementation: Any, default: Callable[..., Any]) -> Any:
            fn = base_get_interface(self_, attn_implementation, default)
            return _traced(hub, installed, attn_implementation or "eager", fn)

        def traced_getitem(self_: Any, key: Any) -> Any:
            return _traced(hub, installed, str(key), base_getitem(self_, key))

        installed.swaps.append(
            Swap(interface, "get_interface", get_interface, traced_get_interface, "AttentionInterface")
        )
        installed.swaps.append(Swap(interface, "__getitem__", getitem, traced_getitem, "AttentionInterface"))


def _traced(hub: Hub, installed: Installed, implementation: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (an attention function of transformers' interface) wrapped to be recorded; one
    wrapper per function, made once while the patch is installed."""
    if not callable(fn) or getattr(fn, "_attnviz_traced", False):
        return fn
    key = (implementation, id(fn))
    wrapper = installed.interface_wrappers.get(key)
    if wrapper is not None:
        return wrapper
    frames = hub.frames
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None

    @functools.wraps(fn)
    def traced(*args: Any, **kwargs: Any) -> Any:
        recipients = hub.recipients() if frames.interface is None and frames.mha is None and not frames.depth else []
        if not recipients:
            return fn(*args, **kwargs)
        frame = frames.interface = InterfaceFrame(implementation, fn, args[0] if args else None, {})
        try:
            frame.arguments = interface_arguments(signature, args, kwargs)
        except Exception:  # noqa: BLE001 - a call the signature does not describe runs unrecorded
            frames.interface = None
            return fn(*args, **kwargs)
        frames.depth += 1
        try:
            edited = hub._intervene_interface(implementation, frame, fn) if hub.interventions else None
            result = fn(*args, **kwargs) if edited is None else edited
        finally:
            frames.interface = None
            frames.depth -= 1
        for capture in recipients:
            capture._guarded(functools.partial(record, capture, frame, result))
        return result

    traced._attnviz_traced = True  # type: ignore[attr-defined]
    installed.interface_wrappers[key] = traced
    return traced


def interface_arguments(
    signature: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """A transformers attention function's arguments by name: (module, query, key, value,
    attention_mask) first, then scaling, dropout and whatever else was passed (soft-capping,
    the sliding window, sinks as ``s_aux``, ``position_bias``, ``is_causal``), with the
    function's own defaults."""
    names = ("module", "query", "key", "value", "attention_mask")
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            bound = None
        if bound is not None:
            bound.apply_defaults()
            given = dict(bound.arguments)
            for key, value in list(given.items()):
                if signature.parameters[key].kind is inspect.Parameter.VAR_KEYWORD:
                    given.pop(key)
                    given.update(value)
            if all(name in given for name in names):
                return given
    given = dict(zip(names, args))
    given.update(kwargs)
    if not all(name in given for name in names):
        raise TypeError("not an attention function call: (module, query, key, value, attention_mask)")
    return given


def record(capture: Recorder, frame: InterfaceFrame, result: Any) -> None:
    """A transformers attention function returned: its inner SDPA call is the call (with the
    path that led to it); else what the function itself received and returned."""
    if frame.inner is not None:
        sdpa.record(capture, *frame.inner, frame)
        return
    a = frame.arguments
    q, k, v, mask = a["query"], a["key"], a["value"], a["attention_mask"]
    if not all(isinstance(t, torch.Tensor) for t in (q, k, v)) or q.dim() != 4:
        raise TypeError("an attention function given no (B, H, L, d) tensors is not recorded")
    q, k, v, _one_kv_head, broadcast_note = broadcasting.broadcast(q, k, v)
    module = frame.module
    out: Any
    out, weights = (result[0], result[1] if len(result) > 1 else None) if isinstance(result, tuple) else (result, None)
    if isinstance(out, torch.Tensor) and out.dim() == 4 and out.shape[1] == q.shape[2] and out.shape[2] == q.shape[1]:
        out = out.transpose(1, 2)  # transformers' functions return (B, L_q, H, d_v)
    if not isinstance(out, torch.Tensor) or out.shape[:3] != q.shape[:3]:
        out = None
    n_k = k.shape[2]
    terms: list[Term] = []
    mask_mod = None
    kpm = None
    attn_mask: torch.Tensor | None = None
    notes: list[str] = [broadcast_note]
    implementation = frame.implementation
    softcap = a.get("softcap")
    if isinstance(softcap, (int, float)) and not isinstance(softcap, bool) and softcap > 0:
        terms.append(Term("softcap", "softcap", cap=float(softcap)))
    unhonoured = None  # block sparsity of a block table that the CPU computed (block_tables)
    if is_block_mask(mask):
        mask_mod = live_mask_mod(mask, q.is_cuda)
        table_note, unhonoured = describe_table(mask, q.is_cuda)
        notes.append(table_note)
    elif isinstance(mask, torch.Tensor):
        if mask.dim() == 2:  # a padding mask (B, L_k), 1 = attend: flash-attention functions take these
            kpm = mask[:, -n_k:] == 0
        else:
            attn_mask = mask[..., :n_k] if mask.shape[-1] > n_k else mask  # as the eager functions slice it
            if implementation == "eager" and attn_mask.dtype == torch.bool:
                # Eager functions add the mask to the scores: a boolean one adds 1 where it
                # says True and masks nothing (a 4-D boolean mask passed through, as
                # Grounding DINO's text backbone gets one). Recorded as what was added.
                attn_mask = attn_mask.to(q.dtype)
                notes.append(
                    QT_TRANSLATE_NOOP("Capture", "a boolean mask added to the scores as 0 and 1 by the eager function")
                )
    bias = a.get("position_bias")
    if isinstance(bias, torch.Tensor):
        terms.append(Term("bias", "position_bias", values=shaping.copy(bias[..., :n_k])))
    sinks = a.get("s_aux")
    if not isinstance(sinks, torch.Tensor):
        sinks = a.get("sinks")  # Inkling 2 passes them by this name, one per query and head
    if not isinstance(sinks, torch.Tensor):
        sinks = getattr(module, "sinks", None) if implementation == "eager" else None
    if isinstance(sinks, torch.Tensor) and sinks.numel() != q.shape[1]:
        sinks = per_query_sinks(sinks, q.shape)
        if sinks is not None:
            notes.append(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "a sink logit per query of each head, in the softmax as the model computes it (an extra "
                    "logit with a zero value: each row's weights sum to less than 1, as the model reports them)",
                )
            )
        else:
            notes.append(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "sink logits of a shape that is neither one per head nor one per query are not recorded: "
                    "recomputed without them",
                )
            )
    after = sinks is not None and sinks_after_softmax(weights, q.shape, q.dtype)
    if after:
        notes.append(
            QT_TRANSLATE_NOOP(
                "Capture",
                "sinks applied after the softmax, as the model does (each row's output scaled by "
                "sigmoid(logsumexp - sink)): the model reports its weights before them, as weights() returns "
                "them; the run's map shows them with the sink's share (what the output mixes)",
            )
        )
    self_keys = merged.self_keys(capture, n_k)
    if self_keys:
        notes.append(merged.note(self_keys, n_k))
    window = a.get("sliding_window")
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        notes.append(
            message(
                QT_TRANSLATE_NOOP("Capture", "sliding window of {window} keys (in the mask the model built)"),
                window=window,
            )
        )
    # Eager functions apply the mask they are given and nothing else (no causal mask of
    # their own); the others take the causal flag from the module when no mask says it.
    is_causal = False
    if implementation != "eager" and attn_mask is None and mask_mod is None:
        given_flag = a.get("is_causal")
        is_causal = bool(getattr(module, "is_causal", False) if given_flag is None else given_flag) and q.shape[2] > 1
    scaling = a.get("scaling")
    dropout = float(a.get("dropout", 0.0) or 0.0) if getattr(module, "training", False) else 0.0
    returned = weights if out is None and isinstance(weights, torch.Tensor) else None
    context = capture._context()
    capture._add(
        lambda: CapturedCall(
            "",
            "attention_interface" if mask_mod is None else "flex_attention",
            shaping.copy(q),
            shaping.copy(k),
            shaping.copy(v),
            q.dtype,
            key_padding_mask=None if kpm is None else shaping.copy(kpm),
            is_causal=is_causal,
            scale=None if scaling is None else float(scaling),
            dropout_p=dropout,
            enable_gqa=k.shape[1] != q.shape[1],
            output=shaping.copy(out),
            note="; ".join(n for n in notes if n),
            mask_mod=mask_mod,
            terms=terms,
            sinks=shaping.copy(sinks.detach()) if sinks is not None else None,
            sinks_after_softmax=after,
            self_keys=self_keys,
            returned_weights=shaping.copy(returned),
            path=CallPath(
                implementation,
                function_name(frame.function),
                weights_requested=flag(a.get("output_attentions")),
                unhonoured_blocks=unhonoured,
            ),
            cross=context["cross"],
            encoder=context["encoder"],
            module_key=context["module_key"],
        ),
        context["base"],
        [q, k, v, out, returned, *(t.values for t in terms if t.values is not None)],
        attn_mask,
    )


PATH = InterfacePath()


def per_query_sinks(sinks: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor | None:
    """Sink logits given one per query of each head, as Inkling 2 passes them ((B, H, L_q, 1):
    the extra column its eager function concatenates to the scores), as (B, H, L_q); None for
    any other shape."""
    b, h, n_q = (int(n) for n in shape[:3])
    given = sinks.detach()
    if given.dim() == 4 and given.shape[-1] == 1:
        given = given[..., 0]
    if given.dim() != 3 or any(n not in (1, m) for n, m in zip(given.shape, (b, h, n_q))):
        return None
    return given.expand(b, h, n_q)


def sinks_after_softmax(weights: Any, shape: tuple[int, ...], dtype: torch.dtype) -> bool:
    """Whether a call with sinks returned weights whose rows sum to 1: the model applied its
    sinks after the softmax (to the output) and reports the weights before them (Granite's
    sliding-window variants); a sink logit inside the softmax (gpt-oss) leaves rows summing to
    less. Tolerance: the softmax's rounding over a row, wider in half precision."""
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape[:3]) != tuple(shape[:3]):
        return False
    rows = weights.detach().double().sum(-1)
    rows = rows[torch.isfinite(rows) & (rows > 0)]
    tolerance = 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4
    return bool(rows.numel()) and bool(((rows - 1).abs() <= tolerance).all())
