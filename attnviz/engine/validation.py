"""Checks for every argument of ``attend``: each failure is an ``AttentionInputError`` naming it.

Nothing here converts or copies the inputs: the memory budget is checked between validating the
shapes and converting the tensors (``core.attend``), so that an input too big to compute is
refused before anything is allocated for it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping

import numpy as np
import torch

from ..tr import QT_TRANSLATE_NOOP, message
from .errors import AttentionInputError
from .mask_spec import INT_DTYPES
from .result import STAGES
from .scoring import Params, ScoringFunction, check_params

_ROLE_NAMES = {
    "queries": QT_TRANSLATE_NOOP("Errors", "queries"),
    "keys": QT_TRANSLATE_NOOP("Errors", "keys"),
    "values": QT_TRANSLATE_NOOP("Errors", "values"),
}
#: torch.Generator.manual_seed takes 64-bit seeds.
SEED_LIMIT = 2**64


def role_name(name: str) -> str:
    return _ROLE_NAMES.get(name, name)


def check_flag(value: object, name: str) -> bool:
    """A True/False argument: 1, "yes" or a tensor are refused rather than read as a truth value."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise AttentionInputError(
        message(QT_TRANSLATE_NOOP("Errors", "{name} must be True or False; got {value}"), name=name, value=repr(value)),
        name,
    )


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def check_seed(value: object, name: str) -> int:
    """A generator seed: a whole number from 0 to 2^64 - 1 (a float such as 1.5 is refused)."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            seed = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            seed = None
        if seed is not None and 0 <= seed < SEED_LIMIT:
            return seed
    raise AttentionInputError(
        message(
            QT_TRANSLATE_NOOP("Errors", "{name} must be a whole number from 0 to 2^64 - 1; got {value}"),
            name=name,
            value=repr(value),
        ),
        name,
    )


def check_num_hiddens(value: object) -> int:
    if not isinstance(value, (bool, np.bool_)):
        try:
            hidden = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            hidden = 0
        if hidden >= 1:
            return hidden
    raise AttentionInputError(
        message(QT_TRANSLATE_NOOP("Errors", "num_hiddens must be a whole number >= 1; got {value}"), value=repr(value)),
        "params",
    )


def check_dropout(value: object) -> float:
    """A probability; True is refused rather than read as p = 1."""
    if _is_real(value) and 0.0 <= float(value) <= 1.0:  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    raise AttentionInputError(
        message(
            QT_TRANSLATE_NOOP("Errors", "dropout must be a probability between 0 and 1; got {value}"), value=repr(value)
        ),
        "dropout",
    )


def check_keep(keep: object) -> frozenset[str]:
    """The stages to keep: "all", one stage name or several; weights and output are always kept."""
    names: list[object]
    if isinstance(keep, str):
        if keep == "all":
            return frozenset(STAGES)
        names = [keep]
    else:
        try:
            names = list(keep)  # type: ignore[call-overload]
        except TypeError:
            names = [keep]
    bad = sorted(repr(n) if not isinstance(n, str) else n for n in names if not isinstance(n, str) or n not in STAGES)
    if bad:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "unknown stage(s) {names} in keep: expected names from {stages}"),
                names=", ".join(bad),
                stages=", ".join(STAGES),
            ),
            "keep",
        )
    return frozenset(str(n) for n in names) | {"weights", "output"}


def check_scale(scale: object, fn: ScoringFunction) -> float | None:
    """SDPA's ``scale``: the factor the dot products are multiplied by, instead of 1/sqrt(d).

    It only means something for dot-product scoring ("dot", "scaled_dot"): the other scorings have
    learnable parameters or a kernel that no single factor stands for, so a scale is refused there.
    It must be finite and > 0 (a zero or negative factor is no attention a model computes).
    """
    if scale is None:
        return None
    if not fn.takes_scale:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "scale multiplies dot products (scoring 'dot' or 'scaled_dot'); {scoring} scoring has no scale "
                    "to set",
                ),
                scoring=repr(fn.name),
            ),
            "scale",
        )
    if _is_real(scale) and math.isfinite(float(scale)) and float(scale) > 0:  # type: ignore[arg-type]
        return float(scale)  # type: ignore[arg-type]
    raise AttentionInputError(
        message(QT_TRANSLATE_NOOP("Errors", "scale must be a finite number > 0; got {value}"), value=repr(scale)),
        "scale",
    )


def check_memory_budget(value: object) -> float | None:
    """None (the default budget), or bytes > 0 (math.inf: no budget)."""
    if value is None:
        return None
    if _is_real(value) and float(value) > 0:  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    raise AttentionInputError(
        message(
            QT_TRANSLATE_NOOP(
                "Errors", "memory_budget must be a number of bytes > 0 (or None for the default); got {value}"
            ),
            value=repr(value),
        ),
        "memory_budget",
    )


def as_input(x: object, name: str) -> torch.Tensor:
    """``x`` as a detached tensor of real numbers, (..., rows, features) with at least one of each.

    attend() is for looking at attention, not for training: its results never carry gradients
    (the blocked computation writes into preallocated stages, which autograd cannot follow).
    """
    try:
        t = torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must be a numeric tensor or array; got {type}"),
                name=role_name(name),
                type=type(x).__name__,
            ),
            name,
        ) from exc
    if t.device.type == "meta":
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} is on the 'meta' device, which holds no values"),
                name=role_name(name),
            ),
            name,
        )
    if t.dtype == torch.bool or t.is_complex() or not (t.is_floating_point() or t.dtype in INT_DTYPES):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must hold real numbers; got dtype {dtype}"),
                name=role_name(name),
                dtype=str(t.dtype),
            ),
            name,
        )
    if t.dim() < 3:
        # Two whole sentences: the axis name is a word of the sentence, translated with it.
        three_d = (
            QT_TRANSLATE_NOOP("Errors", "{name} must be 3-D or more (batch, ..., queries, features); got shape {shape}")
            if name == "queries"
            else QT_TRANSLATE_NOOP(
                "Errors", "{name} must be 3-D or more (batch, ..., keys, features); got shape {shape}"
            )
        )
        raise AttentionInputError(message(three_d, name=role_name(name), shape=tuple(t.shape)), "shape")
    if 0 in t.shape[:-1]:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors", "{name} must have at least one batch element and one row; got shape {shape}"
                ),
                name=role_name(name),
                shape=tuple(t.shape),
            ),
            "shape",
        )
    if t.shape[-1] == 0:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must have at least one feature (d >= 1); got shape {shape}"),
                name=role_name(name),
                shape=tuple(t.shape),
            ),
            "shape",
        )
    return t.detach()


def check_finite(t: torch.Tensor, name: str) -> None:
    if not t.is_floating_point():
        return
    finite = torch.isfinite(t)
    if not bool(finite.all()):
        idx = tuple(int(i) for i in (~finite).nonzero()[0])
        kind = "NaN" if torch.isnan(t[idx]) else "Inf"
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} contains {kind} at index {idx}"),
                name=role_name(name),
                kind=kind,
                idx=idx,
            ),
            name,
        )


def check_shapes(fn: ScoringFunction, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, enable_gqa: bool) -> None:
    """Keys and values pair up and share the queries' leading dimensions (heads divided under GQA)."""
    if not q.dim() == k.dim() == v.dim():
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors", "queries, keys and values must have as many dimensions; got shapes {q}, {k} and {v}"
                ),
                q=tuple(q.shape),
                k=tuple(k.shape),
                v=tuple(v.shape),
            ),
            "shape",
        )
    # Under GQA, 3-D inputs are (heads, rows, features), as SDPA reads them: dimension 0 may differ.
    gqa_3d = enable_gqa and q.dim() == 3
    if not gqa_3d and not q.shape[0] == k.shape[0] == v.shape[0]:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "batch sizes differ: queries {q}, keys {k}, values {v}"),
                q=q.shape[0],
                k=k.shape[0],
                v=v.shape[0],
            ),
            "shape",
        )
    if k.shape[:-2] != v.shape[:-2]:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors", "keys and values must have the same leading dimensions: keys {k}, values {v}"
                ),
                k=tuple(k.shape),
                v=tuple(v.shape),
            ),
            "shape",
        )
    if k.shape[-2] != v.shape[-2]:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "keys and values must pair up: {k} keys but {v} values"),
                k=k.shape[-2],
                v=v.shape[-2],
            ),
            "shape",
        )
    lead_q, lead_k = q.shape[:-2], k.shape[:-2]
    if lead_q != lead_k:
        heads_q, heads_k = q.shape[-3], k.shape[-3]
        if lead_q[:-1] != lead_k[:-1]:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors", "queries and keys must have the same leading dimensions: queries {q}, keys {k}"
                    ),
                    q=tuple(q.shape),
                    k=tuple(k.shape),
                ),
                "shape",
            )
        if not enable_gqa:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "queries have {h_q} heads but keys and values {h_k} (dimension -3): pass enable_gqa=True for "
                        "grouped-query attention",
                    ),
                    h_q=heads_q,
                    h_k=heads_k,
                ),
                "shape",
            )
        if heads_q % heads_k:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "grouped-query attention needs the query heads to be a multiple of the key/value heads: "
                        "{h_q} query heads, {h_k} key/value heads",
                    ),
                    h_q=heads_q,
                    h_k=heads_k,
                ),
                "shape",
            )
    if fn.same_dim and q.shape[-1] != k.shape[-1]:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "{scoring} scoring needs queries and keys of the same length: "
                    "d_q = {d_q}, d_k = {d_k} (additive or bilinear scoring accept "
                    "different lengths)",
                ),
                scoring=fn.label,
                d_q=q.shape[-1],
                d_k=k.shape[-1],
            ),
            "shape",
        )


def resolve_params(fn: ScoringFunction, params: object, d_q: int, d_k: int, num_hiddens: int, seed: int) -> Params:
    """The scoring function's parameters: ``params`` checked, else initialised from ``seed``."""
    shapes = fn.param_shapes(d_q, d_k, num_hiddens)
    if not shapes:
        return {}
    if params is None:
        gen = torch.Generator().manual_seed(seed)
        return fn.init_params(d_q, d_k, num_hiddens, gen)
    if not isinstance(params, Mapping):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "params must map parameter names to tensors; got {type}"),
                type=type(params).__name__,
            ),
            "params",
        )
    given: Params = {}
    for name, value in params.items():
        if name not in shapes:
            continue
        try:
            t = torch.as_tensor(value).detach()
        except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP("Errors", "parameter {key} must be a tensor or array of numbers; got {type}"),
                    key=repr(name),
                    type=type(value).__name__,
                ),
                "params",
            ) from exc
        if (
            t.device.type == "meta"
            or t.dtype == torch.bool
            or t.is_complex()
            or not (t.is_floating_point() or t.dtype in INT_DTYPES)
        ):
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors", "parameter {key} must hold real numbers; got dtype {dtype} on {device}"
                    ),
                    key=repr(name),
                    dtype=str(t.dtype),
                    device=str(t.device),
                ),
                "params",
            )
        given[name] = t.to(torch.float32)
    check_params(fn, given, d_q, d_k, num_hiddens)
    return given
