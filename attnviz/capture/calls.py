"""One recorded attention call, its fidelity, and what it becomes in a :class:`ModelRun`.

A :class:`CapturedCall` keeps torch CPU copies of what the model passed, exactly as passed (the
shapes and dtypes of SDPA's, nn.MultiheadAttention's, a transformers attention function's or
FlexAttention's arguments), its score terms (a position bias, soft-capping, a ``score_mod``,
sinks), the path that ran, and the model's own output and weights. Its ``fidelity`` is the
largest difference between those and attnviz's recomputation from the recorded tensors
(``attnviz.engine.attend`` in its "sdpa" mask mode, which reproduces PyTorch's SDPA and the
models' eager code), computed the first time it is asked for: the forward pass pays only for
copies. A call of a model's own attention code may hold its weights only (``weights_only``).

``call.weights()`` and ``call.scores()`` are the public way to read what attnviz computes for a
call (``recompute_call`` does the same for a call of a :class:`ModelRun`, from a file say).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from attnviz.state.run import AttentionCall, CallPath, CallTerm, MaskArguments
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

from ..compute.convert import tensor_view
from ..compute.engine_args import call_score_terms
from ..engine import AttentionInputError, MaskMod, MemoryBudgetError, ScoreBias, ScoreMod, Sinks, SoftCap, attend
from ..engine.devices import dtype_name

Kind = Literal[
    "scaled_dot_product_attention", "multihead_attention", "attention_interface", "flex_attention", "softmax"
]

#: Tensors already converted to numpy, by (id of the tensor they come from, shape, dtype).
Converted = dict[tuple[int, tuple[int, ...], torch.dtype], tuple[Any, np.ndarray]]

#: Recomputations larger than this (their weights, in bytes) are done one batch element at a time.
_CHUNK_BYTES = 256 * 2**20


@dataclass(eq=False)
class Term:
    """A score term as recorded (torch): see :class:`attnviz.state.run.CallTerm`."""

    kind: Literal["bias", "softcap", "score_mod"]
    name: str
    values: torch.Tensor | None = None
    cap: float | None = None
    fn: Callable[..., Any] | None = None


@dataclass(eq=False)
class CapturedCall:
    """One attention call: SDPA, an nn.MultiheadAttention forward, a transformers attention
    function, a FlexAttention call, or the softmax of a model's own attention code.

    ``queries`` (B, H, L_q, d), ``keys`` and ``values`` (B, H_kv, L_k, d) as the attention used
    them (for nn.MultiheadAttention: after its input projections, split into heads); all None for
    a call recorded through its softmax only (``recorded_weights`` (B, H, L_q, L_k) then).
    ``attn_mask``, ``key_padding_mask`` (nn.MultiheadAttention only), ``is_causal``, ``scale``,
    ``dropout_p`` and ``enable_gqa`` as the model passed them: an nn.MultiheadAttention boolean
    ``attn_mask`` keeps its own convention (True = masked), the opposite of SDPA's; a
    transformers eager mask is added to the scores (a float mask, as SDPA's). ``mask_mod``: a
    FlexAttention block mask's predicate. ``terms`` and ``sinks``: the score terms, in order.
    ``output`` is the model's own (B, H, L_q, d_v) result; None for an nn.MultiheadAttention
    forward with ``need_weights=True``, whose heads are only returned merged and projected
    (``module_output``, (B, L_q, E)): its fidelity is then measured after that projection.
    ``returned_weights``: the weights the model's code returned (eager), compared too.
    ``dtype`` is the dtype the model computed in. ``note`` says what could not be done.
    ``path`` which code ran; ``cross``: keys from another sequence (an encoder's);
    ``encoder``: a call of an encoder stack (its tokens are the encoder's).
    """

    name: str
    kind: Kind
    queries: torch.Tensor | None
    keys: torch.Tensor | None
    values: torch.Tensor | None
    dtype: torch.dtype
    attn_mask: torch.Tensor | None = None
    key_padding_mask: torch.Tensor | None = None
    is_causal: bool = False
    scale: float | None = None
    dropout_p: float = 0.0
    enable_gqa: bool = False
    output: torch.Tensor | None = None
    module_output: torch.Tensor | None = None
    out_proj: tuple[torch.Tensor, torch.Tensor | None] | None = None
    note: str = ""
    mask_mod: Callable[..., Any] | None = None
    terms: list[Term] = field(default_factory=list)
    sinks: torch.Tensor | None = None
    # The model applies its sinks after the softmax (scaling each row's output by
    # sigmoid(logsumexp - sink), Granite's sliding-window variants) and reports its weights
    # before them: ``weights()`` returns them so; False: the sink is a logit of the softmax
    # (gpt-oss), whose weights carry it.
    sinks_after_softmax: bool = False
    # A decoder's self- and cross-attention merged in one softmax (T5Gemma 2): its first
    # ``self_keys`` keys are the decoder's own, the others the encoder's (0: not merged).
    self_keys: int = 0
    # A banded call (Longformer's and LED's sliding chunks): its one-sided window ``w`` (None:
    # not banded) and its global tokens (B, L), True where a token attends, and is attended
    # by, every token: what it takes to read the (L, L) map back as the model reports it.
    band_window: int | None = None
    global_tokens: torch.Tensor | None = None
    # Per query row (B, H, L_q), what the model's own weights are over the softmax the call draws:
    # Reformer's rows whose every key is masked, where its float32 logsumexp of equal fills weighs
    # each key 1 (the row's factor is the number of keys; 1 elsewhere). The call draws the softmax
    # and says so; its output is compared with the model's as the model computes it.
    row_factor: torch.Tensor | None = None
    returned_weights: torch.Tensor | None = None
    recorded_weights: torch.Tensor | None = None
    path: CallPath = field(default_factory=CallPath)
    cross: bool = False
    encoder: bool = False
    #: id of the innermost module that made the call (a softmax there is not a call of its own).
    module_key: int = 0
    query_tokens: np.ndarray | None = None
    key_tokens: np.ndarray | None = None
    #: The positions the model's rotary (or learned position) embedding was last called with
    #: before this call, (N, L) (``recorded_positions``), and which kind of module read them.
    positions: np.ndarray | None = None
    positions_from: str | None = None
    _fidelity: float | None = field(default=None, repr=False)
    _checked: bool = field(default=False, repr=False)
    _recomputed: torch.Tensor | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        # A summary, never the tensors.
        parts = [
            repr(self.name),
            str(self.kind),
            "B, H, L_q, L_k = " + str(self.shape),
            str(self.dtype).replace("torch.", ""),
        ]
        if self.is_causal:
            parts.append("causal")
        if self.scale is not None:
            parts.append(f"scale {self.scale:.4g}")
        if self.note:
            parts.append(f"note {self.note!r}")
        return f"CapturedCall({', '.join(parts)})"

    @property
    def weights_only(self) -> bool:
        return self.queries is None

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(batch, heads, L_q, L_k)."""
        if self.queries is None:
            assert self.recorded_weights is not None
            b, h, n_q, n_k = self.recorded_weights.shape
            return int(b), int(h), int(n_q), int(n_k)
        assert self.keys is not None
        return (
            int(self.queries.shape[0]),
            int(self.queries.shape[1]),
            int(self.queries.shape[-2]),
            int(self.keys.shape[-2]),
        )

    @property
    def sdpa_attn_mask(self) -> torch.Tensor | None:
        """``attn_mask`` as SDPA (and the engine, and :class:`ModelRun`) read it: an nn.
        MultiheadAttention one in SDPA's convention (a boolean one inverted to True = attend, a
        (B * H, L_q, L_k) one split into (B, H, L_q, L_k)); any other as passed."""
        attn_mask = self.attn_mask
        if self.kind == "multihead_attention" and attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                attn_mask = ~attn_mask
            if attn_mask.dim() == 3 and self.queries is not None:
                b, h = self.queries.shape[0], self.queries.shape[1]
                attn_mask = attn_mask.reshape(b, h, *attn_mask.shape[1:])
        return attn_mask

    def mask_kwargs(self) -> dict[str, object]:
        """The masks as ``attnviz.engine.attend`` keyword arguments."""
        kwargs: dict[str, object] = {
            "attn_mask": self.sdpa_attn_mask,
            "key_padding_mask": self.key_padding_mask,
            "causal": True if self.is_causal else None,
        }
        if self.mask_mod is not None:
            kwargs["mask"] = MaskMod(self.mask_mod)
        return kwargs

    def score_terms(self) -> list[Any]:
        """The score terms as ``attnviz.engine`` descriptions, in the order the model applied them."""
        out: list[Any] = []
        for term in self.terms:
            if term.kind == "softcap" and term.cap is not None:
                out.append(SoftCap(term.cap))
            elif term.kind == "bias" and term.values is not None:
                out.append(ScoreBias(term.values, term.name))
            elif term.kind == "score_mod" and term.fn is not None:
                out.append(ScoreMod(term.fn, term.name))
        if self.sinks is not None:
            out.append(Sinks(sink_logits(self.sinks)))
        return out

    @property
    def fidelity(self) -> float | None:
        """The largest absolute difference between the model's output (and the weights its code
        returned) and attnviz's recomputation (0.0 where both are NaN alike; ``inf`` where only one
        is); None when the call cannot be reproduced, with the reason in ``note``. Computed once,
        when first asked for."""
        if not self._checked:
            self._checked = True
            self._check()
        return self._fidelity

    @property
    def head_output(self) -> torch.Tensor | None:
        """(B, H, L_q, d_v): the model's own output, else attnviz's recomputation of it (an
        nn.MultiheadAttention forward with ``need_weights=True``), else None."""
        if self.output is not None:
            return self.output
        self.fidelity  # noqa: B018 - recomputes the heads on first use
        return self._recomputed

    def weights(self) -> torch.Tensor:
        """(B, H, L_q, L_k): the attention weights attnviz computes for this call from what was
        recorded (its masks, scale and score terms), in float32 or float64; for a call recorded
        through its weights only, those weights. Raises ``AttentionInputError`` (or
        ``MemoryBudgetError``) when the call cannot be recomputed."""
        if self.queries is None:
            assert self.recorded_weights is not None
            return self.recorded_weights
        weights = self._result(("weights",)).weights
        return without_sink(weights) if self.sinks_after_softmax and self.sinks is not None else weights

    def scores(self, stage: str = "masked_scores") -> torch.Tensor:
        """(B, H, L_q, L_k): a stage of attnviz's computation of this call: "masked_scores" (what
        the softmax receives: the scaled scores after the score terms and the masks),
        "modified_scores" (after the terms, before the masks), "scores" (scaled) or
        "raw_scores". Not available for a call recorded through its weights only."""
        if self.queries is None:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP("Capture", "{call} recorded its weights only: it has no scores to compute"),
                    call=self.name,
                ),
                "queries",
            )
        return self._result((stage,)).stage(stage)

    def _result(self, keep: tuple[str, ...]) -> Any:
        q, k, v = self.queries, self.keys, self.values
        assert q is not None and k is not None and v is not None
        dtype = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else None
        return attend(
            q,
            k,
            v,
            mask_mode="sdpa",
            scale=self.scale,
            enable_gqa=_gqa(q, k, self.enable_gqa),
            dtype=dtype,
            keep=keep,
            allow_nonfinite=True,
            score_terms=self.score_terms() or None,
            **self.mask_kwargs(),  # type: ignore[arg-type]
        )

    def _check(self) -> None:
        if self.queries is None:
            return
        if self.dropout_p > 0:
            self._add_note(
                message(
                    QT_TRANSLATE_NOOP(
                        "Capture", "dropout (p = {p}) was applied: the model's output is random and was not compared"
                    ),
                    p=f"{self.dropout_p:g}",
                )
            )
            return
        mode = "neg_inf" if self.output is None and self.kind == "multihead_attention" else "sdpa"
        assert self.keys is not None and self.values is not None
        try:
            ours, weights = recompute(
                self.queries,
                self.keys,
                self.values,
                self.mask_kwargs(),
                self.scale,
                _gqa(self.queries, self.keys, self.enable_gqa),
                mode,
                terms=self.score_terms(),
                with_weights=self.returned_weights is not None,
            )
        except (AttentionInputError, MemoryBudgetError) as exc:
            self._add_note(
                message(QT_TRANSLATE_NOOP("Capture", "not recomputed: {reason}"), reason=exception_message(exc))
            )
            return
        except Exception as exc:  # noqa: BLE001 - a user's mask_mod or score_mod may raise anything: one line
            self._add_note(
                message(
                    QT_TRANSLATE_NOOP("Capture", "not recomputed: {reason}"),
                    reason=f"{type(exc).__name__}: {exc}".splitlines()[0],
                )
            )
            return
        if self.row_factor is not None:
            factor = self.row_factor.to(ours.device, ours.dtype).unsqueeze(-1)
            ours = ours * factor
            weights = None if weights is None else weights * factor.to(weights.dtype)
        weights_gap = 0.0
        if weights is not None and self.returned_weights is not None:
            if self.sinks_after_softmax and self.sinks is not None:
                weights = without_sink(weights)  # what the model reports: its weights before the sink
            weights_gap = largest_difference(weights, self.returned_weights)
        if self.output is not None:
            gap = largest_difference(ours, self.output)
            if math.isinf(gap) and mode == "sdpa":
                gap = self._empty_rows_as_nan(gap)
            self._fidelity = max(gap, weights_gap)
            return
        if self.module_output is None or self.out_proj is None:
            self._fidelity = weights_gap if weights is not None else None
            return
        # nn.MultiheadAttention with need_weights=True returns its heads merged and projected only:
        # the recomputed heads go through the same projection and are compared there.
        weight, bias = self.out_proj
        b, h, n_q, d_v = ours.shape
        merged = ours.transpose(1, 2).reshape(b, n_q, h * d_v).to(weight.dtype)
        with torch.no_grad():
            projected = torch.nn.functional.linear(merged, weight, bias)
        self._fidelity = largest_difference(projected, self.module_output)
        self._recomputed = ours.to(self.values.dtype) if self.values.dtype.is_floating_point else ours
        self._add_note(
            QT_TRANSLATE_NOOP(
                "Capture",
                "the heads' output is attnviz's recomputation (nn.MultiheadAttention with need_weights=True "
                "returns it only after its output projection, where it was compared)",
            )
        )

    def _empty_rows_as_nan(self, gap: float) -> float:
        """The gap again with rows whose every key is masked computed as a plain softmax computes
        them, NaN (an eager function's softmax over -inf; SDPA's kernel, which the first
        recomputation follows, gives 0): where the model's output is NaN on exactly those rows,
        the smaller gap, said in the note; else ``gap``."""
        assert self.queries is not None and self.keys is not None and self.values is not None
        assert self.output is not None
        try:
            ours, _ = recompute(
                self.queries,
                self.keys,
                self.values,
                self.mask_kwargs(),
                self.scale,
                _gqa(self.queries, self.keys, self.enable_gqa),
                "neg_inf",
                terms=self.score_terms(),
            )
        except Exception:  # noqa: BLE001 - the first recomputation ran: this one is a second reading only
            return gap
        again = largest_difference(ours, self.output)
        if again >= gap:
            return gap
        rows = int(torch.isnan(self.output).all(-1).sum())
        self._add_note(
            message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "every key of {rows} query row(s) is masked: the model's softmax gives NaN there, as computed "
                    "(SDPA's kernel gives zeros); later layers carry the NaN on",
                ),
                rows=rows,
            )
        )
        return again

    def _add_note(self, note: str) -> None:
        self.note = (
            note
            if not self.note or note in self.note
            else message(QT_TRANSLATE_NOOP("Capture", "{first}; {second}"), first=self.note, second=note)
        )

    def to_attention_call(self, arrays: Converted, check: bool = True) -> AttentionCall:
        """This call as the app's :class:`AttentionCall` (numpy views of the recorded tensors).

        ``arrays`` remembers the tensors already converted (and holds them, so that no id in it
        is reused), so a mask that calls share stays one array, in the run and in a saved file.
        ``check``: compute the fidelity if it was not yet (else it stays None until it is)."""

        def numpy(t: Any, source: Any = None) -> np.ndarray | None:
            if t is None:
                return None
            if isinstance(t, np.ndarray):
                return t
            base = t if source is None else source  # a mask converted from ``source``
            key = (id(base), tuple(t.shape), t.dtype)
            if key not in arrays:
                # numpy has no bfloat16: widen it to float32, which is exact.
                arrays[key] = (base, (t.float() if t.dtype == torch.bfloat16 else t).numpy())
            return arrays[key][1]

        fidelity = self.fidelity if check else self._fidelity
        terms = tuple(CallTerm(term.kind, term.name, numpy(term.values), term.cap, term.fn) for term in self.terms)
        return AttentionCall(
            self.name,
            numpy(self.queries),
            numpy(self.keys),
            numpy(self.values),
            MaskArguments(
                numpy(self.sdpa_attn_mask, self.attn_mask),
                numpy(self.key_padding_mask),
                None,
                self.is_causal,
                mask_mod=self.mask_mod,
            ),
            scale=self.scale,
            output=numpy(self.head_output if check else self.output),
            weights=numpy(self.recorded_weights),
            fidelity=fidelity,
            note=self.note,
            dtype=dtype_name(self.dtype) if self.dtype == torch.bfloat16 else None,
            terms=terms,
            sinks=None if self.sinks is None else sink_logits(self.sinks).numpy(),
            path=self.path,
            query_tokens=self.query_tokens,
            key_tokens=self.key_tokens,
            **self._query_positions(),
        )

    def _query_positions(self) -> dict[str, Any]:
        """``positions`` and ``positions_from`` for the app's call: the recorded positions when
        they are this call's queries' (as long, one row or one per batch element; a
        cross-attention's queries are, its keys are not), else nothing."""
        positions = self.positions
        if positions is None or self.positions_from is None:
            return {}
        b, _h, n_q, _n_k = self.shape
        if positions.ndim != 2 or positions.shape[1] != n_q or positions.shape[0] not in (1, b):
            return {}
        return {"positions": positions, "positions_from": self.positions_from}


def sink_logits(sinks: torch.Tensor) -> torch.Tensor:
    """A call's sink logits in float64: one per head (H,), or one per query of each head
    (B, H, L_q), as the model gave them."""
    return sinks.double() if sinks.dim() == 3 else sinks.double().reshape(-1)


def without_sink(weights: torch.Tensor) -> torch.Tensor:
    """Weights computed with a sink logit, as the softmax without it: each row over its keys alone
    (the sink's share removed; a row that gave the sink everything stays zero)."""
    total = weights.sum(-1, keepdim=True)
    return torch.where(total > 0, weights / total.clamp_min(torch.finfo(weights.dtype).tiny), weights)


def _gqa(q: torch.Tensor, k: torch.Tensor, enable_gqa: bool) -> bool:
    """GQA as SDPA runs it: asked for, or keys of one head shared by every query head (multi-query
    keys (B, 1, L, d) broadcast across heads, as SDPA broadcasts them without ``enable_gqa``)."""
    return enable_gqa or (q.dim() == 4 and k.dim() == 4 and k.shape[1] == 1 and q.shape[1] > 1)


def recompute(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    kwargs: dict[str, Any],
    scale: float | None,
    enable_gqa: bool,
    mask_mode: str,
    *,
    terms: list[Any] | None = None,
    with_weights: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """attnviz's output (..., L_q, d_v) for these inputs, mask arguments (``attend``'s:
    attn_mask, key_padding_mask, attention_mask, causal, mask) and score terms, and its weights
    when ``with_weights``; half precision is computed in float32.

    A computation whose weights would be large is done one batch element at a time, so the
    check never needs more than about ``_CHUNK_BYTES`` at once (unless the weights are asked for).
    """
    dtype = torch.float32 if queries.dtype in (torch.float16, torch.bfloat16) else None
    n_q, n_k = queries.shape[-2], keys.shape[-2]
    size = math.prod(queries.shape[:-2]) * n_q * n_k * 4
    batch = queries.shape[0]
    # A mask_mod or score_mod indexes the batch: it is not split (its indices would restart at 0).
    functions = "mask" in kwargs or any(isinstance(t, ScoreMod) for t in terms or ())
    if size <= _CHUNK_BYTES or queries.dim() < 3 or batch == 1 or with_weights or functions:
        return _attend(queries, keys, values, kwargs, scale, enable_gqa, mask_mode, dtype, terms)
    outputs = []
    for b in range(batch):
        one = {name: _batch_slice(name, mask, b, batch, queries.dim()) for name, mask in kwargs.items()}
        one_terms = [_term_slice(t, b, batch, queries.dim()) for t in terms or ()]
        out, _ = _attend(
            queries[b : b + 1], keys[b : b + 1], values[b : b + 1], one, scale, enable_gqa, mask_mode, dtype, one_terms
        )
        outputs.append(out)
    return torch.cat(outputs), None


def _attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    kwargs: dict[str, Any],
    scale: float | None,
    gqa: bool,
    mode: str,
    dtype: torch.dtype | None,
    terms: list[Any] | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    result = attend(
        q,
        k,
        v,
        mask_mode=mode,
        scale=scale,
        enable_gqa=gqa,
        dtype=dtype,
        keep=("output",),
        allow_nonfinite=True,
        score_terms=terms or None,
        **kwargs,
    )
    return result.output, result.weights


def _batch_slice(name: str, mask: object, b: int, batch: int, dims: int) -> object:
    """Batch element ``b`` of the mask argument ``name``: padding masks (B, L_k), and masks of the
    queries' rank whose first axis is the batch; masks that broadcast over the batch are shared."""
    if not isinstance(mask, torch.Tensor):
        return mask
    padding = name == "key_padding_mask" or (name == "attention_mask" and mask.dim() == 2)
    if padding or (mask.dim() == dims and mask.shape[0] == batch):
        return mask[b : b + 1]
    return mask


def _term_slice(term: Any, b: int, batch: int, dims: int) -> Any:
    if isinstance(term, ScoreBias) and isinstance(term.values, torch.Tensor):
        t = term.values
        if t.dim() == dims and t.shape[0] == batch:
            return ScoreBias(t[b : b + 1], term.name)
    return term


def difference(ours: torch.Tensor, theirs: torch.Tensor) -> torch.Tensor:
    """|ours - theirs| elementwise in float64 (same shapes): NaN (or the same infinity) in both
    places counts as equal, a NaN or infinity in one of them only as an infinite difference."""
    a, b = ours.double(), theirs.double()
    alike = (torch.isnan(a) & torch.isnan(b)) | (torch.isinf(a) & (a == b))
    gap = torch.where(alike, torch.zeros((), dtype=torch.float64), (a - b).abs())
    return torch.nan_to_num(gap, nan=math.inf)


def largest_difference(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    """max :func:`difference` (infinite for other shapes, 0 for empty tensors)."""
    if ours.shape != theirs.shape:
        return math.inf
    if ours.numel() == 0:
        return 0.0
    return float(difference(ours, theirs).max())


def recompute_call(call: AttentionCall) -> tuple[torch.Tensor, torch.Tensor]:
    """attnviz's (weights, output) of a call of a :class:`ModelRun` (from a file, say): (B, H,
    L_q, L_k) and (B, H, L_q, d_v), computed as SDPA and the models' eager code compute them,
    with the call's masks, scale and score terms. A call of recorded weights only gives those
    weights and an empty output. Raises ``AttentionInputError`` or ``MemoryBudgetError``."""
    if call.queries is None or call.keys is None or call.values is None:
        assert call.weights is not None
        w = tensor_view(call.weights)
        return w, torch.empty((*w.shape[:-1], 0), dtype=w.dtype)
    q, k, v, kwargs = call_arguments(call)
    result = attend(q, k, v, keep=(), allow_nonfinite=True, **kwargs)
    return result.weights, result.output


def call_arguments(call: AttentionCall) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
    """(queries, keys, values, keywords): a recorded call (with its queries, keys and values) as
    the arguments of ``attend`` (and of ``engine.streamed.weight_blocks``, which takes the same):
    its masks as passed, mask mode "sdpa", scale, GQA, score terms; half precision in float32."""
    assert call.queries is not None and call.keys is not None and call.values is not None
    q, k, v = (tensor_view(a) for a in (call.queries, call.keys, call.values))
    masks = call.masks
    kwargs: dict[str, Any] = {
        name: None if getattr(masks, name) is None else tensor_view(getattr(masks, name))
        for name in ("attn_mask", "key_padding_mask", "attention_mask")
    }
    kwargs["causal"] = masks.causal
    if masks.mask_mod is not None:
        kwargs["mask"] = MaskMod(masks.mask_mod)
    kwargs.update(
        mask_mode="sdpa",
        scale=call.scale,
        enable_gqa=_gqa(q, k, call.kv_heads != call.shape[1]),
        dtype=torch.float32 if call.dtype in ("float16", "bfloat16") else None,
        score_terms=call_score_terms(call) or None,
    )
    return q, k, v, kwargs
