"""The scaling lab's data: why dot products are divided by sqrt(d), and when tanh saturates.

``scaling_curves`` measures, for random unit-variance queries and keys of growing length d,
the variance of q.k with and without the 1/sqrt(d) scaling and what that variance does to the
softmax: its entropy, its largest weight, and the size of its Jacobian with respect to the
logits (how much gradient flows back through it). ``current_point`` gives the same numbers for
the user's inputs, so a view can mark them on the curves. ``tanh_saturation`` histograms the
pre-activations W_q q + W_k k of additive attention and the share that saturates tanh.

Numpy and torch only, no Qt. All statistics are float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .budget import enforce_work_budget
from .errors import input_error
from .mask_mods import Mask
from .mask_spec import mask_from_arguments
from .scoring import Params, get_scoring
from .validation import (
    as_tensor,
    check_batches,
    check_memory_budget,
    check_num_hiddens,
    resolve_params,
    role_name,
)

#: The d of the default curves: 1, 2, 4, ..., 1024.
DEFAULT_DIMS: tuple[int, ...] = tuple(2**i for i in range(11))

#: Names of the per-d statistics in ``scaling_curves`` (each also with "_scaled"/"_unscaled").
STATISTICS: tuple[str, ...] = ("var", "entropy", "max_weight", "jacobian_norm")

#: Peak bytes per (batch, query, key) cell, measured with every key allowed (66 and 35 on
#: (1, 2048, 2048)) plus a margin: ``current_point`` holds float64 scores, their scaled copy, the
#: masked rows and the softmax's working copies; ``tanh_saturation`` the allowed mask and the
#: indices of the allowed pairs.
_POINT_BYTES_PER_CELL = 72
_SATURATION_BYTES_PER_CELL = 40
_CPU = torch.device("cpu")


def softmax_jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of the softmax Jacobian d w / d x = diag(w) - w w^T, per row of ``weights``.

    Closed form, O(K) per row instead of the K x K matrix:
    ||J||_F^2 = sum w_i^2 - 2 sum w_i^3 + (sum w_i^2)^2.
    """
    w = weights.to(torch.float64)
    s2 = (w * w).sum(-1)
    s3 = (w * w * w).sum(-1)
    return (s2 - 2 * s3 + s2 * s2).clamp_min(0).sqrt()


def _softmax_stats(logits: torch.Tensor) -> tuple[float, float, float]:
    """Mean entropy (nats), mean largest weight and mean Jacobian norm over the rows of logits."""
    log_w = torch.log_softmax(logits, dim=-1)
    w = log_w.exp()
    # 0 * log 0 is 0: weights that underflow must not turn the entropy into NaN.
    entropy = -(torch.where(w > 0, w * log_w, torch.zeros((), dtype=w.dtype))).sum(-1)
    return (
        float(entropy.mean()),
        float(w.amax(-1).mean()),
        float(softmax_jacobian_norm(w).mean()),
    )


def scaling_curves(
    dims: tuple[int, ...] | list[int] = DEFAULT_DIMS,
    n_keys: int = 64,
    samples: int = 4096,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Statistics of q.k and of softmax(q.k) for standard normal q, k in R^d, for each d in dims.

    Variances are population variances (divided by n), like the engine's ``logit_variance``.
    Returns float64 arrays of len(dims) (``dims`` itself as int64):
      var_unscaled, var_scaled            variance of q.k and of q.k / sqrt(d) (theory: d and 1)
      entropy_unscaled, entropy_scaled    mean entropy of the softmax over n_keys keys, in nats
      max_weight_unscaled, max_weight_scaled   mean largest weight of a row
      jacobian_norm_unscaled, jacobian_norm_scaled   mean Frobenius norm of diag(w) - w w^T
    and scalars as 0-d arrays: ``max_entropy`` (log n_keys, uniform weights), ``n_keys``,
    ``samples``.

    Sampling: for a fixed q and independent standard normal keys, the scores q.k_j are
    independent N(0, ||q||^2). So each sample draws ||q||^2 (as a sum of d squared normals) and
    n_keys standard normals z, and the scores are ||q|| z: exactly the distribution of real
    dot products, at O(n_keys) per sample instead of O(n_keys d). The same normals are reused
    for every d (nested prefixes of one q), so the curves are smooth rather than noisy.
    """
    dims_arr = _check_dims(dims)
    if isinstance(n_keys, bool) or not isinstance(n_keys, int) or n_keys < 1:
        raise input_error(_AT_LEAST, "shape", name="n_keys", low=1, value=repr(n_keys))
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 2:
        raise input_error(_AT_LEAST, "shape", name="samples", low=2, value=repr(samples))
    gen = torch.Generator().manual_seed(int(seed))
    d_max = int(dims_arr.max())
    q = torch.randn((samples, d_max), generator=gen, dtype=torch.float64)
    # ||q[:d]||^2 for every prefix length d.
    norm_sq = torch.cumsum(q * q, dim=1)
    z = torch.randn((samples, n_keys), generator=gen, dtype=torch.float64)

    out: dict[str, list[float]] = {f"{s}_{k}": [] for s in STATISTICS for k in ("unscaled", "scaled")}
    for d in dims_arr.tolist():
        logits = norm_sq[:, d - 1 : d].sqrt() * z
        for kind, x in (("unscaled", logits), ("scaled", logits / math.sqrt(d))):
            entropy, max_w, jac = _softmax_stats(x)
            out[f"var_{kind}"].append(float(x.var(correction=0)))
            out[f"entropy_{kind}"].append(entropy)
            out[f"max_weight_{kind}"].append(max_w)
            out[f"jacobian_norm_{kind}"].append(jac)
    result: dict[str, np.ndarray] = {"dims": dims_arr}
    result.update({name: np.asarray(values, dtype=np.float64) for name, values in out.items()})
    result["max_entropy"] = np.asarray(math.log(n_keys))
    result["n_keys"] = np.asarray(n_keys)
    result["samples"] = np.asarray(samples)
    return result


_AT_LEAST = QT_TRANSLATE_NOOP("Errors", "{name} must be a whole number >= {low}; got {value}")


def _check_dims(dims: tuple[int, ...] | list[int]) -> np.ndarray:
    try:
        arr = np.asarray(dims)
    except (TypeError, ValueError):
        arr = np.asarray([])
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu" or (arr < 1).any():
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "dims must be a non-empty list of whole numbers >= 1; got {value}"),
            "shape",
            value=repr(dims),
        )
    if int(arr.max()) > 1 << 16:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "dims above 65536 are not supported; got {value}"),
            "shape",
            value=int(arr.max()),
        )
    return arr.astype(np.int64)


def _tensor3(x: object, name: str) -> torch.Tensor:
    t = as_tensor(x, name, name).to("cpu", torch.float64)
    if t.dim() != 3 or 0 in t.shape:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must be 3-D (batch, rows, features) and not empty; got shape {shape}"),
            "shape",
            name=role_name(name),
            shape=tuple(t.shape),
        )
    if not bool(torch.isfinite(t).all()):
        raise input_error(QT_TRANSLATE_NOOP("Errors", "{name} contains NaN or Inf"), name, name=role_name(name))
    return t


def _allowed(q: torch.Tensor, k: torch.Tensor, valid_lens: object, mask: Mask | None) -> torch.Tensor:
    """(B, Q, K) bool: the pairs the valid lengths and ``mask`` allow (all, without either)."""
    check_batches(q.shape[0], k.shape[0])
    return mask_from_arguments(valid_lens, mask=mask).bind_call(q.shape[0], q.shape[1], k.shape[1]).full()


def current_point(
    queries: object,
    keys: object,
    valid_lens: object = None,
    *,
    mask: Mask | None = None,
    memory_budget: float | None = None,
) -> dict[str, float]:
    """The ``scaling_curves`` statistics for the given queries (B, Q, d) and keys (B, K, d).

    Dot-product scores of every query with the keys its valid length (1-D or 2-D, as ``attend``
    reads them) and ``mask`` (a description, as ``attend`` takes it) allow; rows with no allowed
    key are left out. Returns floats:
      d, n_keys (mean allowed keys per row), rows (rows used),
      var_unscaled, var_scaled, entropy_*, max_weight_*, jacobian_norm_* (as in the curves),
      q_mean_square, k_mean_square (the curves assume 1 for both: if yours are not near 1, the
      unscaled variance is about d * q_mean_square * k_mean_square instead of d),
      max_entropy (log of n_keys).
    Statistics are NaN when no row (or, for the variances, fewer than two scores) is usable.
    ``memory_budget`` as for ``attend``: over it, ``MemoryBudgetError`` before the scores are made.
    """
    q = _tensor3(queries, "queries")
    k = _tensor3(keys, "keys")
    enforce_work_budget(
        QT_TRANSLATE_NOOP("Errors", "computing the scaling statistics of the current inputs"),
        (q.shape[0], q.shape[1], k.shape[1]),
        q.shape[1] * k.shape[1] * _POINT_BYTES_PER_CELL,
        0,
        _CPU,
        check_memory_budget(memory_budget),
    )
    d = q.shape[2]
    if k.shape[2] != d:
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "the scaling view compares dot products, which need queries and keys of the same length: "
                "d_q = {d_q}, d_k = {d_k}",
            ),
            "shape",
            d_q=d,
            d_k=k.shape[2],
        )
    allowed = _allowed(q, k, valid_lens, mask)
    rows = allowed.any(-1)
    result: dict[str, float] = {
        "d": float(d),
        "rows": float(rows.sum()),
        "q_mean_square": float((q * q).mean()),
        "k_mean_square": float((k * k).mean()),
    }
    scores = torch.bmm(q, k.transpose(1, 2))
    n_allowed = allowed.sum(-1)[rows].to(torch.float64)
    result["n_keys"] = float(n_allowed.mean()) if n_allowed.numel() else math.nan
    result["max_entropy"] = float(torch.log(n_allowed).mean()) if n_allowed.numel() else math.nan
    for kind, x in (("unscaled", scores), ("scaled", scores / math.sqrt(d))):
        kept = x[allowed]
        result[f"var_{kind}"] = float(kept.var(correction=0)) if kept.numel() >= 2 else math.nan
        if bool(rows.any()):
            masked = torch.where(allowed, x, torch.full((), -math.inf, dtype=x.dtype))[rows]
            entropy, max_w, jac = _softmax_stats(masked)
        else:
            entropy = max_w = jac = math.nan
        result[f"entropy_{kind}"] = entropy
        result[f"max_weight_{kind}"] = max_w
        result[f"jacobian_norm_{kind}"] = jac
    return result


@dataclass(frozen=True)
class TanhSaturation:
    """Histograms of additive attention's hidden pre-activations h = W_q q + W_k k.

    ``pre_edges``/``pre_counts``: histogram of |h| (bins + 1 edges from 0); ``tanh_edges``/
    ``tanh_counts``: histogram of |tanh(h)| on [0, 1]. ``saturated_fraction``: share of all
    values with |tanh(h)| > ``threshold``, i.e. |h| > ``pre_threshold`` = atanh(threshold), where
    the gradient 1 - tanh^2 is below 1 - threshold^2. ``saturated_per_unit`` (num_hiddens,): the
    same share per hidden unit. ``n_values``: values counted (pairs x num_hiddens); ``sampled``:
    True when the pairs were a seeded random sample of at most ``max_pairs``.
    """

    pre_edges: np.ndarray
    pre_counts: np.ndarray
    tanh_edges: np.ndarray
    tanh_counts: np.ndarray
    saturated_fraction: float
    saturated_per_unit: np.ndarray
    threshold: float
    pre_threshold: float
    n_values: int
    n_pairs: int
    sampled: bool


def tanh_saturation(
    queries: object,
    keys: object,
    params: Params | dict[str, object] | None = None,
    *,
    num_hiddens: int = 8,
    seed: int = 0,
    valid_lens: object = None,
    mask: Mask | None = None,
    bins: int = 40,
    threshold: float = 0.99,
    max_pairs: int = 1 << 18,
    memory_budget: float | None = None,
) -> TanhSaturation:
    """How saturated additive attention's tanh is on these queries (B, Q, d_q) and keys (B, K, d_k).

    ``params`` are additive attention's {"W_q", "W_k", "w_v"} (as ``attend`` takes and returns
    them); None initialises them from ``seed`` and ``num_hiddens`` exactly as ``attend`` does.
    Only the (query, key) pairs the valid lengths and ``mask`` allow are counted. Beyond ``max_pairs`` allowed
    pairs a seeded random sample of them is used (``sampled`` says so). ``memory_budget`` as for
    ``attend``: over it, ``MemoryBudgetError`` before the pairs are listed.
    """
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise input_error(_AT_LEAST, "shape", name="bins", low=1, value=repr(bins))
    if not (isinstance(threshold, (int, float)) and 0.0 < float(threshold) < 1.0):
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "threshold must be between 0 and 1; got {value}"),
            "shape",
            value=repr(threshold),
        )
    q = _tensor3(queries, "queries")
    k = _tensor3(keys, "keys")
    hidden_bytes = (q.shape[1] + k.shape[1]) * check_num_hiddens(num_hiddens) * 8
    enforce_work_budget(
        QT_TRANSLATE_NOOP("Errors", "computing the tanh saturation of the current inputs"),
        (q.shape[0], q.shape[1], k.shape[1]),
        q.shape[1] * k.shape[1] * _SATURATION_BYTES_PER_CELL + hidden_bytes,
        0,
        _CPU,
        check_memory_budget(memory_budget),
    )
    allowed = _allowed(q, k, valid_lens, mask)
    given = None if params is None else {name: torch.as_tensor(v) for name, v in params.items()}
    # The same resolution as attend(): seeded parameters are bit for bit the ones it would use.
    p = resolve_params(get_scoring("additive"), given, q.shape[2], k.shape[2], num_hiddens, seed)
    q_hidden = q @ p["W_q"].to(torch.float64).T  # (B, Q, h)
    k_hidden = k @ p["W_k"].to(torch.float64).T  # (B, K, h)

    pairs = allowed.nonzero()  # (P, 3): batch, query, key
    n_pairs = int(pairs.shape[0])
    sampled = n_pairs > max_pairs
    if sampled:
        gen = torch.Generator().manual_seed(int(seed))
        pairs = pairs[torch.randperm(n_pairs, generator=gen)[:max_pairs]]
    h = q_hidden[pairs[:, 0], pairs[:, 1]] + k_hidden[pairs[:, 0], pairs[:, 2]]  # (P, hidden)
    a = h.abs()
    t = torch.tanh(a)
    pre_threshold = math.atanh(float(threshold))
    top = max(float(a.max()) if a.numel() else 0.0, 1.5 * pre_threshold)
    pre_edges = np.linspace(0.0, top, bins + 1)
    tanh_edges = np.linspace(0.0, 1.0, bins + 1)
    a_np, t_np = a.numpy().ravel(), t.numpy().ravel()
    saturated = t > threshold
    return TanhSaturation(
        pre_edges=pre_edges,
        pre_counts=np.histogram(a_np, pre_edges)[0].astype(np.int64),
        tanh_edges=tanh_edges,
        tanh_counts=np.histogram(t_np, tanh_edges)[0].astype(np.int64),
        saturated_fraction=float(saturated.to(torch.float64).mean()) if saturated.numel() else math.nan,
        saturated_per_unit=(
            saturated.to(torch.float64).mean(0).numpy() if saturated.shape[0] else np.full(h.shape[1], math.nan)
        ),
        threshold=float(threshold),
        pre_threshold=pre_threshold,
        n_values=int(h.numel()),
        n_pairs=int(h.shape[0]),
        sampled=sampled,
    )
