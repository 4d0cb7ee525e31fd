"""``attend``: the functional core. One call, every stage, honest diagnostics.

Inputs have any leading dimensions, (..., L, d): (B, L, d) as in the book, (B, H, L, d) with
heads. They are flattened to N = prod(...) batch elements for the computation, and every result
is shaped back: stages (..., L_q, L_k), output (..., L_q, D), per-row diagnostics (..., L_q).

The work is done in blocks of query rows. That bounds the memory of additive attention (whose
(B, Q, K, hidden) feature tensor would otherwise be the peak) and keeps the temporaries of the
elementwise stages in cache, which is most of what makes this faster than the book's code.
Before anything is allocated, the memory the computation will keep is checked against a budget
(``budget``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

from .budget import BLOCK_ELEMENTS, MAX_TEMP_ELEMENTS, enforce_budget, estimate_memory
from .devices import default_dtype, device_of, dtype_name, is_out_of_memory, resolve_device, resolve_dtype
from .diagnose import (
    Accumulators,
    diagnose_scores,
    diagnose_weights,
    finish_diagnostics,
    input_magnitude,
    scores_surely_finite,
)
from .errors import DeviceOutOfMemoryError
from .mask_bound import ADDITIVE_MASKED_AT, CallMask
from .mask_findings import mask_findings
from .mask_mods import Mask
from .mask_spec import mask_from_arguments
from .masking import MaskMode, check_mask_mode
from .memory import empty_large
from .result import STAGES, AttentionResult
from .score_terms import BoundTerm, ScoreTerm, check_score_terms
from .scoring import Params, ScoringFunction, get_scoring
from .validation import (
    as_input,
    check_causal,
    check_dropout,
    check_finite,
    check_flag,
    check_keep,
    check_memory_budget,
    check_num_hiddens,
    check_scale,
    check_seed,
    check_shapes,
    resolve_params,
)


def attend(
    queries: object,
    keys: object,
    values: object,
    valid_lens: object = None,
    *,
    scoring: str = "scaled_dot",
    mask_mode: str = "d2l",
    causal: bool | str | None = None,
    attn_mask: object = None,
    key_padding_mask: object = None,
    attention_mask: object = None,
    mask: Mask | None = None,
    score_terms: ScoreTerm | Sequence[ScoreTerm] | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    params: Params | None = None,
    num_hiddens: int = 8,
    seed: int = 0,
    dropout: float = 0.0,
    train: bool = False,
    dropout_seed: int = 0,
    dtype: str | torch.dtype | None = None,
    device: str | torch.device | None = None,
    keep: str | Iterable[str] = "all",
    allow_nonfinite: bool = False,
    memory_budget: float | None = None,
) -> AttentionResult:
    """Attention of ``queries`` (..., Q, d_q) over ``keys`` (..., K, d_k) and ``values`` (..., K, D).

    The leading dimensions ... are at least a batch: (B, Q, d) as in the book, (B, H, Q, d) with
    heads, any more. Keys and values share the queries' leading dimensions, except that with
    ``enable_gqa`` (as torch SDPA) they may have fewer heads (dimension -3), a divisor of the
    queries' heads: each key/value head then serves consecutive query heads (repeat_interleave).

    Masks (combined: a key is attended only if every source allows it; see ``mask_spec``):
      valid_lens        (B,) or (B, Q) whole numbers; key k is valid if k < length (the book's)
      causal            None, True / "top_left" (PyTorch's is_causal) or "bottom_right"
      attn_mask         broadcastable to (..., Q, K) as SDPA reads it: bool True = attend, float added
      key_padding_mask  (B, K) as nn.MultiheadAttention reads it: bool True = ignore, float added
      attention_mask    Hugging Face's (B, K) 0/1, 1 = attend (or broadcastable to (..., Q, K))
      mask              a ``Mask`` description (``mask_mods``: windows, documents, sinks, prefixes,
                        chunks, ``MaskMod``; the arguments above as ``AttnMask``, ``ValidLength``...)
    The keyword forms build the same description ``mask`` is (``mask_spec.mask_from_arguments``);
    every part given is combined. ``score_terms`` (``score_terms``: ``ScoreBias``, ``SoftCap``)
    change the scaled scores, in order, before the mask is applied.

    ``mask_mode`` picks how the boolean mask is applied (see ``masking``, which also says how
    additive masks combine with each mode): "d2l" (the book's -1e6 fill), "strict", "neg_inf",
    "sdpa" (exactly torch SDPA, fully masked rows included), "float01", "inverted".

    ``scoring`` is a name from ``scoring.SCORINGS``. Learnable ones take their parameters from
    ``params`` when given, else initialise them from ``seed``; ``result.params`` holds them.
    ``scale`` (dot-product scorings only) multiplies the dot products instead of dividing them by
    sqrt(d), as SDPA's ``scale``.

    ``dropout`` applies only when ``train`` is True, reproducibly from ``dropout_seed``.
    ``dtype`` defaults to the queries' floating dtype, else float32. ``device``: None (the
    queries' device), "auto" (CUDA, else MPS, else CPU) or a name; a missing device raises
    ``DeviceError``, running out of memory raises ``DeviceOutOfMemoryError``.
    ``keep``: "all", or the stage names to keep; weights and output are always kept.
    ``memory_budget``: bytes this computation may use (default: ``budget.budget_for``); over
    it, ``MemoryBudgetError`` is raised before anything is allocated.
    NaN or Inf in the inputs raises ``AttentionInputError`` unless ``allow_nonfinite`` (for
    demonstrating what masking does not remove). Results carry no gradients.
    """
    fn = get_scoring(scoring)
    mode = check_mask_mode(mask_mode)
    kept = check_keep(keep)
    hidden = check_num_hiddens(num_hiddens)
    p_drop = check_dropout(dropout)
    param_seed = check_seed(seed, "seed")
    drop_seed = check_seed(dropout_seed, "dropout_seed")
    training = check_flag(train, "train")
    nonfinite_ok = check_flag(allow_nonfinite, "allow_nonfinite")
    gqa = check_flag(enable_gqa, "enable_gqa")
    factor = check_scale(scale, fn)
    requested_budget = check_memory_budget(memory_budget)
    alignment = check_causal(causal)

    description = mask_from_arguments(valid_lens, alignment, attn_mask, key_padding_mask, attention_mask, mask)
    terms = check_score_terms(score_terms)

    dev = resolve_device(device) if device is not None else device_of(queries)
    dt = resolve_dtype(dtype, default_dtype(queries))
    q = as_input(queries, "queries")
    k = as_input(keys, "keys")
    v = as_input(values, "values")
    check_shapes(fn, q, k, v, gqa)
    lead, n_q, d_q = tuple(q.shape[:-2]), q.shape[-2], q.shape[-1]
    n_k, d_k = k.shape[-2], k.shape[-1]
    estimate = estimate_memory(
        q.shape,
        (*lead, n_k, d_k),
        (*lead, n_k, v.shape[-1]),
        dtype=dt,
        keep=kept,
        scoring=fn.name,
        masked=bool(description.parts) or bool(terms),
        modified=bool(terms),
        dropout=p_drop,
        train=training,
        num_hiddens=hidden,
        scale=factor,
        mask_bytes=description.nbytes(dt) + sum(term.nbytes(dt) for term in terms),
    )
    enforce_budget(estimate, dev, requested_budget)
    if not nonfinite_ok:
        for name, t in (("queries", q), ("keys", k), ("values", v)):
            check_finite(t, name)

    divisor = fn.scale(d_q) if factor is None else 1.0 / factor
    try:
        spec = description.bind_call(lead, n_q, n_k, device=dev, dtype=dt)
        bound_terms = [term.bind(spec.geometry) for term in terms]
        p = resolve_params(fn, params, d_q, d_k, hidden, param_seed)
        # Of the inputs as given: a float64 1e39 is finite, and overflows float32 in the cast.
        largest = input_magnitude(q, k, p)
        heads = q.shape[-3] // k.shape[-3]
        start = time.perf_counter()
        with torch.no_grad():
            computed = _compute(
                fn,
                mode,
                spec,
                bound_terms,
                _flat(q, dev, dt, 1),
                _flat(k, dev, dt, heads),
                _flat(v, dev, dt, heads),
                {n: t.to(device=dev, dtype=dt) for n, t in p.items()},
                divisor,
                factor,
                p_drop if training else 0.0,
                drop_seed,
                kept,
                largest,
            )
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
    except Exception as exc:
        if is_out_of_memory(exc):
            raise DeviceOutOfMemoryError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "out of memory on {device} for batch {batch}, {n_q} queries x {n_k} keys (about {mib} MiB "
                        "of stages); use a smaller input or another device",
                    ),
                    device=str(dev),
                    batch=" x ".join(map(str, lead)),
                    n_q=n_q,
                    n_k=n_k,
                    mib=f"{estimate.total / 2**20:.0f}",
                )
            ) from exc
        raise
    seconds = time.perf_counter() - start
    row_sums, entropy, max_weight, empty_rows, fill_rows = computed.rows
    diagnostics = finish_diagnostics(
        mode,
        spec,
        computed.sums,
        row_sums,
        entropy,
        max_weight,
        empty_rows,
        fill_rows,
        divisor,
        dt,
        mask_findings(spec, dt),
        computed.largest_input,
    )
    stages = _unflatten(computed.stages, lead)
    weights, output = stages["weights"], stages["output"]
    assert weights is not None and output is not None
    return AttentionResult(
        raw_scores=stages["raw_scores"],
        scores=stages["scores"],
        modified_scores=stages["modified_scores"],
        mask=stages["mask"],
        masked_scores=stages["masked_scores"],
        weights=weights,
        applied_weights=stages["applied_weights"],
        output=output,
        diagnostics=diagnostics,
        params=p,
        scoring=fn.name,
        mask_mode=mode.name,
        scale=divisor,
        device=str(dev),
        dtype=dtype_name(dt),
        seconds=seconds,
    )


# --------------------------------------------------------------------------- inputs and outputs


def _flat(t: torch.Tensor, device: torch.device, dtype: torch.dtype, repeat: int) -> torch.Tensor:
    """(..., L, d) as a contiguous (N, L, d) in ``dtype`` on ``device``; heads (dimension -3)
    repeated ``repeat`` times each, as grouped-query attention shares them."""
    t = t.to(device=device, dtype=dtype)
    if repeat > 1:
        t = t.repeat_interleave(repeat, dim=-3)
    return t.reshape(-1, *t.shape[-2:]).contiguous()


def _unflatten(stages: dict[str, torch.Tensor | None], lead: tuple[int, ...]) -> dict[str, torch.Tensor | None]:
    """The stages shaped (*lead, ...) again; a stage shared with another stays one tensor."""
    if len(lead) == 1:
        return stages
    shaped: dict[int, torch.Tensor] = {}
    out = dict(stages)
    for name, t in stages.items():
        if t is not None:
            if id(t) not in shaped:
                shaped[id(t)] = t.reshape(*lead, *t.shape[1:])
            out[name] = shaped[id(t)]
    return out


@dataclass(frozen=True)
class _Computed:
    """What ``_compute`` returns: the stages over (N, ...) and what the diagnostics are made of."""

    stages: dict[str, torch.Tensor | None]
    sums: Accumulators
    #: Per row (N, L_q): row sums, entropy, largest weight, empty rows, fill-only rows (or None).
    rows: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]
    #: The largest |input| (queries, keys, parameters): finite, any NaN/Inf score is an overflow.
    largest_input: float = math.nan


# --------------------------------------------------------------------------- the computation


def _block_rows(fn: ScoringFunction, n_k: int, d_q: int, d_k: int, params: Params) -> int:
    """How many query rows (of all batch elements together) one block may hold."""
    hidden = params["w_v"].shape[1] if "w_v" in params else 1
    work = fn.work_per_row(1, n_k, d_q, d_k, hidden)
    return max(1, min(BLOCK_ELEMENTS // max(n_k, 1), MAX_TEMP_ELEMENTS // max(work, 1)))


def _blocks(n: int, n_q: int, capacity: int, group: bool) -> list[tuple[int, int, int, int]]:
    """(n0, n1, r0, r1): elements n0:n1, rows r0:r1. Everything at once when it fits; else whole
    elements together (``group``: many small heads in one block) or one at a time; else rows of
    one element at a time."""
    if n * n_q <= capacity:
        return [(0, n, 0, n_q)]
    if n_q <= capacity:
        step = capacity // n_q if group else 1
        return [(b, min(n, b + step), 0, n_q) for b in range(0, n, step)]
    return [(b, b + 1, r0, min(n_q, r0 + capacity)) for b in range(n) for r0 in range(0, n_q, capacity)]


def _compute(
    fn: ScoringFunction,
    mode: MaskMode,
    spec: CallMask,
    terms: Sequence[BoundTerm],
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    params: Params,
    divisor: float | None,
    factor: float | None,
    p_drop: float,
    dropout_seed: int,
    kept: frozenset[str],
    largest: float,
) -> _Computed:
    """Every stage of flattened (N, L, d) inputs, a block of query rows at a time.

    Small inputs (the whole batch fits in one block) are done in one go with no copies; large
    ones are cut into blocks whose temporaries stay in cache, and each block's result is
    written straight into its slice of the stage tensors (contiguous, so ``out=`` works).
    """
    n, n_q, d_q = q.shape
    n_k = k.shape[1]
    dev, dt = q.device, q.dtype
    acc = torch.float64 if dt == torch.float64 else torch.float32
    masked = not spec.is_empty
    # What the softmax sees differs from the scaled scores: a stage of its own.
    changed = masked or bool(terms)
    # A plain fill of the keys past a 1-D valid length needs no mask tensor at all.
    prefix = spec.is_prefix and mode.fill is not None
    lens = spec.flat_lens() if prefix else None
    dropping = p_drop > 0.0
    capacity = _block_rows(fn, n_k, d_q, k.shape[2], params)
    # A block of one element keeps the prefix path; grouping elements only pays for many small ones.
    blocks = _blocks(n, n_q, capacity, group=not prefix)
    single = len(blocks) == 1
    shape = (n, n_q, n_k)
    fill = None
    if mode.fill is not None:
        fill = torch.tensor(mode.fill, dtype=torch.float64).to(dt)

    def buffer(name: str, dtype: torch.dtype = dt, needed: bool = True) -> torch.Tensor | None:
        return empty_large(shape, dtype, dev) if needed and name in kept and not single else None

    raw_buf = buffer("raw_scores", needed=divisor is not None or factor is not None)
    scores_buf = buffer("scores")
    modified_buf = buffer("modified_scores", needed=bool(terms))
    sinks = [term for term in terms if term.in_softmax]
    mask_buf = buffer("mask", torch.bool, needed=masked)
    masked_buf = buffer("masked_scores", needed=changed)
    applied_buf = buffer("applied_weights", needed=dropping)
    weights_buf = None if single else empty_large(shape, dt, dev)
    output = None if single else empty_large((n, n_q, v.shape[2]), dt, dev)

    def scalar(dtype: torch.dtype = acc, value: float = 0.0) -> torch.Tensor:
        return torch.full((), value, dtype=dtype, device=dev)

    sums = Accumulators(
        scalar(),
        scalar(),
        scalar(),
        scalar(torch.int64),
        scalar(torch.int64),
        scalar(torch.int64),
        scalar(torch.int64),
        scalar(value=math.inf),
    )
    row_sums = torch.empty((n, n_q), dtype=acc, device=dev)
    entropy = torch.empty_like(row_sums)
    max_weight = torch.empty_like(row_sums)
    empty_rows = torch.zeros((n, n_q), dtype=torch.bool, device=dev)
    fill_rows = torch.zeros((n, n_q), dtype=torch.bool, device=dev) if spec.bias else None
    gen = None
    if dropping:
        gen = torch.Generator(device=dev)
        gen.manual_seed(dropout_seed)
    # Only strict promises that padding cannot leak in; "sdpa" reproduces PyTorch, where a NaN
    # value behind a zero weight still makes the output NaN (0 * NaN).
    # Where a -inf fill sits the weight is 0: the entropy's dot product then takes the scores.
    inf_fill = mode.inverted or (fill is not None and bool(torch.isinf(fill)))
    multiplier = factor if factor is not None else (1.0 if divisor is None else 1.0 / divisor)
    surely_finite = scores_surely_finite(fn, q, k, params, multiplier, largest)
    clean_pool = mode.name == "strict" and not bool(torch.isfinite(v).all())
    keys = torch.arange(n_k, device=dev)

    stage_blocks: dict[str, torch.Tensor | None] = {}
    for n0, n1, r0, r1 in blocks:
        raw = fn.scores(q[n0:n1, r0:r1], k[n0:n1], params)
        # Divide, not multiply by the reciprocal: bit for bit what the book's code does. An
        # SDPA-style scale multiplies, as SDPA and the models' eager code do.
        if factor is not None:
            scores = raw * factor
        elif divisor is not None:
            scores = raw / divisor
        else:
            scores = raw
        logits = scores
        for term in terms:
            logits = term.apply(logits, n0, n1, r0, r1)
        allowed: torch.Tensor | None = None
        bias: torch.Tensor | None = None
        shown: torch.Tensor | None = None  # the mask stage's block: keys no source masks
        empty: torch.Tensor | None = None
        length: int | None = None
        if lens is not None and n1 - n0 == 1:
            # A block holds rows of one batch element: one length for all.
            length = int(lens[n0])
            diagnose_scores(scores, None, length, mode, sums, surely_finite)
            pre_softmax = logits
            if length < n_k:
                assert fill is not None
                if logits is scores and ((scores is raw and "raw_scores" in kept) or "scores" in kept):
                    pre_softmax = scores.clone()
                pre_softmax[..., length:] = fill
            if length == 0:
                empty_rows[n0:n1, r0:r1] = True
            if "mask" in kept:
                shown = (keys < length)[None, None, :]
        elif masked:
            allowed, bias = spec.block(n0, n1, r0, r1)
            shown = allowed
            if bias is not None:
                unmasked = bias > ADDITIVE_MASKED_AT
                shown = unmasked if allowed is None else allowed & unmasked
            assert shown is not None
            shown = shown.expand(scores.shape)
            diagnose_scores(scores, shown, None, mode, sums, surely_finite)
            biased = logits if bias is None else logits + bias
            pre_softmax = biased if allowed is None else mode.apply(biased, allowed.expand(scores.shape))
            if bias is None:
                empty = spec.empty_rows(n0, n1, r0, r1)
                if empty is None:
                    empty = ~shown.any(-1)
            else:
                # A key an additive -inf hides is as gone as a masked one; a finite fill is not.
                attendable = ~torch.isneginf(bias)
                empty = ~(attendable if allowed is None else allowed & attendable).any(-1)
                assert fill_rows is not None
                fill_rows[n0:n1, r0:r1] = ~shown.any(-1) & ~empty
            empty_rows[n0:n1, r0:r1] = empty
        else:
            diagnose_scores(scores, None, None, mode, sums, surely_finite)
            pre_softmax = logits

        if sinks:
            weights = _softmax_with_sinks(pre_softmax, [t.sink_logits(n0, n1, r0, r1) for t in sinks])
            if weights_buf is not None:
                weights_buf[n0:n1, r0:r1] = weights
                weights = weights_buf[n0:n1, r0:r1]
        elif weights_buf is not None:
            weights = weights_buf[n0:n1, r0:r1]
            torch.softmax(pre_softmax, dim=-1, out=weights)
        else:
            weights = torch.softmax(pre_softmax, dim=-1)
        if mode.zero_empty_rows:
            if empty is not None:
                weights.masked_fill_(empty.unsqueeze(-1), 0.0)
            elif length == 0:
                weights.zero_()
        applied = weights
        if dropping and gen is not None:
            keep_mask = torch.rand(weights.shape, generator=gen, device=dev) >= p_drop
            applied = weights * keep_mask / (1.0 - p_drop) if p_drop < 1.0 else torch.zeros_like(weights)
        out = _pool(applied, v[n0:n1], clean_pool, None if output is None else output[n0:n1, r0:r1])

        finite_inputs = logits if inf_fill and bias is None else None
        if bias is not None:
            # -inf (a fill or the bias) sits where the weight is 0: the entropy's dot product skips it.
            finite_inputs = pre_softmax.masked_fill(torch.isneginf(pre_softmax), 0.0)
        diagnose_weights(
            pre_softmax,
            weights,
            sums,
            row_sums[n0:n1, r0:r1],
            entropy[n0:n1, r0:r1],
            max_weight[n0:n1, r0:r1],
            finite_inputs=finite_inputs,
            length=length,
        )

        if single:
            stage_blocks = {
                "raw_scores": raw,
                "scores": scores,
                "modified_scores": logits,
                "masked_scores": pre_softmax,
                "weights": weights,
                "applied_weights": applied,
                "output": out,
                "mask": None if shown is None else shown.expand(shape).contiguous(),
            }
            break
        for buf, block in (
            (raw_buf, raw),
            (scores_buf, scores),
            (modified_buf, logits if terms else None),
            (masked_buf, pre_softmax),
            (applied_buf, applied),
            (mask_buf, shown),
        ):
            if buf is not None and block is not None:
                buf[n0:n1, r0:r1] = block

    if not single:
        stage_blocks = {
            "raw_scores": raw_buf,
            "scores": scores_buf,
            "modified_scores": modified_buf,
            "mask": mask_buf,
            "masked_scores": masked_buf,
            "weights": weights_buf,
            "applied_weights": applied_buf,
            "output": output,
        }
    # Stages that are the same tensor as another one are shared, not copied.
    if divisor is None and factor is None:
        stage_blocks["raw_scores"] = stage_blocks["scores"]
    if not terms:
        stage_blocks["modified_scores"] = stage_blocks["scores"]
    if not changed:
        stage_blocks["masked_scores"] = stage_blocks["scores"]
    if not masked:
        stage_blocks["mask"] = torch.ones((1, 1, 1), dtype=torch.bool, device=dev).expand(shape)
    if not dropping:
        stage_blocks["applied_weights"] = stage_blocks["weights"]
    stages = {name: (stage_blocks.get(name) if name in kept else None) for name in STAGES}
    return _Computed(stages, sums, (row_sums, entropy, max_weight, empty_rows, fill_rows), largest)


def _softmax_with_sinks(logits: torch.Tensor, sinks: list[torch.Tensor]) -> torch.Tensor:
    """The softmax of each row over its keys and the sink logits, the sinks' share dropped (as
    gpt-oss's eager attention: concatenated, shifted by the row's largest, normalised, sliced)."""
    n, rows, _ = logits.shape
    extra = [s.to(logits.dtype).expand(n, rows, 1) for s in sinks]
    combined = torch.cat([logits, *extra], dim=-1)
    combined = combined - combined.max(dim=-1, keepdim=True).values
    return torch.softmax(combined, dim=-1)[..., : logits.shape[-1]]


def _pool(weights: torch.Tensor, values: torch.Tensor, clean: bool, out: torch.Tensor | None) -> torch.Tensor:
    """weights @ values, where a zero weight never lets a NaN/Inf value through when ``clean``.

    Plain matrix products compute 0 * NaN = NaN, which is what the book's code does with a NaN
    in a padded value vector. Strict modes promise the output ignores what padding contains,
    so there non-finite values only count where their weight is non-zero.
    """
    if not clean:
        return torch.bmm(weights, values) if out is None else torch.bmm(weights, values, out=out)
    finite = torch.isfinite(values)
    plain = torch.bmm(weights, values)
    safe = torch.bmm(weights, torch.where(finite, values, torch.zeros((), dtype=values.dtype, device=values.device)))
    leaks = torch.bmm((weights != 0).to(values.dtype), (~finite).to(values.dtype)) > 0
    result = torch.where(leaks, plain, safe)
    if out is not None:
        out.copy_(result)
        return out
    return result
