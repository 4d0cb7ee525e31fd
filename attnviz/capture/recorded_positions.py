"""The positions a model gave its rotary, learned, sinusoidal or ALiBi position code, read while it runs.

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
  capture's function mode sees positions turned into angles: multiplied by inverse frequencies
  (a geometric sequence up to at most 1, decreasing or increasing, scaled or not),
  ``torch.outer(t, inv_freq)``, ``t[..., None] * inv_freq``, an einsum, or divided by
  wavelengths; by frequencies of no sequence (learned, YaRN's blend) where the positions are
  whole and count; or rows of a precomputed table picked by position (``freqs_cis[s : s + L]``,
  ``cos[position_ids]``, a sinusoidal ``pe[:, :L]``, ``F.embedding(ids, table)``).

Each reading is ``(kind, positions)``, positions (N, L) as float64 (integers where they are),
its kind the code it came from: ``rotary``; ``learned``; ``sinusoidal`` (a table of sines and
cosines, or angles computed in a module named like a sinusoidal embedding: ``kind_in``),
absolute positions added to the embeddings; ``alibi`` (positions times one slope per head,
ALiBi's r, r^2 ...: the keys' positions of a score term).
torch and numpy only; the recorder keeps the latest reading for the calls that follow.
"""

from __future__ import annotations

import math
import re
import weakref
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "ALIBI",
    "ANGLE_FUNCTIONS",
    "TRAIL_FUNCTIONS",
    "AngleTrail",
    "KINDS",
    "LEARNED",
    "MAYBE_LEARNED",
    "ROTARY",
    "SINUSOIDAL",
    "TABLE_FUNCTIONS",
    "is_position_module",
    "kind_in",
    "positions_from_angles",
    "positions_from_table",
    "read_positions",
    "reading_from_function",
]

ROTARY = "rotary"
LEARNED = "learned"
#: Absolute positions as a table (or vectors) of sines and cosines added to the embeddings.
SINUSOIDAL = "sinusoidal"
#: Positions times one slope per head (ALiBi's distances): a score term, not a rotation.
ALIBI = "alibi"
#: Every kind a reading may have, as capture files keep it.
KINDS = (ROTARY, LEARNED, SINUSOIDAL, ALIBI)
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
    """Positions read back from a rotary module's (cos, sin) tables, on the column of its lowest
    frequency (the last in both the rotate-half and the interleaved layout when the frequencies
    decrease; the first when they increase)."""
    inv_freq = getattr(module, "inv_freq", None)
    if not isinstance(output, (tuple, list)) or len(output) < 2 or not isinstance(inv_freq, torch.Tensor):
        return None
    cos, sin = output[0], output[1]
    if not (isinstance(cos, torch.Tensor) and isinstance(sin, torch.Tensor)) or cos.shape != sin.shape:
        return None
    if cos.dim() < 2 or cos.dtype not in (torch.float32, torch.float64) or inv_freq.numel() == 0:
        return None
    frequencies = inv_freq.detach().double().abs().reshape(-1)
    lowest = float(frequencies.min())
    n = frequencies.numel()
    if not lowest > 0 or cos.shape[-1] not in (n, 2 * n):
        return None
    # The lowest frequency's column: its own where the table has one per frequency or repeats
    # them in halves (rotate-half), twice its index where each is repeated in place (interleaved).
    i = int(frequencies.argmin())
    column = i
    if cos.shape[-1] == 2 * n and i != n - 1 and not bool(torch.equal(cos[..., :n], cos[..., n:])):
        column = 2 * i
    elif cos.shape[-1] == 2 * n and i == n - 1:
        column = -1  # the last column in both layouts
    c = cos.detach()[..., column].to("cpu", torch.float64)
    s = sin.detach()[..., column].to("cpu", torch.float64)
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
#: frequencies, or over wavelengths): seen by the capture's function mode, whatever module (or
#: none) runs them.
DIVISIONS: frozenset[Any] = frozenset({torch.div, torch.true_divide, torch.Tensor.__truediv__, torch.Tensor.div})
ANGLE_FUNCTIONS: frozenset[Any] = frozenset(
    {torch.outer, torch.ger, torch.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__, torch.Tensor.mul, torch.einsum}
    | DIVISIONS
)
#: Indexing a precomputed table of rotations or sinusoids by position (``table[positions]``,
#: GPT-J's ``torch.gather(table, 1, positions)``), or embedding ids with one.
TABLE_FUNCTIONS: frozenset[Any] = frozenset({torch.Tensor.__getitem__, torch.gather, torch.nn.functional.embedding})
_LARGEST_FREQUENCIES = 4096
_LARGEST_POSITIONS = 1 << 20
#: Frequencies a model learned (or blended, as YaRN does) are read only up to this many radians
#: per position: positions times anything larger are no rotary angles.
_LARGEST_FREQUENCY = 4.0


def reading_from_function(func: Any, args: tuple[Any, ...]) -> tuple[str, np.ndarray] | None:
    """(kind, (N, L) positions) when ``func(*args)`` turns positions into angles or picks rows
    of a rotary or sinusoidal table by position; None otherwise."""
    if func in TABLE_FUNCTIONS:
        if func is torch.nn.functional.embedding:
            args = (args[1], args[0]) if len(args) >= 2 else ()
        return _table_reading(args)
    return _angles_reading(func, args)


def kind_in(kind: str, modules: list[nn.Module]) -> str:
    """The kind of a reading made inside ``modules`` (outermost first), where what the code did
    leaves it open. Angles computed in a sinusoidal position embedding's module (named like one,
    not like rotary) make sinusoids added to the embeddings, not rotations; sines and cosines
    of one position side by side (a table of them, or joined) used inside an attention module
    or a rotary one are its rotation (CodeGen's ``embed_positions[position_ids]``), not an
    embedding added to the hidden states."""
    if not modules:
        return kind
    name = type(modules[-1]).__name__
    if kind == SINUSOIDAL and (_ROTARY_NAME.search(name) or _ATTENTION_NAME.search(name)):
        return ROTARY
    if kind == ROTARY and _SINUSOIDAL_NAME.search(name) and not _ROTARY_NAME.search(name):
        return SINUSOIDAL
    return kind


_ATTENTION_NAME = re.compile(r"attention|attn", re.IGNORECASE)
_SINUSOIDAL_NAME = re.compile(r"sinusoid|positional(embedding|encoding)|posenc|posemb|timestep", re.IGNORECASE)


def positions_from_table(args: tuple[Any, ...]) -> np.ndarray | None:
    """(N, L) positions when ``table[index]`` picks rows of a precomputed rotary or sinusoidal
    table by position: ``freqs_cis[start : start + L]`` (Meta's Llama: complex ``exp(i p theta)``),
    ``cos_cached[position_ids]`` (cos or sin rows), ``pe[:, :L]`` (sines and cosines of one
    position in one row); None for any other indexing."""
    reading = _table_reading(args)
    return None if reading is None else reading[1]


def _table_reading(args: tuple[Any, ...]) -> tuple[str, np.ndarray] | None:
    """A table is rotary when its row 0 is the rotation by 0 (all 1 for complex or cos, all 0
    for sin) and its row 1's angles are inverse frequencies (a geometric sequence from at most
    1); sinusoidal when its row 0 holds sin(0) and cos(0) side by side (0s and 1s, interleaved or
    in halves) and row 1 the sines and cosines of such frequencies."""
    if len(args) == 3 and isinstance(args[1], int):
        return _gathered(*args)
    if len(args) != 2 or not isinstance(args[0], torch.Tensor):
        return None
    table, index = args
    # A table with leading axes of size 1 ((1, max, d) buffers) indexed past them: pe[:, :L].
    while isinstance(index, tuple) and len(index) >= 2 and index[0] == slice(None) and table.dim() > 2:
        if table.shape[0] != 1:
            return None
        table, index = table[0], index[1] if len(index) == 2 else index[1:]
    if not isinstance(index, (slice, torch.Tensor)) or table.dim() < 2 or table.shape[0] < 2:
        return None
    if table.numel() > _LARGEST_POSITIONS * 8 or not (table.is_complex() or table.is_floating_point()):
        return None
    kind = _known_table(table)
    if kind is None:
        return None
    if isinstance(index, slice):
        start, stop, step = index.indices(table.shape[0])
        if step != 1 or stop <= start:
            return None
        return kind, np.arange(start, stop, dtype=np.float64)[None, :]
    if not index.is_floating_point() and index.dtype != torch.bool and index.dim() in (1, 2) and index.numel() > 0:
        return kind, index.detach().to("cpu", torch.float64).reshape(-1, index.shape[-1]).numpy().copy()
    return None


def _gathered(table: Any, dim: int, index: Any) -> tuple[str, np.ndarray] | None:
    """``torch.gather(table, dim, index)`` picking rows of a table along its position axis
    (``dim``, the one before the features; a batch of copies of one table), an index whose
    features all pick the same row: the positions are the index's first feature."""
    if not (isinstance(table, torch.Tensor) and isinstance(index, torch.Tensor)) or table.dim() not in (2, 3):
        return None
    if dim % table.dim() != table.dim() - 2 or index.dim() != table.dim() or index.is_floating_point():
        return None
    if table.numel() > _LARGEST_POSITIONS or not table.is_floating_point() or table.shape[-2] < 2:
        return None
    kind = _known_table(table[0] if table.dim() == 3 else table)
    if kind is None:
        return None
    picked = index.detach().to("cpu", torch.float64)
    if not bool((picked == picked[..., :1]).all()):
        return None
    return kind, picked[..., 0].reshape(-1, picked.shape[-2]).numpy().copy()


#: Verdicts on tables already looked at, by (address, shape, dtype, version), each kept with a
#: weak reference to its tensor (a freed table's address may be another's since): a model
#: indexes the same tensors at every layer and step, and reading values off a GPU waits for it.
_VERDICTS: dict[tuple[Any, ...], tuple[weakref.ref[torch.Tensor], str | None]] = {}
_KEPT_VERDICTS = 256


def _known_table(table: torch.Tensor) -> str | None:
    key = (table.data_ptr(), tuple(table.shape), table.dtype, table._version, str(table.device))
    kept = _VERDICTS.get(key)
    if kept is not None and kept[0]() is table:
        return kept[1]
    verdict = ROTARY if _rotary_table(table) else SINUSOIDAL if _sinusoidal_table(table) else None
    if len(_VERDICTS) >= _KEPT_VERDICTS:
        _VERDICTS.clear()
    _VERDICTS[key] = (weakref.ref(table), verdict)
    return verdict


def _rotary_table(table: torch.Tensor) -> bool:
    rows = table.detach()[:2].reshape(2, -1).to("cpu")
    if rows.is_complex():
        angles = torch.angle(rows[1].to(torch.complex128))
        if not bool(torch.allclose(rows[0].to(torch.complex128), torch.ones_like(angles, dtype=torch.complex128))):
            return False
    elif rows.is_floating_point():
        first = rows[0].double()
        if bool(torch.allclose(first, torch.ones_like(first))):
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


def _sinusoidal_table(table: torch.Tensor) -> bool:
    """Row 0 is sin(0) and cos(0) of every frequency (0s and 1s: interleaved, or in halves in
    either order), row 1 the sines and cosines of inverse frequencies."""
    if table.is_complex() or not table.is_floating_point():
        return False
    rows = table.detach()[:2].reshape(2, -1).to("cpu", torch.float64)
    n = rows.shape[1]
    if n < 4 or n % 2:
        return False
    half = n // 2
    layouts = (
        (slice(0, n, 2), slice(1, n, 2)),
        (slice(1, n, 2), slice(0, n, 2)),
        (slice(0, half), slice(half, n)),
        (slice(half, n), slice(0, half)),
    )
    for sines, cosines in layouts:
        if not (
            bool(torch.allclose(rows[0, sines], torch.zeros(half, dtype=torch.float64), atol=1e-5))
            and bool(torch.allclose(rows[0, cosines], torch.ones(half, dtype=torch.float64), atol=1e-5))
        ):
            continue
        s, c = rows[1, sines], rows[1, cosines]
        if not bool(torch.allclose(s * s + c * c, torch.ones_like(s), atol=1e-4)):
            return False
        return _inverse_frequencies(torch.atan2(s, c), 1e-2)
    return False


def positions_from_angles(func: Any, args: tuple[Any, ...]) -> np.ndarray | None:
    """(N, L) positions when ``func(*args)`` turns positions into angles: ``torch.outer(t,
    inv_freq)``, ``positions[..., None] * inv_freq``, an einsum of the two, ``positions[...,
    None] / wavelengths``; None for any other product. The frequencies are inverse frequencies (a
    geometric sequence up to at most 1, decreasing or increasing: ``base ** (-2i / d)``, scaled
    or not), or any positive ones (learned, or blended as YaRN does) where the positions are
    whole and count (each row up by 1, at least 2 of them: a step of one token with such
    frequencies is not read, and the doctor says its positions were not checked)."""
    reading = _angles_reading(func, args)
    return None if reading is None else reading[1]


def _angles_reading(func: Any, args: tuple[Any, ...]) -> tuple[str, np.ndarray] | None:
    if func in DIVISIONS:
        pairs = _division(args)
        outer = False
    else:
        operands = [a for a in (args[1:] if func is torch.einsum else args) if isinstance(a, torch.Tensor)]
        if func is torch.einsum and len(operands) == 0 and len(args) == 2 and isinstance(args[1], (list, tuple)):
            operands = [a for a in args[1] if isinstance(a, torch.Tensor)]
        if len(operands) != 2:
            return None
        pairs = [(operands[1], operands[0]), (operands[0], operands[1])]
        outer = func in (torch.outer, torch.ger, torch.einsum)
    for freq, positions in pairs:
        # The shapes first (no value read: a GPU would wait): one axis of at most a few thousand
        # frequencies, against an axis of size 1 of the positions in a product (a norm's weight
        # times the hidden states meets an axis as long as itself there).
        if not 2 <= freq.numel() <= _LARGEST_FREQUENCIES or positions.numel() > _LARGEST_POSITIONS:
            continue
        axes = [i for i in range(freq.dim()) if freq.shape[i] != 1]
        if len(axes) != 1 or not freq.is_floating_point():
            continue
        axis = axes[0] - freq.dim()
        if not outer and -axis <= positions.dim() and positions.shape[axis] != 1:
            continue
        frequencies = freq.detach().reshape(-1).to("cpu", torch.float64)
        if func in DIVISIONS:
            frequencies = 1.0 / frequencies
        geometric = _inverse_frequencies(frequencies)
        if not geometric and not _any_frequencies(frequencies):
            continue
        read = _as_positions(positions, None if outer else freq)
        if read is None or (not geometric and not _whole_and_counting(read)):
            continue
        # One slope per head before the sequence axis, each a power of the first (2^(-8/H) ...):
        # ALiBi's distances; frequencies along the last axis are angles.
        kind = ALIBI if not outer and axis != -1 and geometric and _slopes(frequencies) else ROTARY
        return kind, read
    return None


def _division(args: tuple[Any, ...]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``positions / wavelengths``: (the wavelengths, the positions) when both are tensors."""
    if len(args) < 2 or not all(isinstance(a, torch.Tensor) for a in args[:2]):
        return []
    numerator, denominator = args[0], args[1]
    return [(denominator, numerator)]


def _inverse_frequencies(t: torch.Tensor, tol: float = 1e-4) -> bool:
    """A geometric sequence of positive numbers whose largest is at most 1, in either order
    (``tol``: of its ratios, relative)."""
    if not t.is_floating_point() or not 2 <= t.numel() <= _LARGEST_FREQUENCIES:
        return False
    if sum(1 for s in t.shape if s != 1) != 1:
        return False
    f = t.detach().reshape(-1).to("cpu", torch.float64)
    if not bool((f > 0).all()) or float(f.max()) > 1.0 + tol:
        return False
    ratio = f[1:] / f[:-1]
    monotone = bool((ratio < 1).all()) or bool((ratio > 1).all())
    return monotone and float(ratio.max() - ratio.min()) <= tol * float(ratio.mean())


def _any_frequencies(f: torch.Tensor) -> bool:
    """Positive finite frequencies of at most a few radians per position, not all equal."""
    return (
        bool(torch.isfinite(f).all())
        and bool((f > 0).all())
        and float(f.max()) <= _LARGEST_FREQUENCY
        and float(f.max() - f.min()) > 1e-6 * float(f.max())
    )


def _slopes(f: torch.Tensor) -> bool:
    """ALiBi's slopes: r, r^2, r^3 ... (the first equal to the ratio)."""
    first, ratio = float(f[0]), float(f[1] / f[0])
    return ratio < 1 and math.isclose(first, ratio, rel_tol=1e-3)


def _whole_and_counting(positions: np.ndarray) -> bool:
    """Whole positions, each row up by 1 over at least 2 (arange, offset or not). A single one
    is not enough: a 0/1 mask or a count times a model's weights looks the same."""
    if positions.shape[-1] < 2 or not bool((positions == np.round(positions)).all()):
        return False
    return bool((np.diff(positions, axis=-1) == 1).all())


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


_SINES: frozenset[Any] = frozenset({torch.sin, torch.Tensor.sin})
_COSINES: frozenset[Any] = frozenset({torch.cos, torch.Tensor.cos})
#: What the angles of a reading go through: sines and cosines, then joined (or not).
TRAIL_FUNCTIONS: frozenset[Any] = _SINES | _COSINES | frozenset({torch.cat, torch.concat, torch.stack})


class AngleTrail:
    """Follows the angles of the latest reading made from a product: their sines and cosines
    joined in one tensor (``cat([sin, cos])``, ``stack``) are a sinusoidal embedding, added to
    the hidden states (absolute positions); rotary code multiplies the two into the queries and
    keys instead, or takes them of angles it repeated first (``cat((freqs, freqs))``). Only the
    tensors' identities are compared (weak references: nothing is kept alive)."""

    def __init__(self) -> None:
        self._angles: weakref.ref[torch.Tensor] | None = None
        self._sine: weakref.ref[torch.Tensor] | None = None
        self._cosine: weakref.ref[torch.Tensor] | None = None

    def follow(self, angles: Any) -> None:
        self._angles = weakref.ref(angles) if isinstance(angles, torch.Tensor) else None
        self._sine = self._cosine = None

    @property
    def active(self) -> bool:
        return self._angles is not None and self._angles() is not None

    def joined(self, func: Any, args: tuple[Any, ...], out: Any) -> bool:
        """True when ``func(*args)`` (giving ``out``) joined a sine and a cosine of the angles
        followed: then they made a sinusoidal embedding (and are followed no more)."""
        angles = self._angles() if self._angles is not None else None
        if angles is None or not args or not isinstance(out, torch.Tensor):
            return False
        if func in _SINES or func in _COSINES:
            if args[0] is angles:
                if func in _SINES:
                    self._sine = weakref.ref(out)
                else:
                    self._cosine = weakref.ref(out)
            return False
        parts = args[0] if isinstance(args[0], (list, tuple)) else ()
        sine = self._sine() if self._sine is not None else None
        cosine = self._cosine() if self._cosine is not None else None
        if sine is None or cosine is None:
            return False
        if any(t is sine for t in parts) and any(t is cosine for t in parts):
            self._angles = None
            return True
        return False
