"""``attend``: the functional core. One call, every stage, honest diagnostics.

The work is done in blocks of query rows. That bounds the memory of additive attention (whose
(B, Q, K, hidden) feature tensor would otherwise be the peak) and keeps the temporaries of the
elementwise stages in cache, which is most of what makes this faster than the book's code.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from .devices import dtype_name, is_out_of_memory, resolve_device, resolve_dtype
from .errors import AttentionInputError, DeviceOutOfMemoryError
from .memory import empty_large
from .masking import D2L_FILL, MaskMode, MaskSpec, check_mask_mode
from ..tr import QT_TRANSLATE_NOOP, message, plural
from .result import STAGES, AttentionResult, Diagnostics
from .scoring import Params, ScoringFunction, check_params, get_scoring

#: Elements of one block of scores (rows x K): 1 Mi floats = 4 MiB, a few of which stay in the
#: L3 cache; smaller blocks cost more in per-operation overhead than they gain (measured).
BLOCK_ELEMENTS = 1 << 20
#: Elements of the largest temporary a scoring function may build per block (additive attention's
#: features): 16 Mi floats = 64 MiB in float32.
MAX_TEMP_ELEMENTS = 1 << 24


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
) -> AttentionResult:
    """Attention of ``queries`` (B, Q, d_q) over ``keys`` (B, K, d_k) and ``values`` (B, K, D).

    Masks (combined: a key is attended only if every source allows it):
      valid_lens        (B,) or (B, Q) whole numbers; key k is valid if k < length (the book's)
      causal            None, True / "top_left" (PyTorch's is_causal) or "bottom_right"
      attn_mask         bool (Q, K) or (B, Q, K), True = attend (PyTorch SDPA convention)
      key_padding_mask  bool (B, K), True = ignore (nn.MultiheadAttention convention)

    ``mask_mode`` picks how the mask is applied (see ``masking.MASK_MODES``): "d2l" (the book's
    -1e6 fill), "strict", "neg_inf", "sdpa", "float01", "inverted".

    ``scoring`` is a name from ``scoring.SCORINGS``. Learnable ones take their parameters from
    ``params`` when given, else initialise them from ``seed``; ``result.params`` holds them.

    ``dropout`` applies only when ``train`` is True, reproducibly from ``dropout_seed``.
    ``dtype`` defaults to the queries' floating dtype, else float32. ``device``: None (the
    queries' device), "auto" (CUDA, else MPS, else CPU) or a name; a missing device raises
    ``DeviceError``, running out of memory raises ``DeviceOutOfMemoryError``.
    ``keep``: "all", or the stage names to keep; weights and output are always kept.
    NaN or Inf in the inputs raises ``AttentionInputError`` unless ``allow_nonfinite`` (for
    demonstrating what masking does not remove).
    """
    fn = get_scoring(scoring)
    mode = check_mask_mode(mask_mode)
    kept = _check_keep(keep)
    if isinstance(num_hiddens, bool) or not isinstance(num_hiddens, int) or num_hiddens < 1:
        raise AttentionInputError(message(QT_TRANSLATE_NOOP("Errors", "num_hiddens must be a whole number >= 1; got "
                                                                      "{value}"), value=repr(num_hiddens)), "params")
    if not (isinstance(dropout, (int, float)) and 0.0 <= float(dropout) <= 1.0):
        raise AttentionInputError(message(QT_TRANSLATE_NOOP("Errors", "dropout must be a probability between 0 and 1; "
                                                                      "got {value}"), value=repr(dropout)), "dropout")

    dev = resolve_device(device) if device is not None else _device_of(queries)
    dt = resolve_dtype(dtype, _default_dtype(queries))
    q = _as_input(queries, "queries", dt, dev, allow_nonfinite)
    k = _as_input(keys, "keys", dt, dev, allow_nonfinite)
    v = _as_input(values, "values", dt, dev, allow_nonfinite)
    batch, n_q, d_q = q.shape
    _, n_k, d_k = k.shape
    _check_shapes(fn, q, k, v)
    spec = MaskSpec.build(batch, n_q, n_k, dev, valid_lens, causal, attn_mask, key_padding_mask)
    p = _resolve_params(fn, params, d_q, d_k, num_hiddens, seed)

    start = time.perf_counter()
    try:
        result = _compute(
            fn, mode, spec, q, k, v, {n: t.to(device=dev, dtype=dt) for n, t in p.items()},
            float(dropout) if train else 0.0, dropout_seed, kept,
        )
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
    except Exception as exc:
        if is_out_of_memory(exc):
            need = 4 * batch * n_q * n_k * torch.finfo(dt).bits // 8
            raise DeviceOutOfMemoryError(message(QT_TRANSLATE_NOOP(
                "Errors", "out of memory on {device} for batch {batch}, {n_q} queries x {n_k} keys (about {mib} MiB "
                          "of stages); use a smaller input or another device"),
                device=str(dev), batch=batch, n_q=n_q, n_k=n_k, mib=f"{need / 2**20:.0f}")) from exc
        raise
    seconds = time.perf_counter() - start
    return AttentionResult(
        **result,
        params=p,
        scoring=fn.name,
        mask_mode=mode.name,
        scale=fn.scale(d_q),
        device=str(dev),
        dtype=dtype_name(dt),
        seconds=seconds,
    )


# --------------------------------------------------------------------------- input checks


def _check_keep(keep: str | Iterable[str]) -> frozenset[str]:
    if keep == "all":
        return frozenset(STAGES)
    if isinstance(keep, str):
        keep = (keep,)
    names = frozenset(keep)
    unknown = names - set(STAGES)
    if unknown:
        raise AttentionInputError(message(QT_TRANSLATE_NOOP(
            "Errors", "unknown stage(s) {names} in keep: expected names from {stages}"),
            names=", ".join(sorted(unknown)), stages=", ".join(STAGES)))
    return names | {"weights", "output"}


def _device_of(x: object) -> torch.device:
    return x.device if isinstance(x, torch.Tensor) else torch.device("cpu")


def _default_dtype(x: object) -> torch.dtype:
    if isinstance(x, torch.Tensor) and x.dtype in (torch.float64, torch.float16, torch.bfloat16):
        return x.dtype
    return torch.float32


def _as_input(x: object, name: str, dtype: torch.dtype, device: torch.device, allow_nonfinite: bool) -> torch.Tensor:
    try:
        t = torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise AttentionInputError(message(QT_TRANSLATE_NOOP(
            "Errors", "{name} must be a numeric tensor or array; got {type}"),
            name=_ROLE_NAMES.get(name, name), type=type(x).__name__), name) from exc
    if t.dtype == torch.bool or t.is_complex() or not (t.is_floating_point() or t.dtype in _INT_DTYPES):
        raise AttentionInputError(message(QT_TRANSLATE_NOOP("Errors", "{name} must hold real numbers; got dtype {dtype}"),
                                          name=_ROLE_NAMES.get(name, name), dtype=str(t.dtype)), name)
    if t.dim() != 3:
        # Two whole sentences: the axis name is a word of the sentence, translated with it.
        three_d = (QT_TRANSLATE_NOOP("Errors", "{name} must be 3-D (batch, queries, features); got shape {shape}")
                   if name == "queries" else
                   QT_TRANSLATE_NOOP("Errors", "{name} must be 3-D (batch, keys, features); got shape {shape}"))
        raise AttentionInputError(message(three_d, name=_ROLE_NAMES.get(name, name), shape=tuple(t.shape)), "shape")
    if 0 in t.shape[:2]:
        raise AttentionInputError(message(QT_TRANSLATE_NOOP(
            "Errors", "{name} must have at least one batch element and one row; got shape {shape}"),
            name=_ROLE_NAMES.get(name, name), shape=tuple(t.shape)), "shape")
    if not allow_nonfinite and t.is_floating_point():
        finite = torch.isfinite(t)
        if not bool(finite.all()):
            idx = tuple(int(i) for i in (~finite).nonzero()[0])
            kind = "NaN" if torch.isnan(t[idx]) else "Inf"
            raise AttentionInputError(message(
                QT_TRANSLATE_NOOP("Errors", "{name} contains {kind} at index {idx}"),
                name=_ROLE_NAMES.get(name, name), kind=kind, idx=idx), name)
    return t.to(device=device, dtype=dtype).contiguous()


_INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
_ROLE_NAMES = {
    "queries": QT_TRANSLATE_NOOP("Errors", "queries"),
    "keys": QT_TRANSLATE_NOOP("Errors", "keys"),
    "values": QT_TRANSLATE_NOOP("Errors", "values"),
}


def _check_shapes(fn: ScoringFunction, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    if not (q.shape[0] == k.shape[0] == v.shape[0]):
        raise AttentionInputError(message(
            QT_TRANSLATE_NOOP("Errors", "batch sizes differ: queries {q}, keys {k}, values {v}"),
            q=q.shape[0], k=k.shape[0], v=v.shape[0]), "shape")
    if k.shape[1] != v.shape[1]:
        raise AttentionInputError(message(
            QT_TRANSLATE_NOOP("Errors", "keys and values must pair up: {k} keys but {v} values"),
            k=k.shape[1], v=v.shape[1]), "shape")
    if fn.same_dim and q.shape[2] != k.shape[2]:
        raise AttentionInputError(message(
            QT_TRANSLATE_NOOP("Errors", "{scoring} scoring needs queries and keys of the same length: "
                                        "d_q = {d_q}, d_k = {d_k} (additive or bilinear scoring accept "
                                        "different lengths)"),
            scoring=fn.label, d_q=q.shape[2], d_k=k.shape[2]), "shape")


def _resolve_params(fn: ScoringFunction, params: Params | None, d_q: int, d_k: int, num_hiddens: int, seed: int) -> Params:
    shapes = fn.param_shapes(d_q, d_k, num_hiddens)
    if not shapes:
        return {}
    if params is None:
        gen = torch.Generator().manual_seed(int(seed))
        return fn.init_params(d_q, d_k, num_hiddens, gen)
    given = {name: torch.as_tensor(value).detach().to(torch.float32) for name, value in params.items() if name in shapes}
    check_params(fn, given, d_q, d_k, num_hiddens)
    return given


# --------------------------------------------------------------------------- the computation


@dataclass
class _Accumulators:
    """Running sums for the diagnostics, kept as tensors so a GPU is not synchronised per block."""

    s1: torch.Tensor
    s2: torch.Tensor
    count: torch.Tensor
    nan_scores: torch.Tensor
    inf_scores: torch.Tensor
    nan_weights: torch.Tensor
    inf_weights: torch.Tensor
    min_allowed: torch.Tensor


def _block_rows(fn: ScoringFunction, n_k: int, d_q: int, d_k: int, params: Params) -> int:
    """How many query rows (of all batch elements together) one block may hold."""
    hidden = params["w_v"].shape[1] if "w_v" in params else 1
    work = fn.work_per_row(1, n_k, d_q, d_k, hidden)
    return max(1, min(BLOCK_ELEMENTS // max(n_k, 1), MAX_TEMP_ELEMENTS // max(work, 1)))


def _compute(
    fn: ScoringFunction,
    mode: MaskMode,
    spec: MaskSpec,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    params: Params,
    p_drop: float,
    dropout_seed: int,
    kept: frozenset[str],
) -> dict[str, object]:
    """Every stage, a block of query rows of one batch element at a time.

    Small inputs (the whole batch fits in one block) are done in one go with no copies; large
    ones are cut into blocks whose temporaries stay in cache, and each block's result is
    written straight into its slice of the stage tensors (contiguous, so ``out=`` works).
    """
    batch, n_q, d_q = q.shape
    n_k = k.shape[1]
    dev, dt = q.device, q.dtype
    acc = torch.float64 if dt == torch.float64 else torch.float32
    scale = fn.scale(d_q)
    masked = not spec.is_empty
    # A plain fill of the keys past a 1-D valid length needs no mask tensor at all.
    prefix = spec.is_prefix and mode.fill is not None
    lens = spec.valid_lens.tolist() if prefix and spec.valid_lens is not None else None
    dropping = p_drop > 0.0
    capacity = _block_rows(fn, n_k, d_q, k.shape[2], params)
    # The whole batch in one block when it fits (small inputs: no copies at all), else blocks of
    # rows of one batch element at a time.
    single = batch * n_q <= capacity
    rows = min(n_q, capacity)
    shape = (batch, n_q, n_k)
    fill = None
    if mode.fill is not None:
        fill = torch.tensor(mode.fill, dtype=torch.float64).to(dt)

    def buffer(name: str, dtype: torch.dtype = dt, needed: bool = True) -> torch.Tensor | None:
        return empty_large(shape, dtype, dev) if needed and name in kept and not single else None

    raw_buf = buffer("raw_scores", needed=scale is not None)
    scores_buf = buffer("scores")
    masked_buf = buffer("masked_scores", needed=masked)
    applied_buf = buffer("applied_weights", needed=dropping)
    weights_buf = None if single else empty_large(shape, dt, dev)
    output = None if single else empty_large((batch, n_q, v.shape[2]), dt, dev)

    def scalar(dtype: torch.dtype = acc, value: float = 0.0) -> torch.Tensor:
        return torch.full((), value, dtype=dtype, device=dev)

    sums = _Accumulators(
        scalar(), scalar(), scalar(), scalar(torch.int64), scalar(torch.int64),
        scalar(torch.int64), scalar(torch.int64), scalar(value=math.inf),
    )
    row_sums = torch.empty((batch, n_q), dtype=acc, device=dev)
    entropy = torch.empty_like(row_sums)
    max_weight = torch.empty_like(row_sums)
    empty_rows = torch.zeros((batch, n_q), dtype=torch.bool, device=dev)
    gen = None
    if dropping:
        gen = torch.Generator(device=dev)
        gen.manual_seed(int(dropout_seed))
    # Only strict promises that padding cannot leak in; "sdpa" reproduces PyTorch, where a NaN
    # value behind a zero weight still makes the output NaN (0 * NaN).
    # Where a -inf fill sits the weight is 0: the entropy's dot product then takes the scores.
    inf_fill = mode.inverted or (fill is not None and bool(torch.isinf(fill)))
    surely_finite = _scores_surely_finite(fn, q, k, params)
    clean_pool = mode.name == "strict" and not bool(torch.isfinite(v).all())

    if single:
        blocks = [(slice(None), slice(None))]
    else:
        blocks = [(slice(b, b + 1), slice(r0, min(n_q, r0 + rows))) for b in range(batch) for r0 in range(0, n_q, rows)]

    stage_blocks: dict[str, torch.Tensor | None] = {}
    for bs, rs in blocks:
        raw = fn.scores(q[bs, rs], k[bs], params)
        # Divide, not multiply by the reciprocal: bit for bit what the book's code does.
        scores = raw / scale if scale is not None else raw
        allowed: torch.Tensor | None = None
        empty: torch.Tensor | None = None
        length: int | None = None
        if prefix and lens is not None and (not single or batch == 1):
            # A block holds rows of one batch element (or the only one): one length for all.
            length = int(lens[bs.start or 0])
            _diagnose_scores(scores, None, length, mode, sums, surely_finite)
            pre_softmax = scores
            if length < n_k:
                assert fill is not None
                if (scores is raw and "raw_scores" in kept) or "scores" in kept:
                    pre_softmax = scores.clone()
                pre_softmax[..., length:] = fill
            if length == 0:
                empty_rows[bs, rs] = True
        elif masked:
            allowed = spec.rows(rs.start or 0, rs.stop or n_q, dev, None if single else bs.start)
            assert allowed is not None
            allowed = allowed.expand(scores.shape)
            _diagnose_scores(scores, allowed, None, mode, sums, surely_finite)
            pre_softmax = mode.apply(scores, allowed)
            empty = spec.empty_rows(rs.start or 0, rs.stop or n_q, dev, None if single else bs.start)
            if empty is None:
                empty = ~allowed.any(-1)
            empty_rows[bs, rs] = empty
        else:
            _diagnose_scores(scores, None, None, mode, sums, surely_finite)
            pre_softmax = scores

        if weights_buf is not None:
            weights = weights_buf[bs, rs]
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
        out = _pool(applied, v[bs], clean_pool, None if output is None else output[bs, rs])

        _diagnose_weights(pre_softmax, weights, sums, row_sums[bs, rs], entropy[bs, rs], max_weight[bs, rs],
                          finite_inputs=scores if inf_fill else None, length=length)

        if single:
            stage_blocks = {"raw_scores": raw, "scores": scores, "masked_scores": pre_softmax,
                            "weights": weights, "applied_weights": applied, "output": out}
            break
        for buf, block in ((raw_buf, raw), (scores_buf, scores), (masked_buf, pre_softmax), (applied_buf, applied)):
            if buf is not None:
                buf[bs, rs] = block

    if not single:
        stage_blocks = {"raw_scores": raw_buf, "scores": scores_buf, "masked_scores": masked_buf,
                        "weights": weights_buf, "applied_weights": applied_buf, "output": output}
    # Stages that are the same tensor as another one are shared, not copied.
    if scale is None:
        stage_blocks["raw_scores"] = stage_blocks["scores"]
    if not masked:
        stage_blocks["masked_scores"] = stage_blocks["scores"]
    if not dropping:
        stage_blocks["applied_weights"] = stage_blocks["weights"]
    if "mask" in kept:
        stage_blocks["mask"] = (spec.full(dev) if masked else
                                torch.ones((1, 1, 1), dtype=torch.bool, device=dev).expand(shape))
    stages = {name: (stage_blocks.get(name) if name in kept else None) for name in STAGES}

    diagnostics = _finish_diagnostics(mode, spec, sums, row_sums, entropy, max_weight, empty_rows, scale, dt)
    return {**stages, "diagnostics": diagnostics}


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


def _diagnose_scores(
    scores: torch.Tensor,
    allowed: torch.Tensor | None,
    length: int | None,
    mode: MaskMode,
    sums: _Accumulators,
    surely_finite: bool = False,
) -> None:
    """NaN/Inf counts and the running sums for the logit variance over the allowed positions.

    Called before masking: the tail of a 1-D valid length may then be overwritten in place.
    ``surely_finite``: the inputs are too small for any score to overflow (see
    ``_scores_surely_finite``), so the pass that looks for NaN/Inf is skipped.
    """
    acc = sums.s1.dtype
    score_total = None if surely_finite and length is not None else scores.sum(dtype=acc)
    finite_scores = surely_finite or bool(torch.isfinite(score_total))
    if not finite_scores:
        sums.nan_scores += torch.isnan(scores).sum()
        sums.inf_scores += torch.isinf(scores).sum()
    zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
    if length is not None:
        # 1-D valid length: the allowed scores are the leading columns, no mask needed.
        view = scores[..., :length]
        if finite_scores:
            sums.count += view.numel()
        else:
            ok = torch.isfinite(view)
            sums.count += ok.sum()
            view = torch.where(ok, view, zero)
        # Row by row: a norm over the strided view as a whole is three times slower.
        sums.s1 += view.sum(dtype=acc)
        sums.s2 += torch.linalg.vector_norm(view, dim=-1, dtype=acc).square().sum()
        if mode.name == "d2l" and view.numel():
            sums.min_allowed = torch.minimum(sums.min_allowed, view.amin().to(acc))
        return
    valid = allowed
    if not finite_scores:
        ok = torch.isfinite(scores)
        valid = ok if valid is None else valid & ok
    if valid is None:
        sums.s1 += score_total if score_total is not None else scores.sum(dtype=acc)
        sums.s2 += torch.linalg.vector_norm(scores, dtype=acc) ** 2
        sums.count += scores.numel()
        if mode.name == "d2l":
            sums.min_allowed = torch.minimum(sums.min_allowed, scores.amin().to(acc))
        return
    kept_scores = torch.where(valid, scores, zero)
    sums.s1 += kept_scores.sum(dtype=acc)
    sums.s2 += torch.linalg.vector_norm(kept_scores, dtype=acc) ** 2
    sums.count += valid.sum()
    # Only look for real scores under the fill when some score is that low at all.
    if mode.name == "d2l" and float(scores.amin()) <= D2L_FILL:
        inf = torch.full((), math.inf, dtype=scores.dtype, device=scores.device)
        sums.min_allowed = torch.minimum(sums.min_allowed, torch.where(valid, scores, inf).amin().to(acc))


def _diagnose_weights(
    pre_softmax: torch.Tensor,
    weights: torch.Tensor,
    sums: _Accumulators,
    row_sums: torch.Tensor,
    entropy: torch.Tensor,
    max_weight: torch.Tensor,
    *,
    finite_inputs: torch.Tensor | None = None,
    length: int | None = None,
) -> None:
    """Row sums, largest weight and entropy of each row; NaN/Inf counts of the weights.

    ``finite_inputs`` equals ``pre_softmax`` wherever a weight is not zero but holds no -inf
    (the scores before a -inf fill); default ``pre_softmax``. With a 1-D valid ``length`` the
    weights that matter are the leading ``length`` columns, which hold no fill at all.
    """
    acc = row_sums.dtype
    w = weights if weights.dtype == acc else weights.to(acc)
    x = pre_softmax if pre_softmax.dtype == acc else pre_softmax.to(acc)
    if length is not None:
        w_dot, x_dot = w[..., :length], x[..., :length]
    else:
        xf = x if finite_inputs is None else finite_inputs
        w_dot, x_dot = w, xf if xf.dtype == acc else xf.to(acc)
    total = w.sum(-1)
    w_max = w.amax(-1)
    row_sums.copy_(total)
    max_weight.copy_(w_max)
    # Entropy without a log per element: with m the row's largest softmax input, w_max = 1 / Z
    # and log w_j = (x_j - m) + log w_max, so H = -log w_max + m * sum_j w_j - sum_j w_j x_j.
    # The dot product uses finite inputs (a -inf fill sits where the weight is 0 anyway).
    m = x.amax(-1)
    h = (m - torch.log(w_max)) * total - (w_dot * x_dot).sum(-1)
    # Where |m| is huge (the book's -1e6 fill on a row with no valid key, scores below the fill)
    # that difference cancels catastrophically; recompute those few rows from the gaps m - x_j.
    far = m.abs() > 1e4
    if bool(far.any()):
        xs = x[far].double()
        ws = w[far].double()
        gap = (xs.amax(-1, keepdim=True) - xs).clamp_max_(1e4)  # a zero weight cancels +inf
        h[far] = ((ws * gap).sum(-1) - torch.log(ws.amax(-1)) * ws.sum(-1)).to(acc)
    entropy.copy_(torch.where(w_max > 0, h, torch.zeros((), dtype=acc, device=h.device)))
    if not bool(torch.isfinite(total).all()):
        sums.nan_weights += torch.isnan(w).sum()
        sums.inf_weights += torch.isinf(w).sum()


def _scores_surely_finite(fn: ScoringFunction, q: torch.Tensor, k: torch.Tensor, params: Params) -> bool:
    """True when no score can overflow: float32/64 and inputs far below the overflow bound.

    |q.k| <= d max|q| max|k|; the Gaussian kernel and q^T W k are bounded alike, additive
    attention by sum |w_v| (tanh <= 1). With every magnitude under 1e15 and d under 1e6, the
    bound stays below float32's 3.4e38; then there is no need to look for NaN/Inf scores.
    """
    if q.dtype not in (torch.float32, torch.float64):
        return False
    limit = 1e15
    biggest = max(float(q.abs().max()), float(k.abs().max()),
                  *(float(p.abs().max()) for p in params.values() if p.numel()))
    return biggest < limit and max(q.shape[2], k.shape[2]) < 1_000_000


def _finish_diagnostics(
    mode: MaskMode,
    spec: MaskSpec,
    sums: _Accumulators,
    row_sums: torch.Tensor,
    entropy: torch.Tensor,
    max_weight: torch.Tensor,
    empty_rows: torch.Tensor,
    scale: float | None,
    dt: torch.dtype,
) -> Diagnostics:
    count = float(sums.count)
    if count >= 2:
        mean = float(sums.s1) / count
        variance = max(float(sums.s2) / count - mean * mean, 0.0)
    else:
        variance = math.nan
    raw_variance = variance * scale * scale if scale is not None else variance
    nan_rows = torch.isnan(row_sums)
    over = spec.valid_lens_over_keys()

    # English sentences for scripts, which also carry their template and numbers (attnviz.tr)
    # so the app can show them in the user's language.
    warnings: list[str] = []
    n_empty = int(empty_rows.sum())
    if n_empty:
        rows = plural(n_empty, QT_TRANSLATE_NOOP("Diagnostics", "{n} query row"),
                      QT_TRANSLATE_NOOP("Diagnostics", "{n} query rows"))
        if mode.name == "d2l":
            fill = torch.tensor(D2L_FILL, dtype=torch.float64).to(dt)
            if torch.isinf(fill):
                warnings.append(message(QT_TRANSLATE_NOOP(
                    "Diagnostics", "{rows} with no valid key: in {dtype} the -1e6 fill overflows to -inf, so these "
                                   "rows are NaN"), rows=rows, dtype=dtype_name(dt)))
            else:
                warnings.append(message(QT_TRANSLATE_NOOP(
                    "Diagnostics", "{rows} with no valid key: the book's -1e6 fill gives them uniform weights over "
                                   "all keys, padding included"), rows=rows))
        elif mode.zero_empty_rows:
            warnings.append(message(QT_TRANSLATE_NOOP(
                "Diagnostics", "{rows} with no valid key: zero weights and zero output"), rows=rows))
        elif mode.fill is not None:
            warnings.append(message(QT_TRANSLATE_NOOP(
                "Diagnostics", "{rows} with no valid key: the softmax of an all -inf row is NaN"), rows=rows))
    n_nan = int(nan_rows.sum())
    if n_nan:
        warnings.append(plural(n_nan, QT_TRANSLATE_NOOP("Diagnostics", "{n} row of weights contain NaN"),
                               QT_TRANSLATE_NOOP("Diagnostics", "{n} rows of weights contain NaN")))
    if int(sums.inf_scores):
        warnings.append(plural(int(sums.inf_scores),
                               QT_TRANSLATE_NOOP("Diagnostics", "{n} score overflowed to Inf in {dtype}"),
                               QT_TRANSLATE_NOOP("Diagnostics", "{n} scores overflowed to Inf in {dtype}"),
                               dtype=dtype_name(dt)))
    if int(sums.nan_scores):
        warnings.append(plural(int(sums.nan_scores), QT_TRANSLATE_NOOP("Diagnostics", "{n} score are NaN"),
                               QT_TRANSLATE_NOOP("Diagnostics", "{n} scores are NaN")))
    if over is not None and bool(over.any()):
        warnings.append(plural(
            int(over.sum()),
            QT_TRANSLATE_NOOP("Diagnostics", "{n} valid length exceed the {keys} keys: treated as all keys valid, as "
                                             "the book's code does"),
            QT_TRANSLATE_NOOP("Diagnostics", "{n} valid lengths exceed the {keys} keys: treated as all keys valid, "
                                             "as the book's code does"),
            keys=spec.n_keys))
    if mode.name == "d2l" and float(sums.min_allowed) <= D2L_FILL:
        warnings.append(QT_TRANSLATE_NOOP(
            "Diagnostics", "some real scores are at or below the -1e6 fill: masked keys are not negligible against "
                           "them"))
    if mode.name == "float01" and not spec.is_empty:
        warnings.append(QT_TRANSLATE_NOOP(
            "Diagnostics", "the 1/0 mask was added to the scores as a float mask: nothing is masked"))
    if mode.inverted and not spec.is_empty:
        warnings.append(QT_TRANSLATE_NOOP(
            "Diagnostics", "the mask was read with the opposite polarity: masked keys are attended"))

    return Diagnostics(
        empty_rows=empty_rows,
        nan_rows=nan_rows,
        nan_scores=int(sums.nan_scores),
        inf_scores=int(sums.inf_scores),
        nan_weights=int(sums.nan_weights),
        inf_weights=int(sums.inf_weights),
        row_sums=row_sums,
        entropy=entropy,
        max_weight=max_weight,
        logit_variance=variance,
        raw_logit_variance=raw_variance,
        valid_lens_over_keys=over,
        warnings=tuple(warnings),
    )
