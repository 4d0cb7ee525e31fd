"""``Tensor.softmax`` and ``torch.softmax``, seen only inside a captured model's modules and
outside every other recorded function: the one thing attention code of a model's own (BLOOM,
GPT-J, DeBERTa-v2, ...) always calls, so its weights are recorded even where nothing else can be
(weights only, with the mask the module was given)."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .. import shaping
from ..calls import CapturedCall
from . import banded, block_sparse, global_local
from .base import MISSING, Hub, Installed, Recorder, Swap, flag

#: The attribute a swapped function's wrapper keeps its original under (the function mode runs it).
ORIGINAL = "__attnviz_original__"
#: A module's forward arguments that carry the mask it built (a call seen through its softmax).
_MASK_ARGUMENTS = ("attention_mask", "attn_mask", "mask", "causal_mask")


class SoftmaxPath:
    name = "softmax"

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        pass  # nothing of a model's own

    def install(self, hub: Hub, installed: Installed) -> None:
        frames = hub.frames
        tensor_softmax = torch.Tensor.__dict__.get("softmax", MISSING)
        original_tensor_softmax = torch.Tensor.softmax
        torch_softmax = torch.softmax

        def seen_softmax(inputs: Any, dim: Any, out: Any) -> None:
            if frames.depth or frames.mha is not None or frames.interface is not None:
                return
            if not isinstance(inputs, torch.Tensor) or inputs.dim() < 3 or dim not in (-1, inputs.dim() - 1):
                return
            for capture in hub.recipients(in_model=True):
                capture._guarded(functools.partial(record, capture, inputs, out))

        def softmax_method(self_: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            out = original_tensor_softmax(self_, *args, **kwargs)
            if hub.captures and not torch.compiler.is_compiling():
                seen_softmax(self_, args[0] if args else kwargs.get("dim"), out)
            return out

        def softmax_function(inputs: Any, *args: Any, **kwargs: Any) -> Any:
            out = torch_softmax(inputs, *args, **kwargs)
            if hub.captures and not torch.compiler.is_compiling():
                seen_softmax(inputs, args[0] if args else kwargs.get("dim"), out)
            return out

        # Under a capture's function mode (CallMode) a call of the original softmax is handed to the
        # mode as the attribute it is now, this wrapper: the mode runs the original instead, so
        # the wrapper the caller entered records the call once.
        setattr(softmax_method, ORIGINAL, original_tensor_softmax)
        setattr(softmax_function, ORIGINAL, torch_softmax)
        installed.swaps.append(Swap(torch.Tensor, "softmax", tensor_softmax, softmax_method, "torch.Tensor"))
        installed.swaps.append(Swap(torch, "softmax", torch_softmax, softmax_function, "torch"))


def over_vocabulary(module: nn.Module, inputs: torch.Tensor) -> bool:
    """Whether a softmax is over the vocabulary a language model's own head writes ((batch,
    length, vocabulary): the module's config names it, a linear child outputs it): BLT's patcher takes the
    entropy of its next-byte distribution inside the model, which is no attention; Ovis2's visual
    tokenizer its visual words' probabilities."""
    config = getattr(module, "config", None)
    vocab = getattr(config, "vocab_size", None)
    # a visual vocabulary less the indicator tokens its head does not write (Ovis2's tokenizer)
    indicators = getattr(config, "num_visual_indicator_tokens", 0)
    width = int(inputs.shape[-1]) if inputs.dim() == 3 else -1
    if not isinstance(vocab, int) or width not in (vocab, vocab - (indicators if isinstance(indicators, int) else 0)):
        return False  # (batch, length, vocabulary): attention weights hold their heads apart
    return any(isinstance(child, nn.Linear) and child.out_features == width for child in module.children())


def record(capture: Recorder, inputs: torch.Tensor, out: Any) -> None:
    """The softmax of a model's own attention code: its weights, the module's mask, and a note
    that nothing else can be seen. Dropped at the end if the module made a recorded call."""
    stack, given = capture._local.stack, capture._local.given
    module = stack[-1] if stack else None
    if not isinstance(out, torch.Tensor) or module is None or block_sparse.is_block_sparse(module):
        return  # BigBird's block-sparse pieces: its assembled map is recorded as it leaves
    if over_vocabulary(module, inputs):
        return  # a next-token distribution (BLT's entropy patcher), not attention
    args, kwargs = given[-1] if given else ((), {})
    kwargs = named_arguments(module, args, kwargs)
    name = type(module).__name__
    note = message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "attention code of its own ({module}): its weights were recorded at its softmax; its queries, "
            "keys and values are not visible to a capture (weights only)",
        ),
        module=name,
    )
    weights: torch.Tensor | None
    layout: global_local.Layout | None = None
    band = banded.recognise(module, out)
    if band is not None:  # Longformer's band: its (L, L) map, the mask already in it
        weights, band_note = banded.dense(out, band, kwargs)
        note = message(QT_TRANSLATE_NOOP("Capture", "{first}; {second}"), first=note, second=band_note)
        mask, kpm = None, banded.padded_positions(out, kwargs)
        global_tokens = banded.global_tokens(out, kwargs)
    elif global_local.recognise(module, out):  # PEGASUS-X's blocks: their (L, G + L) map
        weights, layout, blocks_note = global_local.dense(out)
        note = message(QT_TRANSLATE_NOOP("Capture", "{first}; {second}"), first=note, second=blocks_note)
        mask, kpm = None, global_local.padded_keys(module, kwargs, weights.shape[0], weights.shape[-1])
        global_tokens = None
    elif hasattr(module, "one_sided_attn_window_size"):
        # A banded module's other softmax: its global queries' rows, written into its band's map.
        last = capture.calls[-1] if capture.calls else None
        banded.fill_global_rows(last, capture._context()["module_key"], out, kwargs)
        return
    else:
        weights = shaping.weights_4d(out, module)
        if weights is None:
            return
        mask, kpm = module_mask(args, kwargs, tuple(weights.shape))  # type: ignore[arg-type]
        if mask is None and kpm is None:  # a global-local module's global tokens over every key
            kpm = global_local.padded_keys(module, kwargs, weights.shape[0], weights.shape[-1])
        global_tokens = None
    # A band's (L, L) map is a tensor of the capture's own, made on the CPU: kept as it is (a copy
    # would hold a second L x L map at the peak, a third of the capture's memory at 4096 tokens).
    owned = (band is not None or layout is not None) and weights.device.type == "cpu" and weights.is_contiguous()
    context = capture._context()
    rate = dropout_rate(module)
    if rate > 0:  # the weights are recorded before the module's dropout, which then ran
        note = message(
            QT_TRANSLATE_NOOP("Capture", "{first}; {second}"),
            first=note,
            second=message(
                QT_TRANSLATE_NOOP(
                    "Capture", "dropout (p = {p}) was applied: the model's output is random and was not compared"
                ),
                p=f"{rate:g}",
            ),
        )

    def make() -> CapturedCall:
        call = CapturedCall(
            "",
            "softmax",
            None,
            None,
            None,
            inputs.dtype,
            key_padding_mask=kpm,
            recorded_weights=weights if owned else shaping.copy(weights),
            note=note,
            path=CallPath(
                "module",
                f"{type(module).__module__}.{name}",
                weights_requested=flag(kwargs.get("output_attentions")),
                weights_only=True,
            ),
            cross=context["cross"],
            encoder=context["encoder"],
            module_key=context["module_key"],
            band_window=band,
            global_tokens=global_tokens,
        )
        if layout is not None:
            setattr(call, global_local.LAYOUT, layout)
        return call

    capture._add(make, context["base"], [weights], mask)


def dropout_rate(module: nn.Module) -> float:
    """The attention dropout a module in training mode applies: its own nn.Dropout children's
    rate, else a float ``*dropout*`` attribute (0.0 in eval mode)."""
    if not module.training:
        return 0.0
    rates = [float(child.p) for child in module.children() if isinstance(child, nn.modules.dropout._DropoutNd)]
    rates += [
        value
        for attr, value in vars(module).items()
        if "dropout" in attr.lower() and isinstance(value, float) and not isinstance(value, bool)
    ]
    return max(rates, default=0.0)


def named_arguments(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A module's forward arguments by name (positional ones included), as far as its signature
    says; the keyword arguments alone when it cannot be read."""
    try:
        bound = inspect.signature(module.forward).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return kwargs
    named = dict(bound.arguments)
    for key, value in list(named.items()):
        if isinstance(value, dict) and key == "kwargs":
            named.update(named.pop(key))
    return named


def module_mask(
    args: tuple[Any, ...], kwargs: dict[str, Any], shape: tuple[int, int, int, int]
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The mask an attention module of a model's own was given (by keyword, or a positional
    tensor of a mask's shape): (B, 1 or H, L_q, L_k) float or bool as SDPA reads it, or a
    (B, L_k) padding mask, 1 = attend (returned as a key padding mask, True = ignore)."""
    b, h, n_q, n_k = shape
    candidates = [kwargs.get(name) for name in _MASK_ARGUMENTS] + [a for a in args[1:] if isinstance(a, torch.Tensor)]
    for mask in candidates:
        if not isinstance(mask, torch.Tensor) or mask.is_nested:
            continue
        if mask.dim() == 4 and mask.shape[-1] >= n_k and mask.shape[0] in (1, b) and mask.shape[1] in (1, h):
            if mask.shape[-2] not in (1, n_q):
                continue
            if mask.dtype == torch.bool or mask.dtype.is_floating_point:
                return (mask[..., :n_k] if mask.shape[-1] > n_k else mask), None
        if mask.dim() == 2 and mask.shape == (b, n_k) and not mask.dtype.is_floating_point:
            return None, shaping.copy(mask == 0)
    return None, None


PATH = SoftmaxPath()
