"""The engine's one front door for argument checks: each failure is an ``AttentionInputError``
naming the argument (``attend``, ``overview``, ``tile``, the mask descriptions and the labs all
check here).

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

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .devices import resolve_dtype
from .errors import AttentionInputError, input_error
from .result import STAGES
from .scoring import Params, ScoringFunction, check_params

_ROLE_NAMES = {
    "queries": QT_TRANSLATE_NOOP("Errors", "queries"),
    "keys": QT_TRANSLATE_NOOP("Errors", "keys"),
    "values": QT_TRANSLATE_NOOP("Errors", "values"),
}
#: torch.Generator.manual_seed takes 64-bit seeds.
SEED_LIMIT = 2**64
#: Whole-number dtypes, signed and unsigned.
INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64)
#: ``causal``'s alignments: PyTorch's is_causal (query i sees keys 0..i), and the last query lined
#: up with the last key (a KV-cache step).
CAUSAL_ALIGNMENTS = ("top_left", "bottom_right")
#: What huge float valid lengths are clamped to before becoming int64: still "all keys valid".
_MAX_LENGTH = 2**62


def role_name(name: str) -> str:
    return _ROLE_NAMES.get(name, name)


# --------------------------------------------------------------------------- plain values


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def check_flag(value: object, name: str) -> bool:
    """A True/False argument: 1, "yes" or a tensor are refused rather than read as a truth value."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise input_error(
        QT_TRANSLATE_NOOP("Errors", "{name} must be True or False; got {value}"), name, name=name, value=repr(value)
    )


def check_seed(value: object, name: str) -> int:
    """A generator seed: a whole number from 0 to 2^64 - 1 (a float such as 1.5 is refused)."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            seed = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            seed = None
        if seed is not None and 0 <= seed < SEED_LIMIT:
            return seed
    raise input_error(
        QT_TRANSLATE_NOOP("Errors", "{name} must be a whole number from 0 to 2^64 - 1; got {value}"),
        name,
        name=name,
        value=repr(value),
    )


def check_count(value: object, name: str, minimum: int, field: str = "mask") -> int:
    """``value`` if it is a whole number >= ``minimum``, else an error about ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must be a whole number >= {minimum}; got {value}"),
            field,
            name=name,
            minimum=minimum,
            value=repr(value),
        )
    return value


def check_index(value: object, size: int, name: str) -> int:
    """``value`` if it is an index below ``size`` (a batch element, a head)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must be an index below {size}; got {value}"),
            "shape",
            name=name,
            size=size,
            value=repr(value),
        )
    return value


def check_span(s: slice, n: int, name: str) -> tuple[int, int]:
    """(start, stop) of a step-1 slice of ``n`` items that selects something."""
    if not isinstance(s, slice) or s.step not in (None, 1):
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must be a slice with step 1; got {value}"),
            "shape",
            name=name,
            value=repr(s),
        )
    start, stop, _ = s.indices(n)
    if stop <= start:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} {value} selects nothing of {n}"), "shape", name=name, value=repr(s), n=n
        )
    return start, stop


def check_num_hiddens(value: object) -> int:
    if not isinstance(value, (bool, np.bool_)):
        try:
            hidden = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            hidden = 0
        if hidden >= 1:
            return hidden
    raise input_error(
        QT_TRANSLATE_NOOP("Errors", "num_hiddens must be a whole number >= 1; got {value}"), "params", value=repr(value)
    )


def check_dropout(value: object) -> float:
    """A probability; True is refused rather than read as p = 1."""
    if _is_real(value) and 0.0 <= float(value) <= 1.0:  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    raise input_error(
        QT_TRANSLATE_NOOP("Errors", "dropout must be a probability between 0 and 1; got {value}"),
        "dropout",
        value=repr(value),
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
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "unknown stage(s) {names} in keep: expected names from {stages}"),
            "keep",
            names=", ".join(bad),
            stages=", ".join(STAGES),
        )
    return frozenset(str(n) for n in names) | {"weights", "output"}


def check_scale_value(scale: object) -> float | None:
    """SDPA's ``scale`` (None: the default 1/sqrt(d)): a finite number > 0 (a zero or negative
    factor is no attention a model computes)."""
    if scale is None:
        return None
    if _is_real(scale) and math.isfinite(float(scale)) and float(scale) > 0:  # type: ignore[arg-type]
        return float(scale)  # type: ignore[arg-type]
    raise input_error(
        QT_TRANSLATE_NOOP("Errors", "scale must be a finite number > 0; got {value}"), "scale", value=repr(scale)
    )


def check_scale(scale: object, fn: ScoringFunction) -> float | None:
    """SDPA's ``scale``: the factor the dot products are multiplied by, instead of 1/sqrt(d).

    It only means something for dot-product scoring ("dot", "scaled_dot"): the other scorings have
    learnable parameters or a kernel that no single factor stands for, so a scale is refused there.
    """
    if scale is not None and not fn.takes_scale:
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "scale multiplies dot products (scoring 'dot' or 'scaled_dot'); {scoring} scoring has no scale to set",
            ),
            "scale",
            scoring=repr(fn.name),
        )
    return check_scale_value(scale)


def check_memory_budget(value: object) -> float | None:
    """None (the default budget), or bytes > 0 (math.inf: no budget)."""
    if value is None:
        return None
    if _is_real(value) and float(value) > 0:  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    raise input_error(
        QT_TRANSLATE_NOOP(
            "Errors", "memory_budget must be a number of bytes > 0 (or None for the default); got {value}"
        ),
        "memory_budget",
        value=repr(value),
    )


def check_float_dtype(dtype: object, choices: tuple[torch.dtype, ...]) -> torch.dtype | None:
    """``dtype`` (a name or a torch dtype) when it is one of ``choices``; None stays None."""
    if dtype is None:
        return None
    try:
        resolved = resolve_dtype(dtype)  # type: ignore[arg-type]
    except AttentionInputError:
        resolved = None
    if resolved not in choices:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "dtype must be float32, float64 or None; got {value}"),
            "dtype",
            value=repr(dtype),
        )
    return resolved


def check_causal(causal: object) -> str | None:
    """None, "top_left" or "bottom_right" from what ``attend`` accepts (True = PyTorch's is_causal)."""
    if causal is True:
        return "top_left"
    if causal is None or causal is False:
        return None
    if isinstance(causal, str) and causal in CAUSAL_ALIGNMENTS:
        return causal
    raise causal_error(causal)


def check_alignment(align: object) -> str:
    """An alignment of a mask description: "top_left" or "bottom_right"."""
    if align not in CAUSAL_ALIGNMENTS:
        raise causal_error(align)
    return str(align)


def causal_error(causal: object) -> AttentionInputError:
    """The error for a ``causal`` argument that is none of the accepted values."""
    return input_error(
        QT_TRANSLATE_NOOP("Errors", "causal must be None, True, 'top_left' or 'bottom_right'; got {value}"),
        "mask",
        value=repr(causal),
    )


# --------------------------------------------------------------------------- tensors


def as_tensor(value: object, name: str, field: str) -> torch.Tensor:
    """``value`` as a detached tensor that holds values (not on the 'meta' device)."""
    try:
        t = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must be a numeric tensor or array; got {type}"),
            field,
            name=role_name(name),
            type=type(value).__name__,
        ) from exc
    if t.device.type == "meta":
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} is on the 'meta' device, which holds no values"),
            field,
            name=role_name(name),
        )
    return t.detach()


def is_real(t: torch.Tensor) -> bool:
    """Holds real numbers: a float or whole-number dtype (not bool, not complex)."""
    return t.dtype != torch.bool and not t.is_complex() and (t.is_floating_point() or t.dtype in INT_DTYPES)


def check_real(t: torch.Tensor, name: str, field: str) -> torch.Tensor:
    if not is_real(t):
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must hold real numbers; got dtype {dtype}"),
            field,
            name=role_name(name),
            dtype=str(t.dtype),
        )
    return t


def as_input(x: object, name: str) -> torch.Tensor:
    """``x`` as a detached tensor of real numbers, (..., rows, features) with at least one of each.

    attend() is for looking at attention, not for training: its results never carry gradients
    (the blocked computation writes into preallocated stages, which autograd cannot follow).
    """
    t = check_real(as_tensor(x, name, name), name, name)
    if t.dim() < 3:
        # Two whole sentences: the axis name is a word of the sentence, translated with it.
        three_d = (
            QT_TRANSLATE_NOOP("Errors", "{name} must be 3-D or more (batch, ..., queries, features); got shape {shape}")
            if name == "queries"
            else QT_TRANSLATE_NOOP(
                "Errors", "{name} must be 3-D or more (batch, ..., keys, features); got shape {shape}"
            )
        )
        raise input_error(three_d, "shape", name=role_name(name), shape=tuple(t.shape))
    if 0 in t.shape[:-1]:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must have at least one batch element and one row; got shape {shape}"),
            "shape",
            name=role_name(name),
            shape=tuple(t.shape),
        )
    if t.shape[-1] == 0:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must have at least one feature (d >= 1); got shape {shape}"),
            "shape",
            name=role_name(name),
            shape=tuple(t.shape),
        )
    return t


def first_nonfinite(t: torch.Tensor) -> tuple[int, ...] | None:
    """The index of the first NaN or Inf of ``t`` (None: every value is finite)."""
    if not t.is_floating_point():
        return None
    finite = torch.isfinite(t)
    if bool(finite.all()):
        return None
    return tuple(int(i) for i in (~finite).nonzero()[0])


def check_finite(t: torch.Tensor, name: str) -> None:
    idx = first_nonfinite(t)
    if idx is not None:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} contains {kind} at index {idx}"),
            name,
            name=role_name(name),
            kind="NaN" if torch.isnan(t[idx]) else "Inf",
            idx=idx,
        )


def check_valid_lens(
    valid_lens: object, batch: int | None, n_queries: int, device: torch.device
) -> torch.Tensor | None:
    """Validate valid lengths: shape (batch,) or (batch, queries), whole numbers >= 0 (``batch``
    None: any number of rows).

    Returns an int64 tensor on ``device``. Lengths above the number of keys are kept (clamped to
    2^62, so that float lengths beyond int64 do not wrap around): the book's code treats them as
    "all keys valid", and the diagnostics report them.
    """
    if valid_lens is None:
        return None
    try:
        vl = torch.as_tensor(valid_lens)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        # Python ints beyond int64 (2**63, 2**64) overflow: as float64 they are clamped like huge floats.
        try:
            vl = torch.as_tensor(valid_lens, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "valid_lens must hold whole numbers; got {type}"),
                "valid_lens",
                type=type(valid_lens).__name__,
            ) from None
    vl = as_tensor(vl, "valid_lens", "valid_lens")
    if not is_real(vl):
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "valid_lens must hold whole numbers, got dtype {dtype}"),
            "valid_lens",
            dtype=str(vl.dtype),
        )
    if batch is None:
        batch = vl.shape[0] if vl.dim() else 1
    if vl.shape not in ((batch,), (batch, n_queries)):
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "valid_lens must have shape ({batch},) or ({batch}, {n_q}), that is (batch, queries); got shape "
                "{shape}",
            ),
            "valid_lens",
            batch=batch,
            n_q=n_queries,
            shape=tuple(vl.shape),
        )
    if vl.dtype in (torch.uint16, torch.uint32, torch.uint64):
        vl = vl.to(torch.float64)  # few operations exist for these; every value is >= 0 anyway
    if vl.is_floating_point():
        if torch.isnan(vl).any():
            raise input_error(QT_TRANSLATE_NOOP("Errors", "valid_lens contains NaN"), "valid_lens")
        if torch.isinf(vl).any():
            raise input_error(QT_TRANSLATE_NOOP("Errors", "valid_lens contains an infinite value"), "valid_lens")
        fractional = vl != torch.floor(vl)
        if fractional.any():
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "valid lengths must be whole numbers; got {value}"),
                "valid_lens",
                value=f"{vl[fractional][0].item():g}",
            )
    if (vl < 0).any():
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "valid lengths must be >= 0; got {value}"),
            "valid_lens",
            value=f"{vl[vl < 0][0].item():g}",
        )
    if vl.is_floating_point():
        vl = vl.clamp(max=_MAX_LENGTH)
    return vl.to(device=device, dtype=torch.int64)


def check_shapes(fn: ScoringFunction, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, enable_gqa: bool) -> None:
    """Keys and values pair up and share the queries' leading dimensions (heads divided under GQA)."""

    def refuse(text: str, **values: object) -> AttentionInputError:
        return input_error(text, "shape", **values)

    if not q.dim() == k.dim() == v.dim():
        raise refuse(
            QT_TRANSLATE_NOOP(
                "Errors", "queries, keys and values must have as many dimensions; got shapes {q}, {k} and {v}"
            ),
            q=tuple(q.shape),
            k=tuple(k.shape),
            v=tuple(v.shape),
        )
    # Under GQA, 3-D inputs are (heads, rows, features), as SDPA reads them: dimension 0 may differ.
    gqa_3d = enable_gqa and q.dim() == 3
    if not gqa_3d and not q.shape[0] == k.shape[0] == v.shape[0]:
        raise refuse(
            QT_TRANSLATE_NOOP("Errors", "batch sizes differ: queries {q}, keys {k}, values {v}"),
            q=q.shape[0],
            k=k.shape[0],
            v=v.shape[0],
        )
    if k.shape[:-2] != v.shape[:-2]:
        raise refuse(
            QT_TRANSLATE_NOOP("Errors", "keys and values must have the same leading dimensions: keys {k}, values {v}"),
            k=tuple(k.shape),
            v=tuple(v.shape),
        )
    if k.shape[-2] != v.shape[-2]:
        raise refuse(
            QT_TRANSLATE_NOOP("Errors", "keys and values must pair up: {k} keys but {v} values"),
            k=k.shape[-2],
            v=v.shape[-2],
        )
    lead_q, lead_k = q.shape[:-2], k.shape[:-2]
    if lead_q != lead_k:
        if lead_q[:-1] != lead_k[:-1]:
            raise refuse(
                QT_TRANSLATE_NOOP(
                    "Errors", "queries and keys must have the same leading dimensions: queries {q}, keys {k}"
                ),
                q=tuple(q.shape),
                k=tuple(k.shape),
            )
        if not enable_gqa:
            raise refuse(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "queries have {h_q} heads but keys and values {h_k} (dimension -3): pass enable_gqa=True for "
                    "grouped-query attention",
                ),
                h_q=q.shape[-3],
                h_k=k.shape[-3],
            )
        check_head_groups(q.shape[-3], k.shape[-3])
    if fn.same_dim and q.shape[-1] != k.shape[-1]:
        raise refuse(
            QT_TRANSLATE_NOOP(
                "Errors",
                "{scoring} scoring needs queries and keys of the same length: "
                "d_q = {d_q}, d_k = {d_k} (additive or bilinear scoring accept "
                "different lengths)",
            ),
            scoring=fn.label,
            d_q=q.shape[-1],
            d_k=k.shape[-1],
        )


def check_batches(queries: int, keys: int) -> None:
    """Queries and keys come in as many batch elements."""
    if queries != keys:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "batch sizes differ: queries {q}, keys {k}"), "shape", q=queries, k=keys
        )


def check_head_groups(heads_q: int, heads_k: int) -> None:
    """Grouped-query attention: the key/value heads divide the query heads."""
    if heads_q % heads_k:
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "grouped-query attention needs the query heads to be a multiple of the key/value heads: "
                "{h_q} query heads, {h_k} key/value heads",
            ),
            "shape",
            h_q=heads_q,
            h_k=heads_k,
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
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "params must map parameter names to tensors; got {type}"),
            "params",
            type=type(params).__name__,
        )
    given: Params = {}
    for name, value in params.items():
        if name not in shapes:
            continue
        try:
            t = torch.as_tensor(value).detach()
        except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "parameter {key} must be a tensor or array of numbers; got {type}"),
                "params",
                key=repr(name),
                type=type(value).__name__,
            ) from exc
        if t.device.type == "meta" or not is_real(t):
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "parameter {key} must hold real numbers; got dtype {dtype} on {device}"),
                "params",
                key=repr(name),
                dtype=str(t.dtype),
                device=str(t.device),
            )
        given[name] = t.to(torch.float32)
    check_params(fn, given, d_q, d_k, num_hiddens)
    return given


__all__ = [
    "CAUSAL_ALIGNMENTS",
    "INT_DTYPES",
    "as_input",
    "as_tensor",
    "causal_error",
    "check_alignment",
    "check_batches",
    "check_causal",
    "check_count",
    "check_dropout",
    "check_finite",
    "check_flag",
    "check_float_dtype",
    "check_head_groups",
    "check_index",
    "check_keep",
    "check_memory_budget",
    "check_num_hiddens",
    "check_real",
    "check_scale",
    "check_scale_value",
    "check_seed",
    "check_shapes",
    "check_span",
    "check_valid_lens",
    "first_nonfinite",
    "is_real",
    "resolve_params",
    "role_name",
]
