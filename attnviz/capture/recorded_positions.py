"""The positions a model gave its rotary (or learned position) embedding, read while it runs.

A cached step whose positions restart at 0 changes the queries and keys, not the mask: from
the attention calls alone it shows only where a token repeats (``doctor_positions``). The
module that turns positions into rotations is called with them, though, so a capture reads
them there, found by meaning rather than by one spelling:

* a **rotary module**: its class is named like one (``*Rotary*``, ``*RoPE*``) or it holds an
  ``inv_freq`` table. Its positions are the integer tensor it is given (transformers'
  ``rotary_emb(x, position_ids)``, static-cache steps included, whose ``position_ids`` come
  from ``cache_position``); else they are read back from the cos and sin tables it returns
  (a hand-written ``rope(length, start)``): the angle of the lowest frequency over that
  frequency (the module's own ``inv_freq``, so linear or NTK scaling is undone as the model
  applies it);
* a **learned position embedding**: an ``nn.Embedding`` named like one (``wpe``,
  ``*pos*``) called with integer ids.

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

__all__ = ["ROTARY", "LEARNED", "is_position_module", "read_positions"]

ROTARY = "rotary"
LEARNED = "learned"

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
    if _ROTARY_NAME.search(kind) or isinstance(getattr(module, "inv_freq", None), torch.Tensor):
        return ROTARY
    if type(module) is nn.Embedding and _LEARNED_NAME.search(name):
        return LEARNED
    return None


def read_positions(
    kind: str, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any
) -> np.ndarray | None:
    """(N, L) float64 positions the module was called with; None when they cannot be read."""
    given = _given_positions(args, kwargs)
    if given is not None:
        return given
    if kind == ROTARY:
        return _from_tables(module, output)
    return None


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
    if cos.dim() < 2 or not cos.is_floating_point() or inv_freq.numel() == 0:
        return None
    lowest = float(inv_freq.detach().double().abs().min())
    if not lowest > 0 or cos.shape[-1] not in (inv_freq.numel(), 2 * inv_freq.numel()):
        return None
    c = cos.detach()[..., -1].to("cpu", torch.float64)
    s = sin.detach()[..., -1].to("cpu", torch.float64)
    angle = torch.atan2(s, c)
    # Turned less than once for any position the table reaches; -0.0 and rounding below 0 are 0.
    angle = torch.where(angle < -1e-4, angle + 2 * math.pi, angle.clamp_min(0.0))
    positions = (angle / lowest).reshape(-1, cos.shape[-2]).numpy()
    whole = np.round(positions)
    # Integer positions come back within float32's rounding of the angle: keep them whole.
    close = np.abs(positions - whole) <= 1e-3 * np.maximum(1.0, np.abs(whole))
    return np.where(close, whole, positions)
