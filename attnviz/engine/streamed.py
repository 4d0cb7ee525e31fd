"""Attention weights a block of query rows at a time, nothing else: what a comparison reads.

``attend`` keeps every stage of a call and its diagnostics (row sums, entropy, empty rows,
overflow checks), which costs several passes over each block of scores and a (N, L_q, L_k)
buffer per stage kept. Comparing two runs needs the weights only, and never all of them at
once: :func:`weight_blocks` yields the weights of one flattened batch element's block of rows,
computed as ``attend``'s general masked path computes them (the same scoring, scale, score
terms, mask parts, mask mode, sinks and empty-row rule, in that order), then forgets them. Its
memory is a block's temporaries whatever the call's length; the two (1, 8, 4096, 1) captures of
issue 30 are compared in well under a second (``attend`` per head took 54.8 s under load).

Only the scaled dot product (what models run, and what ``capture.calls.recompute_call`` asks
``attend`` for) is computed here; the diagnostics stay ``attend``'s. Tests hold the two equal
within float rounding over every mask form, score term, sinks and GQA.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch

from .core import _softmax_with_sinks
from .devices import default_dtype, device_of, resolve_dtype
from .mask_mods import Mask
from .mask_spec import mask_from_arguments
from .masking import check_mask_mode
from .score_terms import ScoreTerm, check_score_terms
from .scoring import get_scoring
from .validation import as_input, check_causal, check_flag, check_scale, check_shapes

__all__ = ["CACHE_ELEMENTS", "weight_blocks"]

#: Weights in one block by default: 1 MiB of float32, a block that stays in cache through the
#: softmax's three passes (measured on one core, 4096 keys: 64-128 rows a block 1.7x faster
#: than 256, the engine's ``BLOCK_ELEMENTS``).
CACHE_ELEMENTS = 1 << 18


def weight_blocks(
    queries: object,
    keys: object,
    values: object,
    *,
    mask_mode: str = "sdpa",
    causal: bool | str | None = None,
    attn_mask: object = None,
    key_padding_mask: object = None,
    attention_mask: object = None,
    mask: Mask | None = None,
    score_terms: ScoreTerm | Sequence[ScoreTerm] | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    dtype: str | torch.dtype | None = None,
    rows: int | None = None,
) -> Iterator[tuple[int, int, int, torch.Tensor]]:
    """(element, r0, r1, weights): the scaled-dot-product weights (r1 - r0, L_k) of query rows
    r0:r1 of flattened batch element ``element`` (the queries' leading dimensions flattened, as
    ``attend`` flattens them), element by element, rows in order. The arguments are ``attend``'s
    (``values`` only for its shape checks); ``rows``: rows per block (default: a block of about
    ``CACHE_ELEMENTS`` weights). A yielded block is only valid until the next one is asked for.
    Raises ``AttentionInputError`` as ``attend`` does."""
    fn = get_scoring("scaled_dot")
    mode = check_mask_mode(mask_mode)
    gqa = check_flag(enable_gqa, "enable_gqa")
    factor = check_scale(scale, fn)
    description = mask_from_arguments(None, check_causal(causal), attn_mask, key_padding_mask, attention_mask, mask)
    terms = check_score_terms(score_terms)
    dev = device_of(queries)
    dt = resolve_dtype(dtype, default_dtype(queries))
    q, k, v = as_input(queries, "queries"), as_input(keys, "keys"), as_input(values, "values")
    check_shapes(fn, q, k, v, gqa)
    lead, n_q, n_k = tuple(q.shape[:-2]), q.shape[-2], k.shape[-2]
    divisor = fn.scale(q.shape[-1]) if factor is None else 1.0 / factor
    spec = description.bind_call(lead, n_q, n_k, device=dev, dtype=dt)
    bound = [term.bind(spec.geometry) for term in terms]
    sinks = [term for term in bound if term.in_softmax]
    flat_q = q.to(device=dev, dtype=dt).reshape(-1, n_q, q.shape[-1])
    # Grouped-query attention: each key head serves consecutive query heads (attend's repeat).
    group = q.shape[-3] // k.shape[-3] if q.dim() >= 3 else 1
    flat_k = k.to(device=dev, dtype=dt)
    if group > 1:
        flat_k = flat_k.repeat_interleave(group, dim=-3)
    flat_k = flat_k.reshape(-1, n_k, k.shape[-1])
    step = max(1, rows if rows is not None else CACHE_ELEMENTS // max(n_k, 1))
    masked = not spec.is_empty
    with torch.no_grad():
        for n in range(flat_q.shape[0]):
            key_block = flat_k[n : n + 1]
            for r0 in range(0, n_q, step):
                r1 = min(n_q, r0 + step)
                # As attend: multiply by an SDPA scale, else divide by sqrt(d) (bit for bit its
                # order); by 1 (d = 1, or scale=1) is no change, and a pass over the block saved.
                scores = fn.scores(flat_q[n : n + 1, r0:r1], key_block, {})
                if factor is not None and factor != 1.0:
                    scores = scores.mul_(factor)
                elif factor is None and divisor is not None and divisor != 1.0:
                    scores = scores.div_(divisor)
                for term in bound:
                    scores = term.apply(scores, n, n + 1, r0, r1)
                empty: torch.Tensor | None = None
                if masked:
                    allowed, bias = spec.block(n, n + 1, r0, r1)
                    if bias is not None:
                        scores = scores + bias
                    if allowed is not None:
                        scores = mode.apply(scores, allowed.expand(scores.shape))
                    if mode.zero_empty_rows:
                        empty = _empty_rows(spec, allowed, bias, n, r0, r1, scores.shape)
                if sinks:
                    weights = _softmax_with_sinks(scores, [t.sink_logits(n, n + 1, r0, r1) for t in sinks])
                else:
                    weights = torch.softmax(scores, dim=-1)
                if empty is not None:
                    weights = weights.masked_fill_(empty.unsqueeze(-1), 0.0)
                yield n, r0, r1, weights[0]


def _empty_rows(
    spec: object,
    allowed: torch.Tensor | None,
    bias: torch.Tensor | None,
    n: int,
    r0: int,
    r1: int,
    shape: torch.Size,
) -> torch.Tensor:
    """Rows no key may be attended in (their weights are 0), as ``attend`` decides them: from
    the mask alone when it says so, else where neither the boolean parts nor an additive -inf
    leave a key."""
    from .mask_bound import CallMask

    assert isinstance(spec, CallMask)
    if bias is None:
        assert allowed is not None
        known = spec.empty_rows(n, n + 1, r0, r1)
        return known if known is not None else ~allowed.expand(shape).any(-1)
    attendable = ~torch.isneginf(bias)
    return ~(attendable if allowed is None else allowed & attendable).expand(shape).any(-1)
