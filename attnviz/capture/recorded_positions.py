"""The positions a model gave its rotary (or learned position) embedding, read while it runs.

A cached step whose positions restart at 0 changes the queries and keys, not the mask: from
the attention calls alone it shows only where a token repeats (``doctor_positions``). The
module that turns positions into rotations is called with them, though, so a capture reads
them there, found by meaning rather than by one spelling:

* a **rotary module**: it holds an ``inv_freq`` table, or its class is named like one
  (``*Rotary*``, ``*RoPE*``) and it holds no weights. Its positions are the integer tensor it is given (transformers'
  ``rotary_emb(x, position_ids)``, static-cache steps included, whose ``position_ids`` come
  from ``cache_position``); else they are read back from the cos and sin tables it returns
  (a hand-written ``rope(length, start)``): the angle of the lowest frequency over that
  frequency (the module's own ``inv_freq``, so linear or NTK scaling is undone as the model
  applies it);
* a **learned position embedding**: an ``nn.Embedding`` named like one (``wpe``,
  ``*pos*``) called with integer ids, or any other ``nn.Embedding`` called with ids that count
  like positions (each row up by 0 or 1, mostly 1: ``arange``, a clamped ``cumsum``).

* **rotary code of no module of its own** (a function ``apply_rope(x, positions)``): the
  capture's function mode sees positions multiplied by inverse frequencies (a geometric
  sequence from at most 1), ``torch.outer(t, inv_freq)`` or ``t[..., None] * inv_freq``.

Each reading is ``(kind, positions)``, positions (N, L) as float64 (integers where they are).
torch and numpy only; the recorder keeps the latest reading for the calls that follow.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "ANGLE_FUNCTIONS",
    "LEARNED",
    "MAYBE_LEARNED",
    "ROTARY",
    "TABLE_FUNCTIONS",
    "is_position_module",
    "positions_from_table",
    "positions_from_angles",
    "read_positions",
]

ROTARY = "rotary"
LEARNED = "learned"
#: An embedding not named like positions: its ids are positions only where they count.
MAYBE_LEARNED = "learned?"

_ROTARY_NAME = re.compile(r"rotary|rope", re.IGNORECASE)
_LEARNED_NAME = re.compile(r"(^|[._])(wpe|pos\w*|position\w*|embed_positions)$", re.IGNORECASE)
_POSITION_ARGUMENTS = ("position_ids", "positions", "pos_ids", "position_idx", "pos", "seq_pos")


def is_position_module(module: nn.Module, name: str) -> str | None:
    """``ROTARY`` or ``LEARNED`` when ``module`` (named ``name`` in its model) turns positions
    into a rotation or an embedding; None otherwise. Attention modules that merely hold a
    rotary helper are not one (their class says attention)."""
    kind = type(module).__name__
    if "attention" in kind.lower() or "attn" in kind.lower():
        return None
    if isinstance(getattr(module, "inv_freq", None), torch.Tensor):
        return ROTARY
    # Named like one and holding no weights: a table of rotations (a layer or a model named
    # "Rotary..." holds weights, and the ids it is called with are no positions).
    if _ROTARY_NAME.search(kind) and next(module.parameters(), None) is None:
        return ROTARY
    if type(module) is nn.Embedding:
        # Named like positions; or any other embedding, whose ids are read as positions only
        # where they count like positions (``_counting``): token ids do not.
        return LEARNED if _LEARNED_NAME.search(name) else MAYBE_LEARNED
    if isinstance(module, nn.Embedding) and _LEARNED_NAME.search(name):
        # A position embedding of its own class (OPT's, called with the attention mask and
        # ``position_ids=``): what it is called with is positions only where it counts like them.
        return MAYBE_LEARNED
    return None


def read_positions(
    kind: str,
    module: nn.Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    output: Any,
    model_inputs: tuple[Any, ...] = (),
) -> np.ndarray | None:
    """(N, L) float64 positions the module was called with; None when they cannot be read.
    ``output`` None: before it runs (its arguments only). A rotary module's tables, when they
    are float32 or wider, are what attention was rotated by: they win over its arguments (code
    wrapped around the module may have changed them on the way); half-precision tables round
    the angle too much to read a position back, so the arguments are kept then. ``model_inputs``:
    what the model itself was given; an embedding not named like positions that is called with
    one of them embeds tokens, not positions."""
    if output is not None and kind == ROTARY:
        tables = _from_tables(module, output)
        if tables is not None:
            return tables
    given = _given_positions(args, kwargs)
    if kind == MAYBE_LEARNED and (given is None or not _counting(given) or _among(given, model_inputs)):
        return None
    return given


def _among(ids: np.ndarray, inputs: tuple[Any, ...]) -> bool:
    """``ids`` are one of the model's own integer inputs (its token ids)."""
    for value in inputs:
        if isinstance(value, torch.Tensor) and not value.is_floating_point() and value.numel() == ids.size:
            if bool(np.array_equal(value.detach().cpu().reshape(ids.shape).numpy(), ids)):
                return True
    return False


def _counting(positions: np.ndarray) -> bool:
    """Every row counts up by 0 or 1, mostly by 1 over the batch (arange, or a cumsum over a mask
    clamped at 0), over at least 2 ids."""
    if positions.shape[-1] < 2:
        return False
    steps = np.diff(positions, axis=-1)
    if not bool(np.isin(steps, (0.0, 1.0)).all()):
        return False
    # A row of a left-padded batch counts from its first real token (pads clamped at 0): mostly
    # 1 over the batch, not in every row.
    return bool((steps == 1).sum() >= steps.size / 2)


def _given_positions(args: tuple[Any, ...], kwargs: dict[str, Any]) -> np.ndarray | None:
    candidates = [kwargs.get(name) for name in _POSITION_ARGUMENTS] + list(args) + list(kwargs.values())
    for value in candidates:
        if isinstance(value, torch.Tensor) and not value.is_floating_point() and value.dtype != torch.bool:
            if value.dim() in (1, 2) and value.numel() > 0:
                positions = value.detach().to("cpu", torch.float64)
                return positions.reshape(-1, positions.shape[-1]).numpy().copy()
    return None


def _from_tables(module: nn.Module, output: Any) -> np.ndarray | None:
    """Positions read back from a rotary module's (cos, sin) tables: the lowest frequency is the
    last column in both the rotate-half and the interleaved layout."""
    inv_freq = getattr(module, "inv_freq", None)
    if not isinstance(output, (tuple, list)) or len(output) < 2 or not isinstance(inv_freq, torch.Tensor):
        return None
    cos, sin = output[0], output[1]
    if not (isinstance(cos, torch.Tensor) and isinstance(sin, torch.Tensor)) or cos.shape != sin.shape:
        return None
    if cos.dim() < 2 or cos.dtype not in (torch.float32, torch.float64) or inv_freq.numel() == 0:
        return None
    lowest = float(inv_freq.detach().double().abs().min())
    if not lowest > 0 or cos.shape[-1] not in (inv_freq.numel(), 2 * inv_freq.numel()):
        return None
    c = cos.detach()[..., -1].to("cpu", torch.float64)
    s = sin.detach()[..., -1].to("cpu", torch.float64)
    # Tables of one rotation have cos^2 + sin^2 the same everywhere (1, or a scaling's square):
    # two tensors of another kind (rotated queries and keys) do not.
    radius = c * c + s * s
    if radius.numel() == 0 or float(radius.max() - radius.min()) > 1e-3 * max(float(radius.max()), 1e-30):
        return None
    angle = torch.atan2(s, c)
    # Turned less than once for any position the table reaches; -0.0 and rounding below 0 are 0.
    angle = torch.where(angle < -1e-4, angle + 2 * math.pi, angle.clamp_min(0.0))
    positions = (angle / lowest).reshape(-1, cos.shape[-2]).numpy()
    whole = np.round(positions)
    # Integer positions come back within float32's rounding of the angle: keep them whole.
    close = np.abs(positions - whole) <= 1e-3 * np.maximum(1.0, np.abs(whole))
    return np.where(close, whole, positions)


#: The functions rotary code turns positions into angles with (positions times inverse
#: frequencies): seen by the capture's function mode, whatever module (or none) runs them.
ANGLE_FUNCTIONS: frozenset[Any] = frozenset(
    {torch.outer, torch.ger, torch.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__, torch.Tensor.mul, torch.einsum}
)
#: Indexing a precomputed table of rotations by position (``table[positions]``, or GPT-J's
#: ``torch.gather(table, 1, positions)``).
TABLE_FUNCTIONS: frozenset[Any] = frozenset({torch.Tensor.__getitem__, torch.gather})
_LARGEST_FREQUENCIES = 4096
_LARGEST_POSITIONS = 1 << 20


def positions_from_table(args: tuple[Any, ...]) -> np.ndarray | None:
    """(N, L) positions when ``table[index]`` picks rows of a precomputed rotary table by
    position: ``freqs_cis[start : start + L]`` (Meta's Llama: complex ``exp(i p theta)``) or
    ``cos_cached[position_ids]`` (cos or sin rows); None for any other indexing. A table is
    rotary when its row 0 is the rotation by 0 (all 1 for complex or cos, all 0 for sin) and
    its row 1's angles are inverse frequencies (a geometric sequence from at most 1)."""
    if len(args) == 3 and isinstance(args[1], int):
        return _gathered(*args)
    if len(args) != 2 or not isinstance(args[0], torch.Tensor):
        return None
    table, index = args
    if not isinstance(index, (slice, torch.Tensor)) or table.dim() < 2 or table.shape[0] < 2:
        return None
    if table.numel() > _LARGEST_POSITIONS or not (table.is_complex() or table.is_floating_point()):
        return None
    if not _known_table(table):
        return None
    if isinstance(index, slice):
        start, stop, step = index.indices(table.shape[0])
        if step != 1 or stop <= start:
            return None
        return np.arange(start, stop, dtype=np.float64)[None, :]
    if isinstance(index, torch.Tensor) and not index.is_floating_point() and index.dtype != torch.bool:
        if index.dim() in (1, 2) and index.numel() > 0:
            return index.detach().to("cpu", torch.float64).reshape(-1, index.shape[-1]).numpy().copy()
    return None


def _gathered(table: Any, dim: int, index: Any) -> np.ndarray | None:
    """``torch.gather(table, dim, index)`` picking rows of a rotary table along its position axis
    (``dim``, the one before the features; a batch of copies of one table), an index whose
    features all pick the same row: the positions are the index's first feature."""
    if not (isinstance(table, torch.Tensor) and isinstance(index, torch.Tensor)) or table.dim() not in (2, 3):
        return None
    if dim % table.dim() != table.dim() - 2 or index.dim() != table.dim() or index.is_floating_point():
        return None
    if table.numel() > _LARGEST_POSITIONS or not table.is_floating_point() or table.shape[-2] < 2:
        return None
    first = table[0] if table.dim() == 3 else table
    if not _known_table(first):
        return None
    picked = index.detach().to("cpu", torch.float64)
    if not bool((picked == picked[..., :1]).all()):
        return None
    return picked[..., 0].reshape(-1, picked.shape[-2]).numpy().copy()


#: Verdicts on tables already looked at, by (address, shape, dtype, version): a model indexes
#: the same tensors at every layer and step, and reading values off a GPU waits for it.
_VERDICTS: dict[tuple[Any, ...], bool] = {}
_KEPT_VERDICTS = 256


def _known_table(table: torch.Tensor) -> bool:
    key = (table.data_ptr(), tuple(table.shape), table.dtype, table._version, str(table.device))
    verdict = _VERDICTS.get(key)
    if verdict is None:
        verdict = _rotary_table(table)
        if len(_VERDICTS) >= _KEPT_VERDICTS:
            _VERDICTS.clear()
        _VERDICTS[key] = verdict
    return verdict


def _rotary_table(table: torch.Tensor) -> bool:
    rows = table.detach()[:2].reshape(2, -1).to("cpu")
    if rows.is_complex():
        angles = torch.angle(rows[1].to(torch.complex128))
        if not bool(torch.allclose(rows[0].to(torch.complex128), torch.ones_like(angles, dtype=torch.complex128))):
            return False
    elif rows.is_floating_point():
        first = rows[0].double()
        half = first.numel() // 2
        ones, zeros = torch.ones(half, dtype=torch.float64), torch.zeros(half, dtype=torch.float64)
        if first.numel() % 2 == 0 and half > 0 and bool(torch.allclose(first, torch.cat([zeros, ones]))):
            # sin and cos side by side (GPT-J's ``cat((sin, cos), 1)``): the sines' angles
            angles = torch.arcsin(rows[1, :half].double().clamp(-1, 1))
        elif first.numel() % 2 == 0 and half > 0 and bool(torch.allclose(first, torch.cat([ones, zeros]))):
            angles = torch.arccos(rows[1, :half].double().clamp(-1, 1))
        elif bool(torch.allclose(first, torch.ones_like(first))):
            angles = torch.arccos(rows[1].double().clamp(-1, 1))
        elif bool(torch.allclose(first, torch.zeros_like(first))):
            angles = torch.arcsin(rows[1].double().clamp(-1, 1))
        else:
            return False
    else:
        return False
    # One angle per pair (complex), or each repeated: rotate-half (h, h) or interleaved (a, a, b, b).
    n = angles.numel()
    candidates = [angles]
    if n % 2 == 0:
        candidates += [angles[: n // 2], angles[0::2]]
    return any(
        (
            c.numel() == n
            or bool(torch.allclose(c.repeat(2), angles))
            or bool(torch.allclose(c.repeat_interleave(2), angles))
        )
        and _inverse_frequencies(c, 1e-2)  # angles read back through arccos of float32 tables
        for c in candidates
    )


def positions_from_angles(func: Any, args: tuple[Any, ...]) -> np.ndarray | None:
    """(N, L) positions when ``func(*args)`` multiplies positions by a rotary table's inverse
    frequencies (a geometric sequence, decreasing from at most 1: ``base ** (-2i / d)``, scaled
    or not): ``torch.outer(t, inv_freq)``, ``positions[..., None] * inv_freq``, an einsum of
    the two; None for any other product."""
    operands = [a for a in (args[1:] if func is torch.einsum else args) if isinstance(a, torch.Tensor)]
    if func is torch.einsum and len(operands) == 0 and len(args) == 2 and isinstance(args[1], (list, tuple)):
        operands = [a for a in args[1] if isinstance(a, torch.Tensor)]
    if len(operands) != 2:
        return None
    outer = func in (torch.outer, torch.ger, torch.einsum)
    for freq, positions in (operands, operands[::-1]):
        # The shapes first (no value read: a GPU would wait): one axis of at most a few thousand
        # frequencies, against an axis of size 1 of the positions in a product (a norm's weight
        # times the hidden states meets an axis as long as itself there).
        if not 2 <= freq.numel() <= _LARGEST_FREQUENCIES or positions.numel() > _LARGEST_POSITIONS:
            continue
        axes = [i for i in range(freq.dim()) if freq.shape[i] != 1]
        if len(axes) != 1:
            continue
        axis = axes[0] - freq.dim()
        if not outer and -axis <= positions.dim() and positions.shape[axis] != 1:
            continue
        if _inverse_frequencies(freq):
            return _as_positions(positions, None if outer else freq)
    return None


def _inverse_frequencies(t: torch.Tensor, tol: float = 1e-4) -> bool:
    """A geometric sequence decreasing from at most 1 (``tol``: of its ratios, relative)."""
    if not t.is_floating_point() or not 2 <= t.numel() <= _LARGEST_FREQUENCIES:
        return False
    if sum(1 for s in t.shape if s != 1) != 1:
        return False
    f = t.detach().reshape(-1).to("cpu", torch.float64)
    if not bool((f > 0).all()) or float(f[0]) > 1.0 + tol:
        return False
    ratio = f[1:] / f[:-1]
    return bool((ratio < 1).all()) and float(ratio.max() - ratio.min()) <= tol * float(ratio.mean())


def _as_positions(t: torch.Tensor, freq: torch.Tensor | None) -> np.ndarray | None:
    """``t`` as (N, L) positions, its last axis the sequence's; broadcast against ``freq``
    (a product, not an outer product) the axis of the frequencies (size 1 in ``t``) is dropped
    first. None for a negative value (relative distances are no positions)."""
    shape = list(t.shape)
    if freq is not None:
        axis = next(i for i in range(freq.dim()) if freq.shape[i] != 1) - freq.dim()  # from the right
        if -axis > len(shape) or shape[axis] != 1:
            return None
        del shape[axis]
    if not shape:
        return None
    values = t.detach().to("cpu", torch.float64).reshape(-1, shape[-1])
    if not bool((values >= 0).all()) or not bool(torch.isfinite(values).all()):
        return None
    return values.numpy().copy()
