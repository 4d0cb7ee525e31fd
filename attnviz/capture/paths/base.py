"""The one small interface behind every attention path a capture records.

An adapter (one module of this package per path) says *what it patches* (``install``: the
attributes it replaces, as :class:`Swap` entries the patch puts back) and *how it turns a call
into a recorded call* (its ``record`` function: the call's tensors, masks and terms as a
:class:`~attnviz.capture.calls.CapturedCall`, handed to the capture through :class:`Recorder`).
The patch (``capture/patching.py``) is :class:`Hub` to the adapters and imports them; the
adapters import neither the patch nor the recorder, so ``capture/`` has no import cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import torch
from torch import nn

if TYPE_CHECKING:
    from ..calls import CapturedCall

#: The value of an attribute an owner does not hold in its own ``__dict__``.
MISSING = object()
_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")


class Recorder(Protocol):
    """What an adapter asks of an open capture (``recorder.Capture`` provides it). ``_guarded``
    runs a record so that a failure is a warning, never the model's problem; ``_context`` is what
    the module stack says of the call (name, cross-attention, encoder); ``_add`` counts a call's
    copies against the budget and, within it, makes and keeps the call, its masks shared with
    the calls given the very same tensors."""

    model: nn.Module | None
    #: The calls recorded so far, in call order.
    calls: list[CapturedCall]
    #: The thread that entered the capture, and its per-thread record of the model's modules
    #: running (``_local.stack``, ``_local.given``): whose call a call made now is.
    _thread: int
    _local: Any

    def _wanted(self) -> bool: ...

    def saw_positions(self, kind: str, positions: Any) -> None: ...

    def saw_product(self, func: Any, args: tuple[Any, ...]) -> None: ...

    def saw_sinusoids(self) -> None: ...

    def _guarded(self, record: Callable[[], None]) -> None: ...

    def _context(self, up: int = 0) -> dict[str, Any]: ...

    def _add(
        self,
        make: Callable[[], CapturedCall],
        base: str | None,
        tensors: list[Any],
        mask: Any = None,
        padding: Any = None,
    ) -> None: ...


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


class Frames(threading.local):
    """Per thread: the recorded function running now, whose inner calls are its own."""

    mha: MhaFrame | None = None
    interface: InterfaceFrame | None = None
    #: Inside a recorded attention function: a softmax there is part of it, not a call.
    depth: int = 0
    #: Inside the SDPA wrapper: the original it calls is not handed to the wrapper again.
    in_sdpa: int = 0


@dataclass
class Swap:
    """One replaced attribute: ``owner.name`` was ``original`` (``MISSING``: not in its own
    ``__dict__``, so it is deleted again), and is now ``wrapper``."""

    owner: Any
    name: str
    original: Any
    wrapper: Any
    label: str

    def current(self) -> Any:
        if isinstance(self.owner, dict):
            return self.owner.get(self.name, MISSING)
        return (
            self.owner.__dict__.get(self.name, MISSING)
            if isinstance(self.owner, type)
            else getattr(self.owner, self.name, MISSING)
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
        if self.original is MISSING:
            if isinstance(self.owner, dict):
                del self.owner[self.name]
            else:
                delattr(self.owner, self.name)
        elif isinstance(self.owner, dict):
            self.owner[self.name] = self.original
        else:
            setattr(self.owner, self.name, self.original)
        return True


class Hook(Protocol):
    """A replacement that is not an attribute (flex_attention's code swapped in place)."""

    def install(self) -> None: ...

    def restore(self) -> bool: ...


@dataclass
class Installed:
    """What the patch replaced while captures are open, filled by each adapter's ``install``."""

    swaps: list[Swap] = field(default_factory=list)
    fastpath: bool = True
    sdpa: Callable[..., Any] | None = None
    flex: Callable[..., Any] | None = None
    sdpa_wrapper: Callable[..., Any] | None = None
    flex_wrapper: Callable[..., Any] | None = None
    #: (id of a module's globals, name) rebound to a wrapper, so that it is done once.
    rebound: set[tuple[int, str]] = field(default_factory=set)
    flex_hook: Hook | None = None
    #: One wrapper per transformers attention function (implementation, id of the function).
    interface_wrappers: dict[tuple[str, int], Callable[..., Any]] = field(default_factory=dict)


class Hub(Protocol):
    """What an adapter's wrappers ask of the patch: the per-thread frames, the captures a call
    belongs to, and the interventions that may edit it (``attnviz.intervene``)."""

    frames: Frames
    captures: tuple[Recorder, ...]
    interventions: tuple[Any, ...]

    @property
    def fastpath_was_enabled(self) -> bool: ...

    def recipients(self, *, in_model: bool = False) -> list[Recorder]: ...

    def _intervene_sdpa(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], sdpa: Callable[..., Any]
    ) -> tuple[dict[str, Any], Any] | None: ...

    def _intervene_interface(self, implementation: str, frame: InterfaceFrame, fn: Callable[..., Any]) -> Any: ...


class AttentionPath(Protocol):
    """One attention path: ``install`` replaces what it patches (appending to
    ``installed.swaps``, which the patch installs and puts back), and its wrappers hand each call
    to the recipients' ``_guarded`` with the adapter's own ``record``; ``attach`` patches what
    one captured model holds (nothing, for most paths)."""

    name: str

    def install(self, hub: Hub, installed: Installed) -> None: ...

    def attach(self, hub: Hub, installed: Installed, model: nn.Module) -> None:
        """Patch what a captured ``model`` holds of this path (its own classes), once per
        installation (``installed.rebound``); called for each capture given a model."""


def sdpa_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """SDPA's arguments by name, with its defaults."""
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


def function_name(fn: Any) -> str:
    module = getattr(fn, "__module__", "") or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{module}.{name}" if module else str(name)


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None
