"""Telling causes apart where two runs of the invariance checks part (no Qt; torch only).

* ``active_dropout``: the modules of a model whose dropout is active (training mode), for the
  determinism check that runs before every other;
* ``step_inputs_differ``: whether a cached step's queries or keys differ from the full
  forward's at the same positions (then its positions are wrong, not its mask);
* ``same_keep``: whether two calls let the same keys through on the rows compared;
* ``read_call_padding``: the doctor's reading of a call's mask against the padding the
  inputs' attention mask gives (pads attended, real keys hidden, the shape of the mistake);
* ``padded_inputs_differ``: whether the first call where a padded batch and a sequence alone
  part was given other queries or keys for the same real tokens (then something outside
  attention, its positions, moved with the padding; a mask cannot change them);
* ``computation_difference``: what differs between two paths given the same mask: the grouping
  of KV heads, the scale, or (neither explaining it) a score term.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from attnviz.capture import CapturedCall
from attnviz.capture.doctor_fidelity import grouping_cause, other_groupings, other_scales
from attnviz.capture.doctor_padding import PaddingReading, read_padding
from attnviz.compute.call_mask import call_allowed as _door_allowed
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "active_dropout",
    "recorded_allowed",
    "readable_keep",
    "computation_difference",
    "padded_inputs_differ",
    "positions_moved",
    "read_call_padding",
    "same_keep",
    "step_inputs_differ",
]

#: Named modules listed in a sentence before "...".
_NAMED = 6


def active_dropout(model: nn.Module, calls: Sequence[CapturedCall] = ()) -> list[str]:
    """The modules whose dropout is active: nn.Dropout modules (and their kin) with p > 0 in
    training mode, modules in training mode with a positive ``*dropout*`` rate attribute (the
    rate transformers passes to SDPA), and the attention calls that were given ``dropout_p``."""
    names: list[str] = []
    for name, module in model.named_modules():
        if not module.training:
            continue
        rate = getattr(module, "p", None) if isinstance(module, nn.modules.dropout._DropoutNd) else None
        if rate is None:
            rates = [
                value
                for attr, value in vars(module).items()
                if "dropout" in attr.lower() and isinstance(value, float) and not isinstance(value, bool)
            ]
            rate = max(rates) if rates else None
        if isinstance(rate, float) and rate > 0:
            names.append(name or type(module).__name__)
    for call in calls:
        if call.dropout_p > 0 and call.name not in names:
            names.append(call.name)
    # Attention's own dropout first: the one that makes the weights random.
    return sorted(names, key=lambda name: "att" not in name.lower())


def listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (", ..." if len(names) > _NAMED else "")


def _largest(a: torch.Tensor, b: torch.Tensor) -> float:
    if a.shape != b.shape:
        return math.inf
    if a.numel() == 0:
        return 0.0
    return float((a.double() - b.double()).abs().max())


def step_inputs_differ(
    step: CapturedCall, full: CapturedCall, start: int, stop: int, real: torch.Tensor
) -> tuple[float, float] | None:
    """(queries, new keys) largest differences between a cached step's call and the full
    forward's same call at positions ``start:stop``, on the real rows ``real`` (B, L), relative
    to the tensors' size; None when the tensors cannot be lined up."""
    if step.queries is None or full.queries is None or step.keys is None or full.keys is None:
        return None
    n = stop - start
    if step.queries.shape[-2] != n or full.queries.shape[-2] < stop or step.queries.shape[:2] != full.queries.shape[:2]:
        return None
    rows = real[:, start:stop].to(step.queries.device)  # (B, n)
    q_step, q_full = step.queries, full.queries[..., start:stop, :]
    # A growing cache holds stop keys; a static one more, the new ones at start:stop either way.
    if step.keys.shape[-2] < stop or full.keys.shape[-2] < stop or step.keys.shape[0] != full.keys.shape[0]:
        return None
    k_step, k_full = step.keys[..., start:stop, :], full.keys[..., start:stop, :]
    pick = rows[:, None, :, None]
    scale = max(1.0, float(q_full.abs().max()), float(k_full.abs().max()))
    dq = _largest(q_step * pick, q_full * pick) / scale
    dk = _heads_apart(k_step * pick, k_full * pick) / scale
    return dq, dk


def padded_inputs_differ(padded: CapturedCall, alone: CapturedCall, b: int, rows: torch.Tensor) -> float | None:
    """The largest difference (relative to the tensors' size) between the queries and keys that
    batch element ``b`` of a padded run's ``padded`` call got at its real positions ``rows`` and
    those its sequence alone got (``alone``, batch 1); None when they cannot be lined up."""
    pairs = ((padded.queries, alone.queries), (padded.keys, alone.keys))
    largest = 0.0
    for test, ref in pairs:
        if test is None or ref is None or ref.shape[0] != 1 or test.shape[0] <= b:
            return None
        if test.shape[-2] <= int(rows.max()) or ref.shape[-2] != len(rows):
            return None
        ours = test[b].index_select(-2, rows.to(test.device))
        if ours.shape != ref[0].shape:
            return None
        scale = max(1.0, float(ref.abs().max()))
        largest = max(largest, _largest(ours, ref[0]) / scale)
    return largest


def positions_moved(
    call: CapturedCall,
    alone: Sequence[CapturedCall],
    b: int,
    rows: torch.Tensor,
    tol: float,
    takes_positions: bool,
    side: str,
) -> str | None:
    """The cause of the first call where batch element ``b`` padded on ``side`` and its sequence
    alone part when it was given other queries or keys for the same tokens: every call before
    agreed and its mask hides the padding, so the positions moved with the padding; None when
    its queries and keys agree (then the mask is at fault) or cannot be lined up."""
    partner = next((c for c in alone if c.name == call.name), None)
    if partner is None:
        return None
    differ = padded_inputs_differ(call, partner, b, rows)
    if differ is None or differ <= tol:
        return None
    fix = (
        QT_TRANSLATE_NOOP("Invariance", "pass position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)")
        if takes_positions
        else QT_TRANSLATE_NOOP(
            "Invariance",
            "the model takes no position_ids (or ignores them), so pad its inputs on the other side (the "
            "tokenizer's padding_side)",
        )
    )
    return message(
        QT_TRANSLATE_NOOP(
            "Invariance",
            "positions, not the mask: padded on the {side}, batch element {b}'s real tokens get other queries and "
            "keys in this call than alone (largest difference {largest:.3g}), though every call before agrees and "
            "this call's mask hides the padding: their positions moved with the padding (position embeddings "
            "counted over the pads); the masks were ruled out; {fix}",
        ),
        side=side,
        b=b,
        largest=differ,
        fix=fix,
    )


def _heads_apart(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest difference of (B, H, L, d) keys where one run may hold them expanded to the
    query heads (a path that repeats KV heads before the call): each head of the larger set
    against its nearest head of the smaller."""
    if a.shape == b.shape:
        return _largest(a, b)
    small, big = (a, b) if a.shape[1] < b.shape[1] else (b, a)
    if small.shape[0] != big.shape[0] or small.shape[2:] != big.shape[2:] or small.shape[1] == 0:
        return math.inf
    return max(min(_largest(big[:, h], small[:, g]) for g in range(small.shape[1])) for h in range(big.shape[1]))


def same_keep(a: CapturedCall, b: CapturedCall, rows: torch.Tensor | None) -> bool | None:
    """Whether calls ``a`` and ``b`` let the same keys through on ``rows`` (B, L_q) (None: every
    row); None when their masks cannot be compared (other shapes)."""
    try:
        keep_a, keep_b = recorded_allowed(a), recorded_allowed(b)
    except Exception:  # noqa: BLE001 - a mask attnviz cannot read is not "the same"
        return None
    if keep_a.shape != keep_b.shape:
        return None
    if rows is not None and rows.shape == (keep_a.shape[0], keep_a.shape[2]):
        pick = rows[:, None, :, None]
        return bool(((keep_a == keep_b) | ~pick).all())
    return bool((keep_a == keep_b).all())


def _attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor, scale: float, kv_of: Sequence[int]
) -> torch.Tensor:
    """(B, H, L_q, d_v): plain attention in float64, query head h reading KV head ``kv_of[h]``."""
    index = torch.tensor(list(kv_of))
    k, v = k.double()[:, index], v.double()[:, index]
    scores = q.double() @ k.transpose(-1, -2) * scale
    scores = scores.masked_fill(~keep, -math.inf)
    weights = torch.nan_to_num(scores.softmax(-1), nan=0.0)
    return weights @ v


def computation_difference(test: CapturedCall, reference: CapturedCall, heads: Sequence[int]) -> str | None:
    """What the ``test`` call computes differently from ``reference`` on ``heads`` though both were
    given the same mask: a grouping of KV heads, a scale, or None when neither explains it."""
    q, k, v = test.queries, test.keys, test.values
    r_k = reference.keys
    if q is None and test.recorded_weights is not None:
        return _weights_difference(test.recorded_weights, reference, heads)
    if q is None or k is None or v is None or r_k is None:
        return None
    b, h, _n_q, d = q.shape
    # The keys as the paths were given them: one path expanded its KV heads before the call.
    if k.shape[1] == h and r_k.shape[1] < h and k.shape[2:] == r_k.shape[2:]:
        groups = h // r_k.shape[1]
        mapping: list[int] = []
        for head in range(h):
            found = [
                g for g in range(r_k.shape[1]) if _largest(k[:, head], r_k[:, g]) <= 1e-5 * (1 + float(r_k.abs().max()))
            ]
            if not found:
                mapping = []
                break
            mapping.append(found[0])
        expected = [head // groups for head in range(h)]
        if mapping and mapping != expected:
            return _grouping_text(mapping, expected, r_k.shape[1])
    output = test.output
    if output is None or k.shape[1] == 0 or h % k.shape[1]:
        return None
    try:
        keep = recorded_allowed(test)
    except Exception:  # noqa: BLE001
        return None
    groups = h // k.shape[1]
    scale = test.scale if test.scale is not None else 1 / math.sqrt(d)
    usual = [head // groups for head in range(h)]
    picked = list(heads) or list(range(h))
    target = output.double()[:, picked]
    size = 1e-3 * (1 + float(target.abs().max()))

    def explains(kv_of: Sequence[int], s: float) -> bool:
        ours = _attention(q, k, v, keep, s, kv_of)[:, picked]
        return _largest(ours, target) <= size

    if explains(usual, scale):
        return None  # the call computed what attnviz computes: the difference is upstream
    cause = _grouping_or_scale(explains, usual, k.shape[1], scale, d)
    if cause is not None:
        return cause
    return QT_TRANSLATE_NOOP(
        "Invariance",
        "a score term (a bias, soft cap or position term one path adds or drops): neither another grouping of "
        "the KV heads nor another scale reproduces the output",
    )


def _weights_difference(weights: torch.Tensor, reference: CapturedCall, heads: Sequence[int]) -> str | None:
    """What a path that recorded only its weights (a softmax of a model's own, B, H, L_q, L_k)
    computes otherwise than ``reference`` (same mask, its queries and keys recorded): another
    grouping of the KV heads, another scale, or None when neither explains it."""
    q, k = reference.queries, reference.keys
    if q is None or k is None or q.dim() != 4 or weights.dim() != 4 or weights.shape[:3] != q.shape[:3]:
        return None
    b, h, _n_q, d = q.shape
    kv = k.shape[1]
    if kv == 0 or h % kv or weights.shape[-1] != k.shape[2]:
        return None
    try:
        keep = recorded_allowed(reference)
    except Exception:  # noqa: BLE001 - a mask attnviz cannot read says nothing here
        return None
    groups = h // kv
    scale = reference.scale if reference.scale is not None else 1 / math.sqrt(d)
    usual = [head // groups for head in range(h)]
    picked = list(heads) or list(range(h))
    target = weights.double()[:, picked]

    def explains(kv_of: Sequence[int], s: float) -> bool:
        index = torch.tensor(list(kv_of))
        scores = q.double() @ k.double()[:, index].transpose(-1, -2) * s
        ours = torch.nan_to_num(scores.masked_fill(~keep, -math.inf).softmax(-1), nan=0.0)[:, picked]
        return _largest(ours, target) <= 1e-4

    if explains(usual, scale):
        return None
    return _grouping_or_scale(explains, usual, kv, scale, d)


def _grouping_or_scale(
    explains: Callable[[Sequence[int], float], bool], usual: Sequence[int], kv: int, scale: float, d: int
) -> str | None:
    """What reproduces the other path where the usual grouping and scale do not (``explains``
    tries a grouping and a scale): the KV heads tiled, or another scale; None for neither."""
    for mapping in other_groupings(len(usual), kv):
        if explains(mapping, scale):
            return _grouping_text(mapping, usual, kv)
    for label, other in other_scales(d, scale):
        if explains(usual, other):
            return message(
                QT_TRANSLATE_NOOP(
                    "Invariance",
                    "the scale: the scores are scaled by {label} ({used:.4g}) where the other path uses {expected:.4g}",
                ),
                label=label,
                used=other,
                expected=scale,
            )
    return None


def _grouping_text(mapping: Sequence[int], expected: Sequence[int], kv: int) -> str:
    return message(
        QT_TRANSLATE_NOOP(
            "Invariance",
            "the grouping of KV heads: query heads 0-{last} read the KV heads [{got}] where the other path gives "
            "[{expected}] ({cause}, or the reverse)",
        ),
        last=len(mapping) - 1,
        got=", ".join(str(g) for g in mapping),
        expected=", ".join(str(g) for g in expected),
        cause=grouping_cause(list(mapping), kv),
    )


def recorded_allowed(call: CapturedCall) -> torch.Tensor:
    """(B, H, L_q, L_k) bool: which keys each query of a recorded call attends, read through the
    one door from a call to the mask language (``attnviz.compute.call_mask``)."""
    return _door_allowed(call.to_attention_call({}, check=False))


def readable_keep(call: CapturedCall) -> torch.Tensor | None:
    """(B, H, L_q, L_k) bool: the keys each query may see (a softmax-only record: its weights'
    non-zeros); None when the masks cannot be read."""
    if call.queries is None:
        return None if call.recorded_weights is None else call.recorded_weights > 0
    try:
        return recorded_allowed(call)
    except Exception:  # noqa: BLE001 - a mask attnviz cannot read is read nowhere else either
        return None


def read_call_padding(
    call: CapturedCall,
    real_q: torch.Tensor | None,
    real_k: torch.Tensor,
    key_ids: torch.Tensor | None,
) -> PaddingReading | None:
    """The doctor's reading of ``call``'s mask against the padding an attention mask gives:
    ``real_q`` (B, L_q) real queries (None: read every row), ``real_k`` (B, L_k) real keys,
    ``key_ids`` (B, L_k) the token ids to name keys with."""
    allowed = readable_keep(call)
    if allowed is None:
        return None
    b, _h, n_q, n_k = allowed.shape
    if tuple(real_k.shape) != (b, n_k):
        return None
    pad_q = None if real_q is None or tuple(real_q.shape) != (b, n_q) else ~real_q.cpu().numpy()
    tokens = None
    if key_ids is not None and tuple(key_ids.shape) == (b, n_k):
        tokens = np.char.add("id ", key_ids.cpu().numpy().astype(str))
    return read_padding(allowed.cpu().numpy(), pad_q, ~real_k.cpu().numpy(), key_tokens=tokens, cross=call.cross)
