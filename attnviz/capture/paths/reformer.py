"""Reformer's attention (``LocalSelfAttention``, ``LSHSelfAttention``): its weights are
``exp(dots - logsumexp(dots))`` over chunks of the sequence, computed in the module's own code
(no softmax, no SDPA), so no other path sees them.

Recorded at the module's end (the recorder's ``_leave_module``), as the (L, L) maps the model
means, in token order:

* local attention: each chunk's queries over the keys of their chunk and the chunks before (and
  after) it, one call of the band, its output the module's own;
* LSH attention: the queries and keys hashed into buckets, sorted by bucket and chunked; each hash
  round's softmax un-sorted back to token order, one call per round (its keys: the chunk's and the
  previous chunk's in bucket order, the token itself left out unless it has no other key, as the
  model's self-mask does). The model's output is the rounds' outputs weighted by each round's
  share of the row's total (their logsumexp): one call per round has the output of that round,
  from the model's own ``_attend`` rerun on the buckets the forward returned, and the rerun's
  rounds joined so are checked against the forward's output.

Which keys each query's softmax gathers, and how many times (a chunk looked at twice, the same
token in two chunks), is read with the model's own functions (``_look_adjacent``,
``_compute_attn_mask``, the bucket sort); a key gathered twice counts twice (the score term
"chunk repeats", its log count). ``reported`` reads a call's (L, L) weights back in the model's
own ``output_attentions`` layout (chunks of queries, each over its gathered keys), with which the
sweep checks the calls against the model's maps.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnviz.state.run import CallPath
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .. import shaping
from ..calls import CapturedCall, Term
from .base import Recorder, flag

# The score term's name: the log of how many times a query's softmax gathers each key.
REPEATS = "chunk repeats"
# The attribute a recorded call keeps its layout in (in this process only: not in files).
LAYOUT = "_reformer_layout"
# The model's output and the rerun's rounds joined may differ by float32 rounding only.
_RERUN_TOLERANCE = 1e-4


@dataclass
class Layout:
    """Where the model's own map puts a call's weights: ``queries`` (B, H, C, c) the token of each
    query of each chunk, ``keys`` (B, H, C, K) the token of each key the chunk gathers, for the
    chunks of one hash round (``round`` of ``rounds``; local attention: 0 of 1)."""

    queries: torch.Tensor
    keys: torch.Tensor
    round: int
    rounds: int


def kind_of(module: nn.Module | None) -> str | None:
    """ "lsh" or "local" for Reformer's attention modules, None for any other."""
    if module is None or not callable(getattr(module, "_look_adjacent", None)):
        return None
    if not callable(getattr(module, "_compute_attn_mask", None)):
        return None
    if isinstance(getattr(module, "query_key", None), nn.Linear) and callable(getattr(module, "_attend", None)):
        return "lsh"
    if all(isinstance(getattr(module, name, None), nn.Linear) for name in ("query", "key", "value")):
        return "local"
    return None


def leave(capture: Recorder, module: nn.Module, output: Any) -> None:
    """At the end of a Reformer attention module's forward: its maps, recorded."""
    kind = kind_of(module)
    if kind is None or not isinstance(output, tuple) or not isinstance(output[0], torch.Tensor):
        return
    given = capture._local.given[-1] if capture._local.given else ((), {})
    capture._guarded(functools.partial(_record, capture, module, kind, output, given))


def layout_of(call: Any) -> Layout | None:
    found = getattr(call, LAYOUT, None)
    return found if isinstance(found, Layout) else None


def counts_of(call: Any, like: torch.Tensor) -> torch.Tensor:
    """How many times each key is gathered by each query's softmax (1 where no term says)."""
    term = next((t for t in getattr(call, "terms", []) if t.kind == "bias" and t.name == REPEATS), None)
    if term is None or term.values is None:
        return torch.ones((), dtype=like.dtype, device=like.device)
    return term.values.to(like.device, like.dtype).exp()


def reported(calls: list[Any], weights: list[torch.Tensor]) -> torch.Tensor | None:
    """The (B, H, L, L) ``weights`` of one module's ``calls`` (its hash rounds in order) as the model
    reports them: (B, H, rounds x C, c, K), each gathered key's share (a key gathered twice: half
    of its weight each time); None where the calls are not one module's rounds."""
    layouts = [layout_of(c) for c in calls]
    if not layouts or any(lay is None for lay in layouts):
        return None
    parts = []
    for call, lay, ours in zip(calls, layouts, weights):
        assert lay is not None
        b, h, chunks, size = lay.queries.shape
        n = ours.shape[-1]
        factor = getattr(call, "row_factor", None)
        if isinstance(factor, torch.Tensor):  # rows the model weighs 1 per key (every key masked)
            ours = ours * factor.to(ours.device, ours.dtype).unsqueeze(-1)
        share = ours / counts_of(call, ours).expand_as(ours)
        index = (lay.queries.unsqueeze(-1) * n + lay.keys.unsqueeze(-2)).to(ours.device)  # (B, H, C, c, K)
        parts.append(share.reshape(b, h, -1).gather(-1, index.reshape(b, h, -1)).reshape(index.shape))
    return torch.cat(parts, dim=2)


@dataclass
class _Gathered:
    """One hash round's softmax in token order: ``counts`` (B, H, L, L) how many times each query
    gathers each key among the keys it may attend (self-mask and masks applied), the layout."""

    counts: torch.Tensor
    layout: Layout
    only_self: int
    masked_rows: int
    # (B, H, L): queries every key of which is masked (their weights spread over the keys gathered).
    empty: torch.Tensor | None = None


def _gathered(
    module: Any, kind: str, queries: torch.Tensor, keys: torch.Tensor, mask_arg: Any, n: int, rnd: int, rounds: int
) -> _Gathered:
    """The keys each query of one round gathers, from the model's own mask function on the token
    indices of ``queries`` (B, H, C, c) and ``keys`` (B, H, C, K) of the round's chunks."""
    b, h, chunks, size = queries.shape
    width = keys.shape[-1]
    standard = chunks == 1 and size == n and width == n and rounds == 1
    shape = (b, h, chunks, size, width)
    if standard:
        mask = module._compute_attn_mask(queries[:, :, 0], keys[:, :, 0], mask_arg, (b, h, n, n), True)
        mask = None if mask is None else mask.reshape(shape)
    else:
        mask = module._compute_attn_mask(queries, keys, mask_arg, shape, False)
    device = queries.device
    allowed = torch.ones(shape, dtype=torch.bool, device=device) if mask is None else mask.to(torch.bool).expand(shape)
    only_self = 0
    if kind == "lsh":
        # The model's self-mask (-1e5, after the masks' -1e9): a query never attends to itself
        # unless every other key it gathers is masked; then itself takes the whole row.
        itself = queries.unsqueeze(-1) == keys.unsqueeze(-2)
        others = allowed & ~itself
        alone = ~others.any(-1, keepdim=True)
        allowed = torch.where(alone, itself, others)
        only_self = int(alone.sum())
    # A query every key of which is masked: the model's fill (-1e9, not -inf) makes its scores
    # equal (and its float32 logsumexp, -1e9 again, weighs each 1: no softmax does that, said at
    # the call); drawn as the softmax of those equal scores over every key it gathers.
    empty_rows = ~allowed.any(-1)
    masked_rows = int(empty_rows.sum())
    empty = None
    if masked_rows:
        allowed = allowed | empty_rows.unsqueeze(-1)
        empty = torch.zeros(b, h, n, dtype=torch.bool, device=device)
        empty.scatter_(-1, queries.reshape(b, h, -1), empty_rows.reshape(b, h, -1))
    index = queries.unsqueeze(-1) * n + keys.unsqueeze(-2)
    counts = torch.zeros(b, h, n * n, dtype=torch.float32, device=device)
    counts.scatter_add_(-1, index.reshape(b, h, -1), allowed.reshape(b, h, -1).to(torch.float32))
    lay = Layout(queries, keys, rnd, rounds)
    return _Gathered(counts.reshape(b, h, n, n), lay, only_self, masked_rows, empty)


def _arguments(module: Any, given: tuple[Any, Any]) -> dict[str, Any]:
    args, kwargs = given
    names = ("hidden_states", "attention_mask")
    bound = dict(zip(names, args))
    bound.update({k: kwargs[k] for k in names if k in kwargs})
    for name in ("past_buckets_states", "use_cache", "num_hashes", "buckets"):
        bound[name] = kwargs.get(name)
    return bound


def _heads(module: Any, layer: nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    return module._split_hidden_size_dim(layer(hidden), module.num_attention_heads, module.attention_head_size)


def _record(capture: Recorder, module: Any, kind: str, output: tuple[Any, ...], given: tuple[Any, Any]) -> None:
    bound = _arguments(module, given)
    hidden = bound.get("hidden_states")
    cache = bound.get("past_buckets_states")
    if not isinstance(hidden, torch.Tensor) or (cache is not None and len(cache) > module.layer_idx):
        _refused(capture, module, kind)
        return
    b, n, _ = hidden.shape
    heads, d = int(module.num_attention_heads), int(module.attention_head_size)
    if not _within_budget(capture, module, kind, output, (b, heads, n, d)):
        return
    mask_arg = bound.get("attention_mask")
    with torch.no_grad():
        model_out = output[0].detach().reshape(b, n, heads, d).transpose(1, 2)
        if kind == "local":
            q, k, v = (_heads(module, getattr(module, name), hidden) for name in ("query", "key", "value"))
            size = module.chunk_length
            tokens = torch.arange(n, device=hidden.device).expand(b, heads, n)
            if n <= size:
                queries = keys = tokens.reshape(b, heads, 1, n)
            else:
                queries = module._split_seq_length_dim_to(tokens, -1, size, heads)
                keys = module._look_adjacent(queries, module.num_chunks_before, module.num_chunks_after)
            rounds = [_gathered(module, kind, queries, keys, mask_arg, n, 0, 1)]
            outputs, gap = [model_out], 0.0
        else:
            q = _heads(module, module.query_key, hidden)
            k = module._len_norm(q)
            v = _heads(module, module.value, hidden)
            rounds, outputs, gap = _lsh_rounds(module, output, q, v, mask_arg, n)
    for gathered, out in zip(rounds, outputs):
        _add(capture, module, kind, (q, k, v, out), gathered, gap, first=gathered is rounds[0])


def _within_budget(capture: Recorder, module: Any, kind: str, output: tuple[Any, ...], size: tuple[int, ...]) -> bool:
    """Whether this module's maps fit what is left of the capture's memory budget: each round's
    (B, H, L, L) counts, mask and repeats are built whole (Reformer's long sequences would not fit
    memory). Past the budget, the recorder's own refusal (recording stops, said once) is asked for
    with a stand-in of that size on the meta device, which allocates nothing."""
    b, heads, n, d = size
    buckets = output[2] if kind == "lsh" and len(output) > 2 else None
    rounds = int(buckets.shape[2]) if isinstance(buckets, torch.Tensor) and buckets.dim() == 4 else 1
    need = rounds * b * heads * (n * n * 9 + n * d * 4) + 3 * b * heads * n * d * 4
    budget = getattr(capture, "memory_budget", None)
    used = getattr(capture, "recorded_bytes", 0)
    if not isinstance(budget, (int, float)) or used + need <= budget:
        return True
    ctx = capture._context()
    capture._add(_never, ctx["base"], [torch.empty(need, dtype=torch.uint8, device="meta")])
    return False


def _never() -> CapturedCall:
    raise AssertionError("a call past the memory budget is never made")


def _lsh_rounds(
    module: Any, output: tuple[Any, ...], qk: torch.Tensor, v: torch.Tensor, mask_arg: Any, n: int
) -> tuple[list[_Gathered], list[torch.Tensor], float]:
    """LSH attention's rounds: what each gathers, its output (the model's own for a single
    round; else the model's ``_attend`` rerun on the forward's buckets, un-sorted), and how far
    the rerun's rounds, joined as the model joins them, are from the forward's output."""
    b, heads, _, d = qk.shape
    model_out = output[0].detach().reshape(b, n, heads, d).transpose(1, 2)
    buckets = output[2] if len(output) > 2 else None
    size = module.chunk_length
    if not isinstance(buckets, torch.Tensor) or n <= size:
        tokens = torch.arange(n, device=qk.device).expand(b, heads, n).reshape(b, heads, 1, n)
        return [_gathered(module, "lsh", tokens, tokens, mask_arg, n, 0, 1)], [model_out], 0.0
    rounds = int(buckets.shape[2])
    flat = buckets.reshape(b, heads, -1)
    order, undo = module._get_sorted_bucket_idx_and_undo_sorted_bucket_idx(n, flat, rounds)
    per_hash = order % n  # the token at each sorted position, as the forward computes it
    queries = module._split_seq_length_dim_to(per_hash, -1, size, heads)
    keys = module._look_adjacent(queries, module.num_chunks_before, module.num_chunks_after)
    per_round = queries.shape[2] // rounds
    gathered = [
        _gathered(
            module,
            "lsh",
            queries[:, :, r * per_round : (r + 1) * per_round],
            keys[:, :, r * per_round : (r + 1) * per_round],
            mask_arg,
            n,
            r,
            rounds,
        )
        for r in range(rounds)
    ]
    if rounds == 1:
        return gathered, [model_out], 0.0
    # Each round's output: the model's own _attend on the sorted vectors, un-sorted as its
    # ReverseSort does; the rounds joined by their logsumexp shares, as the forward joins them.
    sorted_qk = module._split_seq_length_dim_to(module._gather_by_expansion(qk, per_hash, rounds), -1, size, heads, d)
    sorted_v = module._split_seq_length_dim_to(module._gather_by_expansion(v, per_hash, rounds), -1, size, heads, d)
    sorted_k = module._len_and_dim_norm(sorted_qk, math.sqrt(d))
    out, logits, _ = module._attend(sorted_qk, sorted_k, sorted_v, per_hash, mask_arg, False, False)
    out = out.gather(2, undo.unsqueeze(-1).expand(out.shape)).reshape(b, heads, rounds, n, d)
    logits = logits.gather(2, undo).reshape(b, heads, rounds, n, 1)
    # The forward's own expression (not a softmax): where every round's row is a token alone,
    # its logits are near -1e5 and float32 rounds their difference the model's way.
    joined = (out * torch.exp(logits - torch.logsumexp(logits, dim=2, keepdim=True))).sum(2)
    gap = float((joined - model_out).abs().max())
    return gathered, list(out.unbind(2)), gap


def _add(
    capture: Recorder,
    module: Any,
    kind: str,
    tensors: tuple[torch.Tensor, ...],
    gathered: _Gathered,
    gap: float,
    *,
    first: bool,
) -> None:
    q, k, v, out = tensors
    if gathered.empty is not None:
        # Equal scores, as the model's fill makes them: zero queries on those rows.
        q = q.masked_fill(gathered.empty.unsqueeze(-1), 0.0)
    counts = gathered.counts
    lay = gathered.layout
    repeated = int((counts > 1).any(-1).sum())
    note = _note(module, kind, lay, repeated, gathered)
    if gap > _RERUN_TOLERANCE:
        note = message(
            QT_TRANSLATE_NOOP("Capture", "{note}; the model's function rerun differs from its forward by {gap}"),
            note=note,
            gap=f"{gap:.1e}",
        )
    terms = [Term("bias", REPEATS, values=shaping.copy(counts.clamp_min(1).log()))] if repeated else []
    mask = counts > 0
    # Rows of every key masked: the model weighs each key it gathers 1, the row the number of them.
    factor = None
    if gathered.empty is not None:
        factor = torch.where(gathered.empty, counts.sum(-1), torch.ones((), dtype=counts.dtype, device=counts.device))
    ctx = capture._context()
    name = type(module).__name__

    def make() -> CapturedCall:
        call = CapturedCall(
            "",
            "softmax",
            shaping.copy(q),
            shaping.copy(k),
            shaping.copy(v),
            q.dtype,
            scale=1.0 / math.sqrt(q.shape[-1]),
            # In training the model drops weights after its softmax: the call says so, uncompared.
            dropout_p=float(module.dropout or 0.0) if module.training else 0.0,
            output=shaping.copy(out),
            note=note,
            terms=terms,
            path=CallPath("module", f"{type(module).__module__}.{name}", weights_requested=flag(True)),
            cross=ctx["cross"],
            encoder=ctx["encoder"],
            module_key=ctx["module_key"],
            row_factor=None if factor is None else shaping.copy(factor),
        )
        setattr(call, LAYOUT, lay)
        return call

    # The queries, keys and values are counted once per module (each round's call holds its own copy).
    counted = [q, k, v, out, counts] if first else [out, counts]
    capture._add(make, ctx["base"], counted, mask)


def _note(module: Any, kind: str, lay: Layout, repeated: int, gathered: _Gathered) -> str:
    b, h, chunks, size = lay.queries.shape
    if kind == "local":
        note = message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "local attention of its own ({module}): each chunk of {size} queries over the keys of its chunk, "
                "{before} chunk(s) before and {after} after (wrapping around the sequence's ends where the model's "
                "mask allows), as the (L, L) band they mean, zero elsewhere; its softmax is exp(dots - "
                "logsumexp(dots)) in the model's own code",
            ),
            module=type(module).__name__,
            size=size,
            before=module.num_chunks_before,
            after=module.num_chunks_after,
        )
    else:
        note = message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "LSH attention of its own ({module}), hash round {round} of {rounds}: queries and keys (one shared "
                "projection, the keys length-normalised) sorted by hash bucket into chunks of {size}, each chunk "
                "over its own and {before} chunk(s) before and {after} after, un-sorted back to token order as "
                "the (L, L) map it means, zero elsewhere; a token never attends to itself unless it has no "
                "other key ({alone} query rows); the model's output weights each round by its share of the row's "
                "logsumexp",
            ),
            module=type(module).__name__,
            round=lay.round + 1,
            rounds=lay.rounds,
            size=size,
            before=module.num_chunks_before,
            after=module.num_chunks_after,
            alone=gathered.only_self,
        )
    if repeated:
        note = message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "{note}; a key its softmax gathers twice counts twice (the score term 'chunk repeats': {rows} "
                "query rows), where the model's output_attentions lists each time apart",
            ),
            note=note,
            rows=repeated,
        )
    if gathered.masked_rows:
        note = message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "{note}; {rows} query rows have every key they gather masked: in float32 the model's "
                "logsumexp of its fill (-1e9, not -inf) loses the log of their number, so each such key weighs 1 "
                "(the row sums to that number, its output their values' sum), drawn as the softmax of their equal "
                "scores (the queries of those rows recorded as zeros): 1 over that number each; the output is "
                "compared with the model's as it computes it, that number times the softmax's",
            ),
            note=note,
            rows=gathered.masked_rows,
        )
    return note


def _refused(capture: Recorder, module: Any, kind: str) -> None:
    """A step with Reformer's cache (one query over the cached chunk) is not recorded: said once."""
    text = message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "{module}: a cached generation step of Reformer's {kind} attention could not be recorded (its keys "
            "are the cached chunk's, gathered by the model's cache)",
        ),
        module=type(module).__name__,
        kind=kind,
    )
    warnings = getattr(capture, "warnings", None)
    if isinstance(warnings, list) and text not in warnings:
        warnings.append(text)
