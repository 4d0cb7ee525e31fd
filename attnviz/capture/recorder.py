"""``capture(model)``: record every attention call a PyTorch model makes, as it makes it.

While the context is open, the functions attention runs through are wrapped (``patching``: one
process-wide patch shared by every open capture): ``scaled_dot_product_attention``,
``nn.MultiheadAttention.forward``, transformers' attention interface (eager, SDPA, flex, flash,
a user's registered function), ``flex_attention``, and the softmax of a model's own attention
code. Each wrapper calls the original with the same arguments, returns exactly what it returned,
and keeps CPU copies of what the attention received and returned, with the path that ran.

With a model, forward hooks on its modules name each call after the module that made it
(``encoder.layer.3.attention.self``; a module called again gets " #2", " #3"...), and tell a
cross-attention call (keys from an encoder) and an encoder's call apart, so that each call gets
the tokens of its own axes (``tokens=`` the decoder's or the only ones, ``encoder_tokens=`` the
encoder's).

Captures compose: each records the calls made inside it, on the thread that entered it
(captures nested on one thread each record what runs inside them), and on another thread where
no capture is open only the calls made inside its own model's modules (``nn.DataParallel``
replicas run on threads of their own). Recording never changes what the model computes, and a
failure to record is a line in ``warnings``, never an exception in the model. Copies count
against a memory budget: past it recording stops and ``warnings`` says so.

Under ``torch.distributed`` each rank records its own calls; the run carries the rank, the
world size and the sharding the capture can see (``ModelRun.shard``), and
``attnviz.capture.merge`` joins the ranks' files.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import torch
from torch import nn

from attnviz.state.run import ModelRun, ModelRunError, Shard
from attnviz.text.tr import QT_TRANSLATE_NOOP, message, plural

from ..engine.budget import available_memory, format_bytes
from ..io.capture_file import save_capture
from . import shaping
from .calls import CapturedCall, Converted
from .patching import PATCH, CallMode
from .paths import block_sparse, reformer
from .recorded_positions import (
    LEARNED,
    MAYBE_LEARNED,
    ROTARY,
    SINUSOIDAL,
    is_position_module,
    kind_in,
    read_positions,
)
from .value_heads import value_heads

__all__ = ["DEFAULT_CAPTURE_BUDGET", "Capture", "capture"]

#: Bytes of copies a capture keeps by default (never more than half the memory available).
DEFAULT_CAPTURE_BUDGET = 2 * 2**30

#: The sharding a capture can be told (or sees): data-parallel ranks hold other batch elements,
#: tensor-parallel ranks other heads.
SHARDINGS = ("data", "heads")


def capture(
    model: nn.Module | None = None,
    *,
    tokens: object = None,
    encoder_tokens: object = None,
    modules: Iterable[str | nn.Module] | None = None,
    memory_budget: float | None = None,
    sharding: str | None = None,
) -> Capture:
    """Record the attention calls made inside ``with capture(model) as cap:`` (see ``Capture``).

    Example::

        with torch.no_grad(), attnviz.capture(model, tokens=tokens) as cap:
            model(**batch)
        print(cap)                           # Capture(12 call(s): 'encoder.layer.0.attention.self', ...)
        cap.calls[0].weights()               # (B, H, L_q, L_k), as attnviz computes them
        cap.save("run.attnviz-capture")      # for attnviz doctor, diff, render and the window
    """
    return Capture(
        model,
        tokens=tokens,
        encoder_tokens=encoder_tokens,
        modules=modules,
        memory_budget=memory_budget,
        sharding=sharding,
    )


@dataclass
class _Local(threading.local):
    """One capture's view of one thread: the modules of its model running there, and what each
    was given (its keyword arguments, to tell cross-attention and find the mask it built)."""

    stack: list[nn.Module] = field(default_factory=list)
    given: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    selected: int = 0


def _positive_number(value: object) -> bool:
    # float("inf") is a budget too: no limit. NaN is not > 0.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def numbered(uses: dict[str, int], base: str | None, index: int) -> str:
    """The name of a call made in module ``base`` (None: no module), the ``index``-th recorded:
    the module's name, numbered from its second call ("layer.0.attn #2"), counted in ``uses``.
    A capture and an intervention name the calls of one forward pass alike with it."""
    if base is None:
        return message(QT_TRANSLATE_NOOP("Capture", "call {index}"), index=index)
    count = uses[base] = uses.get(base, 0) + 1
    return base if count == 1 else f"{base} #{count}"


class Capture:
    """Records attention calls; use as ``with attnviz.capture(model) as cap:``.

    ``model``: optional; names the calls after its modules (else "call 0", "call 1"...).
    ``tokens``: one sequence of strings for the whole batch, or one per batch element (B, L): the
    tokens of the model's (decoder's) sequence. ``encoder_tokens``: an encoder-decoder's encoder
    tokens, on the encoder's calls and the keys of cross-attention calls. Each call gets the
    tokens that fit its query and key axes; a mismatch is said at the call (its ``note``) and in
    ``warnings``, never an error. ``modules``: record only calls made inside these modules of the
    model: names from ``model.named_modules()``, shell-style patterns of them
    ("encoder.layer.*.attention"), or the modules themselves. ``memory_budget``: bytes of copies
    to keep (default ``DEFAULT_CAPTURE_BUDGET``, capped at half the memory available); past it
    recording stops, and ``warnings`` says where. ``sharding``: under torch.distributed, what this
    rank holds, "data" (other batch elements) or "heads" (other heads of every call); None: what
    the capture sees ("data" for a DistributedDataParallel model).

    ``calls`` lists the :class:`CapturedCall` in call order; ``warnings`` the lines to show the
    user; ``recorded_bytes`` what the copies take; ``shard`` the rank's place, under
    torch.distributed.
    """

    def __init__(
        self,
        model: nn.Module | None = None,
        *,
        tokens: object = None,
        encoder_tokens: object = None,
        modules: Iterable[str | nn.Module] | None = None,
        memory_budget: float | None = None,
        sharding: str | None = None,
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
        if sharding is not None and sharding not in SHARDINGS:
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP("Capture", "sharding must be None, {choices}; got {value}"),
                    choices=" or ".join(map(repr, SHARDINGS)),
                    value=repr(sharding),
                )
            )
        self.model = model
        self.tokens = tokens
        self.encoder_tokens = encoder_tokens
        self.calls: list[CapturedCall] = []
        self.warnings: list[str] = []
        self.recorded_bytes = 0
        self.memory_budget = float(memory_budget) if memory_budget is not None else _default_budget()
        self.shard = _shard(model, sharding)
        self._names = {m: name for name, m in model.named_modules()} if model is not None else {}
        #: Modules that turn positions into rotations or embeddings, and the latest positions
        #: one was called with (kind, (N, L)): the calls that follow were given them.
        self._position_modules = {m: k for m, n in self._names.items() if (k := is_position_module(m, n))}
        self._positions: tuple[str, np.ndarray] | None = None
        # the module path where they were read, and every module path holding a recorded call
        # (with its ancestors'): positions read in another stack are not a later call's
        self._positions_at: str | None = None
        self._call_branches: set[str] = set()
        #: The softmax call whose values' grouping was read (the products after it are others).
        self._grouped: CapturedCall | None = None
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

    def __repr__(self) -> str:
        names = ", ".join(repr(call.name) for call in self.calls[:3]) + (", ..." if len(self.calls) > 3 else "")
        return (
            f"Capture({len(self.calls)} call(s){': ' + names if names else ''}; "
            f"{self.recorded_bytes / 2**20:.1f} MiB recorded, {len(self.warnings)} warning(s))"
        )

    def __enter__(self) -> Capture:
        if self._used:
            raise RuntimeError(
                QT_TRANSLATE_NOOP("Capture", "a capture records once: make a new one with attnviz.capture(...)")
            )
        self._used = self._active = True
        self._thread = threading.get_ident()
        try:
            for module in self._names:
                self._undo.append(module.register_forward_pre_hook(self._enter_module, with_kwargs=True).remove)
                self._undo.append(module.register_forward_hook(self._leave_module, always_call=True).remove)
            PATCH.open(self)
            # Calls of SDPA through a name bound before the capture opened reach it through a
            # function mode on this thread (flex_attention is hooked in itself, see patching).
            mode = CallMode(PATCH)
            mode.__enter__()
            self._undo.append(lambda: mode.__exit__(None, None, None))
        except BaseException:
            self._uninstall()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._uninstall()
        self._settle_softmax_calls()
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
                    "torch.nn.functional.scaled_dot_product_attention, nn.MultiheadAttention, a transformers "
                    "attention function, flex_attention nor a softmax over attention scores inside its modules "
                    "(a model compiled with torch.compile cannot be captured)",
                )
            )

    def _uninstall(self) -> None:
        self._active = False
        while self._undo:
            self._undo.pop()()
        self.warnings.extend(PATCH.close(self))
        self._masks.clear()  # the model's masks were held only to tell a shared one again

    def _settle_softmax_calls(self) -> None:
        """A softmax seen in a module that also made a recorded call is part of that call (or is
        no attention at all): dropped. The others (attention code of a model's own) keep their
        place in call order and get their names now."""
        real = {call.module_key for call in self.calls if call.kind != "softmax"}
        kept = []
        for call in self.calls:
            if call.kind == "softmax":
                if call.module_key in real:
                    self.recorded_bytes -= shaping.nbytes(call.recorded_weights)
                    continue
                call.name = self._numbered(call.name)
            kept.append(call)
        self.calls = kept

    # ------------------------------------------------------------------------- results

    def to_run(self, *, fidelity: bool = True) -> ModelRun:
        """The recorded calls as the app's :class:`ModelRun` (numpy, ``source="capture"``).

        ``fidelity``: check each call's fidelity first (the engine recomputes every call: about as
        long as the forward pass took); False leaves it None where it was not checked yet, for a
        caller that shows the run at once and checks it later. Every call is kept with its own
        geometry (windows, an encoder's keys); calls whose tensors are not (B, H, L, d) (or
        (N, L, d)) are left out, with a warning. Each call gets the tokens that fit its axes.
        Raises :class:`ModelRunError` when nothing was recorded."""
        arrays: Converted = {}
        calls = []
        cache: dict[tuple[int, int], np.ndarray] = {}
        unfit: list[str] = []
        for call in self.calls:
            shaped = shaping.as_4d(call)
            if shaped is None:
                q = call.queries if call.queries is not None else call.recorded_weights
                note = message(
                    QT_TRANSLATE_NOOP(
                        "Capture",
                        "{name} is left out of the run: queries {q}, keys {k} are not (batch, heads, length, size)",
                    ),
                    name=call.name,
                    q=tuple(q.shape) if q is not None else (),
                    k=tuple(call.keys.shape) if call.keys is not None else (),
                )
                if note not in self.warnings:
                    self.warnings.append(note)
                continue
            if self._assign_tokens(shaped, cache):
                unfit.append(shaped.name)
            calls.append(shaped.to_attention_call(arrays, fidelity))
        if not calls:
            raise ModelRunError(
                QT_TRANSLATE_NOOP("Capture", "nothing was captured: there is no attention call to show")
            )
        if unfit:
            note = message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "the tokens given do not fit every axis of {count} call(s) ({first}...): those axes are shown "
                    "without tokens (each call's note says which)",
                ),
                count=len(unfit),
                first=unfit[0],
            )
            if note not in self.warnings:
                self.warnings.append(note)
        # The run's own tokens: the main tokens where they fit a call (what calls without tokens show).
        main = next(
            (t for c in calls if (t := shaping.fitting_tokens(self.tokens, c.shape[0], c.shape[2], cache)) is not None),
            None,
        )
        # As keys only where some call has that many (a merged self+cross decoder has none).
        keys = main if main is not None and any(c.shape[0::3] == main.shape for c in calls) else None
        return ModelRun(tuple(calls), main, keys, source="capture", shard=self.shard)

    def save(self, path: str | Path) -> None:
        """Write the run to a capture file (``attnviz.io.load_capture`` reads it back)."""
        save_capture(path, self.to_run())

    def _assign_tokens(self, call: CapturedCall, cache: dict[tuple[int, int], np.ndarray]) -> bool:
        """Give ``call`` the tokens of its axes: an encoder's calls the encoder tokens, a
        cross-attention call the decoder's on its queries and the encoder's on its keys, every
        other the main tokens. Returns True when tokens were given that fit an axis of it not."""
        if self.tokens is None and self.encoder_tokens is None:
            return False
        b, _h, n_q, n_k = call.shape
        main, encoder = self.tokens, self.encoder_tokens
        if encoder is None:
            encoder = main
        query_side = encoder if call.encoder and not call.cross else main
        key_side = encoder if call.encoder or call.cross else main
        call.query_tokens = shaping.fitting_tokens(query_side, b, n_q, cache)
        call.key_tokens = shaping.fitting_tokens(key_side, b, n_k, cache)
        if call.self_keys:  # merged self+cross keys: the decoder's own, then the encoder's
            own = shaping.fitting_tokens(main, b, call.self_keys, cache)
            other = shaping.fitting_tokens(encoder, b, n_k - call.self_keys, cache)
            call.key_tokens = None if own is None or other is None else np.concatenate([own, other], axis=1)
        missing = []
        for axis, tokens, given, length in (
            ("queries", call.query_tokens, query_side, n_q),
            ("keys", call.key_tokens, key_side, n_k),
        ):
            if tokens is None and given is not None:
                missing.append(
                    message(
                        QT_TRANSLATE_NOOP("Capture", "its {length} {axis}"),
                        length=length,
                        axis=axis,
                    )
                )
        if missing:
            call._add_note(
                message(
                    QT_TRANSLATE_NOOP("Capture", "the tokens given do not fit {axes}: shown without tokens there"),
                    axes=" / ".join(missing),
                )
            )
        return bool(missing)

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

    def _enter_module(self, module: nn.Module, args: Any, kwargs: Any) -> None:
        local = self._local
        kind = self._position_modules.get(module)
        if kind is not None and self._active:
            # Positions given as an argument are known before the module runs (a layer of its own
            # that takes them makes its attention call inside); tables are read when it returns.
            self._guarded(lambda: self._read_positions(kind, module, args, kwargs, None))
        local.stack.append(module)
        local.given.append((args, kwargs))
        if self._selected is not None and module in self._selected:
            local.selected += 1

    def _leave_module(self, module: nn.Module, args: Any, output: Any) -> None:
        local = self._local
        kind = self._position_modules.get(module)
        if kind is not None and self._active and local.stack and local.stack[-1] is module and local.given:
            given_args, given_kwargs = local.given[-1]
            self._guarded(lambda: self._read_positions(kind, module, given_args, given_kwargs, output))
        if self._wanted() and local.stack and local.stack[-1] is module:
            block_sparse.leave(self, module, output)  # BigBird's assembled map, on the module's stack
            reformer.leave(self, module, output)  # Reformer's chunked and LSH maps, in token order
        # Pop up to this module: a forward that raised in a child left the child on the stack.
        while local.stack:
            top = local.stack.pop()
            if local.given:
                local.given.pop()
            if self._selected is not None and top in self._selected:
                local.selected -= 1
            if top is module:
                break

    def saw_positions(self, kind: str, positions: np.ndarray) -> None:
        """Positions the model's own code turned into angles or rows of a table (function mode);
        ``kind`` told by the module running it where the code cannot (``kind_in``)."""
        kind = kind_in(kind, self._local.stack)
        stack = self._local.stack
        with self._lock:
            self._positions = (kind, positions)
            self._positions_at = self._names.get(stack[-1]) if stack else None

    def saw_sinusoids(self) -> None:
        """The angles of the latest rotary reading were made into sines and cosines joined in one
        tensor: a sinusoidal position embedding (``recorded_positions.AngleTrail``)."""
        kind = kind_in(SINUSOIDAL, self._local.stack)
        with self._lock:
            if self._positions is not None and self._positions[0] == ROTARY:
                self._positions = (kind, self._positions[1])

    def saw_product(self, func: Any, args: tuple[Any, ...]) -> None:
        """A product made in the module whose softmax was recorded last: when it multiplies those
        weights by their values, the grouping of its KV heads is kept on the call's path."""
        call = self.calls[-1] if self.calls else None
        stack = self._local.stack
        if call is None or call.kind != "softmax" or call.recorded_weights is None or call is self._grouped:
            return
        if not stack or id(stack[-1]) != call.module_key:
            return
        heads = value_heads(tuple(call.recorded_weights.shape), func, args)
        if heads is not None:
            call.path = replace(call.path, value_heads=heads)
            self._grouped = call

    def _read_positions(self, kind: str, module: nn.Module, args: Any, kwargs: Any, output: Any) -> None:
        outer = self._local.given[0] if self._local.given else ((), {})
        model_inputs = (*outer[0], *[v for k, v in outer[1].items() if "position" not in k])
        positions = read_positions(kind, module, tuple(args), dict(kwargs or {}), output, model_inputs)
        kind = LEARNED if kind == MAYBE_LEARNED else kind
        if positions is not None:
            with self._lock:
                # A rotary reading is what attention used; a learned embedding's, only when no
                # rotary module ran since (a model with both rotates by the rotary's).
                if kind != LEARNED or self._positions is None or self._positions[0] == LEARNED:
                    self._positions = (kind, positions)
                    self._positions_at = self._names.get(module)

    def _wanted(self) -> bool:
        return self._active and (self._selected is None or self._local.selected > 0)

    def _base_name(self, up: int = 0) -> str | None:
        stack = self._local.stack[: len(self._local.stack) - up]
        base = self._names[stack[-1]] if stack else None
        if base is None or base == "":
            base = type(stack[-1]).__name__ if stack else None
        return base

    def _numbered(self, base: str | None) -> str:
        return numbered(self._uses, base, len(self.calls))

    def _context(self, up: int = 0) -> dict[str, Any]:
        """What the module stack says about the call being recorded: its name, the module that
        made it, whether it attends to another sequence or belongs to an encoder. ``up``: the
        module that many levels above the one running (a softmax module's attention module)."""
        stack, given = self._local.stack, self._local.given
        stack, given = stack[: len(stack) - up], given[: len(given) - up]
        module = stack[-1] if stack else None
        base = self._base_name(up)
        label = base or ""
        return {
            "module_key": id(module) if module is not None else 0,
            "cross": shaping.is_cross(module, label, [kw for _args, kw in given]),
            "encoder": shaping.is_encoder(label),
            "base": base,
        }

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

    def _add(
        self,
        make: Callable[[], CapturedCall],
        base: str | None,
        tensors: list[Any],
        mask: Any = None,
        padding: Any = None,
    ) -> None:
        """Count the copies a call will take and, within the budget, make it (its copies), then keep
        it named, under the lock: past the budget (or once recording stopped) nothing is copied.
        ``mask`` and ``padding`` (a key padding mask) are copied once per tensor (``_mask``)."""
        with self._lock:
            if not self._reserve(tensors, mask, padding):
                return
            call = make()
            # (a merged self+cross call's extra keys are the encoder's, not a cache: the doctor
            # would read its decoder positions as a cached step's restarting; so would a module
            # given two sequences but not known as cross-attention (which keeps its queries'),
            # whose positions are of either)
            apart = (not call.cross and self._two_sequences()) or self._positions_elsewhere(base)
            if self._positions is not None and not call.self_keys and not apart:
                call.positions_from, call.positions = self._positions
            call.attn_mask = self._mask(mask)
            if padding is not None:
                call.key_padding_mask = self._mask(padding)
            call.name = self._numbered(base) if call.kind != "softmax" else base or ""
            self.calls.append(call)
            parts = (base or "").split(".")
            self._call_branches.update(".".join(parts[: n + 1]) for n in range(len(parts)) if base)

    def _positions_elsewhere(self, base: str | None) -> bool:
        """Whether the positions last read belong to another stack than the call's at ``base``:
        the branch of the model that holds their module, below the part it shares with the call's
        module, made attention calls of its own (a vision tower's patch positions at a perceiver
        over its features, Idefics2's; a text backbone's at a fusion layer, Grounding DINO's).
        Llama's rotary embedding or GPT-2's ``wpe`` beside the layers make no calls: theirs."""
        at = self._positions_at
        if not at or base is None:
            return False
        mine, theirs = base.split(".") if base else [], at.split(".")
        shared = 0
        while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
            shared += 1
        if shared == len(theirs):
            return False  # the position module holds the call (a layer of its own that takes them)
        return ".".join(theirs[: shared + 1]) in self._call_branches

    def _two_sequences(self) -> bool:
        """Whether the module making this call was given two sequences' states (a softmax module's:
        the attention module holding it)."""
        for module, (args, kwargs) in zip(reversed(self._local.stack), reversed(self._local.given)):
            if not isinstance(module, nn.Softmax):
                return shaping.given_two_sequences(args, kwargs)
        return False

    def _reserve(self, tensors: list[Any], *masks: Any) -> bool:
        """Count the bytes these copies will take; False (and recording stops) past the budget."""
        if self._stopped:
            self._skipped += 1
            return False
        need = sum(shaping.nbytes(t) for t in tensors)
        need += sum(shaping.mask_bytes(m) for m in masks if isinstance(m, torch.Tensor) and self._known_mask(m) is None)
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
        if entry is not None and entry[0] is mask and entry[1] == shaping.version(mask):
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
        copy = shaping.copy(shaping.compact(mask))
        # The original is held so that its id cannot be reused by another tensor meanwhile.
        self._masks[id(mask)] = (mask, shaping.version(mask), copy)
        return copy


def _default_budget() -> float:
    available = available_memory(torch.device("cpu"))
    return DEFAULT_CAPTURE_BUDGET if available is None else min(DEFAULT_CAPTURE_BUDGET, available / 2)


def _shard(model: nn.Module | None, sharding: str | None) -> Shard | None:
    """This rank's place under torch.distributed (None when it is not initialised)."""
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        return None
    seen = sharding
    if seen is None and model is not None:
        parallel = (nn.parallel.DistributedDataParallel,)
        if isinstance(model, parallel) or any(isinstance(m, parallel) for m in model.modules()):
            seen = "data"
    return Shard(int(dist.get_rank()), int(dist.get_world_size()), seen)
