"""Banded (sliding-chunk) attention of a model's own: Longformer's and LED's encoder
self-attention. Their softmax runs over (B, L, H, G + 2w + 1): for each query i the keys
i - w ... i + w of its band, after G columns for the global keys (ordered as the batch element's
global positions). Recorded as what it means, the (B, H, L, L) map that is zero outside the band
and the global keys: the map the model's ``output_attentions`` stores as (B, H, L, G + 2w + 1).

The softmax adapter hands a softmax of such a module here (``recognise``, then ``dense``)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from attnviz.text.tr import QT_TRANSLATE_NOOP, message


def recognise(module: nn.Module | None, weights: torch.Tensor) -> int | None:
    """The one-sided window ``w`` of a banded attention module whose softmax ``weights`` is its
    band (B, L, H, G + 2w + 1); None for any other softmax (its global rows' softmax, another
    module's)."""
    w = getattr(module, "one_sided_attn_window_size", None)
    heads = getattr(module, "num_heads", None)
    if not isinstance(w, int) or not isinstance(heads, int) or weights.dim() != 4:
        return None
    if weights.shape[2] != heads or weights.shape[3] < 2 * w + 1:
        return None
    return w


def dense(weights: torch.Tensor, w: int, kwargs: dict[str, Any]) -> tuple[torch.Tensor, str]:
    """The band ``weights`` (B, L, H, G + 2w + 1) as the (B, H, L, L) map it means, and the
    call's note. The global keys' columns go to their positions (``is_index_global_attn``, the
    module's argument); the global queries' own rows are filled by ``fill_global_rows`` from the
    softmax the model runs next."""
    b, n, h, width = weights.shape
    n_global = width - (2 * w + 1)
    probs = weights.detach().permute(0, 2, 1, 3)  # (B, H, L, G + 2w + 1)
    local = probs[..., n_global:]
    keys, inside = _band_keys(n, w, weights.device)
    out = probs.new_zeros(b, h, n, n)
    out.scatter_add_(-1, keys.expand(b, h, n, 2 * w + 1), local * inside)
    note = message(
        QT_TRANSLATE_NOOP(
            "Capture",
            "banded attention of its own: each query's band of {band} keys (window {w} on each side) drawn "
            "as the band of its {n} x {n} map (zero outside the band and the global keys)",
        ),
        band=2 * w + 1,
        w=w,
        n=n,
    )
    global_index = kwargs.get("is_index_global_attn")
    if n_global and isinstance(global_index, torch.Tensor) and global_index.shape == (b, n):
        for element in range(b):
            positions = global_index[element].nonzero().flatten()[:n_global]
            out[element, :, :, positions] += probs[element, :, :, : len(positions)]
        note = message(
            QT_TRANSLATE_NOOP(
                "Capture",
                "{note}; {count} global key column(s) placed at their positions; the global queries' own rows "
                "are the model's second softmax, over every key",
            ),
            note=note,
            count=n_global,
        )
    masked = kwargs.get("is_index_masked")
    if isinstance(masked, torch.Tensor) and masked.shape == (b, n) and bool(masked.any()):
        # The model zeroes its padded queries' rows after the softmax (``masked_fill`` on
        # ``is_index_masked``), global key columns too: their weights are what it reports and
        # what its output uses.
        out.masked_fill_(masked[:, None, :, None], 0.0)  # in place: no second (L, L) map
        note = message(
            QT_TRANSLATE_NOOP("Capture", "{note}; padded query rows zeroed after the softmax, as the model does"),
            note=note,
        )
    return out, note


def _band_keys(n: int, w: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(L, 2w + 1): the key each query's band slot holds, i - w .. i + w (clamped into the
    sequence), and whether that slot falls inside it."""
    keys = torch.arange(n, device=device)[:, None] - w + torch.arange(2 * w + 1, device=device)
    return keys.clamp(0, n - 1), (keys >= 0) & (keys < n)


def padded_positions(weights: torch.Tensor, kwargs: dict[str, Any]) -> torch.Tensor | None:
    """(B, L): the positions the model padded its sequence with (``is_index_masked``: Longformer
    and LED pad to a multiple of the window), as the call's key padding mask (True = padding):
    the doctor then reads their zeroed query rows as the padding they are. None when none."""
    b, n = weights.shape[:2]
    masked = kwargs.get("is_index_masked")
    if isinstance(masked, torch.Tensor) and masked.shape == (b, n) and bool(masked.any()):
        return masked.detach().clone().bool()
    return None


def fill_global_rows(call: Any, module_key: int, probs: torch.Tensor, kwargs: dict[str, Any]) -> bool:
    """The banded module's second softmax, its global queries over every key ((B * H, G, L)),
    written into the rows of those queries in ``call``'s map (the band call just recorded for
    the same module), replacing the band rows the model discards for them. False when it is not
    that (nothing written)."""
    global_index = kwargs.get("is_index_global_attn")
    dense = getattr(call, "recorded_weights", None)
    if call is None or call.module_key != module_key or not isinstance(dense, torch.Tensor):
        return False
    b, h, n, _ = dense.shape
    if not isinstance(global_index, torch.Tensor) or global_index.shape != (b, n):
        return False
    if probs.dim() != 3 or probs.shape[0] != b * h or probs.shape[-1] != n:
        return False
    rows = probs.detach().reshape(b, h, probs.shape[1], n).to(device=dense.device, dtype=dense.dtype)
    for element in range(b):
        positions = global_index[element].nonzero().flatten()[: rows.shape[2]].to(dense.device)
        dense[element, :, positions, :] = rows[element, :, : len(positions), :]
    return True


def global_tokens(weights: torch.Tensor, kwargs: dict[str, Any]) -> torch.Tensor | None:
    """(B, L): the tokens the model attends globally (``is_index_global_attn``), True where
    global; None when it has none."""
    b, n = weights.shape[:2]
    index = kwargs.get("is_index_global_attn")
    if isinstance(index, torch.Tensor) and index.shape == (b, n) and bool(index.any()):
        return index.detach().clone().bool().cpu()
    return None


def _global_positions(tokens: torch.Tensor | None, b: int) -> list[torch.Tensor]:
    if tokens is None:
        return [torch.zeros(0, dtype=torch.long) for _ in range(b)]
    return [tokens[element].nonzero().flatten() for element in range(b)]


def as_reported(
    weights: torch.Tensor, w: int, tokens: torch.Tensor | None, rows: int, width: int
) -> torch.Tensor | None:
    """A banded call's (B, H, L, L) map read back as the model reports it in ``attentions``:
    (B, H, rows, G + 2w + 1), each query's weights on the G global keys (in their order, zero
    past an element's own count), then on its band i - w .. i + w with the global keys out of it
    (they are in the first columns) and zero outside the sequence; a global query's row zero (the
    model reports that row in ``global_attentions``); the first ``rows`` rows (the real length,
    the model's padding cut). None when ``width`` is not G + 2w + 1 for the call's G."""
    b, h, n, _ = weights.shape
    positions = _global_positions(tokens, b)
    n_global = max((len(p) for p in positions), default=0)
    if width != n_global + 2 * w + 1 or rows > n:
        return None
    clamped, inside = _band_keys(n, w, torch.device("cpu"))
    band = weights.gather(-1, clamped.to(weights.device).expand(b, h, n, 2 * w + 1)) * inside.to(weights.device)
    columns = weights.new_zeros(b, h, n, n_global)
    if tokens is not None:
        on_global = (tokens[:, clamped] & inside).to(weights.device)  # (B, L, 2w + 1)
        band = band.masked_fill(on_global[:, None], 0.0)
        for element, where in enumerate(positions):
            columns[element, :, :, : len(where)] = weights[element, :, :, where.to(weights.device)]
    out = torch.cat([columns, band], dim=-1)
    if tokens is not None:
        out = out.masked_fill(tokens.to(weights.device)[:, None, :, None], 0.0)
    return out[..., :rows, :]


def global_as_reported(
    weights: torch.Tensor, tokens: torch.Tensor | None, shape: tuple[int, ...]
) -> torch.Tensor | None:
    """A banded call's map read back as the model's ``global_attentions``, (B, H, L, G): column
    j the j-th global query's row over every key. A slot past an element's own count of global
    tokens holds no query's row (the model's is a softmax over nothing but its mask): NaN, for
    a comparison to leave out. None when the call has not that shape."""
    b, h, n, _ = weights.shape
    positions = _global_positions(tokens, b)
    n_global = max((len(p) for p in positions), default=0)
    if tokens is None or tuple(shape) != (b, h, n, n_global):
        return None
    out = weights.new_full((b, h, n, n_global), float("nan"))
    for element, where in enumerate(positions):
        out[element, :, :, : len(where)] = weights[element, :, where.to(weights.device), :].transpose(-1, -2)
    return out
