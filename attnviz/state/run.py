"""A model's attention, layer by layer and head by head: what a file, a capture or another
tool's cache brings, as plain numpy (no Qt, no torch).

A :class:`ModelRun` is a sequence of :class:`AttentionCall` (one per attention layer, in call
order) and the tokens on its axes. Calls need not share a geometry: a windowed model's calls
have batch x windows of their own at every stage, a decoder's cross-attention calls have the
encoder's keys; each call may carry the tokens of its own query and key axes
(``AttentionCall.query_tokens``, ``key_tokens``), the run's are what calls without their own show.
Each call keeps its tensors with their heads,
(B, H, L_q, d) queries and (B, H_kv, L_k, d) keys and values, and its masks exactly as the
model's code passed them, under the argument they came through (``attn_mask`` as SDPA reads it,
``key_padding_mask`` as ``nn.MultiheadAttention`` reads it, ``attention_mask`` as Hugging Face
builds it, ``is_causal``): what a mask means is declared by its argument, never guessed.

The book's input is a run too: one call of one head (``source="book"``), its (B, Q, d) tensors
as (B, 1, Q, d). The app shows one head at a time (:meth:`ModelRun.head_view`: views of the
run's arrays, made on demand, never copies) and every head of a call in its grid; which head is
on show (a :class:`Focus`) is the session's choice, not part of the run. Edits are written into
the run (:meth:`ModelRun.with_head`, :meth:`ModelRun.with_call`), copying only what they change.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple

import numpy as np

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "CAUSAL_ALIGNMENTS",
    "MASK_ARGUMENTS",
    "MAX_WORLD_SIZE",
    "SCORE_TERM_KINDS",
    "AttentionCall",
    "CallPath",
    "CallTerm",
    "Focus",
    "HeadView",
    "MaskArguments",
    "ModelRun",
    "ModelRunError",
    "Shard",
    "head_slice",
]

#: The arguments a mask can come through, in the order the engine combines them.
MASK_ARGUMENTS: tuple[str, ...] = ("attn_mask", "key_padding_mask", "attention_mask")

#: Where a run came from; "book": the book's 3-D inputs (typed, filled, a preset, a tensor file
#: without heads), one call of one head whose queries and keys may differ in size (additive
#: scoring takes any d_q and d_k; the engine refuses a dot product of different sizes).
Source = Literal["file", "capture", "transformer_lens", "output_attentions", "tensors", "book"]
#: The values of a causal flag other than off (``MaskArguments.causal``).
CAUSAL_ALIGNMENTS: tuple[str, ...] = ("top_left", "bottom_right")


class Focus(NamedTuple):
    """Which head is on show: head ``head`` of call (layer) ``layer``. A choice of what to look
    at, held by the session's selection, never by the document."""

    layer: int = 0
    head: int = 0


class ModelRunError(ValueError):
    """Tensors that do not form a model run (shapes that disagree); the message is one line."""


@dataclass(frozen=True)
class MaskArguments:
    """Masks as a model's code passes them to attention, for one head's 3-D slice or a whole
    call: each array broadcastable as the engine's argument of the same name reads it."""

    attn_mask: np.ndarray | None = None
    key_padding_mask: np.ndarray | None = None
    attention_mask: np.ndarray | None = None
    is_causal: bool = False
    #: Where the causal mask lines up when there are fewer queries than keys: "top_left" (SDPA's
    #: is_causal) or "bottom_right" (the last query sees the last key: a KV-cache step, as
    #: Hugging Face's causal masks do). The same whenever L_q = L_k.
    causal_alignment: Literal["top_left", "bottom_right"] = "top_left"
    #: A FlexAttention block mask's ``mask_mod(b, h, q_idx, kv_idx)`` (True = attend), combined with
    #: the other arguments; a live function, kept while the program runs (a file keeps it as the
    #: boolean ``attn_mask`` it evaluates to).
    mask_mod: Any = None

    @property
    def any(self) -> bool:
        return (
            self.is_causal
            or self.mask_mod is not None
            or any(getattr(self, name) is not None for name in MASK_ARGUMENTS)
        )

    @property
    def causal(self) -> str | None:
        """The engine's ``causal`` argument: None, "top_left" or "bottom_right"."""
        return self.causal_alignment if self.is_causal else None

    def as_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``attnviz.engine.attend`` (``causal`` for ``is_causal``)."""
        kwargs: dict[str, object] = {name: getattr(self, name) for name in MASK_ARGUMENTS}
        # True is SDPA's is_causal as passed; the engine reads it as "top_left".
        kwargs["causal"] = True if self.causal == "top_left" else self.causal
        return kwargs


#: The kinds of score term a call records, in the engine's words (``attnviz.engine.score_terms``):
#: a finite bias added to the scaled scores, tanh soft-capping, a FlexAttention ``score_mod``,
#: ALiBi (one slope per head, the bias slope x (kv_idx - q_idx) computed where it is used).
SCORE_TERM_KINDS: tuple[str, ...] = ("bias", "softcap", "score_mod", "alibi")


@dataclass(frozen=True, eq=False)
class CallTerm:
    """One score term of a recorded call, in the order the model applied it.

    ``kind`` "bias": ``values`` broadcastable to the call's (B, H, L_q, L_k), added to the scaled
    scores (ALiBi, T5's relative position bias); "softcap": ``cap`` (s -> cap tanh(s / cap));
    "score_mod": a FlexAttention ``score_mod`` function ``fn`` (kept while the program runs; a
    file keeps what it is where it is recognised: a bias, a soft cap, ALiBi; else its effect);
    "alibi": ``values`` (H,) the slope of each head, ``slope * (kv_idx - q_idx)`` added. ``name``
    says what it is ("ALiBi", "position_bias", "softcap", "score_mod")."""

    kind: Literal["bias", "softcap", "score_mod", "alibi"]
    name: str
    values: np.ndarray | None = None
    cap: float | None = None
    fn: Any = None


@dataclass(frozen=True)
class CallPath:
    """Which code computed a call, as far as the capture could see it.

    ``implementation``: "sdpa" (``torch.nn.functional.scaled_dot_product_attention``), "eager"
    (transformers' ``eager_attention_forward`` or a model's own function registered as such),
    "flex_attention", "multihead_attention" (``nn.MultiheadAttention`` through its Python code),
    another name registered in transformers' ``AttentionInterface`` ("flash_attention_2"...), or
    "module" (a model's attention code of its own: ``function`` names its class).
    ``function``: the function or module class called. ``weights_requested``: whether the
    caller asked for the weights (``output_attentions``, ``need_weights``; None: not known).
    ``fast_path``: nn.MultiheadAttention's fused fast path would have run without the capture.
    ``sdpa_backend``: on CUDA, the SDPA kernel PyTorch would pick for these arguments ("flash",
    "efficient", "cudnn", "math"); None on the CPU. ``packed_gqa``: transformers folded the
    query heads into the query axis (a GQA decode step) and the call is shown unfolded.
    ``weights_only``: only the weights could be recorded (the reason is the call's note).
    ``unhonoured_blocks``: a FlexAttention call on the CPU whose block table skips blocks its
    mask_mod allows: their share (0..1) of the table's blocks, computed by PyTorch's CPU
    flex_attention (a GPU skips them) and so shown as computed (None: nothing of the kind).
    ``value_heads``: for a call recorded at its softmax (weights only), the KV head each query
    head read, as the values the weights were then multiplied by show (heads that are copies of
    one KV head share its number, numbered in order of first use); None: not seen, or no
    grouping (``capture.value_heads``)."""

    implementation: str = "sdpa"
    function: str = ""
    weights_requested: bool | None = None
    fast_path: bool = False
    sdpa_backend: str | None = None
    packed_gqa: bool = False
    weights_only: bool = False
    unhonoured_blocks: float | None = None
    value_heads: tuple[int, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "implementation": self.implementation,
            "function": self.function,
            "weights_requested": self.weights_requested,
            "fast_path": self.fast_path,
            "sdpa_backend": self.sdpa_backend,
            "packed_gqa": self.packed_gqa,
            "weights_only": self.weights_only,
        }
        if self.unhonoured_blocks is not None:  # written only where there is some
            out["unhonoured_blocks"] = self.unhonoured_blocks
        if self.value_heads is not None:
            out["value_heads"] = list(self.value_heads)
        return out


@dataclass(frozen=True)
class AttentionCall:
    """One attention call (a layer) of a model.

    ``queries`` (B, H, L_q, d), ``keys`` (B, H_kv, L_k, d), ``values`` (B, H_kv, L_k, d_v): H_kv
    divides H (grouped-query attention when smaller). All three are None for a source that
    recorded only the weights (Hugging Face ``output_attentions``): then ``weights``
    (B, H, L_q, L_k) is what is shown, and nothing can be recomputed or edited.
    ``output`` is the model's own result (B, H, L_q, d_v) when known, ``fidelity`` the largest
    difference between it and attnviz's recomputation (None: not checked), ``note`` a one-line
    remark on this call (why it could not be reproduced, what was left out). ``dtype`` names the
    dtype the model computed in when the arrays hold another one (bfloat16, which numpy lacks, is
    kept as float32); None: the queries' own.

    ``terms``: the call's score terms in the order the model applied them (:class:`CallTerm`; the
    engine's descriptions of them: ``compute.engine_args.call_score_terms``);
    ``sinks``: one sink logit per head (gpt-oss), (H,), or one per query of each head (Inkling 2),
    (B, H, L_q); or None. ``path``: which code ran
    (:class:`CallPath`; None: not recorded). ``query_tokens`` (B, L_q) and ``key_tokens``
    (B, L_k): the tokens of this call's own axes (a cross-attention call's keys are the
    encoder's), None to show the run's. ``positions`` (1 or B, L_q): the positions the model's
    rotary embedding (``positions_from`` "rotary"), learned position embedding ("learned"),
    sinusoidal position table or code ("sinusoidal") or ALiBi slopes ("alibi": keys' positions)
    was called with for these queries, as a capture read them; None: not recorded.
    """

    name: str
    queries: np.ndarray | None
    keys: np.ndarray | None
    values: np.ndarray | None
    masks: MaskArguments = field(default_factory=MaskArguments)
    scale: float | None = None
    output: np.ndarray | None = None
    weights: np.ndarray | None = None
    fidelity: float | None = None
    note: str = ""
    dtype: str | None = None
    terms: tuple[CallTerm, ...] = ()
    sinks: np.ndarray | None = None
    path: CallPath | None = None
    query_tokens: np.ndarray | None = None
    key_tokens: np.ndarray | None = None
    positions: np.ndarray | None = None
    positions_from: str | None = None

    @property
    def weights_only(self) -> bool:
        return self.queries is None

    def __repr__(self) -> str:
        # A summary, never the arrays (often memory-mapped from a capture file).
        parts = [repr(self.name), "B, H, L_q, L_k = " + str(self.shape)]
        if self.queries is None:
            parts.append("weights only")
        if self.masks.causal:
            parts.append(f"causal {self.masks.causal}")
        if self.scale is not None:
            parts.append(f"scale {self.scale:.4g}")
        if self.fidelity is not None:
            parts.append(f"fidelity {self.fidelity:.2g}")
        if self.note:
            parts.append(f"note {self.note!r}")
        return f"AttentionCall({', '.join(parts)})"

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(batch, heads, L_q, L_k)."""
        if self.queries is not None and self.keys is not None:
            b, h, lq, _ = self.queries.shape
            return int(b), int(h), int(lq), int(self.keys.shape[2])
        assert self.weights is not None
        b, h, lq, lk = self.weights.shape
        return int(b), int(h), int(lq), int(lk)

    @property
    def kv_heads(self) -> int:
        return int(self.keys.shape[1]) if self.keys is not None else self.shape[1]

    def kv_head(self, head: int) -> int:
        """The key/value head serving query head ``head`` (consecutive heads share one, as SDPA)."""
        return head // (self.shape[1] // self.kv_heads)

    @property
    def batch(self) -> int:
        return self.shape[0]

    def head_masks(self, head: int) -> MaskArguments:
        """This call's masks for one head's (B, L_q, d) slice: a head axis is indexed away."""
        m = self.masks
        return replace(
            m,
            attn_mask=head_slice(m.attn_mask, head),
            attention_mask=head_slice(m.attention_mask, head),
            mask_mod=None if m.mask_mod is None else _one_head_mask(m.mask_mod, head),
        )

    def _invalid(self, text: str, **names: object) -> ModelRunError:
        """The refusal ``text``, a template whose ``{call}`` is this call's name."""
        return ModelRunError(message(text, call=self.name, **names))

    def check(self, *, same_size: bool = True) -> None:
        """Raise :class:`ModelRunError` unless the shapes fit together (``same_size``: queries
        and keys of one size, as every model's dot product needs)."""
        arrays = {"queries": self.queries, "keys": self.keys, "values": self.values}
        given = [name for name, a in arrays.items() if a is not None]
        if given and len(given) != 3:
            raise self._invalid(
                QT_TRANSLATE_NOOP("ModelRun", "{call}: queries, keys and values come together (only {given} found)"),
                given=", ".join(given),
            )
        if not given and self.weights is None:
            raise self._invalid(
                QT_TRANSLATE_NOOP("ModelRun", "{call}: neither queries, keys and values nor attention weights"),
            )
        for name, tokens, length in (
            ("query_tokens", self.query_tokens, 2),
            ("key_tokens", self.key_tokens, 3),
        ):
            if tokens is not None and tuple(tokens.shape) != (self.shape[0], self.shape[length]):
                raise self._invalid(
                    QT_TRANSLATE_NOOP(
                        "ModelRun", "{call}: {name} have shape {shape}; the call needs ({batch}, {length})"
                    ),
                    name=name,
                    shape=tuple(tokens.shape),
                    batch=self.shape[0],
                    length=self.shape[length],
                )
        for name, a in {**arrays, "weights": self.weights, "output": self.output}.items():
            if a is not None and a.ndim != 4:
                raise self._invalid(
                    QT_TRANSLATE_NOOP(
                        "ModelRun", "{call}: {name} must be (batch, heads, length, size), got shape {shape}"
                    ),
                    name=name,
                    shape=tuple(a.shape),
                )
        if self.queries is None:
            return
        q, k, v = self.queries, self.keys, self.values
        assert k is not None and v is not None
        b, h, _, d = q.shape
        problem = None
        if k.shape[0] != b or v.shape[0] != b:
            problem = "batch"
        elif k.shape[1] != v.shape[1] or h % k.shape[1]:
            problem = "heads"
        elif k.shape[2] != v.shape[2]:
            problem = "length"
        elif same_size and k.shape[3] != d:
            problem = "size"
        if problem is not None:
            raise self._invalid(
                QT_TRANSLATE_NOOP(
                    "ModelRun", "{call}: the {axis} of queries {q}, keys {k} and values {v} do not fit together"
                ),
                axis=problem,
                q=tuple(q.shape),
                k=tuple(k.shape),
                v=tuple(v.shape),
            )


def _one_head_mask(fn: Any, head: int) -> Any:
    """A mask_mod of a whole call, called for one head's slice (whose head index is 0)."""

    def one(b: Any, _h: Any, q_idx: Any, kv_idx: Any) -> Any:
        return fn(b, _h + head, q_idx, kv_idx)

    return one


#: A whole call's mask_mod called for one head's slice (``compare.one_head_call``).
shifted_mask_mod = _one_head_mask


def head_slice(mask: np.ndarray | None, head: int) -> np.ndarray | None:
    if mask is None or mask.ndim < 4:
        return mask  # (L_q, L_k), (B, L_k) or (B, L_q, L_k): no head axis
    # (..., H or 1, L_q, L_k): keep the leading batch axes, drop the head axis.
    index = head if mask.shape[-3] > 1 else 0
    return mask[..., index, :, :]


#: A call of recorded weights only has no tensors: its head views show zeros of one column
#: (read-only, no memory), so every view can still read the shapes (B, L_q, L_k).
_NO_TENSOR = np.zeros((1, 1, 1), np.float32)
_NO_TENSOR.setflags(write=False)


@dataclass(frozen=True)
class HeadView:
    """One head of one call as the book's 3-D tensors: views of the run's arrays, no copy.

    ``queries`` (B, L_q, d), ``keys`` (B, L_k, d), ``values`` (B, L_k, d_v) (the key/value head
    serving this query head); ``masks`` the call's masks sliced to this head, None when it has
    none (its causal flag is ``causal``, not a mask array); tokens cut to the call's lengths.
    """

    call: AttentionCall
    layer: int
    head: int
    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    masks: MaskArguments | None
    query_tokens: np.ndarray | None
    key_tokens: np.ndarray | None

    @property
    def focus(self) -> Focus:
        return Focus(self.layer, self.head)

    @property
    def scale(self) -> float | None:
        """The call's scale (None: 1/sqrt(d))."""
        return self.call.scale

    @property
    def causal(self) -> str | None:
        """The call's causal flag as the engine's ``causal``: None, "top_left" or "bottom_right"."""
        return self.call.masks.causal

    @property
    def weights_only(self) -> bool:
        return self.call.weights_only

    @property
    def batch(self) -> int:
        return int(self.queries.shape[0])

    @property
    def n_queries(self) -> int:
        return int(self.queries.shape[1])

    @property
    def n_keys(self) -> int:
        return int(self.keys.shape[1])

    @property
    def dims(self) -> dict[str, int]:
        return {
            "batch": self.batch,
            "n_queries": self.n_queries,
            "n_keys": self.n_keys,
            "d_q": int(self.queries.shape[2]),
            "d_k": int(self.keys.shape[2]),
            "d_v": int(self.values.shape[2]),
        }

    def tokens(self, batch: int) -> tuple[list[str] | None, list[str] | None]:
        """The query and key tokens of one batch element (None where there are none)."""

        def one(tokens: np.ndarray | None) -> list[str] | None:
            return None if tokens is None else [str(t) for t in tokens[batch]]

        return one(self.query_tokens), one(self.key_tokens)


#: The most ranks a run may claim: the largest runs have some 10^5 (a file claiming more is refused
#: before anything counts them: a world size sizes the merge's checks).
MAX_WORLD_SIZE = 1 << 20


@dataclass(frozen=True)
class Shard:
    """Where a run recorded under ``torch.distributed`` sits: rank ``rank`` of ``world_size``,
    holding ``sharding`` "data" (its own batch elements: data parallel), "heads" (its own heads of
    every call: tensor parallel) or None (not known)."""

    rank: int
    world_size: int
    sharding: str | None = None


@dataclass(frozen=True)
class ModelRun:
    """A model's attention calls and its tokens.

    ``query_tokens`` (B, L_q) and ``key_tokens`` (B, L_k) are strings (None: no tokens); one
    sequence given for the whole batch is repeated (``with_tokens``). They are shown on the
    calls of that batch that have no tokens of their own (``AttentionCall.query_tokens``).
    ``source`` says where the run came from. Calls need not share a length (a decoder's KV-cache
    steps) nor a batch (a windowed model's batch x windows, an encoder-decoder's calls).
    """

    calls: tuple[AttentionCall, ...]
    query_tokens: np.ndarray | None = None
    key_tokens: np.ndarray | None = None
    source: Source = "tensors"
    #: The rank's place when the run was recorded under torch.distributed (None: one process).
    shard: Shard | None = None

    def __repr__(self) -> str:
        # A summary, never the arrays (often memory-mapped from a capture file).
        shapes = sorted({call.shape for call in self.calls})
        shown = ", ".join(str(shape) for shape in shapes[:3]) + (" ..." if len(shapes) > 3 else "")
        tokens = "" if self.query_tokens is None else ", with tokens"
        return f"ModelRun({len(self.calls)} call(s) from {self.source}, B, H, L_q, L_k = {shown}{tokens})"

    def __post_init__(self) -> None:
        if not self.calls:
            raise ModelRunError(message(QT_TRANSLATE_NOOP("ModelRun", "a model run needs at least one attention call")))
        for call in self.calls:
            call.check(same_size=self.source != "book")
        for name, tokens, axis in (("query_tokens", self.query_tokens, 2), ("key_tokens", self.key_tokens, 3)):
            if tokens is None:
                continue
            lengths = {call.shape[axis] for call in self.calls if call.shape[0] == tokens.shape[0]}
            if tokens.ndim != 2 or not lengths or tokens.shape[1] not in lengths:
                raise ModelRunError(
                    message(
                        QT_TRANSLATE_NOOP(
                            "ModelRun", "{name} have shape {shape}; the tensors need ({batch}, {length})"
                        ),
                        name=name,
                        shape=tuple(tokens.shape),
                        batch=self.calls[0].shape[0],
                        length=max(lengths) if lengths else self.calls[0].shape[axis],
                    )
                )

    @property
    def batch(self) -> int:
        """The largest batch of a call (every call's when they share one): the batch elements a
        picker offers; ``batch_of(layer)`` is one call's."""
        return max(call.shape[0] for call in self.calls)

    def batch_of(self, layer: int) -> int:
        """Call ``layer``'s batch size (its batch x windows for a windowed model)."""
        return self.calls[layer].shape[0]

    @property
    def layers(self) -> int:
        return len(self.calls)

    def heads(self, layer: int) -> int:
        return self.calls[layer].shape[1]

    @property
    def single_head(self) -> bool:
        """One call of one head (the book's input, say): no head or layer to choose."""
        return self.layers == 1 and self.calls[0].shape[1] == 1

    @property
    def editable(self) -> bool:
        """Whether every call brings queries, keys and values (not recorded weights only)."""
        return not any(call.weights_only for call in self.calls)

    def has_head(self, layer: int, head: int) -> bool:
        return 0 <= layer < self.layers and 0 <= head < self.heads(layer)

    def clamp(self, focus: tuple[int, int]) -> Focus:
        """``focus`` moved to the nearest head this run has."""
        layer = max(0, min(int(focus[0]), self.layers - 1))
        return Focus(layer, max(0, min(int(focus[1]), self.heads(layer) - 1)))

    def head_view(self, layer: int = 0, head: int = 0) -> HeadView:
        """Head ``head`` of call ``layer`` as 3-D tensors (views of the run's arrays, no copy);
        a call of recorded weights only gives zeros of one column. IndexError: no such head."""
        if not self.has_head(layer, head):
            raise IndexError(f"no head {head} in call {layer} of a run of {self.layers} call(s)")
        call = self.calls[layer]
        b, _h, q, k = call.shape
        if call.queries is None or call.keys is None or call.values is None:
            queries = np.broadcast_to(_NO_TENSOR, (b, q, 1))
            keys = values = np.broadcast_to(_NO_TENSOR, (b, k, 1))
        else:
            kv = call.kv_head(head)
            queries, keys, values = call.queries[:, head], call.keys[:, kv], call.values[:, kv]
        m = call.masks
        masks = None  # the causal flag is the view's ``causal``, not one of its masks
        if m.attn_mask is not None or m.key_padding_mask is not None or m.attention_mask is not None or m.mask_mod:
            masks = replace(call.head_masks(head), is_causal=False, causal_alignment="top_left")
        return HeadView(call, layer, head, queries, keys, values, masks, *self.call_tokens(layer))

    def call_tokens(self, layer: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The (B, L_q) and (B, L_k) tokens on call ``layer``'s axes: its own, else the run's
        when they are of its batch (cut to its lengths), else None."""
        call = self.calls[layer]
        b, _h, q, k = call.shape

        def fitting(own: np.ndarray | None, run: np.ndarray | None, n: int) -> np.ndarray | None:
            if own is not None:
                return own
            # The run's tokens are of one length: a call of another (a KV-cache step) shows none.
            return run if run is not None and run.shape == (b, n) else None

        return fitting(call.query_tokens, self.query_tokens, q), fitting(call.key_tokens, self.key_tokens, k)

    def with_head(self, layer: int, head: int, role: str, array: np.ndarray) -> ModelRun:
        """This run with one head's (B, L, d) ``role`` tensor replaced: that array is copied,
        every other is shared. A key or value edit changes the key/value head the whole group of
        query heads shares, as it would in the model."""
        call = self.calls[layer]
        whole = getattr(call, role)
        index = head if role == "queries" else call.kv_head(head)
        new = np.array(whole, copy=True)
        new[:, index] = array
        new.setflags(write=False)
        return self.with_call(layer, **{role: new})

    def with_call(self, layer: int, **changes: Any) -> ModelRun:
        """This run with fields of call ``layer`` changed (tensors, masks, scale); the model's
        own output and the fidelity measured against it no longer describe the call: dropped."""
        calls = list(self.calls)
        calls[layer] = replace(calls[layer], **changes, output=None, fidelity=None)
        return replace(self, calls=tuple(calls))

    def with_causal(self, layer: int, causal: str | None) -> ModelRun:
        """This run with call ``layer``'s causal flag set (None: off, else its alignment)."""
        if causal is not None and causal not in CAUSAL_ALIGNMENTS:
            raise ValueError(f"causal must be None, {' or '.join(map(repr, CAUSAL_ALIGNMENTS))}; got {causal!r}")
        masks = self.calls[layer].masks
        alignment: Any = causal if causal is not None else masks.causal_alignment
        return self.with_call(layer, masks=replace(masks, is_causal=causal is not None, causal_alignment=alignment))

    def short_names(self) -> list[str]:
        """The calls' names without the parts they all share: "encoder.layer.3.attention.self"
        among its siblings is "layer.3" (the part before the first difference is kept for
        context). Names that share nothing stay whole."""
        parts = [call.name.split(".") for call in self.calls]
        if len(parts) < 2:
            return [call.name for call in self.calls]
        head = 0
        while all(len(p) > head + 1 for p in parts) and len({p[head] for p in parts}) == 1:
            head += 1
        tail = 0
        while all(len(p) > head + tail + 1 for p in parts) and len({p[-1 - tail] for p in parts}) == 1:
            tail += 1
        start = max(0, head - 1)
        names = [".".join(p[start : len(p) - tail]) for p in parts]
        return names if len(set(names)) == len(names) else [call.name for call in self.calls]

    def tokens(self, batch: int) -> tuple[list[str] | None, list[str] | None]:
        """The query and key tokens of one batch element (None where there are none)."""

        def one(tokens: np.ndarray | None) -> list[str] | None:
            return None if tokens is None or batch >= tokens.shape[0] else [str(t) for t in tokens[batch]]

        return one(self.query_tokens), one(self.key_tokens)

    @staticmethod
    def broadcast_tokens(tokens: np.ndarray | list[str] | None, batch: int) -> np.ndarray | None:
        """(L,) tokens repeated for every batch element, (B, L) ones checked; as a str array."""
        if tokens is None:
            return None
        arr = np.asarray(tokens, dtype=str)
        if arr.ndim == 1:
            arr = np.broadcast_to(arr, (batch, arr.shape[0]))
        return arr
