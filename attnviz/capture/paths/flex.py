"""``torch.nn.attention.flex_attention.flex_attention``: the function object itself runs the
wrapper while captures are open (its code is swapped, see :class:`FlexHook`), so a call through
any name, closure or module that holds it is recorded. Its HigherOrderOperator is reached only
inside the ``torch.compile`` it runs under, where a function mode sees it once at trace time, not
once per call. Also the block-mask helpers the transformers interface adapter shares."""

from __future__ import annotations

import functools
import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath

from ...engine.block_masks import block_mask_mod
from .. import shaping
from ..block_tables import describe_table
from ..calls import CapturedCall, Term
from .base import Hub, Installed, Recorder, Swap

FLEX_MODULE = "torch.nn.attention.flex_attention"
_TRAMPOLINE_GLOBAL = "__attnviz_flex_wrapper__"


def _trampoline(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - its code runs as flex_attention's
    return __attnviz_flex_wrapper__(*args, **kwargs)  # type: ignore[name-defined]  # noqa: F821


class FlexHook:
    """``flex_attention``'s own function object made to run the wrapper: its code is replaced by
    one that calls the wrapper (through a global of its module), so every name, closure and
    module holding the function reaches it. The wrapper calls ``original``, a copy of the
    function with its own code. Put back by ``restore``; False when other code changed it."""

    def __init__(self, flex: types.FunctionType, wrapper: Callable[..., Any]) -> None:
        self.flex = flex
        self.code, self.defaults, self.kwdefaults = flex.__code__, flex.__defaults__, flex.__kwdefaults__
        self.had_signature = "__signature__" in flex.__dict__
        self.signature = inspect.signature(flex)
        original = types.FunctionType(flex.__code__, flex.__globals__, flex.__name__, flex.__defaults__, None)
        original.__kwdefaults__ = flex.__kwdefaults__
        original.__qualname__, original.__doc__ = flex.__qualname__, flex.__doc__
        self.original: Callable[..., Any] = original
        self.wrapper = wrapper
        self.installed = False

    def install(self) -> None:
        flex = self.flex
        if flex.__code__.co_freevars:  # a closure's code cannot take a trampoline's place
            return
        flex.__globals__[_TRAMPOLINE_GLOBAL] = self.wrapper
        flex.__signature__ = self.signature  # type: ignore[attr-defined]
        flex.__code__ = _trampoline.__code__
        flex.__defaults__, flex.__kwdefaults__ = None, None
        self.installed = True

    def restore(self) -> bool:
        if not self.installed:
            return True
        flex = self.flex
        ours = flex.__code__ is _trampoline.__code__
        if ours:
            flex.__code__, flex.__defaults__, flex.__kwdefaults__ = self.code, self.defaults, self.kwdefaults
            if not self.had_signature:
                flex.__dict__.pop("__signature__", None)
            flex.__globals__.pop(_TRAMPOLINE_GLOBAL, None)
        self.installed = False
        return ours


class FlexPath:
    name = "flex_attention"

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        pass  # nothing of a model's own

    def install(self, hub: Hub, installed: Installed) -> None:
        frames = hub.frames
        flex_module = _flex_module()
        flex_function = getattr(flex_module, "flex_attention", None) if flex_module is not None else None
        if not isinstance(flex_function, types.FunctionType):
            return
        installed.flex = flex_function
        hook = FlexHook(flex_function, lambda *a, **k: flex_attention(*a, **k))
        flex = hook.original  # the function with its own code: the hook's trampoline never reached
        flex_signature = hook.signature

        def flex_attention(*args: Any, **kwargs: Any) -> Any:
            recipients = [] if torch.compiler.is_compiling() or frames.depth else hub.recipients()
            if not recipients:
                return flex(*args, **kwargs)
            frames.depth += 1
            try:
                out = flex(*args, **kwargs)
            finally:
                frames.depth -= 1
            for capture in recipients:
                capture._guarded(functools.partial(record, capture, flex_signature, args, kwargs, out))
            return out

        flex_attention.__doc__ = flex_function.__doc__
        flex_attention.__signature__ = flex_signature  # type: ignore[attr-defined]
        installed.flex_wrapper = flex_attention
        installed.flex_hook = hook
        installed.swaps.append(Swap(flex_module, "flex_attention", flex_function, flex_attention, FLEX_MODULE))


def record(
    capture: Recorder, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any
) -> None:
    """One flex_attention call: Q, K, V, its score_mod as a term, its block mask as the mask_mod
    the kernel applies."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    q, k, v = a["query"], a["key"], a["value"]
    result = out[0] if isinstance(out, tuple) else out
    if not all(isinstance(t, torch.Tensor) for t in (q, k, v, result)) or q.dim() != 4:
        raise TypeError("flex_attention given no (B, H, L, d) tensors is not recorded")
    block_mask = a.get("block_mask")
    score_mod = a.get("score_mod")
    terms = [] if score_mod is None or _is_identity(score_mod) else [Term("score_mod", "score_mod", fn=score_mod)]
    note, unhonoured = describe_table(block_mask, q.is_cuda) if block_mask is not None else ("", None)
    context = capture._context()
    capture._add(
        lambda: CapturedCall(
            "",
            "flex_attention",
            shaping.copy(q),
            shaping.copy(k),
            shaping.copy(v),
            q.dtype,
            scale=None if a.get("scale") is None else float(a["scale"]),
            enable_gqa=bool(a.get("enable_gqa")),
            output=shaping.copy(result),
            note=note,
            mask_mod=live_mask_mod(block_mask, q.is_cuda) if block_mask is not None else None,
            terms=terms,
            path=CallPath(
                "flex_attention", "torch.nn.attention.flex_attention.flex_attention", unhonoured_blocks=unhonoured
            ),
            cross=context["cross"],
            encoder=context["encoder"],
            module_key=context["module_key"],
        ),
        context["base"],
        [q, k, v, result],
    )


def _flex_module() -> Any:
    """FlexAttention's module, imported now if it is not yet (about 10 ms): code that imports
    ``flex_attention`` by name while a capture is open gets the hooked function."""
    try:
        return importlib.import_module(FLEX_MODULE)
    except Exception:  # noqa: BLE001 - a torch without FlexAttention: nothing of it to record
        return None


def is_block_mask(mask: Any) -> bool:
    return type(mask).__name__ == "BlockMask" and hasattr(mask, "mask_mod")


def live_mask_mod(block_mask: Any, on_gpu: bool = True) -> Callable[..., Any] | None:
    """What the kernel masks for a block mask: on a GPU its mask_mod within the blocks its table
    lists (``engine.block_masks``: blocks it skips are masked, full blocks skip the mask_mod); on
    the CPU, where PyTorch's flex_attention computes every block, its mask_mod alone (the
    call's note says so, ``block_tables``); None for "no mask"."""
    fn = getattr(block_mask, "mask_mod", None)
    if fn is None:
        return None
    try:
        sparsity = float(block_mask.sparsity())
    except Exception:  # noqa: BLE001 - a table it cannot measure is read in full below
        sparsity = -1.0
    if getattr(fn, "__name__", "") == "noop_mask" and sparsity <= 0.0 and _all_full(block_mask):
        return None
    if not on_gpu:  # PyTorch's CPU flex_attention computes every block: the mask_mod alone
        return None if getattr(fn, "__name__", "") == "noop_mask" else fn
    kernel = block_mask_mod(block_mask)
    kernel.__wrapped__ = fn  # type: ignore[attr-defined]  # the model's own mask_mod, for its name
    kernel.__name__ = getattr(fn, "__name__", kernel.__name__)
    return kernel


def _all_full(block_mask: Any) -> bool:
    """Every block is computed without the mask_mod (FlexAttention's empty block mask)."""
    full = getattr(block_mask, "full_kv_num_blocks", None)
    if full is None:
        return bool(getattr(block_mask, "BLOCK_SIZE", (0, 0))[0] >= 2**30)
    n_kb = -(-int(block_mask.seq_lengths[1]) // int(block_mask.BLOCK_SIZE[1]))
    return bool((full == n_kb).all())


def _is_identity(score_mod: Any) -> bool:
    return getattr(score_mod, "__name__", "") == "_identity"


PATH = FlexPath()
