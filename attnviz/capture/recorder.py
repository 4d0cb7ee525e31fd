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
import inspect
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import torch
from torch import nn

from attnviz.state.run import CallPath, ModelRun, ModelRunError, Shard
from attnviz.text.tr import QT_TRANSLATE_NOOP, message, plural

from ..engine.block_masks import block_mask_mod
from ..engine.budget import available_memory, format_bytes
from ..io.capture_file import save_capture
from . import shaping
from .block_tables import describe_table
from .calls import CapturedCall, Converted, Term
from .patching import PATCH, CallMode, InterfaceFrame, MhaFrame, sdpa_arguments

__all__ = ["DEFAULT_CAPTURE_BUDGET", "Capture", "capture"]

#: Bytes of copies a capture keeps by default (never more than half the memory available).
DEFAULT_CAPTURE_BUDGET = 2 * 2**30

#: A module's forward arguments that carry the mask it built (a call seen through its softmax).
_MASK_ARGUMENTS = ("attention_mask", "attn_mask", "mask", "causal_mask")
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
        return ModelRun(tuple(calls), main, main, source="capture", shard=self.shard)

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
        local.stack.append(module)
        local.given.append((args, kwargs))
        if self._selected is not None and module in self._selected:
            local.selected += 1

    def _leave_module(self, module: nn.Module, args: Any, output: Any) -> None:
        local = self._local
        # Pop up to this module: a forward that raised in a child left the child on the stack.
        while local.stack:
            top = local.stack.pop()
            if local.given:
                local.given.pop()
            if self._selected is not None and top in self._selected:
                local.selected -= 1
            if top is module:
                break

    def _wanted(self) -> bool:
        return self._active and (self._selected is None or self._local.selected > 0)

    def _base_name(self) -> str | None:
        stack = self._local.stack
        base = self._names[stack[-1]] if stack else None
        if base is None or base == "":
            base = type(stack[-1]).__name__ if stack else None
        return base

    def _numbered(self, base: str | None) -> str:
        return numbered(self._uses, base, len(self.calls))

    def _context(self) -> dict[str, Any]:
        """What the module stack says about the call being recorded: its name, the module that
        made it, whether it attends to another sequence or belongs to an encoder."""
        stack, given = self._local.stack, self._local.given
        module = stack[-1] if stack else None
        base = self._base_name()
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

    def _add(self, make: Callable[[], CapturedCall], base: str | None, tensors: list[Any], mask: Any = None) -> None:
        """Count the copies a call will take and, within the budget, make it (its copies), then keep
        it named, under the lock: past the budget (or once recording stopped) nothing is copied."""
        with self._lock:
            if not self._reserve(tensors, mask):
                return
            call = make()
            call.attn_mask = self._mask(mask)
            call.name = self._numbered(base) if call.kind != "softmax" else base or ""
            self.calls.append(call)

    def _on_sdpa(self, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any, frame: InterfaceFrame | None) -> None:
        self._record_sdpa(sdpa_arguments(args, kwargs), out, frame)

    def _record_sdpa(self, given: dict[str, Any], out: Any, frame: InterfaceFrame | None) -> None:
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
                _function_name(frame.function),
                weights_requested=_weights_requested(frame.arguments),
                sdpa_backend=path.sdpa_backend,
                packed_gqa=packed,
            )
            if packed:
                note = QT_TRANSLATE_NOOP(
                    "Capture",
                    "a GQA decode step transformers ran with its query heads folded into the query axis: shown "
                    "unfolded, one query per head",
                )
        context = self._context()
        self._add(
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
                path=path,
                cross=context["cross"],
                encoder=context["encoder"],
                module_key=context["module_key"],
            ),
            context["base"],
            [q, k, v, out],
            mask,
        )

    def _on_interface(self, frame: InterfaceFrame, result: Any) -> None:
        """A transformers attention function returned: its inner SDPA call is the call (with the
        path that led to it); else what the function itself received and returned."""
        if frame.inner is not None:
            self._record_sdpa(*frame.inner, frame)
            return
        a = frame.arguments
        q, k, v, mask = a["query"], a["key"], a["value"], a["attention_mask"]
        if not all(isinstance(t, torch.Tensor) for t in (q, k, v)) or q.dim() != 4:
            raise TypeError("an attention function given no (B, H, L, d) tensors is not recorded")
        module = frame.module
        out: Any
        out, weights = (
            (result[0], result[1] if len(result) > 1 else None) if isinstance(result, tuple) else (result, None)
        )
        if (
            isinstance(out, torch.Tensor)
            and out.dim() == 4
            and out.shape[1] == q.shape[2]
            and out.shape[2] == q.shape[1]
        ):
            out = out.transpose(1, 2)  # transformers' functions return (B, L_q, H, d_v)
        if not isinstance(out, torch.Tensor) or out.shape[:3] != q.shape[:3]:
            out = None
        n_k = k.shape[2]
        terms: list[Term] = []
        mask_mod = None
        kpm = None
        attn_mask: torch.Tensor | None = None
        notes: list[str] = []
        implementation = frame.implementation
        softcap = a.get("softcap")
        if isinstance(softcap, (int, float)) and not isinstance(softcap, bool) and softcap > 0:
            terms.append(Term("softcap", "softcap", cap=float(softcap)))
        unhonoured = None  # block sparsity of a block table that the CPU computed (block_tables)
        if _is_block_mask(mask):
            mask_mod = _live_mask_mod(mask, q.is_cuda)
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
                        QT_TRANSLATE_NOOP(
                            "Capture", "a boolean mask added to the scores as 0 and 1 by the eager function"
                        )
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
            # attnviz's sinks are one logit per head (gpt-oss's); per-query ones are left out, and
            # said, so that the fidelity's gap has its reason beside it.
            notes.append(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "sink logits per query are not recorded (attnviz keeps one per head): recomputed without them",
                )
            )
            sinks = None
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
            flag = a.get("is_causal")
            is_causal = bool(getattr(module, "is_causal", False) if flag is None else flag) and q.shape[2] > 1
        scaling = a.get("scaling")
        dropout = float(a.get("dropout", 0.0) or 0.0) if getattr(module, "training", False) else 0.0
        returned = weights if out is None and isinstance(weights, torch.Tensor) else None
        context = self._context()
        self._add(
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
                returned_weights=shaping.copy(returned),
                path=CallPath(
                    implementation,
                    _function_name(frame.function),
                    weights_requested=_weights_requested(a),
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

    def _on_flex(self, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
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
        context = self._context()
        self._add(
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
                mask_mod=_live_mask_mod(block_mask, q.is_cuda) if block_mask is not None else None,
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

    def _on_softmax(self, inputs: torch.Tensor, out: Any) -> None:
        """The softmax of a model's own attention code: its weights, the module's mask, and a note
        that nothing else can be seen. Dropped at the end if the module made a recorded call."""
        stack, given = self._local.stack, self._local.given
        module = stack[-1] if stack else None
        if not isinstance(out, torch.Tensor) or module is None:
            return
        weights = shaping.weights_4d(out, module)
        if weights is None:
            return
        b, h, n_q, n_k = weights.shape
        args, kwargs = given[-1] if given else ((), {})
        kwargs = _named_arguments(module, args, kwargs)
        mask, kpm = _module_mask(args, kwargs, (b, h, n_q, n_k))
        context = self._context()
        name = type(module).__name__
        note = message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "attention code of its own ({module}): its weights were recorded at its softmax; its queries, "
                "keys and values are not visible to a capture (weights only)",
            ),
            module=name,
        )
        rate = _dropout_rate(module)
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
        self._add(
            lambda: CapturedCall(
                "",
                "softmax",
                None,
                None,
                None,
                inputs.dtype,
                key_padding_mask=kpm,
                recorded_weights=shaping.copy(weights),
                note=note,
                path=CallPath(
                    "module",
                    f"{type(module).__module__}.{name}",
                    weights_requested=_flag(kwargs.get("output_attentions")),
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

    def _record_mha(
        self,
        module: nn.MultiheadAttention,
        signature: inspect.Signature,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        frame: MhaFrame,
        result: Any,
    ) -> None:
        bound = signature.bind(module, *args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        query = given["query"]
        batched = query.dim() == 3
        kpm, attn_mask = given["key_padding_mask"], given["attn_mask"]
        fast = shaping.mha_fast_path(
            module, query, given["key"], given["value"], attn_mask, kpm, PATCH.fastpath_was_enabled
        )
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
                q, k, v = shaping.project(module, query, given["key"], given["value"])
            out = None
            # (L, B, E) or (B, L, E) or (L, E) as the module returned it: (B, L, E) here.
            module_output = (
                result[0]
                if batched and module.batch_first
                else (result[0].transpose(0, 1) if batched else result[0].unsqueeze(0))
            )
        context = self._context()
        note = ""
        if fast:
            note = QT_TRANSLATE_NOOP(
                "Capture",
                "without the capture nn.MultiheadAttention would have taken its fused fast path (which reads a "
                "float mask as a boolean one); the capture ran its Python path",
            )
        need_weights = bool(given["need_weights"])
        with self._lock:
            weights = [] if out is not None else [module.out_proj.weight, module.out_proj.bias]
            if not self._reserve([q, k, v, out, module_output, *weights], attn_mask, kpm):
                return
            self.calls.append(
                CapturedCall(
                    self._numbered(context["base"]),
                    "multihead_attention",
                    shaping.copy(q),
                    shaping.copy(k),
                    shaping.copy(v),
                    q.dtype,
                    attn_mask=self._mask(attn_mask),
                    key_padding_mask=self._mask(kpm),
                    is_causal=bool(given["is_causal"]),
                    dropout_p=module.dropout if module.training else 0.0,
                    output=shaping.copy(out),
                    module_output=shaping.copy(module_output),
                    out_proj=None
                    if out is not None
                    else (shaping.copy(module.out_proj.weight), shaping.copy(module.out_proj.bias)),
                    note=note,
                    path=CallPath(
                        "multihead_attention",
                        "torch.nn.MultiheadAttention.forward",
                        weights_requested=need_weights,
                        fast_path=fast,
                    ),
                    cross=context["cross"] or given["query"] is not given["key"],
                    encoder=context["encoder"],
                    module_key=context["module_key"],
                )
            )

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


def _dropout_rate(module: nn.Module) -> float:
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


def _function_name(fn: Any) -> str:
    module = getattr(fn, "__module__", "") or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{module}.{name}" if module else str(name)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _weights_requested(arguments: dict[str, Any]) -> bool | None:
    return _flag(arguments.get("output_attentions"))


def _is_block_mask(mask: Any) -> bool:
    return type(mask).__name__ == "BlockMask" and hasattr(mask, "mask_mod")


def _live_mask_mod(block_mask: Any, on_gpu: bool = True) -> Callable[..., Any] | None:
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


def _named_arguments(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
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


def _module_mask(
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
