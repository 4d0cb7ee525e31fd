"""Re-run a model with its attention edited: does fixing (or breaking) this mask change the output?

    result = attnviz.intervene(model, batch, [
        attnviz.intervene.AblateHead("model.layers.1.self_attn", head=2),
        attnviz.intervene.MaskEdit("model.layers.0.self_attn", cells=[(1, None, 5, 0, False)]),
    ])
    result.before, result.after       # the model's outputs, unedited and edited
    result.max_output_diff            # the largest change of the main output (logits, hidden states)
    result.kl                         # a language model: (batch, positions) KL(before || after)
    result.top_before, result.top_after   # its most likely next tokens per position, before and after

The model runs twice under a capture (``before_capture``, ``after_capture``: every attention call
of each run). The second time an intervention registered with the capture's one patch
(``attnviz.capture.patching.Patch.add_intervention``) edits the calls named as they run:

* :class:`MaskEdit`: the call's mask replaced (``keep``, True = attend, broadcastable to (batch,
  heads, queries, keys)) or edited cell by cell (``cells``: (batch, head, query, key, keep), None
  for every batch element or head) from the mask the call had (its ``attn_mask`` and causal flag).
  A float mask keeps its values where nothing changed (a position bias folded into it stays);
  a cell blocked gets the dtype's lowest value, a cell opened 0.
* :class:`AblateHead`: the head's output set to zero (for one batch element, or all).
* :class:`ReplaceWeights`: the call's output computed from the weights given, times its values.

Calls are named as the capture names them (``before_capture.calls``), or by their index there.
Calls no edit names run exactly as without the intervention: no edits, the same output, bit for
bit. Edits that do not fit the call (another shape) raise ``AttentionInputError`` naming the edit.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from attnviz.capture import Capture, CapturedCall, capture
from attnviz.capture.patching import PATCH, InterfaceFrame
from attnviz.capture.recorder import numbered
from attnviz.compute.call_mask import call_allowed
from attnviz.engine import AttentionInputError
from attnviz.engine.mask_bound import ADDITIVE_MASKED_AT
from attnviz.state.run import MASK_ARGUMENTS, AttentionCall, ModelRun
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "AblateHead",
    "Edit",
    "Intervention",
    "LiveModel",
    "MaskEdit",
    "ReplaceWeights",
    "edited_run",
    "intervene",
    "main_output",
    "toggled_mask",
    "run_model",
]

CallRef = str | int


@dataclass(frozen=True)
class MaskEdit:
    """Replace (``keep``) or edit (``cells``) the mask of ``call``: True = attend. ``keep``:
    booleans broadcastable to the call's (batch, heads, queries, keys), or what ``attend(mask=)``
    takes (a ``Mask`` description, a FlexAttention ``BlockMask``, a bare ``mask_mod``)."""

    call: CallRef
    keep: Any = None
    cells: tuple[tuple[int | None, int | None, int, int, bool], ...] = ()


@dataclass(frozen=True)
class AblateHead:
    """Zero the output of ``head`` of ``call`` (in batch element ``batch``, or in all)."""

    call: CallRef
    head: int
    batch: int | None = None


@dataclass(frozen=True)
class ReplaceWeights:
    """Compute ``call``'s output from ``weights`` (broadcastable to (batch, heads, queries, keys))."""

    call: CallRef
    weights: Any


Edit = MaskEdit | AblateHead | ReplaceWeights


@dataclass(eq=False)
class Intervention:
    """What :func:`intervene` returns (see the module's note)."""

    before: Any
    after: Any
    before_capture: Capture
    after_capture: Capture
    edits: tuple[Edit, ...]
    #: (batch, positions) KL(before || after) of the next-token distribution; None for a model
    #: whose output has no ``logits``.
    kl: torch.Tensor | None = None
    #: (ids, probabilities), each (batch, positions, k): the most likely next tokens.
    top_before: tuple[torch.Tensor, torch.Tensor] | None = None
    top_after: tuple[torch.Tensor, torch.Tensor] | None = None
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        # A summary, never the outputs' tensors.
        kl = "" if self.kl is None else f", mean KL {float(self.kl.mean()):.3g}"
        return (
            f"Intervention({len(self.edits)} edit(s), {len(self.after_capture.calls)} call(s) recorded, "
            f"max output diff {self.max_output_diff:.3g}{kl}{', identical' if self.identical else ''})"
        )

    @property
    def difference(self) -> torch.Tensor:
        """after - before of the main output (logits, last hidden state, the first tensor)."""
        return main_output(self.after).double() - main_output(self.before).double()

    @property
    def max_output_diff(self) -> float:
        gap = self.difference.abs()
        return float(gap.max()) if gap.numel() else 0.0

    @property
    def identical(self) -> bool:
        """The main output is the same, bit for bit."""
        return torch.equal(main_output(self.after), main_output(self.before))

    def comparison(self) -> Any:
        """The two runs compared call by call (:func:`attnviz.compare.compare`)."""
        from attnviz.compare import compare

        return compare(self.before_capture, self.after_capture)


def intervene(
    model: torch.nn.Module,
    inputs: Any,
    edits: Iterable[Edit] = (),
    *,
    tokens: object = None,
    top: int = 5,
) -> Intervention:
    """Run ``model`` on ``inputs`` as it is, then with ``edits`` (see the module's note).

    ``inputs``: a dict of keyword arguments (a tokenizer's batch), a tuple of positional ones, or
    one tensor. ``tokens`` names the tokens of the calls (as ``attnviz.capture`` takes them);
    ``top``: how many most likely next tokens to keep per position.

    Example::

        result = attnviz.intervene(model, batch, [attnviz.intervene.AblateHead("model.layers.1.self_attn", head=2)])
        print(result)                        # Intervention(1 edit(s), max output diff ..., ...)
        result.comparison()                  # how every call changed (attnviz.compare's)
    """
    edits = tuple(edits)
    for edit in edits:
        if not isinstance(edit, (MaskEdit, AblateHead, ReplaceWeights)):
            raise TypeError(
                message(
                    QT_TRANSLATE_NOOP("Intervene", "edits: a {type} is no MaskEdit, AblateHead or ReplaceWeights"),
                    type=type(edit).__name__,
                )
            )
    with torch.no_grad(), capture(model, tokens=tokens) as before_capture:
        before = run_model(model, inputs)
    return edited_run(model, inputs, before_capture, before, edits, tokens=tokens, top=top)


def edited_run(
    model: torch.nn.Module,
    inputs: Any,
    before_capture: Capture,
    before: Any,
    edits: Sequence[Edit],
    *,
    tokens: object = None,
    top: int = 5,
) -> Intervention:
    """The second half of :func:`intervene`: ``model`` run with ``edits`` against a run already
    made (``before_capture`` and its output ``before``), as a live model re-runs at each edit."""
    calls = {c.name: c for c in before_capture.calls}
    names = [c.name for c in before_capture.calls]
    editor = _Editor(threading.get_ident(), {})
    for edit in edits:
        name = _resolve(edit.call, names)
        editor.edits.setdefault(name, []).append(_prepared(edit, calls[name]))
    with torch.no_grad(), capture(model, tokens=tokens) as after_capture:
        editor.capture = after_capture
        PATCH.add_intervention(editor)
        try:
            after = run_model(model, inputs)
        finally:
            PATCH.remove_intervention(editor)
    if editor.errors:
        raise AttentionInputError(editor.errors[0], "edits")
    missing = sorted(set(editor.edits) - editor.applied)
    result = Intervention(before, after, before_capture, after_capture, tuple(edits))
    for name in missing:
        result.notes.append(
            message(QT_TRANSLATE_NOOP("Intervene", "{name} did not run again: its edits were not applied"), name=name)
        )
    logits_before, logits_after = _logits(before), _logits(after)
    if logits_before is not None and logits_after is not None and logits_before.shape == logits_after.shape:
        p = torch.log_softmax(logits_before.double(), dim=-1)
        q = torch.log_softmax(logits_after.double(), dim=-1)
        result.kl = (p.exp() * (p - q)).sum(dim=-1)
        k = min(top, p.shape[-1])
        for name, logp in (("top_before", p), ("top_after", q)):
            probs, ids = logp.exp().topk(k, dim=-1)
            setattr(result, name, (ids, probs))
    return result


class LiveModel:
    """A model kept live beside its captured run (``attnviz.show(model=..., inputs=...)``): run
    once as it is (``capture``, ``before``, ``run``), then again at each change of the edits
    (:meth:`apply`). Thread-safe to call from one worker thread at a time."""

    def __init__(self, model: torch.nn.Module, inputs: Any, *, tokens: object = None) -> None:
        self.model = model
        self.inputs = inputs
        self.tokens = tokens
        # The thread count of the first run, kept for every re-run: a sum split over another
        # number of threads is added in another order, so a re-run with no edit would differ from
        # the first in the last bits (8.9e-8 on a float32 Llama where the window had gone from 2
        # threads to 1 meanwhile, under MKL's conditional numerical reproducibility or ATen's
        # default kernels, as on other CPUs) and undo would not read "unchanged".
        self.threads = torch.get_num_threads()
        with torch.no_grad(), capture(model, tokens=tokens) as cap:
            self.before = run_model(model, inputs)
        self.capture = cap
        self.run = cap.to_run()

    def apply(self, edits: Sequence[Edit]) -> Intervention:
        """The model run with ``edits`` (none: a run identical to the first, bit for bit)."""
        with _num_threads(self.threads):
            return edited_run(self.model, self.inputs, self.capture, self.before, edits, tokens=self.tokens)

    def edits_for(self, run: ModelRun, ablations: Iterable[tuple[int, int]] = ()) -> list[Edit]:
        """The edits that make the model run as ``run`` shows it (masks edited in the window,
        compared with the captured run's) with the heads ``ablations`` (call, head) ablated."""
        edits: list[Edit] = []
        for first, now in zip(self.run.calls, run.calls):
            if not _same_masks(first, now):
                edits.append(MaskEdit(first.name, keep=call_allowed(now)))
        for layer, head in sorted(set(ablations)):
            if self.run.has_head(layer, head):
                edits.append(AblateHead(self.run.calls[layer].name, head))
        return edits


@contextmanager
def _num_threads(threads: int) -> Iterator[None]:
    """Torch's intra-op thread count set to ``threads`` for the block, then put back."""
    before = torch.get_num_threads()
    if before != threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def toggled_mask(run: ModelRun, layer: int, batch: int, head: int, query: int, key: int) -> ModelRun:
    """``run`` with one mask cell of call ``layer`` flipped (attended <-> hidden), in the mask's
    own form: a boolean or float ``attn_mask`` alone keeps its shape (a mask shared by the heads
    flips for every head); a call masked otherwise too (causal flag, key padding, attention_mask,
    mask_mod) gets the boolean ``attn_mask`` it all amounts to, with the cell flipped."""
    call = run.calls[layer]
    masks = call.masks
    mask = masks.attn_mask
    keep = call_allowed(call).numpy()
    keep_now = bool(keep[batch, head, query, key])
    others = masks.is_causal or masks.key_padding_mask is not None or masks.attention_mask is not None
    if mask is None or others or masks.mask_mod is not None:
        shared = bool((keep == keep[:, :1]).all())
        new = keep[:, :1].copy() if shared else keep.copy()
        new[batch, 0 if shared else head, query, key] = not keep_now
        masks = replace(
            masks, attn_mask=new, key_padding_mask=None, attention_mask=None, mask_mod=None, is_causal=False
        )
    else:
        new = np.array(mask, copy=True)
        # Broadcast from the right, as SDPA reads it: a dimension of 1 is shared.
        wanted = (batch, head, query, key)[-min(new.ndim, 4) :]
        index = (0,) * max(new.ndim - 4, 0) + tuple(
            0 if size == 1 else i for size, i in zip(new.shape[-len(wanted) :], wanted)
        )
        if new.dtype == bool:
            new[index] = not keep_now
        else:
            new[index] = 0.0 if not keep_now else np.finfo(new.dtype).min
        masks = replace(masks, attn_mask=new)
    calls = list(run.calls)
    calls[layer] = replace(call, masks=masks)
    return replace(run, calls=tuple(calls))


def _same_masks(a: AttentionCall, b: AttentionCall) -> bool:
    x, y = a.masks, b.masks
    if x.causal != y.causal or x.mask_mod is not y.mask_mod:
        return False
    for name in MASK_ARGUMENTS:
        u, v = getattr(x, name), getattr(y, name)
        if u is v:
            continue
        if u is None or v is None or np.shape(u) != np.shape(v) or not np.array_equal(u, v, equal_nan=True):
            return False
    return True


def run_model(model: Any, inputs: Any) -> Any:
    """``model(**inputs)``, ``model(*inputs)`` or ``model(inputs)``, as ``inputs`` is given."""
    if isinstance(inputs, dict) or (hasattr(inputs, "keys") and hasattr(inputs, "__getitem__")):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


def main_output(output: Any) -> torch.Tensor:
    """A model output's main tensor: ``logits``, else ``last_hidden_state``, else the first tensor."""
    if isinstance(output, torch.Tensor):
        return output
    for name in ("logits", "last_hidden_state"):
        value = getattr(output, name, None)
        if isinstance(value, torch.Tensor):
            return value
    values: Iterable[Any] = output.values() if hasattr(output, "values") else output
    for value in values:
        if isinstance(value, torch.Tensor):
            return value
        if isinstance(value, (tuple, list)) and value and isinstance(value[0], torch.Tensor):
            return value[0]
    raise TypeError(
        message(
            QT_TRANSLATE_NOOP("Intervene", "the model returned a {type}, which holds no tensor to compare"),
            type=type(output).__name__,
        )
    )


def _logits(output: Any) -> torch.Tensor | None:
    value = getattr(output, "logits", None)
    return value if isinstance(value, torch.Tensor) and value.dim() == 3 else None


def _resolve(ref: CallRef, names: Sequence[str]) -> str:
    if isinstance(ref, int) and not isinstance(ref, bool):
        if 0 <= ref < len(names):
            return names[ref]
    elif isinstance(ref, str) and ref in names:
        return ref
    raise AttentionInputError(
        message(
            QT_TRANSLATE_NOOP("Intervene", "edits: call {call} is not a call of this run ({count} calls: {first}...)"),
            call=repr(ref),
            count=len(names),
            first=names[0] if names else "",
        ),
        "edits",
    )


@dataclass(frozen=True)
class _Prepared:
    """An edit made ready for its call: a mask edit's whole keep mask, weights as a tensor."""

    edit: Edit
    shape: tuple[int, int, int, int]
    keep: torch.Tensor | None = None
    weights: torch.Tensor | None = None


def _prepared(edit: Edit, call: CapturedCall) -> _Prepared:
    shape = call.shape
    if isinstance(edit, MaskEdit):
        keep = (
            call_allowed(call.to_attention_call({}, check=False))
            if edit.keep is None
            else _full(edit.keep, shape, edit, torch.bool)
        )
        keep = keep.clone()
        for b, h, q, k, value in edit.cells:
            try:
                keep[slice(None) if b is None else b, slice(None) if h is None else h, q, k] = bool(value)
            except IndexError as exc:
                raise AttentionInputError(
                    message(
                        QT_TRANSLATE_NOOP(
                            "Intervene",
                            "edits: cell {cell} is outside call {call} (batch, heads, queries, keys) {shape}",
                        ),
                        cell=(b, h, q, k),
                        call=call.name,
                        shape=shape,
                    ),
                    "edits",
                ) from exc
        return _Prepared(edit, shape, keep=keep)
    if isinstance(edit, AblateHead):
        if not 0 <= edit.head < shape[1] or (edit.batch is not None and not 0 <= edit.batch < shape[0]):
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP("Intervene", "edits: head {head} (batch {batch}) is not in call {call} {shape}"),
                    head=edit.head,
                    batch=edit.batch,
                    call=call.name,
                    shape=shape,
                ),
                "edits",
            )
        return _Prepared(edit, shape)
    return _Prepared(edit, shape, weights=_full(edit.weights, shape, edit, None))


def _full(value: Any, shape: tuple[int, int, int, int], edit: Edit, dtype: torch.dtype | None) -> torch.Tensor:
    if not isinstance(value, (torch.Tensor, np.ndarray, np.generic, list, tuple, bool, int, float)):
        # A Mask description, a FlexAttention BlockMask or a mask_mod, as attend(mask=) takes it.
        from attnviz.engine.block_masks import as_mask

        described = as_mask(value)
        assert described is not None
        return described.bind_call(shape[:2], shape[2], shape[3]).full().reshape(shape)
    tensor = torch.as_tensor(value)
    if dtype is not None:
        tensor = tensor.to(dtype)
    try:
        return tensor.expand(shape)
    except RuntimeError as exc:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Intervene", "edits: {shape} does not fit call {call} (batch, heads, queries, keys) {call_shape}"
                ),
                shape=tuple(tensor.shape),
                call=edit.call,
                call_shape=shape,
            ),
            "edits",
        ) from exc


class _Editor:
    """The intervention the patch asks at each call (``capture.patching.Intervention``)."""

    def __init__(self, thread: int, edits: dict[str, list[_Prepared]]) -> None:
        self.thread = thread
        self.edits = edits
        self.capture: Capture | None = None
        self.applied: set[str] = set()
        self.errors: list[str] = []
        self._uses: dict[str, int] = {}

    def _name(self) -> str:
        """The name the open capture gives the call being made (as it will number it)."""
        assert self.capture is not None
        return numbered(self._uses, self.capture._base_name(), len(self.capture.calls))

    def _edits_here(self, q: Any) -> tuple[str, list[_Prepared]] | None:
        name = self._name()
        edits = self.edits.get(name)
        if not edits:
            return None
        if not isinstance(q, torch.Tensor) or q.dim() != 4 or tuple(q.shape[:2]) != edits[0].shape[:2]:
            self.errors.append(
                message(
                    QT_TRANSLATE_NOOP("Intervene", "edits: call {call} ran with queries {shape} this time: not edited"),
                    call=name,
                    shape=tuple(q.shape) if isinstance(q, torch.Tensor) else (),
                )
            )
            return None
        self.applied.add(name)
        return name, edits

    def on_sdpa(self, given: dict[str, Any], sdpa: Callable[..., Any]) -> tuple[dict[str, Any], Any] | None:
        found = self._edits_here(given["query"])
        if found is None:
            return None
        given, weights = _edited_arguments(given, found[1], "attn_mask", keep_bool=True)
        q, v = given["query"], given["value"]
        if weights is not None:
            out = _weighted(weights, v, q.dtype)
        else:
            out = sdpa(**given)
        return given, _ablated(out, found[1], heads_axis=1)

    def on_interface(self, implementation: str, frame: InterfaceFrame, fn: Callable[..., Any]) -> Any:
        arguments = frame.arguments
        found = self._edits_here(arguments.get("query"))
        if found is None:
            return None
        arguments, weights = _edited_arguments(arguments, found[1], "attention_mask", keep_bool=False)
        q, v = arguments["query"], arguments["value"]
        frame.arguments = arguments
        if weights is not None:
            out = _weighted(weights, v, q.dtype).transpose(1, 2).contiguous()
            result: Any = (out, weights.to(q.dtype))
        else:
            result = fn(**arguments)
            if frame.inner is not None:  # the SDPA call made inside is what the capture records
                frame.inner = (frame.inner[0], _ablated(frame.inner[1], found[1], heads_axis=1))
        if isinstance(result, tuple):
            return (_ablated(result[0], found[1], heads_axis=2), *result[1:])
        return _ablated(result, found[1], heads_axis=2)


def _edited_arguments(
    given: dict[str, Any], edits: list[_Prepared], mask: str, *, keep_bool: bool
) -> tuple[dict[str, Any], torch.Tensor | None]:
    """A copy of a call's arguments with every mask edit made to its ``mask`` argument (and
    ``is_causal`` off, where it has one: the edited mask is the whole pattern), and the weights
    the last weights edit sets (None: none does). ``keep_bool``: the call takes a boolean mask
    where it was given none (SDPA); otherwise only where the one given is boolean."""
    arguments = dict(given)
    dtype = arguments["query"].dtype
    weights: torch.Tensor | None = None
    for each in edits:
        if each.keep is not None:
            current = arguments.get(mask)
            arguments[mask] = _edited_mask(
                current,
                each.keep,
                dtype,
                keep_bool=keep_bool or (current is not None and current.dtype == torch.bool),
            )
            if "is_causal" in arguments:
                arguments["is_causal"] = False
        if each.weights is not None:
            weights = each.weights
    return arguments, weights


def _edited_mask(given: Any, keep: torch.Tensor, dtype: torch.dtype, *, keep_bool: bool) -> torch.Tensor:
    """The mask to pass instead of ``given``: ``keep`` itself (boolean masks, or none given to
    SDPA), else ``given``'s values with the cells ``keep`` hides at the lowest value of ``dtype``
    and the cells it opens at 0."""
    if keep_bool and (given is None or given.dtype == torch.bool):
        return keep.to(given.device if isinstance(given, torch.Tensor) else keep.device)
    lowest = torch.finfo(dtype).min
    if isinstance(given, torch.Tensor) and given.dtype != torch.bool:
        values = given.to(dtype).expand(keep.shape).clone()
        # Hidden as the mask language reads an additive mask (attnviz.compute.call_mask).
        opened = keep & (values <= ADDITIVE_MASKED_AT)
        values[opened] = 0
    else:
        values = torch.zeros(keep.shape, dtype=dtype)
    values[~keep] = lowest
    return values


def _weighted(weights: torch.Tensor, v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(B, H, L_q, d_v): ``weights`` times the values, key and value heads shared as GQA shares them."""
    heads = weights.shape[1]
    if v.shape[1] != heads:
        v = v.repeat_interleave(heads // v.shape[1], dim=1)
    return torch.matmul(weights.to(v.dtype), v).to(dtype)


def _ablated(out: Any, edits: list[_Prepared], heads_axis: int) -> Any:
    ablations = [e.edit for e in edits if isinstance(e.edit, AblateHead)]
    if not ablations or not isinstance(out, torch.Tensor):
        return out
    out = out.clone()
    for edit in ablations:
        rows = slice(None) if edit.batch is None else edit.batch
        if out.dim() == 4:
            index: tuple[Any, ...] = (rows, slice(None), edit.head) if heads_axis == 2 else (rows, edit.head)
            out[index] = 0
        else:  # (B, L_q, H * d): heads merged
            heads = edits[0].shape[1]
            width = out.shape[-1] // heads
            out[rows, ..., edit.head * width : (edit.head + 1) * width] = 0
    return out


class _CallableModule(types.ModuleType):
    """This module, callable as :func:`intervene` (``attnviz.intervene(model, inputs, edits)``),
    with the edits as its attributes (``attnviz.intervene.AblateHead``)."""

    def __call__(self, model: torch.nn.Module, inputs: Any, edits: Iterable[Edit] = (), **kwargs: Any) -> Intervention:
        return intervene(model, inputs, edits, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
