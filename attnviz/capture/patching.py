"""The one process-wide patch every capture shares: what is replaced while captures are open.

* ``torch.nn.functional.scaled_dot_product_attention``: a wrapper that calls the original with
  the same arguments and hands each call to the captures it belongs to.
* ``nn.MultiheadAttention.forward``: records the masks as the module was given them, and the
  heads from the SDPA call made inside (which is not recorded twice).
* transformers' ``AttentionInterface`` (when transformers is imported): ``get_interface`` and
  item lookup return the function the model asked for (``eager_attention_forward`` or a
  registered one: "sdpa", "flex_attention", "flash_attention_2", a user's) wrapped, so that each
  call is recorded with what it received (Q, K, V, the mask, scaling, dropout, soft-capping,
  the sliding window, sinks, a position bias) and what it returned. An SDPA call made inside is
  that call's (recorded once, with the path that led to it).
* ``torch.nn.attention.flex_attention.flex_attention``: the function object itself runs the
  wrapper while captures are open (its code is swapped, see ``_FlexHook``), so a call through
  any name, closure or module that holds it is recorded. Its HigherOrderOperator is reached only
  inside the ``torch.compile`` it runs under, where a function mode sees it once at trace time,
  not once per call.
* a ``TorchFunctionMode`` (``CallMode``) on each capture's thread: a call of SDPA through a name
  bound before the capture opened (``from torch.nn.functional import scaled_dot_product_attention``
  in any module or closure) reaches the SDPA wrapper through it.
* ``Tensor.softmax`` and ``torch.softmax``, seen only inside a captured model's modules and
  outside every function above: the one thing attention code of a model's own (BLOOM, GPT-J,
  DeBERTa-v2, ...) always calls, so its weights are recorded even where nothing else can be.
* names a captured model's own modules bound to SDPA or flex_attention at import
  (``from torch.nn.functional import scaled_dot_product_attention``) are pointed at the wrappers:
  a fast path (no function mode is consulted for them); never recorded twice, since a wrapper
  running marks its thread and the mode lets the call through.
* the fused fast path of nn.MultiheadAttention and nn.TransformerEncoderLayer is switched off
  (it runs in C++ where no call can be seen).

The same wrappers let an :class:`Intervention` (``attnviz.intervene``) edit a call as it runs: a
mask replaced, a head ablated, weights replaced. One patch, whether a call is recorded or edited.

Installed by the first capture to open, put back by the last to close, whatever happens in
between; what other code replaced meanwhile is left as that code set it, and said.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from attnviz.text.tr import QT_TRANSLATE_NOOP, message


class Capture(Protocol):
    """What the patch asks of an open capture: the one small interface between the wrappers and
    the recorder (``recorder.Capture`` provides it), so this module never imports the recorder
    and ``capture/`` has no import cycle. Each ``_on_*`` hook records one call of its path;
    ``_guarded`` runs a record so that a failure is a warning, never the model's problem."""

    model: nn.Module | None
    #: The thread that entered the capture, and its per-thread record of the model's modules
    #: running (``_local.stack``): whose call a call made now is.
    _thread: int
    _local: Any

    def _wanted(self) -> bool: ...

    def _guarded(self, record: Callable[[], None]) -> None: ...

    def _on_sdpa(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any, frame: InterfaceFrame | None
    ) -> None: ...

    def _on_interface(self, frame: InterfaceFrame, result: Any) -> None: ...

    def _on_flex(
        self, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any
    ) -> None: ...

    def _on_softmax(self, inputs: torch.Tensor, out: Any) -> None: ...

    def _record_mha(
        self,
        module: nn.MultiheadAttention,
        signature: inspect.Signature,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        frame: MhaFrame,
        result: Any,
    ) -> None: ...


_F = torch.nn.functional
_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
_FLEX_MODULE = "torch.nn.attention.flex_attention"
_INTERFACE_MODULE = "transformers.modeling_utils"
_MISSING = object()


@dataclass
class MhaFrame:
    """What the SDPA call made inside an nn.MultiheadAttention forward passed and returned."""

    inner: tuple[dict[str, Any], torch.Tensor] | None = None


@dataclass
class InterfaceFrame:
    """One call of a transformers attention function: what it was given, and the SDPA call it
    made inside (if any)."""

    implementation: str
    function: Callable[..., Any]
    module: Any
    arguments: dict[str, Any]
    inner: tuple[dict[str, Any], torch.Tensor] | None = None


class Intervention(Protocol):
    """Edits attention calls as the model makes them (``attnviz.intervene``), on one thread.

    The wrappers ask it at each call that is a call of its own (an SDPA call, made bare or by
    nn.MultiheadAttention, or a transformers attention function; never the SDPA call such a
    function makes inside): ``on_sdpa`` gets SDPA's arguments by name and the original SDPA, and
    returns None to leave the call alone, else (the arguments it ran with, the output);
    ``on_interface`` gets the function's frame and the function, and returns None, else what the
    function returns (having set ``frame.arguments`` to what it ran with). Calls left alone run
    exactly as without it."""

    thread: int

    def on_sdpa(self, given: dict[str, Any], sdpa: Callable[..., Any]) -> tuple[dict[str, Any], Any] | None: ...

    def on_interface(self, implementation: str, frame: InterfaceFrame, fn: Callable[..., Any]) -> Any: ...


class _Frames(threading.local):
    """Per thread: the recorded function running now, whose inner calls are its own."""

    mha: MhaFrame | None = None
    interface: InterfaceFrame | None = None
    #: Inside a recorded attention function: a softmax there is part of it, not a call.
    depth: int = 0
    #: Inside the SDPA wrapper: the original it calls is not handed to the wrapper again.
    in_sdpa: int = 0


@dataclass
class _Swap:
    """One replaced attribute: ``owner.name`` was ``original`` (``_MISSING``: not in its own
    ``__dict__``, so it is deleted again), and is now ``wrapper``."""

    owner: Any
    name: str
    original: Any
    wrapper: Any
    label: str

    def current(self) -> Any:
        if isinstance(self.owner, dict):
            return self.owner.get(self.name, _MISSING)
        return (
            self.owner.__dict__.get(self.name, _MISSING)
            if isinstance(self.owner, type)
            else getattr(self.owner, self.name, _MISSING)
        )

    def install(self) -> None:
        if isinstance(self.owner, dict):
            self.owner[self.name] = self.wrapper
        else:
            setattr(self.owner, self.name, self.wrapper)

    def restore(self) -> bool:
        """Put the original back; False when other code replaced the wrapper meanwhile."""
        if self.current() is not self.wrapper:
            return False
        if self.original is _MISSING:
            if isinstance(self.owner, dict):
                del self.owner[self.name]
            else:
                delattr(self.owner, self.name)
        elif isinstance(self.owner, dict):
            self.owner[self.name] = self.original
        else:
            setattr(self.owner, self.name, self.original)
        return True


@dataclass
class _Installed:
    swaps: list[_Swap] = field(default_factory=list)
    fastpath: bool = True
    sdpa: Callable[..., Any] | None = None
    flex: Callable[..., Any] | None = None
    sdpa_wrapper: Callable[..., Any] | None = None
    flex_wrapper: Callable[..., Any] | None = None
    #: (id of a module's globals, name) rebound to a wrapper, so that it is done once.
    rebound: set[tuple[int, str]] = field(default_factory=set)
    flex_hook: _FlexHook | None = None


_TRAMPOLINE_GLOBAL = "__attnviz_flex_wrapper__"
#: The attribute a swapped function's wrapper keeps its original under (see ``CallMode``).
_ORIGINAL = "__attnviz_original__"


def _trampoline(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - its code runs as flex_attention's
    return __attnviz_flex_wrapper__(*args, **kwargs)  # type: ignore[name-defined]  # noqa: F821


class _FlexHook:
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


class CallMode(TorchFunctionMode):
    """Hands every call of the original SDPA made on its thread to the SDPA wrapper, whatever
    name the caller holds it under. Entered by each capture on the thread that enters it."""

    def __init__(self, patch: Patch) -> None:
        super().__init__()
        self._patch = patch

    def __torch_function__(
        self, func: Any, types_: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if torch.compiler.is_compiling():
            return func(*args, **kwargs)
        installed = self._patch._installed
        if (
            installed is not None
            and func is installed.sdpa
            and installed.sdpa_wrapper is not None
            and not self._patch.frames.in_sdpa
        ):
            return installed.sdpa_wrapper(*args, **kwargs)
        # A swapped function (softmax) reaches the mode as its wrapper, from inside that wrapper.
        return getattr(func, _ORIGINAL, func)(*args, **kwargs)


class Patch:
    """The registry of open captures and the one patch they share (see the module's note).

    The wrappers hand each call to the captures it belongs to (``recipients``): those entered on
    this thread (nested ones all record it); where none is, those whose model is running here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: The open captures, replaced whole under the lock (readers take it without locking).
        self.captures: tuple[Capture, ...] = ()
        self._installed: _Installed | None = None
        self.frames = _Frames()
        self._interface_wrappers: dict[tuple[str, int], Callable[..., Any]] = {}
        #: Edits of calls as they run (``attnviz.intervene``), replaced whole under the lock.
        self.interventions: tuple[Intervention, ...] = ()

    # ------------------------------------------------------------------------- interventions

    def add_intervention(self, intervention: Intervention) -> None:
        """Let ``intervention`` edit the calls made on its thread (see :class:`Intervention`);
        a capture must be open for the patch to be installed."""
        with self._lock:
            self.interventions = (*self.interventions, intervention)

    def remove_intervention(self, intervention: Intervention) -> None:
        with self._lock:
            self.interventions = tuple(i for i in self.interventions if i is not intervention)

    def _intervention(self) -> Intervention | None:
        here = threading.get_ident()
        return next((i for i in self.interventions if i.thread == here), None)

    def _intervene_sdpa(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], sdpa: Callable[..., Any]
    ) -> tuple[dict[str, Any], Any] | None:
        intervention = self._intervention()
        if intervention is None:
            return None
        return intervention.on_sdpa(sdpa_arguments(args, kwargs), sdpa)

    def _intervene_interface(self, implementation: str, frame: InterfaceFrame, fn: Callable[..., Any]) -> Any:
        intervention = self._intervention()
        if intervention is None:
            return None
        return intervention.on_interface(implementation, frame, fn)

    @property
    def fastpath_was_enabled(self) -> bool:
        installed = self._installed
        return installed.fastpath if installed is not None else torch.backends.mha.get_fastpath_enabled()

    def open(self, capture: Capture) -> None:
        with self._lock:
            if self._installed is None:
                self._installed = self._install()
            self._rebind(capture, self._installed)
            self.captures = (*self.captures, capture)

    def close(self, capture: Capture) -> list[str]:
        """Forget ``capture``; the last one out restores PyTorch. Returns warnings for it."""
        with self._lock:
            if capture not in self.captures:
                return []
            self.captures = tuple(c for c in self.captures if c is not capture)
            if self.captures or self._installed is None:
                return []
            installed, self._installed = self._installed, None
            self._interface_wrappers.clear()
            return _restore(installed)

    def recipients(self, *, in_model: bool = False) -> list[Capture]:
        """The captures a call made now, on this thread, belongs to. ``in_model``: only those
        whose model is running here (a softmax outside a model is no attention call)."""
        captures = self.captures
        if not captures:
            return []
        here = threading.get_ident()
        own = [c for c in captures if c._thread == here]
        pool = own if own else [c for c in captures if c._local.stack]
        if in_model:
            pool = [c for c in pool if c._local.stack]
        return [c for c in pool if c._wanted()]

    # ------------------------------------------------------------------------- installing

    def _install(self) -> _Installed:
        installed = _Installed(fastpath=torch.backends.mha.get_fastpath_enabled())
        frames = self.frames
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
                self.interventions
                and interface is None
                and not frames.depth
                and (mha is None or mha.inner is None)
                and (edited := self._intervene_sdpa(args, kwargs, sdpa)) is not None
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
            for capture in self.recipients():
                capture._guarded(functools.partial(capture._on_sdpa, args, kwargs, out, None))
            return out

        scaled_dot_product_attention.__doc__ = sdpa_original.__doc__
        installed.sdpa_wrapper = scaled_dot_product_attention
        installed.swaps.append(
            _Swap(_F, "scaled_dot_product_attention", sdpa_original, scaled_dot_product_attention, _F.__name__)
        )

        mha_forward = nn.MultiheadAttention.__dict__["forward"]
        signature = inspect.signature(mha_forward)

        def forward(module: nn.MultiheadAttention, *args: Any, **kwargs: Any) -> Any:
            recipients = self.recipients() if frames.mha is None and not frames.depth else []
            if not recipients:
                return mha_forward(module, *args, **kwargs)
            if module.bias_k is not None or module.add_zero_attn:
                for capture in recipients:
                    capture._guarded(lambda: _refuse(module))
                return mha_forward(module, *args, **kwargs)
            frame = frames.mha = MhaFrame()
            try:
                result = mha_forward(module, *args, **kwargs)
            finally:
                frames.mha = None
            for capture in recipients:
                capture._guarded(functools.partial(capture._record_mha, module, signature, args, kwargs, frame, result))
            return result

        installed.swaps.append(_Swap(nn.MultiheadAttention, "forward", mha_forward, forward, "nn.MultiheadAttention"))

        tensor_softmax = torch.Tensor.__dict__.get("softmax", _MISSING)
        original_tensor_softmax = torch.Tensor.softmax
        torch_softmax = torch.softmax

        def seen_softmax(inputs: Any, dim: Any, out: Any) -> None:
            if frames.depth or frames.mha is not None or frames.interface is not None:
                return
            if not isinstance(inputs, torch.Tensor) or inputs.dim() < 3 or dim not in (-1, inputs.dim() - 1):
                return
            for capture in self.recipients(in_model=True):
                capture._guarded(functools.partial(capture._on_softmax, inputs, out))

        def softmax_method(self_: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            out = original_tensor_softmax(self_, *args, **kwargs)
            if self.captures and not torch.compiler.is_compiling():
                seen_softmax(self_, args[0] if args else kwargs.get("dim"), out)
            return out

        def softmax_function(inputs: Any, *args: Any, **kwargs: Any) -> Any:
            out = torch_softmax(inputs, *args, **kwargs)
            if self.captures and not torch.compiler.is_compiling():
                seen_softmax(inputs, args[0] if args else kwargs.get("dim"), out)
            return out

        # Under a capture's function mode (CallMode) a call of the original softmax is handed to the
        # mode as the attribute it is now, this wrapper: the mode runs the original instead, so
        # the wrapper the caller entered records the call once.
        setattr(softmax_method, _ORIGINAL, original_tensor_softmax)
        setattr(softmax_function, _ORIGINAL, torch_softmax)
        installed.swaps.append(_Swap(torch.Tensor, "softmax", tensor_softmax, softmax_method, "torch.Tensor"))
        installed.swaps.append(_Swap(torch, "softmax", torch_softmax, softmax_function, "torch"))

        flex_module = _flex_module()
        flex_function = getattr(flex_module, "flex_attention", None) if flex_module is not None else None
        if isinstance(flex_function, types.FunctionType):
            installed.flex = flex_function
            hook = _FlexHook(flex_function, lambda *a, **k: flex_attention(*a, **k))
            flex = hook.original  # the function with its own code: the hook's trampoline never reached
            flex_signature = hook.signature

            def flex_attention(*args: Any, **kwargs: Any) -> Any:
                recipients = [] if torch.compiler.is_compiling() or frames.depth else self.recipients()
                if not recipients:
                    return flex(*args, **kwargs)
                frames.depth += 1
                try:
                    out = flex(*args, **kwargs)
                finally:
                    frames.depth -= 1
                for capture in recipients:
                    capture._guarded(functools.partial(capture._on_flex, flex_signature, args, kwargs, out))
                return out

            flex_attention.__doc__ = flex_function.__doc__
            flex_attention.__signature__ = flex_signature  # type: ignore[attr-defined]
            installed.flex_wrapper = flex_attention
            installed.flex_hook = hook
            assert flex_module is not None
            installed.swaps.append(_Swap(flex_module, "flex_attention", flex_function, flex_attention, _FLEX_MODULE))

        interface_module = sys.modules.get(_INTERFACE_MODULE)
        interface = getattr(interface_module, "AttentionInterface", None) if interface_module is not None else None
        if isinstance(interface, type):
            interface_type: Any = interface
            get_interface = interface.__dict__.get("get_interface", _MISSING)
            getitem = interface.__dict__.get("__getitem__", _MISSING)
            base_get_interface = interface_type.get_interface
            base_getitem = interface_type.__getitem__

            def traced_get_interface(self_: Any, attn_implementation: Any, default: Callable[..., Any]) -> Any:
                fn = base_get_interface(self_, attn_implementation, default)
                return self._interface_function(attn_implementation or "eager", fn)

            def traced_getitem(self_: Any, key: Any) -> Any:
                return self._interface_function(str(key), base_getitem(self_, key))

            installed.swaps.append(
                _Swap(interface, "get_interface", get_interface, traced_get_interface, "AttentionInterface")
            )
            installed.swaps.append(_Swap(interface, "__getitem__", getitem, traced_getitem, "AttentionInterface"))

        for swap in installed.swaps:
            swap.install()
        if installed.flex_hook is not None:
            installed.flex_hook.install()
        # The fused fast path runs in C++, where no call can be seen.
        torch.backends.mha.set_fastpath_enabled(False)
        return installed

    def _interface_function(self, implementation: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` (an attention function of transformers' interface) wrapped to be recorded; one
        wrapper per function, made once while the patch is installed."""
        if not callable(fn) or getattr(fn, "_attnviz_traced", False):
            return fn
        key = (implementation, id(fn))
        wrapper = self._interface_wrappers.get(key)
        if wrapper is not None:
            return wrapper
        frames = self.frames
        try:
            signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            signature = None

        @functools.wraps(fn)
        def traced(*args: Any, **kwargs: Any) -> Any:
            recipients = (
                self.recipients() if frames.interface is None and frames.mha is None and not frames.depth else []
            )
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
                edited = self._intervene_interface(implementation, frame, fn) if self.interventions else None
                result = fn(*args, **kwargs) if edited is None else edited
            finally:
                frames.interface = None
                frames.depth -= 1
            for capture in recipients:
                capture._guarded(functools.partial(capture._on_interface, frame, result))
            return result

        traced._attnviz_traced = True  # type: ignore[attr-defined]
        self._interface_wrappers[key] = traced
        return traced

    def _rebind(self, capture: Capture, installed: _Installed) -> None:
        """Point the names a captured model's modules bound to SDPA or flex_attention at import
        at the wrappers (put back with everything else)."""
        if capture.model is None:
            return
        targets = {id(installed.sdpa): installed.sdpa_wrapper}
        if installed.flex is not None:
            targets[id(installed.flex)] = installed.flex_wrapper
        originals = {id(installed.sdpa): installed.sdpa, id(installed.flex): installed.flex}
        seen: set[str] = set()
        for module in capture.model.modules():
            name = type(module).__module__
            if name in seen or name.startswith("torch."):
                continue
            seen.add(name)
            namespace = getattr(sys.modules.get(name), "__dict__", None)
            if namespace is None:
                continue
            for attr, value in list(namespace.items()):
                wrapper = targets.get(id(value))
                if wrapper is None or value is not originals.get(id(value)):
                    continue
                key = (id(namespace), attr)
                if key in installed.rebound:
                    continue
                installed.rebound.add(key)
                swap = _Swap(namespace, attr, value, wrapper, f"{name}.{attr}")
                swap.install()
                installed.swaps.append(swap)


def _flex_module() -> Any:
    """FlexAttention's module, imported now if it is not yet (about 10 ms): code that imports
    ``flex_attention`` by name while a capture is open gets the hooked function."""
    try:
        return importlib.import_module(_FLEX_MODULE)
    except Exception:  # noqa: BLE001 - a torch without FlexAttention: nothing of it to record
        return None


def _restore(installed: _Installed) -> list[str]:
    """Put back what the patch replaced; what other code replaced meanwhile is left, and said."""
    replaced = []
    if installed.flex_hook is not None and not installed.flex_hook.restore():
        replaced.append(_FLEX_MODULE + ".flex_attention.__code__")
    replaced += [swap.label + "." + swap.name for swap in reversed(installed.swaps) if not swap.restore()]
    torch.backends.mha.set_fastpath_enabled(installed.fastpath)
    return [
        message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "{name} was replaced by other code while captures were open: it is left as that code set it",
            ),
            name=_public_name(name),
        )
        for name in replaced
    ]


def _public_name(name: str) -> str:
    return {
        "torch.nn.functional.scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
        "nn.MultiheadAttention.forward": "nn.MultiheadAttention.forward",
    }.get(name, name)


def sdpa_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
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


def _refuse(module: nn.MultiheadAttention) -> None:
    raise NotImplementedError(
        "nn.MultiheadAttention with add_bias_kv or add_zero_attn adds keys of its own; its calls are not recorded"
    )


#: The one patch of this process.
PATCH = Patch()
