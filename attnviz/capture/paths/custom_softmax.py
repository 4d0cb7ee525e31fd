"""A softmax module of a model's own that computes its weights without ``torch.softmax``:
I-BERT's ``IntSoftmax`` (an integer polynomial exponent, quantised probabilities). Attached per
captured model: each module class named ``...Softmax`` that is not PyTorch's gets its
``forward`` wrapped while captures are open; its output, when an attention module (a class
named ``...Attention...``) called it, is recorded as that module's weights (weights only). A
``torch.softmax`` it calls inside is its own, not a call."""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .. import shaping
from ..calls import CapturedCall
from .base import MISSING, Hub, Installed, Recorder, Swap
from .softmax import module_mask, named_arguments


def is_custom_softmax(cls: type) -> bool:
    return cls.__name__.lower().endswith("softmax") and not cls.__module__.startswith("torch.")


class CustomSoftmaxPath:
    name = "custom_softmax"

    def install(self, hub: Hub, installed: Installed) -> None:
        pass  # nothing process-wide: the classes are a model's own (``attach``)

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        for cls in {type(m) for m in model.modules()}:
            key = (id(cls), "forward")
            if not is_custom_softmax(cls) or key in installed.rebound:
                continue
            installed.rebound.add(key)
            swap = Swap(cls, "forward", cls.__dict__.get("forward", MISSING), _wrapped(hub, cls.forward), cls.__name__)
            swap.install()
            installed.swaps.append(swap)


def _wrapped(hub: Hub, forward: Any) -> Any:
    frames = hub.frames

    @functools.wraps(forward)
    def wrapper(module: nn.Module, *args: Any, **kwargs: Any) -> Any:
        outside = not (frames.depth or frames.mha is not None or frames.interface is not None)
        recipients = hub.recipients(in_model=True) if outside and not torch.compiler.is_compiling() else []
        if not recipients:
            return forward(module, *args, **kwargs)
        frames.depth += 1  # a softmax it calls inside is its own
        try:
            out = forward(module, *args, **kwargs)
        finally:
            frames.depth -= 1
        weights = out[0] if isinstance(out, tuple) and out else out
        for capture in recipients:
            capture._guarded(functools.partial(record, capture, module, weights))
        return out

    return wrapper


def record(capture: Recorder, softmax: nn.Module, out: Any) -> None:
    """The output of a custom softmax module as the weights of the module that called it."""
    stack, given = capture._local.stack, capture._local.given
    if not isinstance(out, torch.Tensor) or not out.is_floating_point() or len(stack) < 2:
        return
    module = stack[-2]  # the attention module; the softmax module itself is on top
    if not any(word in type(module).__name__.lower() for word in ("attention", "attn")):
        return  # a softmax module outside attention (an output layer's) is no attention call
    weights = shaping.weights_4d(out, module)
    if weights is None or bool((weights < 0).any()):  # a log-softmax (an output layer's) is no attention
        return
    args, kwargs = given[-2] if len(given) >= 2 else ((), {})
    kwargs = named_arguments(module, args, kwargs)
    mask, kpm = module_mask(args, kwargs, tuple(weights.shape))  # type: ignore[arg-type]
    context = capture._context(up=1)
    note = message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "a softmax of its own ({softmax} in {module}): its output was recorded as the weights, as the model "
            "computed them (an integer softmax's rows sum to 1 only up to its rounding); queries, keys and values "
            "are not visible to a capture (weights only)",
        ),
        softmax=type(softmax).__name__,
        module=type(module).__name__,
    )
    capture._add(
        lambda: CapturedCall(
            "",
            "softmax",
            None,
            None,
            None,
            out.dtype,
            key_padding_mask=kpm,
            recorded_weights=shaping.copy(weights.detach()),
            note=note,
            path=CallPath(
                "module",
                f"{type(softmax).__module__}.{type(softmax).__name__}",
                weights_only=True,
            ),
            cross=context["cross"],
            encoder=context["encoder"],
            module_key=context["module_key"],
        ),
        context["base"],
        [weights],
        mask,
    )


PATH = CustomSoftmaxPath()
