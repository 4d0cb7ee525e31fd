"""The one process-wide patch every capture shares: what is replaced while captures are open.

Each attention path is one adapter module of ``capture/paths/`` (what it patches, and how a
call becomes a recorded call); this module is the registry of open captures, installs every
path's patch with the first capture and puts it back with the last. The paths:

* ``torch.nn.functional.scaled_dot_product_attention`` (``paths/sdpa.py``): a wrapper that calls the original with
  the same arguments and hands each call to the captures it belongs to.
* ``nn.MultiheadAttention.forward`` (``paths/mha.py``): records the masks as the module was given them, and the
  heads from the SDPA call made inside (which is not recorded twice).
* transformers' ``AttentionInterface`` (``paths/interface.py``; when transformers is imported): ``get_interface`` and
  item lookup return the function the model asked for (``eager_attention_forward`` or a
  registered one: "sdpa", "flex_attention", "flash_attention_2", a user's) wrapped, so that each
  call is recorded with what it received (Q, K, V, the mask, scaling, dropout, soft-capping,
  the sliding window, sinks, a position bias) and what it returned. An SDPA call made inside is
  that call's (recorded once, with the path that led to it).
* ``torch.nn.attention.flex_attention.flex_attention`` (``paths/flex.py``): the function object
  itself runs the wrapper while captures are open (its code is swapped, see ``FlexHook``), so a call through
  any name, closure or module that holds it is recorded. Its HigherOrderOperator is reached only
  inside the ``torch.compile`` it runs under, where a function mode sees it once at trace time,
  not once per call.
* a ``TorchFunctionMode`` (``CallMode``) on each capture's thread: a call of SDPA through a name
  bound before the capture opened (``from torch.nn.functional import scaled_dot_product_attention``
  in any module or closure) reaches the SDPA wrapper through it.
* ``Tensor.softmax`` and ``torch.softmax`` (``paths/softmax.py``), seen only inside a captured model's modules and
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
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

import torch
from torch.overrides import TorchFunctionMode

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .paths import PATHS
from .paths.base import Frames, Installed, InterfaceFrame, MhaFrame, Recorder, Swap, sdpa_arguments
from .paths.flex import FLEX_MODULE
from .paths.interface import interface_arguments
from .paths.softmax import ORIGINAL
from .recorded_positions import (
    ANGLE_FUNCTIONS,
    ROTARY,
    TABLE_FUNCTIONS,
    TRAIL_FUNCTIONS,
    AngleTrail,
    reading_from_function,
)
from .value_heads import PRODUCT_FUNCTIONS

__all__ = [
    "PATCH",
    "CallMode",
    "Capture",
    "InterfaceFrame",
    "Intervention",
    "MhaFrame",
    "Patch",
    "interface_arguments",
    "sdpa_arguments",
]

#: What the patch asks of an open capture (``recorder.Capture`` provides it): the one small
#: interface between the paths' wrappers and the recorder, so this module never imports it.
Capture = Recorder


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
        patch = self._patch
        angles = (func in ANGLE_FUNCTIONS or func in TABLE_FUNCTIONS) and bool(patch.captures)
        # Rotary positions times inverse frequencies, or rows of a table?
        read = patch.saw_angles(func, args) if angles else None
        if func in PRODUCT_FUNCTIONS and patch.captures:
            patch.saw_product(func, args)  # weights recorded at a softmax times their values?
        # A swapped function (softmax) reaches the mode as its wrapper, from inside that wrapper.
        out = getattr(func, ORIGINAL, func)(*args, **kwargs)
        if read == ROTARY and func not in TABLE_FUNCTIONS:
            patch.trail.follow(out)  # where its sines and cosines go tells rotary from sinusoidal
        elif func in TRAIL_FUNCTIONS and patch.trail.active and patch.trail.joined(func, args, out):
            patch.saw_sinusoids()
        return out


class Patch:
    """The registry of open captures and the one patch they share (see the module's note).

    The wrappers hand each call to the captures it belongs to (``recipients``): those entered on
    this thread (nested ones all record it); where none is, those whose model is running here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: The open captures, replaced whole under the lock (readers take it without locking).
        self.captures: tuple[Capture, ...] = ()
        self._installed: Installed | None = None
        self.frames = Frames()
        #: Edits of calls as they run (``attnviz.intervene``), replaced whole under the lock.
        self.interventions: tuple[Intervention, ...] = ()
        #: Where the angles of the latest position reading went (sinusoids joined, or not).
        self.trail = AngleTrail()

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
            return _restore(installed)

    def saw_angles(self, func: Any, args: tuple[Any, ...]) -> str | None:
        """Rotary code of a model's own turned positions into angles: the captures this belongs
        to keep them (``recorded_positions``); never an error in the model. Its kind, or None."""
        try:
            reading = reading_from_function(func, args)
        except Exception:  # noqa: BLE001 - recording never changes what the model does
            return None
        if reading is None:
            return None
        for capture in self.recipients(in_model=True):
            capture.saw_positions(*reading)
        return reading[0]

    def saw_sinusoids(self) -> None:
        """The angles of the latest reading became sines and cosines joined in one tensor: a
        sinusoidal position embedding, not a rotation."""
        for capture in self.recipients(in_model=True):
            capture.saw_sinusoids()

    def saw_product(self, func: Any, args: tuple[Any, ...]) -> None:
        """A product in a model's own code: the weights a capture just recorded at a softmax
        times their values shows how the code grouped its KV heads (``value_heads``)."""
        for capture in self.recipients(in_model=True):
            capture._guarded(functools.partial(capture.saw_product, func, args))

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

    def _install(self) -> Installed:
        installed = Installed(fastpath=torch.backends.mha.get_fastpath_enabled())
        for path in PATHS:
            path.install(self, installed)
        for swap in installed.swaps:
            swap.install()
        if installed.flex_hook is not None:
            installed.flex_hook.install()
        # The fused fast path runs in C++, where no call can be seen.
        torch.backends.mha.set_fastpath_enabled(False)
        return installed

    def _rebind(self, capture: Capture, installed: Installed) -> None:
        """Point the names a captured model's modules bound to SDPA or flex_attention at import
        at the wrappers, and let each path patch what the model holds of it (put back with
        everything else)."""
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
                swap = Swap(namespace, attr, value, wrapper, f"{name}.{attr}")
                swap.install()
                installed.swaps.append(swap)
        for path in PATHS:  # what the model holds of a path of its own (a custom softmax's class)
            path.attach(self, installed, capture.model)


def _restore(installed: Installed) -> list[str]:
    """Put back what the patch replaced; what other code replaced meanwhile is left, and said."""
    replaced = []
    if installed.flex_hook is not None and not installed.flex_hook.restore():
        replaced.append(FLEX_MODULE + ".flex_attention.__code__")
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


#: The one patch of this process.
PATCH = Patch()
