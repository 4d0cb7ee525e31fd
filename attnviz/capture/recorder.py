"""``capture(model)``: record every attention call a PyTorch model makes, as it makes it.

While the context is open:

* ``torch.nn.functional.scaled_dot_product_attention`` is replaced by a wrapper that calls the
  original with the same arguments, returns exactly what it returned, and keeps CPU copies of
  the arguments and the result. Hugging Face (and nn.MultiheadAttention internally) call it
  through the module attribute, so they reach the wrapper; code that bound the function to
  another name before the capture started does not.
* ``nn.MultiheadAttention.forward`` is wrapped likewise: it records the masks as the module was
  given them, and the heads from the SDPA call the module makes inside (with
  ``need_weights=False``; that inner call is not recorded twice) or, with the default
  ``need_weights=True``, from the module's own input projections.
* PyTorch's fused "fast path" for nn.MultiheadAttention and nn.TransformerEncoderLayer
  (inference without gradients) is switched off, because it runs in C++ where no call can be
  seen. Those modules then compute through their ordinary code: the same attention, up to
  rounding, except that a nested-tensor fast path returns zeros at padded positions.
* with a model, forward hooks on its modules name each call after the module that made it
  (``encoder.layer.3.attention.self``); a module called again gets " #2", " #3"...

Captures compose: the functions are patched once for the whole process while any capture is
open (a registry of the open ones, ``_PATCH``), and put back when the last one closes, whatever
happened inside and in whichever order they close. Each capture records the calls made inside
it: on the thread that entered it (captures nested on one thread each record what runs inside
them), and on another thread where no capture is open only the calls made inside its own
model's modules (``nn.DataParallel`` replicas run on threads of their own). Recording never
changes what the model computes, and a failure to record is a line in ``warnings``, never an
exception in the model. Copies count against a memory budget: past it recording stops and
``warnings`` says so.
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, overload

import torch
from torch import nn

from ..engine.budget import available_memory, format_bytes
from ..io.capture_file import save_capture
from ..model_run import ModelRun, ModelRunError
from ..tr import QT_TRANSLATE_NOOP, message, plural
from .calls import CapturedCall, Converted

__all__ = ["DEFAULT_CAPTURE_BUDGET", "Capture", "capture"]

#: Bytes of copies a capture keeps by default (never more than half the memory available).
DEFAULT_CAPTURE_BUDGET = 2 * 2**30

_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
_F = torch.nn.functional


def capture(
    model: nn.Module | None = None,
    *,
    tokens: object = None,
    modules: Iterable[str | nn.Module] | None = None,
    memory_budget: float | None = None,
) -> Capture:
    """Record the attention calls made inside ``with capture(model) as cap:`` (see ``Capture``)."""
    return Capture(model, tokens=tokens, modules=modules, memory_budget=memory_budget)


@dataclass
class _MhaFrame:
    """What the SDPA call made inside an nn.MultiheadAttention forward passed and returned."""

    inner: tuple[dict[str, Any], torch.Tensor] | None = None


@dataclass
class _Local(threading.local):
    """One capture's view of one thread: the modules of its model running there."""

    stack: list[nn.Module] = field(default_factory=list)
    selected: int = 0


class _Frames(threading.local):
    """Per thread: the nn.MultiheadAttention forward being recorded, whose inner SDPA call is its."""

    mha: _MhaFrame | None = None


@dataclass(frozen=True)
class _Saved:
    """What the patch replaced, and its own wrappers (to tell whether other code replaced them since)."""

    sdpa: Callable[..., Any]
    mha_forward: Callable[..., Any]
    fastpath: bool
    sdpa_wrapper: Callable[..., Any]
    forward_wrapper: Callable[..., Any]


class _Patch:
    """The one process-wide patch of SDPA and nn.MultiheadAttention.forward, and the captures open.

    The first capture to open installs the wrappers (saving what was there), the last to close
    puts it back: captures can nest and overlap across threads in any order, and PyTorch is left
    exactly as it was found. The wrappers hand each call to the captures it belongs to
    (``_recipients``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: The open captures, replaced whole under the lock (readers take it without locking).
        self.captures: tuple[Capture, ...] = ()
        self._saved: _Saved | None = None
        self._frames = _Frames()

    def open(self, capture: Capture) -> None:
        with self._lock:
            if self._saved is None:
                self._saved = self._install()
            self.captures = (*self.captures, capture)

    def close(self, capture: Capture) -> list[str]:
        """Forget ``capture``; the last one out restores PyTorch. Returns warnings for it."""
        with self._lock:
            if capture not in self.captures:
                return []
            self.captures = tuple(c for c in self.captures if c is not capture)
            if self.captures or self._saved is None:
                return []
            saved, self._saved = self._saved, None
            return _restore(saved)

    def _install(self) -> _Saved:
        sdpa = _F.scaled_dot_product_attention
        mha_forward = nn.MultiheadAttention.__dict__["forward"]
        fastpath = torch.backends.mha.get_fastpath_enabled()
        signature = inspect.signature(mha_forward)
        frames = self._frames

        def scaled_dot_product_attention(*args: Any, **kwargs: Any) -> Any:
            out = sdpa(*args, **kwargs)
            frame = frames.mha
            if frame is not None:
                if frame.inner is None:  # the call nn.MultiheadAttention makes inside: recorded as that module's
                    frame.inner = (_sdpa_arguments(args, kwargs), out)
                return out
            for capture in self._recipients():
                capture._guarded(functools.partial(capture._on_sdpa, args, kwargs, out))
            return out

        scaled_dot_product_attention.__doc__ = sdpa.__doc__

        def forward(module: nn.MultiheadAttention, *args: Any, **kwargs: Any) -> Any:
            recipients = self._recipients() if frames.mha is None else []
            if not recipients:
                return mha_forward(module, *args, **kwargs)
            if module.bias_k is not None or module.add_zero_attn:
                for capture in recipients:
                    capture._guarded(lambda: _refuse(module))
                return mha_forward(module, *args, **kwargs)
            frame = frames.mha = _MhaFrame()
            try:
                result = mha_forward(module, *args, **kwargs)
            finally:
                frames.mha = None
            for capture in recipients:
                capture._guarded(functools.partial(capture._record_mha, module, signature, args, kwargs, frame, result))
            return result

        saved = _Saved(sdpa, mha_forward, fastpath, scaled_dot_product_attention, forward)
        _F.scaled_dot_product_attention = scaled_dot_product_attention
        nn.MultiheadAttention.forward = forward  # type: ignore[method-assign, assignment]
        # The fused fast path runs in C++, where no call can be seen.
        torch.backends.mha.set_fastpath_enabled(False)
        return saved

    def _recipients(self) -> list[Capture]:
        """The captures a call made now, on this thread, belongs to: those entered on this thread
        (nested ones all record it); where none is, those whose model is running here."""
        captures = self.captures
        if not captures:
            return []
        here = threading.get_ident()
        own = [c for c in captures if c._thread == here]
        pool = own if own else [c for c in captures if c._local.stack]
        return [c for c in pool if c._wanted()]


def _restore(saved: _Saved) -> list[str]:
    """Put back what the patch replaced; what other code replaced meanwhile is left as it is, and said."""
    replaced: list[str] = []
    if _F.scaled_dot_product_attention is saved.sdpa_wrapper:
        _F.scaled_dot_product_attention = saved.sdpa
    else:
        replaced.append("torch.nn.functional.scaled_dot_product_attention")
    if nn.MultiheadAttention.__dict__.get("forward") is saved.forward_wrapper:
        nn.MultiheadAttention.forward = saved.mha_forward  # type: ignore[method-assign]
    else:
        replaced.append("nn.MultiheadAttention.forward")
    torch.backends.mha.set_fastpath_enabled(saved.fastpath)
    return [
        message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "{name} was replaced by other code while captures were open: it is left as that code set it",
            ),
            name=name,
        )
        for name in replaced
    ]


_PATCH = _Patch()


def _positive_number(value: object) -> bool:
    # float("inf") is a budget too: no limit. NaN is not > 0.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


class Capture:
    """Records attention calls; use as ``with attnviz.capture(model) as cap:``.

    ``model``: optional; names the calls after its modules (else "call 0", "call 1"...).
    ``tokens``: one sequence of strings for the whole batch, or one per batch element (B, L),
    attached to the run (``to_run``). ``modules``: record only calls made inside these modules of
    the model: names from ``model.named_modules()``, shell-style patterns of them
    ("encoder.layer.*.attention"), or the modules themselves. ``memory_budget``: bytes of copies
    to keep (default ``DEFAULT_CAPTURE_BUDGET``, capped at half the memory available); past it
    recording stops, and ``warnings`` says where.

    ``calls`` lists the :class:`CapturedCall` in call order; ``warnings`` the lines to show the
    user; ``recorded_bytes`` what the copies take.
    """

    def __init__(
        self,
        model: nn.Module | None = None,
        *,
        tokens: object = None,
        modules: Iterable[str | nn.Module] | None = None,
        memory_budget: float | None = None,
    ) -> None:
        if model is not None and not isinstance(model, nn.Module):
            raise TypeError(
                message(
                    QT_TRANSLATE_NOOP("Capture", "capture(model): model must be a torch.nn.Module, not {type}"),
                    type=type(model).__name__,
                )
            )
        if memory_budget is not None and not _positive_number(memory_budget):
            raise (ValueError if isinstance(memory_budget, (int, float)) else TypeError)(
                message(
                    QT_TRANSLATE_NOOP("Capture", "memory_budget must be a number of bytes > 0; got {value}"),
                    value=repr(memory_budget),
                )
            )
        self.model = model
        self.tokens = tokens
        self.calls: list[CapturedCall] = []
        self.warnings: list[str] = []
        self.recorded_bytes = 0
        self.memory_budget = float(memory_budget) if memory_budget is not None else _default_budget()
        self._names = {m: name for name, m in model.named_modules()} if model is not None else {}
        self._selected = self._select(modules)
        self._local = _Local()
        self._thread = 0  # the thread that entered the capture
        self._lock = threading.Lock()
        self._uses: dict[str, int] = {}
        self._masks: dict[int, tuple[torch.Tensor, int | None, torch.Tensor]] = {}
        self._stopped = False
        self._skipped = 0
        self._failures: set[str] = set()
        self._active = False
        self._used = False
        self._undo: list[Callable[[], None]] = []

    # ------------------------------------------------------------------------- the context

    def __enter__(self) -> Capture:
        if self._used:
            raise RuntimeError(
                QT_TRANSLATE_NOOP("Capture", "a capture records once: make a new one with attnviz.capture(...)")
            )
        self._used = self._active = True
        self._thread = threading.get_ident()
        try:
            for module in self._names:
                self._undo.append(module.register_forward_pre_hook(self._enter_module).remove)
                self._undo.append(module.register_forward_hook(self._leave_module, always_call=True).remove)
            _PATCH.open(self)
        except BaseException:
            self._uninstall()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._uninstall()
        if self._skipped:
            self.warnings.append(
                plural(
                    self._skipped,
                    QT_TRANSLATE_NOOP("Capture", "{n} attention call was not recorded (memory budget)"),
                    QT_TRANSLATE_NOOP("Capture", "{n} attention calls were not recorded (memory budget)"),
                )
            )
        if not self.calls and not self._stopped and exc_type is None:
            self.warnings.append(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "no attention call was recorded: the model called neither "
                    "torch.nn.functional.scaled_dot_product_attention nor nn.MultiheadAttention (a model "
                    "with eager attention code, or one compiled with torch.compile, cannot be captured)",
                )
            )

    def _uninstall(self) -> None:
        self._active = False
        while self._undo:
            self._undo.pop()()
        self.warnings.extend(_PATCH.close(self))
        self._masks.clear()  # the model's masks were held only to tell a shared one again

    # ------------------------------------------------------------------------- results

    def to_run(self, *, fidelity: bool = True) -> ModelRun:
        """The recorded calls as the app's :class:`ModelRun` (numpy, ``source="capture"``).

        ``fidelity``: check each call's fidelity first (the engine recomputes every call: about as
        long as the forward pass took); False leaves it None where it was not checked yet, for a
        caller that shows the run at once and checks it later. Calls whose batch differs from
        the first call's (a ModelRun shares one batch) or whose tensors are not (B, H, L, d) are
        left out, with a warning. Raises :class:`ModelRunError` when nothing was recorded or the
        tokens do not fit."""
        arrays: Converted = {}
        calls = []
        batch = None
        for call in self.calls:
            shaped = _as_4d(call)
            if shaped is None or (batch is not None and shaped.queries.shape[0] != batch):
                note = message(
                    QT_TRANSLATE_NOOP(
                        "Capture",
                        "{name} is left out of the run: queries {q}, keys {k} do not fit (batch, heads, "
                        "length, size) with the other calls' batch",
                    ),
                    name=call.name,
                    q=tuple(call.queries.shape),
                    k=tuple(call.keys.shape),
                )
                if note not in self.warnings:
                    self.warnings.append(note)
                continue
            batch = shaped.queries.shape[0]
            calls.append(shaped.to_attention_call(arrays, fidelity))
        if not calls:
            raise ModelRunError(
                QT_TRANSLATE_NOOP("Capture", "nothing was captured: there is no attention call to show")
            )
        tokens = ModelRun.broadcast_tokens(self.tokens, batch) if self.tokens is not None else None  # type: ignore[arg-type]
        return ModelRun(tuple(calls), tokens, tokens, source="capture")

    def save(self, path: str | Path) -> None:
        """Write the run to a capture file (``attnviz.io.load_capture`` reads it back)."""
        save_capture(path, self.to_run())

    # ------------------------------------------------------------------------- naming and selection

    def _select(self, modules: Iterable[str | nn.Module] | None) -> set[nn.Module] | None:
        if modules is None:
            return None
        if self.model is None:
            raise ValueError(
                QT_TRANSLATE_NOOP(
                    "Capture", "modules= names modules of a model: pass the model too, capture(model, modules=...)"
                )
            )
        if isinstance(modules, (str, nn.Module)):
            modules = [modules]
        chosen: set[nn.Module] = set()
        for item in modules:
            if isinstance(item, nn.Module):
                if item not in self._names:
                    raise ValueError(
                        message(
                            QT_TRANSLATE_NOOP("Capture", "modules: a {type} that is not part of the model"),
                            type=type(item).__name__,
                        )
                    )
                chosen.add(item)
                continue
            found = [m for m, name in self._names.items() if name == item or fnmatch.fnmatchcase(name, str(item))]
            if not found:
                raise ValueError(
                    message(
                        QT_TRANSLATE_NOOP("Capture", "modules: {pattern} names no module of the model"),
                        pattern=repr(item),
                    )
                )
            chosen.update(found)
        return chosen

    def _enter_module(self, module: nn.Module, args: Any) -> None:
        local = self._local
        local.stack.append(module)
        if self._selected is not None and module in self._selected:
            local.selected += 1

    def _leave_module(self, module: nn.Module, args: Any, output: Any) -> None:
        local = self._local
        # Pop up to this module: a forward that raised in a child left the child on the stack.
        while local.stack:
            top = local.stack.pop()
            if self._selected is not None and top in self._selected:
                local.selected -= 1
            if top is module:
                break

    def _wanted(self) -> bool:
        return self._active and (self._selected is None or self._local.selected > 0)

    def _name(self) -> str:
        stack = self._local.stack
        base = self._names[stack[-1]] if stack else None
        if base is None or base == "":
            base = type(stack[-1]).__name__ if stack else None
        if base is None:
            return message(QT_TRANSLATE_NOOP("Capture", "call {index}"), index=len(self.calls))
        uses = self._uses[base] = self._uses.get(base, 0) + 1
        return base if uses == 1 else f"{base} #{uses}"

    # ------------------------------------------------------------------------- recording

    def _guarded(self, record: Callable[[], None]) -> None:
        """Run ``record``; a failure becomes a warning (once per kind), never the model's problem."""
        try:
            record()
        except Exception as exc:  # noqa: BLE001 - the model must run on whatever recording trips on
            text = f"{type(exc).__name__}: {exc}"
            if text not in self._failures:
                self._failures.add(text)
                self.warnings.append(
                    message(QT_TRANSLATE_NOOP("Capture", "a call could not be recorded: {error}"), error=text)
                )

    def _on_sdpa(self, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        given = _sdpa_arguments(args, kwargs)
        q, k, v, mask = given["query"], given["key"], given["value"], given["attn_mask"]
        if not all(isinstance(t, torch.Tensor) and not t.is_nested for t in (q, k, v, out)):
            raise TypeError("nested or non-tensor inputs are not recorded")
        with self._lock:
            if not self._reserve([q, k, v, out], mask):
                return
            self.calls.append(
                CapturedCall(
                    self._name(),
                    "scaled_dot_product_attention",
                    _copy(q),
                    _copy(k),
                    _copy(v),
                    q.dtype,
                    attn_mask=self._mask(mask),
                    is_causal=bool(given["is_causal"]),
                    scale=None if given["scale"] is None else float(given["scale"]),
                    dropout_p=float(given["dropout_p"]),
                    enable_gqa=bool(given["enable_gqa"]),
                    output=_copy(out),
                )
            )

    def _record_mha(
        self,
        module: nn.MultiheadAttention,
        signature: inspect.Signature,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        frame: _MhaFrame,
        result: Any,
    ) -> None:
        bound = signature.bind(module, *args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        query = given["query"]
        batched = query.dim() == 3
        kpm, attn_mask = given["key_padding_mask"], given["attn_mask"]
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
                q, k, v = _project(module, query, given["key"], given["value"])
            out = None
            # (L, B, E) or (B, L, E) or (L, E) as the module returned it: (B, L, E) here.
            module_output = (
                result[0]
                if batched and module.batch_first
                else (result[0].transpose(0, 1) if batched else result[0].unsqueeze(0))
            )
        with self._lock:
            weights = [] if out is not None else [module.out_proj.weight, module.out_proj.bias]
            if not self._reserve([q, k, v, out, module_output, *weights], attn_mask, kpm):
                return
            self.calls.append(
                CapturedCall(
                    self._name(),
                    "multihead_attention",
                    _copy(q),
                    _copy(k),
                    _copy(v),
                    q.dtype,
                    attn_mask=self._mask(attn_mask),
                    key_padding_mask=self._mask(kpm),
                    is_causal=bool(given["is_causal"]),
                    dropout_p=module.dropout if module.training else 0.0,
                    output=_copy(out),
                    module_output=_copy(module_output),
                    out_proj=None if out is not None else (_copy(module.out_proj.weight), _copy(module.out_proj.bias)),
                )
            )

    def _reserve(self, tensors: list[Any], *masks: Any) -> bool:
        """Count the bytes these copies will take; False (and recording stops) past the budget."""
        if self._stopped:
            self._skipped += 1
            return False
        need = sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))
        need += sum(
            _compact(m).numel() * m.element_size()
            for m in masks
            if isinstance(m, torch.Tensor) and self._known_mask(m) is None
        )
        if self.recorded_bytes + need > self.memory_budget:
            self._stopped = True
            self._skipped += 1
            self.warnings.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "Capture",
                        "recording stopped at attention call {index}: it needs {need} more and {used} of the "
                        "{budget} memory budget are taken; pass capture(memory_budget=...) to record more, or "
                        "modules=... to record fewer calls",
                    ),
                    index=len(self.calls),
                    need=format_bytes(need),
                    used=format_bytes(self.recorded_bytes),
                    budget=format_bytes(self.memory_budget),
                )
            )
            return False
        self.recorded_bytes += need
        return True

    def _known_mask(self, mask: torch.Tensor) -> torch.Tensor | None:
        entry = self._masks.get(id(mask))
        if entry is not None and entry[0] is mask and entry[1] == _version(mask):
            return entry[2]
        return None

    def _mask(self, mask: Any) -> torch.Tensor | None:
        """A copy of a mask, shared by the calls that were passed the very same unchanged tensor
        (a model builds its mask once and hands it to every layer)."""
        if not isinstance(mask, torch.Tensor):
            return None
        known = self._known_mask(mask)
        if known is not None:
            return known
        copy = _copy(_compact(mask))
        # The original is held so that its id cannot be reused by another tensor meanwhile.
        self._masks[id(mask)] = (mask, _version(mask), copy)
        return copy


def _default_budget() -> float:
    available = available_memory(torch.device("cpu"))
    return DEFAULT_CAPTURE_BUDGET if available is None else min(DEFAULT_CAPTURE_BUDGET, available / 2)


def _sdpa_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    given: dict[str, Any] = {
        "attn_mask": None,
        "dropout_p": 0.0,
        "is_causal": False,
        "scale": None,
        "enable_gqa": False,
    }
    given.update(zip(_SDPA_ARGS, args))
    given.update(kwargs)
    return given


def _refuse(module: nn.MultiheadAttention) -> None:
    raise NotImplementedError(
        "nn.MultiheadAttention with add_bias_kv or add_zero_attn adds keys of its own; its calls are not recorded"
    )


@contextmanager
def _normal_tensors() -> Iterator[None]:
    # Copies made inside torch.inference_mode would be inference tensors, which refuse some
    # later uses outside it; made outside it they are plain tensors.
    with torch.inference_mode(False), torch.no_grad():
        yield


@overload
def _copy(t: torch.Tensor) -> torch.Tensor: ...
@overload
def _copy(t: torch.Tensor | None) -> torch.Tensor | None: ...


def _copy(t: torch.Tensor | None) -> torch.Tensor | None:
    """A detached, contiguous CPU copy that shares nothing with the model."""
    if t is None:
        return None
    with _normal_tensors():
        return t.detach().to("cpu", memory_format=torch.contiguous_format, copy=True)


def _compact(mask: torch.Tensor) -> torch.Tensor:
    """A broadcast view (a mask ``expand``-ed to every query) at the size it is stored: axes with
    stride 0 are kept at length 1, which broadcasts to the same mask."""
    index = tuple(
        slice(0, 1) if stride == 0 and size > 1 else slice(None) for stride, size in zip(mask.stride(), mask.shape)
    )
    return mask[index]


def _version(t: torch.Tensor) -> int | None:
    try:
        return int(t._version)
    except RuntimeError:  # inference tensors have no version counter (and cannot change outside it)
        return None


def _project(
    module: nn.MultiheadAttention, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The heads (B, H, L, d) nn.MultiheadAttention computes from its inputs, with the very
    functions and transposes its forward uses (``F.multi_head_attention_forward``)."""
    batched = query.dim() == 3
    if module.batch_first and batched:
        # As nn.MultiheadAttention.forward does it: "is" decides between one projection and three.
        if key is value:
            if query is key:
                query = key = value = query.transpose(1, 0)
            else:
                query, key = (x.transpose(1, 0) for x in (query, key))
                value = key
        else:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
    if module._qkv_same_embed_dim:
        q, k, v = _F._in_projection_packed(  # type: ignore[attr-defined]
            query, key, value, module.in_proj_weight, module.in_proj_bias
        )
    else:
        b_q, b_k, b_v = module.in_proj_bias.chunk(3) if module.in_proj_bias is not None else (None, None, None)
        q, k, v = _F._in_projection(  # type: ignore[attr-defined]
            query, key, value, module.q_proj_weight, module.k_proj_weight, module.v_proj_weight, b_q, b_k, b_v
        )
    heads = module.num_heads

    def split(x: torch.Tensor) -> torch.Tensor:
        n, b, e = x.shape
        return x.reshape(n, b * heads, e // heads).transpose(0, 1).reshape(b, heads, n, e // heads)

    return split(q), split(k), split(v)


def _as_4d(call: CapturedCall) -> CapturedCall | None:
    """The call with (B, H, L, d) tensors: (N, L, d) inputs get a head axis of 1 (and a 3-D mask
    too, which SDPA aligns with them); None for other ranks or batches that disagree."""
    q, k, v = call.queries, call.keys, call.values
    if q.dim() == 4 and k.dim() == 4 and v.dim() == 4 and k.shape[0] == v.shape[0] == q.shape[0]:
        return call
    if q.dim() == k.dim() == v.dim() == 3 and k.shape[0] == v.shape[0] == q.shape[0]:
        mask = call.attn_mask
        output = call.output
        shaped = CapturedCall(
            call.name,
            call.kind,
            q.unsqueeze(1),
            k.unsqueeze(1),
            v.unsqueeze(1),
            call.dtype,
            attn_mask=mask.unsqueeze(1) if mask is not None and mask.dim() == 3 else mask,
            key_padding_mask=call.key_padding_mask,
            is_causal=call.is_causal,
            scale=call.scale,
            dropout_p=call.dropout_p,
            enable_gqa=call.enable_gqa,
            output=None if output is None else output.unsqueeze(1),
            note=call.note,
        )
        shaped._fidelity, shaped._checked = call.fidelity, True
        shaped.note = call.note
        return shaped
    return None
