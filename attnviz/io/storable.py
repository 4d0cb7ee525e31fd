"""What a file can keep of a live capture: ``storable(run)``.

A capture holds FlexAttention's ``mask_mod`` and ``score_mod`` as the functions the model
passed (so the app evaluates them as the model did, a block at a time, at any length). A file
(a capture or a session) keeps arrays: a ``mask_mod`` becomes the boolean ``attn_mask`` it
amounts to (combined with the call's own), a ``score_mod`` that is recognised becomes that term
(``recognised_term``: tanh soft-capping as ``softcap`` with its cap, ALiBi as ``alibi`` with
its slopes, any other bias as that bias, kept as small as it broadcasts), and one that does more
(an activation) becomes what it did to this call's scores: the modified scores less the
scores, per head, kept as a bias on the recorded queries and keys (within the dense limit;
said in the note: an edit of the queries or keys is recomputed without it); past the limit it
is left out (said, its fidelity dropped). Both are evaluated here as FlexAttention evaluates
them, with plain torch (the engine is above the files): a ``mask_mod`` on broadcast index
tensors per (batch, head), falling back to one scalar at a time under ``torch.vmap`` where it
is written for scalars, a ``score_mod`` under ``torch.vmap``. torch is imported only for such a
run. A function that fails is one line.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from attnviz.io._limits import format_bytes
from attnviz.state.run import AttentionCall, CallTerm, ModelRun, ModelRunError
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["MAX_DENSE_MASK_BYTES", "recognised_term", "storable"]

#: The dense boolean mask a mask_mod becomes in a file (and a score_mod's bias) may take at most this.
MAX_DENSE_MASK_BYTES = 256 * 2**20
#: vmap over kv_idx, q_idx, h, b (innermost first), as FlexAttention applies a score_mod.
_VMAP_DIMS = ((0, None, None, None, 0), (0, None, None, 0, None), (0, None, 0, None, None), (0, 0, None, None, None))


def storable(run: ModelRun) -> ModelRun:
    """``run`` as a capture file can keep it (see the module's note); the run itself when no
    call holds a function. Raises :class:`ModelRunError` when a mask_mod's dense mask would be
    larger than ``MAX_DENSE_MASK_BYTES``."""
    if not any(_live(call) for call in run.calls):
        return run
    calls = tuple(_storable(call) if _live(call) else call for call in run.calls)
    if all(a is b for a, b in zip(calls, run.calls)):
        return run
    return replace(run, calls=calls)


def _live(call: AttentionCall) -> bool:
    return call.masks.mask_mod is not None or any(term.kind == "score_mod" for term in call.terms)


def _storable(call: AttentionCall) -> AttentionCall:
    """``call`` as a file can keep it: a FlexAttention ``mask_mod`` evaluated into the boolean
    ``attn_mask`` it amounts to (combined with the call's own); a ``score_mod`` that adds a bias
    kept as that bias, and one that does more left out (said in the note, and the fidelity, which
    described the call with it, dropped)."""
    masks, terms, note, fidelity = call.masks, list(call.terms), call.note, call.fidelity
    if masks.mask_mod is not None:
        dense = _dense_mask_mod(call)
        attn = masks.attn_mask
        if attn is None:
            combined = dense
        elif attn.dtype == np.bool_:
            combined = np.logical_and(attn, dense)
        else:
            combined = np.where(dense, attn, -np.inf).astype(attn.dtype)
        masks = replace(masks, attn_mask=combined, mask_mod=None)
    kept: list[CallTerm] = []
    for index, term in enumerate(terms):
        if term.kind != "score_mod":
            kept.append(term)
            continue
        recognised = recognised_term(call, term)
        if recognised is not None:
            kept.append(recognised)
            continue
        effect = _score_mod_effect(call, term) if index == 0 else None
        if effect is not None:
            kept.append(CallTerm("bias", term.name, values=effect))
            text = message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "its score_mod does more than add a bias: the file keeps what it did to the recorded "
                    "scores (an edit of the queries or keys is recomputed without it)",
                )
            )
        else:
            text = message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "its score_mod does more than add a bias and is not kept in the file: recomputed without it",
                )
            )
            fidelity = None
        note = f"{note}; {text}" if note else text
    if masks is call.masks and kept == list(call.terms):
        return call
    return replace(call, masks=masks, terms=tuple(kept), note=note, fidelity=fidelity)


def _dense_mask_mod(call: AttentionCall) -> np.ndarray:
    """(B, H, L_q, L_k) booleans of the call's mask_mod, refused past ``MAX_DENSE_MASK_BYTES``."""
    b, h, n_q, n_k = call.shape
    if b * h * n_q * n_k > MAX_DENSE_MASK_BYTES:
        raise ModelRunError(
            message(
                QT_TRANSLATE_NOOP(
                    "Capture",
                    "the mask_mod of call '{name}' would take {size} as the dense mask a file keeps (at most "
                    "{limit}): record fewer or shorter calls to save them",
                ),
                name=call.name,
                size=format_bytes(b * h * n_q * n_k),
                limit=format_bytes(MAX_DENSE_MASK_BYTES),
            )
        )
    import torch

    fn = call.masks.mask_mod
    q, kv = torch.arange(n_q)[:, None], torch.arange(n_k)[None, :]
    out = np.empty((b, h, n_q, n_k), dtype=bool)
    scalar = False
    for e in range(b):
        for head in range(h):
            be, hd = torch.tensor(e), torch.tensor(head)
            allowed: Any = None
            if not scalar:
                try:
                    allowed = fn(be, hd, q, kv)
                    allowed = torch.broadcast_to(torch.as_tensor(allowed, dtype=torch.bool), (n_q, n_k))
                except Exception:  # noqa: BLE001 - written for scalars: evaluated as FlexAttention does
                    allowed, scalar = None, True
            if allowed is None:
                allowed = _scalar_mask(call.name, fn, be, hd, n_q, n_k)
            out[e, head] = allowed.numpy()
    return out


def _scalar_mask(name: str, fn: Any, b: Any, h: Any, n_q: int, n_k: int) -> Any:
    """(n_q, n_k) of ``fn`` called one scalar (q_idx, kv_idx) at a time under ``torch.vmap``, as
    FlexAttention calls a mask_mod; a failure is a :class:`ModelRunError` of one line."""
    import torch

    try:
        inner = torch.vmap(lambda qi, ki: fn(b, h, qi, ki), in_dims=(None, 0))
        out = torch.vmap(inner, in_dims=(0, None))(torch.arange(n_q), torch.arange(n_k))
        return torch.broadcast_to(torch.as_tensor(out, dtype=torch.bool), (n_q, n_k))
    except Exception as exc:  # noqa: BLE001 - the user's code may raise anything: one line
        raise ModelRunError(
            message(
                QT_TRANSLATE_NOOP("Capture", "the mask_mod of call '{name}' failed: {error}"),
                name=name,
                error=f"{type(exc).__name__}: {exc}".splitlines()[0],
            )
        ) from exc


def recognised_term(call: AttentionCall, term: CallTerm) -> CallTerm | None:
    """``term`` (a live score_mod) as the term a file keeps, where it is one of them over this
    call's (B, H, L_q, L_k): soft-capping ``cap * tanh(s / cap)`` (kind "softcap"), a bias
    ``slope[h] * (kv_idx - q_idx)`` (kind "alibi", the slopes), any other bias the same at every
    score (kind "bias", cut to the axes it varies along). None: none of them."""
    cap = _softcap(call, term)
    if cap is not None:
        return CallTerm("softcap", "softcap", cap=cap)
    bias = _score_mod_bias(call, term)
    if bias is None:
        return None
    slopes = _alibi_slopes(bias)
    if slopes is not None:
        return CallTerm("alibi", "ALiBi", values=slopes)
    return CallTerm("bias", term.name, values=_smallest(bias))


def _alibi_slopes(bias: np.ndarray) -> np.ndarray | None:
    """(H,) the slopes when ``bias`` (B, H, L_q, L_k) is ``slope[h] * (kv_idx - q_idx)`` for every
    batch element (within the rounding of a float32 product: 1e-6 of its largest value), some
    slope not 0; else None."""
    n_q, n_k = bias.shape[-2:]
    distance = (np.arange(n_k)[None, :] - np.arange(n_q)[:, None]).astype(np.float64)
    norm = float((distance * distance).sum())
    if norm == 0.0:
        return None
    slopes = (bias * distance).sum(axis=(-2, -1)) / norm  # least squares, per (b, h)
    if not np.allclose(slopes, slopes[:1], rtol=1e-6, atol=0.0):
        return None
    fitted = slopes[0][:, None, None] * distance
    largest = float(np.abs(bias).max())
    if largest == 0.0 or float(np.abs(bias - fitted).max()) > 1e-6 * largest:
        return None
    return np.ascontiguousarray(slopes[0], dtype=np.float64)


def _smallest(bias: np.ndarray) -> np.ndarray:
    """``bias`` (B, H, L_q, L_k) cut to size 1 along the batch and head axes it does not vary
    along (a position bias shared by the batch is kept once)."""
    for axis in (0, 1):
        if bias.shape[axis] > 1 and bool((bias == np.take(bias, [0], axis=axis)).all()):
            bias = np.take(bias, [0], axis=axis)
    return np.ascontiguousarray(bias)


#: Scores a soft cap is checked at, as multiples of the cap: across tanh's bend and both tails.
_CAP_PROBES = (-6.0, -2.5, -1.0, -0.3, 0.0, 0.2, 0.7, 1.5, 4.0)


def _softcap(call: AttentionCall, term: CallTerm) -> float | None:
    """The cap when the score_mod is ``cap * tanh(s / cap)`` at every (b, h, q_idx, kv_idx) of
    the call (within 1e-9 of the cap, float64), else None. The cap is what it gives a score far
    above any cap (tanh is 1 there); every cell is then checked at scores across the bend."""
    import torch

    b, h, n_q, n_k = call.shape
    if term.fn is None or b * h * n_q * n_k * 8 > MAX_DENSE_MASK_BYTES:
        return None
    fn: Any = term.fn
    for dims in _VMAP_DIMS:
        fn = torch.vmap(fn, in_dims=dims)
    indices = (torch.arange(b), torch.arange(h), torch.arange(n_q), torch.arange(n_k))

    def at(scores: Any) -> Any:
        return torch.as_tensor(fn(torch.as_tensor(scores, dtype=torch.float64).expand(b, h, n_q, n_k), *indices))

    try:
        far = at(1e12)
        cap = float(far.reshape(-1)[0])
        if not (math.isfinite(cap) and 0.0 < cap < 1e11) or not bool((far == cap).all()):
            return None
        # Each cell is checked at three of the probes, its neighbours at the others.
        cells = torch.arange(b * h * n_q * n_k, dtype=torch.float64).reshape(b, h, n_q, n_k)
        probes = torch.tensor(_CAP_PROBES, dtype=torch.float64) * cap
        for shift in range(0, len(_CAP_PROBES), 3):
            scores = probes[((cells + shift) % len(_CAP_PROBES)).long()]
            got = at(scores).double()
            if got.shape != scores.shape or not torch.allclose(
                got, cap * torch.tanh(scores / cap), rtol=0.0, atol=1e-9 * cap
            ):
                return None
    except Exception:  # noqa: BLE001 - a score_mod that cannot be evaluated so is no soft cap
        return None
    return cap


def _score_mod_effect(call: AttentionCall, term: CallTerm) -> np.ndarray | None:
    """(B, H, L_q, L_k): what the score_mod did to the call's recorded scores (modified scores
    less the scores, float64), or None past the dense limit, without queries and keys, or where
    it fails. The scores are FlexAttention's: ``q @ k^T * scale``, key heads shared as in GQA."""
    import torch

    b, h, n_q, n_k = call.shape
    if term.fn is None or call.queries is None or call.keys is None or b * h * n_q * n_k * 8 > MAX_DENSE_MASK_BYTES:
        return None
    q = torch.from_numpy(np.asarray(call.queries, dtype=np.float64))
    k = torch.from_numpy(np.asarray(call.keys, dtype=np.float64))
    if k.shape[1] != h:
        k = torch.repeat_interleave(k, h // k.shape[1], 1)
    scale = call.scale if call.scale is not None else q.shape[-1] ** -0.5
    scores = q @ k.transpose(-1, -2) * scale
    fn: Any = term.fn
    for dims in _VMAP_DIMS:
        fn = torch.vmap(fn, in_dims=dims)
    try:
        modified = fn(scores, torch.arange(b), torch.arange(h), torch.arange(n_q), torch.arange(n_k))
        effect = torch.as_tensor(modified).double() - scores
    except Exception:  # noqa: BLE001 - a score_mod that cannot be evaluated so is not kept
        return None
    if effect.shape != scores.shape:
        return None
    return effect.numpy()


def _score_mod_bias(call: AttentionCall, term: CallTerm) -> np.ndarray | None:
    """The bias a score_mod adds, (B, H, L_q, L_k), when it adds one (the same at scores 0 and 1,
    and -3.5), else None."""
    import torch

    b, h, n_q, n_k = call.shape
    if term.fn is None or b * h * n_q * n_k * 8 > MAX_DENSE_MASK_BYTES:
        return None
    # vmap over kv_idx, then q_idx, as FlexAttention evaluates a score_mod.
    rows: Any = torch.vmap(torch.vmap(term.fn, in_dims=(0, None, None, None, 0)), in_dims=(0, None, None, 0, None))
    q, kv = torch.arange(n_q), torch.arange(n_k)
    try:
        at = [
            torch.stack(
                [
                    rows(
                        torch.full((n_q, n_k), v, dtype=torch.float64), torch.tensor(n // h), torch.tensor(n % h), q, kv
                    )
                    for n in range(b * h)
                ]
            ).double()
            - v
            for v in (0, 1, -3.5)
        ]
    except Exception:  # noqa: BLE001 - a score_mod that cannot be evaluated so is no bias
        return None
    if not all(torch.allclose(at[0], other, rtol=0, atol=1e-9) for other in at[1:]) or not bool(
        torch.isfinite(at[0]).all()
    ):
        return None
    return at[0].reshape(b, h, n_q, n_k).numpy()
